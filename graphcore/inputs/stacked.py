"""Per-example inputs made as the rows of one array, so batching need not stack them again.

``make_inputs`` gives an input with ``examples: N`` (or ``lengths`` all equal) as a
``StackedExamples``: to every reader a plain list of arrays, one per example, each a view of
one row of ``stacked``. ``stacked_rows(value)`` gives that array while the list still holds
exactly those views, unchanged (the same objects, in order, with the shape and dtype they were
made with; setting an array's strides is deprecated in numpy), so it holds the rows' current
contents, written in place or not; anything else (a user's list, a list edited since) gives
None and the batcher stacks the rows itself. Copies and pickles are plain lists.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

_SHAPE = operator.attrgetter("shape")
_NDIM = operator.attrgetter("ndim")
_DTYPE = operator.attrgetter("dtype")


class StackedExamples(list):
    """The rows of ``stacked`` as a list of arrays (views), one per example."""

    def __init__(self, stacked: np.ndarray) -> None:
        # Iterating a 1-d array gives numpy scalars; its rows as arrays are 0-d views.
        super().__init__(stacked if stacked.ndim > 1 else
                         (stacked[i, ...] for i in range(len(stacked))))
        self.stacked = stacked
        rows = self._rows = list(self)  # a list of its own, never handed out
        # Rows of more than one element each: list equality tells whether the list still
        # holds exactly these objects (see ``_same_objects``).
        self._by_equality = stacked.ndim >= 2 and math.prod(stacked.shape[1:]) > 1
        self._dtypes = list(map(_DTYPE, rows))
        # A row's shape can change in place (``row.shape = ...``) keeping its size. A row of
        # one axis can only change its number of axes; one of two axes, the first at least
        # one long, its number of axes or its length: those are read faster than the shape.
        self._ndims = self._lens = self._shapes = None
        if stacked.ndim == 2 or stacked.ndim == 3 and stacked.shape[1] > 0:
            self._ndims = list(map(_NDIM, rows))
            if stacked.ndim == 3:
                self._lens = list(map(len, rows))
        else:
            self._shapes = list(map(_SHAPE, rows))

    def __reduce_ex__(self, protocol: Any) -> tuple:
        return list, (list(self),)  # copies and pickles: a plain list of the rows


def stacked_rows(value: Any) -> np.ndarray | None:
    """The array whose rows ``value`` holds, in order, unchanged; None when not known."""
    if type(value) is not StackedExamples:
        return None
    rows = value._rows  # map, not a loop: this is every call
    if not _same_objects(value, rows) or list(map(_DTYPE, rows)) != value._dtypes:
        return None
    if value._shapes is not None:
        return value.stacked if list(map(_SHAPE, rows)) == value._shapes else None
    if list(map(_NDIM, rows)) != value._ndims \
            or value._lens is not None and list(map(len, rows)) != value._lens:
        return None
    return value.stacked


def _same_objects(value: StackedExamples, rows: list) -> bool:
    """Whether ``value`` holds the objects ``rows`` does, in order. List equality compares
    items by identity first, in C, so for rows of more than one element it is that check at a
    twentieth of the cost of a Python-level one: any other item (another array, even with the
    same values; a list; a number; None) compared with an array of several elements gives an
    array, whose truth value numpy refuses (ValueError), or False."""
    if value._by_equality:
        try:
            return list.__eq__(value, rows) is True
        except (ValueError, TypeError):
            return False
    return len(value) == len(rows) and all(map(operator.is_, value, rows))
