"""One place that turns exceptions into a message on stderr and the documented exit code.

0 ok; 1 runtime failure or failed check; 2 usage; 65 bad spec or data; 66 missing input;
69 renderer unavailable; 70 internal error; 73 cannot create output; 74 I/O error;
130 interrupted (SIGINT); 141 broken pipe; 143 terminated (SIGTERM). A user error never shows a
traceback; ``--debug`` shows one for anything.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import typer

from cli.warning_lines import one_line_warnings
from graphcore import errors
from graphcore.errors import clip_message

OK, FAILURE, USAGE, DATA_ERROR, NO_INPUT, UNAVAILABLE, INTERNAL, INTERRUPTED = (
    0, 1, 2, 65, 66, 69, 70, 130)
CANT_CREATE, IO_ERROR = 73, 74  # sysexits: an output cannot be created; reading/writing failed
BROKEN_PIPE = 141  # what a shell reports for a process ended by SIGPIPE
TERMINATED = 143  # what a shell reports for a process ended by SIGTERM


class CliError(Exception):
    """A user-facing failure raised by the CLI itself: a one-line message and an exit code;
    ``at``, the place in the spec it is about (a ``Loc``, shown as ``file:line:col``)."""

    def __init__(self, message: str, code: int, hint: str | None = None,
                 at: object | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.hint = hint
        self.at = at


class Terminated(BaseException):
    """SIGTERM, raised in the main thread (see ``cli.app``) so that cleanup runs, as for
    Ctrl-C: temporary files are removed, and the process exits 143."""


class State:
    debug = False


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def exit_code_for(exc: BaseException) -> tuple[int, str]:
    """The exit code and the message for ``exc`` (no traceback)."""
    if isinstance(exc, CliError):
        where = f"{exc.at}: " if exc.at is not None else ""
        text = f"{where}error: {exc}" + (f"\nhint: {exc.hint}" if exc.hint else "")
        return exc.code, text
    if isinstance(exc, errors.MissingFileError | errors.UnreadableFileError):
        return NO_INPUT, exc.render()  # a file the spec or an option names, located there
    if isinstance(exc, errors.SpecErrors | errors.SpecError):
        return DATA_ERROR, exc.render()
    if isinstance(exc, errors.SpecRuntimeError):
        return FAILURE, exc.render()
    if isinstance(exc, FileNotFoundError):
        name = exc.filename or str(exc)
        return NO_INPUT, f"error: {exc.strerror or 'file not found'}: {name}" if exc.filename \
            else f"error: {exc}"
    if isinstance(exc, errors.RendererUnavailable):
        return UNAVAILABLE, (f"error: {exc}\nhint: install Graphviz or `pip install "
                             "graphviz-pure`, or draw DOT only with --format dot")
    if isinstance(exc, errors.SerializationError):
        return DATA_ERROR, f"error: {exc}"
    if isinstance(exc, errors.ExportError) and exc.loc is not None:
        return FAILURE, str(exc)  # file:line:col: error: message
    if isinstance(exc, errors.GraphcoreError):
        return FAILURE, f"error: {exc}"
    if isinstance(exc, KeyboardInterrupt):
        return INTERRUPTED, "interrupted"
    if isinstance(exc, Terminated):
        return TERMINATED, "terminated"
    return INTERNAL, (f"internal error: {type(exc).__name__}: {exc}\n"
                      "re-run with --debug for the traceback")


@contextlib.contextmanager
def reported() -> Iterator[None]:
    """Run a command body; turn any failure into its message and ``typer.Exit(code)``."""
    try:
        yield
    except (typer.Exit, typer.Abort):
        raise
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        silence_stdout()
        raise typer.Exit(BROKEN_PIPE) from None
    except BaseException as exc:  # noqa: BLE001 - this is the one place errors are mapped
        code, text = exit_code_for(exc)
        if State.debug:
            traceback.print_exc()
        _say("\n".join(clip_message(line) for line in text.splitlines()))
        raise typer.Exit(code) from None


def silence_stdout() -> None:
    """Point stdout at /dev/null, so Python's final flush of a closed pipe cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file descriptor (a test runner's buffer)
        pass


def command(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: run a command inside ``reported()``, Python warnings as one line each."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with reported(), one_line_warnings():
            return fn(*args, **kwargs)

    return wrapper
