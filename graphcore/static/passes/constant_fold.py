"""Constant folding: compute at compile time what depends on constants only."""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np

from graphcore import errors
from graphcore.registry import get_op
from graphcore.static.ir import Graph, Node
from graphcore.static.passes.base import PassReport

MAX_FOLD_BYTES = 64 * 2**20  # a bigger folded value costs more memory than it saves time


def fold_constants(graph: Graph, frozen: Mapping[str, np.ndarray] | None = None, *,
                   max_fold_bytes: int = MAX_FOLD_BYTES) -> tuple[Graph, PassReport]:
    """Replace nodes whose inputs are all constants by their value; return a new graph.

    1. Params named in ``frozen`` become ``const`` nodes holding a copy of the given array
       (inference with frozen parameters); the array must have the param's shape and dtype.
    2. Walking in order, a node is folded when it is a registry op declared ``pure`` and all
       its inputs are consts (given or just folded, so chains fold in one walk). It becomes a
       ``const`` with the same id, shape and dtype, computed by
       ``get_op(op)(**attrs).forward(arrays)``; a result of another shape or dtype raises
       ``TraceError``.

    Never folded: ``vjp`` nodes and a node some ``vjp`` names as its forward node (the vjp
    reads that node's op and inputs, not only its value), guards, impure ops (``dropout``),
    ops outside the registry, values over ``max_fold_bytes`` (64 MB), and nodes whose
    evaluation raises or warns (left to run time, so folding never moves or hides an error).

    A multi-output node (a tuple, e.g. ``split_axis``) is evaluated once and its ``project``
    nodes are folded into consts instead; the tuple node is then dropped if nothing else
    reads it. Likewise a const that only fed folded nodes is dropped, so folding leaves no
    dead constants behind (other dead code is the ``dce`` pass's job). Ids and order are
    unchanged; ``graph`` is not modified.

    Before (``frozen={"W": ...}``)::

        graph g {
          %0 = input x : f32[2,3]
          %1 = param W : f32[3,4]
          %2 = transpose[axes=(1, 0)](%1) : f32[4,3]
          %3 = reshape[shape=(2, 6)](%2) : f32[2,6]
          %4 = matmul(%0, %1) : f32[2,4]
          return a=%3, b=%4
        }

    After (``%2`` only fed the folded ``%3``)::

        graph g {
          %0 = input x : f32[2,3]
          %1 = const() : f32[3,4]
          %3 = const() : f32[2,6]
          %4 = matmul(%0, %1) : f32[2,4]
          return a=%3, b=%4
        }
    """
    frozen = frozen or {}
    consts = dict(graph.consts)
    nodes = [_freeze(n, frozen, consts) for n in graph.nodes]
    frozen_count = sum(1 for old, new in zip(graph.nodes, nodes, strict=True) if old is not new)
    forward_of_vjp = {n.inputs[0] for n in graph.nodes if n.op == "vjp"}

    tuples: dict[int, tuple[np.ndarray, ...]] = {}  # evaluated multi-output nodes
    fed_folding: set[int] = set()  # consts and tuples read by a folded node
    folded, skipped_big, left_to_run = 0, 0, 0
    created_bytes = 0
    for k, node in enumerate(nodes):
        is_projection = node.op == "project" and node.inputs[0] in tuples
        if not is_projection and not _foldable(node, consts, forward_of_vjp):
            continue
        if _nbytes(node) > max_fold_bytes:
            skipped_big += 1
            continue
        if is_projection:
            value = tuples[node.inputs[0]][node.attrs["index"]]
        else:
            outputs = _evaluate(node, [consts[i] for i in node.inputs])
            if outputs is None:
                left_to_run += 1
                continue
            if node.shape is None:  # a tuple: its projections fold, it stays until unread
                tuples[node.id] = outputs
                fed_folding.update(node.inputs)
                continue
            value = _single(node, outputs)
        _check_type(node, value)
        fed_folding.update(node.inputs)
        consts[node.id] = np.array(value, copy=True, order="C")  # never a view of an input
        nodes[k] = Node(node.id, "const", (), {}, node.shape, node.dtype, node.name)
        folded += 1
        created_bytes += consts[node.id].nbytes

    nodes, dropped = _drop_unread(nodes, fed_folding, set(graph.outputs.values()))
    ids = {n.id for n in nodes}
    consts = {i: a for i, a in consts.items() if i in ids}
    result = graph.copy(nodes=nodes, consts=consts)
    result.slots = {i: s for i, s in graph.slots.items() if i in ids}
    notes = [f"folded {folded} nodes into constants ({created_bytes} bytes of constants "
             f"created)"]
    if frozen_count:
        notes.append(f"froze {frozen_count} params into constants")
    params = {n.name for n in graph.nodes if n.op == "param"}
    unknown = sorted(name for name in frozen if name not in params)
    if unknown:
        notes.append("frozen names with no param in this graph: " + ", ".join(unknown))
    if dropped:
        notes.append(f"dropped {dropped} nodes that only fed folded nodes")
    if skipped_big:
        notes.append(f"not folded: {skipped_big} values over {max_fold_bytes} bytes")
    if left_to_run:
        notes.append(f"not folded: {left_to_run} nodes whose evaluation raised (left to run "
                     "time)")
    report = PassReport("fold", nodes_before=len(graph.nodes), nodes_after=len(nodes),
                        bytes_before=graph.nbytes(), bytes_after=result.nbytes(), notes=notes)
    return result, report


def _freeze(node: Node, frozen: Mapping[str, np.ndarray], consts: dict[int, np.ndarray]) -> Node:
    """A param named in ``frozen`` as a const holding a copy of its array; else ``node``."""
    if node.op != "param" or node.name not in frozen:
        return node
    value = np.array(frozen[node.name], copy=True, order="C")
    _check_type(node, value)
    consts[node.id] = value
    return Node(node.id, "const", (), {}, node.shape, node.dtype, node.name)


def _foldable(node: Node, consts: dict[int, np.ndarray], forward_of_vjp: set[int]) -> bool:
    if node.op in ("const", "input", "param", "vjp", "guard", "project"):
        return False
    if node.id in forward_of_vjp or not all(i in consts for i in node.inputs):
        return False
    try:
        return bool(get_op(node.op).pure)
    except errors.RegistryError:  # fused, linear_act, ...
        return False


def _evaluate(node: Node, arrays: list[np.ndarray]) -> tuple[np.ndarray, ...] | None:
    """The op's outputs on ``arrays``; None when evaluating raises or warns."""
    try:
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            return tuple(get_op(node.op)(**node.attrs).forward(tuple(arrays)))
    except Exception:  # the same error will happen, in its place, at run time
        return None


def _single(node: Node, outputs: tuple[np.ndarray, ...]) -> np.ndarray:
    if len(outputs) != 1:
        raise errors.TraceError(f"constant folding {node.text()}: the op returned "
                                f"{len(outputs)} values for a single-valued node")
    return outputs[0]


def _check_type(node: Node, value: np.ndarray) -> None:
    value = np.asarray(value)
    if tuple(value.shape) != tuple(node.shape) or value.dtype != np.dtype(node.dtype):
        raise errors.TraceError(
            f"constant folding {node.text()}: the value is {value.dtype}{list(value.shape)}, "
            f"the node declares {node.type_text()}")


def _drop_unread(nodes: list[Node], candidates: set[int],
                 outputs: set[int]) -> tuple[list[Node], int]:
    """Drop candidates (consts and tuples that fed folding) that nothing reads any more."""
    readers = {n.id: 0 for n in nodes}
    for n in nodes:
        for i in n.inputs:
            readers[i] += 1
    keep = []
    for n in reversed(nodes):  # readers come later, so they are settled first
        if n.id in candidates and readers[n.id] == 0 and n.id not in outputs:
            for i in n.inputs:
                readers[i] -= 1
            continue
        keep.append(n)
    keep.reverse()
    return keep, len(nodes) - len(keep)


def _nbytes(node: Node) -> int:
    if node.shape is None:
        return 0
    return int(np.prod(node.shape, dtype=np.int64)) * np.dtype(node.dtype).itemsize
