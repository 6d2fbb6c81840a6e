"""Deformable convolution's sampler (Chainer's ``F.deformable_convolution_2d_sampler``; Dai et
al., "Deformable Convolutional Networks", 2017): a 2-d convolution whose filter taps read the
input at learned fractional offsets.

``offset: (N, 2 * kh * kw, out_h, out_w)`` holds, for each output position, the x offsets of
the ``kh * kw`` taps and then their y offsets. Tap ``(i, j)`` of output ``(p, q)`` reads the
zero-padded input at ``(p * sy + i + dy, q * sx + j + dx)`` by bilinear interpolation (zero
outside the padded input), and the samples are multiplied with ``W: (out, C, kh, kw)`` as in
``convolution_2d``. Zero offsets give ``convolution_2d`` exactly.

A composite of registered ops (``get_item`` of the four neighbours, products with the
interpolation weights, one ``matmul``), so it is differentiable in ``x``, ``offset``, ``W``
and ``b`` to any order (the weights are piecewise linear in ``offset``).
"""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore.ops.array import broadcast_to, reshape, transpose
from graphcore.ops.indexing import get_item
from graphcore.ops.linalg import matmul
from graphcore.ops.windows import as_tuple
from graphcore.variable import as_variable


def deformable_convolution_2d_sampler(x, offset, W, b=None, stride=1, pad=0):
    """Chainer's ``F.deformable_convolution_2d_sampler``: ``x`` (N, C, H, W), ``offset`` (N, 2
    * kh * kw, out_h, out_w) (x offsets, then y offsets), ``W`` (out, C, kh, kw), optional
    ``b`` (out,)."""
    label = "deformable_convolution_2d_sampler"
    sy, sx = as_tuple(stride, 2, label, "stride", 1)
    ph, pw = as_tuple(pad, 2, label, "pad", 0)
    x, offset, W = as_variable(x), as_variable(offset), as_variable(W)
    if x.ndim != 4 or W.ndim != 4 or offset.ndim != 4 or W.shape[1] != x.shape[1]:
        raise errors.ShapeError(f"{label}: expected x (N, C, H, W), offset (N, 2 kh kw, out_h, "
                                f"out_w) and W (out, C, kh, kw), got {x.shape}, "
                                f"{offset.shape} and {W.shape}")
    out_c, _, kh, kw = W.shape
    n, c, h, w = x.shape
    taps = kh * kw
    if offset.shape[0] != n or offset.shape[1] != 2 * taps:
        raise errors.ShapeError(f"{label}: the offset {offset.shape} does not match the batch "
                                f"{n} and the kernel size ({kh}, {kw}) (2 * {taps} channels)")
    out_h, out_w = offset.shape[2:]

    # where each tap reads without an offset, in the unpadded input's coordinates
    rows = (np.arange(out_h) * sy)[None, :, None] + np.repeat(np.arange(kh), kw)[:, None, None]
    cols = (np.arange(out_w) * sx)[None, None, :] + np.tile(np.arange(kw), kh)[:, None, None]
    base_y = (rows - ph).astype(offset.dtype)[None]  # (1, taps, out_h, 1)
    base_x = (cols - pw).astype(offset.dtype)[None]  # (1, taps, 1, out_w)
    sample_y = offset[:, taps:] + base_y  # (N, taps, out_h, out_w)
    sample_x = offset[:, :taps] + base_x
    top = np.floor(sample_y.array)
    left = np.floor(sample_x.array)
    frac_y = sample_y - top  # differentiable in the offset
    frac_x = sample_x - left

    pixels = reshape(transpose(x, (0, 2, 3, 1)), (n * h * w, c))
    batch = (np.arange(n) * (h * w))[:, None, None, None]
    samples = None
    for dy, weight_y in ((0, 1 - frac_y), (1, frac_y)):
        for dx, weight_x in ((0, 1 - frac_x), (1, frac_x)):
            yi, xi = top.astype(np.int64) + dy, left.astype(np.int64) + dx
            inside = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
            index = batch + np.clip(yi, 0, h - 1) * w + np.clip(xi, 0, w - 1)
            weight = weight_y * weight_x * inside.astype(offset.dtype)
            corner = get_item(pixels, index) * reshape(weight, weight.shape + (1,))
            samples = corner if samples is None else samples + corner
    # samples: (N, taps, out_h, out_w, C) -> (N * out_h * out_w, C * taps)
    samples = reshape(transpose(samples, (0, 2, 3, 4, 1)), (n * out_h * out_w, c * taps))
    filters = reshape(transpose(W, (1, 2, 3, 0)), (c * taps, out_c))
    y = transpose(reshape(matmul(samples, filters), (n, out_h, out_w, out_c)), (0, 3, 1, 2))
    if b is not None:
        y = y + broadcast_to(reshape(b, (1, out_c, 1, 1)), y.shape)
    return y
