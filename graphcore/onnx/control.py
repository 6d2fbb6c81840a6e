"""A spec with one live ``if`` -> an ONNX model with an ``If`` node, both branches exported.

The spec is traced twice, the live predicate forced true, then false. The nodes the two traces
share before they diverge are the main graph; the predicate (read from the trace's ``guard``
node: the live values it reads) becomes ONNX nodes giving the ``If`` condition; each trace's
remaining nodes, up to the spec's outputs, are one branch (reading the main graph's values and
initializers from the outer scope). So the exported model decides on each input as graphtool
does. Shapes stay as traced (the batch axis is fixed).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from graphcore.onnx.emit import DEFAULT_OPSET, MIN_OPSET, Emitter, tensor_type
from graphcore.onnx.errors import ExportError
from graphcore.onnx.export import _version
from graphcore.onnx.predicates import emit_predicate


def if_model(spec, traced_at: Callable, inputs: dict, opset: int | None):
    from onnx import helper

    opset = DEFAULT_OPSET if opset is None else opset
    if opset < MIN_OPSET:
        raise ExportError(f"--opset {opset} is too old: the exporter needs opset {MIN_OPSET} "
                          "or newer")
    branches = []
    for force in (True, False):
        live: list = []
        traced, where = traced_at(inputs, force, live)
        if len(live) != 1:
            at = ", ".join(r["at"] for r in live)
            raise ExportError(f"{at}: live predicates evaluated {len(live)} times in one run; "
                              "the exporter maps one live `if` per run to ONNX If")
        branches.append((traced, where))
    (t_trace, t_where), (f_trace, f_where) = branches
    gt, gf = t_trace.graph, f_trace.graph
    common = _common_prefix(gt, gf)
    guard = next(n for n in gt.nodes if n.op == "guard")
    if not set(guard.inputs) <= common:
        raise ExportError(f"{guard.attrs['at']}: the predicate reads values the branches make")
    read = {i for g in (gt, gf) for n in g.nodes for i in n.inputs if n.op != "guard"}
    for node in gt.nodes:
        if node.op == "input" and node.id not in read:
            raise ExportError(f"input '{node.name}' is not read by the traced model (it may "
                              "reach the outputs only as numpy values)")
    params = {k: p.array for k, p in {**t_trace.params, **f_trace.params}.items()}
    e = Emitter(gt, opset, None, {**f_where, **t_where})
    graph_inputs = []
    added_params: set[str] = set()

    def emit_node(node, graph):
        if node.op == "input":
            e.names[node.id] = node.name
            graph_inputs.append(helper.make_tensor_value_info(
                node.name, tensor_type(node.dtype), list(node.shape)))
        elif node.op == "param":
            if node.name not in added_params:
                e.const(np.asarray(params[node.name]), node.name)
                added_params.add(node.name)
            e.names[node.id] = node.name
        elif node.op == "const":
            e.names[node.id] = e.const(graph.consts[node.id])
        elif node.op != "guard":
            e.emit(node)

    for node in gt.nodes:
        if node.id in common:
            emit_node(node, gt)
    values = {name: e.names[i] for name, i in zip(guard.attrs["names"], guard.inputs,
                                                  strict=True)}
    cond = emit_predicate(e, guard.attrs["predicate"], values, guard.attrs["env"])
    keys = [k for k in gt.outputs if k != "loss"]
    subgraphs = []
    for label, graph, where in (("then", gt, t_where), ("else", gf, f_where)):
        outer_nodes, outer_names = e.nodes, dict(e.names)
        e.nodes, e.by_id, e.where = [], {n.id: n for n in graph.nodes}, where
        for node in graph.nodes:
            if node.id not in common:
                emit_node(node, graph)
        outs = []
        for key in keys:
            node = e.by_id[graph.outputs[key]]
            name = f"{key}/{label}"
            e.nodes.append(helper.make_node("Identity", [e.names[node.id]], [name]))
            outs.append(helper.make_tensor_value_info(name, tensor_type(node.dtype),
                                                      list(node.shape)))
        subgraphs.append(helper.make_graph(e.nodes, f"{spec.name}/{label}", [], outs))
        e.nodes, e.names = outer_nodes, outer_names
    e.nodes.append(helper.make_node("If", [cond], keys, then_branch=subgraphs[0],
                                    else_branch=subgraphs[1]))
    graph_outputs = []
    for k in keys:
        then, other = gt.node(gt.outputs[k]), gf.node(gf.outputs[k])
        if len(then.shape) != len(other.shape) or then.dtype != other.dtype:
            raise ExportError(f"output '{k}': the branches make {then.type_text()} and "
                              f"{other.type_text()}; an ONNX If needs one rank and dtype")
        dims = [a if a == b else None for a, b in zip(then.shape, other.shape, strict=True)]
        graph_outputs.append(helper.make_tensor_value_info(k, tensor_type(then.dtype), dims))
    onnx_graph = helper.make_graph(e.nodes, spec.name, graph_inputs, graph_outputs,
                                   e.initializers)
    model = helper.make_model(onnx_graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="graphtool")
    model.ir_version = min(model.ir_version, 10)
    meta = {"spec": spec.name, "graphtool_version": _version(), "opset": str(opset),
            "batch": "fixed", "control_flow": f"If at {guard.attrs['at']}"}
    for key, value in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    return model


def _common_prefix(a, b) -> set[int]:
    """Ids of the nodes both traces made the same way before they first differ."""
    common: set[int] = set()
    nodes_b = [n for n in b.nodes if n.op != "guard"]
    for x, y in zip((n for n in a.nodes if n.op != "guard"), nodes_b, strict=False):
        same = (x.id, x.op, x.inputs, x.shape, x.dtype, x.name, repr(sorted(x.attrs.items()))) \
            == (y.id, y.op, y.inputs, y.shape, y.dtype, y.name, repr(sorted(y.attrs.items())))
        if same and x.op == "const":
            same = np.array_equal(a.consts[x.id], b.consts[y.id])
        if not same:
            break
        common.add(x.id)
    return common
