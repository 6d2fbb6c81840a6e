"""Save and load a Link's parameters (or an optimizer's state) as a numpy ``.npz`` file.

Keys are the names Chainer uses: parameter paths without the leading slash (``l1/W``,
``l1/b``), persistent values (``bn/avg_mean``), and for an optimizer ``t``, ``epoch`` and each
parameter's state (``l1/W/t``, ``l1/W/m``).  Loading never unpickles (``allow_pickle=False``)
and copies into the existing arrays in place, so an optimizer holding them keeps working.

>>> save_npz('model.npz', model)
>>> load_npz('model.npz', model)              # strict: every key must match, both ways
"""

from __future__ import annotations

import contextlib
import os
import secrets
import zipfile
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from graphcore.config import config
from graphcore.errors import ArgumentTypeError, SerializationError
from graphcore.links.link import Link
from graphcore.optimizers import Optimizer

__all__ = ["load_npz", "save_npz"]

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
             strict: bool = True) -> None:
    """Copy the arrays stored in ``file`` (under the key prefix ``path``) into ``obj``.

    A lazy parameter that is not initialized yet takes the file's shape.  Shape or dtype
    mismatches always raise ``SerializationError``; with ``strict`` so do keys the model has
    but the file lacks, and keys under ``path`` the file has but the model lacks.  Every
    array's shape is read from its header before any data is decompressed, so an array that
    does not fit an initialized parameter is refused without inflating it.
    """
    if not isinstance(obj, Link | Optimizer) and not hasattr(obj, "serialize"):
        raise ArgumentTypeError(f"load_npz loads into a Link or an Optimizer, got "
                                f"{type(obj).__name__}")
    _check_file("load_npz", file, "read")
    if not isinstance(path, str):
        raise ArgumentTypeError(f"load_npz: path must be a str (a key prefix), got "
                                f"{type(path).__name__}")
    headers = npz_headers(file)
    if isinstance(obj, Link):
        for name, param in obj.namedparams():
            key = path + name[1:]
            if param.array is not None and key in headers:
                shape, dtype = headers[key]
                if shape != param.array.shape or dtype != param.array.dtype:
                    raise SerializationError(
                        f"{key}: the model expects shape {param.array.shape}, dtype "
                        f"{param.array.dtype} but the file holds shape {shape}, dtype {dtype}")
    if not isinstance(file, str | os.PathLike):
        file.seek(0)
    try:
        npz = np.load(file, allow_pickle=False)
    except (ValueError, EOFError, zipfile.BadZipFile) as e:  # OSError (no such file) propagates
        raise SerializationError(f"cannot read {file!r} as an .npz file: {e}") from e
    with npz:
        loader = _Loader(npz, path, strict)
        if isinstance(obj, Optimizer):
            _load_optimizer(loader, obj)
        elif hasattr(obj, "serialize"):
            from graphcore.training.serialization import Loader

            obj.serialize(Loader(npz, path, strict))
            return
        else:
            _load_link(loader, obj)
        loader.finish()


def npz_headers(file: PathOrFile) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """``{key: (shape, dtype)}`` of every array in the .npz ``file``, read from each member's
    .npy header alone: no array data is decompressed, so a small file that would inflate to
    gigabytes (a zip bomb) costs nothing to inspect.

    Raises ``SerializationError`` when ``file`` is not an .npz archive of numeric arrays
    (``OSError`` for a path that cannot be opened propagates).
    """
    name = os.fspath(file) if isinstance(file, str | os.PathLike) else "the file"
    try:
        archive = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, EOFError, ValueError) as e:
        raise SerializationError(f"{name} is not an .npz file (a zip archive of .npy "
                                 "arrays)") from e
    headers = {}
    with archive:
        for info in archive.infolist():
            if info.filename.endswith("/"):
                continue
            key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            try:
                with archive.open(info) as member:
                    shape, dtype = _npy_header(member)
            except (ValueError, OSError, EOFError, zipfile.BadZipFile, RuntimeError) as e:
                raise SerializationError(f"{name}: '{key}' is not a readable .npy array "
                                         f"({e})") from e
            if dtype.hasobject:
                raise SerializationError(f"{name}: '{key}' holds Python objects (a pickled "
                                         "array), which are never loaded")
            headers[key] = (shape, dtype)
    return headers


def _npy_header(stream: IO[bytes]) -> tuple[tuple[int, ...], np.dtype]:
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
    else:  # 2.0 and 3.0 share the header layout; 3.0 only allows UTF-8 field names
        shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
    return tuple(shape), dtype


# --- saving -----------------------------------------------------------------------------------


def _collect(obj: Link | Optimizer) -> dict[str, np.ndarray]:
    if isinstance(obj, Optimizer):
        return _optimizer_arrays(obj)
    if isinstance(obj, Link):
        return _link_arrays(obj)
    if hasattr(obj, "serialize"):  # a Trainer, an updater, an iterator: Chainer's protocol
        from graphcore.training.serialization import Saver

        arrays: dict[str, np.ndarray] = {}
        obj.serialize(Saver(arrays))
        return arrays
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
    """Reads keys from an open npz under a prefix and remembers which ones were used."""

    def __init__(self, npz: Any, prefix: str, strict: bool) -> None:
        self.npz = npz
        self.keys = set(npz.files)
        self.prefix = prefix
        self.strict = strict
        self.unused = {k for k in self.keys if k.startswith(prefix)}
        self.missing: list[str] = []

    def has(self, key: str) -> bool:
        return self.prefix + key in self.keys

    def get(self, key: str) -> np.ndarray | None:
        """The array stored at ``key``; None (and noted as missing) when the file lacks it."""
        full = self.prefix + key
        if full not in self.keys:
            self.missing.append(full)
            return None
        self.unused.discard(full)
        try:
            return self.npz[full]
        except ValueError as e:  # an object array: we never unpickle
            raise SerializationError(f"{full}: cannot be loaded without pickle ({e})") from e

    def finish(self) -> None:
        if not self.strict:
            return
        if self.missing:
            raise SerializationError(
                f"the file lacks {len(self.missing)} key(s) the model has: "
                f"{', '.join(self.missing)} (pass strict=False to skip them)")
        if self.unused:
            raise SerializationError(
                f"the file has {len(self.unused)} key(s) the model lacks: "
                f"{', '.join(sorted(self.unused))} (pass strict=False to ignore them)")


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
        value = loader.get(key)
        if value is None:
            continue
        if param.array is None:  # lazy: the file decides the shape
            dtype = getattr(param.initializer, "dtype", None) or config.dtype
            _check(loader.prefix + key, value, value.shape, np.dtype(dtype))
            param.array = np.array(value)
        else:
            _check(loader.prefix + key, value, param.array.shape, param.array.dtype)
            np.copyto(param.array, value)
    for owner, attr, key in _persistent_slots(link):
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
            value = loader.get(f"{key}/{state_key}")
            if value is not None:
                _check(loader.prefix + f"{key}/{state_key}", value, current.shape, current.dtype)
                np.copyto(current, value)


def _load_scalar(loader: _Loader, key: str, store: Callable[[int], None]) -> None:
    value = loader.get(key)
    if value is None:
        return
    if value.shape != () or value.dtype.kind not in "iu":
        raise SerializationError(f"{loader.prefix}{key}: expected an integer scalar, got "
                                 f"shape {value.shape}, dtype {value.dtype}")
    store(int(value))
