"""Matrix products: ``matmul`` (batched, numpy semantics) and ``linear`` (``x @ W.T + b``)."""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore import generic as g
from graphcore.function_node import FunctionNode
from graphcore.ops.array import reshape
from graphcore.ops.checks import same_dtype
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
        if x.dtype != W.dtype or (len(self.inputs) == 3 and self.inputs[2].dtype != x.dtype):
            grads = tuple(None if gv is None else _in_dtype(gv, v.dtype)
                          for gv, v in zip(grads, self.inputs, strict=True))
        return grads


def _in_dtype(gv, dtype):
    """A gradient in its input's dtype (inputs of mixed float dtypes)."""
    return gv if gv.dtype == dtype else g.cast(gv, dtype)


def matmul(a, b, transa: bool = False, transb: bool = False):
    """Matrix product with numpy's semantics; 1-D operands are treated as numpy does.

    ``transa`` / ``transb`` (Chainer's arguments) transpose the last two axes of ``a`` / ``b``
    first; they are recorded as transpose nodes, so every pass and kernel sees plain ops."""
    if transa and np.ndim(_arr(a)) >= 2:
        a = _mT(a)
    if transb and np.ndim(_arr(b)) >= 2:
        b = _mT(b)
    a_vec, b_vec = np.ndim(_arr(a)) == 1, np.ndim(_arr(b)) == 1
    if not (a_vec or b_vec):
        return MatMul().apply((a, b))[0]
    a2 = reshape(a, (1, -1)) if a_vec else a
    b2 = reshape(b, (-1, 1)) if b_vec else b
    y = MatMul().apply((a2, b2))[0]
    shape = y.shape[:-2] + (() if a_vec else y.shape[-2:-1]) + (() if b_vec else y.shape[-1:])
    return reshape(y, shape)


def linear(x, W, b=None):
    """``x @ W.T + b`` over the last axis of ``x`` (``W`` has shape ``(out, in)``)."""
    if b is None:
        return LinearFunction().apply((x, W))[0]
    return LinearFunction().apply((x, W, b))[0]


def _arr(x):
    return x._array if hasattr(x, "_array") else np.asarray(x)
