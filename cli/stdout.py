"""stdout as the process entry hands it to the commands: every write failure means one thing.

A reader that went away (``| head``) is a broken pipe: the process ends quietly with 141,
whether the write failed (the reader left first) or the reader left with our output unread
(it left after we wrote): one rule for every output kind, tables, JSON, CSV and DOT alike.
Any other failure to write (``> /dev/full``, a closed stdout) is an I/O error: one line and
exit 74. ``install`` wraps ``sys.stdout``; ``finish`` flushes it and says how the process ends.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import stat
import sys
import termios
from typing import Any

from cli.errors import BROKEN_PIPE, IO_ERROR, CliError


class WatchedStdout:
    """``sys.stdout``, passing everything through; a failed write or flush raises
    ``BrokenPipeError`` (and remembers it) or ``CliError(..., IO_ERROR)``."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.broken = False  # the reader went away
        self.failed = False  # any failure: stdout now points at /dev/null

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as e:
            raise self._failure(e) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            raise self._failure(e) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def _failure(self, error: OSError) -> Exception:
        self.failed = True
        silence()  # what is still buffered must not fail a second time
        if error.errno == errno.EPIPE:
            self.broken = True
            return BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))
        return CliError(f"cannot write to stdout: {error.strerror or error}", IO_ERROR)


class ClosedStdout:
    """What stdout is when the process started with it closed (``>&-``): every write fails."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "stdout is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def install() -> WatchedStdout:
    """Wrap ``sys.stdout`` (once) and return the wrapper."""
    if not isinstance(sys.stdout, WatchedStdout):
        sys.stdout = WatchedStdout(sys.stdout)
    return sys.stdout


def finish(code: int) -> int:
    """Flush stdout and return the exit code: ``code``, or 141 when the reader left before
    reading everything, or 74 when the last write failed (said on stderr)."""
    watched = sys.stdout
    try:
        watched.flush()
    except BrokenPipeError:
        pass
    except CliError as e:  # the first failure to show: the command itself succeeded
        print(f"error: {e}", file=sys.stderr, flush=True)
        code = code or e.code
    if getattr(watched, "broken", False) or _reader_left_unread():
        silence()
        return BROKEN_PIPE
    return code


def silence() -> None:
    """Point stdout at /dev/null, so nothing later can fail writing to it."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a real file (a test runner's buffer)
        pass


def _reader_left_unread() -> bool:
    """stdout is a pipe whose reader has closed it with some of our output still unread."""
    try:
        fd = sys.__stdout__.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        no_reader = any(events & select.POLLERR for _, events in poller.poll(0))
        if not no_reader:
            return False
        unread = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
        return int.from_bytes(unread, sys.byteorder) > 0
    except (OSError, ValueError, AttributeError):
        return False
