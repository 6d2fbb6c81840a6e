"""Pooling over regions of interest (ROIs) of ``x: (N, C, H, W)``, Chainer's functions:
``roi_max_pooling_2d``, ``roi_average_pooling_2d`` and ``roi_pooling_2d`` (integer bins),
``roi_max_align_2d`` and ``roi_average_align_2d`` (bilinearly sampled bins, Mask R-CNN's ROI
Align). Each ROI ``(y_min, x_min, y_max, x_max)`` (``roi_pooling_2d``: ``(index, x_min, y_min,
x_max, y_max)``), scaled by ``spatial_scale``, is cut into an ``outsize`` grid of bins.

Every function is a composite of registered ops, so backprop of any order is theirs: the
ROIs' images are gathered (``get_item``), a bin's elements (or its bilinear samples, which
are separable: a row interpolation times a column interpolation) are selected by constant
0/1 or weight matrices (``matmul``), and a bin is reduced by ``max`` or by those matrices'
averaging weights. An empty bin is ``-inf`` in max pooling and align (``0`` in
``roi_pooling_2d``), ``0`` in average pooling and align, as in Chainer.
"""

from __future__ import annotations

import numbers

import numpy as np

from graphcore import errors
from graphcore.ops.array import reshape, transpose
from graphcore.ops.indexing import get_item
from graphcore.ops.linalg import matmul
from graphcore.ops.math import where
from graphcore.ops.reduction import max as max_


def _arr(x) -> np.ndarray:
    return np.asarray(getattr(x, "array", x))


def _pair(label: str, value, what: str, *, none: bool = False) -> tuple:
    pair = tuple(value) if isinstance(value, tuple | list | np.ndarray) else (value, value)
    if len(pair) != 2:
        raise errors.ArgumentValueError(f"{label}: {what} must be one value or two, got "
                                        f"{value!r}")
    for v in pair:
        if v is None and none:
            continue
        if not (isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 1):
            raise TypeError(f"{label}: {what} must be a positive integer or a pair of them, "
                            f"got {value!r}")
    return tuple(None if v is None else int(v) for v in pair)


def _scale(label: str, spatial_scale) -> float:
    if not (isinstance(spatial_scale, numbers.Real) and not isinstance(spatial_scale, bool)
            and spatial_scale > 0):
        raise TypeError(f"{label}: spatial_scale must be a positive number, got "
                        f"{spatial_scale!r}")
    return float(spatial_scale)


def _checked(label: str, x, rois, roi_indices, roi_width: int = 4):
    xa, ra = _arr(x), _arr(rois)
    if xa.ndim != 4 or xa.dtype.kind != "f":
        raise errors.ShapeError(f"{label}: expected x of floats (N, C, H, W), got {xa.dtype} "
                                f"{xa.shape}")
    if ra.ndim != 2 or ra.shape[1] != roi_width or ra.dtype.kind != "f":
        raise errors.ShapeError(f"{label}: expected rois of floats (R, {roi_width}), got "
                                f"{ra.dtype} {ra.shape}")
    if roi_indices is None:
        return xa, ra, None
    ia = _arr(roi_indices)
    if ia.ndim != 1 or ia.dtype.kind not in "iu" or ia.shape[0] != ra.shape[0]:
        raise errors.ShapeError(f"{label}: expected roi_indices of integers ({ra.shape[0]},) "
                                f"(one per ROI), got {ia.dtype} {ia.shape}")
    if ia.size and (ia.min() < 0 or ia.max() >= xa.shape[0]):
        raise errors.ArgumentValueError(f"{label}: roi_indices must lie in [0, {xa.shape[0]})")
    return xa, ra, ia.astype(np.intp)


# --- integer bins ---------------------------------------------------------------------------

def _bin_bounds(starts: np.ndarray, lengths: np.ndarray, out: int, limit: int):
    """Each bin's ``[start, end)`` along one axis, clipped to ``[0, limit]``: ``(R, out)``."""
    stride = lengths.astype(np.float64) / out
    k = np.arange(out, dtype=np.float64)
    lo = np.floor(k * stride[:, None]).astype(np.int64) + starts[:, None]
    hi = np.ceil((k + 1) * stride[:, None]).astype(np.int64) + starts[:, None]
    return np.clip(lo, 0, limit), np.clip(hi, 0, limit)


def _pool_bins(x, rows, cols, indices, reduce: str, empty: float):
    """Max or mean of ``x[indices]`` over the bins ``rows`` ``(R, outh)`` x ``cols``
    ``(R, outw)`` (pairs of ``[start, end)``)."""
    xa = _arr(x)
    (r_lo, r_hi), (c_lo, c_hi) = rows, cols
    xb = get_item(x, indices)  # (R, C, H, W)
    if reduce == "mean":
        # separable means: one averaging matrix per axis
        a_rows = _averaging(r_lo, r_hi, xa.shape[2], xa.dtype)
        a_cols = _averaging(c_lo, c_hi, xa.shape[3], xa.dtype)
        y = matmul(matmul(a_rows[:, None], xb), np.swapaxes(a_cols, 1, 2)[:, None])
        return y
    n_rois = len(indices)
    len_r = int(max((r_hi - r_lo).max(initial=0), 1))
    len_c = int(max((c_hi - c_lo).max(initial=0), 1))
    ir = r_lo[:, :, None] + np.arange(len_r)  # (R, outh, Lr)
    ic = c_lo[:, :, None] + np.arange(len_c)  # (R, outw, Lc)
    in_r = ir < r_hi[:, :, None]
    in_c = ic < c_hi[:, :, None]
    ir = np.minimum(ir, xa.shape[2] - 1)
    ic = np.minimum(ic, xa.shape[3] - 1)
    roi = np.arange(n_rois)[:, None, None, None, None]
    picked = get_item(xb, (roi, slice(None), ir[:, :, :, None, None],
                           ic[:, None, None, :, :]))  # (R, outh, Lr, outw, Lc, C)
    inside = (in_r[:, :, :, None, None] & in_c[:, None, None, :, :])[..., None]
    inside = np.broadcast_to(inside, picked.shape)
    picked = where(inside, picked, np.full(picked.shape, -np.inf, xa.dtype))
    y = max_(picked, axis=(2, 4))  # (R, outh, outw, C)
    y = transpose(y, (0, 3, 1, 2))
    if empty != -np.inf:
        hollow = ~inside.any(axis=(2, 4))
        hollow = np.ascontiguousarray(np.transpose(hollow, (0, 3, 1, 2)))
        y = where(hollow, np.full(y.shape, empty, xa.dtype), y)
    return y


def _averaging(lo: np.ndarray, hi: np.ndarray, limit: int, dtype) -> np.ndarray:
    """``(R, out, limit)``: ``1 / length`` over each bin ``[lo, hi)``, zeros for an empty one."""
    k = np.arange(limit)
    inside = (k >= lo[:, :, None]) & (k < hi[:, :, None])
    count = np.maximum(hi - lo, 1)[:, :, None]
    return (inside / count).astype(dtype)


def _integer_rois(rois: np.ndarray, spatial_scale: float, plus_one: bool):
    """Rounded scaled corners and the sizes of the ROIs, ``(ymin, xmin, height, width)``."""
    scaled = np.rint(rois.astype(np.float64) * spatial_scale).astype(np.int64)
    ymin, xmin, ymax, xmax = scaled.T
    extra = 1 if plus_one else 0
    return ymin, xmin, np.maximum(ymax - ymin + extra, 1), np.maximum(xmax - xmin + extra, 1)


def _roi_pool(label, x, rois, roi_indices, outsize, spatial_scale, reduce, empty):
    outh, outw = _pair(label, outsize, "outsize")
    scale = _scale(label, spatial_scale)
    xa, ra, indices = _checked(label, x, rois, roi_indices)
    ymin, xmin, height, width = _integer_rois(ra, scale, plus_one=False)
    rows = _bin_bounds(ymin, height, outh, xa.shape[2])
    cols = _bin_bounds(xmin, width, outw, xa.shape[3])
    return _pool_bins(x, rows, cols, indices, reduce, empty)


def roi_max_pooling_2d(x, rois, roi_indices, outsize, spatial_scale):
    """Chainer's ``F.roi_max_pooling_2d``: the maximum of each bin of each ROI, ``(R, C,
    outh, outw)`` (``-inf`` for a bin that falls outside ``x``). ``rois``: ``(R, 4)`` as
    ``(y_min, x_min, y_max, x_max)``; ``roi_indices``: which image of ``x`` each is in."""
    return _roi_pool("roi_max_pooling_2d", x, rois, roi_indices, outsize, spatial_scale,
                     "max", -np.inf)


def roi_average_pooling_2d(x, rois, roi_indices, outsize, spatial_scale):
    """Chainer's ``F.roi_average_pooling_2d``: the mean of each bin of each ROI (``0`` for an
    empty bin); arguments as in ``roi_max_pooling_2d``."""
    return _roi_pool("roi_average_pooling_2d", x, rois, roi_indices, outsize, spatial_scale,
                     "mean", 0.0)


def roi_pooling_2d(x, rois, outh, outw, spatial_scale):
    """Chainer's ``F.roi_pooling_2d`` (Fast R-CNN's): ``rois`` ``(R, 5)`` as ``(image index,
    x_min, y_min, x_max, y_max)`` with inclusive corners; the maximum of each bin (``0`` for
    an empty one)."""
    label = "roi_pooling_2d"
    outh, outw = _pair(label, (outh, outw), "outh and outw")
    scale = _scale(label, spatial_scale)
    xa, ra, _ = _checked(label, x, rois, None, roi_width=5)
    indices = ra[:, 0].astype(np.intp)
    if indices.size and (indices.min() < 0 or indices.max() >= xa.shape[0]):
        raise errors.ArgumentValueError(f"{label}: the ROIs' image indexes must lie in "
                                        f"[0, {xa.shape[0]})")
    corners = ra[:, [2, 1, 4, 3]]  # (y_min, x_min, y_max, x_max)
    ymin, xmin, height, width = _integer_rois(corners, scale, plus_one=True)
    rows = _bin_bounds(ymin, height, outh, xa.shape[2])
    cols = _bin_bounds(xmin, width, outw, xa.shape[3])
    return _pool_bins(x, rows, cols, indices, "max", 0.0)


# --- bilinearly sampled bins ----------------------------------------------------------------

def _sampling(starts, lengths, out: int, grid: np.ndarray, limit: int):
    """Along one axis: the interpolation weights ``(R, out, G, limit)`` of each bin's ``G``
    sample points (``G``: the largest grid; a point past a ROI's own grid, or outside
    ``[-1, limit]``, has none) and which points are real ``(R, out, G)``."""
    size = grid.max()
    bin_size = lengths / out
    k = np.arange(out)[None, :, None]
    g = np.arange(size)[None, None, :]
    pos = (starts[:, None, None] + k * bin_size[:, None, None]
           + (g + 0.5) * (bin_size / grid)[:, None, None])
    real = (g < grid[:, None, None]) & (pos >= -1) & (pos <= limit)
    low = np.floor(pos)
    low = np.where(low == limit, low - 1, low)
    high = low + 1
    pos = np.where(low <= -1, 0.0, np.where(high >= limit, limit - 1.0, pos))
    w_low, w_high = high - pos, pos - low
    cells = np.arange(limit)
    weights = (np.where(low[..., None] == cells, w_low[..., None], 0.0)
               + np.where(high[..., None] == cells, w_high[..., None], 0.0))
    return weights * real[..., None], real


def _align(label, x, rois, roi_indices, outsize, spatial_scale, sampling_ratio, reduce):
    outh, outw = _pair(label, outsize, "outsize")
    scale = _scale(label, spatial_scale)
    ratio = _pair(label, sampling_ratio, "sampling_ratio", none=True)
    xa, ra, indices = _checked(label, x, rois, roi_indices)
    height, width = xa.shape[2:]
    scaled = ra.astype(np.float64) * scale
    y0, x0, y1, x1 = scaled.T
    roi_h, roi_w = np.maximum(y1 - y0, 1.0), np.maximum(x1 - x0, 1.0)
    grid_h = (np.full(len(ra), ratio[0]) if ratio[0] is not None
              else np.ceil(roi_h / outh)).astype(np.int64)
    grid_w = (np.full(len(ra), ratio[1]) if ratio[1] is not None
              else np.ceil(roi_w / outw)).astype(np.int64)
    if len(ra) == 0:
        grid_h = grid_w = np.ones(0, np.int64)
    grid_h, grid_w = np.maximum(grid_h, 1), np.maximum(grid_w, 1)
    w_rows, real_rows = _sampling(y0, roi_h, outh, grid_h, height)  # (R, outh, Gh, H)
    w_cols, real_cols = _sampling(x0, roi_w, outw, grid_w, width)   # (R, outw, Gw, W)
    xb = get_item(x, indices)  # (R, C, H, W)
    if reduce == "mean":
        # the mean of a bin's samples: (mean row weights) x (mean column weights)
        a_rows = (w_rows.sum(axis=2) / grid_h[:, None, None]).astype(xa.dtype)
        a_cols = (w_cols.sum(axis=2) / grid_w[:, None, None]).astype(xa.dtype)
        return matmul(matmul(a_rows[:, None], xb), np.swapaxes(a_cols, 1, 2)[:, None])
    n_rois = len(ra)
    gh, gw = w_rows.shape[2], w_cols.shape[2]
    s_rows = w_rows.reshape(n_rois, 1, outh * gh, height).astype(xa.dtype)
    s_cols = np.swapaxes(w_cols.reshape(n_rois, outw * gw, width), 1, 2)[:, None]
    samples = matmul(matmul(s_rows, xb), s_cols.astype(xa.dtype))
    samples = reshape(samples, (n_rois, xa.shape[1], outh, gh, outw, gw))
    real = real_rows[:, None, :, :, None, None] & real_cols[:, None, None, None, :, :]
    real = np.broadcast_to(real, samples.shape)
    samples = where(real, samples, np.full(samples.shape, -np.inf, xa.dtype))
    return max_(samples, axis=(3, 5))


def roi_max_align_2d(x, rois, roi_indices, outsize, spatial_scale, sampling_ratio=None):
    """Chainer's ``F.roi_max_align_2d``: the maximum of the bilinearly interpolated samples
    of each bin (``sampling_ratio`` per axis, default ``ceil(ROI size / outsize)``), ``-inf``
    where a bin has none inside ``x``. ``rois``: ``(R, 4)`` as ``(y_min, x_min, y_max,
    x_max)``; ``roi_indices``: which image of ``x`` each is in."""
    return _align("roi_max_align_2d", x, rois, roi_indices, outsize, spatial_scale,
                  sampling_ratio, "max")


def roi_average_align_2d(x, rois, roi_indices, outsize, spatial_scale, sampling_ratio=None):
    """Chainer's ``F.roi_average_align_2d`` (Mask R-CNN's ROI Align): the mean of the
    bilinearly interpolated samples of each bin (samples outside ``x`` count as zeros);
    arguments as in ``roi_max_align_2d``."""
    return _align("roi_average_align_2d", x, rois, roi_indices, outsize, spatial_scale,
                  sampling_ratio, "mean")
