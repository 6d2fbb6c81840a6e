"""Indexing ops: ``get_item`` (``x[index]``, basic and advanced numpy indexing) and its
gradient ``scatter_add`` (zeros with values added at an index), each the other's gradient;
Chainer's ``F.scatter_add(a, slices, b)`` on top of them.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.array import _SHAPE, broadcast_to
from graphcore.registry import register_op


@register_op
class GetItem(FunctionNode):
    """``x[index]`` with basic and advanced numpy indexing."""

    __slots__ = ("index",)
    name = "get_item"
    label = "GetItem"
    arity = 1
    attributes = {"index": Attr(object, required=True, doc="numpy index")}

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
    attributes = {"index": Attr(object, required=True, doc="numpy index"), "shape": _SHAPE}

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
