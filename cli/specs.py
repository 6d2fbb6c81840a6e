"""Reading the SPEC argument: a path, or ``-`` for a spec on stdin (paths in it are then
relative to the working directory)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from cli.errors import USAGE, CliError
from graphcore.plugins import load_plugin
from graphcore.spec import Spec, load_spec_file, load_spec_text

STDIN = "-"


def load(spec: str, sets: Sequence[str] = (), plugins: Sequence[str] = ()) -> Spec:
    """Load the named plugins (in order), then the spec."""
    for plugin in plugins:
        load_plugin(plugin)
    if spec == STDIN:
        text = sys.stdin.read()
        return load_spec_text(text, "<stdin>", ".", sets, default_name="stdin")
    return load_spec_file(spec, sets)


def parse_inputs(items: Sequence[str]) -> dict[str, str]:
    """``--input name=PATH`` (or ``name=-``) options as a mapping."""
    out = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise CliError(f"--input expects NAME=PATH or NAME=-, got {item!r}", USAGE)
        out[name] = path
    return out


def load_with_inputs(spec: str, sets: Sequence[str], inputs: Sequence[str],
                     plugins: Sequence[object]) -> tuple[Spec, dict[str, str]]:
    """The SPEC argument and its ``--set``/``--input``/``--plugin`` options, as the commands
    that run one spec take them: the loaded spec and the input overrides."""
    overrides = parse_inputs(inputs)
    if spec == STDIN and STDIN in overrides.values():
        raise CliError("stdin cannot carry both the spec and an input", USAGE)
    return load(spec, sets, [str(p) for p in plugins]), overrides
