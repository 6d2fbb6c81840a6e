"""The shipped specs (``specs/*.yaml`` and ``examples/swish.yaml`` with its plugin), and one
``graphtool check`` / ``graphtool run`` per spec (a shipped one, or a matrix family's) and mode
for the whole session.

The same gradient check of a shipped spec was asserted on by several test files (the CLI's
check tests, the product matrix's check cells); each paid for its own run. ``Shipped`` (the
session fixture ``shipped`` of ``tests/conftest.py``) runs each command once, in-process, on
first use inside a test, and hands every reader the same outcome (exit code, stdout, stderr),
in every pytest-xdist worker:

- ``shipped.check(path, mode)``: ``graphtool check PATH [--plugin ...] --mode MODE --json``.
- ``shipped.run(path, mode)``: ``graphtool run PATH [--plugin ...] --mode MODE --json -o
  ARRAYS --out-dir OUT`` into a folder of its own; ``.arrays`` and ``.out_dir`` say where.

The results are shared: a reader must not change them or the files they name (a test that
needs to change a spec or its outputs runs its own command). Each command runs as in a new
process (no op that a test loaded from a plugin) and leaves the op registry and the loaded
plugins as they were, whichever test asked first.
"""

from __future__ import annotations

import fcntl
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from cli_helpers import invoke

from graphcore import registry

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted((ROOT / "specs").glob("*.yaml"))
SWISH = ROOT / "examples" / "swish.yaml"
PLUGINS = {SWISH: ROOT / "examples" / "swish_ops.py"}
SHIPPED = [*SPECS, SWISH]


def plugin_args(path: Path) -> list[str]:
    plugin = PLUGINS.get(Path(path))
    return [] if plugin is None else ["--plugin", str(plugin)]


@dataclass(frozen=True)
class Done:
    """What a test reads of a command's ``Result``."""

    exit_code: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class RunDone:
    result: Done
    arrays: Path
    out_dir: Path


class Shipped:
    """Each command's outcome is kept in ``scratch`` (a folder shared by pytest-xdist's
    workers): the first process to ask runs it, under a lock, and the others read it."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self._cache: dict[str, Done] = {}

    def check(self, path: Path, mode: str = "dynamic") -> Done:
        return self._once(f"check-{Path(path).stem}-{mode}", lambda folder: (
            "check", path, *plugin_args(path), "--mode", mode, "--json"))

    def run(self, path: Path, mode: str = "dynamic") -> RunDone:
        folder = self.scratch / f"run-{Path(path).stem}-{mode}"
        arrays, out_dir = folder / "arrays.npz", folder / "out"
        result = self._once(folder.name, lambda folder: (
            "run", path, *plugin_args(path), "--mode", mode, "--json", "-o", arrays,
            "--out-dir", out_dir))
        return RunDone(result, arrays, out_dir)

    def _once(self, name: str, argv) -> Done:
        if name not in self._cache:
            folder = self.scratch / name
            folder.mkdir(parents=True, exist_ok=True)
            record = folder / "done.json"
            with open(folder / "lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not record.exists():
                    result = _isolated(*argv(folder))
                    done = Done(result.exit_code, result.stdout, result.stderr)
                    partial = folder / "done.json.partial"
                    partial.write_text(json.dumps(asdict(done)))
                    partial.replace(record)
            self._cache[name] = Done(**json.loads(record.read_text()))
        return self._cache[name]


def _isolated(*argv):
    """``graphtool ARGV`` in-process, as in a new process: without the ops a test loaded from a
    plugin before asking (its ``--plugin`` registers them itself); the op registry and the
    plugin modules restored after."""
    ops, modules = dict(registry._ops), set(sys.modules)
    for name, cls in ops.items():
        if cls.__module__.startswith("graphtool_plugin_"):
            del registry._ops[name]
    try:
        return invoke(*argv)
    finally:
        registry._ops.clear()
        registry._ops.update(ops)
        for name in set(sys.modules) - modules:
            if name.startswith("graphtool_plugin_"):
                del sys.modules[name]
