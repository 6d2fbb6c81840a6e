"""Which node of one drawn run is which node of another: the alignment behind ``viz --diff``.

Node ids mean nothing across runs (they are sequential), so nodes are matched by structure,
never by shape: a node's *structure label* is its label with the shapes taken out
(``s: (7, 8), float32`` and ``s: (9, 8), float32`` are both ``s: #, float32``; the IR's
``f32[5]`` is ``#``; a collapsed loop's ``t = 1 … 6`` loses its counts). Then, in two passes:

1. **Same computation.** A node's key is its structure label with its inputs' keys,
   recursively (a Merkle key over the DAG), numbered among equal keys in declaration order.
   Nodes of equal keys are the same op on the same inputs all the way up: *exact* pairs, only
   their shapes may differ (inputs of another length, another batch size).
2. **Same place.** From the graphs' sinks (the outputs and the loss) towards their inputs: two
   sinks of one structure label are a pair; for each pair, their inputs not yet paired are
   paired by structure label, in operand order. Where one input is left on each side (the
   same position fed by different ops, ``ReLU`` in one run and ``Sigmoid`` in the other), the
   two stay apart (each is only in its run) but the walk goes on through them, so what feeds
   both is aligned too. These pairs are the same op at the same place, fed a different value.

Traversals use ordered containers only: the same two texts give the same alignment.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from dataclasses import dataclass

from graphcore.commands.viz.clusters import COLLAPSED_PREFIX
from graphcore.commands.viz.dot_reader import DotGraph

# A shape as labels write it: Chainer's ``(3, 4)``/``(5)``, the IR's ``f32[3,4]``/``f32[]``.
SHAPE = re.compile(r"(?:\b[a-z]+\d*)?\[(?:-?\d+(?:, ?-?\d+)*)?\]|\((?:-?\d+(?:, ?-?\d+)*,?)?\)")
_COLLAPSED_ID = re.compile(re.escape(COLLAPSED_PREFIX) + r"\d+")


@dataclass(frozen=True)
class Alignment:
    """``pairs``: each first-run node in both runs -> its second-run node; ``exact``: the
    first-run nodes of pass 1 (the same op on the same inputs), the others being of pass 2."""

    pairs: dict[str, str]
    exact: frozenset[str]


def structure_label(name: str, attributes: dict[str, str]) -> str:
    """What a node is, shapes left out (see the module docstring)."""
    label = attributes.get("label", "")
    if _COLLAPSED_ID.fullmatch(name):  # "t = 1 … 6\n6 more iterations": counts differ
        return re.sub(r"\d+", "#", label)
    return SHAPE.sub("#", label)


def node_keys(graph: DotGraph) -> dict[str, str]:
    """Each node id's identity across runs: its structure label and its inputs' identities,
    recursively, numbered among equal ones in declaration order."""
    inputs = graph.inputs()
    structural: dict[str, str] = {}
    for name in graph.nodes:  # iteratively, inputs first: no recursion on deep graphs
        stack = [(name, False)]
        while stack:
            node, ready = stack.pop()
            if node in structural:
                continue
            if not ready:
                stack.append((node, True))
                stack.extend((head, False) for head in inputs[node] if head not in structural)
                continue
            parts = sorted(structural.get(head, "?") for head in inputs[node])
            text = structure_label(node, graph.nodes[node]) + "\x00" + "\x01".join(parts)
            structural[node] = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    counts: dict[str, int] = {}
    keys: dict[str, str] = {}
    for name in graph.nodes:
        base = structural[name]
        counts[base] = counts.get(base, 0) + 1
        keys[name] = f"{base}#{counts[base]}"
    return keys


def align(first: DotGraph, second: DotGraph) -> Alignment:
    """Pair the nodes two runs have in common (see the module docstring)."""
    second_by_key = {key: name for name, key in node_keys(second).items()}
    pairs = {name: second_by_key[key] for name, key in node_keys(first).items()
             if key in second_by_key}
    exact = frozenset(pairs)
    taken = set(pairs.values())
    labels = {**{("a", n): structure_label(n, a) for n, a in first.nodes.items()},
              **{("b", n): structure_label(n, a) for n, a in second.nodes.items()}}
    inputs_a, inputs_b = first.inputs(), second.inputs()
    consumers_a, consumers_b = first.consumers(), second.consumers()

    def pair_by_label(side_a: list[str], side_b: list[str]) -> list[tuple[str, str]]:
        """Each of ``side_a`` with the first unpaired of ``side_b`` of its label, in order."""
        waiting: dict[str, deque[str]] = {}
        for b in side_b:
            waiting.setdefault(labels["b", b], deque()).append(b)
        found = []
        for a in side_a:
            candidates = waiting.get(labels["a", a])
            if candidates:
                found.append((a, candidates.popleft()))
        return found

    queue: deque[tuple[str, str]] = deque()

    def add(a: str, b: str) -> None:
        pairs[a] = b
        taken.add(b)
        queue.append((a, b))

    sinks_a = [n for n in first.nodes if not consumers_a[n] and n not in pairs]
    sinks_b = [n for n in second.nodes if not consumers_b[n] and n not in taken]
    for a, b in pair_by_label(sinks_a, sinks_b):
        add(a, b)
    walked: set[tuple[str, str]] = set()
    while queue:
        a, b = queue.popleft()
        if (a, b) in walked:
            continue
        walked.add((a, b))
        free_a = [h for h in inputs_a[a] if h not in pairs]
        free_b = [h for h in inputs_b[b] if h not in taken]
        for h, g in pair_by_label(free_a, free_b):
            add(h, g)
        left_a = [h for h in free_a if h not in pairs]
        left_b = [g for g in free_b if g not in taken]
        if len(left_a) == 1 and len(left_b) == 1:  # one op in place of another: walk on
            queue.append((left_a[0], left_b[0]))
    return Alignment(pairs=pairs, exact=exact)
