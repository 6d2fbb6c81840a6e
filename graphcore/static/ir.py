"""The static-mode IR: plain data, a deterministic text form, and a verifier.

A ``Graph`` is a list of ``Node``s in execution order. Each node produces one value, named
``%<id>``; ``inputs`` are the ids it reads. Node kinds (``op``):

- ``input`` / ``param`` / ``const``: leaves. Inputs and params carry a ``name``; a const's
  array lives in ``Graph.consts``.
- a registry op name (``linear``, ``relu``, ...): the op applied to its inputs, ``attrs`` are the
  op's constructor arguments.
- ``vjp``: one input's gradient of a forward node. ``inputs[0]`` is the forward node, the rest
  are the gradients of its outputs; ``attrs``: ``index`` (which input), ``of`` (its op name).
- ``project``: element ``attrs["index"]`` of a multi-output node's tuple value.
- ``guard``: checks a predicate on live values at replay time (``attrs``: ``predicate``,
  ``expect``, ``names``, ``at``); produces no array.
- ``fused``: an elementwise chain run in one buffer (``attrs["program"]``), and
  ``linear_act``: ``linear`` followed by an activation, made by the fusion passes (and
  ``convolution_act``: a convolution followed by an activation, with the convolution's attrs;
  ``concat_linear``: a linear layer of joined parts, ``passes/fuse_concat_linear.py``).

Conventions every pass and the lowering share:

- *Aliases*: ``reshape``, ``transpose``, ``broadcast_to``, ``project`` and ``get_item`` may return
  a view of their first input, so that input's buffer lives as long as the alias does.
- *vjp reads*: a ``vjp`` node reads its forward node's inputs and value (not only its own
  listed inputs), so those stay alive until it runs.
- *Memory plan*: ``Graph.slots`` maps a node id to a buffer slot; nodes sharing a slot share
  one preallocated array (their lifetimes do not overlap, or the later one is computed in
  place). Nodes without a slot get their own buffer. Leaves, aliases, guards and the values
  named in ``outputs`` never share.

The text form reads like ``%3 = relu(%2) : f32[3,5]``; ``Graph.text()`` is what golden tests and
``ir.txt`` show. ``verify`` runs after tracing and after every pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from graphcore import errors

LEAVES = ("input", "param", "const")
ALIASING = ("reshape", "transpose", "broadcast_to", "project", "get_item")
_DTYPE_SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int32": "i32",
                "int64": "i64", "bool": "b1", "uint8": "u8", "int8": "i8"}


@dataclass(frozen=True)
class Node:
    id: int
    op: str
    inputs: tuple[int, ...] = ()
    attrs: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    shape: tuple[int, ...] | None = ()  # None: a tuple-valued node (multi-output) or a guard
    dtype: str = "float32"
    name: str | None = None

    def with_(self, **changes: Any) -> Node:
        return replace(self, **changes)

    def type_text(self) -> str:
        if self.shape is None:
            return "()" if self.op == "guard" else "tuple"
        dims = ",".join(str(n) for n in self.shape)
        return f"{_DTYPE_SHORT.get(self.dtype, self.dtype)}[{dims}]"

    def text(self) -> str:
        if self.op in ("input", "param"):
            return f"%{self.id} = {self.op} {self.name} : {self.type_text()}"
        args = ", ".join(f"%{i}" for i in self.inputs)
        attrs = attrs_text(self.attrs)
        return f"%{self.id} = {self.op}{attrs}({args}) : {self.type_text()}"


@dataclass
class Graph:
    """A traced program: nodes in execution order, named outputs, constant values."""

    nodes: list[Node]
    outputs: dict[str, int]
    consts: dict[int, np.ndarray] = field(default_factory=dict)
    name: str = "graph"
    slots: dict[int, int] = field(default_factory=dict)

    def node(self, node_id: int) -> Node:
        return self._index()[node_id]

    def _index(self) -> dict[int, Node]:
        return {n.id: n for n in self.nodes}

    def users(self) -> dict[int, list[int]]:
        """For each node id, the ids of the nodes that read it, in order."""
        users: dict[int, list[int]] = {n.id: [] for n in self.nodes}
        for n in self.nodes:
            for i in n.inputs:
                users[i].append(n.id)
        return users

    def next_id(self) -> int:
        return max((n.id for n in self.nodes), default=-1) + 1

    def copy(self, nodes: list[Node] | None = None, outputs: dict[str, int] | None = None,
             consts: dict[int, np.ndarray] | None = None) -> Graph:
        return Graph(list(self.nodes if nodes is None else nodes),
                     dict(self.outputs if outputs is None else outputs),
                     dict(self.consts if consts is None else consts), self.name,
                     dict(self.slots))

    def text(self) -> str:
        """The deterministic text form (one node per line, then the outputs)."""
        lines = [f"graph {self.name} {{"]
        lines += [f"  {n.text()}" for n in self.nodes]
        outs = ", ".join(f"{k}=%{v}" for k, v in self.outputs.items())
        lines.append(f"  return {outs}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def nbytes(self) -> int:
        """Bytes of every array value (leaves included), as if nothing were shared."""
        return sum(_nbytes(n) for n in self.nodes)


def _nbytes(node: Node) -> int:
    if node.shape is None:
        return 0
    return int(np.prod(node.shape, dtype=np.int64)) * np.dtype(node.dtype).itemsize


def attrs_text(attrs: dict[str, Any]) -> str:
    if not attrs:
        return ""
    parts = [f"{k}={_value_text(v)}" for k, v in sorted(attrs.items())]
    return "[" + ", ".join(parts) + "]"


def _value_text(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array{list(value.shape)}"
    if isinstance(value, tuple | list):
        return "(" + ", ".join(_value_text(v) for v in value) + ("," if len(value) == 1 else "") \
            + ")"
    if isinstance(value, slice):
        return f"{value.start}:{value.stop}:{value.step}"
    if isinstance(value, np.dtype):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return str(value) if not isinstance(value, str) else value


def basic_index(index: Any) -> bool:
    """Whether a ``get_item`` index is basic (ints, slices, None, Ellipsis): a view of its
    input, never a copy."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(type(p) in (int, slice) or p is None or p is Ellipsis for p in parts)


def ancestors(graph: Graph, roots) -> set[int]:
    """The ids of ``roots`` and of every node they read, directly or not."""
    by_id = {n.id: n for n in graph.nodes}
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        stack.extend(by_id[i].inputs)
    return seen


def verify(graph: Graph) -> Graph:
    """Check the IR is well formed; raise ``TraceError`` naming the first bad node.

    Ids are unique, every input is defined before use, leaves have no inputs, inputs/params
    are named, consts have values of their declared shape, projections point at tuples,
    outputs name existing non-guard nodes, and array values have a shape and a dtype.
    """
    seen: dict[int, Node] = {}
    for n in graph.nodes:
        where = f"IR node {n.text()}"
        if n.id in seen:
            raise errors.TraceError(f"{where}: id %{n.id} is defined twice")
        for i in n.inputs:
            if i not in seen:
                raise errors.TraceError(f"{where}: reads %{i} before it is defined")
        if n.op in LEAVES and n.inputs:
            raise errors.TraceError(f"{where}: a leaf has no inputs")
        if n.op in ("input", "param") and not n.name:
            raise errors.TraceError(f"{where}: {n.op} needs a name")
        if n.op == "const":
            value = graph.consts.get(n.id)
            if value is None or tuple(value.shape) != tuple(n.shape):
                raise errors.TraceError(f"{where}: const value missing or of another shape")
        if n.op == "project" and seen[n.inputs[0]].shape is not None:
            raise errors.TraceError(f"{where}: projects from a node that is not a tuple")
        if n.op == "vjp" and not n.inputs:
            raise errors.TraceError(f"{where}: vjp needs its forward node")
        if n.shape is not None and n.op != "guard" and not n.dtype:
            raise errors.TraceError(f"{where}: no dtype")
        seen[n.id] = n
    for key, i in graph.outputs.items():
        if i not in seen:
            raise errors.TraceError(f"output {key}: %{i} is not defined")
        if seen[i].op == "guard" or seen[i].shape is None:
            raise errors.TraceError(f"output {key}: %{i} is not an array value")
    return graph
