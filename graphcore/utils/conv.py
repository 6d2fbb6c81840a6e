"""Chainer's ``chainer.utils.conv``: the output sizes of a convolution and of its transpose,
and ``im2col`` / ``col2im`` on 2-d images in Chainer's layout ``(N, C, kh, kw, out_h,
out_w)``. There is no GPU: ``im2col`` and ``col2im`` are the CPU ones.

The convolution ops lay their columns out differently (``graphcore.ops.windows``: channels and
kernel first, for one GEMM); the size formulas are the ones they use.
"""

from __future__ import annotations

import numpy as np

__all__ = ["col2im", "col2im_cpu", "get_conv_outsize", "get_deconv_outsize", "im2col",
           "im2col_cpu"]


def get_conv_outsize(size: int, k: int, s: int, p: int, cover_all: bool = False,
                     d: int = 1) -> int:
    """Windows of size ``k`` (dilation ``d``, stride ``s``) over ``size`` elements padded by
    ``p`` on both sides; ``cover_all`` adds a last, partial window so that every element is
    covered."""
    dk = k + (k - 1) * (d - 1)
    if cover_all:
        return (size + p * 2 - dk + s - 1) // s + 1
    return (size + p * 2 - dk) // s + 1


def get_deconv_outsize(size: int, k: int, s: int, p: int, cover_all: bool = False,
                       d: int = 1) -> int:
    """The output size of a transposed convolution: the input size whose convolution has
    ``size`` windows (the largest one; ``cover_all``: the smallest)."""
    dk = (k - 1) * d + 1
    if cover_all:
        return s * (size - 1) + dk - s + 1 - 2 * p
    return s * (size - 1) + dk - 2 * p


def _positive(out_h: int, out_w: int, shape) -> None:
    if out_h <= 0 or out_w <= 0:
        raise ValueError(f"im2col: the window does not fit the image {tuple(shape)}: output "
                         f"size ({out_h}, {out_w}) (height and width must be positive)")


def im2col_cpu(img: np.ndarray, kh: int, kw: int, sy: int, sx: int, ph: int, pw: int,
               pval: float = 0, cover_all: bool = False, dy: int = 1, dx: int = 1,
               out_h: int | None = None, out_w: int | None = None) -> np.ndarray:
    """The ``kh x kw`` windows of ``img: (N, C, H, W)`` (padded by ``ph, pw`` with ``pval``)
    as ``col: (N, C, kh, kw, out_h, out_w)``: ``col[n, c, i, j, y, x] = img[n, c, y * sy + i *
    dy - ph, x * sx + j * dx - pw]``."""
    n, c, h, w = img.shape
    if out_h is None:
        out_h = get_conv_outsize(h, kh, sy, ph, cover_all, dy)
    if out_w is None:
        out_w = get_conv_outsize(w, kw, sx, pw, cover_all, dx)
    _positive(out_h, out_w, img.shape)
    padded = np.pad(img, ((0, 0), (0, 0), (ph, ph + sy - 1), (pw, pw + sx - 1)),
                    mode="constant", constant_values=(pval,))
    col = np.empty((n, c, kh, kw, out_h, out_w), dtype=padded.dtype)
    for i in range(kh):
        top = i * dy
        for j in range(kw):
            left = j * dx
            col[:, :, i, j] = padded[:, :, top:top + sy * out_h:sy, left:left + sx * out_w:sx]
    return col


def col2im_cpu(col: np.ndarray, sy: int, sx: int, ph: int, pw: int, h: int, w: int,
               dy: int = 1, dx: int = 1) -> np.ndarray:
    """The adjoint of ``im2col_cpu``: each window of ``col: (N, C, kh, kw, out_h, out_w)``
    added back where it was read; returns ``(N, C, h, w)`` (the padding is dropped)."""
    n, c, kh, kw, out_h, out_w = col.shape
    img = np.zeros((n, c, h + 2 * ph + sy - 1, w + 2 * pw + sx - 1), dtype=col.dtype)
    for i in range(kh):
        top = i * dy
        for j in range(kw):
            left = j * dx
            img[:, :, top:top + sy * out_h:sy, left:left + sx * out_w:sx] += col[:, :, i, j]
    return img[:, :, ph:h + ph, pw:w + pw]


def im2col(img: np.ndarray, kh: int, kw: int, sy: int, sx: int, ph: int, pw: int,
           cover_all: bool = False, dy: int = 1, dx: int = 1, out_h: int | None = None,
           out_w: int | None = None) -> np.ndarray:
    """``im2col_cpu`` with zero padding (Chainer's dispatch; graphcore has only the CPU)."""
    return im2col_cpu(img, kh, kw, sy, sx, ph, pw, cover_all=cover_all, dy=dy, dx=dx,
                      out_h=out_h, out_w=out_w)


def col2im(col: np.ndarray, sy: int, sx: int, ph: int, pw: int, h: int, w: int, dy: int = 1,
           dx: int = 1) -> np.ndarray:
    """``col2im_cpu`` (Chainer's dispatch; graphcore has only the CPU)."""
    return col2im_cpu(col, sy, sx, ph, pw, h, w, dy, dx)
