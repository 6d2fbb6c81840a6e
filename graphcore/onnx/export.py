"""Export a spec, or a traced Python model, to an ONNX file's bytes.

Both paths trace one forward run in evaluation mode (``config.train`` off: dropout is the
identity, batch statistics are the running ones) and hand the IR to ``emit``. A second trace
at the batch size plus one tells which axes follow the batch: inputs then get the symbolic dim
``batch``; when a traced shape cannot follow it, the model keeps fixed dims (metadata
``batch: fixed``). Specs trace their live control flow as regions (``regions``), which the
emitter turns into ONNX If/Loop (``control``): a plain trace would take the traced path on every
input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from typing import Any

import numpy as np

from graphcore.config import using_config
from graphcore.files.atomic import write_atomic
from graphcore.onnx.emit import DEFAULT_OPSET, FixedBatch, build_model
from graphcore.onnx.errors import ExportError, OnnxUnavailable
from graphcore.static.trace import trace
from graphcore.variable import Variable


def require_onnx() -> None:
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise OnnxUnavailable("exporting to ONNX needs the onnx package") from None


def _version() -> str:
    try:
        return metadata.version("graphtool")
    except metadata.PackageNotFoundError:
        return "unknown"


def _batch_inputs(inputs: Mapping[str, np.ndarray], names: Sequence[str]) -> tuple[str, ...]:
    sizes = [inputs[n].shape[0] for n in names if np.ndim(inputs[n]) > 0]
    if not sizes:
        return ()
    batch = sizes[0]
    return tuple(n for n in names if np.ndim(inputs[n]) > 0 and inputs[n].shape[0] == batch)


def _grown(inputs: Mapping[str, np.ndarray], batch_inputs: Sequence[str]) -> dict:
    return {k: (np.concatenate([v, v[:1]]) if k in batch_inputs else v)
            for k, v in inputs.items()}


def same_structure(a, b) -> bool:
    if len(a.nodes) != len(b.nodes):
        return False
    for x, y in zip(a.nodes, b.nodes, strict=True):
        if x.op != y.op or x.inputs != y.inputs or x.id != y.id or x.name != y.name:
            return False
        if x.op not in ("reshape", "broadcast_to") and _attrs(x) != _attrs(y):
            return False
        if x.op == "const" and not np.array_equal(a.consts[x.id], b.consts[y.id]):
            return False
    return True


def _check_folded_inputs(traced_at, graph, inputs: Mapping[str, np.ndarray],
                         names: Sequence[str]) -> None:
    """An input the IR does not read must not change the model: ops on data that needs no
    gradient (a boolean mask, say) record no node, so their results are traced as constants;
    exported, they would be that one input's values forever."""
    for key in inputs:
        if key in names:
            continue
        changed = dict(inputs)
        changed[key] = _perturbed(np.asarray(inputs[key]))
        try:
            other, _ = traced_at(changed)
            same = same_structure(graph, other.graph)
        except Exception:  # noqa: BLE001 - another value made the model fail: it reads it
            same = False
        if not same:
            raise ExportError(f"input '{key}' reaches the outputs only through values traced "
                              "as constants (ops on data that needs no gradient record no "
                              "graph node); the exported model would ignore it")


def _perturbed(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.bool_:
        return ~x
    if np.issubdtype(x.dtype, np.integer):
        return np.where(x > x.min(initial=0), x - 1, x + 1).astype(x.dtype) if x.size else x
    return (x + 0.5).astype(x.dtype)


def _attrs(node) -> str:
    return repr(sorted((k, repr(v)) for k, v in node.attrs.items()))


def to_model(traced_at: Callable[[dict], tuple[Any, dict[int, str]]],
             inputs: Mapping[str, np.ndarray], *, name: str, opset: int | None,
             metadata: Mapping[str, str] | None = None, lowering: Callable | None = None,
             sequences: Sequence[str] = ()):
    """Trace with ``traced_at(inputs)`` (-> Trace, IR id -> spec position), then emit.

    ``lowering(trace, other_trace_or_None)``: the emitter's hook for nodes outside the op table
    (control-flow regions). ``sequences``: inputs holding one sequence example (time on axis
    0): their axis 0 is the symbolic dim ``length`` instead of the batch."""
    require_onnx()
    opset = DEFAULT_OPSET if opset is None else opset
    traced, where = traced_at(dict(inputs))
    graph = traced.graph
    outputs = {k: v for k, v in graph.outputs.items() if k != "loss"}
    read = {n.name for n in graph.nodes if n.op == "input"
            and any(n.id in m.inputs for m in graph.nodes)}
    names = [k for k in inputs if k in read]
    params = {k: p.array for k, p in traced.params.items()}
    meta = {"graphtool_version": _version(), "opset": str(opset), **(metadata or {})}
    _check_folded_inputs(traced_at, graph, inputs, names)
    dim_name = "length" if sequences else "batch"
    batch_inputs = tuple(n for n in names if n in sequences) if sequences \
        else _batch_inputs(inputs, names)
    batch_shapes = None
    if batch_inputs:
        try:
            other, _ = traced_at(_grown(inputs, batch_inputs))  # one more row / step
        except Exception:  # noqa: BLE001 - a model that only runs at its own batch size
            other = None
        if other is not None and same_structure(graph, other.graph):
            batch_shapes = {n.id: n.shape for n in other.graph.nodes}
    if batch_shapes is not None:
        try:
            return build_model(graph, names, outputs, params, opset=opset, name=name,
                               metadata={**meta, dim_name: "symbolic"},
                               batch_shapes=batch_shapes, batch_inputs=batch_inputs,
                               where=where, dim_name=dim_name,
                               lower=lowering(traced, other) if lowering else None)
        except FixedBatch:
            pass
    return build_model(graph, names, outputs, params, opset=opset, name=name,
                       metadata={**meta, dim_name: "fixed"}, where=where,
                       lower=lowering(traced, None) if lowering else None)


def export(model: Callable, args: Any, path: str | None = None, *,
           input_names: Sequence[str] | None = None, output_names: Sequence[str] | None = None,
           opset_version: int | None = None, graph_name: str = "graph"):
    """Export a Python model as onnx-chainer does: ``export(model, args, path)``.

    ``args`` is one array/Variable, a tuple of them, or a dict name -> array; the model is
    called on them once (traced, evaluation mode), and its parameters (``model.namedparams``)
    become initializers named after their paths (``l1/W``). Returns the ``onnx.ModelProto``
    and writes it to ``path`` when one is given.
    """
    if isinstance(args, Mapping):
        arrays = {k: _array(v) for k, v in args.items()}
        call = lambda vs: model(**vs)  # noqa: E731
    else:
        items = args if isinstance(args, tuple | list) else (args,)
        keys = list(input_names or [f"input_{i}" for i in range(len(items))])
        if len(keys) != len(items):
            raise ExportError(f"input_names has {len(keys)} names for {len(items)} inputs")
        arrays = {k: _array(v) for k, v in zip(keys, items, strict=True)}
        call = lambda vs: model(*[vs[k] for k in keys])  # noqa: E731
    params = {n.lstrip("/"): p for n, p in model.namedparams()} \
        if hasattr(model, "namedparams") else {}

    def traced_at(values: dict):
        def run(vs):
            result = call(vs)
            results = result if isinstance(result, tuple | list) else (result,)
            names = list(output_names or [f"output_{i}" for i in range(len(results))])
            if len(names) != len(results):
                raise ExportError(f"output_names has {len(names)} names for {len(results)} "
                                  "outputs")
            return dict(zip(names, results, strict=True))
        with using_config("train", False):
            return trace(None, values, params, name=graph_name, grads=False, call=run), {}

    onnx_model = to_model(traced_at, arrays, name=graph_name, opset=opset_version)
    if path is not None:
        write_atomic(path, onnx_model.SerializeToString(), create_folder=False)
    return onnx_model


def _array(value: Any) -> np.ndarray:
    return value.array if isinstance(value, Variable) else np.asarray(value)
