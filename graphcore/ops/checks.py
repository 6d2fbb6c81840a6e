"""Small input checks shared by ops: each raises an error that names the op and the shapes."""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore.variable import Variable


def same_dtype(op: str, a: np.ndarray, b: np.ndarray) -> None:
    if a.dtype != b.dtype:
        raise errors.DTypeError(
            f"{op}: inputs must have the same dtype, got {a.dtype} {a.shape} and "
            f"{b.dtype} {b.shape}")


def broadcastable(op: str, a: np.ndarray, b: np.ndarray) -> None:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise errors.ShapeError(
            f"{op}: shapes {a.shape} and {b.shape} cannot be broadcast together") from None


def same_shape(op: str, a: np.ndarray, b: np.ndarray) -> None:
    if a.shape != b.shape:
        raise errors.ShapeError(f"{op}: expected inputs of the same shape, got {a.shape} and "
                                f"{b.shape}")


def is_float(op: str, x: np.ndarray, what: str = "input") -> None:
    if x.dtype.kind != "f":
        raise errors.DTypeError(f"{op}: expected a floating-point {what}, got {x.dtype}")


def normalize_axis(op: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise errors.ShapeError(f"{op}: axis {axis} is out of range for an input of {ndim} "
                                "dimensions")
    return axis % max(ndim, 1)


def numeric_dtype(value: object) -> None:
    """An ``Attr`` check: ``value`` names a bool, integer or floating-point numpy dtype."""
    if value is None:  # np.dtype(None) is float64: a silent default, not what was asked
        raise TypeError("must be a numpy dtype or its name, got None")
    try:
        dtype = np.dtype(value)
    except (TypeError, ValueError):
        raise TypeError(f"must be a numpy dtype or its name, got {value!r}") from None
    if dtype.kind not in "biuf":
        raise TypeError(f"must be a bool, integer or floating-point dtype, got {value!r}")


def axis_argument(name: str, x: object, axis: object, none: bool) -> None:
    """A composite's ``x`` is a Variable or array and its ``axis`` an int (or, with ``none``,
    a tuple of ints or None); raises ``ArgumentTypeError`` naming ``name``."""
    if not isinstance(x, Variable | np.ndarray):
        raise errors.ArgumentTypeError(f"{name}: x must be a Variable or a numpy array, got "
                                       f"{type(x).__name__}")
    ints = axis if none and isinstance(axis, tuple | list) else (axis,)
    if (axis is None and none) or all(isinstance(a, int | np.integer) and not isinstance(
            a, bool) for a in ints):
        return
    raise errors.ArgumentTypeError(f"{name}: axis must be an int"
                                   f"{' or a tuple of ints or None' * none}, got {axis!r}")
