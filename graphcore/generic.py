"""Array-generic functions for writing backward once.

Each function takes numpy arrays or Variables. Arrays in, arrays out, computed directly with
numpy (a first-order backward, no graph); a Variable in, a Variable out, through the registered
op (a double-backprop backward, recorded so it can be differentiated again).  Operators
(``+ - * / @ **``, ``.T``) already work on both kinds and need nothing here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphcore.variable import Variable


def _ops():
    from graphcore import functions

    return functions


def sum_to(x: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``x`` down to ``shape``: the gradient of numpy broadcasting, done in one place."""
    if x.shape == shape:
        return x
    if isinstance(x, Variable):
        return _ops().sum_to(x, shape)
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
        return _ops().broadcast_to(x, shape)
    if x.size == 1:  # np.full is several times cheaper than np.broadcast_to's view
        return np.full(shape, x.reshape(()), x.dtype)
    return np.broadcast_to(x, shape)


def reshape(x: Any, shape: tuple[int, ...]) -> Any:
    if x.shape == shape:
        return x
    if isinstance(x, Variable):
        return _ops().reshape(x, shape)
    return x.reshape(shape)


def transpose(x: Any, axes: tuple[int, ...] | None = None) -> Any:
    if isinstance(x, Variable):
        return _ops().transpose(x, axes)
    return x.transpose(axes)


def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    if isinstance(x, Variable):
        return _ops().swapaxes(x, axis1, axis2)
    return x.swapaxes(axis1, axis2)


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    if isinstance(x, Variable):
        return _ops().sum(x, axis=axis, keepdims=keepdims)
    return np.asarray(x.sum(axis=axis, keepdims=keepdims))


def exp(x: Any) -> Any:
    return _ops().exp(x) if isinstance(x, Variable) else np.exp(x)


def log(x: Any) -> Any:
    return _ops().log(x) if isinstance(x, Variable) else np.log(x)


def sigmoid(x: Any) -> Any:
    if isinstance(x, Variable):
        return _ops().sigmoid(x)
    return np.tanh(x * 0.5) * 0.5 + 0.5


def softmax(x: Any, axis: int = 1) -> Any:
    if isinstance(x, Variable):
        return _ops().softmax(x, axis=axis)
    from graphcore.ops.loss import softmax_array

    return softmax_array(x, axis)


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
    return _ops().tanh(x) if isinstance(x, Variable) else np.tanh(x)


def stack(xs: list, axis: int = 0) -> Any:
    if any(isinstance(x, Variable) for x in xs):
        return _ops().stack(xs, axis=axis)
    return np.stack(xs, axis=axis)
