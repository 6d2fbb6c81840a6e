"""Control-flow regions (``regions``) -> ONNX ``If`` and ``Loop`` nodes.

- a live ``if``: an ``If`` whose condition is the predicate (``predicates``) on the values at
  the step; each branch is a subgraph reading the enclosing graph's values by name and giving
  back every value either branch rebinds (the value from before the step where a branch does
  not touch it);
- a live ``while``: a ``Loop`` with the cap (``max_iters``) as its trip count and the predicate
  as its condition, tested on the values before the first trip (so 0 trips is possible) and
  after each trip, as graphtool does; at the cap it stops (``on_limit: stop``). The values the
  body rebinds are loop-carried; ``loop.i`` in the predicate is the trip count;
- a ``for_each``: a ``Loop`` over axis 0 of the sequence (its length read at run time), the item
  ``Gather``ed by the iteration number, carries (and the values the body rebinds) loop-carried,
  ``collect`` a scan output (stacked on a new axis 0, as graphtool stacks).

Bodies read outer values (inputs, parameters as initializers, shared by every trip) by name.
Subgraph values are declared with their element type only: a carried value may change shape
on the first trip (``_``), and the branches of an ``If`` may give different shapes.
"""

from __future__ import annotations

import numpy as np

from graphcore.onnx.emit import Emitter, FixedBatch, tensor_type
from graphcore.onnx.errors import ExportError
from graphcore.onnx.export import same_structure
from graphcore.onnx.predicates import emit_predicate
from graphcore.onnx.recurrent import emit_rnn
from graphcore.onnx.regions import Body, Region, RegionNode, live_names
from graphcore.static.ir import ancestors


class Lowering:
    """``build_model``'s ``lower`` hook for one traced graph: its region nodes (and their
    projections). ``other``: the same program traced at another batch size or sequence
    length (symbolic dims), or None."""

    def __init__(self, trace, other=None) -> None:
        self.trace, self.other = trace, other
        self.outputs: dict[int, list[str]] = {}
        self.loose: dict[int, list[set[int]]] = {}
        self.described: list[str] = []

    def __call__(self, e: Emitter, node) -> bool:
        if node.op == "project" and node.inputs[0] in self.outputs:
            index = node.attrs["index"]
            e.names[node.id] = self.outputs[node.inputs[0]][index]
            e.loose[node.id] = self.loose[node.inputs[0]][index]
            return True
        fnode = self.trace.instances.get(node.id)
        if not isinstance(fnode, RegionNode):
            return False
        other = None
        if self.other is not None:
            twin = self.other.instances.get(node.id)
            if not isinstance(twin, RegionNode):
                raise FixedBatch(node.id)
            other = twin.region
        types = [(e.by_id[i].shape, e.by_id[i].dtype) for i in node.inputs]
        region = fnode.region
        emit = {"if": _if, "while": _while, "for_each": _for_each, "rnn": emit_rnn}[region.kind]
        outs, loose = emit(e, region, [e.names[i] for i in node.inputs], types, other)
        label = {"if": "If", "rnn": str(region.constants.get("kind")).upper()}
        self.described.append(f"{label.get(region.kind, 'Loop')} at {region.step.loc}")
        self.outputs[node.id], self.loose[node.id] = outs, loose
        if node.shape is not None:  # one output: the node is the value
            e.names[node.id], e.loose[node.id] = outs[0], loose[0]
        return True


def _body_emitter(e: Emitter, body: Body, other: Body | None):
    graph = body.trace.graph
    shapes = None
    if other is not None:
        if not same_structure(graph, other.trace.graph):
            raise FixedBatch(-1)
        shapes = {n.id: n.shape for n in other.trace.graph.nodes}
    return e.child(graph, shapes, body.where)


def _emit_body(sub: Emitter, body: Body, bindings: dict[str, str],
               other: Body | None) -> dict[str, str]:
    """Emit a body's nodes into ``sub``; its inputs are ``bindings`` (value name -> ONNX
    name); returns value name -> ONNX name of each value it rebinds."""
    graph = body.trace.graph
    lower = Lowering(body.trace, other.trace if other is not None else None)
    needed = ancestors(graph, graph.outputs.values())
    for node in graph.nodes:
        if node.id not in needed:
            continue
        if node.op == "input":
            sub.names[node.id] = bindings[node.name]
        elif node.op == "param":
            sub.names[node.id] = sub.param(node.name, body.trace.params[node.name].array)
        elif node.op == "const":
            sub.names[node.id] = sub.const(graph.consts[node.id])
        elif node.op != "guard" and not lower(sub, node):
            sub.emit(node)
    return {name: sub.names[i] for name, i in graph.outputs.items()}


def _body_type(body: Body, name: str, fallback: tuple) -> tuple:
    graph = body.trace.graph
    if name in graph.outputs:
        node = graph.node(graph.outputs[name])
        return node.shape, node.dtype
    return fallback


def _loose(step, name: str, a: tuple, b: tuple) -> set[int]:
    """The axes on which two (shape, dtype) differ; a rank or dtype change is refused."""
    if len(a[0]) != len(b[0]) or a[1] != b[1]:
        raise ExportError(f"'{name}' is {a[1]}{list(a[0])} on one path and "
                          f"{b[1]}{list(b[0])} on another; an ONNX If/Loop needs one rank "
                          "and dtype", step.loc)
    return {i for i, (x, y) in enumerate(zip(a[0], b[0], strict=True)) if x != y}


def _identity(sub: Emitter, source: str, dtype: str):
    from onnx import helper

    out = sub.fresh("o")
    sub.nodes.append(helper.make_node("Identity", [source], [out]))
    return helper.make_tensor_value_info(out, tensor_type(dtype), None)


def _if(e: Emitter, region: Region, ins: list[str], types: list, other: Region | None):
    from onnx import helper

    outer = dict(zip(region.inputs, ins, strict=True))
    entry = dict(zip(region.inputs, types, strict=True))
    predicate = region.step.predicate
    cond = emit_predicate(e, predicate, {n: outer[n] for n in live_names(predicate)},
                          region.constants)
    branches, shapes = [], []
    for k, (label, body) in enumerate(zip(("then", "else"), region.bodies, strict=True)):
        twin = other.bodies[k] if other is not None else None
        sub = _body_emitter(e, body, twin)
        values = _emit_body(sub, body, outer, twin)
        kinds = [_body_type(body, n, entry.get(n)) for n in region.outputs]
        outs = [_identity(sub, values.get(n, outer.get(n)), t[1])
                for n, t in zip(region.outputs, kinds, strict=True)]
        branches.append(helper.make_graph(sub.nodes, f"{label}_{e.fresh('g')}", [], outs))
        shapes.append(kinds)
    loose = [_loose(region.step, n, a, b)
             for n, a, b in zip(region.outputs, *shapes, strict=True)]
    names = [e.fresh("if") for _ in region.outputs]
    e.nodes.append(helper.make_node("If", [cond], names, then_branch=branches[0],
                                    else_branch=branches[1]))
    return names, loose


def _loop_inputs(sub: Emitter, carried: list[str], entry: dict):
    from onnx import TensorProto, helper

    iteration, cond = sub.fresh("iter"), sub.fresh("cond")
    carried_in = {n: sub.fresh("carry") for n in carried}
    infos = [helper.make_tensor_value_info(iteration, TensorProto.INT64, []),
             helper.make_tensor_value_info(cond, TensorProto.BOOL, [])]
    infos += [helper.make_tensor_value_info(carried_in[n], tensor_type(entry[n][1]), None)
              for n in carried]
    return iteration, cond, carried_in, infos


def _while(e: Emitter, region: Region, ins: list[str], types: list, other: Region | None):
    from onnx import TensorProto, helper

    step, (body,) = region.step, region.bodies
    outer = dict(zip(region.inputs, ins, strict=True))
    entry = dict(zip(region.inputs, types, strict=True))
    predicate, live = step.predicate, live_names(step.predicate)
    counts = any(r.name == "loop.i" for r in predicate.name_refs())
    first = emit_predicate(e, predicate, {n: outer[n] for n in live},
                           {**region.constants, "loop.i": 0})
    twin = other.bodies[0] if other is not None else None
    sub = _body_emitter(e, body, twin)
    carried = region.outputs
    iteration, _, carried_in, infos = _loop_inputs(sub, carried, entry)
    bindings = {**outer, **carried_in}
    values = _emit_body(sub, body, bindings, twin)
    after = {n: values.get(n, bindings[n]) for n in live}
    if counts:  # the test after trip k (0-based) sees loop.i == k + 1
        after["loop.i"] = sub.op("Add", [iteration, sub.const(np.asarray(1, np.int64))])
    cond = emit_predicate(sub, predicate, after, region.constants)
    outs = [helper.make_tensor_value_info(cond, TensorProto.BOOL, [])]
    kinds = [_body_type(body, n, entry[n]) for n in carried]
    outs += [_identity(sub, values.get(n, carried_in[n]), t[1])
             for n, t in zip(carried, kinds, strict=True)]
    loose = [_loose(step, n, entry[n], t) for n, t in zip(carried, kinds, strict=True)]
    graph = helper.make_graph(sub.nodes, f"while_{e.fresh('g')}", infos, outs)
    trips = e.const(np.asarray(step.max_iters, np.int64))
    names = [e.fresh("loop") for _ in carried]
    e.nodes.append(helper.make_node("Loop", [trips, first, *[outer[n] for n in carried]],
                                    names, body=graph))
    return names, loose


def _for_each(e: Emitter, region: Region, ins: list[str], types: list,
              other: Region | None):
    from onnx import helper

    step, (body,) = region.step, region.bodies
    outer = dict(zip(region.inputs, ins, strict=True))
    entry = dict(zip(region.inputs, types, strict=True))
    carried = region.outputs[:-1] if step.collect else region.outputs
    sequence = outer[step.sequence]
    length = e.op("Gather", [e.op("Shape", [sequence]), e.const(np.asarray(0, np.int64))],
                  axis=0)
    twin = other.bodies[0] if other is not None else None
    sub = _body_emitter(e, body, twin)
    iteration, cond, carried_in, infos = _loop_inputs(sub, carried, entry)
    bindings = {**outer, **carried_in}
    bindings[step.item] = sub.op("Gather", [sequence, iteration], axis=0)
    values = _emit_body(sub, body, bindings, twin)
    kinds = [_body_type(body, n, entry[n]) for n in carried]
    outs = [_identity(sub, cond, "bool")]
    outs += [_identity(sub, values.get(n, carried_in[n]), t[1])
             for n, t in zip(carried, kinds, strict=True)]
    loose = [_loose(step, n, entry[n], t) for n, t in zip(carried, kinds, strict=True)]
    if step.collect:
        item_type = (entry[step.sequence][0][1:], entry[step.sequence][1])
        kind = _body_type(body, step.collect, entry.get(step.collect, item_type))
        outs.append(_identity(sub, values.get(step.collect, bindings[step.collect]), kind[1]))
        loose.append(set())
    graph = helper.make_graph(sub.nodes, f"for_each_{e.fresh('g')}", infos, outs)
    names = [e.fresh("loop") for _ in outs[1:]]
    e.nodes.append(helper.make_node("Loop", [length, "", *[outer[n] for n in carried]],
                                    names, body=graph))
    return names, loose
