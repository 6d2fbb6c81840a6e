"""Tracing: record one define-by-run execution and turn it into IR, forward and backward.

``trace(fn, inputs, params)`` calls ``fn`` once on Variables wrapping the inputs (so every op
is recorded, even ops on data alone), walks the recorded graph from the outputs back to the
leaves, and emits one IR node per op. The backward half is built at the IR level by reverse
mode over those nodes: for each input of each op that leads to a trainable parameter, one
``vjp`` node (that op's own backward, run on arrays at replay time), with ``add`` nodes where
gradients meet. So gradients nobody asked for (data inputs, frozen parameters) are never in
the program, and every op's backward stays declared once, in its op class.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.config import using_config
from graphcore.function_node import FunctionNode, recording
from graphcore.static.ir import Graph, Node, verify
from graphcore.variable import Parameter, Variable


@dataclass
class Trace:
    """A traced program: the IR plus what lowering needs to bind it to live objects."""

    graph: Graph
    params: dict[str, Parameter]  # IR param name -> the Parameter it reads
    instances: dict[int, FunctionNode]  # IR node id -> the op object traced there
    output_keys: list[str]  # forward outputs in the order ``fn`` returned them
    guards: list[dict[str, Any]] = field(default_factory=list)


class _Builder:
    def __init__(self, name: str) -> None:
        self.nodes: list[Node] = []
        self.consts: dict[int, np.ndarray] = {}
        self.ids: dict[int, int] = {}  # id(Variable) -> IR id
        self.instances: dict[int, FunctionNode] = {}
        self.name = name
        self.count = 0
        self.by_id: dict[int, Node] = {}

    def add(self, op: str, inputs: tuple[int, ...], shape, dtype, attrs=None, name=None) -> int:
        node_id = self.count
        self.count += 1
        node = Node(node_id, op, tuple(inputs), dict(attrs or {}),
                    None if shape is None else tuple(shape), str(dtype), name)
        self.nodes.append(node)
        self.by_id[node_id] = node
        return node_id

    def const(self, array: np.ndarray) -> int:
        node_id = self.add("const", (), array.shape, array.dtype)
        self.consts[node_id] = np.array(array, copy=True)
        return node_id


def trace(fn: Callable[..., Any], inputs: Mapping[str, np.ndarray],
          params: Mapping[str, Parameter], *, name: str = "graph", grads: bool = True,
          call: Callable[[dict[str, Variable]], Any] | None = None,
          guards: Callable[[], list[dict[str, Any]]] | None = None,
          seed_outputs: bool = False, grad_inputs: Sequence[str] = (),
          loss_scale: float = 1.0) -> Trace:
    """Run ``fn(**input Variables)`` (or ``call(variables)``) once and build its IR.

    ``fn`` returns a Variable, or a tuple/dict of Variables. When ``grads``:

    - by default a scalar first (or ``loss``) output is differentiated, with a gradient of
      ones (or ``loss_scale``: the gradients of ``loss * loss_scale``, without a node for the
      product), with respect to every trainable parameter (``grad/<param>`` outputs);
    - with ``seed_outputs`` every floating-point output ``key`` that depends on something
      differentiated gets an ``input`` node ``gy/<key>`` holding its incoming gradient (a
      compiled call inside a larger graph), and the inputs named in ``grad_inputs`` are
      differentiated too (``gin/<input>`` outputs).
    """
    variables = {k: Variable(np.asarray(v), name=k) for k, v in inputs.items()}
    with recording() as created, using_config("enable_backprop", True):
        result = call(variables) if call is not None else fn(**variables)
    outputs = _named_outputs(result)
    guard_records = guards() if guards is not None else []
    b = _Builder(name)
    param_names = {id(p): n for n, p in params.items()}
    for key, var in variables.items():
        b.ids[id(var)] = b.add("input", (), var.shape, var.dtype, name=key)
    watched = [v for g in guard_records for v in g["values"].values() if isinstance(v, Variable)]
    order = _in_creation_order(_topological(list(outputs.values()) + watched), created)
    used_params: dict[str, Parameter] = {}
    for fnode in order:
        for x in fnode.inputs:
            if id(x) in b.ids or x.creator is not None:
                continue
            if isinstance(x, Parameter) and id(x) in param_names:
                pname = param_names[id(x)]
                b.ids[id(x)] = b.add("param", (), x.shape, x.dtype, name=pname)
                used_params[pname] = x
            elif isinstance(x, Parameter):
                raise errors.TraceError(f"{fnode.label} reads a parameter ({x.name}) that is not "
                                        "part of the compiled model; pass it in `params`")
            else:
                b.ids[id(x)] = b.const(x.array)
        _emit_forward(b, fnode)
    _emit_guards(b, guard_records)
    out_ids = {}
    for key, var in outputs.items():
        if id(var) not in b.ids:  # an output computed without any op: a constant
            b.ids[id(var)] = b.const(var.array)
        out_ids[key] = b.ids[id(var)]
    if grads:
        trainable = {n: p for n, p in used_params.items() if p.requires_grad}
        wrt = {f"grad/{n}": b.ids[id(p)] for n, p in trainable.items()}
        wrt.update({f"gin/{k}": b.ids[id(variables[k])] for k in grad_inputs})
        if seed_outputs:
            seeds = {k: b.ids[id(v)] for k, v in outputs.items() if v.dtype.kind == "f"}
            out_ids.update(_emit_backward(b, order, seeds, wrt, from_inputs=True))
        else:
            loss_key = "loss" if "loss" in outputs else next(iter(outputs))
            loss = outputs[loss_key]
            if loss.size == 1 and wrt and loss.dtype.kind == "f":
                out_ids.update(_emit_backward(b, order, {loss_key: b.ids[id(loss)]}, wrt,
                                              scale=loss_scale))
    graph = Graph(b.nodes, out_ids, b.consts, name)
    verify(graph)
    return Trace(graph, used_params, b.instances, list(outputs))


def _emit_guards(b: _Builder, records: list[dict[str, Any]]) -> None:
    """One ``guard`` node per predicate evaluation, placed right after the last value it
    reads, so a replay that takes another path stops as early as possible."""
    for record in records:
        names, ids, env = [], [], {}
        for key, value in record["values"].items():
            if isinstance(value, Variable) and id(value) in b.ids:
                names.append(key)
                ids.append(b.ids[id(value)])
            else:
                env[key] = value.array if isinstance(value, Variable) else value
        where = {n.id: k for k, n in enumerate(b.nodes)}
        position = max((where[i] for i in ids), default=-1) + 1
        node = Node(-1, "guard", tuple(ids), {
            "predicate": record["predicate"], "expect": record["expect"], "names": names,
            "env": env, "at": record["at"]}, None, "", None)
        b.nodes.insert(position, node)
    for i, n in enumerate(b.nodes):  # ids are names, not positions
        if n.id == -1:
            b.nodes[i] = n.with_(id=b.count)
            b.count += 1


def _named_outputs(result: Any) -> dict[str, Variable]:
    if isinstance(result, Variable):
        return {"out": result}
    if isinstance(result, Mapping):
        items = dict(result)
    elif isinstance(result, tuple | list):
        items = {f"out{i}": v for i, v in enumerate(result)}
    else:
        raise errors.TraceError(f"a compiled function must return Variables, got "
                                f"{type(result).__name__}")
    for key, v in items.items():
        if not isinstance(v, Variable):
            raise errors.TraceError(f"output {key!r} is a {type(v).__name__}, not a Variable")
    return items


def _topological(outputs: Sequence[Variable]) -> list[FunctionNode]:
    """Function nodes behind ``outputs``, inputs before users (iterative post-order DFS)."""
    order: list[FunctionNode] = []
    done: set[int] = set()
    for out in outputs:
        if out.creator is None or id(out.creator) in done:
            continue
        stack: list[tuple[FunctionNode, bool]] = [(out.creator, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in done:
                continue
            if expanded:
                done.add(id(node))
                order.append(node)
                continue
            stack.append((node, True))
            for x in reversed(node.inputs):
                if x.creator is not None and id(x.creator) not in done:
                    stack.append((x.creator, False))
    return order


def _in_creation_order(order: list[FunctionNode], created: list[FunctionNode]
                       ) -> list[FunctionNode]:
    """``order`` sorted as the ops ran (a topological order too), so random ops such as
    dropout draw from numpy's generator in the order define-by-run drew."""
    position = {id(f): k for k, f in enumerate(created)}
    if any(id(f) not in position for f in order):  # a node made before tracing began
        return order
    return sorted(order, key=lambda f: position[id(f)])


def _op_name(fnode: FunctionNode) -> tuple[str, dict[str, Any]]:
    cls = type(fnode)
    if cls.name:
        return cls.name, fnode.op_attrs()
    return "opaque", {"class": f"{cls.__module__}.{cls.__qualname__}"}


def _emit_forward(b: _Builder, fnode: FunctionNode) -> None:
    op, attrs = _op_name(fnode)
    ins = tuple(b.ids[id(x)] for x in fnode.inputs)
    outs = [ref() for ref in fnode.outputs]
    if len(outs) == 1:
        y = outs[0]
        shape, dtype = (y.shape, y.dtype) if y is not None else fnode.output_meta(0)
        node_id = b.add(op, ins, shape, dtype, attrs)
        b.instances[node_id] = fnode
        if y is not None:
            b.ids[id(y)] = node_id
        return
    node_id = b.add(op, ins, None, "tuple", attrs)
    b.instances[node_id] = fnode
    for i, y in enumerate(outs):
        shape, dtype = fnode.output_meta(i)
        pid = b.add("project", (node_id,), shape, dtype, {"index": i})
        if y is not None:
            b.ids[id(y)] = pid


def _emit_backward(b: _Builder, order: list[FunctionNode], seeds: Mapping[str, int],
                   wrt: Mapping[str, int], from_inputs: bool = False,
                   scale: float = 1.0) -> dict[str, int]:
    """Reverse mode over the traced nodes from ``seeds`` (output key -> value id) to the
    leaves in ``wrt`` (output key, e.g. ``grad/<param>``, -> leaf id); returns ``{key: id}``.

    Each seed's gradient is a const of ones (of ``scale``), or with ``from_inputs`` an
    ``input`` node ``gy/<key>`` (filled at replay time with the gradient arriving from
    outside)."""
    by_id = b.by_id
    node_of = {id(f): i for i, f in b.instances.items()}
    # values whose gradient is needed: on some path from a differentiated leaf
    needs: set[int] = set(wrt.values())
    for n in b.nodes:
        if n.op not in ("input", "param", "const") and _carries_gradient(n) \
                and any(i in needs for i in n.inputs):
            needs.add(n.id)
    pending: dict[int, list[int]] = {}
    for key, out_id in seeds.items():
        if out_id not in needs:
            continue
        out = by_id[out_id]
        seed = b.add("input", (), out.shape, out.dtype, name=f"gy/{key}") if from_inputs \
            else b.const(np.full(out.shape, scale, out.dtype))
        pending.setdefault(out_id, []).append(seed)
    for fnode in reversed(order):
        fid = node_of[id(fnode)]
        fnode_ir = by_id[fid]
        if fnode_ir.shape is None:  # multi-output: gradients arrive at the projections
            projections = [n for n in b.nodes if n.op == "project" and n.inputs == (fid,)]
            if not any(p.id in pending for p in projections):
                continue
            gys = []
            for i in range(len(fnode.outputs)):
                pid = next((p.id for p in projections if p.attrs["index"] == i), None)
                if pid is not None and pid in pending:
                    gys.append(_sum(b, pending.pop(pid)))
                else:
                    shape, dtype = fnode.output_meta(i)
                    gys.append(b.const(np.zeros(shape, dtype)))
        else:
            if fid not in pending:
                continue
            gys = [_sum(b, pending.pop(fid))]
        for i, x_id in enumerate(fnode_ir.inputs):
            if x_id not in needs:
                continue
            x = by_id[x_id]
            if _passes_gradient(fnode_ir, i, x, by_id, b):
                vid = gys[0]  # d(a + b)/da is the identity: reuse the incoming gradient
            elif _bias_of_one_row(fnode_ir, i, gys, by_id):
                # a bias's gradient over a single row is that row: a view, no computation
                vid = b.add("reshape", (gys[0],), x.shape, x.dtype, {"shape": x.shape})
            else:
                vid = b.add("vjp", (fid, *gys), x.shape, x.dtype,
                            {"of": fnode_ir.op, "index": i})
            terms = pending.get(x_id)
            if terms is None:
                pending[x_id] = [vid]
            else:  # sum as contributions arrive: each term's buffer is free for the next one
                terms[0] = b.add("add", (terms[0], vid), x.shape, x.dtype)
    grads = {}
    for key, leaf in wrt.items():
        if leaf in pending:
            grads[key] = _sum(b, pending[leaf])
    return grads


def _carries_gradient(node: Node) -> bool:
    """Whether a gradient can flow through ``node``'s value: not an integer or boolean one
    (a batched if's row order, say), which no op differentiates."""
    return node.dtype == "tuple" or (bool(node.dtype) and np.dtype(node.dtype).kind in "fc")


def _passes_gradient(fnode: Node, index: int, x: Node, by_id: dict, b: _Builder) -> bool:
    """True when the gradient for input ``index`` is the output gradient itself."""
    same = x.shape == fnode.shape and x.dtype == fnode.dtype
    return same and (fnode.op in ("add", "add_scalar") or (fnode.op == "sub" and index == 0))


def _bias_of_one_row(fnode: Node, index: int, gys: list[int], by_id: dict) -> bool:
    gy = by_id.get(gys[0])
    return (fnode.op == "linear" and index == 2 and gy is not None and gy.shape is not None
            and int(np.prod(gy.shape[:-1])) == 1)


def _sum(b: _Builder, ids: list[int]) -> int:
    total = ids[0]
    first = b.by_id[total]  # every term has this shape and dtype
    for other in ids[1:]:
        total = b.add("add", (total, other), first.shape, first.dtype)
    return total
