"""Unpooling of ``(N, C, *spatial)`` arrays over any number of spatial axes, and its adjoint.

``unpooling_nd`` (Chainer's ``F.unpooling_nd``, ``unpooling_1d/2d/3d``) spreads each input
element over its window of the output: the output is the sum, at each position, of the
elements whose windows cover it (the transpose of summing every window, as Chainer's
``col2im`` of the tiled input). ``SumPoolingND`` sums each window; the two ops are each
other's gradient, so any order of backprop stays in registered ops.

``upsampling_2d`` (Chainer's ``F.upsampling_2d``) puts each element at the position that
``max_pooling_2d(..., return_indices=True)`` found for it, zeros elsewhere.
"""

from __future__ import annotations

import math

import numpy as np

from graphcore import errors, shapes
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.array import reshape
from graphcore.ops.checks import is_float
from graphcore.ops.indexing import get_item, scatter_into
from graphcore.ops.windows import as_tuple, col2im, padded, window_view
from graphcore.registry import register_op
from graphcore.utils.conv import get_conv_outsize as conv_outsize
from graphcore.utils.conv import get_deconv_outsize as deconv_outsize

_WINDOW_ATTRS = {
    "ksize": Attr((int, tuple), required=True, low=1, doc="window size (one per axis or one)"),
    "stride": Attr((int, tuple, type(None)), None, low=1,
                   doc="step between windows (null: the window size)"),
    "pad": Attr((int, tuple), 0, low=0, doc="padding on both sides of each axis"),
}


def _windows_of(label: str, x: np.ndarray, ksize, stride, pad):
    """``ksize``, ``stride`` (``ksize`` when None) and ``pad`` as tuples of ``x``'s spatial
    rank."""
    is_float(label, x)
    nd = x.ndim - 2
    if nd < 1:
        raise errors.ShapeError(f"{label}: expected x (N, C, *spatial) with at least one "
                                f"spatial axis, got {x.shape}")
    k = as_tuple(ksize, nd, label, "ksize", 1)
    s = k if stride is None else as_tuple(stride, nd, label, "stride", 1)
    return k, s, as_tuple(pad, nd, label, "pad", 0)


def _window_tuples(op, inputs, ksize, stride, pad):
    """``_windows_of`` for a shape rule: the window's tuples of ``inputs[0]``'s spatial rank."""
    x = shapes.float_like_first(op, inputs)[0]
    nd = x.ndim - 2
    if nd < 1:
        shapes.fail(op, inputs, "expected x (N, C, *spatial) with at least one spatial axis")
    k = as_tuple(ksize, nd, op.label, "ksize", 1)
    s = k if stride is None else as_tuple(stride, nd, op.label, "stride", 1)
    return k, s, as_tuple(pad, nd, op.label, "pad", 0)


def _window_sums(x: np.ndarray, k, s, p, out) -> np.ndarray:
    """The sum of each (zero padded) window of ``x``, ``(N, C, *out)``."""
    nd = len(k)
    ones = (1,) * nd
    view = window_view(padded(x, p, out, k, s, ones), k, s, ones, out, layout="pool")
    return view.sum(axis=tuple(range(-nd, 0)), dtype=x.dtype)


def _spread(x: np.ndarray, k, s, p, outsize) -> np.ndarray:
    """Each element of ``x`` added over its window of an ``(N, C, *outsize)`` output."""
    nd = len(k)
    xc = x.swapaxes(0, 1)
    col = np.broadcast_to(xc.reshape(xc.shape[:1] + (1,) * nd + xc.shape[1:]),
                          xc.shape[:1] + tuple(k) + xc.shape[1:])
    return col2im(col, outsize, s, p, (1,) * nd)


@register_op
class UnpoolingND(FunctionNode):
    """Spread each element of ``x: (N, C, *in)`` over its window of ``(N, C, *outsize)``."""

    __slots__ = ("ksize", "stride", "pad", "outsize", "cover_all", "_saved")
    name = "unpooling_nd"
    label = "UnpoolingND"
    arity = 1
    attributes = {
        **_WINDOW_ATTRS,
        "outsize": Attr((tuple, type(None)), None,
                        doc="the output's spatial size (null: the largest one whose pooling "
                        "gives the input's size)"),
        "cover_all": Attr(bool, True, doc="the input was pooled with a last partial window"),
    }

    def shape_rule(self, inputs):
        x, = inputs
        k, s, p = _window_tuples(self, inputs, self.ksize, self.stride, self.pad)
        if self.outsize is not None:
            out = as_tuple(self.outsize, len(k), self.label, "outsize", 0)
        else:
            out = tuple(deconv_outsize(n, kk, ss, pp, self.cover_all) if isinstance(n, int)
                        else shapes.UNKNOWN
                        for n, kk, ss, pp in zip(x.shape[2:], k, s, p, strict=True))
        return shapes.TensorType(x.shape[:2] + tuple(out), x.dtype),

    def __init__(self, ksize, stride=None, pad=0, outsize=None, cover_all: bool = True) -> None:
        self.ksize, self.stride, self.pad = ksize, stride, pad
        self.outsize = None if outsize is None else tuple(int(n) for n in outsize)
        self.cover_all = bool(cover_all)

    def forward(self, inputs):
        x, = inputs
        k, s, p = _windows_of(self.label, x, self.ksize, self.stride, self.pad)
        insize = x.shape[2:]
        if self.outsize is None:
            outsize = tuple(deconv_outsize(n, kk, ss, pp, self.cover_all)
                            for n, kk, ss, pp in zip(insize, k, s, p, strict=True))
        else:
            outsize = as_tuple(self.outsize, len(k), self.label, "outsize", 0)
        pooled = tuple(conv_outsize(n, kk, ss, pp, self.cover_all)
                       for n, kk, ss, pp in zip(outsize, k, s, p, strict=True))
        if pooled != insize or any(n < 0 for n in outsize):
            raise errors.ShapeError(
                f"{self.label}: an output of spatial size {outsize} pooled with ksize {k}, "
                f"stride {s}, pad {p}, cover_all={self.cover_all} has size {pooled}, not the "
                f"input's {insize}")
        self._saved = (k, s, p, insize)
        return _spread(x, k, s, p, outsize),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        k, s, p, insize = self._saved
        if isinstance(gy, np.ndarray):
            return _window_sums(gy, k, s, p, insize),
        return SumPoolingND(k, s, p, self.cover_all).apply((gy,))[0],


@register_op
class SumPoolingND(FunctionNode):
    """The sum of each (zero padded) window of ``x: (N, C, *spatial)``; ``cover_all`` adds a
    last partial window (``unpooling_nd``'s gradient)."""

    __slots__ = ("ksize", "stride", "pad", "cover_all", "_saved")
    name = "sum_pooling_nd"
    label = "SumPoolingND"
    arity = 1
    attributes = {**_WINDOW_ATTRS,
                  "cover_all": Attr(bool, False, doc="add a last partial window")}

    def shape_rule(self, inputs):
        x, = inputs
        k, s, p = _window_tuples(self, inputs, self.ksize, self.stride, self.pad)
        out = shapes.windows(self, inputs, x.shape[2:], k, s, p, (1,) * len(k), self.cover_all)
        return shapes.TensorType(x.shape[:2] + out, x.dtype),

    def __init__(self, ksize, stride=None, pad=0, cover_all: bool = False) -> None:
        self.ksize, self.stride, self.pad = ksize, stride, pad
        self.cover_all = bool(cover_all)

    def forward(self, inputs):
        x, = inputs
        k, s, p = _windows_of(self.label, x, self.ksize, self.stride, self.pad)
        out = tuple(conv_outsize(n, kk, ss, pp, self.cover_all)
                    for n, kk, ss, pp in zip(x.shape[2:], k, s, p, strict=True))
        if any(o <= 0 for o in out):
            raise errors.ShapeError(f"{self.label}: the window {k} (pad {p}) does not fit the "
                                    f"input's spatial size {x.shape[2:]}")
        self._saved = (k, s, p, x.shape[2:])
        return _window_sums(x, k, s, p, out),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        k, s, p, insize = self._saved
        if isinstance(gy, np.ndarray):
            return _spread(gy, k, s, p, insize),
        return UnpoolingND(k, s, p, insize, self.cover_all).apply((gy,))[0],


def unpooling_nd(x, ksize, stride=None, pad=0, outsize=None, cover_all=True):
    """Chainer's ``F.unpooling_nd``: the inverse of pooling in shape, each element of ``x``
    added over its ``ksize`` window (``stride`` defaults to ``ksize``); ``outsize`` defaults to
    the largest spatial size that pooling maps to ``x``'s."""
    return UnpoolingND(ksize, stride, pad, outsize, cover_all).apply((x,))[0]


def _unpooling_of_rank(nd: int, name: str):
    def unpool(x, ksize, stride=None, pad=0, outsize=None, cover_all=True):
        if len(x.shape[2:]) != nd:
            raise ValueError(f"{name}: expected x (N, C) and {nd} spatial axes, got {x.shape}")
        return unpooling_nd(x, ksize, stride, pad, outsize, cover_all)
    unpool.__name__ = unpool.__qualname__ = name
    unpool.__doc__ = f"``unpooling_nd`` of an input with {nd} spatial axes (Chainer's)."
    return unpool


unpooling_1d = _unpooling_of_rank(1, "unpooling_1d")
unpooling_2d = _unpooling_of_rank(2, "unpooling_2d")
unpooling_3d = _unpooling_of_rank(3, "unpooling_3d")


def upsampling_2d(x, indexes, ksize, stride=None, pad=0, outsize=None, cover_all=True):
    """Chainer's ``F.upsampling_2d``: each element of ``x: (N, C, h, w)`` placed where
    ``indexes`` (``max_pooling_2d(..., return_indices=True)``'s: the offset ``kx + kw * ky``
    in its window) says its maximum was, in an ``(N, C, *outsize)`` output of zeros
    (``outsize`` defaults as in ``unpooling_2d``; overlapping windows add up)."""
    label = "Upsampling2D"
    xa = np.asarray(getattr(x, "array", x))
    if xa.ndim != 4:
        raise errors.ShapeError(f"{label}: expected x (N, C, H, W), got {xa.shape}")
    k, s, p = _windows_of(label, xa, ksize, stride, pad)
    indexes = np.asarray(indexes)
    if indexes.shape != xa.shape or indexes.dtype.kind not in "iu":
        raise errors.ShapeError(f"{label}: indexes must be integers of x's shape {xa.shape}, "
                                f"got {indexes.dtype} {indexes.shape}")
    if indexes.size and (indexes.min() < 0 or indexes.max() >= math.prod(k)):
        raise errors.ArgumentValueError(f"{label}: indexes must lie in [0, {math.prod(k)}) "
                                        "(offsets in a window)")
    insize = xa.shape[2:]
    if outsize is None:
        outsize = tuple(deconv_outsize(n, kk, ss, pp, cover_all)
                        for n, kk, ss, pp in zip(insize, k, s, p, strict=True))
    outsize = as_tuple(tuple(outsize), 2, label, "outsize", 1)
    # the padded output holds every window whole; the crop drops what fell on the padding
    extent = tuple(max(pp + o, ss * (n - 1) + kk)
                   for o, n, kk, ss, pp in zip(outsize, insize, k, s, p, strict=True))
    offsets = np.unravel_index(indexes, k)
    n, c = xa.shape[:2]
    flat = np.arange(n * c).reshape(n, c, 1, 1) * math.prod(extent)
    for axis in range(2):
        starts = (np.arange(insize[axis]) * s[axis]).reshape((-1,) + (1,) * (1 - axis))
        flat = flat + (offsets[axis] + starts) * math.prod(extent[axis + 1:])
    y = scatter_into(reshape(x, (-1,)), flat.reshape(-1), (n * c * math.prod(extent),))
    y = reshape(y, (n, c) + extent)
    return get_item(y, (slice(None), slice(None)) + tuple(
        slice(pp, pp + o) for pp, o in zip(p, outsize, strict=True)))
