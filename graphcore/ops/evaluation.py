"""``accuracy``: the fraction of examples whose highest score is the label. No gradient."""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore.config import no_backprop_mode
from graphcore.function_node import Attr, FunctionNode
from graphcore.registry import register_op


@register_op
class Accuracy(FunctionNode):
    """Fraction of ``argmax(y, axis=1) == t``; labels equal to ``ignore_label`` do not count.

    ``y``: ``(N, C, ...)`` scores, ``t``: ``(N, ...)`` integer labels. An evaluation, not a
    loss: its output never has a gradient (it is recorded as no graph node).
    """

    __slots__ = ("ignore_label",)
    name = "accuracy"
    label = "Accuracy"
    arity = 2
    higher_order = False
    differentiable = False
    attributes = {"ignore_label": Attr((int, type(None)), None,
                                       doc="label value that is not counted")}

    def __init__(self, ignore_label: int | None = None) -> None:
        self.ignore_label = ignore_label

    def apply(self, inputs):
        with no_backprop_mode():
            return super().apply(inputs)

    def forward(self, inputs):
        y, t = inputs
        if t.dtype.kind not in "iu":
            raise errors.DTypeError(f"{self.label}: labels must be integers, got {t.dtype}")
        if y.ndim < 2 or t.shape != y.shape[:1] + y.shape[2:]:
            raise errors.ShapeError(f"{self.label}: expected labels of shape "
                                    f"{y.shape[:1] + y.shape[2:]} for scores {y.shape}, got "
                                    f"{t.shape}")
        dtype = y.dtype if y.dtype.kind == "f" else np.float32
        pred = y.argmax(axis=1)
        if self.ignore_label is None:
            return np.asarray((pred == t).mean(), dtype),
        counted = t != self.ignore_label
        total = int(counted.sum())
        correct = int(((pred == t) & counted).sum())
        return np.asarray(correct / total if total else 0.0, dtype),

    def backward(self, indexes, grad_outputs):
        raise errors.GraphError("accuracy has no gradient")


def accuracy(y, t, ignore_label=None):
    """Chainer's ``F.accuracy``: a 0-d Variable, never part of a graph."""
    return Accuracy(ignore_label).apply((y, t))[0]
