"""Plan steps that check a replay still follows the traced path.

A ``guard`` re-evaluates a live predicate and stops the replay (``GuardMiss``) when its
outcome differs from the traced one. A ``partition`` (a batched ``if`` whose examples took
both branches when traced, ``spec.batch_split``) evaluates the predicate for every example
and writes the rows' order (the ``then`` examples first) into its buffer, read by the gathers
that feed each branch; the branches' buffers were sized for the traced split, so a replay
whose split has another size stops with ``GuardMiss`` as well.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphcore.static.ir import Graph, Node


class GuardMiss(Exception):
    """A guard saw a different outcome than the one traced: this plan does not apply."""

    def __init__(self, at: str, predicate: str, expected: Any, found: Any = None) -> None:
        if found is None:
            found = not expected
        super().__init__(f"{at}: '{predicate}' was {found} (traced: {expected})")
        self.at = at
        self.predicate = predicate
        self.expected = expected
        self.found = found


def guard_step(node: Node, graph: Graph, values: dict[int, Any]):
    predicate = node.attrs["predicate"]
    expected = bool(node.attrs["expect"])
    names = node.attrs["names"]  # value names the predicate reads, in input order
    env_static = dict(node.attrs.get("env", {}))
    arrays = [values[i] for i in node.inputs]
    at = node.attrs.get("at", "?")

    def run() -> None:
        env = dict(env_static)
        env.update(zip(names, arrays, strict=True))
        if predicate.evaluate_bool(env) != expected:
            raise GuardMiss(at, str(predicate), expected)

    return run


def partition_step(ins: list[np.ndarray], out: np.ndarray, partition):
    """``partition`` (a ``batch_split.RowPartition``): its outcomes on ``ins``, as the rows'
    order into ``out``, when as many examples take ``then`` as when traced."""
    expected = partition.then_rows

    def run() -> None:
        outcome = partition.outcomes(ins)
        found = int(np.count_nonzero(outcome))
        if found != expected:
            raise GuardMiss(partition.at, str(partition.predicate),
                            f"{expected} examples then", f"{found} examples then")
        # a stable sort of "takes else": the then rows first, each side in example order
        out[...] = np.argsort(~outcome, kind="stable")

    return run
