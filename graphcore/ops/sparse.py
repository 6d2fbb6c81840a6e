"""Products of a sparse COO matrix and a dense one: ``sparse_matmul`` (Chainer's
``F.sparse_matmul``), over the ops ``CooMatMul`` (sparse times dense) and ``CooMatMulGradSP``
(a dense product sampled at the sparse matrix's coordinates: the gradient of its values).

The sparse operand is its values array, an input of the op; its coordinates, shape and order
are attributes (``graphcore.utils.sparse.CooMatrix`` holds them together). A coordinate of -1
is padding and contributes nothing. Each op computes in the numpy result type of its inputs
(float16 accumulates in float32) unless ``dtype`` names the output's.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore.attributes import Attr
from graphcore.function_node import FunctionNode
from graphcore.registry import register_op
from graphcore.utils.sparse import CooMatrix
from graphcore.variable import Variable

_SPARSE_ATTRS = {
    "sp_row": Attr(object, required=True, doc="row index of each entry (-1: padding), int"),
    "sp_col": Attr(object, required=True, doc="column index of each entry (-1: padding), int"),
    "sp_shape": Attr(tuple, required=True, items=int, doc="(rows, cols) of the sparse matrix"),
    "sp_order": Attr(str, "other", choices=("C", "F", "other"),
                     doc="'C': entries sorted by row, 'F': by column (a hint)"),
    "transa": Attr(bool, False, doc="transpose the first operand"),
    "transb": Attr(bool, False, doc="transpose the second operand"),
    "transc": Attr(bool, False, doc="transpose the result"),
    "dtype": Attr(object, None, doc="output dtype (None: the inputs' result type)"),
}


class _CooOp(FunctionNode):
    __slots__ = ("sp_row", "sp_col", "sp_shape", "sp_order", "transa", "transb", "transc",
                 "dtype")
    arity = 2
    _in_keep = (0, 1)
    attributes = _SPARSE_ATTRS

    def __init__(self, sp_row, sp_col, sp_shape, sp_order="other", transa=False, transb=False,
                 transc=False, dtype=None) -> None:
        sp_row, sp_col = np.asarray(sp_row), np.asarray(sp_col)
        if sp_row.ndim != sp_col.ndim:
            raise ValueError("ndim of sp_row and sp_col must be the same.")
        if sp_row.ndim not in (1, 2):
            raise ValueError("ndim of sp_row and sp_col must be one or two.")
        if sp_row.shape != sp_col.shape:
            raise ValueError("shape of sp_row and sp_col must be the same.")
        if len(sp_shape) != 2:
            raise ValueError("len(sp_shape) must be two.")
        self.sp_row = sp_row
        self.sp_col = sp_col
        self.sp_shape = tuple(int(n) for n in sp_shape)
        self.sp_order = sp_order
        self.transa = transa
        self.transb = transb
        self.transc = transc
        self.dtype = None if dtype is None else np.dtype(dtype)

    def _out_dtype(self, a: np.ndarray, b: np.ndarray) -> np.dtype:
        return self.dtype if self.dtype is not None else np.result_type(a.dtype, b.dtype)

    def _out_type(self, a: shapes.TensorType, b: shapes.TensorType) -> np.dtype | None:
        return self.dtype if self.dtype is not None else shapes.result_dtype(a.dtype, b.dtype)

    def _check_batch(self, ndim: int, *arrays: np.ndarray) -> None:
        if ndim == 3 and any(a.shape[0] != self.sp_row.shape[0] for a in arrays):
            raise errors.ShapeError(
                f"{self.label}: batch sizes differ: the sparse matrix has "
                f"{self.sp_row.shape[0]}, the operands {[a.shape[0] for a in arrays]}")


def _float(label: str, *arrays: np.ndarray) -> None:
    for a in arrays:
        if a.dtype.kind != "f":
            raise errors.DTypeError(f"{label}: expected floating-point inputs, got {a.dtype}")


def _run(node: FunctionNode, inputs: tuple):
    """``node`` on ``inputs``: its array if all are arrays (a first-order walk), else a
    recorded Variable (double backprop)."""
    if not any(isinstance(x, Variable) for x in inputs):
        return node.forward(inputs)[0]
    return node.apply(inputs)[0]


def _accumulation(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype == np.float16 else dtype


@register_op
class CooMatMul(_CooOp):
    """``C = op(A) @ op(B)`` (then ``C.T`` with ``transc``) for a sparse ``A`` given by its
    values ``sp`` (``(nnz,)`` or ``(batch, nnz)``) and the coordinates in the attributes, and
    a dense ``B`` (``(k, n)`` or ``(batch, k, n)``)."""

    name = "coo_matmul"
    label = "CooMatMul"

    def shape_rule(self, inputs):
        sp, dn = inputs
        shapes.float_like_first(self, inputs)
        shapes.float_like_first(self, inputs[1:])
        if sp.ndim != self.sp_row.ndim or dn.ndim != sp.ndim + 1:
            shapes.fail(self, inputs, "expected values (nnz,) with a dense (k, n), or values "
                                      "(batch, nnz) with a dense (batch, k, n)")
        m, k = self.sp_shape[::-1] if self.transa else self.sp_shape
        dn_k, dn_n = dn.shape[-2:][::-1] if self.transb else dn.shape[-2:]
        shapes.expect_dim(self, inputs, dn_k, k, "the dense operand's inner size")
        out = (dn_n, m) if self.transc else (m, dn_n)
        return shapes.TensorType(sp.shape[:-1] + out, self._out_type(sp, dn)),

    def forward(self, inputs):
        sp, dn = inputs
        self._check(sp, dn)
        dtype = self._out_dtype(sp, dn)
        row, col, (m, _k) = self.sp_row, self.sp_col, self.sp_shape
        if self.transa:
            row, col, m = col, row, _k
        dense = dn.swapaxes(-1, -2) if self.transb else dn
        work = _accumulation(dtype)
        keep = (row >= 0) & (col >= 0)
        values = sp[keep].astype(work, copy=False)[:, None]
        if sp.ndim == 1:
            out = np.zeros((m, dense.shape[-1]), work)
            np.add.at(out, row[keep], values * dense[col[keep]])
        else:
            batch = np.broadcast_to(np.arange(sp.shape[0])[:, None], sp.shape)[keep]
            out = np.zeros((sp.shape[0], m, dense.shape[-1]), work)
            np.add.at(out, (batch, row[keep]), values * dense[batch, col[keep]])
        if self.transc:
            out = out.swapaxes(-1, -2)
        return np.ascontiguousarray(out, dtype=dtype),

    def _check(self, sp, dn):
        _float(self.label, sp, dn)
        k = self.sp_shape[0 if self.transa else 1]
        dn_k = dn.shape[-1 if self.transb else -2] if dn.ndim >= 2 else None
        if not 2 <= dn.ndim <= 3 or sp.ndim != dn.ndim - 1 or \
                sp.shape[-1] != self.sp_row.shape[-1] or k != dn_k:
            raise errors.ShapeError(
                f"{self.label}: expected values of shape {self.sp_row.shape} for a sparse "
                f"{self.sp_shape} matrix (transa={self.transa}) and a dense operand of "
                f"{self.sp_row.ndim + 1} dimensions with {k} on its "
                f"{'last' if self.transb else 'second-last'} axis (transb={self.transb}), "
                f"got values {sp.shape} and dense {dn.shape}")
        self._check_batch(dn.ndim, sp, dn)

    def backward(self, indexes, grad_outputs):
        sp, dn = self.get_retained_inputs()
        gc, = grad_outputs
        g_sp = g_dn = None
        if 0 in indexes:
            g_sp = _run(CooMatMulGradSP(self.sp_row, self.sp_col, self.sp_shape, self.sp_order,
                                        self.transc, not self.transb, self.transa,
                                        dtype=sp.dtype), (gc, dn))
        if 1 in indexes:
            g_dn = _run(CooMatMul(self.sp_row, self.sp_col, self.sp_shape, self.sp_order,
                                  not self.transa, self.transc, self.transb, dtype=dn.dtype),
                        (sp, gc))
        return g_sp, g_dn


@register_op
class CooMatMulGradSP(_CooOp):
    """``(op(a) @ op(b))`` read at the sparse matrix's coordinates (transposed with
    ``transc``): an array of the sparse values' shape, 0 at padding entries. The gradient of
    ``CooMatMul``'s sparse values."""

    name = "coo_matmul_grad_sp"
    label = "CooMatMulGradSP"

    def shape_rule(self, inputs):
        a, b = inputs
        shapes.float_like_first(self, inputs)
        shapes.float_like_first(self, inputs[1:])
        if not 2 <= a.ndim <= 3 or a.ndim != b.ndim:
            shapes.fail(self, inputs, "expected two 2-d or two 3-d operands")
        return shapes.TensorType(self.sp_row.shape, self._out_type(a, b)),

    def forward(self, inputs):
        a, b = inputs
        self._check(a, b)
        dtype = self._out_dtype(a, b)
        lhs = a.swapaxes(-1, -2) if self.transa else a
        rhs = b.swapaxes(-1, -2) if self.transb else b
        row, col = (self.sp_col, self.sp_row) if self.transc else (self.sp_row, self.sp_col)
        keep = (row >= 0) & (col >= 0)
        work = _accumulation(dtype)
        out = np.zeros(row.shape, dtype)
        if a.ndim == 2:
            rows, cols = lhs[row[keep]], rhs[:, col[keep]].T
        else:
            batch = np.broadcast_to(np.arange(row.shape[0])[:, None], row.shape)[keep]
            rows, cols = lhs[batch, row[keep]], rhs[batch, :, col[keep]]
        out[keep] = np.einsum("ij,ij->i", rows.astype(work, copy=False),
                              cols.astype(work, copy=False))
        return out,

    def _check(self, a, b):
        _float(self.label, a, b)
        m, n = self.sp_shape[::-1] if self.transc else self.sp_shape
        ok = 2 <= a.ndim <= 3 and a.ndim == b.ndim
        if ok:
            a_m, a_k = a.shape[-2:][::-1] if self.transa else a.shape[-2:]
            b_k, b_n = b.shape[-2:][::-1] if self.transb else b.shape[-2:]
            ok = a_m == m and b_n == n and a_k == b_k
        if not ok:
            raise errors.ShapeError(
                f"{self.label}: expected operands whose product (transa={self.transa}, "
                f"transb={self.transb}) has the sparse matrix's shape {(m, n)}, got "
                f"{a.shape} and {b.shape}")
        self._check_batch(a.ndim, a, b)

    def backward(self, indexes, grad_outputs):
        a, b = self.get_retained_inputs()
        g_sp, = grad_outputs
        g_a = g_b = None
        if 0 in indexes:
            g_a = _run(CooMatMul(self.sp_row, self.sp_col, self.sp_shape, self.sp_order,
                                 self.transc, not self.transb, self.transa, dtype=a.dtype),
                       (g_sp, b))
        if 1 in indexes:
            g_b = _run(CooMatMul(self.sp_row, self.sp_col, self.sp_shape, self.sp_order,
                                 not self.transc, self.transa, not self.transb, dtype=b.dtype),
                       (g_sp, a))
        return g_a, g_b


def sparse_matmul(a, b, transa: bool = False, transb: bool = False):
    """``op(a) @ op(b)`` where one of ``a``, ``b`` is a ``CooMatrix`` (a matrix, or a batch of
    them) and the other a dense Variable or array (2-D, or 3-D for a batch); ``transa`` /
    ``transb`` transpose each matrix first. Differentiable in the dense operand and in the
    sparse matrix's values."""
    dense = (Variable, np.ndarray)
    if isinstance(a, CooMatrix) and isinstance(b, dense):
        return CooMatMul(a.row, a.col, a.shape, a.order, transa=transa, transb=transb,
                         transc=False).apply((a.data, b))[0]
    if isinstance(a, dense) and isinstance(b, CooMatrix):
        # (A B) = (B^T A^T)^T: the sparse operand goes first
        return CooMatMul(b.row, b.col, b.shape, b.order, transa=not transb,
                         transb=not transa, transc=True).apply((b.data, a))[0]
    raise ValueError(f"sparse_matmul: one operand must be a CooMatrix and the other a dense "
                     f"Variable or array, got {type(a).__name__} and {type(b).__name__}")
