"""Artifacts: written under ``<out-dir>/<spec name>/`` (or to an explicit path), so that an
interrupted command never leaves a half-written file and never replaces what is not a file.

What a write does depends on what the path names:

- nothing yet, or a regular file: a temporary file next to it, then a rename (atomic; an
  existing file keeps its permission bits);
- a symbolic link: the same at the link's final target; the link stays a link;
- a FIFO or a character device (``/dev/null``, a terminal): written straight into, never
  replaced; ``/dev/stdout``, ``/dev/stderr`` and ``/dev/fd/N`` write to this process's own
  descriptor, as a shell redirection would;
- a folder, a block device, a socket: refused (exit 73), as are paths that cannot be created.

Temporary files are ``.<name>.<pid>.<hex>.tmp`` beside their target. A failure, Ctrl-C or
SIGTERM removes its own; one left by a process killed outright (``kill -9``) is removed by the
next write to the same target when it is stale: its writer's pid is not running on this
machine, or it is older than ``STALE_AGE_S`` (a pid can be reused; no write takes an hour).

``write_files`` writes the files of one drawing (``graph.dot``, ``graph.png``) as a set: every
temporary file is written first, then the old files are removed and the new ones renamed into
place. A kill in between leaves a file missing, never a new ``graph.dot`` beside an old
``graph.png``.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import secrets
import stat
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from cli.errors import CANT_CREATE, IO_ERROR, CliError
from graphcore.errors import clip

STALE_AGE_S = 3600
_MAX_TEMP_NAME = 200  # bytes of the target's name kept in a temporary's name (limit 255)
_IO_ERRNOS = {errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG}
_OWN_DESCRIPTOR = re.compile(r"/dev/(?:(stdout)|(stderr)|fd/(\d+))|/proc/self/fd/(\d+)")

PathLike = str | os.PathLike[str]


def artifact_dir(out_dir: PathLike, name: str) -> Path:
    """``<out_dir>/<name>/``, created if needed (exit 73 when it cannot be)."""
    check_out_dir(out_dir)
    folder = Path(out_dir) / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _cannot_create(folder, err) from None
    return folder


def check_out_dir(out_dir: PathLike) -> None:
    """Refuse an ``--out-dir`` that names something other than a folder, before any work."""
    if os.fspath(out_dir) == "":
        raise CliError("--out-dir needs a folder, got ''", CANT_CREATE)
    with contextlib.suppress(OSError):
        if not stat.S_ISDIR(os.stat(out_dir).st_mode):
            raise CliError(f"cannot create output folder {out_dir}: it exists and is not a "
                           "folder", CANT_CREATE, hint="name a folder with --out-dir")


def check_output(path: PathLike) -> None:
    """Refuse an explicit output path (``-o``, ``--save``) that can never be written, before
    any work is done: ``''``, a folder, a block device, a socket, an impossible name."""
    _resolve(path)


def write_bytes(path: PathLike, data: bytes) -> str:
    """Write ``data`` to ``path`` (see the module docstring); returns the path as given."""
    return write_files({path: data})[0]


def write_text(path: PathLike, text: str) -> str:
    return write_bytes(path, text.encode("utf-8"))


def write_npz(path: PathLike, arrays: dict[str, np.ndarray]) -> str:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return write_bytes(path, buffer.getvalue())


def write_files(contents: Mapping[PathLike, bytes]) -> list[str]:
    """Write several files as one set (see the module docstring); returns their paths."""
    plan = [(os.fspath(path), *_resolve(path), data) for path, data in contents.items()]
    staged: list[tuple[str, Path, Path]] = []  # (path as given, temporary, final target)
    try:
        for given, kind, target, data in plan:
            if kind == "replace":
                staged.append((given, _stage(target, data), target))
        if len(staged) > 1:  # a set: no old file may survive beside a new one
            for given, _, target in staged:
                _remove_old(given, target)
        for given, tmp, target in staged:
            try:
                os.replace(tmp, target)
            except OSError as err:
                raise _cannot_create(given, err) from None
        for given, kind, target, data in plan:
            if kind != "replace":
                _stream(given, kind, target, data)
    finally:
        for _, tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return [given for given, *_ in plan]


# --- what a path names ---------------------------------------------------------------------
def _resolve(path: PathLike) -> tuple[str, Path | int]:
    """``("replace", file)``, ``("device", path)`` or ``("descriptor", fd)``; else CliError."""
    given = os.fspath(path)
    if given == "":
        raise CliError("cannot create output '': the path is empty", CANT_CREATE)
    own = _OWN_DESCRIPTOR.fullmatch(given)
    if own:
        stdout, stderr, fd, proc_fd = own.groups()
        return "descriptor", 1 if stdout else 2 if stderr else int(fd or proc_fd)
    try:
        info = os.stat(given)
    except FileNotFoundError:
        if os.path.islink(given):  # a dangling link: create its target, as open() would
            return "replace", Path(os.path.realpath(given))
        return "replace", Path(given)
    except (OSError, ValueError) as err:
        raise _cannot_create(given, err) from None
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        raise CliError(f"cannot create output {given}: it is a folder", CANT_CREATE,
                       hint="give a file name")
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return "device", Path(given)
    if not stat.S_ISREG(mode):
        what = "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) \
            else "not a regular file"
        raise CliError(f"cannot create output {given}: it is {what}; refusing to replace it",
                       CANT_CREATE)
    return "replace", Path(os.path.realpath(given)) if os.path.islink(given) else Path(given)


# --- writing -------------------------------------------------------------------------------
def _stage(target: Path, data: bytes) -> Path:
    """Write ``data`` to a new temporary file beside ``target``; return its path."""
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _cannot_create(target, err) from None
    remove_stale_temps(target)
    tmp = folder / f".{_temp_stem(target.name)}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as err:
        raise _cannot_create(target, err) from None
    try:
        with os.fdopen(fd, "wb") as f:
            with contextlib.suppress(OSError):  # keep an existing file's permission bits
                os.fchmod(f.fileno(), stat.S_IMODE(os.stat(target).st_mode))
            f.write(data)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(err, OSError):
            raise _cannot_create(target, err) from None
        raise
    return tmp


def _remove_old(given: str, target: Path) -> None:
    try:
        os.unlink(target)
    except FileNotFoundError:
        pass
    except OSError as err:
        raise _cannot_create(given, err) from None


def _stream(given: str, kind: str, target: Path | int, data: bytes) -> None:
    """Write into a FIFO, a device or one of our own descriptors, without replacing it."""
    try:
        if kind == "descriptor":
            sys.stdout.flush()
            sys.stderr.flush()
            _write_all(int(target), data)
            return
        fd = os.open(target, os.O_WRONLY)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    except BrokenPipeError:
        raise  # the reader went away: the one pipe rule (exit 141) applies
    except OSError as err:
        raise _cannot_create(given, err) from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _temp_stem(name: str) -> str:
    """The target's name as a temporary's name carries it (cut so the whole stays < 255)."""
    return name.encode("utf-8", "surrogateescape")[:_MAX_TEMP_NAME].decode(
        "utf-8", "ignore")


# --- leftovers -----------------------------------------------------------------------------
def remove_stale_temps(target: Path) -> list[Path]:
    """Remove the stale temporaries of ``target`` (see the module docstring); return them.

    Also removes, when older than ``STALE_AGE_S``, the pid-less temporaries earlier versions
    wrote (``.<name>.<hex>.tmp``, and ``<name>.<hex>.tmp`` of ``train --save``)."""
    stem = re.escape(_temp_stem(target.name))
    ours = re.compile(rf"\.{stem}\.(\d+)\.[0-9a-f]{{8}}\.tmp")
    legacy = re.compile(rf"\.?{stem}\.[0-9a-f]{{8}}\.tmp")
    removed = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        match = ours.fullmatch(entry.name)
        if not match and not legacy.fullmatch(entry.name):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                continue
            pid = int(match.group(1)) if match else None
            if pid == os.getpid():
                continue
            old = now - info.st_mtime > STALE_AGE_S
            if old or (pid is not None and not _running(pid)):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # someone else's process (or not a pid at all)
        return True
    return True


# --- errors --------------------------------------------------------------------------------
def output_error(path: PathLike, err: BaseException) -> CliError:
    """The error of an output ``path`` that could not be written (``err``: why): 73, or 74
    for a full disk or an I/O error."""
    return _cannot_create(path, err)


def _cannot_create(path: PathLike, err: BaseException) -> CliError:
    """The one-line message and code (73, or 74 for a full disk or an I/O error)."""
    reason = getattr(err, "strerror", None) or str(err)
    if isinstance(err, OSError) and err.errno in _IO_ERRNOS:
        return CliError(f"cannot write {clip(os.fspath(path))}: {reason}", IO_ERROR)
    if isinstance(err, OSError) and err.errno in (errno.ENOTDIR, errno.EEXIST):
        blocker = _file_in_the_way(Path(path))
        if blocker is not None:
            reason = f"{clip(str(blocker))} is a file, not a folder"
    return CliError(f"cannot create output {clip(os.fspath(path))}: {reason}", CANT_CREATE)


def _file_in_the_way(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` that is not a folder, if any."""
    for ancestor in [path, *path.parents][1:]:
        try:
            if not stat.S_ISDIR(os.stat(ancestor).st_mode):
                return ancestor
            return None
        except OSError:
            continue
    return None
