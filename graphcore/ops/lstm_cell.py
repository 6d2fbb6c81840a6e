"""Chainer's LSTM activation ``F.lstm(c_prev, x) -> (c, h)`` as one op.

One node instead of the dozen a composite records (reshape, split, three sigmoids, two tanh,
products, a sum): the activated gates are kept for backward, so a first-order backward is a
few elementwise passes. The backward is written with ``graphcore.generic``, so under double
backprop it recomputes the gates from the recorded input and stays differentiable.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore import generic as g
from graphcore.config import config
from graphcore.function_node import FunctionNode
from graphcore.ops.checks import is_float
from graphcore.registry import register_op


def _activate(x: np.ndarray, n: int) -> np.ndarray:
    """The activated gates, (B, n, 4, ...): sigmoid of every pre-activation, computed on the
    contiguous array (a strided pass per gate costs ~10x more), then tanh for the a gates."""
    act = x * 0.5
    np.tanh(act, out=act)
    act *= 0.5
    act += 0.5
    act = act.reshape((x.shape[0], n, 4) + x.shape[2:])
    np.tanh(x.reshape(act.shape)[:, :, 0], out=act[:, :, 0])
    return act


@register_op
class LSTM(FunctionNode):
    """``x`` holds the gate pre-activations (a, i, f, o) interleaved per unit along axis 1
    (``(B, 4n, ...)``); ``c = tanh(a) sig(i) + sig(f) c_prev``, ``h = sig(o) tanh(c)``."""

    __slots__ = ()
    name = "lstm"
    label = "LSTM"
    arity = 2
    _out_keep = (0,)

    def forward(self, inputs):
        c_prev, x = inputs
        is_float(self.label, x)
        n = x.shape[1] // 4 if x.ndim >= 2 else 0
        if (x.ndim < 2 or x.shape[1] != 4 * n or c_prev.shape != (x.shape[0], n) + x.shape[2:]
                or c_prev.dtype != x.dtype):
            raise errors.ShapeError(
                f"{self.label}: expected x (B, 4n, ...) and c_prev (B, n, ...) of x's dtype, got "
                f"x {x.shape} {x.dtype}, c_prev {c_prev.shape} {c_prev.dtype}")
        act = _activate(x, n)
        c = act[:, :, 0] * act[:, :, 1]
        c += act[:, :, 2] * c_prev
        tanh_c = np.tanh(c)
        h = act[:, :, 3] * tanh_c
        self._saved = (act, tanh_c)
        return c, h

    def backward(self, indexes, grad_outputs):
        c_prev, x = self.get_retained_inputs()
        gc, gh = grad_outputs
        if not config.double_backprop and type(gc) is np.ndarray and type(gh) is np.ndarray:
            return self._backward_arrays(indexes, c_prev, x.shape, gc, gh)
        # double backprop: recompute from the recorded x, so these gradients are differentiable
        gates = g.reshape(x, (x.shape[0], x.shape[1] // 4, 4) + x.shape[2:])
        a = g.tanh(gates[:, :, 0])
        i, f, o = (g.sigmoid(gates[:, :, k]) for k in (1, 2, 3))
        tanh_c = g.tanh(self.get_retained_outputs()[0])
        gc_total = gc + gh * o * (1 - tanh_c * tanh_c)
        gc_prev = gc_total * f if 0 in indexes else None
        gx = None
        if 1 in indexes:
            parts = [gc_total * i * (1 - a * a), gc_total * a * i * (1 - i),
                     gc_total * c_prev * f * (1 - f), gh * tanh_c * o * (1 - o)]
            gx = g.reshape(g.stack(parts, axis=2), x.shape)
        return gc_prev, gx

    def _backward_arrays(self, indexes, c_prev, x_shape, gc, gh):
        """First order, on the gates kept by forward; the per-gate factors are multiplied by
        the activations' derivatives in one contiguous pass."""
        act, tanh_c = self._saved
        a, i, f, o = (act[:, :, k] for k in range(4))
        gc_total = 1 - tanh_c * tanh_c
        gc_total *= o
        gc_total *= gh
        gc_total += gc
        gx = None
        if 1 in indexes:
            gx = np.empty_like(act)
            np.multiply(gc_total, i, out=gx[:, :, 0])
            np.multiply(gc_total, a, out=gx[:, :, 1])
            np.multiply(gc_total, c_prev, out=gx[:, :, 2])
            np.multiply(gh, tanh_c, out=gx[:, :, 3])
            slope = 1 - act
            slope *= act  # sigmoid' = s (1 - s); the a gates: tanh' = 1 - a^2, below
            np.multiply(a, a, out=slope[:, :, 0])
            np.subtract(1, slope[:, :, 0], out=slope[:, :, 0])
            gx *= slope
            gx = gx.reshape(x_shape)
        return (gc_total * f if 0 in indexes else None), gx


def lstm(c_prev, x):
    """Chainer's ``F.lstm``: ``x`` holds the 4 gate pre-activations (a, i, f, o) along axis 1,
    interleaved per unit; returns ``(c, h)``."""
    return LSTM().apply((c_prev, x))
