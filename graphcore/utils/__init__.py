"""Chainer's ``chainer.utils`` for graphcore: small array and argument helpers that Chainer's
functions, links and tests use (``force_array``, ``force_type``, ``size_of_shape``,
``tempdir``, ``argument.parse_kwargs``, ...) and ``type_check`` (Chainer's checks of input
types). Names Chainer keeps private here (``_format_array_props``, ``_raise_from``) are the
ones its test helpers call."""

from __future__ import annotations

import collections.abc as collections_abc
import contextlib
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from graphcore.utils import argument, conv, conv_nd, type_check
from graphcore.utils.sparse import CooMatrix, get_order, to_coo  # noqa: F401 (Chainer's names)

__all__ = ["argument", "collections_abc", "conv", "conv_nd", "force_array", "force_type",
           "size_of_shape", "tempdir", "type_check"]


def force_array(x: Any, dtype: Any = None) -> np.ndarray:
    """``x`` as an array: a numpy scalar (what numpy returns for a 0-d result) becomes a 0-d
    array; with ``dtype``, cast to it (no copy when it already is one)."""
    if np.isscalar(x):
        return np.array(x) if dtype is None else np.array(x, dtype)
    return x if dtype is None else x.astype(dtype, copy=False)


def force_type(dtype: np.dtype, value: Any) -> Any:
    """``value`` (a scalar or an array) in ``dtype``."""
    if np.isscalar(value):
        return dtype.type(value)
    return value if value.dtype == dtype else value.astype(dtype, copy=False)


def size_of_shape(shape: Iterable[int]) -> int:
    """The number of elements of an array of ``shape`` (1 for ``()``), a Python int."""
    size = 1
    for n in shape:
        size *= int(n)
    return size


@contextlib.contextmanager
def tempdir(**kwargs: Any) -> Iterator[str]:
    """A temporary folder (``tempfile.mkdtemp(**kwargs)``) for the ``with`` block, removed
    after it (``ignore_errors=True``: whatever cannot be removed stays)."""
    ignore_errors = kwargs.pop("ignore_errors", False)
    folder = tempfile.mkdtemp(**kwargs)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=ignore_errors)


def _format_array_props(arrays: list | tuple) -> str:
    """``shape:dtype`` of each array, for error messages (``None`` for a missing one)."""
    return ", ".join("None" if a is None else f"{a.shape}:{a.dtype.name}" for a in arrays)


def _raise_from(exc_type: type[Exception], message: str, cause: BaseException) -> None:
    """Raise ``exc_type`` whose message is ``message`` and then the cause's type and text,
    with the cause's traceback."""
    error = exc_type(f"{message}\n\n(caused by)\n{type(cause).__name__}: {cause}\n")
    raise error.with_traceback(cause.__traceback__) from None
