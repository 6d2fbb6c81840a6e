"""Locally connected 2-d convolution (Chainer's ``F.local_convolution_2d``): a convolution
whose filters are not shared, one per output position.

``x: (N, C, H, W)``, ``W: (out, out_h, out_w, C, kh, kw)``, optional ``b: (out, out_h,
out_w)``, no padding: ``y[n, o, i, j] = sum_c,k,l W[o, i, j, c, k, l] x[n, c, i * sy + k, j *
sx + l] (+ b[o, i, j])``. With the patches as ``(out_h * out_w, N, C * kh * kw)`` and the
filters as ``(out_h * out_w, C * kh * kw, out)`` this is one batched matrix product, and so
are both gradients. A first-order backward computes them on arrays; a double-backprop one
writes them with ``im2col``, ``matmul`` and their adjoints, so they are differentiable again.
As in Chainer, ``x`` and ``W`` may differ in dtype: products are taken in the wider one, the
output is in ``x``'s dtype and each gradient in its variable's.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.array import cast, reshape, transpose
from graphcore.ops.checks import is_float
from graphcore.ops.convolution import input_count
from graphcore.ops.im2col import Im2Col, Im2ColGrad
from graphcore.ops.linalg import matmul
from graphcore.ops.windows import as_tuple, conv_outsize, window_view
from graphcore.registry import register_op


@register_op
class LocalConvolution2DFunction(FunctionNode):
    """``x: (N, C, H, W)`` with unshared filters ``W: (out, out_h, out_w, C, kh, kw)``, optional
    ``b: (out, out_h, out_w)``."""

    __slots__ = ("stride",)
    name = "local_convolution_2d"
    label = "LocalConvolution2DFunction"
    arity = None  # x, W and an optional b
    attributes = {"stride": Attr((int, tuple), 1, low=1, doc="step between windows")}

    def shape_rule(self, inputs):
        if len(inputs) not in (2, 3):
            shapes.fail(self, inputs, f"takes x, W and an optional b, got {len(inputs)} inputs")
        x, W = inputs[0], inputs[1]
        shapes.float_like_first(self, inputs)
        shapes.expect_ndim(self, inputs, x, 4, "x (N, C, H, W)")
        shapes.expect_ndim(self, inputs, W, 6, "W (out, out_h, out_w, C, kh, kw)")
        shapes.expect_dim(self, inputs, x.shape[1], W.shape[3], "x's channels for W")
        if all(isinstance(k, int) for k in W.shape[4:]):
            out = shapes.windows(self, inputs, x.shape[2:], W.shape[4:], self.stride, (0, 0),
                                 (1, 1), False)
            if any(map(shapes.conflict, out, W.shape[1:3])):
                shapes.fail(self, inputs, "W's output positions do not match its windows over x")
        return shapes.TensorType((x.shape[0],) + W.shape[:3], x.dtype),

    def __init__(self, stride=1) -> None:
        self.stride = as_tuple(stride, 2, self.label, "stride", 1)

    def _check(self, x, W, b) -> None:
        is_float(self.label, x)
        is_float(self.label, W, "filter")
        if x.ndim != 4 or W.ndim != 6 or x.shape[1] != W.shape[3]:
            raise errors.ShapeError(
                f"{self.label}: expected x (N, C, H, W) and W (out, out_h, out_w, C, kh, kw) "
                f"with one C, got {x.shape} and {W.shape}")
        out = tuple(conv_outsize(n, k, s, 0) for n, k, s in zip(
            x.shape[2:], W.shape[4:], self.stride, strict=True))
        if out != W.shape[1:3]:
            raise errors.ShapeError(
                f"{self.label}: W {W.shape} has filters for {W.shape[1:3]} output positions, "
                f"but {W.shape[4:]} windows with stride {self.stride} over {x.shape[2:]} "
                f"give {out}")
        if b is not None:
            if b.dtype != x.dtype or b.shape != W.shape[:3]:
                raise errors.ShapeError(
                    f"{self.label}: expected b of shape {W.shape[:3]} and dtype {x.dtype}, "
                    f"got {b.shape} {b.dtype}")

    def _patches(self, x: np.ndarray, ksize) -> np.ndarray:
        """``(out_h * out_w, N, C * kh * kw)``: the window of each output position."""
        n, c = x.shape[:2]
        out = tuple(conv_outsize(size, k, s, 0) for size, k, s in zip(
            x.shape[2:], ksize, self.stride, strict=True))
        view = window_view(x, ksize, self.stride, (1, 1), out, layout="pool")
        return np.ascontiguousarray(view.transpose(2, 3, 0, 1, 4, 5)).reshape(
            out[0] * out[1], n, c * ksize[0] * ksize[1])

    def forward(self, inputs):
        input_count(self.label, inputs)
        x, W = inputs[0], inputs[1]
        b = inputs[2] if len(inputs) == 3 else None
        self._check(x, W, b)
        oc, oh, ow = W.shape[:3]
        cols = self._patches(x, W.shape[4:])
        filters = W.reshape(oc, oh * ow, -1).transpose(1, 2, 0)
        y = np.matmul(cols, filters).transpose(1, 2, 0).reshape(x.shape[0], oc, oh, ow)
        y = y.astype(x.dtype)
        if b is not None:
            y += b
        return y,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        x, W = self.get_retained_inputs()[:2]
        if isinstance(gy, np.ndarray):
            gx, gW = self._backward_arrays(indexes, x, W, gy)
        else:
            gx, gW = self._backward_graph(indexes, x, W, gy)
        gb = g.sum(gy, axis=0) if 2 in indexes else None
        return (gx, gW, gb) if len(self.inputs) == 3 else (gx, gW)

    def _backward_arrays(self, indexes, x, W, gy):
        n, c, h, w = x.shape
        oc, oh, ow, _, kh, kw = W.shape
        rows = gy.reshape(n, oc, oh * ow).transpose(2, 0, 1)  # (P, N, out)
        filters = W.reshape(oc, oh * ow, -1).transpose(1, 2, 0)  # (P, C kh kw, out)
        gx = gW = None
        if 0 in indexes:
            gcols = np.matmul(rows, filters.swapaxes(1, 2)).astype(x.dtype, copy=False)
            gcols = gcols.reshape(oh, ow, n, c * kh * kw).transpose(2, 3, 0, 1)
            gx = Im2ColGrad((h, w), (kh, kw), self.stride).forward((gcols,))[0]
        if 1 in indexes:
            gfilters = np.matmul(self._patches(x, (kh, kw)).swapaxes(1, 2), rows)
            gW = gfilters.transpose(2, 0, 1).reshape(W.shape).astype(W.dtype, copy=False)
        return gx, gW

    def _backward_graph(self, indexes, x, W, gy):
        """The same products as recorded ops (in the wider dtype when ``x`` and ``W``
        differ), so that they can be differentiated again."""
        n, c, h, w = x.shape
        oc, oh, ow, _, kh, kw = W.shape
        wide = np.promote_types(x.dtype, W.dtype)
        rows = transpose(reshape(_as(gy, wide), (n, oc, oh * ow)), (2, 0, 1))
        filters = transpose(reshape(_as(W, wide), (oc, oh * ow, c * kh * kw)), (1, 2, 0))
        gx = gW = None
        if 0 in indexes:
            gcols = matmul(rows, filters, transb=True)  # (P, N, C kh kw)
            gcols = reshape(transpose(gcols, (1, 2, 0)), (n, c * kh * kw, oh, ow))
            gx = _as(Im2ColGrad((h, w), (kh, kw), self.stride).apply((gcols,))[0], x.dtype)
        if 1 in indexes:
            cols = Im2Col((kh, kw), self.stride).apply((_as(x, wide),))[0]
            cols = transpose(reshape(cols, (n, c * kh * kw, oh * ow)), (2, 0, 1))
            gfilters = matmul(cols, rows, transa=True)  # (P, C kh kw, out)
            gW = _as(reshape(transpose(gfilters, (2, 0, 1)), W.shape), W.dtype)
        return gx, gW


def _as(v, dtype):
    return v if v.dtype == dtype else cast(v, dtype)


def local_convolution_2d(x, W, b=None, stride=1):
    """Chainer's ``F.local_convolution_2d``: ``x`` (N, C, H, W), unshared filters ``W`` (out,
    out_h, out_w, C, kh, kw), optional ``b`` (out, out_h, out_w); no padding."""
    inputs = (x, W) if b is None else (x, W, b)
    return LocalConvolution2DFunction(stride).apply(inputs)[0]
