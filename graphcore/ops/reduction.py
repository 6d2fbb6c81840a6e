"""Reductions over ``axis`` (None, an int or a tuple) with ``keepdims``, as numpy does them."""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.array import broadcast_to, reshape
from graphcore.registry import register_op
from graphcore.variable import Variable, constant

AXIS_ATTRS = {
    "axis": Attr((int, tuple, list, type(None)), None, items=int,
                 doc="axes to reduce; null = all"),
    "keepdims": Attr(bool, False, doc="keep reduced axes with length 1"),
}


def normalize_axes(label: str, axis, ndim: int) -> tuple[int, ...] | None:
    """``axis`` as a sorted tuple of non-negative ints (None stays None = every axis)."""
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise errors.ShapeError(f"{label}: axis {a} is out of range for an input of "
                                    f"{ndim} dimensions")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise errors.ShapeError(f"{label}: repeated axis in {axis}")
    return tuple(sorted(out))


def kept_shape(shape: tuple[int, ...], axes: tuple[int, ...] | None) -> tuple[int, ...]:
    """``shape`` with the reduced axes set to 1 (the shape of a ``keepdims`` result)."""
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


class _Reduction(FunctionNode):
    __slots__ = ("axis", "keepdims")
    arity = 1
    attributes = AXIS_ATTRS

    def shape_rule(self, inputs):
        x, = inputs
        return shapes.TensorType(shapes.reduced(self, inputs, x.shape, self.axis, self.keepdims),
                                 x.dtype),

    def __init__(self, axis=None, keepdims: bool = False) -> None:
        self.axis = axis
        self.keepdims = keepdims

    def _expand(self, gy, x_shape):
        """``gy`` reshaped to keepdims form and broadcast back to ``x_shape``."""
        axes = normalize_axes(self.label, self.axis, len(x_shape))
        if not self.keepdims:
            gy = g.reshape(gy, kept_shape(x_shape, axes))
        return g.broadcast_to(gy, x_shape)


@register_op
class Sum(_Reduction):
    """Sum of elements over ``axis``."""

    __slots__ = ()
    name = "sum"
    label = "Sum"

    def forward(self, inputs):
        x, = inputs
        if self.axis is not None:
            normalize_axes(self.label, self.axis, x.ndim)
        return np.asarray(x.sum(axis=_np_axis(self.axis), keepdims=self.keepdims)),

    def backward(self, indexes, grad_outputs):
        return self._expand(grad_outputs[0], self.inputs[0].shape),


@register_op
class Mean(_Reduction):
    """Mean of elements over ``axis``."""

    __slots__ = ()
    name = "mean"
    label = "Mean"

    def forward(self, inputs):
        x, = inputs
        if self.axis is not None:
            normalize_axes(self.label, self.axis, x.ndim)
        return np.asarray(x.mean(axis=_np_axis(self.axis), keepdims=self.keepdims),
                          dtype=x.dtype),

    def backward(self, indexes, grad_outputs):
        x = self.inputs[0]
        axes = normalize_axes(self.label, self.axis, x.ndim)
        count = x.size if axes is None else int(np.prod([x.shape[a] for a in axes]))
        return self._expand(grad_outputs[0] * (1.0 / count), x.shape),


@register_op
class Prod(_Reduction):
    """Product of elements over ``axis``; exact gradients even where inputs are zero."""

    __slots__ = ()
    name = "prod"
    label = "Prod"

    def forward(self, inputs):
        x, = inputs
        if self.axis is not None:
            normalize_axes(self.label, self.axis, x.ndim)
        return np.asarray(x.prod(axis=_np_axis(self.axis), keepdims=self.keepdims)),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        others = prod_others(x, self.axis)  # product of every other element, no division
        return self._expand(grad_outputs[0], x.shape) * others,


@register_op
class ProdOthers(FunctionNode):
    """For each element, the product of the other elements along ``axis`` (Prod's gradient).

    Computed from exclusive cumulative products, so zeros need no special case.  Its own
    gradient is exact too; it is not differentiable a third time.
    """

    __slots__ = ("axis",)
    name = "prod_others"
    label = "ProdOthers"
    arity = 1
    higher_order = False
    attributes = {"axis": AXIS_ATTRS["axis"]}
    shape_rule = shapes.same_as_first

    def __init__(self, axis=None) -> None:
        self.axis = axis

    def forward(self, inputs):
        x, = inputs
        return _apply_flat(x, self.axis, _prod_others_2d),

    def backward(self, indexes, grad_outputs):
        if isinstance(grad_outputs[0], np.ndarray):
            x = self.inputs[0]._array
            gy = grad_outputs[0]
            return _apply_flat2(x, gy, self.axis, _prod_others_grad_2d),
        raise errors.GraphError("prod_others: third-order gradients of prod are not supported")


def _np_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _to_2d(x: np.ndarray, axis) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...]]:
    """Move the reduced axes last and flatten: rows = kept positions, columns = reduced."""
    axes = normalize_axes("prod", axis, x.ndim)
    if axes is None:
        axes = tuple(range(x.ndim))
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    perm = kept + axes
    moved = x.transpose(perm)
    rows = int(np.prod([x.shape[i] for i in kept], dtype=np.int64))
    cols = int(np.prod([x.shape[i] for i in axes], dtype=np.int64))
    return moved.reshape(rows, cols), perm, moved.shape


def _from_2d(y2: np.ndarray, perm, moved_shape) -> np.ndarray:
    return y2.reshape(moved_shape).transpose(np.argsort(perm))


def _apply_flat(x, axis, fn):
    x2, perm, moved = _to_2d(x, axis)
    return _from_2d(fn(x2), perm, moved)


def _apply_flat2(x, gy, axis, fn):
    x2, perm, moved = _to_2d(x, axis)
    g2, _, _ = _to_2d(gy, axis)
    return _from_2d(fn(x2, g2), perm, moved)


def _prod_others_2d(x: np.ndarray) -> np.ndarray:
    """Row-wise product of all other columns, via exclusive prefix and suffix products."""
    if x.shape[1] == 0:  # an empty reduction: nothing to take the product of
        return x.copy()
    ones = np.ones((x.shape[0], 1), x.dtype)
    left = np.cumprod(np.concatenate([ones, x[:, :-1]], axis=1), axis=1)
    right = np.cumprod(np.concatenate([ones, x[:, :0:-1]], axis=1), axis=1)[:, ::-1]
    return left * right


def _prod_others_grad_2d(x: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """d/dx_j sum_i gy_i * prod_{k != i} x_k = sum_{i != j} gy_i * prod_{k != i, j} x_k."""
    n = x.shape[1]
    gx = np.zeros_like(x)
    for j in range(n):
        without_j = x.copy()
        without_j[:, j] = 1
        pairs = _prod_others_2d(without_j)  # prod over k != i, j (for i != j)
        pairs[:, j] = 0
        gx[:, j] = (gy * pairs).sum(axis=1)
    return gx


class _Extreme(_Reduction):
    """Max or min; the gradient is shared equally among tied extreme elements."""

    __slots__ = ()
    _out_keep = (0,)

    def backward(self, indexes, grad_outputs):
        x = self.inputs[0]._array
        y = self.output_array(0)
        axes = normalize_axes(self.label, self.axis, x.ndim)
        yk = y if self.keepdims else y.reshape(kept_shape(x.shape, axes))
        hit = x == yk
        share = hit / hit.sum(axis=_np_axis(axes), keepdims=True)
        return g.scale_by(self._expand(grad_outputs[0], x.shape), share),


@register_op
class Max(_Extreme):
    """Maximum over ``axis``."""

    __slots__ = ()
    name = "max"
    label = "Max"

    def forward(self, inputs):
        x, = inputs
        if self.axis is not None:
            normalize_axes(self.label, self.axis, x.ndim)
        return np.asarray(x.max(axis=_np_axis(self.axis), keepdims=self.keepdims)),


@register_op
class Min(_Extreme):
    """Minimum over ``axis``."""

    __slots__ = ()
    name = "min"
    label = "Min"

    def forward(self, inputs):
        x, = inputs
        if self.axis is not None:
            normalize_axes(self.label, self.axis, x.ndim)
        return np.asarray(x.min(axis=_np_axis(self.axis), keepdims=self.keepdims)),


def chainer_axis(label: str, axis) -> None:
    """Chainer's reductions take an axis of None, an int or a tuple of ints; anything else (a
    list too, which the ops themselves accept from specs) is a TypeError."""
    if axis is None or type(axis) is int:
        return
    if isinstance(axis, int | np.integer) and not isinstance(axis, bool):
        return
    if isinstance(axis, tuple) and all(isinstance(a, int | np.integer) and not isinstance(a, bool)
                                       for a in axis):
        return
    raise errors.ArgumentTypeError(f"{label}: attribute 'axis' must be None, an int or a tuple "
                                   f"of ints, got {axis!r}")


def sum(x, axis=None, keepdims: bool = False):  # noqa: A001
    """Sum over ``axis`` (None = all elements)."""
    if axis is not None:
        chainer_axis("Sum", axis)
    return Sum(axis, keepdims).apply((x,))[0]


def mean(x, axis=None, weights=None, keepdims: bool = False):
    """Mean over ``axis``; with ``weights``, Chainer's weighted ``average``: ``sum(x * w) /
    sum(w)``, ``weights`` shaped like ``x`` (``axis=None``) or ``(x.shape[axis],)``."""
    if weights is None:
        return Mean(axis, keepdims).apply((x,))[0]
    return _weighted_mean(x, axis, weights, keepdims)


average = mean  # Chainer's name


def _weighted_mean(x, axis, weights, keepdims: bool):
    ndim, shape = len(x.shape), tuple(x.shape)
    w_shape = tuple(np.shape(weights.array if hasattr(weights, "array") else weights))
    if axis is None:
        if w_shape != shape:
            raise errors.ShapeError(f"Mean: weights must have the shape of x {shape} when "
                                    f"axis is None, got {w_shape}")
        w = weights
    else:
        axes = normalize_axes("Mean", axis, ndim)
        if len(axes) != 1:
            raise errors.ShapeError(f"Mean: weights take one axis, got axis={axis}")
        a = axes[0]
        if w_shape != (shape[a],):
            raise errors.ShapeError(f"Mean: weights must have shape ({shape[a]},) for axis "
                                    f"{axis} of x {shape}, got {w_shape}")
        w = broadcast_to(reshape(weights, tuple(n if i == a else 1 for i, n in enumerate(shape))),
                         shape)
    total = Sum(axis, keepdims).apply((x * w,))[0]
    return total / broadcast_to(Sum().apply((weights,))[0], total.shape)


def prod(x, axis=None, keepdims: bool = False):
    if axis is not None:
        chainer_axis("Prod", axis)
    return Prod(axis, keepdims).apply((x,))[0]


def prod_others(x, axis=None):
    """Array-generic: numpy for a first-order backward, the op for a recorded one."""
    if isinstance(x, np.ndarray):
        return _apply_flat(x, axis, _prod_others_2d)
    return ProdOthers(axis).apply((x,))[0]


def max(x, axis=None, keepdims: bool = False):  # noqa: A001
    if axis is not None:
        chainer_axis("Max", axis)
    return Max(axis, keepdims).apply((x,))[0]


def min(x, axis=None, keepdims: bool = False):  # noqa: A001
    if axis is not None:
        chainer_axis("Min", axis)
    return Min(axis, keepdims).apply((x,))[0]


def _arg_extreme(label: str, x, axis, pick):
    """Indices of the extreme elements along ``axis`` as int32 (Chainer's dtype); an index has
    no gradient, so the result is a constant."""
    if axis is not None and not (isinstance(axis, int | np.integer) and not isinstance(
            axis, bool)):
        raise errors.ArgumentTypeError(f"{label}: axis must be None or an int, got {axis!r}")
    a = x._array if isinstance(x, Variable) else np.asarray(x)
    if a.dtype.kind != "f":
        raise errors.DTypeError(f"{label}: expected a floating-point input, got {a.dtype}")
    if axis is not None:
        normalize_axes(label, axis, a.ndim)
    return constant(np.asarray(pick(a, axis=axis), dtype=np.int32))


def argmax(x, axis=None):
    """Index of the maximum along ``axis`` (None: of the flattened input), int32."""
    return _arg_extreme("argmax", x, axis, np.argmax)


def argmin(x, axis=None):
    """Index of the minimum along ``axis`` (None: of the flattened input), int32."""
    return _arg_extreme("argmin", x, axis, np.argmin)
