"""Reading the SPEC argument: a path, or ``-`` for a spec on stdin (paths in it are then
relative to the working directory); and checking every input path a command names (SPEC,
``--params``, ``--input``, ``--plugin``) before any work: one that is not a readable file is
exit 66 with a one-line message."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterator, Sequence

from cli.errors import IO_ERROR, NO_INPUT, USAGE, CliError
from graphcore.errors import SpecError, SpecErrors, clip
from graphcore.language.yaml_source import MAX_BYTES
from graphcore.plugins import load_plugin
from graphcore.spec import Spec, load_spec_file, load_spec_text

STDIN = "-"


def load(spec: str, sets: Sequence[str] = (), plugins: Sequence[str] = ()) -> Spec:
    """Load the named plugins (in order), then the spec."""
    for plugin in plugins:
        require_readable(plugin, "--plugin ")
        with _reading(plugin):
            load_plugin(plugin)
    if spec == STDIN:
        text = read_stdin_spec()
        return load_spec_text(text, "<stdin>", ".", sets, default_name="stdin")
    require_readable(spec, "spec ", streams=True)
    with _reading(spec):
        return load_spec_file(spec, sets)


def read_stdin_spec() -> str:
    """The spec text on stdin, read no further than the spec size limit (a spec file's)."""
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    with _reading("<stdin>"):
        data = stream.read(MAX_BYTES + 1)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    if len(data) > MAX_BYTES:
        raise SpecErrors([SpecError(f"the spec on stdin is too large: over {MAX_BYTES:,} bytes "
                                    f"(the limit for a spec)", "<stdin>", 1, 1)])
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise SpecErrors([SpecError(f"the spec is not UTF-8 text (byte 0x{data[err.start]:02x} "
                                    f"at offset {err.start})", "<stdin>", 1, 1,
                                    hint="send UTF-8 text")]) from None


def require_readable(path: str | os.PathLike[str], what: str, streams: bool = False) -> None:
    """Exit 66 unless ``path`` is a readable regular file (or, with ``streams``, a FIFO or a
    character device too: ``<(...)``, ``/dev/stdin``). ``what`` starts the message: "spec ",
    "--params ", "--input x="."""
    shown = clip(os.fspath(path))
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise CliError(f"{what}{shown}: file not found", NO_INPUT) from None
    except (OSError, ValueError) as err:
        raise CliError(f"{what}{shown}: cannot read it: "
                       f"{getattr(err, 'strerror', None) or err}", NO_INPUT) from None
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        raise CliError(f"{what}{shown} is a folder, not a file", NO_INPUT)
    if not (stat.S_ISREG(mode) or streams and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode))):
        raise CliError(f"{what}{shown} is not a regular file", NO_INPUT)
    if not os.access(path, os.R_OK):
        raise CliError(f"{what}{shown}: cannot read it: permission denied", NO_INPUT)


@contextlib.contextmanager
def _reading(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn an OSError while reading ``path`` into exit 66 (not a readable file) or 74 (an
    I/O error), with a one-line message."""
    try:
        yield
    except BrokenPipeError:
        raise
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as err:
        raise CliError(f"{clip(os.fspath(path))}: cannot read it: {err.strerror or err}",
                       NO_INPUT) from None
    except OSError as err:
        raise CliError(f"{clip(os.fspath(path))}: read failed: {err.strerror or err}",
                       IO_ERROR) from None


def parse_inputs(items: Sequence[str]) -> dict[str, str]:
    """``--input name=PATH`` (or ``name=-``) options as a mapping; each PATH must be a
    readable file."""
    out = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise CliError(f"--input expects NAME=PATH or NAME=-, got {item!r}", USAGE)
        if path != STDIN:
            require_readable(path, f"--input {name}=")
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
