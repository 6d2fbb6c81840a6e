"""Indexing ops: ``get_item`` (``x[index]``, basic and advanced numpy indexing) and its
gradient ``scatter_add`` (zeros with values added at an index), each the other's gradient;
Chainer's ``F.scatter_add(a, slices, b)`` on top of them; ``permutate`` (Chainer's
``F.permutate``), whose indices are an input: data that may change between calls.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore.config import config
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.array import SHAPE, broadcast_to
from graphcore.registry import register_op


@register_op
class GetItem(FunctionNode):
    """``x[index]`` with basic and advanced numpy indexing."""

    __slots__ = ("index",)
    name = "get_item"
    label = "GetItem"
    arity = 1
    attributes = {"index": Attr(object, required=True, doc="numpy index")}

    def shape_rule(self, inputs):
        x, = inputs
        return shapes.TensorType(shapes.indexed(self, inputs, x.shape, self.index), x.dtype),

    def __init__(self, index) -> None:
        self.index = index

    def forward(self, inputs):
        x, = inputs
        try:
            return np.asarray(x[self.index]),
        except IndexError as e:
            raise errors.ShapeError(f"GetItem: index {self.index!r} does not fit {x.shape}: "
                                    f"{e}") from None

    def backward(self, indexes, grad_outputs):
        x = self.inputs[0]
        return scatter_into(grad_outputs[0], self.index, x.shape),


@register_op
class ScatterAdd(FunctionNode):
    """Zeros of ``shape`` with ``x`` added at ``index`` (repeated indices add up).

    The gradient of ``get_item``; its own gradient is ``get_item``.
    """

    __slots__ = ("index", "shape")
    name = "scatter_add"
    label = "ScatterAdd"
    arity = 1
    attributes = {"index": Attr(object, required=True, doc="numpy index"), "shape": SHAPE}

    def shape_rule(self, inputs):
        return shapes.TensorType(self.shape, inputs[0].dtype),

    def __init__(self, index, shape) -> None:
        self.index = index
        self.shape = tuple(shape)

    def forward(self, inputs):
        return _scatter_array(inputs[0], self.index, self.shape),

    def backward(self, indexes, grad_outputs):
        return get_item(grad_outputs[0], self.index),


def _is_basic(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(p, int | slice | type(None)) or p is Ellipsis for p in parts)


def _scatter_array(x: np.ndarray, index, shape) -> np.ndarray:
    out = np.zeros(shape, x.dtype)
    if _is_basic(index):
        out[index] = x
    else:
        np.add.at(out, index, x)
    return out


def scatter_add(a, slices, b):
    """Chainer's ``F.scatter_add``: ``a`` with ``b`` added at ``a[slices]`` (repeated indices
    add up; ``b`` broadcasts to the shape of ``a[slices]``). Gradients reach ``a`` and ``b``.

    The registered op (``scatter_add`` in specs) is the inner step: zeros of ``shape`` with
    ``x`` added at ``index``; ``scatter_into`` calls it directly."""
    target = np.empty(np.shape(_arr(a)), dtype=bool)[slices].shape
    return a + scatter_into(broadcast_to(b, target), slices, np.shape(_arr(a)))


def scatter_into(x, index, shape):
    """Zeros of ``shape`` with ``x`` added at ``index`` (arrays in -> array out)."""
    if isinstance(x, np.ndarray):
        return _scatter_array(x, index, shape)
    return ScatterAdd(index, shape).apply((x,))[0]


def _arr(x):
    return x._array if hasattr(x, "_array") else np.asarray(x)


def get_item(x, index):
    """``x[index]``; lists in the index are turned into arrays (advanced indexing)."""
    if isinstance(index, list):
        index = np.asarray(index)
    elif isinstance(index, tuple):
        index = tuple(np.asarray(i) if isinstance(i, list) else i for i in index)
    return GetItem(index).apply((x,))[0]


@register_op
class Permutate(FunctionNode):
    """Reorder ``x`` along ``axis`` by a permutation ``indices``, or by its inverse (``inv``).

    Chainer's ``F.permutate``: ``y = x.take(indices, axis)``, or with ``inv`` the ``y`` with
    ``y.take(indices, axis) == x``.

    Linear: the gradient of ``x`` is the other direction over the same indices (none for the
    indices). Whether ``indices`` is a permutation is checked in debug mode only, as Chainer
    does, so that a forward is the checks of shapes and one take.
    """

    __slots__ = ("axis", "inv")
    name = "permutate"
    label = "Permutate"
    arity = 2
    attributes = {"axis": Attr(int, 0, doc="axis to reorder"),
                  "inv": Attr(bool, False, doc="apply the inverse permutation")}

    def shape_rule(self, inputs):
        x, indices = inputs
        axis = shapes.normalize_axis(self, inputs, self.axis, x.ndim)
        if indices.ndim != 1:
            shapes.fail(self, inputs, "indices must be 1-d")
        shapes.expect_dim(self, inputs, indices.shape[0], x.shape[axis], f"axis {axis}'s size")
        return x,

    def __init__(self, axis: int = 0, inv: bool = False) -> None:
        self.axis = axis
        self.inv = inv

    def forward(self, inputs):
        x, indices = inputs
        axis = check_permutate(self.label, x, indices, self.axis)
        if config.debug:
            check_permutation(self.label, indices)
        return permutate_array(x, indices, axis, self.inv),

    def check_inputs(self, inputs):
        # numpy's IndexError (an index past the axis) explained as the debug check would
        check_permutate(self.label, inputs[0], inputs[1], self.axis)
        check_permutation(self.label, inputs[1])

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        indices = self.inputs[1]._array
        if isinstance(gy, np.ndarray):  # a first-order walk: arrays, no node
            return permutate_array(gy, indices, self.axis % gy.ndim, not self.inv), None
        return Permutate(self.axis, not self.inv).apply((gy, indices))[0], None


def check_permutate(label: str, x: np.ndarray, indices: np.ndarray, axis: int) -> int:
    """The checks Chainer's type check makes (1-D signed integers, one per element of the
    axis); returns the axis made non-negative."""
    if indices.dtype.kind != "i":  # signed, as Chainer asks (and ONNX's Gather takes)
        raise errors.DTypeError(f"{label}: indices must be signed integers, got "
                                f"{indices.dtype}")
    if indices.ndim != 1:
        raise errors.ShapeError(f"{label}: indices must be 1-D, got shape {indices.shape}")
    if not -x.ndim <= axis < x.ndim:
        raise errors.ShapeError(f"{label}: axis {axis} is out of range for an input of shape "
                                f"{x.shape}")
    axis %= x.ndim
    if indices.shape[0] != x.shape[axis]:
        raise errors.ShapeError(f"{label}: {indices.shape[0]} indices for axis {axis} of "
                                f"{x.shape}, which has {x.shape[axis]} elements")
    return axis


def check_permutation(label: str, indices: np.ndarray) -> None:
    """Debug mode: every index in range and none repeated (Chainer's ``_check_indices``)."""
    n = indices.shape[0]
    if n == 0:
        return
    bad = (indices < 0) | (indices >= n)
    if bad.any():
        raise errors.ShapeError(f"{label}: index {int(indices[bad][0])} is out of range for "
                                f"a permutation of {n} elements")
    repeated = np.flatnonzero(np.bincount(indices, minlength=n) > 1)
    if repeated.size:
        raise errors.ShapeError(f"{label}: indices repeat {int(repeated[0])}: not a "
                                "permutation")


def permutate_array(x: np.ndarray, indices: np.ndarray, axis: int, inv: bool) -> np.ndarray:
    """The reordering on arrays (``axis`` non-negative). The inverse takes by the inverse
    permutation, computed in a small index array: a take is several times faster than
    assigning through the indices, most of all along an inner axis."""
    if inv:
        # zeros, not empty: indices that are no permutation pick row 0, never garbage
        inverse = np.zeros(indices.shape[0], np.intp)
        inverse[indices] = np.arange(indices.shape[0])
        indices = inverse
    return np.take(x, indices, axis=axis)


def permutate(x, indices, axis: int = 0, inv: bool = False):
    """Chainer's ``F.permutate``: ``x`` reordered along ``axis`` by the 1-D integer
    permutation ``indices`` (a Variable or an array, an input of the op):
    ``y = x.take(indices, axis)``; with ``inv``, ``y`` such that
    ``y.take(indices, axis) == x``."""
    return Permutate(axis, inv).apply((x, indices))[0]
