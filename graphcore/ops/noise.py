"""Dropout: zero a random ``ratio`` of elements in training, scale the rest by 1/(1-ratio).

Randomness comes from numpy's global generator (``np.random.seed`` makes runs repeatable, as
in Chainer). The op is impure, so static-mode passes never merge or fold it.
"""

from __future__ import annotations

import numpy as np

from graphcore.config import config
from graphcore.function_node import Attr, FunctionNode
from graphcore.registry import register_op
from graphcore.variable import as_variable


@register_op
class Dropout(FunctionNode):
    """Randomly zero elements with probability ``ratio`` (training only)."""

    __slots__ = ("ratio",)
    name = "dropout"
    label = "Dropout"
    arity = 1
    pure = False
    elementwise = True
    attributes = {"ratio": Attr(float, 0.5, doc="probability of dropping", low=0.0, high=1.0)}

    def __init__(self, ratio: float = 0.5, mask: np.ndarray | None = None) -> None:
        if not 0.0 <= ratio < 1.0:
            raise ValueError(f"Dropout: ratio must be in [0, 1), got {ratio}")
        self.ratio = ratio
        self._saved = mask

    def forward(self, inputs):
        x, = inputs
        mask = self._saved
        if mask is None:
            keep = np.random.random_sample(x.shape) >= self.ratio
            mask = keep.astype(x.dtype) * (1.0 / (1.0 - self.ratio))
            self._saved = mask
        return x * mask,

    def backward(self, indexes, grad_outputs):
        mask = self._saved
        if mask is None:
            self.get_retained_outputs()  # explains that backward data was freed
        return grad_outputs[0] * mask,


def dropout(x, ratio: float = 0.5, mask: np.ndarray | None = None):
    """Dropout in training mode; the identity (no node) when ``config.train`` is False.

    Pass ``mask`` (already scaled) to reuse a fixed pattern, as gradient checks do.
    """
    if not config.train:
        return as_variable(x)
    return Dropout(ratio, mask).apply((x,))[0]
