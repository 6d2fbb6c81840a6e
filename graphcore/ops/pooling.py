"""Spatial pooling of ``(N, C, *spatial)`` arrays: ``max_pooling_2d`` / ``max_pooling_1d`` /
``max_pooling_nd`` (any number of spatial axes; Chainer's default ``cover_all=True``) and
``average_pooling_2d`` / ``average_pooling_1d`` / ``average_pooling_nd`` (padding counts as
zeros in the average, as in Chainer; ``pad_value=None`` in 1-d and N-d leaves it out).

The gradient of either pooling is linear in the output gradient, and written with registered
ops for double backprop: max pooling scatters ``gy`` to the position of each window's
maximum (``scatter_add``), average pooling spreads it over each window (``unpooling_nd``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from graphcore import errors, shapes
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.array import Reshape, concat, reshape
from graphcore.ops.checks import is_float
from graphcore.ops.indexing import GetItem, ScatterAdd
from graphcore.ops.unpooling import UnpoolingND
from graphcore.ops.windows import as_tuple, col2im, out_shape, padded, window_view
from graphcore.registry import register_op

_POOL_ATTRS = {
    "ksize": Attr((int, tuple), required=True, low=1, doc="window size (one per axis or one)"),
    "stride": Attr((int, tuple, type(None)), None, low=1,
                   doc="step between windows (null: the window size)"),
    "pad": Attr((int, tuple), 0, low=0, doc="padding on both sides of each axis"),
}


def _per_axis(value, nd: int) -> tuple[int, ...]:
    return tuple(value) if isinstance(value, tuple | list) else (value,) * nd


class _Pooling(FunctionNode):
    __slots__ = ("ksize", "stride", "pad", "cover_all")
    arity = 1
    ndim: int = 2

    def shape_rule(self, inputs):
        x, = inputs
        shapes.float_like_first(self, inputs)
        nd = self.ndim if self.ndim is not None else max(x.ndim - 2, 1)
        shapes.expect_ndim(self, inputs, x, nd + 2, "x (N, C, *spatial)")
        ksize = _per_axis(self.ksize, nd)
        stride = ksize if self.stride is None else _per_axis(self.stride, nd)
        out = shapes.windows(self, inputs, x.shape[2:], ksize, stride, _per_axis(self.pad, nd),
                             (1,) * nd, not isinstance(self, _AveragePooling) and self.cover_all)
        return shapes.TensorType(x.shape[:2] + out, x.dtype),

    def __init__(self, ksize, stride=None, pad=0, cover_all: bool = False) -> None:
        nd = self.ndim
        self.ksize = as_tuple(ksize, nd, self.label, "ksize", 1)
        self.stride = self.ksize if stride is None else as_tuple(stride, nd, self.label,
                                                                 "stride", 1)
        self.pad = as_tuple(pad, nd, self.label, "pad", 0)
        self.cover_all = bool(cover_all)

    def _windows(self, x: np.ndarray, value: float):
        """The padded input, the output size and the window view ``(N, C, *out, *k)``."""
        is_float(self.label, x)
        nd = self.ndim
        if x.ndim != nd + 2:
            layout = {1: "NCW", 2: "NCHW", 3: "NCDHW"}.get(nd, f"N, C, {nd} spatial")
            raise errors.ShapeError(f"{self.label}: expected x of {nd + 2} dimensions "
                                    f"({layout}), got {x.shape}")
        ones = (1,) * nd
        out = out_shape(self.label, x.shape[2:], self.ksize, self.stride, self.pad, ones,
                        self.cover_all)
        xp = padded(x, self.pad, out, self.ksize, self.stride, ones, value)
        return xp, out, window_view(xp, self.ksize, self.stride, ones, out, layout="pool")

    def _crop(self, spatial):
        return (slice(None), slice(None)) + tuple(
            slice(p, p + n) for p, n in zip(self.pad, spatial, strict=True))


class _MaxPooling(_Pooling):
    """The maximum of each window; ``cover_all`` (default) adds a last partial window."""

    __slots__ = ()
    _out_keep = (0,)
    attributes = {**_POOL_ATTRS,
                  "cover_all": Attr(bool, True, doc="add a last partial window so every "
                                    "input element is covered")}

    def __init__(self, ksize, stride=None, pad=0, cover_all: bool = True) -> None:
        super().__init__(ksize, stride, pad, cover_all)

    def forward(self, inputs):
        x, = inputs
        xp, out, _ = self._windows(x, -np.inf)
        # One elementwise maximum per window offset (an argmax along a short last axis is
        # many times slower); backward finds which offset held each maximum.
        y = None
        for taps in self._taps(out):
            if y is None:
                y = xp[taps].copy()
            else:
                np.maximum(y, xp[taps], out=y)
        self._saved = (xp, x.shape)
        return y,

    def _taps(self, out):
        """For each window offset, the index of the input elements it reads in every window."""
        for offset in itertools.product(*(range(k) for k in self.ksize)):
            yield (slice(None), slice(None)) + tuple(
                slice(j, j + s * (o - 1) + 1, s)
                for j, s, o in zip(offset, self.stride, out, strict=True))

    def _winners(self, xp: np.ndarray, y: np.ndarray):
        """For each window offset, the mask of windows whose maximum it holds (the first
        offset holding it, on ties, as an argmax would)."""
        done = np.zeros(y.shape, bool)
        picked = np.empty(y.shape, bool)
        for k, taps in enumerate(self._taps(y.shape[2:])):
            np.equal(xp[taps], y, out=picked)
            if k:
                np.greater(picked, done, out=picked)  # picked and not done
            np.logical_or(done, picked, out=done)
            yield k, taps, picked

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        xp, shape = self._saved
        y = self.output_array(0)
        crop = self._crop(shape[2:])
        if isinstance(gy, np.ndarray):
            disjoint = all(s >= k for s, k in zip(self.stride, self.ksize, strict=True))
            # windows that tile the input exactly write every element once: no zero fill
            tiles = disjoint and all(s == k and o * s == n for s, k, o, n in zip(
                self.stride, self.ksize, y.shape[2:], xp.shape[2:], strict=True))
            gxp = (np.empty if tiles else np.zeros)(xp.shape, gy.dtype)
            part = None if disjoint else np.empty(gy.shape, gy.dtype)
            for _, taps, picked in self._winners(xp, y):
                if disjoint:  # each input element is in one window: write in place
                    np.multiply(gy, picked, out=gxp[taps])
                else:
                    np.multiply(gy, picked, out=part)
                    gxp[taps] += part
            return (np.ascontiguousarray(gxp[crop]) if xp.shape != shape else gxp),
        flat = self._flat_positions(self._argmax(xp, y), xp.shape)
        size = math.prod(xp.shape)
        gxp = ScatterAdd(flat, (size,)).apply((Reshape((-1,)).apply((gy,))[0],))[0]
        gx = Reshape(xp.shape).apply((gxp,))[0]
        return (GetItem(crop).apply((gx,))[0] if xp.shape != shape else gx),

    def _argmax(self, xp: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Each window's maximum as its offset in the window, counted row-major over
        ``ksize`` (Chainer's indexes: ``kx + kw * ky`` in 2-d; the first one on ties)."""
        where = np.zeros(y.shape, np.intp)
        for k, _, picked in self._winners(xp, y):
            where[picked] = k
        return where

    def window_indices(self, y: np.ndarray) -> np.ndarray:
        """``_argmax`` of the last forward, which made ``y`` (``return_indices=True``)."""
        return self._argmax(self._saved[0], y)

    def _flat_positions(self, where: np.ndarray, padded_shape) -> np.ndarray:
        """The flat index, in the padded input, of each window's maximum."""
        nd = self.ndim
        n, c, *out = where.shape
        offsets = np.unravel_index(where, self.ksize)
        flat = np.arange(n * c).reshape((n, c) + (1,) * nd) * math.prod(padded_shape[2:])
        for i in range(nd):
            rows = (np.arange(out[i]) * self.stride[i]).reshape(
                (out[i],) + (1,) * (nd - 1 - i))
            flat = flat + (offsets[i] + rows) * math.prod(padded_shape[3 + i:])
        return flat.reshape(-1)


class _AveragePooling(_Pooling):
    """The mean of each window; padding counts as zeros unless ``pad_value`` is None."""

    __slots__ = ("pad_value",)

    def __init__(self, ksize, stride=None, pad=0, pad_value=0) -> None:
        super().__init__(ksize, stride, pad, False)
        if pad_value not in (0, None):
            raise ValueError(f"{self.label}: pad_value must be 0 or None, got {pad_value!r}")
        self.pad_value = pad_value

    def forward(self, inputs):
        x, = inputs
        xp, out, view = self._windows(x, 0.0)
        nd = self.ndim
        y = view.sum(axis=tuple(range(-nd, 0)))
        y *= self._scale(x.shape, out)
        self._saved = x.shape
        return y.astype(x.dtype, copy=False),

    def _scale(self, shape, out) -> np.ndarray | float:
        """``1 / window size``, or with ``pad_value=None`` one over each window's count of
        input elements (an array broadcasting over ``(N, C, *out)``)."""
        if self.pad_value is not None or not any(self.pad):
            return 1.0 / math.prod(self.ksize)
        ones = np.ones((1, 1) + tuple(shape[2:]))
        nd = self.ndim
        view = window_view(padded(ones, self.pad, out, self.ksize, self.stride, (1,) * nd),
                           self.ksize, self.stride, (1,) * nd, out, layout="pool")
        return 1.0 / view.sum(axis=tuple(range(-nd, 0)))

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        shape = self._saved
        nd = self.ndim
        out = gy.shape[2:]
        scale = self._scale(shape, out)
        if isinstance(gy, np.ndarray):
            gys = (gy * scale).astype(gy.dtype, copy=False).swapaxes(0, 1)
            col = np.broadcast_to(gys.reshape(gys.shape[:1] + (1,) * nd + gys.shape[1:]),
                                  gys.shape[:1] + self.ksize + gys.shape[1:])
            return col2im(col, shape[2:], self.stride, self.pad, (1,) * nd),
        gys = gy * (np.asarray(scale, gy.dtype) if isinstance(scale, np.ndarray) else scale)
        unpool = UnpoolingND(self.ksize, self.stride, self.pad, tuple(shape[2:]), False)
        return unpool.apply((gys,))[0],


@register_op
class MaxPooling2D(_MaxPooling):
    """Max pooling of ``x: (N, C, H, W)`` over ``ksize`` windows."""

    __slots__ = ()
    name = "max_pooling_2d"
    label = "MaxPooling2D"
    ndim = 2


@register_op
class MaxPooling1D(_MaxPooling):
    """Max pooling of ``x: (N, C, W)`` over ``ksize`` windows."""

    __slots__ = ()
    name = "max_pooling_1d"
    label = "MaxPoolingND"
    ndim = 1


@register_op
class AveragePooling2D(_AveragePooling):
    """Average pooling of ``x: (N, C, H, W)``; padding counts as zeros (Chainer's)."""

    __slots__ = ()
    name = "average_pooling_2d"
    label = "AveragePooling2D"
    ndim = 2
    attributes = dict(_POOL_ATTRS)

    def __init__(self, ksize, stride=None, pad=0) -> None:
        super().__init__(ksize, stride, pad, 0)


@register_op
class AveragePooling1D(_AveragePooling):
    """Average pooling of ``x: (N, C, W)``; ``pad_value=None`` averages real elements only."""

    __slots__ = ()
    name = "average_pooling_1d"
    label = "AveragePoolingND"
    ndim = 1
    attributes = {**_POOL_ATTRS,
                  "pad_value": Attr((int, type(None)), 0, choices=(0, None),
                                    doc="0: padding counts as zeros; null: it is left out")}


def _rank(*values) -> int | None:
    """The number of spatial axes the tuples among ``values`` give (None: all are scalars)."""
    lengths = {len(v) for v in values if isinstance(v, tuple | list)}
    if len(lengths) > 1:
        raise ValueError(f"ksize, stride and pad give different numbers of spatial axes: "
                         f"{values!r}")
    return lengths.pop() if lengths else None


@register_op
class MaxPoolingND(_MaxPooling):
    """Max pooling of ``x: (N, C, *spatial)`` over ``ksize`` windows, for any number of
    spatial axes (given by tuple arguments, else by the input)."""

    __slots__ = ("_nd",)
    name = "max_pooling_nd"
    label = "MaxPoolingND"

    def __init__(self, ksize, stride=None, pad=0, cover_all: bool = True) -> None:
        self._nd = _rank(ksize, stride, pad)
        if self._nd is None:  # scalars: the input's rank decides, at the first forward
            self.ksize, self.stride, self.pad, self.cover_all = ksize, stride, pad, cover_all
        else:
            super().__init__(ksize, stride, pad, cover_all)

    @property
    def ndim(self) -> int:
        return self._nd

    def forward(self, inputs):
        if self._nd is None:
            self._nd = max(inputs[0].ndim - 2, 1)
            super().__init__(self.ksize, self.stride, self.pad, self.cover_all)
        return super().forward(inputs)


@register_op
class AveragePoolingND(_AveragePooling):
    """Average pooling of ``x: (N, C, *spatial)`` for any number of spatial axes;
    ``pad_value=None`` averages real elements only."""

    __slots__ = ("_nd",)
    name = "average_pooling_nd"
    label = "AveragePoolingND"
    attributes = {**_POOL_ATTRS,
                  "pad_value": Attr((int, type(None)), 0, choices=(0, None),
                                    doc="0: padding counts as zeros; null: it is left out")}

    def __init__(self, ksize, stride=None, pad=0, pad_value=0) -> None:
        self._nd = _rank(ksize, stride, pad)
        if self._nd is None:  # scalars: the input's rank decides, at the first forward
            self.ksize, self.stride, self.pad, self.pad_value = ksize, stride, pad, pad_value
        else:
            super().__init__(ksize, stride, pad, pad_value)

    @property
    def ndim(self) -> int:
        return self._nd

    def forward(self, inputs):
        if self._nd is None:
            self._nd = max(inputs[0].ndim - 2, 1)
            super().__init__(self.ksize, self.stride, self.pad, self.pad_value)
        return super().forward(inputs)


def _max_pooling(op: _MaxPooling, x, return_indices: bool):
    y = op.apply((x,))[0]
    if not isinstance(return_indices, bool | np.bool_):
        raise errors.ArgumentTypeError(f"{op.label}: return_indices must be True or False, "
                                       f"got {return_indices!r}")
    return (y, op.window_indices(y.array)) if return_indices else y


def max_pooling_2d(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False):
    """Chainer's ``F.max_pooling_2d`` (``stride`` defaults to ``ksize``). With
    ``return_indices=True`` it returns ``(y, indexes)``: an integer array of ``y``'s shape
    giving where in its window each maximum was (``kx + kw * ky``), as Chainer's."""
    return _max_pooling(MaxPooling2D(ksize, stride, pad, cover_all), x, return_indices)


def max_pooling_1d(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False):
    """Chainer's ``F.max_pooling_1d`` (``stride`` defaults to ``ksize``); ``return_indices``
    as in ``max_pooling_2d`` (the offset in the window)."""
    return _max_pooling(MaxPooling1D(ksize, stride, pad, cover_all), x, return_indices)


def average_pooling_2d(x, ksize, stride=None, pad=0):
    """Chainer's ``F.average_pooling_2d`` (``stride`` defaults to ``ksize``)."""
    return AveragePooling2D(ksize, stride, pad).apply((x,))[0]


def average_pooling_1d(x, ksize, stride=None, pad=0, pad_value=0):
    """Chainer's ``F.average_pooling_1d`` (``stride`` defaults to ``ksize``)."""
    return AveragePooling1D(ksize, stride, pad, pad_value).apply((x,))[0]


def _spatial_rank(label: str, x, nd: int | None = None) -> int:
    """``x``'s number of spatial axes; ``nd`` (a 1-d or 3-d wrapper's) must match it."""
    rank = len(x.shape) - 2
    if nd is not None and rank != nd:
        raise ValueError(f"{label}: expected x (N, C) and {nd} spatial axes, got {x.shape}")
    return rank


def _nd_args(nd, ksize, stride, pad):
    label = "PoolingND"
    return (as_tuple(ksize, nd, label, "ksize", 1),
            None if stride is None else as_tuple(stride, nd, label, "stride", 1),
            as_tuple(pad, nd, label, "pad", 0))


def max_pooling_nd(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False):
    """Chainer's ``F.max_pooling_nd``: max pooling over every spatial axis of ``x`` (``stride``
    defaults to ``ksize``); ``return_indices`` as in ``max_pooling_2d`` (the row-major offset
    in the window)."""
    nd = _spatial_rank("max_pooling_nd", x)
    return _max_pooling(MaxPoolingND(*_nd_args(nd, ksize, stride, pad), cover_all), x,
                        return_indices)


def max_pooling_3d(x, ksize, stride=None, pad=0, cover_all=True, return_indices=False):
    """``max_pooling_nd`` of an input with 3 spatial axes (Chainer's ``F.max_pooling_3d``)."""
    _spatial_rank("max_pooling_3d", x, 3)
    return max_pooling_nd(x, ksize, stride, pad, cover_all, return_indices)


def average_pooling_nd(x, ksize, stride=None, pad=0, pad_value=0):
    """Chainer's ``F.average_pooling_nd``: average pooling over every spatial axis of ``x``;
    ``pad_value=0`` counts padding as zeros, ``None`` leaves it out of each average."""
    nd = _spatial_rank("average_pooling_nd", x)
    return AveragePoolingND(*_nd_args(nd, ksize, stride, pad), pad_value).apply((x,))[0]


def average_pooling_3d(x, ksize, stride=None, pad=0, pad_value=0):
    """``average_pooling_nd`` of an input with 3 spatial axes (Chainer's)."""
    _spatial_rank("average_pooling_3d", x, 3)
    return average_pooling_nd(x, ksize, stride, pad, pad_value)


def spatial_pyramid_pooling_2d(x, pyramid_height, pooling=None):
    """Chainer's ``F.spatial_pyramid_pooling_2d``: max pooling of ``x: (N, C, H, W)`` into
    ``1, 2, 4, ... 2^(pyramid_height - 1)`` bins per axis, all flattened and concatenated to
    ``(N, C * sum(4^l), 1, 1)``. ``pooling`` must be ``'max'`` (Chainer's only one)."""
    if pooling != "max":
        raise ValueError(f"spatial_pyramid_pooling_2d: unsupported pooling {pooling!r} "
                         "(only 'max')")
    if len(x.shape) != 4:
        raise errors.ShapeError(f"spatial_pyramid_pooling_2d: expected x (N, C, H, W), got "
                                f"{x.shape}")
    height, width = x.shape[2:]
    levels = []
    for level in range(pyramid_height):
        bins = 2 ** level
        ksize = (math.ceil(height / bins), math.ceil(width / bins))
        pad = ((ksize[0] * bins - height) // 2, (ksize[1] * bins - width) // 2)
        y = max_pooling_2d(x, ksize, None, pad, cover_all=True)
        n, c, h, w = y.shape
        levels.append(reshape(y, (n, c * h * w, 1, 1)))
    return concat(levels, axis=1)
