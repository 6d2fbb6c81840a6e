"""The ``serialize(serializer)`` protocol of Chainer, for objects that are not a Link or an
Optimizer (a Trainer, an updater, an iterator, an extension).

``serializer[key]`` is a child under ``key/``; ``serializer(key, value)`` saves ``value``
(``Saver``) or returns the stored value (``Loader``: arrays are copied in place, scalars and
strings come back as the type of ``value``). Links and optimizers inside go through
``serialize_link``/``serialize_optimizer``, which use ``graphcore.serializers``' own layout, so
a trainer snapshot holds ``updater/model:main/l1/W`` exactly as ``save_npz(model)`` holds
``l1/W``. Nothing is pickled: strings are stored as numpy unicode arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphcore import serializers
from graphcore.array_files import ArrayFileError
from graphcore.errors import SerializationError


class Saver:
    """Writes into a flat ``dict`` of arrays keyed by ``/``-joined paths."""

    def __init__(self, target: dict[str, np.ndarray], path: str = "") -> None:
        self.target = target
        self.path = path

    def __getitem__(self, key: str) -> Saver:
        return Saver(self.target, f"{self.path}{key}/")

    def __call__(self, key: str, value: Any) -> Any:
        if value is not None:
            self.target[self.path + key] = np.asarray(value)
        return value


class Loader:
    """Reads from an open ``.npz`` archive; ``strict``: a missing key is an error."""

    def __init__(self, npz: Any, path: str = "", strict: bool = True) -> None:
        self.npz = npz
        self.path = path
        self.strict = strict

    def __getitem__(self, key: str) -> Loader:
        return Loader(self.npz, f"{self.path}{key}/", self.strict)

    def __call__(self, key: str, value: Any) -> Any:
        full = self.path + key
        if full not in self.npz.files:
            if self.strict and value is not None:
                raise SerializationError(f"{full}: the file has no such key")
            return value
        # The header is checked against the value it replaces before anything is inflated
        # (a checkpoint's arrays are only ever as large as the trainer's own).
        try:
            shape = self.npz.header(full).shape
        except ArrayFileError as e:  # not a readable array
            raise SerializationError(str(e)) from None
        if isinstance(value, np.ndarray) and value.shape != shape:
            raise SerializationError(f"{full}: expected shape {value.shape}, the file "
                                     f"holds {shape}")
        if isinstance(value, bool | int | float) and shape != ():
            raise SerializationError(f"{full}: expected a scalar, the file holds shape "
                                     f"{shape}")
        try:
            stored = self.npz[full]
        except ArrayFileError as e:  # over the archive's limit, cut short
            raise SerializationError(str(e)) from None
        if isinstance(value, np.ndarray):
            np.copyto(value, stored)
            return value
        if isinstance(value, str):
            return str(stored)
        if isinstance(value, bool | int | float):
            return type(value)(stored.item())
        return stored


def serialize_link(serializer: Saver | Loader, link: Any) -> None:
    _serialize(serializer, link, serializers._link_arrays, serializers._load_link)


def serialize_optimizer(serializer: Saver | Loader, optimizer: Any) -> None:
    _serialize(serializer, optimizer, serializers._optimizer_arrays,
               serializers._load_optimizer)


def _serialize(serializer: Saver | Loader, target: Any, arrays: Any, load: Any) -> None:
    """Save ``arrays(target)`` under the serializer's path, or load them with ``load``."""
    if isinstance(serializer, Saver):
        for key, array in arrays(target).items():
            serializer.target[serializer.path + key] = array
        return
    loader = serializers._Loader(serializer.npz, serializer.path, serializer.strict)
    load(loader, target)
    loader.finish()


def serialize_random_state(serializer: Saver | Loader, state: np.random.RandomState | None
                           ) -> None:
    """Save or restore a ``RandomState`` (``None``: numpy's global generator)."""
    get = np.random.get_state if state is None else state.get_state
    name, keys, pos, has_gauss, cached = get()
    keys = serializer("keys", keys)
    pos = serializer("pos", int(pos))
    has_gauss = serializer("has_gauss", int(has_gauss))
    cached = serializer("cached_gaussian", float(cached))
    if isinstance(serializer, Loader):
        restored = (name, np.asarray(keys, dtype=np.uint32), int(pos), int(has_gauss),
                    float(cached))
        (np.random.set_state if state is None else state.set_state)(restored)
