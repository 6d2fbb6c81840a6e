"""Layer normalization (Chainer's ``F.layer_normalization``): normalize each sample over its
last axis, then scale by ``gamma`` and shift by ``beta``.

Chainer's function takes ``(batch, units)`` inputs; here any leading axes are allowed (a
transformer's ``(batch, length, units)``), the statistics always come from the last axis.
"""

from __future__ import annotations

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.checks import is_float
from graphcore.registry import register_op


def layer_norm_statistics(x, eps: float):
    """``(x - mean) * inv_std`` and ``inv_std`` over the last axis, for arrays or Variables."""
    n = x.shape[-1]
    centered = x - g.sum(x, axis=-1, keepdims=True) * (1.0 / n)
    var = g.sum(centered * centered, axis=-1, keepdims=True) * (1.0 / n)
    inv_std = (var + eps) ** -0.5
    return centered * inv_std, inv_std


@register_op
class LayerNormalization(FunctionNode):
    """Normalize over the last axis, then ``* gamma + beta``: inputs x (..., n), gamma (n,),
    beta (n,)."""

    __slots__ = ("eps",)
    name = "layer_normalization"
    label = "LayerNormalization"
    arity = 3
    attributes = {"eps": Attr(float, 1e-5, low=0.0, doc="added to the variance")}

    def shape_rule(self, inputs):
        x, gamma, beta = inputs
        shapes.float_like_first(self, inputs)
        shapes.same_dtype(self, inputs, inputs)
        if x.ndim < 1:
            shapes.fail(self, inputs, "expected x (..., n)")
        for t in (gamma, beta):
            if t.ndim != 1 or shapes.conflict(t.shape[0], x.shape[-1]):
                shapes.fail(self, inputs, "expected x (..., n) with gamma and beta of shape (n,)")
        return x,

    def __init__(self, eps: float = 1e-5) -> None:
        self.eps = eps

    def forward(self, inputs):
        x, gamma, beta = inputs
        is_float(self.label, x)
        if x.ndim < 1 or gamma.shape != (x.shape[-1],) or beta.shape != (x.shape[-1],):
            raise errors.ShapeError(
                f"{self.label}: expected x (..., n) with gamma and beta of shape (n,), got x "
                f"{x.shape}, gamma {gamma.shape}, beta {beta.shape}")
        if gamma.dtype != x.dtype or beta.dtype != x.dtype:
            raise errors.DTypeError(
                f"{self.label}: gamma and beta must have x's dtype {x.dtype}, got "
                f"{gamma.dtype} and {beta.dtype}")
        x_hat, _ = layer_norm_statistics(x, self.eps)
        return (x_hat * gamma + beta).astype(x.dtype, copy=False),

    def backward(self, indexes, grad_outputs):
        x, gamma, beta = self.get_retained_inputs()
        gy, = grad_outputs
        x_hat, inv_std = layer_norm_statistics(x, self.eps)
        gx = ggamma = gbeta = None
        if 0 in indexes:
            n = x.shape[-1]
            g_hat = gy * gamma
            mean_g = g.sum(g_hat, axis=-1, keepdims=True) * (1.0 / n)
            mean_gx = g.sum(g_hat * x_hat, axis=-1, keepdims=True) * (1.0 / n)
            gx = (g_hat - mean_g - x_hat * mean_gx) * inv_std
        if 1 in indexes:
            ggamma = g.sum_to(gy * x_hat, gamma.shape)
        if 2 in indexes:
            gbeta = g.sum_to(gy, beta.shape)
        return gx, ggamma, gbeta


def layer_normalization(x, gamma, beta, eps: float = 1e-5):
    """Chainer's ``F.layer_normalization(x, gamma, beta, eps=1e-5)`` over the last axis."""
    return LayerNormalization(eps).apply((x, gamma, beta))[0]

