"""The process entry of ``graphtool`` (and ``python -m cli``), kept free of heavy imports.

Importing numpy, Typer and Rich takes a few hundred milliseconds; Ctrl-C then must end the
process like Ctrl-C anywhere else (one line, exit 130), not with a traceback from the middle of
an import. So this module sets that up first, with the standard library only, and gives the
process usable standard streams even when it was started with one closed (``>&-``), then
imports the application.
"""

from __future__ import annotations

import os
import signal
import sys

INTERRUPTED = 130  # cli.errors.INTERRUPTED, which cannot be imported this early


def _interrupted_while_starting(signum: int, frame: object) -> None:
    # Nothing has been written or opened yet: nothing to clean up, so end at once.
    try:
        os.write(2, b"interrupted\n")
    finally:
        os._exit(INTERRUPTED)


def _reserve_standard_fds() -> list[int]:
    """Open /dev/null on any of fds 0-2 that the process started without (so no file opened
    later lands there); return the ones that were missing."""
    missing = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            missing.append(fd)
    for fd in missing:
        opened = os.open(os.devnull, os.O_RDWR)
        if opened != fd:
            os.dup2(opened, fd)
            os.close(opened)
    return missing


def main() -> None:
    signal.signal(signal.SIGINT, _interrupted_while_starting)
    missing = _reserve_standard_fds()
    if 0 in missing or sys.stdin is None:
        sys.stdin = open(os.devnull)  # noqa: SIM115 - the process's stdin, never closed
    if 2 in missing or sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - messages have nowhere to go
    from cli import stdout

    if 1 in missing or sys.stdout is None:
        sys.stdout = stdout.ClosedStdout()
    from cli.app import run  # the heavy imports
    from cli.errors import TERMINATED, Terminated

    signal.signal(signal.SIGINT, signal.default_int_handler)  # commands clean up, then 130
    try:
        code = run()
    except KeyboardInterrupt:  # between the commands' own handling and the exit
        print("interrupted", file=sys.stderr)
        code = INTERRUPTED
    except Terminated:  # SIGTERM there too (say, while the output drains into a pipe)
        print("terminated", file=sys.stderr)
        code = TERMINATED
    sys.exit(code)
