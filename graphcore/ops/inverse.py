"""Matrix inverse and determinant: ``inv`` / ``batch_inv`` over the op ``Inv`` and ``det`` /
``batch_det`` over the op ``BatchDet``, each for a matrix or a stack of them (the last two
axes). float16 is computed in float32 (numpy's LAPACK routines have no float16). A singular
matrix has no inverse: ``Inv`` raises ``ArgumentValueError``; its determinant is 0, whose
gradient (through the inverse) raises the same.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.function_node import FunctionNode
from graphcore.registry import register_op
from graphcore.variable import Variable


def _square_stack(label: str, x: np.ndarray) -> None:
    if x.dtype.kind != "f":
        raise errors.DTypeError(f"{label}: expected a floating-point input, got {x.dtype}")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise errors.ShapeError(f"{label}: expected square matrices (..., n, n), got "
                                f"{x.shape}")


def _work(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _mT(x):
    axes = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return g.transpose(x, axes)


def _inverse_array(label: str, x: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.inv(_work(x)).astype(x.dtype, copy=False)
    except np.linalg.LinAlgError:
        raise errors.ArgumentValueError(f"{label}: the matrix is singular (no inverse) for "
                                        f"an input of shape {x.shape}") from None


@register_op
class Inv(FunctionNode):
    """The inverse of each square matrix in the last two axes; gradient
    ``-inv(x).T @ gy @ inv(x).T``."""

    __slots__ = ()
    name = "inv"
    label = "Inv"
    arity = 1
    _out_keep = (0,)
    _in_keep = ()

    def shape_rule(self, inputs):
        x, = inputs
        shapes.float_like_first(self, inputs)
        if x.ndim < 2 or shapes.conflict(x.shape[-1], x.shape[-2]):
            shapes.fail(self, inputs, "expected square matrices (..., n, n)")
        return shapes.TensorType(x.shape, x.dtype),

    def forward(self, inputs):
        x, = inputs
        _square_stack(self.label, x)
        return _inverse_array(self.label, x),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        gy, = grad_outputs
        y_t = _mT(y)
        return -(y_t @ gy @ y_t),


def _inverse(x):
    """``Inv`` of ``x``: an array in a first-order walk, a recorded Variable otherwise."""
    if isinstance(x, Variable):
        return Inv().apply((x,))[0]
    return _inverse_array("Inv", x)


@register_op
class BatchDet(FunctionNode):
    """The determinant of each square matrix in the last two axes (shape ``x.shape[:-2]``);
    gradient ``gy * det(x) * inv(x).T``."""

    __slots__ = ()
    name = "det"
    label = "BatchDet"
    arity = 1
    _out_keep = (0,)
    _in_keep = (0,)

    def shape_rule(self, inputs):
        x, = inputs
        shapes.float_like_first(self, inputs)
        if x.ndim < 2 or shapes.conflict(x.shape[-1], x.shape[-2]):
            shapes.fail(self, inputs, "expected square matrices (..., n, n)")
        return shapes.TensorType(x.shape[:-2], x.dtype),

    def forward(self, inputs):
        x, = inputs
        _square_stack(self.label, x)
        return np.asarray(np.linalg.det(_work(x)), dtype=x.dtype),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        y, = self.get_retained_outputs()
        gy, = grad_outputs
        scale = g.reshape(gy * y, tuple(y.shape) + (1, 1))
        return scale * _mT(_inverse(x)),


def inv(a):
    """The inverse of the square matrix ``a`` (2-D)."""
    _dims("inv", a, 2)
    return Inv().apply((a,))[0]


def batch_inv(a):
    """The inverse of each matrix of ``a`` (a stack of square matrices, 3-D)."""
    _dims("batch_inv", a, 3)
    return Inv().apply((a,))[0]


def det(a):
    """The determinant of the square matrix ``a`` (2-D): a 0-d result."""
    _dims("det", a, 2)
    return BatchDet().apply((a,))[0]


def batch_det(a):
    """The determinant of each matrix of ``a`` (a stack of square matrices, 3-D)."""
    _dims("batch_det", a, 3)
    return BatchDet().apply((a,))[0]


def _dims(name: str, a, ndim: int) -> None:
    shape = a.shape if hasattr(a, "shape") else np.shape(a)
    if len(shape) != ndim:
        raise errors.ShapeError(f"{name}: expected a {ndim}-D input, got shape {tuple(shape)}")
