"""Shift (Chainer's ``F.shift``; Wu et al., "Shift: A Zero FLOP, Zero Parameter Alternative to
Spatial Convolutions", 2017): groups of channels moved by one offset each, zeros shifted in.

``x: (N, C, H, W)`` is cut into ``kh * kw`` groups of ``C // (kh * kw)`` channels (the last
group also takes the remainder). Group ``g`` moves by ``(g // kw - kh // 2, g % kw - kw // 2)``
times ``dilate``, except that the centre offset (no move) goes to the last group and the
centre group gets the last offset, so the remainder channels stay where they are. The
gradient moves the other way: a shift with ``-dilate``.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.checks import is_float
from graphcore.ops.windows import as_tuple
from graphcore.registry import register_op
from graphcore.variable import Variable


@register_op
class Shift(FunctionNode):
    """Channel groups of ``x: (N, C, H, W)`` shifted over a ``ksize`` neighbourhood."""

    __slots__ = ("ksize", "dilate")
    name = "shift"
    label = "Shift"
    arity = 1
    attributes = {
        "ksize": Attr((int, tuple), 3, low=1,
                      doc="neighbourhood of offsets (odd sizes; one per axis or one)"),
        "dilate": Attr((int, tuple), 1,
                       doc="spacing between offsets (nonzero; negative: the opposite way)"),
    }

    def shape_rule(self, inputs):
        x, = inputs
        kh, kw = self.ksize
        shapes.float_like_first(self, inputs)
        if x.ndim != 4 or (isinstance(x.shape[1], int) and x.shape[1] < kh * kw):
            shapes.fail(self, inputs, f"expected x (N, C, H, W) with at least {kh * kw} "
                                      "channels (one per offset)")
        return x,

    def __init__(self, ksize=3, dilate=1) -> None:
        self.ksize = as_tuple(ksize, 2, self.label, "ksize", 1)
        self.dilate = as_tuple(dilate, 2, self.label, "dilate", -(2 ** 62))
        if any(k % 2 != 1 for k in self.ksize):
            raise ValueError(f"{self.label}: ksize must be odd, got {ksize!r}")
        if 0 in self.dilate:
            raise ValueError(f"{self.label}: dilate must not be zero, got {dilate!r}")

    def _offsets(self, channels: int):
        """``(first channel, end channel, dy, dx)`` of each group."""
        kh, kw = self.ksize
        groups = kh * kw
        size = channels // groups
        centre = (groups - 1) // 2
        for i in range(groups):
            g = groups - 1 if i == centre else centre if i == groups - 1 else i
            end = (i + 1) * size if i < groups - 1 else channels
            yield (i * size, end, (g // kw - kh // 2) * self.dilate[0],
                   (g % kw - kw // 2) * self.dilate[1])

    def forward(self, inputs):
        x, = inputs
        is_float(self.label, x)
        kh, kw = self.ksize
        if x.ndim != 4 or x.shape[1] < kh * kw:
            raise errors.ShapeError(f"{self.label}: expected x (N, C, H, W) with at least "
                                    f"{kh * kw} channels (one per offset), got {x.shape}")
        h, w = x.shape[2:]
        y = np.zeros(x.shape, x.dtype)
        for start, end, dy, dx in self._offsets(x.shape[1]):
            # y[..., r, c] = x[..., r - dy, c - dx] where that is inside x
            if abs(dy) >= h or abs(dx) >= w:
                continue  # moved out entirely: zeros
            y[:, start:end, max(dy, 0):h + min(dy, 0), max(dx, 0):w + min(dx, 0)] = \
                x[:, start:end, max(-dy, 0):h - max(dy, 0), max(-dx, 0):w - max(dx, 0)]
        return y,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        back = Shift(self.ksize, (-self.dilate[0], -self.dilate[1]))
        if isinstance(gy, Variable):
            return back.apply((gy,))
        return back.forward((gy,))


def shift(x, ksize=3, dilate=1):
    """Chainer's ``F.shift``: channel groups of ``x`` (N, C, H, W) shifted, one offset of the
    ``ksize`` neighbourhood (taps ``dilate`` apart) per group; the output has ``x``'s shape."""
    return Shift(ksize, dilate).apply((x,))[0]
