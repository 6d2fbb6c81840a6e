"""Matrix products: ``matmul`` (batched, numpy semantics), ``batch_matmul`` (Chainer's
deprecated form) and ``linear`` (``x @ W.T + b``).

The ops compute in one dtype; the functions take operands of different floating dtypes as
Chainer does: ``matmul`` casts both to their numpy result type first, ``linear`` computes in
the result type and returns ``x``'s dtype, so each gradient arrives in its input's dtype
(through the casts) and the same-dtype path records no extra node."""

from __future__ import annotations

import warnings

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.function_node import FunctionNode
from graphcore.ops.array import broadcast_to, cast, reshape
from graphcore.ops.checks import same_dtype
from graphcore.ops.einsum import einsum
from graphcore.ops.math import square
from graphcore.ops.reduction import sum as sum_
from graphcore.registry import register_op


def _mT(x):
    """Swap the last two axes (a matrix transpose, batched)."""
    if x.ndim == 2:
        return x.T
    axes = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return g.transpose(x, axes)


@register_op
class MatMul(FunctionNode):
    """Matrix product of two arrays of 2 or more dimensions (leading axes broadcast)."""

    __slots__ = ()
    name = "matmul"
    label = "MatMul"
    arity = 2

    def shape_rule(self, inputs):
        a, b = inputs
        dtype = shapes.same_dtype(self, inputs, inputs)
        if a.ndim < 2 or b.ndim < 2:
            shapes.fail(self, inputs, "inputs need 2 or more dimensions")
        if shapes.conflict(a.shape[-1], b.shape[-2]):
            shapes.fail(self, inputs, "expected a.shape[-1] == b.shape[-2]")
        batch = shapes.broadcast(self, inputs, [a.shape[:-2], b.shape[:-2]])
        return shapes.TensorType(batch + (a.shape[-2], b.shape[-1]), dtype),

    def forward(self, inputs):
        a, b = inputs
        if a.dtype != b.dtype:
            same_dtype(self.label, a, b)
        if a.ndim < 2 or b.ndim < 2:
            raise errors.ShapeError(f"{self.label}: inputs need 2 or more dimensions, got "
                                    f"{a.shape} and {b.shape} (F.matmul reshapes vectors)")
        return a @ b,

    def check_inputs(self, inputs):
        a, b = inputs
        if a.shape[-1] != b.shape[-2]:
            raise errors.ShapeError(
                f"{self.label}: expected a.shape[-1] == b.shape[-2], got a {a.shape} and "
                f"b {b.shape}")

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        a, b = self.get_retained_inputs()
        ga = g.sum_to(gy @ _mT(b), a.shape) if 0 in indexes else None
        gb = g.sum_to(_mT(a) @ gy, b.shape) if 1 in indexes else None
        return ga, gb


@register_op
class LinearFunction(FunctionNode):
    """``x @ W.T + b`` over the last axis: ``(..., in) -> (..., out)``, ``W: (out, in)``."""

    __slots__ = ()
    name = "linear"
    label = "LinearFunction"
    arity = None  # x, W and an optional b

    def shape_rule(self, inputs):
        if len(inputs) not in (2, 3):
            shapes.fail(self, inputs, f"takes x, W and an optional b, got {len(inputs)} inputs")
        x, W = inputs[0], inputs[1]
        shapes.expect_ndim(self, inputs, W, 2, "W (out, in)")
        if x.ndim == 0 or shapes.conflict(x.shape[-1], W.shape[1]):
            shapes.fail(self, inputs, f"expected x of shape (..., {W.shape[1]}) for W "
                                      f"{shapes.show_shape(W.shape)}")
        out = W.shape[0]
        if len(inputs) == 3:
            b = inputs[2]
            if b.ndim != 1 or shapes.conflict(b.shape[0], out):
                shapes.fail(self, inputs, f"expected b of shape ({out},) for W "
                                          f"{shapes.show_shape(W.shape)}")
            out = shapes.merge(out, b.shape[0])
        return shapes.TensorType(x.shape[:-1] + (out,), x.dtype),

    def forward(self, inputs):
        x, W = inputs[0], inputs[1]
        if x.dtype != W.dtype or x.ndim == 0 or x.shape[-1] != W.shape[1]:
            self.check_inputs(inputs)
        y = x @ W.T
        if y.dtype != x.dtype:  # a W of another float dtype: the output is x's (Chainer's)
            y = y.astype(x.dtype)
        if len(inputs) == 3:
            y += inputs[2]
        return y,

    def check_inputs(self, inputs):
        x, W = inputs[0], inputs[1]
        if W.ndim != 2:
            raise errors.ShapeError(f"{self.label}: W must be 2-D (out, in), got {W.shape}")
        if x.ndim == 0 or x.shape[-1] != W.shape[1]:
            raise errors.ShapeError(
                f"{self.label}: expected x of shape (..., {W.shape[1]}) for W {W.shape}, got "
                f"x {x.shape}")
        if len(inputs) == 3 and inputs[2].shape != (W.shape[0],):
            raise errors.ShapeError(f"{self.label}: expected b of shape ({W.shape[0]},) for "
                                    f"W {W.shape}, got b {inputs[2].shape}")
        # x, W and b may be of different float dtypes, as in Chainer: y is in x's dtype
        for other in inputs[1:]:
            if x.dtype.kind != "f" or other.dtype.kind != "f":
                same_dtype(self.label, x, other)

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        x, W = self.get_retained_inputs()[:2]
        mixed = W.dtype != x.dtype or (len(self.inputs) == 3 and self.inputs[2].dtype != x.dtype)
        if W.dtype != x.dtype:
            W = _in_dtype(W, x.dtype)  # the products in x's (and gy's) dtype
        gx = None
        if 0 in indexes:
            if type(gy) is np.ndarray and gy.ndim >= 2 and gy.shape[-1] == 1 \
                    and type(W) is np.ndarray:
                gx = gy * W  # one output unit: an outer product, several times a matmul's speed
            else:
                gx = gy @ W
        gW = gb = None
        if 1 in indexes or 2 in indexes:
            gy2 = g.reshape(gy, (-1, gy.shape[-1])) if gy.ndim != 2 else gy
            if 1 in indexes:
                x2 = g.reshape(x, (-1, x.shape[-1])) if x.ndim != 2 else x
                gW = gy2.T @ x2
            if 2 in indexes:
                gb = g.sum(gy2, axis=0)
        grads = (gx, gW, gb) if len(self.inputs) == 3 else (gx, gW)
        if mixed:  # each gradient back in its input's dtype
            grads = tuple(None if gv is None else _in_dtype(gv, v.dtype)
                          for gv, v in zip(grads, self.inputs, strict=True))
        return grads


def _in_dtype(gv, dtype):
    """A gradient in its input's dtype (inputs of mixed float dtypes)."""
    return gv if gv.dtype == dtype else g.cast(gv, dtype)


def matmul(a, b, transa: bool = False, transb: bool = False):
    """Matrix product with numpy's semantics; 1-D operands are treated as numpy does.

    ``transa`` / ``transb`` (Chainer's arguments) transpose the last two axes of ``a`` / ``b``
    first; they are recorded as transpose nodes, so every pass and kernel sees plain ops.
    Operands of different dtypes are cast to their numpy result type (Chainer's promotion)."""
    a_array, b_array = _arr(a), _arr(b)
    if a_array.dtype != b_array.dtype:
        a, b = _promoted(a, a_array, b, b_array)
    if transa and a_array.ndim >= 2:
        a = _mT(a)
    if transb and b_array.ndim >= 2:
        b = _mT(b)
    a_vec, b_vec = a_array.ndim == 1, b_array.ndim == 1
    if not (a_vec or b_vec):
        return MatMul().apply((a, b))[0]
    a2 = reshape(a, (1, -1)) if a_vec else a
    b2 = reshape(b, (-1, 1)) if b_vec else b
    y = MatMul().apply((a2, b2))[0]
    shape = y.shape[:-2] + (() if a_vec else y.shape[-2:-1]) + (() if b_vec else y.shape[-1:])
    return reshape(y, shape)


def batch_matmul(a, b, transa: bool = False, transb: bool = False):
    """Chainer's deprecated batched product: ``a`` and ``b`` hold one matrix per row of their
    first axis (a 2-D ``(B, N)`` operand is ``B`` matrices of ``N x 1``; any further axes are
    flattened into the columns), multiplied pairwise. Warns ``DeprecationWarning``; use
    ``matmul``."""
    warnings.warn("batch_matmul is deprecated. Use matmul instead.", DeprecationWarning,
                  stacklevel=2)
    for name, x in (("a", a), ("b", b)):
        if _arr(x).ndim not in (2, 3):
            raise errors.ShapeError(f"batch_matmul: {name} must be 2-D or 3-D, got "
                                    f"{_arr(x).shape}")
    a = reshape(a, tuple(a.shape[:2]) + (-1,))
    b = reshape(b, tuple(b.shape[:2]) + (-1,))
    return matmul(a, b, transa, transb)


def linear(x, W, b=None, n_batch_axes: int = 1):
    """``x @ W.T + b`` (``W`` has shape ``(out, in)``), Chainer's ``F.linear``: the first
    ``n_batch_axes`` axes of ``x`` are batch axes and the rest are flattened into the ``in``
    features; the result has shape ``x.shape[:n_batch_axes] + (out,)``. ``W`` of another
    floating dtype than ``x`` is multiplied in their result type; the result has ``x``'s dtype.
    """
    if n_batch_axes <= 1:
        if n_batch_axes != 1:
            raise errors.ArgumentValueError(
                f"linear: n_batch_axes must be at least 1, got {n_batch_axes}")
        x_array = _arr(x)
        if x_array.ndim > 2:
            x = reshape(x, (x_array.shape[0], -1))
        return linear_last_axis(x, x_array, W, b)
    x_array = _arr(x)
    batch_shape = tuple(x_array.shape[:n_batch_axes])
    x = reshape(x, (int(np.prod(batch_shape, dtype=np.int64)), -1))
    y = linear_last_axis(x, x_array, W, b)
    return reshape(y, batch_shape + (y.shape[-1],))


def linear_last_axis(x, x_array, W, b=None):
    """``x @ W.T + b`` over the last axis of ``x`` (``x_array``: its array), ``(..., in) ->
    (..., out)``; a ``W`` of another floating dtype is multiplied in their result type and the
    result has ``x``'s dtype (Chainer's rule)."""
    W_dtype = _arr(W).dtype
    if W_dtype != x_array.dtype and x_array.dtype.kind == "f" and W_dtype.kind == "f":
        # Chainer multiplies in the result type and returns x's dtype
        dtype = np.result_type(x_array.dtype, W_dtype)
        y = linear(cast(x, dtype) if x_array.dtype != dtype else x,
                   cast(W, dtype) if W_dtype != dtype else W,
                   None if b is None else cast(b, dtype))
        return cast(y, x_array.dtype)
    if b is None:
        return LinearFunction().apply((x, W))[0]
    return LinearFunction().apply((x, W, b))[0]


def _promoted(a, a_array, b, b_array):
    """``a`` and ``b`` cast to their numpy result type (floating operands only)."""
    if a_array.dtype.kind != "f" or b_array.dtype.kind != "f":
        same_dtype("MatMul", a_array, b_array)
    dtype = np.result_type(a_array.dtype, b_array.dtype)
    return (a if a_array.dtype == dtype else cast(a, dtype),
            b if b_array.dtype == dtype else cast(b, dtype))


def _arr(x):
    return x._array if hasattr(x, "_array") else np.asarray(x)


# --- composites of registered ops, under Chainer's names (their backward is the ops') ----------

def batch_l2_norm_squared(x):
    """The squared L2 norm of each row of ``x``: ``sum(x[i] ** 2)`` over every axis but the
    first, shape ``(batch,)``."""
    x_array = _arr(x)
    if x_array.ndim < 2:
        raise errors.ShapeError(f"batch_l2_norm_squared: x needs a batch axis and at least one "
                                f"more, got shape {x_array.shape}")
    return sum_(square(reshape(x, (x_array.shape[0], -1))), axis=1)


def bilinear(e1, e2, W, V1=None, V2=None, b=None):
    """Chainer's bilinear function: ``y[i, l] = sum_jk e1[i, j] e2[i, k] W[j, k, l]``, plus
    ``e1 @ V1 + e2 @ V2 + b`` when the linear parameters are given (all three or none).
    ``e1`` and ``e2`` are flattened after their first (batch) axis."""
    flags = [V1 is None, V2 is None, b is None]
    if any(flags) and not all(flags):
        raise errors.ArgumentValueError("bilinear: V1, V2 and b are given all together or not "
                                        "at all")
    e1 = _batch_matrix(e1)
    e2 = _batch_matrix(e2)
    y = einsum("ij,ik,jkl->il", e1, e2, W)
    if V1 is None:
        return y
    return y + matmul(e1, V1) + matmul(e2, V2) + b


def _batch_matrix(x):
    shape = _arr(x).shape
    return x if len(shape) == 2 else reshape(x, (shape[0], -1))


def linear_interpolate(p, x, y):
    """``p * x + (1 - p) * y``, element-wise."""
    return p * x + (1 - p) * y


def scale(x, y, axis: int = 1):
    """``x * y`` with ``y`` laid over the axes of ``x`` from ``axis`` on (Caffe's broadcast:
    ``y`` of shape ``x.shape[axis:axis + y.ndim]``)."""
    return x * _laid_over(x, y, axis, "scale")


def bias(x, y, axis: int = 1):
    """``x + y`` with ``y`` laid over the axes of ``x`` from ``axis`` on (Caffe's broadcast:
    ``y`` of shape ``x.shape[axis:axis + y.ndim]``)."""
    return x + _laid_over(x, y, axis, "bias")


def _laid_over(x, y, axis: int, name: str):
    x_shape, y_shape = tuple(_arr(x).shape), tuple(_arr(y).shape)
    if x_shape[axis:axis + len(y_shape)] != y_shape:
        raise errors.ShapeError(f"{name}: y of shape {y_shape} does not match the axes of x "
                                f"{x_shape} from axis {axis}")
    shape = (1,) * axis + y_shape + (1,) * (len(x_shape) - axis - len(y_shape))
    return broadcast_to(reshape(y, shape), x_shape)
