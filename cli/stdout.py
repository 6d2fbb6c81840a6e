"""stdout as the process entry hands it to the commands, with one rule for every output kind.

Off a terminal, what a command prints (a table, JSON, CSV, DOT, help) is held and reaches
stdout in one write when the command is done, so a reader sees every kind arrive the same way
(on a terminal it streams as usual; ``stream_through`` lets a command's rows out as they come).
Then:

- the reader went away with some of it unread or unwritten (``| head``): exit 141, quietly,
  whether the write failed or the reader left after it (``finish`` gives a reader that is
  still there a moment to read or leave; one that reads everything is no broken pipe);
- any other failure to write (``> /dev/full``, stdout closed with ``>&-``): one line on stderr
  and exit 74.

``install`` wraps ``sys.stdout``; ``finish`` writes what is held and says how the process ends.
``sys.stdout.buffer`` is the raw stream, outside this.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import stat
import sys
import termios
import time
from typing import Any

from cli.errors import BROKEN_PIPE, IO_ERROR, CliError

READER_GRACE_S = 0.5  # how long ``finish`` waits for a reader that has not read it all yet


class WatchedStdout:
    """``sys.stdout``, held off a terminal; a failed write raises ``BrokenPipeError`` (and
    remembers it) or ``CliError(..., IO_ERROR)``."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._held: list[str] | None = None if _isatty(stream) else []
        self.broken = False  # the reader went away
        self.failed = False  # a write failed: stdout now points at /dev/null

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # as a text stream does (Click probes with b"")
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self._held is not None:
            self._held.append(text)
            return len(text)
        try:
            return self._stream.write(text)
        except OSError as e:
            raise self._failure(e) from None

    def flush(self) -> None:
        if self._held is not None:
            return
        try:
            self._stream.flush()
        except OSError as e:
            raise self._failure(e) from None

    def release(self) -> None:
        """Write what is held, in one write, and flush."""
        text = "".join(self._held or ())
        self._held = None
        try:
            if text:
                self._stream.write(text)
            self._stream.flush()
        except OSError as e:
            raise self._failure(e) from None

    def isatty(self) -> bool:
        return _isatty(self._stream)

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


def stream_through() -> None:
    """From here on, what the command prints reaches stdout as it is written, what is held
    first: for rows a reader wants as they come (``train``'s epochs, piped into ``tee`` or a
    CI log). A reader that leaves still ends the process as ``finish`` says."""
    if isinstance(sys.stdout, WatchedStdout):
        sys.stdout.release()


def finish(code: int) -> int:
    """Write what is held and return the exit code: ``code``, or 141 when the reader left
    before reading it all, or 74 when writing failed (said on stderr)."""
    watched = sys.stdout
    try:
        if isinstance(watched, WatchedStdout):
            watched.release()
        else:
            watched.flush()
    except BrokenPipeError:
        pass
    except CliError as e:  # the command itself succeeded; its output did not get out
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


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _reader_left_unread(grace_s: float = READER_GRACE_S) -> bool:
    """stdout is a pipe whose reader closed it with some of our output unread. A reader still
    there with output unread gets ``grace_s`` to read it all (no) or leave (yes); after that,
    no: it may be a slow reader, and its pipe keeps the output."""
    try:
        fd = sys.__stdout__.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poller = select.poll()
        poller.register(fd, 0)  # only POLLERR, which a pipe's write end gets with no reader
        deadline = time.monotonic() + grace_s
        while _unread(fd):
            if poller.poll(10):
                return _unread(fd) > 0
            if time.monotonic() > deadline:
                return False
        return False
    except (OSError, ValueError, AttributeError):
        return False


def _unread(fd: int) -> int:
    """Bytes written to the pipe ``fd`` and not read yet."""
    return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)
