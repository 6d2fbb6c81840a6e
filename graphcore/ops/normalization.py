"""``local_response_normalization``: AlexNet's normalization across neighbouring channels."""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.checks import is_float
from graphcore.registry import register_op


def _channel_window_sum(a: np.ndarray, n: int) -> np.ndarray:
    """For each channel (axis 1), the sum of ``a`` over the ``n // 2`` channels on each side
    and itself (a window of ``n`` channels for odd ``n``, cut at the ends)."""
    total = a.copy()
    for i in range(1, n // 2 + 1):
        total[:, i:] += a[:, :-i]
        total[:, :-i] += a[:, i:]
    return total


@register_op
class LocalResponseNormalization(FunctionNode):
    """``x / (k + alpha * sum of x**2 over n neighbouring channels) ** beta``.

    Like Chainer's, its gradient is not differentiable again (first order only).
    """

    __slots__ = ("n", "k", "alpha", "beta")
    name = "local_response_normalization"
    label = "LocalResponseNormalization"
    arity = 1
    higher_order = False
    attributes = {"n": Attr(int, 5, low=1, doc="channels in the window"),
                  "k": Attr(float, 2.0, doc="added to the scaled sum"),
                  "alpha": Attr(float, 1e-4, doc="scale of the sum of squares"),
                  "beta": Attr(float, 0.75, doc="exponent of the normalizer")}

    def shape_rule(self, inputs):
        if inputs[0].ndim < 2:
            shapes.fail(self, inputs, "expected x with a channel axis (N, C, ...)")
        return shapes.float_like_first(self, inputs)

    def __init__(self, n: int = 5, k: float = 2.0, alpha: float = 1e-4,
                 beta: float = 0.75) -> None:
        self.n, self.k, self.alpha, self.beta = n, k, alpha, beta

    def forward(self, inputs):
        x, = inputs
        is_float(self.label, x)
        if x.ndim < 2:
            raise errors.ShapeError(f"{self.label}: expected x with a channel axis (N, C, ...), "
                                    f"got {x.shape}")
        unit = self.k + self.alpha * _channel_window_sum(np.square(x), self.n)
        scale = unit ** -self.beta
        y = (x * scale).astype(x.dtype, copy=False)
        self._saved = (unit, scale, y)
        return y,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        if not isinstance(gy, np.ndarray):
            raise errors.GraphError("local_response_normalization: its gradient is not "
                                    "differentiable (second order is not supported, as in "
                                    "Chainer)")
        unit, scale, y = self._saved
        x = self.inputs[0]._array
        summed = _channel_window_sum(y * gy / unit, self.n)
        return (gy * scale - (2 * self.alpha * self.beta) * x * summed).astype(gy.dtype),


def local_response_normalization(x, n=5, k=2, alpha=1e-4, beta=0.75):
    """Chainer's ``F.local_response_normalization`` across channels (axis 1)."""
    return LocalResponseNormalization(n, float(k), float(alpha), float(beta)).apply((x,))[0]
