"""A sweep point made self-contained: what a worker needs to run it without the caller's files.

What every point of a sweep shares is one ``SweepFiles``: the spec's text and the contents of
every file the spec reads: its ``file:`` inputs, its ``data:`` file, its ``validation:
{file:}`` (inside the spec's folder or not), the ``--input`` overrides and the ``--plugin``
files. A ``SweepTask`` is one point: the command, its settings and a reference to those
files. A worker needs only graphtool installed; it never reads the caller's paths, even on the
same machine (``task._relocate`` points the loaded spec at the worker's copies). A task's
``key`` hashes all of that: the same spec, files and settings give the same key, which is how
``--resume`` recognises a point (an edited data file makes every point new).

The files travel to each worker once, not once per point (``schedule.run_tasks`` scatters them
to every worker and each point's task refers to them), so the sweep process holds them once
however many points there are. They are refused, from their sizes before anything is read,
over ``MAX_CARRIED_BYTES`` together.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from pickle import PickleBuffer
from typing import Any, BinaryIO

from graphcore.commands.sweep.grid import SweepOptionError
from graphcore.errors import GraphcoreError, UnreadableFileError
from graphcore.files.regular import open_regular
from graphcore.language.syntax import Spec

# The files a sweep carries, together. The sweep process holds them once (a local cluster's
# scheduler, in the same process, a second copy while it passes them on: a 196 MB input
# peaks 384 MB over the process's start, whatever the number of points), each worker process
# one copy beside the arrays it parses from them. 256 MiB leaves room for one data array at
# the element limit (50M float32 values, 200 MB) with its labels and validation rows, and
# keeps a local cluster of 16 workers under 5 GB for the copies.
MAX_CARRIED_BYTES = 256 * 1024 * 1024


class SweepInputError(GraphcoreError, OSError):
    """A file the sweep would carry is not a readable regular file (a folder, a FIFO, a
    device): refused before anything is read from it (exit 66)."""


class SweepReadError(SweepInputError):
    """Reading a file the sweep carries failed midway (an I/O error: exit 74)."""


@dataclass(frozen=True, eq=False)
class SweepFiles:
    """What every point of one sweep shares, shipped to each worker once."""

    spec_text: str
    # a path as the spec writes it (``file:`` inputs, ``data: file:``, ``validation: file:``)
    # -> the contents of the file it names
    spec_files: dict[str, bytes] = field(default_factory=dict)
    # input name -> (file name, contents) (``--input NAME=PATH``)
    input_files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    # ``--plugin`` files, in order: (file name, contents); a worker runs each before the spec
    plugins: tuple[tuple[str, bytes], ...] = ()

    @cached_property
    def identity(self) -> bytes:
        """What a task's key hashes of these files: the spec's text, then each file's name
        and the SHA-256 of its contents (each file hashed once per sweep, not per point)."""
        parts = [self.spec_text.encode()]
        for name, data in sorted(self.spec_files.items()):
            parts.append(name.encode() + hashlib.sha256(data).digest())
        for name, (file_name, data) in sorted(self.input_files.items()):
            parts.append(name.encode() + Path(file_name).suffix.encode()
                         + hashlib.sha256(data).digest())
        for _, data in self.plugins:  # an edited plugin is another point
            parts.append(b"plugin" + hashlib.sha256(data).digest())
        return b"".join(parts)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, tuple[Any, ...]]:
        # protocol 5 (Dask's): the contents as pickle buffers, which Dask sends as frames of
        # their own instead of copying them into the pickle
        wrap = PickleBuffer if isinstance(protocol, int) and protocol >= 5 else bytes
        return _rebuild_files, (
            self.spec_text, {k: wrap(v) for k, v in self.spec_files.items()},
            {k: (name, wrap(v)) for k, (name, v) in self.input_files.items()},
            tuple((name, wrap(v)) for name, v in self.plugins))

    @property
    def carried_bytes(self) -> int:
        """The files' contents together (the spec's text not counted)."""
        return (sum(len(d) for d in self.spec_files.values())
                + sum(len(d) for _, d in self.input_files.values())
                + sum(len(d) for _, d in self.plugins))


def _rebuild_files(spec_text: str, spec_files: dict[str, Any],
                   input_files: dict[str, tuple[str, Any]],
                   plugins: tuple[tuple[str, Any], ...]) -> SweepFiles:
    """A ``SweepFiles`` from its pickle (contents as bytes or the buffers Dask received)."""
    return SweepFiles(spec_text, {k: bytes(v) for k, v in spec_files.items()},
                      {k: (name, bytes(v)) for k, (name, v) in input_files.items()},
                      tuple((name, bytes(v)) for name, v in plugins))


@dataclass(frozen=True)
class SweepTask:
    command: str
    spec_file: str  # as the user named it (messages, the command line of a point)
    settings: dict[str, str]  # grid key -> value, as typed
    index: int = 0  # the point's place in the grid
    bench_repeat: int = 10
    # shared by every task of a sweep (one object); None in a task sent to a worker, which
    # gets the files as its own argument (``schedule.run_tasks``)
    files: SweepFiles | None = field(default=None, compare=False, repr=False)
    key: str = ""  # ``task_key``, made from the files when the task is made

    def __post_init__(self) -> None:
        if not self.key and self.files is not None:
            object.__setattr__(self, "key", task_key(self.command, self.settings,
                                                     self.bench_repeat, self.files))

    @property
    def spec_text(self) -> str:
        return self._files.spec_text

    @property
    def spec_files(self) -> dict[str, bytes]:
        return self._files.spec_files

    @property
    def input_files(self) -> dict[str, tuple[str, bytes]]:
        return self._files.input_files

    @property
    def plugins(self) -> tuple[tuple[str, bytes], ...]:
        return self._files.plugins

    @property
    def _files(self) -> SweepFiles:
        if self.files is None:
            raise ValueError(f"sweep point {self.index} was sent without its files")
        return self.files

    def with_files(self, files: SweepFiles | None) -> SweepTask:
        """This task holding ``files`` (None: without them, as it is sent to a worker)."""
        return replace(self, files=files)


def task_key(command: str, settings: Mapping[str, str], bench_repeat: int,
             files: SweepFiles) -> str:
    """A point's identity: a hash of the command, its settings, the spec's text and the
    contents of every file it reads."""
    digest = hashlib.sha256()
    digest.update(json.dumps({"command": command, "settings": dict(settings),
                              "repeat": bench_repeat if command == "bench" else None},
                             sort_keys=True).encode())
    digest.update(files.identity)
    return digest.hexdigest()[:16]


def make_tasks(command: str, spec_file: str, spec_text: str, spec: Spec,
               points: Sequence[Mapping[str, str]], inputs: Mapping[str, str] | None = None,
               bench_repeat: int = 10, plugins: Sequence[str] = ()) -> list[SweepTask]:
    """One task per point, every one holding the same ``SweepFiles`` (read once). ``spec``
    is the spec loaded once by the caller (it names the files to carry); ``inputs`` maps
    input names to ``--input`` paths; ``plugins`` are ``--plugin`` files (already loaded by
    the caller), carried by their contents. Raises ``SweepOptionError`` for an input read
    from stdin (no ``--input`` for it) and when the files together are over
    ``MAX_CARRIED_BYTES``, ``FileNotFoundError`` for a file that is not there,
    ``SweepInputError`` for one that is not a regular file."""
    inputs = dict(inputs or {})
    for item in spec.inputs.values():
        if item.source == "stdin" and item.name not in inputs:
            raise SweepOptionError(f"{item.loc}: input '{item.name}' reads stdin, which a "
                                   "sweep's workers do not have; give the sweep a file for "
                                   f"it: --input {item.name}=PATH")
    folder = Path(spec.folder)
    written = spec_paths(spec, inputs)
    sources = [(w, what, folder / w) for w, what in written.items()]
    sources += [(f"--input {name}={path}", "input file", Path(path))
                for name, path in inputs.items()]
    sources += [(f"--plugin {path}", "plugin", Path(path)) for path in plugins]
    check_carried_size(sources)
    files = SweepFiles(
        spec_text,
        {w: _read(folder / w, what) for w, what in written.items()},
        {name: (os.path.basename(path), _read(Path(path), "input file"))
         for name, path in inputs.items()},
        tuple((os.path.basename(path), _read(Path(path), "plugin")) for path in plugins))
    if files.carried_bytes > MAX_CARRIED_BYTES:  # a file grew after it was measured
        raise SweepOptionError(f"the files every sweep point carries grew while they were "
                               f"read, to {_mib(files.carried_bytes)}, over the limit of "
                               f"{_mib(MAX_CARRIED_BYTES)}")
    return [SweepTask(command, spec_file, dict(point), i, bench_repeat, files)
            for i, point in enumerate(points)]


def _read(path: Path, what: str) -> bytes:
    """``path``'s contents, at most ``MAX_CARRIED_BYTES`` and one more byte of them (a file
    that grows while it is read cannot take the sweep's memory)."""
    with open_regular_file(path, f"{what} ") as handle:
        try:
            return handle.read(MAX_CARRIED_BYTES + 1)
        except OSError as err:
            raise SweepReadError(f"{what} {path}: read failed: {err.strerror or err}") from None


def open_regular_file(path: Path, what: str) -> BinaryIO:
    """``regular_files.open_regular``, its refusals as the sweep's own (exit 66); a missing
    file stays a ``FileNotFoundError``."""
    try:
        return open_regular(path, what)
    except UnreadableFileError as err:
        raise SweepInputError(err.message) from None


def spec_paths(spec: Spec, overridden: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every file path ``spec`` reads, as it writes them (relative to its folder unless
    absolute), in file order, once each, with what it is: ``file:`` inputs, the data file
    of ``data:``-fed inputs (those ``overridden`` by ``--input`` excepted) and
    ``validation: file:``."""
    paths: dict[str, str] = {}
    for item in spec.inputs.values():
        if item.name in (overridden or {}):
            continue
        if item.source == "file" and item.path:
            paths.setdefault(item.path, f"file of input '{item.name}'")
        elif item.source == "data" and item.column is not None and item.column.file:
            paths.setdefault(item.column.file, "data file")
    if spec.validation is not None and spec.validation.file:
        paths.setdefault(spec.validation.file, "validation file")
    if spec.test is not None and spec.test.file:
        paths.setdefault(spec.test.file, "test file")
    return paths


def check_carried_size(sources: Sequence[tuple[str, str, Path]]) -> None:
    """Refuse, from their sizes (nothing is read), ``(name, what, path)`` files that together
    are more than a sweep carries; a missing one is a ``FileNotFoundError`` saying what it is,
    one that is not a readable regular file a ``SweepInputError``."""
    sizes = []
    for name, what, path in sources:
        try:
            info = path.stat()
        except FileNotFoundError:
            raise FileNotFoundError(2, f"{what} not found", str(path)) from None
        except OSError as err:
            raise SweepInputError(f"{what} {path}: cannot read it: "
                                  f"{err.strerror or err}") from None
        if stat.S_ISDIR(info.st_mode):
            raise SweepInputError(f"{what} {path} is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the sweep; a device is endless
            raise SweepInputError(f"{what} {path} is not a regular file (a sweep carries the "
                                  "contents of its files to the workers)")
        if not os.access(path, os.R_OK):
            raise SweepInputError(f"{what} {path}: cannot read it: permission denied")
        sizes.append((info.st_size, name))
    total = sum(size for size, _ in sizes)
    if total <= MAX_CARRIED_BYTES:
        return
    largest = ", ".join(f"{name} ({_mib(size)})" for size, name in sorted(sizes, reverse=True)[:3])
    raise SweepOptionError(
        f"the files a sweep carries to its workers total {_mib(total)}, over the "
        f"limit of {_mib(MAX_CARRIED_BYTES)} (each worker holds a copy): "
        f"{largest}; sweep over a smaller sample of the data, or run the points one at a time "
        "with `graphtool train`")


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size / 2**10:.1f} KiB"
