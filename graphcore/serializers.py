"""Save and load a Link's parameters (or an optimizer's state) as a numpy ``.npz`` file.

Keys are the names Chainer uses: parameter paths without the leading slash (``l1/W``,
``l1/b``), persistent values (``bn/avg_mean``), and for an optimizer ``t``, ``epoch`` and each
parameter's state (``l1/W/t``, ``l1/W/m``).  Loading never unpickles (``allow_pickle=False``)
and copies into the existing arrays in place, so an optimizer holding them keeps working.
This module is the one owner of that layout: inside Chainer's ``serialize(serializer)``
protocol (``graphcore.serialization``: a Trainer's snapshot) a Link or an Optimizer goes
through ``serialize_link``/``serialize_optimizer`` here.

Chainer's serializer classes are here too, with Chainer's semantics: ``DictionarySerializer``
(saves into a dict: ``serialize(obj)``), ``NpzDeserializer`` (loads from an open archive: a
numpy ``NpzFile``, graphcore's bounded ``NpzArchive`` or a dict; ``strict``, ``ignore_names``;
casts into the target's dtype as ``numpy.copyto`` does) and ``load(obj)`` / ``save(obj)``, for
any object with ``serialize(serializer)``; Links and Optimizers have it.

>>> save_npz('model.npz', model)
>>> load_npz('model.npz', model)              # strict: every key of the model is in the file
>>> load_npz('model.npz', model, exact=True)  # ... and every key of the file is the model's
>>> load_npz('model.npz', model, ignore_names=['l1/b'])    # leave some keys alone
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator
from typing import IO, Any

import numpy as np

from graphcore.config import config
from graphcore.errors import ArgumentTypeError, SerializationError
from graphcore.files.arrays import ArrayFileError, NpzArchive
from graphcore.files.regular import open_regular
from graphcore.links.link import Link
from graphcore.optimizers import Optimizer
from graphcore.serialization import (  # noqa: F401  (Chainer's names)
    AbstractSerializer,
    Deserializer,
    Loader,
    Saver,
    Serializer,
    check_stored,
    member_header,
    read_member,
)

__all__ = ["DictionarySerializer", "NpzDeserializer", "load_npz", "save_npz", "serialize"]

PathOrFile = str | os.PathLike | IO[bytes]


def save_npz(file: PathOrFile, obj: Link | Optimizer, compression: bool = True) -> None:
    """Write ``obj``'s arrays to ``file`` (a path, written atomically, or a binary file object).

    A lazy parameter not initialized yet has no array to save and is left out (Chainer
    writes a pickled None; we never pickle): ``load_npz`` leaves it lazy, as Chainer does.
    """
    arrays = _collect(obj)
    _check_file("save_npz", file, "write")
    savez = np.savez_compressed if compression else np.savez
    if not isinstance(file, str | os.PathLike):
        savez(file, **arrays)
        return
    path = os.fspath(file)
    # Write next to the target, then rename: a crash never leaves a half-written file.
    # os.open applies the umask to 0o666, so the file gets the permissions open() would give.
    tmp = f"{path}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            savez(f, **arrays)  # a file object, so numpy does not append '.npz' to the name
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def load_npz(file: PathOrFile, obj: Link | Optimizer, path: str = "",
             strict: bool = True, ignore_names: Any = None,
             max_elements: int | None = None, exact: bool = False) -> None:
    """Copy the arrays stored in ``file`` (under the key prefix ``path``) into ``obj``.

    A lazy parameter that is not initialized yet takes the file's shape.  Shape or dtype
    mismatches always raise ``SerializationError``; with ``strict`` so do keys the model has
    but the file lacks (Chainer's meaning of strict: keys the file has beyond the model's are
    ignored, so a sub-model loads from a whole model's file), and with ``exact`` (graphcore's)
    keys under ``path`` the file has but the model lacks as well.  Every
    array's header is checked before its data is inflated: against the array it replaces
    (shape and dtype), against ``max_elements`` where none constrains it (a lazy parameter),
    and against the member's own declared size, so a small file that would inflate to
    gigabytes is refused without inflating it (``graphcore.files.arrays``).

    ``ignore_names`` (Chainer's): a key, a predicate on keys, or a list of them, to leave as
    they are; the file is then read through ``NpzDeserializer`` (Chainer's rules: values are
    cast to the target's dtype, and the checks above apply except that one).
    """
    if not isinstance(obj, Link | Optimizer) and not hasattr(obj, "serialize"):
        raise ArgumentTypeError(f"load_npz loads into a Link or an Optimizer, got "
                                f"{type(obj).__name__}")
    _check_file("load_npz", file, "read")
    if not isinstance(path, str):
        raise ArgumentTypeError(f"load_npz: path must be a str (a key prefix), got "
                                f"{type(path).__name__}")
    with open_npz(file, max_elements) as archive:
        if ignore_names is not None or not isinstance(obj, Link | Optimizer):
            NpzDeserializer(archive, path, strict, ignore_names).load(obj)
            return
        loader = _Loader(archive, path, strict, exact)
        if isinstance(obj, Optimizer):
            _load_optimizer(loader, obj)
        else:
            _check_link(loader, obj)
            _load_link(loader, obj)
        loader.finish()


@contextlib.contextmanager
def open_npz(file: PathOrFile, max_elements: int | None = None) -> Iterator[NpzArchive]:
    """``file`` (a path or a binary file object) as a bounded ``NpzArchive``; a file that is
    not an .npz archive is a ``SerializationError``. A path that does not exist raises
    ``FileNotFoundError``; a folder, a FIFO or an unreadable path ``UnreadableFileError``
    (an ``OSError``), at once."""
    name = os.fspath(file) if isinstance(file, str | os.PathLike) else "the file"
    handle = open_regular(file) if isinstance(file, str | os.PathLike) else None
    try:
        if handle is None:
            file.seek(0)
        try:
            archive = NpzArchive(handle or file, max_elements)
        except ArrayFileError as e:
            raise SerializationError(f"{name} {e}") from None
        with archive:
            yield archive
    finally:
        if handle is not None:
            handle.close()


def npz_headers(file: PathOrFile) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """``{key: (shape, dtype)}`` of every array in the .npz ``file``, read from each member's
    .npy header alone: no array data is decompressed, so a small file that would inflate to
    gigabytes (a zip bomb) costs nothing to inspect.

    Raises ``SerializationError`` when ``file`` is not an .npz archive of numeric arrays
    (``OSError`` for a path that cannot be opened propagates).
    """
    name = os.fspath(file) if isinstance(file, str | os.PathLike) else "the file"
    with open_npz(file) as archive:
        try:
            headers = {key: archive.header(key) for key in archive}
        except ArrayFileError as e:
            raise SerializationError(f"{name}: {e}") from None
    return {key: (header.shape, header.dtype) for key, header in headers.items()}


# --- saving -----------------------------------------------------------------------------------


def _collect(obj: Link | Optimizer) -> dict[str, np.ndarray]:
    if isinstance(obj, Optimizer):
        return _optimizer_arrays(obj)
    if isinstance(obj, Link):
        return _link_arrays(obj)
    if isinstance(obj, dict):  # Chainer's save_npz writes a dict of arrays as it is
        arrays = obj
    elif hasattr(obj, "serialize"):  # a Trainer, an updater, an iterator: Chainer's protocol
        arrays = serialize(obj)
    else:
        arrays = None
    if arrays is not None:
        # None (an uninitialized value) is left out: Chainer pickles it, graphcore never does
        kept = {key: np.asarray(value) for key, value in arrays.items()
                if value is not None and not (isinstance(value, np.ndarray)
                                              and value.dtype == object and value.shape == ()
                                              and value[()] is None)}
        for key, value in kept.items():
            if value.dtype == object:
                raise SerializationError(f"{key}: save_npz writes numbers and strings; a "
                                         f"Python object would need pickling, which graphcore "
                                         f"never writes")
        return kept
    raise ArgumentTypeError(f"save_npz saves a Link or an Optimizer, got {type(obj).__name__}")


def _check_file(api: str, file: object, method: str) -> None:
    if not isinstance(file, str | os.PathLike) and not hasattr(file, method):
        raise ArgumentTypeError(f"{api}: file must be a path or a binary file object, got "
                                f"{type(file).__name__}")


def _link_arrays(link: Link) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for name, param in link.namedparams():
        if param.array is not None:  # a lazy parameter not initialized yet is left out
            arrays[name[1:]] = param.array
    for name, value in link.namedpersistent():
        if value is None:
            raise SerializationError(
                f"{name[1:]}: persistent value is not initialized yet; run the model once "
                "before saving it")
        arrays[name[1:]] = np.asarray(value)
    return arrays


def _optimizer_arrays(optimizer: Optimizer) -> dict[str, np.ndarray]:
    if optimizer.target is None:
        raise SerializationError("the optimizer has no target; call setup(link) first")
    arrays = {"t": np.asarray(optimizer.t), "epoch": np.asarray(optimizer.epoch)}
    for name, param in optimizer.target.namedparams():
        rule = param.update_rule
        if rule is None or rule.state is None:
            continue  # not updated yet: nothing to save
        arrays[f"{name[1:]}/t"] = np.asarray(rule.t)
        for key, value in rule.state.items():
            arrays[f"{name[1:]}/{key}"] = value
    return arrays


# --- loading ----------------------------------------------------------------------------------


class _Loader:
    """Reads keys from an open archive under a prefix and remembers which ones were used;
    each array's header is checked against what it is read into before it is inflated."""

    def __init__(self, npz: NpzArchive, prefix: str, strict: bool, exact: bool = True) -> None:
        self.npz = npz
        self.keys = set(npz.files)
        self.prefix = prefix
        self.strict = strict
        self.exact = exact
        self.unused = {k for k in self.keys if k.startswith(prefix)}
        self.missing: list[str] = []

    def has(self, key: str) -> bool:
        return self.prefix + key in self.keys

    def header(self, key: str) -> tuple[tuple[int, ...], np.dtype]:
        """The (shape, dtype) the file declares for ``key`` (under the prefix)."""
        try:
            header = self.npz.header(self.prefix + key)
        except ArrayFileError as e:
            raise SerializationError(str(e)) from None
        return header.shape, header.dtype

    def get(self, key: str, shape: tuple[int, ...] | None = None,
            dtype: np.dtype | None = None) -> np.ndarray | None:
        """The array stored at ``key``; None (and noted as missing) when the file lacks it.
        ``shape``/``dtype``: what it must be, checked from its header before reading."""
        full = self.prefix + key
        if full not in self.keys:
            self.missing.append(full)
            return None
        self.unused.discard(full)
        if shape is not None or dtype is not None:
            got_shape, got_dtype = self.header(key)
            want_shape = got_shape if shape is None else tuple(shape)
            want_dtype = got_dtype if dtype is None else np.dtype(dtype)
            if got_shape != want_shape or got_dtype != want_dtype:
                raise SerializationError(
                    f"{full}: the model expects shape {want_shape}, dtype {want_dtype} but the "
                    f"file holds shape {got_shape}, dtype {got_dtype}")
        try:
            return self.npz[full]
        except ArrayFileError as e:  # over the limit, cut short, an object array: never read
            raise SerializationError(str(e)) from None

    def finish(self) -> None:
        if not self.strict:
            return
        if self.missing:
            raise SerializationError(
                f"the file lacks {len(self.missing)} key(s) the model has: "
                f"{', '.join(self.missing)} (pass strict=False to skip them)")
        if self.unused and self.exact:
            raise SerializationError(
                f"the file has {len(self.unused)} key(s) the model lacks: "
                f"{', '.join(sorted(self.unused))} (pass strict=False to ignore them)")


def _check_link(loader: _Loader, link: Link) -> None:
    """Every initialized parameter the file holds fits it: shapes and dtypes from the
    headers, all before any array is read (the first misfit is the error)."""
    for name, param in link.namedparams():
        key = name[1:]
        if param.array is not None and loader.has(key):
            shape, dtype = loader.header(key)
            if shape != param.array.shape or dtype != param.array.dtype:
                raise SerializationError(
                    f"{loader.prefix}{key}: the model expects shape {param.array.shape}, dtype "
                    f"{param.array.dtype} but the file holds shape {shape}, dtype {dtype}")


def _check(key: str, value: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> None:
    if value.shape != tuple(shape) or value.dtype != dtype:
        raise SerializationError(
            f"{key}: the model expects shape {tuple(shape)}, dtype {np.dtype(dtype)} but the "
            f"file holds shape {value.shape}, dtype {value.dtype}")


def _load_link(loader: _Loader, link: Link) -> None:
    for name, param in link.namedparams():
        key = name[1:]
        if param.array is None and not loader.has(key):
            continue  # saved before it was initialized: it stays lazy (Chainer's None)
        if param.array is None:  # lazy: the file decides the shape, not the dtype
            dtype = getattr(param.initializer, "dtype", None) or config.dtype
            value = loader.get(key, dtype=np.dtype(dtype))
            if value is not None:
                param.array = np.array(value)
            continue
        value = loader.get(key, param.array.shape, param.array.dtype)
        if value is not None:
            np.copyto(param.array, value)
    for owner, attr, key in _persistent_slots(link):
        current = getattr(owner, attr)
        if isinstance(current, np.ndarray):
            value = loader.get(key, current.shape, current.dtype)
        elif isinstance(current, bool | int | float):
            value = loader.get(key, ())
        else:
            value = loader.get(key)
        if value is not None:
            _load_persistent(loader.prefix + key, owner, attr, value)


def _persistent_slots(link: Link) -> list[tuple[Link, str, str]]:
    """``(owning link, attribute name, key)`` for every persistent value under ``link``."""
    slots = []
    for path, sublink in link.namedlinks():
        prefix = "" if path == "/" else path[1:] + "/"
        for attr in sublink._persistent:
            slots.append((sublink, attr, prefix + attr))
    return slots


def _load_persistent(key: str, owner: Link, attr: str, value: np.ndarray) -> None:
    current = getattr(owner, attr)
    if isinstance(current, np.ndarray):
        _check(key, value, current.shape, current.dtype)
        np.copyto(current, value)
    elif isinstance(current, bool | int | float):
        if value.shape != ():
            raise SerializationError(
                f"{key}: the model expects a scalar but the file holds shape {value.shape}")
        object.__setattr__(owner, attr, type(current)(value.item()))
    else:  # None (lazy) or another kind: take the file's array
        object.__setattr__(owner, attr, np.array(value))


def _load_optimizer(loader: _Loader, optimizer: Optimizer) -> None:
    if optimizer.target is None:
        raise SerializationError("the optimizer has no target; call setup(link) first")
    _load_scalar(loader, "t", lambda v: setattr(optimizer, "t", v))
    _load_scalar(loader, "epoch", lambda v: setattr(optimizer, "epoch", v))
    for name, param in optimizer.target.namedparams():
        key = name[1:]
        rule = optimizer.update_rule_of(param)
        if not loader.has(f"{key}/t"):
            if rule.state is not None:
                loader.get(f"{key}/t")  # the model has state the file lacks: noted missing
            continue
        if param.array is None:
            raise SerializationError(
                f"{key}: optimizer state cannot be loaded into an uninitialized parameter; "
                "load the model (or run it once) first")
        _load_scalar(loader, f"{key}/t", lambda v, rule=rule: setattr(rule, "t", v))
        if rule.state is None:
            rule.state = {}
            rule.init_state(param)
        for state_key, current in rule.state.items():
            value = loader.get(f"{key}/{state_key}", current.shape, current.dtype)
            if value is not None:
                np.copyto(current, value)


def _load_scalar(loader: _Loader, key: str, store: Callable[[int], None]) -> None:
    if loader.has(key) and loader.header(key)[0] != ():
        raise SerializationError(f"{loader.prefix}{key}: expected an integer scalar, got "
                                 f"shape {loader.header(key)[0]}")
    value = loader.get(key)
    if value is None:
        return
    if value.shape != () or value.dtype.kind not in "iu":
        raise SerializationError(f"{loader.prefix}{key}: expected an integer scalar, got "
                                 f"shape {value.shape}, dtype {value.dtype}")
    store(int(value))


# --- inside Chainer's serialize(serializer) protocol (graphcore.serialization) ------------------


def serialize_link(serializer: Saver | Loader, link: Link) -> None:
    """Save or load ``link``'s arrays under the serializer's path, in ``save_npz``'s layout
    (a trainer snapshot's ``updater/model:main/l1/W``)."""
    _serialize(serializer, link, _link_arrays, _load_link)


def serialize_optimizer(serializer: Saver | Loader, optimizer: Optimizer) -> None:
    """Save or load ``optimizer``'s state under the serializer's path, in ``save_npz``'s
    layout."""
    _serialize(serializer, optimizer, _optimizer_arrays, _load_optimizer)


def _serialize(serializer: Saver | Loader, target: Link | Optimizer,
               arrays: Callable[[Any], dict[str, np.ndarray]],
               load: Callable[[_Loader, Any], None]) -> None:
    """Save ``arrays(target)`` under the serializer's path, or load them with ``load``."""
    if isinstance(serializer, Saver):
        for key, array in arrays(target).items():
            serializer.target[serializer.path + key] = array
        return
    # the archive is an ``NpzArchive``: each array read is bounded by its header and the
    # archive's element limit before it is decompressed
    loader = _Loader(serializer.npz, serializer.path, serializer.strict)
    load(loader, target)
    loader.finish()
    serializer.read.update(k for k in serializer.npz.files if k.startswith(serializer.path))


# --- Chainer's serializer classes -----------------------------------------------------------


class DictionarySerializer(Saver):
    """Saves into a dict of arrays keyed by ``/``-joined paths (Chainer's): a leading or
    trailing ``/`` of a key is dropped, and None is kept as a 0-d object array (in memory;
    ``save_npz`` leaves it out of a file)."""

    def __init__(self, target: dict[str, np.ndarray] | None = None, path: str = "") -> None:
        super().__init__({} if target is None else target, path)

    def __getitem__(self, key: str) -> DictionarySerializer:
        return DictionarySerializer(self.target, f"{self.path}{key.strip('/')}/")

    def __call__(self, key: str, value: Any) -> Any:
        self.target[self.path + key.lstrip("/")] = (
            np.asarray(None) if value is None else np.asarray(value))
        return value


def serialize(obj: Any) -> dict[str, np.ndarray]:
    """``obj``'s values as a dict, through its ``serialize`` (Chainer's ``npz.serialize``)."""
    serializer = DictionarySerializer()
    serializer.save(obj)
    return serializer.target


def _is_ignored(key: str, ignore_names: Any) -> bool:
    names = ignore_names if isinstance(ignore_names, tuple | list) else (ignore_names,)
    for name in names:
        if isinstance(name, str):
            if key == name:
                return True
        elif callable(name):
            if name(key):
                return True
        else:
            raise ValueError(f"ignore_names holds keys (str), predicates (callables) or a list "
                             f"of them; got {type(name).__name__}")
    return False


class NpzDeserializer(Loader):
    """Loads from an open archive with Chainer's rules: ``strict`` (a key the archive lacks
    raises ``KeyError``; otherwise the value is returned unchanged), ``ignore_names``, a value
    of None gets the stored array, an array is filled by ``numpy.copyto`` (so cast to its dtype
    within its kind: float64 into float16, not float into an integer array), a scalar is
    converted to the value's type where that is safe (``TypeError`` otherwise). What graphcore
    refuses beyond Chainer, each a ``SerializationError`` naming the key, decided from the
    stored array's header before its data is read: a shape other than the target array's, a
    non-scalar for a scalar, text over ``MAX_TEXT_CHARS``, an array of no fixed shape over the
    archive's element limit, and a pickled object other than None."""

    def __init__(self, npz: Any, path: str = "", strict: bool = True,
                 ignore_names: Any = None) -> None:
        super().__init__(npz, path, strict)
        self.ignore_names = [] if ignore_names is None else ignore_names

    def __getitem__(self, key: str) -> NpzDeserializer:
        child = NpzDeserializer(self.npz, f"{self.path}{key.strip('/')}/", self.strict,
                                self.ignore_names)
        child.read = self.read
        return child

    def __call__(self, key: str, value: Any) -> Any:
        key = self.path + key.lstrip("/")
        files = getattr(self.npz, "files", self.npz)
        if not self.strict and key not in files:
            return value
        if _is_ignored(key, self.ignore_names):
            return value
        if key not in files:
            raise KeyError(f"{key}: the file has no such key")
        self.read.add(key)
        shape, dtype = member_header(self.npz, key)
        held = f"the file holds shape {shape}, dtype {dtype}"
        if dtype.kind == "O":  # only a numpy NpzFile opened with allow_pickle holds these
            stored = self.npz[key]
            if stored.shape == () and stored[()] is None:
                return None
            raise SerializationError(f"{key}: {held}: a pickled Python object, which graphcore "
                                     f"does not load")
        if isinstance(value, np.ndarray):
            if shape != value.shape or not np.can_cast(dtype, value.dtype, "same_kind"):
                raise SerializationError(f"{key}: expected shape {value.shape}, dtype "
                                         f"{value.dtype}; {held}")
            np.copyto(value, read_member(self.npz, key))
            return value
        if value is None or isinstance(value, str):
            check_stored(key, shape, dtype, value)  # text and unshaped arrays within their limits
            stored = read_member(self.npz, key)
            return str(stored) if isinstance(value, str) else stored
        if shape != ():
            if isinstance(value, bool | int | float):
                check_stored(key, shape, dtype, value)  # names what it expected
            raise SerializationError(f"{key}: expected a scalar ({type(value).__name__}); "
                                     f"{held}")
        stored = read_member(self.npz, key)
        kind = type(value)
        if (np.issubdtype(stored.dtype, np.number)
                and not (np.issubdtype(stored.dtype, np.integer) and kind is int)
                and not np.can_cast(stored.dtype, kind, casting="safe")):
            raise TypeError(f"{key}: cannot safely load a {stored.dtype} value into a "
                            f"{kind.__name__}")
        return kind(stored)
