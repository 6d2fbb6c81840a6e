"""The ``serialize(serializer)`` protocol of Chainer, for objects that are not a Link or an
Optimizer (a Trainer, an updater, an iterator, an extension).

``serializer[key]`` is a child under ``key/``; ``serializer(key, value)`` saves ``value``
(``Saver``) or returns the stored value (``Loader``: arrays are copied in place, scalars and
strings come back as the type of ``value``). Links and optimizers inside go through
``graphcore.serializers.serialize_link``/``serialize_optimizer`` (the one owner of the npz
layout of a Link and an Optimizer), so a trainer snapshot holds ``updater/model:main/l1/W``
exactly as ``save_npz(model)`` holds ``l1/W``. Nothing is pickled: strings are stored as
numpy unicode arrays. This module imports no serializer.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from graphcore.errors import SerializationError
from graphcore.files.arrays import ArrayFileError, NpzArchive


class AbstractSerializer:
    """Chainer's serializer protocol: ``serializer[key]`` is a child serializer under
    ``key/``, ``serializer(key, value)`` saves ``value`` or returns the stored one."""

    def __getitem__(self, key: str) -> AbstractSerializer:
        raise NotImplementedError

    def __call__(self, key: str, value: Any) -> Any:
        raise NotImplementedError


class Serializer(AbstractSerializer):
    """A serializer that saves (Chainer's ``chainer.serializer.Serializer``)."""

    def save(self, obj: Any) -> None:
        obj.serialize(self)


class Deserializer(AbstractSerializer):
    """A serializer that loads (Chainer's ``chainer.serializer.Deserializer``)."""

    def load(self, obj: Any) -> None:
        obj.serialize(self)


class Saver(Serializer):
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


class Loader(Deserializer):
    """Reads from an open ``.npz`` archive; ``strict``: a missing key is an error.

    The archive is untrusted: before a key's data is decompressed, its ``.npy`` header and its
    size in the zip directory are checked against what the reader expects (the shape and
    dtype of the array it copies into; a scalar of the right kind; text of at most
    ``MAX_TEXT_CHARS``), so a small file cannot make it allocate more than that. Every
    problem is a ``SerializationError`` naming the key. ``read``: the keys read so far (shared
    by a loader and its children), for ``unread``.
    """

    def __init__(self, npz: Any, path: str = "", strict: bool = True,
                 read: set[str] | None = None) -> None:
        self.npz = npz
        self.path = path
        self.strict = strict
        self.read = set() if read is None else read

    def __getitem__(self, key: str) -> Loader:
        return Loader(self.npz, f"{self.path}{key}/", self.strict, self.read)

    def __call__(self, key: str, value: Any) -> Any:
        full = self.path + key
        if full not in self.npz.files:
            if self.strict and value is not None:
                raise SerializationError(f"{full}: the file has no such key")
            return value
        self.read.add(full)
        shape, dtype = member_header(self.npz, full)
        check_stored(full, shape, dtype, value)
        stored = read_member(self.npz, full)
        if isinstance(value, np.ndarray):
            np.copyto(value, stored)
            return value
        if isinstance(value, str):
            return str(stored)
        if isinstance(value, bool | int | float):
            return type(value)(stored.item())
        return stored

    def unread(self) -> list[str]:
        """The archive's keys under this loader's path that nothing has read."""
        return sorted(k for k in self.npz.files if k.startswith(self.path) and k not in self.read)


MAX_TEXT_CHARS = 1 << 20  # a string a serializer stores (JSON of names, settings)
MAX_ARRAY_ELEMENTS = 50_000_000  # an array whose size the reader does not fix (a spec's limit)


def member_header(npz: Any, key: str) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype of ``key`` in the open archive ``npz`` (an ``NpzArchive``), from
    its ``.npy`` header alone: nothing else is inflated, and ``read_member`` checks the header
    against the member's size in the zip directory before reading (``array_files``)."""
    if not isinstance(npz, NpzArchive):  # a dict of arrays: nothing to inflate
        array = np.asarray(npz[key])
        return array.shape, array.dtype
    try:
        header = npz.header(key)
    except ArrayFileError as e:
        raise SerializationError(f"{key}: {e.message}") from None
    return tuple(header.shape), header.dtype


def read_member(npz: Any, key: str) -> np.ndarray:
    """``npz[key]``, bounded by its header and the archive's element limit; a damaged or
    lying member is a ``SerializationError`` naming the key (a bad CRC, a truncated stream,
    a header that claims more than the member holds)."""
    try:
        return npz[key]
    except ArrayFileError as e:
        raise SerializationError(f"{key}: {e.message}") from None


def check_stored(key: str, shape: tuple[int, ...], dtype: np.dtype, value: Any) -> None:
    """Refuse a stored array that cannot be what the reader loads into ``value``."""
    held = f"the file holds shape {shape}, dtype {dtype}"
    if isinstance(value, np.ndarray):
        if shape != value.shape or dtype != value.dtype:
            raise SerializationError(f"{key}: expected shape {value.shape}, dtype "
                                     f"{value.dtype}; {held}")
        return
    if isinstance(value, str):
        if shape != () or dtype.kind != "U":
            raise SerializationError(f"{key}: expected a string; {held}")
        if dtype.itemsize // 4 > MAX_TEXT_CHARS:
            raise SerializationError(f"{key}: a string of {dtype.itemsize // 4:,} characters, "
                                     f"over the limit of {MAX_TEXT_CHARS:,}")
        return
    if isinstance(value, bool | int | float):
        kinds = "b" if isinstance(value, bool) else "iu" if isinstance(value, int) else "fiu"
        what = {"b": "a boolean", "iu": "an integer", "fiu": "a number"}[kinds]
        if shape != () or dtype.kind not in kinds:
            raise SerializationError(f"{key}: expected {what} (a scalar); {held}")
        return
    if math.prod(shape) > MAX_ARRAY_ELEMENTS or dtype.kind not in "biufcU":
        raise SerializationError(f"{key}: {held}, which no reader of it expects")


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
        if not 0 <= pos <= len(keys) or has_gauss not in (0, 1):
            raise SerializationError(f"{serializer.path}pos, has_gauss: {pos}, {has_gauss} is "
                                     f"not a generator's state (pos in 0..{len(keys)}, "
                                     "has_gauss 0 or 1)")
        restored = (name, np.asarray(keys, dtype=np.uint32), int(pos), int(has_gauss),
                    float(cached))
        (np.random.set_state if state is None else state.set_state)(restored)


def load_json(serializer: Loader, key: str, check: Any, what: str) -> Any:
    """The JSON text stored at ``key``, parsed; ``check(value)`` says whether it is ``what``
    (e.g. "a list of names"): anything else is a ``SerializationError`` naming the key."""
    text = serializer(key, "")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise SerializationError(f"{serializer.path}{key}: not JSON ({e})") from None
    if not check(value):
        raise SerializationError(f"{serializer.path}{key}: expected {what}")
    return value
