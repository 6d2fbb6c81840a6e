"""``im2col``: the patches of an image as channels (Chainer's ``F.im2col``), and its adjoint.

``im2col(x: (N, C, H, W))`` is ``(N, C * kh * kw, out_h, out_w)``, channel ``(c, i, j)`` (in
that order) holding the tap ``(i, j)`` of each window of channel ``c``. Its gradient is
``im2col_grad`` (the windows added back, ``col2im``), whose gradient is ``im2col`` again, so
derivatives of any order are these two ops.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.checks import is_float
from graphcore.ops.windows import as_tuple, col2im, out_shape, padded, window_view
from graphcore.registry import register_op
from graphcore.variable import Variable

_ATTRS = {
    "ksize": Attr((int, tuple), required=True, low=1, doc="patch size (one per axis or one)"),
    "stride": Attr((int, tuple), 1, low=1, doc="step between patches"),
    "pad": Attr((int, tuple), 0, low=0, doc="zeros added on both sides of each axis"),
    "cover_all": Attr(bool, False, doc="add a last partial patch so every input element is "
                      "covered"),
    "dilate": Attr((int, tuple), 1, low=1, doc="spacing between the taps of a patch"),
}


def _run(node: FunctionNode, gy):
    """``node`` on ``gy``: recorded for a Variable (double backprop), computed directly on an
    array (a first-order backward records nothing)."""
    if isinstance(gy, Variable):
        return node.apply((gy,))
    return node.forward((gy,))


class _Patches(FunctionNode):
    __slots__ = ("ksize", "stride", "pad", "cover_all", "dilate")
    arity = 1

    def __init__(self, ksize, stride=1, pad=0, cover_all: bool = False, dilate=1) -> None:
        self.ksize = as_tuple(ksize, 2, self.label, "ksize", 1)
        self.stride = as_tuple(stride, 2, self.label, "stride", 1)
        self.pad = as_tuple(pad, 2, self.label, "pad", 0)
        self.cover_all = bool(cover_all)
        self.dilate = as_tuple(dilate, 2, self.label, "dilate", 1)

    def _check(self, x: np.ndarray, what: str) -> None:
        is_float(self.label, x)
        if x.ndim != 4:
            raise errors.ShapeError(f"{self.label}: expected {what} of 4 dimensions (NCHW), "
                                    f"got {x.shape}")


@register_op
class Im2Col(_Patches):
    """The ``ksize`` patches of ``x: (N, C, H, W)`` as ``(N, C * kh * kw, out_h, out_w)``."""

    __slots__ = ()
    name = "im2col"
    label = "Im2Col"
    attributes = _ATTRS

    def shape_rule(self, inputs):
        x, = inputs
        shapes.float_like_first(self, inputs)
        shapes.expect_ndim(self, inputs, x, 4, "x (N, C, H, W)")
        out = shapes.windows(self, inputs, x.shape[2:], self.ksize, self.stride, self.pad,
                             self.dilate, self.cover_all)
        c = x.shape[1]
        patch = c * self.ksize[0] * self.ksize[1] if isinstance(c, int) else shapes.UNKNOWN
        return shapes.TensorType((x.shape[0], patch) + out, x.dtype),

    def forward(self, inputs):
        x, = inputs
        self._check(x, "x")
        out = out_shape(self.label, x.shape[2:], self.ksize, self.stride, self.pad,
                        self.dilate, self.cover_all)
        xp = padded(x, self.pad, out, self.ksize, self.stride, self.dilate)
        view = window_view(xp, self.ksize, self.stride, self.dilate, out, layout="pool")
        n, c = x.shape[:2]
        col = np.ascontiguousarray(view.transpose(0, 1, 4, 5, 2, 3))
        return col.reshape(n, c * self.ksize[0] * self.ksize[1], *out),

    def backward(self, indexes, grad_outputs):
        size = tuple(self.inputs[0].shape[2:])
        return _run(Im2ColGrad(size, self.ksize, self.stride, self.pad, self.cover_all,
                               self.dilate), grad_outputs[0])


@register_op
class Im2ColGrad(_Patches):
    """The adjoint of ``im2col``: the patches ``(N, C * kh * kw, out_h, out_w)`` added back
    into an image of spatial size ``size``."""

    __slots__ = ("size",)
    name = "im2col_grad"
    label = "Im2ColGrad"
    attributes = {"size": Attr((int, tuple), required=True, low=1, doc="the image's (H, W)"),
                  **_ATTRS}

    def shape_rule(self, inputs):
        gy, = inputs
        shapes.float_like_first(self, inputs)
        shapes.expect_ndim(self, inputs, gy, 4, "patches (N, C * kh * kw, out_h, out_w)")
        kh, kw = self.ksize
        ckk = gy.shape[1]
        if isinstance(ckk, int) and ckk % (kh * kw):
            shapes.fail(self, inputs, f"expected patches of C * {kh * kw} channels")
        c = ckk // (kh * kw) if isinstance(ckk, int) else shapes.UNKNOWN
        return shapes.TensorType((gy.shape[0], c) + self.size, gy.dtype),

    def __init__(self, size, ksize, stride=1, pad=0, cover_all: bool = False,
                 dilate=1) -> None:
        super().__init__(ksize, stride, pad, cover_all, dilate)
        self.size = as_tuple(size, 2, self.label, "size", 1)

    def forward(self, inputs):
        gy, = inputs
        self._check(gy, "the patches")
        kh, kw = self.ksize
        n, ckk, oh, ow = gy.shape
        out = out_shape(self.label, self.size, self.ksize, self.stride, self.pad, self.dilate,
                        self.cover_all)
        if ckk % (kh * kw) or (oh, ow) != out:
            raise errors.ShapeError(
                f"{self.label}: expected patches of shape (N, C * {kh * kw}, {out[0]}, "
                f"{out[1]}) for an image of size {self.size}, got {gy.shape}")
        col = gy.reshape(n, ckk // (kh * kw), kh, kw, oh, ow).transpose(1, 2, 3, 0, 4, 5)
        return col2im(col, self.size, self.stride, self.pad, self.dilate),

    def backward(self, indexes, grad_outputs):
        return _run(Im2Col(self.ksize, self.stride, self.pad, self.cover_all, self.dilate),
                    grad_outputs[0])


def im2col(x, ksize, stride=1, pad=0, cover_all=False, dilate=1):
    """Chainer's ``F.im2col``: the patches of ``x: (N, C, H, W)`` as channels, ``(N, C * kh *
    kw, out_h, out_w)``."""
    return Im2Col(ksize, stride, pad, cover_all, dilate).apply((x,))[0]
