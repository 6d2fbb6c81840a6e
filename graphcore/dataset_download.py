"""Chainer's dataset cache (``chainer.dataset.download``): where the dataset loaders look.

Chainer's loaders (``get_mnist``, ``get_cifar10``, ``get_ptb_words``, ...) keep what they
download under the dataset root: ``$CHAINER_DATASET_ROOT``, else ``~/.chainer/dataset``
(``set_dataset_root`` changes it), one directory per dataset (``pfnet/chainer/mnist``).
graphcore reads that cache in the same places and formats, so data a Chainer installation has
fetched, or data written there by hand, loads unchanged. graphcore downloads nothing: a file
missing from the cache is a ``DatasetNotCached`` naming the path it looked for and the address
Chainer would have fetched it from. Cached ``.npz`` files are read with ``allow_pickle=False``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from graphcore.errors import GraphcoreError


class DatasetNotCached(GraphcoreError, FileNotFoundError):
    """A dataset file is not in the cache, and graphcore does not download it."""


_dataset_root: str | None = None  # set_dataset_root's value; None: the environment's


def get_dataset_root() -> str:
    """The dataset root: ``set_dataset_root``'s path, else ``$CHAINER_DATASET_ROOT``, else
    ``~/.chainer/dataset``."""
    if _dataset_root is not None:
        return _dataset_root
    return os.environ.get("CHAINER_DATASET_ROOT",
                          os.path.join(os.path.expanduser("~"), ".chainer", "dataset"))


def set_dataset_root(path: str | os.PathLike) -> None:
    global _dataset_root
    _dataset_root = os.fspath(path)


def get_dataset_directory(dataset_name: str, create_directory: bool = True) -> str:
    """``<root>/<dataset_name>``, made if ``create_directory`` (as Chainer does)."""
    path = os.path.join(get_dataset_root(), dataset_name)
    if create_directory:
        os.makedirs(path, exist_ok=True)
    return path


def cached_download(url: str) -> str:
    """Chainer's downloader: graphcore downloads nothing, so this always raises."""
    raise DatasetNotCached(f"{url}: graphcore does not download; fetch the file yourself (or "
                           f"with Chainer) into the dataset cache under {get_dataset_root()}")


def cache_or_load_file(path: str, creator: Callable[[str], Any],
                       loader: Callable[[str], Any]) -> Any:
    """``loader(path)`` when ``path`` is cached; otherwise ``creator`` makes it (Chainer's
    creators download, so in graphcore they raise ``DatasetNotCached``)."""
    if os.path.exists(path):
        return loader(path)
    return creator(path)


def load_npz(path: str) -> dict[str, np.ndarray]:
    """Every array of a cached ``.npz``, read without unpickling anything."""
    with np.load(path, allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


def not_cached(path: str, *urls: str) -> Callable[[str], Any]:
    """A creator for ``cache_or_load_file`` that names the missing file and its sources."""

    def creator(_path: str) -> Any:
        sources = ", ".join(urls)
        raise DatasetNotCached(f"{path}: not in the dataset cache, and graphcore does not "
                               f"download (Chainer fetches it from {sources}); put the file "
                               f"there, or set CHAINER_DATASET_ROOT to a cache that has it")

    return creator
