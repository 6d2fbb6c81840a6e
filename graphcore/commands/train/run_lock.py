"""One training run per run folder at a time: ``locked(folder)`` holds an exclusive
``flock`` on ``folder/.lock`` while the run writes the folder, so a second writer of the same
run folder (a ``--resume`` of a run still training) is refused (``RunFolderBusy``, naming the
pid that holds it) instead of mixing its ``best.npz`` with the other's ``checkpoint.npz`` and
``train.csv``. A new run never waits on one: ``run_folders`` gives it a folder of its own.

The kernel releases the lock when its holder's descriptor closes, however the process ends
(``kill -9`` included), so a lock never outlives its run; the file itself stays (removing it
would let a third run lock a new file while the second still holds the old one).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from graphcore.errors import GraphcoreError

LOCK_FILE = ".lock"


class RunFolderBusy(GraphcoreError, RuntimeError):
    """Another process holds ``folder``'s lock (``pid``: the one it names, when it does)."""

    def __init__(self, folder: Path, pid: int | None) -> None:
        who = f"process {pid}" if pid is not None else "another process"
        super().__init__(f"{folder} is being written by another training run ({who})")
        self.folder, self.pid = folder, pid


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s lock for the body (the folder must exist)."""
    fd = os.open(Path(folder) / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunFolderBusy(Path(folder), _holder(fd)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def _holder(fd: int) -> int | None:
    """The pid the lock's holder wrote (None until it has written it)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None
