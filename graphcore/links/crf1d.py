"""``CRF1d``: a linear-chain CRF layer holding the transition costs (Chainer's link); the
functions are in ``graphcore.ops.crf``."""

from __future__ import annotations

import numpy as np

from graphcore import initializers
from graphcore.links.link import Link
from graphcore.ops.array import transpose_sequence
from graphcore.ops.crf import argmax_crf1d, crf1d
from graphcore.variable import Parameter, as_array


def _by_length(xs) -> np.ndarray:
    """Indexes of ``xs`` from the longest sequence to the shortest (stable)."""
    return np.argsort([-len(x) for x in xs], kind="stable")


class CRF1d(Link):
    """``loss = crf(xs, ys)``: ``cost`` is ``(n_label, n_label)``, the score of label ``j``
    after label ``i`` (``initial_cost``: an initializer or array; zeros by default).

    ``xs``/``ys`` are time-major (``transpose_sequence``'s form) unless ``transpose=True``,
    where they are per-example sequences ``(length, n_label)`` / ``(length,)`` in any order.
    """

    def __init__(self, n_label: int, initial_cost=None) -> None:
        super().__init__()
        if initial_cost is None:
            initial_cost = initializers.Zero()
        with self.init_scope():
            self.cost = Parameter(initial_cost, (n_label, n_label))

    def forward(self, xs, ys, reduce: str = "mean", transpose: bool = False):
        if transpose:
            order = _by_length(xs)
            xs = transpose_sequence([xs[i] for i in order])
            ys = transpose_sequence([ys[i] for i in order])
        return crf1d(self.cost, xs, ys, reduce)

    def argmax(self, xs, transpose: bool = False):
        """``(score, path)`` of the best label sequences (see ``argmax_crf1d``); with
        ``transpose=True`` the path is per example, in the order ``xs`` came."""
        if not transpose:
            return argmax_crf1d(self.cost, xs)
        order = _by_length(xs)
        score, path = argmax_crf1d(self.cost, transpose_sequence([xs[i] for i in order]))
        per_example = [as_array(p) for p in transpose_sequence(path)]
        restored = [None] * len(order)
        for position, i in enumerate(order):
            restored[i] = per_example[position]
        return score, restored
