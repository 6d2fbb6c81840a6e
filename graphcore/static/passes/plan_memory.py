"""Memory planning: give values whose lifetimes do not overlap the same buffer slot.

Each value lives from the node that defines it to its last use over the node order. A use is
being a listed input; a ``vjp`` also uses its forward node's inputs (the IR conventions). An alias
(``reshape``, ``transpose``, ``broadcast_to``, ``project``, ``get_item``) may be a view of its
first input, so every use of the alias is a use of that input too (transitively), and a value
named in ``graph.outputs`` is used at the very end.

Slots are assigned greedily in node order, as tinygrad's ``schedule/memory.py`` does. A node
takes, in this order of preference:

1. *in place*: the slot of one of its listed inputs whose last use is this node, when the node is
   elementwise (a registry op flagged ``elementwise`` other than ``where``, or ``fused`` where
   that input is read by the program's first instruction only, see below) and has the input's
   shape and dtype; the kernel then writes ``out`` over that input, which no later node reads;
2. the lowest-numbered free slot of its shape and dtype (one whose last value died before);
3. a new slot, numbered in order of first use from 0.

``linear_act`` and ``matmul_bias`` reuse freed slots but never work in place (a matrix product
cannot write over its own operand), nor do ``vjp`` nodes. An input read through an alias at the
same node is never overwritten in place (a view of it would change under the kernel). In a
``fused`` program the instructions after the first read the running value and their inputs:
overwriting an input that a later instruction still reads would be wrong, hence the rule above.

Never slotted (own buffer) and never reused: leaves (``input``, ``param``, ``const``), aliases,
guards, tuple-valued nodes, and the values named in ``graph.outputs``. The plan goes to
``Graph.slots`` (node id -> slot). Report: bytes before = every non-leaf array value in its own
buffer; after = one buffer per slot plus the unslotted non-leaf values.

Contract with the lowering: a node's kernel must be correct when ``out`` is one of its inputs
(for in-place nodes); a single numpy call with ``out=`` is, a kernel of several calls must read
that input before its first write to ``out``.
"""

from __future__ import annotations

import numpy as np

import graphcore.ops  # noqa: F401  (registers the ops whose flags this pass reads)
from graphcore import errors, registry
from graphcore.static.ir import ALIASING, LEAVES, Graph, Node
from graphcore.static.passes.base import PassReport

NOT_IN_PLACE = ("where",)  # elementwise ops whose kernels cannot write over an input


def plan_memory(graph: Graph) -> tuple[Graph, PassReport]:
    """Assign buffer slots to the graph's values; see the module doc for the rules."""
    last = last_uses(graph)
    alias_last = _alias_last_uses(graph, last)
    outputs = set(graph.outputs.values())
    slots: dict[int, int] = {}
    slot_kind: list[tuple[tuple[int, ...], str]] = []  # slot -> (shape, dtype)
    free: list[int] = []
    occupant: dict[int, int] = {}  # slot -> the value placed in it last
    dying: dict[int, list[int]] = {}  # position -> slotted values whose last use it is
    in_place = 0
    for position, node in enumerate(graph.nodes):
        if _slotted(node, outputs):
            kind = (node.shape, node.dtype)
            slot = _in_place_slot(node, position, slots, slot_kind, last, alias_last)
            if slot is not None:
                in_place += 1
            else:
                slot = next((s for s in sorted(free) if slot_kind[s] == kind), None)
                if slot is None:
                    slot = len(slot_kind)
                    slot_kind.append(kind)
                else:
                    free.remove(slot)
            slots[node.id] = slot
            occupant[slot] = node.id
            dying.setdefault(last[node.id], []).append(node.id)
        for value in dying.pop(position, []):
            if occupant[slots[value]] == value:  # else a node took its slot in place
                free.append(slots[value])
    planned = graph.copy()
    planned.slots = slots
    return planned, _report(graph, slots, slot_kind, in_place)


def last_uses(graph: Graph) -> dict[int, int]:
    """Each value's last use (a node position; ``len(nodes)`` for outputs), aliases included.

    A value never used dies where it is defined.
    """
    position = {n.id: k for k, n in enumerate(graph.nodes)}
    by_id = graph._index()
    last = dict(position)
    for k, node in enumerate(graph.nodes):
        read = list(node.inputs)
        if node.op == "vjp":
            read += by_id[node.inputs[0]].inputs
        for i in read:
            last[i] = max(last[i], k)
    for i in graph.outputs.values():
        last[i] = len(graph.nodes)
    for node in reversed(graph.nodes):  # an alias of an alias comes later: visit it first
        if node.op in ALIASING and node.inputs:
            source = node.inputs[0]
            last[source] = max(last[source], last[node.id])
    return last


def _alias_last_uses(graph: Graph, last: dict[int, int]) -> dict[int, int]:
    """For each value with aliases, the last use of any alias of it (transitively)."""
    alias_last: dict[int, int] = {}
    for node in reversed(graph.nodes):
        if node.op in ALIASING and node.inputs:
            source = node.inputs[0]
            here = max(last[node.id], alias_last.get(node.id, -1))
            alias_last[source] = max(alias_last.get(source, -1), here)
    return alias_last


def _slotted(node: Node, outputs: set[int]) -> bool:
    return (node.op not in LEAVES and node.op not in ALIASING and node.op != "guard"
            and node.shape is not None and node.id not in outputs)


def _in_place_slot(node: Node, position: int, slots: dict[int, int],
                   slot_kind: list[tuple[tuple[int, ...], str]], last: dict[int, int],
                   alias_last: dict[int, int]) -> int | None:
    for i in node.inputs:
        if i not in slots or last[i] != position or alias_last.get(i, -1) >= position:
            continue
        if slot_kind[slots[i]] != (node.shape, node.dtype) or not _may_overwrite(node, i):
            continue
        return slots[i]
    return None


def _may_overwrite(node: Node, value: int) -> bool:
    """Whether ``node``'s kernel may write its output over its input ``value``."""
    if node.op == "fused":
        ks = {k for k, i in enumerate(node.inputs) if i == value}
        later = node.attrs["program"][1:]
        return all(not ks.intersection(operands) for _, _, operands in later)
    if node.op in NOT_IN_PLACE:
        return False
    try:
        return bool(registry.get_op(node.op).elementwise)
    except errors.RegistryError:  # not a registry op: vjp, linear_act, matmul_bias, ...
        return False


def _nbytes(node: Node) -> int:
    return int(np.prod(node.shape, dtype=np.int64)) * np.dtype(node.dtype).itemsize


def _report(graph: Graph, slots: dict[int, int],
            slot_kind: list[tuple[tuple[int, ...], str]], in_place: int) -> PassReport:
    values = [n for n in graph.nodes
              if n.op not in LEAVES and n.op != "guard" and n.shape is not None]
    before = sum(_nbytes(n) for n in values)
    unslotted = sum(_nbytes(n) for n in values if n.id not in slots)
    slotted = sum(int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
                  for shape, dtype in slot_kind)
    notes = [f"{len(slots)} values in {len(slot_kind)} slots",
             f"{in_place} in place",
             f"bytes {before} -> {slotted + unslotted}"]
    count = len(graph.nodes)
    return PassReport("plan_memory", count, count, before, slotted + unslotted, notes=notes)
