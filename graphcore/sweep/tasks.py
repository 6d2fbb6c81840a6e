"""A sweep point made self-contained: what a worker needs to run it without the caller's files.

A ``SweepTask`` carries the spec's text, the command, the point's settings and the contents of
every file the spec reads: its ``file:`` inputs, its ``data:`` file, its ``validation: {file:}``
(inside the spec's folder or not), the ``--input`` overrides and the ``--plugin`` files. A
worker needs only graphtool installed; it never reads the caller's paths, even on the same
machine (``task._relocate`` points the loaded spec at the worker's copies). Its ``key`` hashes
all of that: the same spec, files and settings give the same key, which is how ``--resume``
recognises a point (an edited data file makes every point new).

Every point's task holds its own copy of the files (Dask sends each task's arguments with it,
and the scheduler keeps them until the point has run), so the files one task carries are
limited to ``MAX_CARRIED_BYTES`` together, checked from their sizes before anything is read.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graphcore.spec.model import Spec
from graphcore.sweep.grid import SweepOptionError

# Below Dask's 10 MB large-graph warning for one task, with room for the spec and settings.
MAX_CARRIED_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class SweepTask:
    command: str
    spec_file: str  # as the user named it (messages, the command line of a point)
    spec_text: str
    settings: dict[str, str]  # grid key -> value, as typed
    index: int = 0  # the point's place in the grid
    bench_repeat: int = 10
    # a path as the spec writes it (``file:`` inputs, ``data: file:``, ``validation: file:``)
    # -> the contents of the file it names
    spec_files: dict[str, bytes] = field(default_factory=dict)
    # input name -> (file name, contents) (``--input NAME=PATH``)
    input_files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    # ``--plugin`` files, in order: (file name, contents); a worker runs each before the spec
    plugins: tuple[tuple[str, bytes], ...] = ()

    @property
    def key(self) -> str:
        digest = hashlib.sha256()
        digest.update(json.dumps({"command": self.command, "settings": self.settings,
                                  "repeat": self.bench_repeat if self.command == "bench"
                                  else None}, sort_keys=True).encode())
        digest.update(self.spec_text.encode())
        for name, data in sorted(self.spec_files.items()):
            digest.update(name.encode() + hashlib.sha256(data).digest())
        for name, (file_name, data) in sorted(self.input_files.items()):
            digest.update(name.encode() + Path(file_name).suffix.encode()
                          + hashlib.sha256(data).digest())
        for _, data in self.plugins:  # an edited plugin is another point
            digest.update(b"plugin" + hashlib.sha256(data).digest())
        return digest.hexdigest()[:16]


def make_tasks(command: str, spec_file: str, spec_text: str, spec: Spec,
               points: Sequence[Mapping[str, str]], inputs: Mapping[str, str] | None = None,
               bench_repeat: int = 10, plugins: Sequence[str] = ()) -> list[SweepTask]:
    """One task per point. ``spec`` is the spec loaded once by the caller (it names the files
    to carry); ``inputs`` maps input names to ``--input`` paths; ``plugins`` are ``--plugin``
    files (already loaded by the caller), carried by their contents. Raises
    ``SweepOptionError`` for an input read from stdin (no ``--input`` for it) and when the
    files together are over ``MAX_CARRIED_BYTES``, ``FileNotFoundError`` for a file that is
    not there."""
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
    spec_files = {w: (folder / w).read_bytes() for w in written}
    input_files = {name: (os.path.basename(path), Path(path).read_bytes())
                   for name, path in inputs.items()}
    carried = tuple((os.path.basename(path), Path(path).read_bytes()) for path in plugins)
    return [SweepTask(command, spec_file, spec_text, dict(point), i, bench_repeat, spec_files,
                      input_files, carried)
            for i, point in enumerate(points)]


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
    return paths


def check_carried_size(sources: Sequence[tuple[str, str, Path]]) -> None:
    """Refuse, from their sizes (nothing is read), ``(name, what, path)`` files that together
    are more than a task carries; a missing one is a ``FileNotFoundError`` saying what it is."""
    sizes = []
    for name, what, path in sources:
        try:
            sizes.append((path.stat().st_size, name))
        except FileNotFoundError:
            raise FileNotFoundError(2, f"{what} not found", str(path)) from None
    total = sum(size for size, _ in sizes)
    if total <= MAX_CARRIED_BYTES:
        return
    largest = ", ".join(f"{name} ({_mib(size)})" for size, name in sorted(sizes, reverse=True)[:3])
    raise SweepOptionError(
        f"the files every sweep point carries to its worker total {_mib(total)}, over the "
        f"limit of {_mib(MAX_CARRIED_BYTES)} (each point's task holds its own copy): "
        f"{largest}; sweep over a smaller sample of the data, or run the points one at a time "
        "with `graphtool train`")


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size / 2**10:.1f} KiB"
