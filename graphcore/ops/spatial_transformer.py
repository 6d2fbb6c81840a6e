"""Spatial transformer networks (Jaderberg et al. 2015), Chainer's functions:
``spatial_transformer_grid`` (an affine ``theta`` -> the sampling grid, in ``[-1, 1]``
coordinates) and ``spatial_transformer_sampler`` (bilinear samples of ``x`` at a grid,
zeros outside ``x``). Both are composites of registered ops (``matmul``; ``get_item``,
``clip`` and products), so both are differentiable in every input, to any order; the
sampler's gradient with respect to the grid is the bilinear weights' derivative, as Chainer's.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore.ops.array import reshape, transpose
from graphcore.ops.indexing import get_item
from graphcore.ops.linalg import matmul
from graphcore.ops.math import clip


def _arr(x) -> np.ndarray:
    return np.asarray(getattr(x, "array", x))


def spatial_transformer_grid(theta, output_shape):
    """Chainer's ``F.spatial_transformer_grid``: ``theta`` ``(B, 2, 3)`` applied to the
    homogeneous coordinates ``(x, y, 1)`` of an ``output_shape`` ``(H, W)`` grid spanning
    ``[-1, 1]``; returns ``(B, 2, H, W)`` (``x`` then ``y`` source coordinates)."""
    ta = _arr(theta)
    if ta.ndim != 3 or ta.shape[1:] != (2, 3) or ta.dtype.kind != "f":
        raise errors.ShapeError(f"spatial_transformer_grid: expected theta of floats (B, 2, 3),"
                                f" got {ta.dtype} {ta.shape}")
    height, width = (int(n) for n in output_shape)
    ys, xs = np.meshgrid(np.linspace(-1, 1, height, dtype=ta.dtype),
                         np.linspace(-1, 1, width, dtype=ta.dtype), indexing="ij")
    coords = np.stack([xs, ys, np.ones_like(xs)]).reshape(3, height * width)
    return reshape(matmul(theta, coords), (ta.shape[0], 2, height, width))


def spatial_transformer_sampler(x, grid):
    """Chainer's ``F.spatial_transformer_sampler``: ``x`` ``(B, C, H, W)`` sampled bilinearly
    at ``grid`` ``(B, 2, out_H, out_W)`` (``x`` then ``y``, ``-1`` and ``1`` the centres of the
    first and last pixels); a sample outside the image blends with zeros. Returns ``(B, C,
    out_H, out_W)``."""
    xa, ga = _arr(x), _arr(grid)
    if (xa.ndim != 4 or ga.ndim != 4 or ga.shape[1] != 2 or xa.shape[0] != ga.shape[0]
            or xa.dtype.kind != "f" or ga.dtype != xa.dtype):
        raise errors.ShapeError(f"spatial_transformer_sampler: expected x (B, C, H, W) and grid "
                                f"(B, 2, out_H, out_W) of x's float dtype, got x {xa.dtype} "
                                f"{xa.shape}, grid {ga.dtype} {ga.shape}")
    batch, channels, height, width = xa.shape
    out_h, out_w = ga.shape[2:]
    points = reshape(grid, (batch, 2, out_h * out_w))
    # pixel coordinates in an image padded by one zero on every side, clipped to it
    u = clip((get_item(points, (slice(None), 0)) + 1) * ((width - 1) / 2) + 1, 0.0,
             float(width + 1))
    v = clip((get_item(points, (slice(None), 1)) + 1) * ((height - 1) / 2) + 1, 0.0,
             float(height + 1))
    u0 = np.clip(np.floor(_arr(u)), 0, width).astype(np.intp)
    v0 = np.clip(np.floor(_arr(v)), 0, height).astype(np.intp)
    du0, du1 = u - u0.astype(xa.dtype), (u0 + 1).astype(xa.dtype) - u
    dv0, dv1 = v - v0.astype(xa.dtype), (v0 + 1).astype(xa.dtype) - v
    rows = np.arange(batch)[:, None]
    y = None
    for vv, uu, weight in ((v0, u0, du1 * dv1), (v0, u0 + 1, du0 * dv1),
                           (v0 + 1, u0, du1 * dv0), (v0 + 1, u0 + 1, du0 * dv0)):
        # padded (vv, uu) is x's (vv - 1, uu - 1); the padding reads as zero
        inside = (vv >= 1) & (vv <= height) & (uu >= 1) & (uu <= width)
        picked = get_item(x, (rows, slice(None), np.clip(vv - 1, 0, height - 1),
                              np.clip(uu - 1, 0, width - 1)))  # (B, P, C)
        term = picked * reshape(weight * inside.astype(xa.dtype), (batch, -1, 1))
        y = term if y is None else y + term
    return transpose(reshape(y, (batch, out_h, out_w, channels)), (0, 3, 1, 2))
