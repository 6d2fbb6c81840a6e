"""Export a spec (with its model's parameters) to ONNX: the library side of `graphtool
export`.

The spec is traced by ``regions.ExportRun``: predicates on params (and known loop counters)
are resolved while tracing, as graphtool resolves them; a live ``if`` becomes an ONNX If with
both branches, a live ``while`` and every ``for_each`` an ONNX Loop (``control``). Specs with
sequence inputs (lists of variable-length examples) run once per example in graphtool, so the
exported model takes ONE example: each sequence input's axis 0 is the symbolic dim ``length``
(metadata ``batch: one example``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from graphcore.config import using_config
from graphcore.interpreter.examples import example_rows, sequence_names
from graphcore.interpreter.forward import ForwardPass
from graphcore.interpreter.parameters import SpecModel, seeded
from graphcore.language.syntax import Spec
from graphcore.onnx.control import Lowering
from graphcore.onnx.errors import ExportError
from graphcore.onnx.export import to_model
from graphcore.onnx.regions import ExportRun
from graphcore.static.trace import trace
from graphcore.variable import Variable


def export_spec(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], *,
                opset: int | None = None, seed: int | None = None):
    """The ``onnx.ModelProto`` of ``spec``'s outputs (its loss is left out).

    Traced under the random state ``run_spec`` uses for ``seed`` (default: the spec's), so
    lazily created weights are the ones ``graphtool run`` makes. Sequence inputs (lists): the
    first example is traced; the model takes one example of any length."""
    seed = spec.seed if seed is None else seed
    inputs = example_rows(spec, inputs)  # per-row inputs: the example's row
    sequences = tuple(sequence_names(spec, inputs))
    for name in sequences:
        if not inputs[name]:
            raise ExportError(f"input '{name}' holds no example to trace",
                              spec.inputs[name].loc)
    arrays = {k: np.asarray(v[0] if isinstance(v, list) else v) for k, v in inputs.items()}
    params = {n.lstrip("/"): p for n, p in model.namedparams()}
    forward_only = replace(spec, loss=None)  # the loss is training's, not the model's
    by_node: dict[int, str] = {}
    if not model.initialized():  # lazily sized weights, drawn in the order a run draws them
        with using_config("train", False), seeded(seed + 1), \
                np.errstate(all="ignore"):
            ForwardPass(forward_only, model, arrays, []).forward()

    def traced_at(values: dict):
        def call(variables):
            run = ExportRun(forward_only, model, dict(variables), params, by_node)
            try:
                outputs, _ = run.forward()
            except KeyError as e:  # a value made inside a loop body, read after it
                raise ExportError(f"a step reads {e}, which is bound only inside a loop or "
                                  "one branch; the exported model cannot give it") from None
            result = {}
            for name, value in outputs.items():
                if isinstance(value, tuple):
                    raise ExportError(f"output '{name}' holds several arrays; ONNX outputs "
                                      "are single arrays")
                result[name] = value if isinstance(value, Variable) else \
                    Variable(np.asarray(value), requires_grad=False)
            return result

        with using_config("train", False), seeded(seed + 1):
            traced = trace(None, values, params, name=spec.name, grads=False, call=call)
        where = {i: by_node[id(f)] for i, f in traced.instances.items() if id(f) in by_node}
        return traced, where

    lowerings: list[Lowering] = []

    def lowering(traced, other):
        lowerings.append(Lowering(traced, other))
        return lowerings[-1]

    meta = {"spec": spec.name}
    if sequences:
        meta["batch"] = "one example (sequence inputs: graphtool runs once per example)"
    proto = to_model(traced_at, arrays, name=spec.name, opset=opset, metadata=meta,
                     lowering=lowering, sequences=sequences)
    if lowerings[-1].described:
        entry = proto.metadata_props.add()
        entry.key, entry.value = "control_flow", "; ".join(lowerings[-1].described)
    return proto
