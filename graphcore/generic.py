"""Array-generic functions for writing backward once.

Each function takes numpy arrays or Variables. Arrays in, arrays out, computed directly with
numpy (a first-order backward, no graph); a Variable in, a Variable out, through the registered
op looked up by name (a double-backprop backward, recorded so it can be differentiated again;
by name, so this module, which every op imports, imports no op).  Operators
(``+ - * / @ **``, ``.T``) already work on both kinds and need nothing here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphcore.registry import get_op
from graphcore.variable import Variable


def _apply(op: str, inputs: tuple, **attrs: Any) -> Variable:
    """The registered op ``op``, made with ``attrs`` and applied to ``inputs``: its output."""
    return get_op(op)(**attrs).apply(inputs)[0]


def cast(x: Any, dtype: Any) -> Any:
    """``x`` as ``dtype`` (a gradient returned in its input's dtype)."""
    if isinstance(x, Variable):
        return _apply("cast", (x,), dtype=np.dtype(dtype).name)
    return x.astype(dtype)


def sum_to(x: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``x`` down to ``shape``: the gradient of numpy broadcasting, done in one place."""
    if x.shape == shape:
        return x
    if isinstance(x, Variable):
        return _apply("sum_to", (x,), shape=shape)
    return unbroadcast_array(x, shape)


def unbroadcast_array(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and x.shape[i + lead] != 1)
    y = x.sum(axis=axes, keepdims=True) if axes else x
    if lead:
        y = y.reshape(shape)
    return y


def broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    if x.shape == shape:
        return x
    if isinstance(x, Variable):
        return _apply("broadcast_to", (x,), shape=shape)
    if x.size == 1:  # np.full is several times cheaper than np.broadcast_to's view
        return np.full(shape, x.reshape(()), x.dtype)
    return np.broadcast_to(x, shape)


def reshape(x: Any, shape: tuple[int, ...]) -> Any:
    if x.shape == shape:
        return x
    if isinstance(x, Variable):
        return _apply("reshape", (x,), shape=shape)
    return x.reshape(shape)


def transpose(x: Any, axes: tuple[int, ...] | None = None) -> Any:
    if isinstance(x, Variable):
        return _apply("transpose", (x,), axes=axes)
    return x.transpose(axes)


def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    if isinstance(x, Variable):
        return _apply("swapaxes", (x,), axis1=axis1, axis2=axis2)
    return x.swapaxes(axis1, axis2)


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    if isinstance(x, Variable):
        return _apply("sum", (x,), axis=axis, keepdims=keepdims)
    return np.asarray(x.sum(axis=axis, keepdims=keepdims))


def exp(x: Any) -> Any:
    return _apply("exp", (x,)) if isinstance(x, Variable) else np.exp(x)


def log(x: Any) -> Any:
    return _apply("log", (x,)) if isinstance(x, Variable) else np.log(x)


def sigmoid(x: Any) -> Any:
    if isinstance(x, Variable):
        return _apply("sigmoid", (x,))
    return np.tanh(x * 0.5) * 0.5 + 0.5


def softmax(x: Any, axis: int = 1) -> Any:
    if isinstance(x, Variable):
        return _apply("softmax", (x,), axis=axis)
    return softmax_array(x, axis)


def softmax_array(x: np.ndarray, axis: int) -> np.ndarray:
    """``exp(x) / sum(exp(x))`` along ``axis`` (shifted by the maximum: no overflow)."""
    y = x - x.max(axis=axis, keepdims=True)
    np.exp(y, out=y)
    y /= y.sum(axis=axis, keepdims=True)
    return y


def mask(gy: Any, keep: np.ndarray) -> Any:
    """``gy`` where the constant boolean array ``keep`` holds, zero elsewhere (broadcasting)."""
    if isinstance(gy, Variable):
        return gy * keep.astype(gy.dtype)
    return gy * keep


def scale_by(gy: Any, factor: np.ndarray) -> Any:
    """``gy`` times a constant array, kept in ``gy``'s dtype."""
    if isinstance(gy, Variable):
        return gy * factor.astype(gy.dtype, copy=False)
    return gy * factor.astype(gy.dtype, copy=False)


def zeros_like_input(x: Any) -> Any:
    return np.zeros_like(x._array if isinstance(x, Variable) else x)


def array_of(x: Any) -> np.ndarray:
    """The numpy array behind ``x`` (for constants derived from values, like masks)."""
    return x._array if isinstance(x, Variable) else x


def tanh(x: Any) -> Any:
    return _apply("tanh", (x,)) if isinstance(x, Variable) else np.tanh(x)


def stack(xs: list, axis: int = 0) -> Any:
    if any(isinstance(x, Variable) for x in xs):
        return _apply("stack", tuple(xs), axis=axis)
    return np.stack(xs, axis=axis)
