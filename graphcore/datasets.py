"""Chainer's datasets: ``TupleDataset``, ``DictDataset``, ``SubDataset``, ``split_dataset``
and ``split_dataset_random``, with Chainer's indexing (an integer gives one example, a slice or
a list of indexes gives a list of examples).

>>> train, val = split_dataset_random(TupleDataset(x, t), 1000, seed=0)
>>> x0, t0 = train[0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class DatasetMixin:
    """``__getitem__`` over ``get_example``: integers, slices, lists and integer arrays."""

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self.get_example(i) for i in range(*index.indices(len(self)))]
        if isinstance(index, list | np.ndarray):
            return [self.get_example(int(i)) for i in index]
        return self.get_example(index)

    def __len__(self) -> int:
        raise NotImplementedError

    def get_example(self, i: int) -> Any:
        raise NotImplementedError


class TupleDataset:
    """The i-th example is ``(d[i] for d in datasets)``; every dataset has the same length."""

    def __init__(self, *datasets: Sequence[Any]) -> None:
        if not datasets:
            raise ValueError("no datasets are given")
        length = len(datasets[0])
        for i, dataset in enumerate(datasets):
            if len(dataset) != length:
                raise ValueError(f"dataset of the index {i} has a wrong length: "
                                 f"{len(dataset)}, expected {length}")
        self._datasets = datasets
        self._length = length

    def __getitem__(self, index: Any) -> Any:
        batches = [dataset[index] for dataset in self._datasets]
        if isinstance(index, slice | list | np.ndarray):
            return [tuple(batch[i] for batch in batches) for i in range(len(batches[0]))]
        return tuple(batches)

    def __len__(self) -> int:
        return self._length


class DictDataset:
    """The i-th example is ``{key: d[i]}``; every dataset has the same length."""

    def __init__(self, **datasets: Sequence[Any]) -> None:
        if not datasets:
            raise ValueError("no datasets are given")
        lengths = {key: len(d) for key, d in datasets.items()}
        length = next(iter(lengths.values()))
        for key, n in lengths.items():
            if n != length:
                raise ValueError(f"dataset of key {key} has a wrong length: {n}, "
                                 f"expected {length}")
        self._datasets = datasets
        self._length = length

    def __getitem__(self, index: Any) -> Any:
        batches = {key: d[index] for key, d in self._datasets.items()}
        if isinstance(index, slice | list | np.ndarray):
            n = len(next(iter(batches.values())))
            return [{key: b[i] for key, b in batches.items()} for i in range(n)]
        return batches

    def __len__(self) -> int:
        return self._length


class SubDataset(DatasetMixin):
    """Examples ``start`` to ``finish`` of ``dataset`` (through ``order`` when given)."""

    def __init__(self, dataset: Sequence[Any], start: int, finish: int,
                 order: Sequence[int] | None = None) -> None:
        if start < 0 or finish > len(dataset):
            raise ValueError("subset overruns the base dataset.")
        self._dataset = dataset
        self._start = start
        self._finish = finish
        self._size = finish - start
        if order is not None and len(order) != len(dataset):
            raise ValueError(f"order option must have the same length as the base dataset: "
                             f"len(order) = {len(order)} while len(dataset) = {len(dataset)}")
        self._order = order

    def __len__(self) -> int:
        return self._size

    def get_example(self, i: int) -> Any:
        if i >= 0:
            if i >= self._size:
                raise IndexError("dataset index out of range")
            index = self._start + i
        else:
            if i < -self._size:
                raise IndexError("dataset index out of range")
            index = self._finish + i
        if self._order is not None:
            index = int(self._order[index])
        return self._dataset[index]


def split_dataset(dataset: Sequence[Any], first_size: int,
                  order: Sequence[int] | None = None) -> tuple[SubDataset, SubDataset]:
    """The first ``first_size`` examples and the rest (through ``order`` when given)."""
    n = len(dataset)
    if not isinstance(first_size, int | np.integer) or isinstance(first_size, bool):
        raise TypeError(f"first_size must be an integer, got {type(first_size).__name__}")
    if first_size < 0:
        raise ValueError("first_size must be non-negative")
    if first_size > n:
        raise ValueError("first_size exceeds the size of the dataset")
    return SubDataset(dataset, 0, int(first_size), order), \
        SubDataset(dataset, int(first_size), n, order)


def split_dataset_random(dataset: Sequence[Any], first_size: int,
                         seed: int | None = None) -> tuple[SubDataset, SubDataset]:
    """``split_dataset`` over a random permutation drawn from ``RandomState(seed)``."""
    order = np.random.RandomState(seed).permutation(len(dataset))
    return split_dataset(dataset, first_size, order)
