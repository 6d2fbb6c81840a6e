"""Chainer's ``chainer.utils`` sparse matrices: ``CooMatrix`` (a matrix, or a batch of them,
in coordinate format), ``to_coo`` (from a dense array) and ``get_order`` (whether the
coordinates are sorted by row, 'C', or by column, 'F'). ``F.sparse_matmul`` multiplies one by
a dense array.

Entries past a matrix's non-zeros (a batch pads each matrix to the same number of entries)
have row and column ``-1`` and value 0.
"""

from __future__ import annotations

import numpy as np

from graphcore.variable import Variable

__all__ = ["CooMatrix", "get_order", "to_coo"]


class CooMatrix:
    """A sparse matrix in COO format: ``data`` (a Variable, differentiable when
    ``requires_grad``), ``row`` and ``col`` (int32 indices, ``(nnz,)``, or ``(batch, nnz)``
    for a batch of matrices), ``shape`` (the dense ``(rows, cols)`` of one matrix) and
    ``order`` ('C', 'F' or 'other'; None: found from the indices)."""

    def __init__(self, data: np.ndarray, row: np.ndarray, col: np.ndarray,
                 shape: tuple[int, int], order: str | None = None,
                 requires_grad: bool = False) -> None:
        if not 1 <= data.ndim <= 2:
            raise ValueError("ndim of data must be 1 or 2.")
        if not data.ndim == row.ndim == col.ndim:
            raise ValueError("ndim of data, row and col must be the same.")
        if len(shape) != 2:
            raise ValueError("length of shape must be 2.")
        if not (shape[0] > 0 and shape[1] > 0):
            raise ValueError("numbers in shape must be greater than 0.")
        if order not in ("C", "F", "other", None):
            raise ValueError("order must be 'C', 'F', 'other' or None.")
        self.data = Variable(data, requires_grad=requires_grad)
        self.row = row
        self.col = col
        self.shape = tuple(shape)
        self.order = get_order(row, col) if order is None else order

    def to_dense(self) -> np.ndarray:
        """The dense matrix (or batch of matrices) this one stands for; entries at the same
        coordinates add up."""
        data = self.data.array
        dense = np.zeros(self.shape if data.ndim == 1 else (data.shape[0], *self.shape),
                         dtype=data.dtype)
        keep = (self.row >= 0) & (self.col >= 0)
        if data.ndim == 1:
            np.add.at(dense, (self.row[keep], self.col[keep]), data[keep])
        else:
            batch = np.broadcast_to(np.arange(data.shape[0])[:, None], data.shape)
            np.add.at(dense, (batch[keep], self.row[keep], self.col[keep]), data[keep])
        return dense


def to_coo(x: np.ndarray, ldnz: int | None = None, requires_grad: bool = False) -> CooMatrix:
    """``x`` (a matrix, or a batch of matrices along the first axis) as a ``CooMatrix`` of its
    non-zero entries in row-major order; each matrix gets ``max(nnz, ldnz)`` entries (a batch:
    as many as its fullest matrix), the spare ones padded with index -1 and value 0."""
    if x.ndim == 2:
        rows, cols = np.nonzero(x)
        size = max(len(rows), ldnz or 0)
        data = np.zeros(size, dtype=x.dtype)
        row = np.full(size, -1, dtype=np.int32)
        col = np.full(size, -1, dtype=np.int32)
        data[:len(rows)] = x[rows, cols]
        row[:len(rows)] = rows
        col[:len(rows)] = cols
        return CooMatrix(data, row, col, x.shape, requires_grad=requires_grad)
    if x.ndim == 3:
        size = max([ldnz or 0] + [int(np.count_nonzero(m)) for m in x])
        parts = [to_coo(m, size) for m in x]
        return CooMatrix(np.stack([p.data.array for p in parts]),
                         np.stack([p.row for p in parts]), np.stack([p.col for p in parts]),
                         x.shape[1:], requires_grad=requires_grad)
    raise ValueError(f"ndim of x must be 2 or 3, got shape {x.shape}")


def get_order(row: np.ndarray, col: np.ndarray) -> str:
    """'C' when the coordinates are sorted by row (then column), 'F' when sorted by column
    (then row), else 'other'. Padding entries (index -1) are left out; a coordinate with one
    index -1 and the other not is invalid (ValueError)."""
    if _sorted_by(row, col):
        return "C"
    if _sorted_by(col, row):
        return "F"
    return "other"


def _sorted_by(major: np.ndarray, minor: np.ndarray) -> bool:
    if major.shape != minor.shape:
        raise ValueError("shape of row and col must be the same.")
    if major.ndim != 1:
        return all(_sorted_by(a, b) for a, b in zip(major, minor, strict=True))
    if ((major < 0) != (minor < 0)).any():
        raise ValueError("invalid index combination of row and col.")
    keep = major >= 0
    major, minor = major[keep].astype(np.int64), minor[keep].astype(np.int64)
    if major.size <= 1:
        return True
    step = np.diff(major)
    if (step < 0).any():
        return False
    return bool((np.diff(minor)[step == 0] >= 0).all())
