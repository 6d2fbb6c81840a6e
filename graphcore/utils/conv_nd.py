"""Chainer's ``chainer.utils.conv_nd``: ``im2col`` / ``col2im`` over any number of spatial
axes in Chainer's layout ``(N, C, k_1, ..., k_n, out_1, ..., out_n)`` (CPU only)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from graphcore.utils.conv import get_conv_outsize

__all__ = ["as_tuple", "col2im_nd", "col2im_nd_cpu", "im2col_nd", "im2col_nd_cpu"]


def as_tuple(x: int | Sequence[int], n: int) -> tuple[int, ...]:
    """``x`` repeated ``n`` times, or the sequence ``x`` (of length ``n``) as a tuple."""
    if isinstance(x, Sequence):
        if len(x) != n:
            raise ValueError(f"expected {n} values, got {tuple(x)}")
        return tuple(x)
    return (x,) * n


def _window_index(offset, dilate, stride, outs) -> tuple[slice, ...]:
    """The input elements that kernel tap ``offset`` reads, one per output position."""
    return (slice(None), slice(None)) + tuple(
        slice(k * d, k * d + s * o, s)
        for k, d, s, o in zip(offset, dilate, stride, outs, strict=True))


def im2col_nd_cpu(img: np.ndarray, ksize, stride, pad, pval: float = 0,
                  cover_all: bool = False, dilate=1) -> np.ndarray:
    """The windows of ``img: (N, C, *dims)`` padded by ``pad`` (with ``pval``) as
    ``(N, C, *ksize, *outs)``."""
    n, c = img.shape[:2]
    dims = img.shape[2:]
    ndim = len(dims)
    ksize, stride, pad = as_tuple(ksize, ndim), as_tuple(stride, ndim), as_tuple(pad, ndim)
    dilate = as_tuple(dilate, ndim)
    outs = tuple(get_conv_outsize(d, k, s, p, cover_all, di)
                 for d, k, s, p, di in zip(dims, ksize, stride, pad, dilate, strict=True))
    if any(o <= 0 for o in outs):
        raise ValueError(f"im2col_nd: the window {ksize} does not fit the image {img.shape}: "
                         f"output size {outs} (output sizes must be positive)")
    widths = ((0, 0), (0, 0)) + tuple((p, p + s - 1) for s, p in zip(stride, pad, strict=True))
    padded = np.pad(img, widths, mode="constant", constant_values=(pval,))
    col = np.empty((n, c) + ksize + outs, dtype=padded.dtype)
    for offset in itertools.product(*(range(k) for k in ksize)):
        col[(slice(None), slice(None)) + offset] = padded[
            _window_index(offset, dilate, stride, outs)]
    return col


def col2im_nd_cpu(col: np.ndarray, stride, pad, dims, dilate=1) -> np.ndarray:
    """The adjoint of ``im2col_nd_cpu``: ``col: (N, C, *ksize, *outs)`` added back into an
    image of spatial size ``dims`` (the padding is dropped)."""
    n, c = col.shape[:2]
    ndim = (col.ndim - 2) // 2
    ksize, outs = col.shape[2:2 + ndim], col.shape[2 + ndim:]
    stride, pad = as_tuple(stride, ndim), as_tuple(pad, ndim)
    dims, dilate = tuple(dims), as_tuple(dilate, ndim)
    padded = tuple(d + 2 * p + s - 1 for d, p, s in zip(dims, pad, stride, strict=True))
    img = np.zeros((n, c) + padded, dtype=col.dtype)
    for offset in itertools.product(*(range(k) for k in ksize)):
        img[_window_index(offset, dilate, stride, outs)] += col[
            (slice(None), slice(None)) + offset]
    inside = tuple(slice(p, p + d) for p, d in zip(pad, dims, strict=True))
    return img[(slice(None), slice(None)) + inside]


def im2col_nd(img: np.ndarray, ksize, stride, pad, cover_all: bool = False,
              dilate=1) -> np.ndarray:
    """``im2col_nd_cpu`` with zero padding (graphcore has only the CPU)."""
    return im2col_nd_cpu(img, ksize, stride, pad, cover_all=cover_all, dilate=dilate)


def col2im_nd(col: np.ndarray, stride, pad, dims, dilate=1) -> np.ndarray:
    """``col2im_nd_cpu`` (graphcore has only the CPU)."""
    return col2im_nd_cpu(col, stride, pad, dims, dilate)
