"""Convolutions over ``(N, C, *spatial)`` arrays: ``convolution_2d`` and ``convolution_1d``
(NCHW and NCW), ``convolution_nd`` (any number of spatial axes, given as ``ndim``), their
transposes ``deconvolution_*`` and the filter gradients ``convolution_*_grad_w``, with stride,
padding, dilation and groups. ``convolution_nd`` / ``deconvolution_nd`` (the functions) use
the 1-d and 2-d ops for one and two spatial axes.

Forward is ``im2col`` (one strided copy) and one GEMM; the filter gradient is one GEMM with
the same columns; the input gradient is the transposed convolution (a GEMM and ``col2im``).
As in Chainer, each backward is written with these three ops, so the gradient of a gradient
is again a convolution and double backprop works to any order. As in Chainer, the input and
the filter may differ in dtype: the output is in the input's dtype, each gradient in its
variable's.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.array import cast, reshape, transpose
from graphcore.ops.checks import is_float, same_dtype
from graphcore.ops.windows import as_tuple, col2im, im2col, out_shape
from graphcore.registry import register_op
from graphcore.utils.conv import get_conv_outsize as conv_outsize
from graphcore.utils.conv import get_deconv_outsize as deconv_outsize
from graphcore.variable import Variable

_INTS = (int, tuple)


def _conv_attrs(cover_all: bool) -> dict[str, Attr]:
    attrs = {"stride": Attr(_INTS, 1, low=1, doc="step between windows (one per axis or one)"),
             "pad": Attr(_INTS, 0, low=0, doc="zeros added on both sides of each axis"),
             "dilate": Attr(_INTS, 1, low=1, doc="spacing between filter taps"),
             "groups": Attr(int, 1, low=1, doc="channel groups convolved separately")}
    if cover_all:
        attrs["cover_all"] = Attr(bool, False, doc="add a last partial window so every input "
                                  "element is covered")
    return attrs


def _apply(node: FunctionNode, *inputs):
    """``node`` on ``inputs``: recorded when they are Variables (a double-backprop walk),
    computed directly on arrays otherwise (a first-order walk records nothing)."""
    if any(isinstance(x, Variable) for x in inputs):
        return node.apply(inputs)[0]
    return node.forward(inputs)[0]


class NoOutputError(errors.ShapeError, AssertionError):
    """A transposed convolution whose computed output size is not positive (Chainer asserts
    there, so this is an ``AssertionError`` too)."""


def _in_dtype(a, dtype):
    """``a`` (an array or a Variable) in ``dtype``: a filter's gradient is computed in its
    input's dtype and returned in the filter's, as Chainer does for mixed dtypes."""
    if a.dtype == dtype:
        return a
    if isinstance(a, Variable):
        return cast(a, dtype)
    return a.astype(dtype)


def _covers_all(spatial, out, ksize, stride, pad, dilate) -> bool:
    """Whether ``out`` windows over ``spatial`` need Chainer's ``cover_all`` (a partial one)."""
    return any(conv_outsize(n, k, s, p, False, d) != o
               for n, o, k, s, p, d in zip(spatial, out, ksize, stride, pad, dilate,
                                           strict=True))


# --- array kernels (also used by static mode) ----------------------------------------------

def conv_forward(x: np.ndarray, W: np.ndarray, b: np.ndarray | None, stride, pad, dilate,
                 groups: int, out) -> tuple[np.ndarray, np.ndarray]:
    """``y[n, o] = sum_c,k W[o, c, k] x[n, c, s * j + d * k - p] (+ b[o])``, per group, in
    ``x``'s dtype (a filter of another dtype is multiplied in the wider one); returns ``y``
    and the columns of ``x`` (the filter gradient reuses them)."""
    n, c = x.shape[:2]
    oc, ksize = W.shape[0], W.shape[2:]
    col = im2col(x, ksize, stride, pad, dilate, out)
    ck = (c // groups) * math.prod(ksize)
    no = n * math.prod(out)
    if groups == 1:
        y = W.reshape(oc, ck) @ col.reshape(ck, no)
    else:
        y = W.reshape(groups, oc // groups, ck) @ col.reshape(groups, ck, no)
    y = y.reshape((oc, n) + tuple(out)).swapaxes(0, 1)
    result = np.empty(y.shape, x.dtype)
    if b is None:
        np.copyto(result, y)
    else:
        np.add(y, b.reshape((oc,) + (1,) * len(out)), out=result)
    return result, col


def channel_rows(a: np.ndarray) -> np.ndarray:
    """``(N, C, *spatial)`` as a contiguous ``(C, N * prod(spatial))`` matrix (a GEMM operand)."""
    return a.swapaxes(0, 1).reshape(a.shape[1], -1)


def grad_w_from_rows(rows: np.ndarray, col: np.ndarray, w_shape, groups: int) -> np.ndarray:
    """The filter gradient from the output gradient's rows ``(OC, N * prod(out))`` and the
    input's columns ``(C * prod(k), N * prod(out))``."""
    oc, no = rows.shape
    ck = col.size // no
    if groups == 1:
        gW = rows @ col.reshape(ck, no).T
    else:
        gW = rows.reshape(groups, oc // groups, no) @ col.reshape(
            groups, ck // groups, no).swapaxes(1, 2)
    return gW.reshape(w_shape)


def deconv_from_rows(rows: np.ndarray, W: np.ndarray, groups: int, n: int, spatial, outsize,
                     stride, pad, dilate) -> np.ndarray:
    """``col2im(W^T rows)``: the transposed convolution of an input given as its channel rows
    ``(C_in, N * prod(spatial))``, with ``W: (C_in, out / groups, *k)``; in the rows' dtype
    (a filter of another dtype is multiplied in the wider one)."""
    cin, ocg, ksize = W.shape[0], W.shape[1], W.shape[2:]
    ck = ocg * math.prod(ksize)
    if groups == 1:
        col = W.reshape(cin, ck).T @ rows
    else:
        cg = cin // groups
        col = W.reshape(groups, cg, ck).swapaxes(1, 2) @ rows.reshape(groups, cg, -1)
    col = col.astype(rows.dtype, copy=False).reshape(
        (ocg * groups,) + tuple(ksize) + (n,) + tuple(spatial))
    return col2im(col, outsize, stride, pad, dilate)


def conv_grad_w(x: np.ndarray, gy: np.ndarray, ksize, stride, pad, dilate,
                groups: int) -> np.ndarray:
    """The filter gradient of ``conv_forward``: ``(out_channels, C / groups, *ksize)``."""
    col = im2col(x, ksize, stride, pad, dilate, gy.shape[2:])
    return grad_w_from_rows(channel_rows(gy), col,
                            (gy.shape[1], x.shape[1] // groups) + tuple(ksize), groups)


def deconv_forward(x: np.ndarray, W: np.ndarray, b: np.ndarray | None, stride, pad, dilate,
                   groups: int, outsize) -> np.ndarray:
    """The transpose of ``conv_forward`` with filters ``W: (C_in, C_out / groups, *k)``."""
    y = deconv_from_rows(channel_rows(x), W, groups, x.shape[0], x.shape[2:], outsize, stride,
                         pad, dilate)
    if b is not None:
        y += b.reshape((-1,) + (1,) * (x.ndim - 2))
    return y


# --- ops ------------------------------------------------------------------------------------

def _filter_operands(op: FunctionNode, inputs, x_layout: str, w_layout: str):
    """The shape rules' common checks of a convolution's or deconvolution's x and W: two or
    three inputs, floats, ``ndim + 2`` axes each and a known window; returns (x, W)."""
    if len(inputs) not in (2, 3):
        shapes.fail(op, inputs, f"takes x, W and an optional b, got {len(inputs)} inputs")
    x, W = inputs[0], inputs[1]
    shapes.float_like_first(op, inputs)
    shapes.expect_ndim(op, inputs, x, op.ndim + 2, x_layout)
    shapes.expect_ndim(op, inputs, W, op.ndim + 2, w_layout)
    if not all(isinstance(k, int) for k in W.shape[2:]):
        shapes.fail(op, inputs, "the filter's window must be known")
    return x, W


def _bias_size(op: FunctionNode, inputs, out_channels):
    """The output channels, checked against the optional bias ``b``'s size."""
    if len(inputs) < 3:
        return out_channels
    b = inputs[2]
    return shapes.expect_dim(op, inputs, b.shape[0] if b.ndim else None, out_channels,
                             "b's size")


class _Windowed(FunctionNode):
    """A convolution, its filter gradient or its transpose; each one's backward is made of
    the other two, of the same number of spatial axes (``_related``)."""

    __slots__ = ()
    ndim: int = 2
    _conv: type[FunctionNode]
    _grad_w: type[FunctionNode]
    _deconv: type[FunctionNode]

    def _related(self, kind: str):
        """The constructor of the ``kind`` op (``_conv``, ``_grad_w``, ``_deconv``)."""
        return getattr(type(self), kind)


class _AnyNdim(_Windowed):
    """A windowed op whose number of spatial axes is its first argument, ``ndim``."""

    __slots__ = ()

    def _related(self, kind: str):
        return functools.partial(getattr(type(self), kind), self.ndim)


_NDIM = {"ndim": Attr(int, required=True, low=1, doc="number of spatial axes")}


class _Conv(_Windowed):
    """``x: (N, C, *spatial)``, ``W: (out_channels, C / groups, *ksize)``, optional ``b``."""

    __slots__ = ("stride", "pad", "cover_all", "dilate", "groups")
    arity = None  # x, W and an optional b
    ndim: int = 2
    attributes = _conv_attrs(cover_all=True)

    def shape_rule(self, inputs):
        x, W = _filter_operands(self, inputs, "x (N, C, *spatial)",
                                "W (out, C / groups, *ksize)")
        channels = W.shape[1] * self.groups if isinstance(W.shape[1], int) else shapes.UNKNOWN
        shapes.expect_dim(self, inputs, x.shape[1], channels,
                          f"x's channels for W with groups={self.groups}")
        out_channels = _bias_size(self, inputs, W.shape[0])
        out = shapes.windows(self, inputs, x.shape[2:], W.shape[2:], self.stride, self.pad,
                             self.dilate, self.cover_all)
        return shapes.TensorType((x.shape[0], out_channels) + out, x.dtype),

    def __init__(self, stride=1, pad=0, cover_all: bool = False, dilate=1,
                 groups: int = 1) -> None:
        nd = self.ndim
        self.stride = as_tuple(stride, nd, self.label, "stride", 1)
        self.pad = as_tuple(pad, nd, self.label, "pad", 0)
        self.dilate = as_tuple(dilate, nd, self.label, "dilate", 1)
        self.groups = as_tuple(groups, 1, self.label, "groups", 1)[0]
        self.cover_all = bool(cover_all)

    def forward(self, inputs):
        input_count(self.label, inputs)
        x, W = inputs[0], inputs[1]
        b = inputs[2] if len(inputs) == 3 else None
        _check_conv(self.label, self.ndim, x, W, b, self.groups, "out")
        out = out_shape(self.label, x.shape[2:], W.shape[2:], self.stride, self.pad,
                        self.dilate, self.cover_all)
        y, self._saved = conv_forward(x, W, b, self.stride, self.pad, self.dilate,
                                      self.groups, out)
        return y,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        x, W = self.get_retained_inputs()[:2]
        if isinstance(gy, np.ndarray):
            return self._backward_arrays(indexes, x, W, gy)
        gx = gW = gb = None
        if 0 in indexes:
            gx = _apply(self._related("_deconv")(self.stride, self.pad, tuple(x.shape[2:]),
                                                 self.dilate, self.groups), gy, W)
        if 1 in indexes:
            grad_w = self._related("_grad_w")(tuple(W.shape[2:]), self.stride, self.pad,
                                              self.dilate, self.groups)
            gW = _in_dtype(_apply(grad_w, x, gy), W.dtype)
        if 2 in indexes:
            gb = g.sum(gy, axis=(0,) + tuple(range(2, gy.ndim)))
        return (gx, gW, gb) if len(self.inputs) == 3 else (gx, gW)


    def _backward_arrays(self, indexes, x, W, gy):
        """First order: the same three results from one transposed copy of ``gy`` and the
        columns the forward kept."""
        rows = channel_rows(gy)
        gx = gW = gb = None
        if 0 in indexes:
            gx = deconv_from_rows(rows, W, self.groups, gy.shape[0], gy.shape[2:], x.shape[2:],
                                  self.stride, self.pad, self.dilate)
        if 1 in indexes:
            col = getattr(self, "_saved", None)  # None when static mode rebuilt this node
            if col is None:
                col = im2col(x, W.shape[2:], self.stride, self.pad, self.dilate, gy.shape[2:])
            gW = _in_dtype(grad_w_from_rows(rows, col, W.shape, self.groups), W.dtype)
        if 2 in indexes:
            gb = rows.sum(axis=1)
        return (gx, gW, gb) if len(self.inputs) == 3 else (gx, gW)


class _ConvGradW(_Windowed):
    """The filter gradient of a convolution, from its input ``x`` and output gradient ``gy``
    (a function of both, so a second derivative of a convolution is again a convolution)."""

    __slots__ = ("ksize", "stride", "pad", "dilate", "groups")
    arity = 2
    ndim: int = 2
    attributes = {"ksize": Attr(_INTS, required=True, low=1, doc="filter size"),
                  **_conv_attrs(cover_all=False)}

    def shape_rule(self, inputs):
        x, gy = inputs
        nd = self.ndim
        shapes.expect_ndim(self, inputs, x, nd + 2, "x (N, C, *spatial)")
        shapes.expect_ndim(self, inputs, gy, nd + 2, "gy (N, out, *windows)")
        channels = x.shape[1] // self.groups if isinstance(x.shape[1], int) else None
        return shapes.TensorType((gy.shape[1], channels) + self.ksize, x.dtype),

    def __init__(self, ksize, stride=1, pad=0, dilate=1, groups: int = 1) -> None:
        nd = self.ndim
        self.ksize = as_tuple(ksize, nd, self.label, "ksize", 1)
        self.stride = as_tuple(stride, nd, self.label, "stride", 1)
        self.pad = as_tuple(pad, nd, self.label, "pad", 0)
        self.dilate = as_tuple(dilate, nd, self.label, "dilate", 1)
        self.groups = as_tuple(groups, 1, self.label, "groups", 1)[0]

    def forward(self, inputs):
        x, gy = inputs
        _check_pair(self.label, self.ndim, x, gy, self.groups)
        _check_windows(self.label, x.shape[2:], gy.shape[2:], self.ksize, self.stride,
                       self.pad, self.dilate)
        return conv_grad_w(x, gy, self.ksize, self.stride, self.pad, self.dilate,
                           self.groups),

    def backward(self, indexes, grad_outputs):
        ggW, = grad_outputs
        x, gy = self.get_retained_inputs()
        gx = ggy = None
        if 0 in indexes:
            gx = _apply(self._related("_deconv")(self.stride, self.pad, tuple(x.shape[2:]),
                                                 self.dilate, self.groups), gy, ggW)
        if 1 in indexes:
            cover_all = _covers_all(x.shape[2:], gy.shape[2:], self.ksize, self.stride,
                                    self.pad, self.dilate)
            ggy = _apply(self._related("_conv")(self.stride, self.pad, cover_all, self.dilate,
                                    self.groups), x, ggW)
        return gx, ggy


class _Deconv(_Windowed):
    """``x: (N, C_in, *spatial)``, ``W: (C_in, out_channels / groups, *ksize)``, optional
    ``b``; ``outsize`` (default: the smallest that fits) picks among the output sizes whose
    convolution has ``x``'s size."""

    __slots__ = ("stride", "pad", "outsize", "dilate", "groups")
    arity = None  # x, W and an optional b
    ndim: int = 2
    attributes = {**_conv_attrs(cover_all=False),
                  "outsize": Attr((int, tuple, type(None)), None, low=1,
                                  doc="output spatial size (null: computed)")}

    def shape_rule(self, inputs):
        x, W = _filter_operands(self, inputs, "x (N, C_in, *spatial)",
                                "W (C_in, out / groups, *ksize)")
        shapes.expect_dim(self, inputs, x.shape[1], W.shape[0], "x's channels for W")
        out_channels = _bias_size(self, inputs, W.shape[1] * self.groups
                                  if isinstance(W.shape[1], int) else None)
        if self.outsize is not None:
            out = self.outsize
        else:
            out = tuple(deconv_outsize(n, k, s, p, False, d) if isinstance(n, int) else None
                        for n, k, s, p, d in zip(x.shape[2:], W.shape[2:], self.stride,
                                                 self.pad, self.dilate, strict=True))
            if any(o is not None and o <= 0 for o in out):
                shapes.fail(self, inputs, "the input's spatial size gives no output")
        return shapes.TensorType((x.shape[0], out_channels) + tuple(out), x.dtype),

    def __init__(self, stride=1, pad=0, outsize=None, dilate=1, groups: int = 1) -> None:
        nd = self.ndim
        self.stride = as_tuple(stride, nd, self.label, "stride", 1)
        self.pad = as_tuple(pad, nd, self.label, "pad", 0)
        self.dilate = as_tuple(dilate, nd, self.label, "dilate", 1)
        self.groups = as_tuple(groups, 1, self.label, "groups", 1)[0]
        self.outsize = None if outsize is None else as_tuple(outsize, nd, self.label,
                                                             "outsize", 1)

    def output_size(self, spatial, ksize) -> tuple[int, ...]:
        if self.outsize is not None:
            return self.outsize
        out = tuple(deconv_outsize(n, k, s, p, False, d) for n, k, s, p, d in zip(
            spatial, ksize, self.stride, self.pad, self.dilate, strict=True))
        if any(o <= 0 for o in out):
            raise NoOutputError(f"{self.label}: input spatial size {tuple(spatial)} gives no "
                                f"output (size {out})")
        return out

    def forward(self, inputs):
        input_count(self.label, inputs)
        x, W = inputs[0], inputs[1]
        b = inputs[2] if len(inputs) == 3 else None
        _check_conv(self.label, self.ndim, x, W, b, self.groups, "in")
        outsize = self.output_size(x.shape[2:], W.shape[2:])
        _check_windows(self.label, outsize, x.shape[2:], W.shape[2:], self.stride, self.pad,
                       self.dilate)
        return deconv_forward(x, W, b, self.stride, self.pad, self.dilate, self.groups,
                              outsize),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        x, W = self.get_retained_inputs()[:2]
        gx = gW = gb = None
        if 0 in indexes:
            cover_all = _covers_all(gy.shape[2:], x.shape[2:], W.shape[2:], self.stride,
                                    self.pad, self.dilate)
            gx = _apply(self._related("_conv")(self.stride, self.pad, cover_all, self.dilate,
                                   self.groups), gy, W)
        if 1 in indexes:
            grad_w = self._related("_grad_w")(tuple(W.shape[2:]), self.stride, self.pad,
                                              self.dilate, self.groups)
            gW = _in_dtype(_apply(grad_w, gy, x), W.dtype)
        if 2 in indexes:
            gb = g.sum(gy, axis=(0,) + tuple(range(2, gy.ndim)))
        return (gx, gW, gb) if len(self.inputs) == 3 else (gx, gW)


def input_count(label: str, inputs) -> None:
    """A (de)convolution takes ``x, W`` or ``x, W, b``."""
    if not 2 <= len(inputs) <= 3:
        raise errors.ShapeError(f"{label}: expected inputs x, W and an optional b, got "
                                f"{len(inputs)} inputs")


def _check_conv(label: str, nd: int, x, W, b, groups: int, channels_of_w: str) -> None:
    """Shapes and dtypes of a (de)convolution's inputs; ``channels_of_w`` says which axis of
    ``W`` faces the input: ``out`` (convolution: axis 1, per group) or ``in`` (axis 0)."""
    is_float(label, x)
    is_float(label, W, "filter")
    layout = "NCW" if nd == 1 else "NCHW" if nd == 2 else f"(N, C, {nd} spatial axes)"
    if x.ndim != nd + 2:
        raise errors.ShapeError(f"{label}: expected x of {nd + 2} dimensions ({layout}), got "
                                f"{x.shape}")
    if W.ndim != nd + 2:
        raise errors.ShapeError(f"{label}: expected W of {nd + 2} dimensions, got {W.shape}")
    if channels_of_w == "out":
        if W.shape[0] % groups or x.shape[1] != W.shape[1] * groups:
            raise errors.ShapeError(
                f"{label}: x has {x.shape[1]} channels but W {W.shape} with groups={groups} "
                f"expects {W.shape[1] * groups} (and out channels divisible by groups)")
        out_channels = W.shape[0]
    else:
        if x.shape[1] != W.shape[0] or W.shape[0] % groups:
            raise errors.ShapeError(
                f"{label}: x has {x.shape[1]} channels but W {W.shape} expects {W.shape[0]} "
                f"(divisible by groups={groups})")
        out_channels = W.shape[1] * groups
    if b is not None:
        same_dtype(label, x, b)
        if b.shape != (out_channels,):
            raise errors.ShapeError(f"{label}: expected b of shape ({out_channels},), got "
                                    f"{b.shape}")


def _check_pair(label: str, nd: int, x, gy, groups: int) -> None:
    same_dtype(label, x, gy)
    if x.ndim != nd + 2 or gy.ndim != nd + 2 or x.shape[0] != gy.shape[0]:
        raise errors.ShapeError(f"{label}: expected x and gy of {nd + 2} dimensions with one "
                                f"batch size, got {x.shape} and {gy.shape}")
    if x.shape[1] % groups or gy.shape[1] % groups:
        raise errors.ShapeError(f"{label}: channels {x.shape[1]} and {gy.shape[1]} must be "
                                f"divisible by groups={groups}")


def _check_windows(label: str, spatial, out, ksize, stride, pad, dilate) -> None:
    """``out`` must be the number of windows over ``spatial`` (with or without cover_all)."""
    for n, o, k, s, p, d in zip(spatial, out, ksize, stride, pad, dilate, strict=True):
        if o not in (conv_outsize(n, k, s, p, False, d), conv_outsize(n, k, s, p, True, d)):
            raise errors.ShapeError(
                f"{label}: spatial size {tuple(spatial)} does not match {tuple(out)} windows "
                f"of size {tuple(ksize)} (stride {tuple(stride)}, pad {tuple(pad)}, dilate "
                f"{tuple(dilate)})")


@register_op
class Convolution2DFunction(_Conv):
    """2-d convolution of ``x: (N, C, H, W)`` with filters ``W: (out, C / groups, kh, kw)``."""

    __slots__ = ()
    name = "convolution_2d"
    label = "Convolution2DFunction"
    ndim = 2


@register_op
class Convolution2DGradW(_ConvGradW):
    """Filter gradient of ``convolution_2d`` from ``x`` and the output gradient ``gy``."""

    __slots__ = ()
    name = "convolution_2d_grad_w"
    label = "Convolution2DGradW"
    ndim = 2


@register_op
class Deconvolution2DFunction(_Deconv):
    """2-d transposed convolution of ``x: (N, C, H, W)``, ``W: (C, out / groups, kh, kw)``."""

    __slots__ = ()
    name = "deconvolution_2d"
    label = "Deconvolution2DFunction"
    ndim = 2


@register_op
class Convolution1DFunction(_Conv):
    """1-d convolution of ``x: (N, C, W)`` with filters ``W: (out, C / groups, k)``."""

    __slots__ = ()
    name = "convolution_1d"
    label = "ConvolutionND"
    ndim = 1


@register_op
class Convolution1DGradW(_ConvGradW):
    """Filter gradient of ``convolution_1d`` from ``x`` and the output gradient ``gy``."""

    __slots__ = ()
    name = "convolution_1d_grad_w"
    label = "ConvolutionNDGradW"
    ndim = 1


@register_op
class Deconvolution1DFunction(_Deconv):
    """1-d transposed convolution of ``x: (N, C, W)`` with ``W: (C, out / groups, k)``."""

    __slots__ = ()
    name = "deconvolution_1d"
    label = "DeconvolutionND"
    ndim = 1


@register_op
class ConvolutionND(_AnyNdim, _Conv):
    """Convolution over ``ndim`` spatial axes: ``x: (N, C, *spatial)``, ``W: (out, C /
    groups, *k)``."""

    __slots__ = ("ndim",)
    name = "convolution_nd"
    label = "ConvolutionND"
    attributes = {**_NDIM, **_conv_attrs(cover_all=True)}

    def __init__(self, ndim: int, stride=1, pad=0, cover_all: bool = False, dilate=1,
                 groups: int = 1) -> None:
        self.ndim = as_tuple(ndim, 1, self.label, "ndim", 1)[0]
        super().__init__(stride, pad, cover_all, dilate, groups)


@register_op
class ConvolutionNDGradW(_AnyNdim, _ConvGradW):
    """Filter gradient of ``convolution_nd`` from ``x`` and the output gradient ``gy``."""

    __slots__ = ("ndim",)
    name = "convolution_nd_grad_w"
    label = "ConvolutionNDGradW"
    attributes = {**_NDIM, **_ConvGradW.attributes}

    def __init__(self, ndim: int, ksize, stride=1, pad=0, dilate=1, groups: int = 1) -> None:
        self.ndim = as_tuple(ndim, 1, self.label, "ndim", 1)[0]
        super().__init__(ksize, stride, pad, dilate, groups)


@register_op
class DeconvolutionND(_AnyNdim, _Deconv):
    """Transposed convolution over ``ndim`` spatial axes: ``x: (N, C, *spatial)``, ``W: (C,
    out / groups, *k)``."""

    __slots__ = ("ndim",)
    name = "deconvolution_nd"
    label = "DeconvolutionND"
    attributes = {**_NDIM, **_Deconv.attributes}

    def __init__(self, ndim: int, stride=1, pad=0, outsize=None, dilate=1,
                 groups: int = 1) -> None:
        self.ndim = as_tuple(ndim, 1, self.label, "ndim", 1)[0]
        super().__init__(stride, pad, outsize, dilate, groups)


for _family in ((Convolution2DFunction, Convolution2DGradW, Deconvolution2DFunction),
                (Convolution1DFunction, Convolution1DGradW, Deconvolution1DFunction),
                (ConvolutionND, ConvolutionNDGradW, DeconvolutionND)):
    for _cls in _family:
        _cls._conv, _cls._grad_w, _cls._deconv = _family


def _inputs(x, W, b):
    return (x, W) if b is None else (x, W, b)


def convolution_2d(x, W, b=None, stride=1, pad=0, cover_all=False, *, dilate=1, groups=1):
    """Chainer's ``F.convolution_2d``: ``x`` (N, C, H, W), ``W`` (out, C / groups, kh, kw)."""
    return Convolution2DFunction(stride, pad, cover_all, dilate, groups).apply(
        _inputs(x, W, b))[0]


def convolution_1d(x, W, b=None, stride=1, pad=0, cover_all=False, dilate=1, groups=1):
    """Chainer's ``F.convolution_1d``: ``x`` (N, C, W), ``W`` (out, C / groups, k)."""
    return Convolution1DFunction(stride, pad, cover_all, dilate, groups).apply(
        _inputs(x, W, b))[0]


def deconvolution_2d(x, W, b=None, stride=1, pad=0, outsize=None, *, dilate=1, groups=1):
    """Chainer's ``F.deconvolution_2d``: ``x`` (N, C, H, W), ``W`` (C, out / groups, kh, kw)."""
    return Deconvolution2DFunction(stride, pad, outsize, dilate, groups).apply(
        _inputs(x, W, b))[0]


def deconvolution_1d(x, W, b=None, stride=1, pad=0, outsize=None, dilate=1, groups=1):
    """Chainer's ``F.deconvolution_1d``: ``x`` (N, C, W), ``W`` (C, out / groups, k)."""
    return Deconvolution1DFunction(stride, pad, outsize, dilate, groups).apply(
        _inputs(x, W, b))[0]


def _spatial_axes(label: str, x) -> int:
    ndim = len(x.shape) - 2
    if ndim < 1:
        raise errors.ShapeError(f"{label}: expected x of shape (N, C, *spatial) with at least "
                                f"one spatial axis, got {tuple(x.shape)}")
    return ndim


def convolution_nd(x, W, b=None, stride=1, pad=0, cover_all=False, dilate=1, groups=1):
    """Chainer's ``F.convolution_nd``: ``x`` (N, C, *spatial), ``W`` (out, C / groups, *k), as
    many spatial axes as ``x`` has (one or two: ``convolution_1d`` / ``convolution_2d``)."""
    ndim = _spatial_axes("ConvolutionND", x)
    if ndim == 2:
        node = Convolution2DFunction(stride, pad, cover_all, dilate, groups)
    elif ndim == 1:
        node = Convolution1DFunction(stride, pad, cover_all, dilate, groups)
    else:
        node = ConvolutionND(ndim, stride, pad, cover_all, dilate, groups)
    return node.apply(_inputs(x, W, b))[0]


def convolution_3d(x, W, b=None, stride=1, pad=0, cover_all=False, dilate=1, groups=1):
    """Chainer's ``F.convolution_3d``: ``x`` (N, C, D, H, W), ``W`` (out, C / groups, kd, kh,
    kw)."""
    return ConvolutionND(3, stride, pad, cover_all, dilate, groups).apply(_inputs(x, W, b))[0]


def deconvolution_nd(x, W, b=None, stride=1, pad=0, outsize=None, dilate=1, groups=1):
    """Chainer's ``F.deconvolution_nd``: ``x`` (N, C, *spatial), ``W`` (C, out / groups, *k),
    as many spatial axes as ``x`` has."""
    ndim = _spatial_axes("DeconvolutionND", x)
    if ndim == 2:
        node = Deconvolution2DFunction(stride, pad, outsize, dilate, groups)
    elif ndim == 1:
        node = Deconvolution1DFunction(stride, pad, outsize, dilate, groups)
    else:
        node = DeconvolutionND(ndim, stride, pad, outsize, dilate, groups)
    return node.apply(_inputs(x, W, b))[0]


def deconvolution_3d(x, W, b=None, stride=1, pad=0, outsize=None, dilate=1, groups=1):
    """Chainer's ``F.deconvolution_3d``: ``x`` (N, C, D, H, W), ``W`` (C, out / groups, kd, kh,
    kw)."""
    return DeconvolutionND(3, stride, pad, outsize, dilate, groups).apply(
        _inputs(x, W, b))[0]


def dilated_convolution_2d(x, W, b=None, stride=1, pad=0, dilate=1, cover_all=False):
    """Chainer's ``F.dilated_convolution_2d``: ``convolution_2d`` with taps ``dilate`` apart."""
    return Convolution2DFunction(stride, pad, cover_all, dilate).apply(_inputs(x, W, b))[0]


def depthwise_convolution_2d(x, W, b=None, stride=1, pad=0):
    """Chainer's ``F.depthwise_convolution_2d``: each channel of ``x`` (N, C, H, W) convolved
    with its own ``multiplier`` filters, ``W`` (multiplier, C, kh, kw); output channel ``c *
    multiplier + m`` is channel ``c``'s filter ``m``. A grouped ``convolution_2d``."""
    if len(W.shape) != 4:
        raise errors.ShapeError(f"depthwise_convolution_2d: expected W of shape (multiplier, "
                                f"C, kh, kw), got {tuple(W.shape)}")
    multiplier, channels, kh, kw = W.shape
    filters = reshape(transpose(W, (1, 0, 2, 3)), (channels * multiplier, 1, kh, kw))
    return convolution_2d(x, filters, b, stride, pad, groups=channels)
