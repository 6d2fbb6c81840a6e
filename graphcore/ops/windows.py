"""Sliding windows over the spatial axes of ``(N, C, *spatial)`` arrays, for convolution and
pooling: output sizes (Chainer's formulas, ``graphcore.utils.conv``), ``im2col`` (windows
gathered into one matrix by a single strided copy) and its adjoint ``col2im`` (windows added
back, one slice per kernel offset). Every function works for any number of spatial axes.

The column layout is ``(C, *kernel, N, *out)``: reshaped to ``(C * prod(kernel), N *
prod(out))`` it is the right-hand side of one GEMM with the filters ``(out_channels, C *
prod(kernel))``, and the gradient of the filters is one GEMM with it too.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from graphcore import errors
from graphcore.utils.conv import get_conv_outsize as conv_outsize


def as_tuple(value: int | Sequence[int], n: int, label: str, what: str,
             low: int = 0) -> tuple[int, ...]:
    """``k`` -> ``(k,) * n``; a sequence of ``n`` integers as a tuple; each at least ``low``."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        values = (int(value),) * n
    elif (isinstance(value, Sequence) and len(value) == n
          and all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in value)):
        values = tuple(int(v) for v in value)
    else:
        raise ValueError(f"{label}: {what} must be an integer or {n} integers, got {value!r}")
    if any(v < low for v in values):
        raise ValueError(f"{label}: {what} must be at least {low}, got {value!r}")
    return values


def out_shape(label: str, spatial: Sequence[int], ksize: Sequence[int],
              stride: Sequence[int], pad: Sequence[int], dilate: Sequence[int],
              cover_all: bool) -> tuple[int, ...]:
    out = tuple(conv_outsize(n, k, s, p, cover_all, d)
                for n, k, s, p, d in zip(spatial, ksize, stride, pad, dilate, strict=True))
    if any(o <= 0 for o in out):
        raise errors.ShapeError(
            f"{label}: the window {tuple(ksize)} (dilate {tuple(dilate)}, pad {tuple(pad)}) "
            f"does not fit the input's spatial size {tuple(spatial)}: output size {out}")
    return out


def padded(x: np.ndarray, pad: Sequence[int], out: Sequence[int], ksize: Sequence[int],
           stride: Sequence[int], dilate: Sequence[int], value: float = 0.0) -> np.ndarray:
    """``x`` with ``pad`` before each spatial axis and, after it, as much as the last window
    needs (more than ``pad`` with ``cover_all``, less when the last rows are never read)."""
    spatial = x.shape[2:]
    high = [max(0, s * (o - 1) + d * (k - 1) + 1 - n - p)
            for n, k, s, p, d, o in zip(spatial, ksize, stride, pad, dilate, out, strict=True)]
    if not any(pad) and not any(high):
        return x
    shape = x.shape[:2] + tuple(n + p + h for n, p, h in zip(spatial, pad, high, strict=True))
    xp = np.full(shape, value, x.dtype)
    xp[(slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in zip(pad, spatial,
                                                                          strict=True))] = x
    return xp


def window_view(xp: np.ndarray, ksize: Sequence[int], stride: Sequence[int],
                dilate: Sequence[int], out: Sequence[int], layout: str = "col") -> np.ndarray:
    """A read-only strided view of the windows of a padded ``xp``: ``layout="col"`` gives
    ``(C, *kernel, N, *out)``, ``layout="pool"`` gives ``(N, C, *out, *kernel)``."""
    sn, sc, *ss = xp.strides
    kernel_strides = tuple(d * s for d, s in zip(dilate, ss, strict=True))
    out_strides = tuple(st * s for st, s in zip(stride, ss, strict=True))
    n, c = xp.shape[:2]
    if layout == "col":
        shape = (c, *ksize, n, *out)
        strides = (sc, *kernel_strides, sn, *out_strides)
    else:
        shape = (n, c, *out, *ksize)
        strides = (sn, sc, *out_strides, *kernel_strides)
    return as_strided(xp, shape, strides, writeable=False)


def im2col(x: np.ndarray, ksize: Sequence[int], stride: Sequence[int], pad: Sequence[int],
           dilate: Sequence[int], out: Sequence[int]) -> np.ndarray:
    """The windows of ``x`` (zero padded) as a contiguous ``(C, *kernel, N, *out)`` array."""
    xp = padded(x, pad, out, ksize, stride, dilate)
    return window_view(xp, ksize, stride, dilate, out).copy()


def col2im(col: np.ndarray, spatial: Sequence[int], stride: Sequence[int],
           pad: Sequence[int], dilate: Sequence[int]) -> np.ndarray:
    """The adjoint of ``im2col``: add each window of ``col`` ``(C, *kernel, N, *out)`` back
    where it was read; returns ``(N, C, *spatial)`` (what fell on the padding is dropped)."""
    nd = len(spatial)
    c, ksize, n, out = col.shape[0], col.shape[1:1 + nd], col.shape[1 + nd], col.shape[2 + nd:]
    extent = [max(p + size, s * (o - 1) + d * (k - 1) + 1)
              for size, k, s, p, d, o in zip(spatial, ksize, stride, pad, dilate, out,
                                             strict=True)]
    acc = np.zeros((c, n, *extent), col.dtype)
    for offset in itertools.product(*(range(k) for k in ksize)):
        target = (slice(None), slice(None)) + tuple(
            slice(j * d, j * d + s * (o - 1) + 1, s)
            for j, d, s, o in zip(offset, dilate, stride, out, strict=True))
        acc[target] += col[(slice(None), *offset)]
    inside = (slice(None), slice(None)) + tuple(
        slice(p, p + size) for p, size in zip(pad, spatial, strict=True))
    return np.ascontiguousarray(acc[inside].swapaxes(0, 1))
