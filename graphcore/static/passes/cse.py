"""Common-subexpression elimination: compute each distinct pure value once."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.registry import get_op
from graphcore.static.ir import Graph, Node
from graphcore.static.passes.base import PassReport, count_by_op


def eliminate_common_subexpressions(graph: Graph) -> tuple[Graph, PassReport]:
    """Merge nodes that compute the same value; users and outputs read the first of them.

    Two nodes are the same when they have the same op, the same inputs (after the merges made
    earlier in the walk, so merging one pair can make the next pair equal), equal attrs
    (compared canonically: arrays by dtype, shape and bytes; tuples, lists, dicts and slices
    element by element; ``1``, ``1.0`` and ``True`` are different) and the same shape and
    dtype. Only these take part:

    - registry ops declared ``pure`` (``dropout`` is not: two draws are two values);
    - ``vjp`` nodes whose forward node is pure, and ``project`` nodes;
    - ``const`` nodes whose arrays are equal (same dtype, shape and bytes).

    Never merged: ``input``/``param`` leaves (two inputs with equal types are still two
    values), guards (each is a check of its own), impure ops, ops outside the registry
    (``fused``, ``linear_act``), and nodes with an attr that cannot be compared.

    The kept node is the earliest one, so ids and execution order are unchanged; the
    duplicate is dropped. ``graph`` is not modified.

    Before::

        graph g {
          %0 = input x : f32[2,3]
          %1 = relu(%0) : f32[2,3]
          %2 = relu(%0) : f32[2,3]
          %3 = exp(%1) : f32[2,3]
          %4 = exp(%2) : f32[2,3]
          %5 = add(%3, %4) : f32[2,3]
          return y=%5
        }

    After (merging ``%2`` into ``%1`` makes ``%4`` a copy of ``%3``)::

        graph g {
          %0 = input x : f32[2,3]
          %1 = relu(%0) : f32[2,3]
          %3 = exp(%1) : f32[2,3]
          %5 = add(%3, %3) : f32[2,3]
          return y=%5
        }
    """
    replaced: dict[int, int] = {}  # dropped duplicate id -> the id of the node kept for it
    first: dict[tuple, int] = {}  # value key -> id of the first node with that key
    kept: dict[int, Node] = {}
    merged: list[Node] = []
    for node in graph.nodes:
        inputs = tuple(replaced.get(i, i) for i in node.inputs)
        if inputs != node.inputs:
            node = node.with_(inputs=inputs)
        key = _value_key(node, graph, kept)
        if key is not None and key in first and _same_const(node, first[key], graph):
            replaced[node.id] = first[key]
            merged.append(node)
            continue
        if key is not None:
            first.setdefault(key, node.id)
        kept[node.id] = node

    outputs = {k: replaced.get(v, v) for k, v in graph.outputs.items()}
    consts = {i: a for i, a in graph.consts.items() if i in kept}
    result = graph.copy(nodes=list(kept.values()), outputs=outputs, consts=consts)
    result.slots = {i: s for i, s in graph.slots.items() if i in kept}
    report = PassReport("cse", nodes_before=len(graph.nodes), nodes_after=len(kept),
                        bytes_before=graph.nbytes(), bytes_after=result.nbytes(),
                        notes=[f"merged {len(merged)} duplicate nodes" + count_by_op(merged)])
    return result, report


def _value_key(node: Node, graph: Graph, kept: dict[int, Node]) -> tuple | None:
    """A hashable key equal for nodes that compute the same value; None: never merge."""
    if node.op == "const":
        value = graph.consts[node.id]
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return ("const", value.dtype.str, tuple(value.shape), digest)
    if node.op == "vjp":
        if not _is_pure(kept[node.inputs[0]], kept):
            return None
    elif node.op != "project" and not _is_pure(node, kept):
        return None
    try:
        attrs = canonical(node.attrs)
    except TypeError:
        return None
    return (node.op, node.inputs, attrs, node.shape, node.dtype)


def _same_const(node: Node, first_id: int, graph: Graph) -> bool:
    """Confirm byte for byte what the const key's digest says (other ops: always True)."""
    if node.op != "const":
        return True
    a, b = graph.consts[node.id], graph.consts[first_id]
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _is_pure(node: Node, kept: dict[int, Node]) -> bool:
    """A registry op declared pure, or a vjp (of a vjp ...) of one."""
    while node.op == "vjp":
        node = kept[node.inputs[0]]
    try:
        return bool(get_op(node.op).pure)
    except errors.RegistryError:  # leaves, guards, project, fused, linear_act
        return False


def canonical(value: Any) -> Any:
    """A hashable form of an attr value, equal exactly when the values act the same.

    The type is part of the form (``1``, ``1.0`` and ``True`` differ; a list index is not a
    tuple index), floats compare by ``repr`` (``-0.0`` is not ``0.0``; ``nan`` equals
    ``nan``). Raises ``TypeError`` for values it does not know how to compare.
    """
    if value is None or value is Ellipsis or isinstance(value, bool | int | str | bytes):
        return (type(value).__name__, value)
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value).tobytes()
        return ("ndarray", value.dtype.str, tuple(value.shape), data)
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.str, value.tobytes())
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return ("dtype", np.dtype(value).str)
    if isinstance(value, tuple | list):
        return (type(value).__name__, tuple(canonical(v) for v in value))
    if isinstance(value, slice):
        return ("slice", canonical(value.start), canonical(value.stop), canonical(value.step))
    if isinstance(value, dict):
        items = sorted((canonical(k), canonical(v)) for k, v in value.items())
        return ("dict", tuple(items))
    raise TypeError(f"cannot compare attr value of type {type(value).__name__}")

