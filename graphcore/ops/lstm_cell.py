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
from graphcore.function_node import FunctionNode, _double
from graphcore.ops._checks import is_float
from graphcore.registry import register_op


def _activate(gates: np.ndarray) -> np.ndarray:
    """In place on (B, n, 4, ...) pre-activations: tanh for a, sigmoid for i, f, o."""
    np.tanh(gates[:, :, 0], out=gates[:, :, 0])
    s = gates[:, :, 1:]
    s *= 0.5
    np.tanh(s, out=s)
    s *= 0.5
    s += 0.5
    return gates


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
        act = _activate(x.reshape((x.shape[0], n, 4) + x.shape[2:]).copy())
        c = act[:, :, 0] * act[:, :, 1]
        c += act[:, :, 2] * c_prev
        tanh_c = np.tanh(c)
        h = act[:, :, 3] * tanh_c
        self._saved = (act, tanh_c)
        return c, h

    def backward(self, indexes, grad_outputs):
        c_prev, x = self.get_retained_inputs()
        gc, gh = grad_outputs
        if _double[0]:  # recompute from the recorded x, so these gradients are differentiable
            shape = (x.shape[0], x.shape[1] // 4, 4) + x.shape[2:]
            gates = g.reshape(x, shape)
            a = g.tanh(gates[:, :, 0])
            i, f, o = (g.sigmoid(gates[:, :, k]) for k in (1, 2, 3))
            tanh_c = g.tanh(self.get_retained_outputs()[0])
        else:
            act, tanh_c = self._saved
            a, i, f, o = (act[:, :, k] for k in range(4))
        gc_total = gc + gh * o * (1 - tanh_c * tanh_c)
        gc_prev = gc_total * f if 0 in indexes else None
        gx = None
        if 1 in indexes:
            parts = [gc_total * i * (1 - a * a), gc_total * a * i * (1 - i),
                     gc_total * c_prev * f * (1 - f), gh * tanh_c * o * (1 - o)]
            gx = g.reshape(g.stack(parts, axis=2), x.shape)
        return gc_prev, gx


def lstm(c_prev, x):
    """Chainer's ``F.lstm``: returns ``(c, h)``."""
    return LSTM().apply((c_prev, x))
