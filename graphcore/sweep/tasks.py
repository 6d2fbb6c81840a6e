"""A sweep point made self-contained: what a worker needs to run it without the caller's files.

A ``SweepTask`` carries the spec's text, the command, the point's settings and the contents of
every input file the spec reads (``file:`` inputs inside the spec's folder, and ``--input``
overrides), so a worker needs only graphtool installed. Its ``key`` hashes all of that: the
same spec, data and settings give the same key, which is how ``--resume`` recognises a point.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graphcore.spec.model import Spec


@dataclass(frozen=True)
class SweepTask:
    command: str
    spec_file: str  # as the user named it (messages, the command line of a point)
    spec_text: str
    settings: dict[str, str]  # grid key -> value, as typed
    index: int = 0  # the point's place in the grid
    bench_repeat: int = 10
    # relative path inside the spec's folder -> contents (the spec's ``file:`` inputs)
    spec_files: dict[str, bytes] = field(default_factory=dict)
    # input name -> (file name, contents) (``--input NAME=PATH``)
    input_files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    spec_folder: str = "."
    # the spec reads ``file:`` inputs from outside its folder, which the task cannot carry:
    # the workers must then be able to read them at the spec's folder
    needs_spec_folder: bool = False
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
    """One task per point. ``spec`` is the spec loaded once by the caller (it names the
    ``file:`` inputs to carry); ``inputs`` maps input names to ``--input`` paths; ``plugins``
    are ``--plugin`` files (already loaded by the caller), carried by their contents."""
    folder = Path(spec.folder)
    spec_files = {}
    needs_spec_folder = False
    for item in spec.inputs.values():
        if item.source != "file" or not item.path or item.name in (inputs or {}):
            continue
        if _inside(item.path):
            spec_files[item.path] = (folder / item.path).read_bytes()
        else:
            needs_spec_folder = True
    input_files = {name: (os.path.basename(path), Path(path).read_bytes())
                   for name, path in (inputs or {}).items()}
    carried = tuple((os.path.basename(path), Path(path).read_bytes()) for path in plugins)
    return [SweepTask(command, spec_file, spec_text, dict(point), i, bench_repeat, spec_files,
                      input_files, str(folder.resolve()), needs_spec_folder, carried)
            for i, point in enumerate(points)]


def _inside(relative: str) -> bool:
    """Whether ``relative`` names a file under the spec's folder (not absolute, no ``..``)."""
    path = Path(relative)
    return not path.is_absolute() and ".." not in path.parts
