"""A spec's runs: every ``train`` writes a new folder ``<artifacts>/runs/<N>/`` (N = 1, 2, ...),
so no run's curves, checkpoint or best parameters are ever overwritten by the next one, and
``<artifacts>/runs/latest`` names the newest (a text file holding N, not a symlink: it reads
the same everywhere and is replaced atomically).

``new_run(artifacts)`` allocates the next number under an exclusive ``flock`` on
``runs/.allocate`` (held only while the folder is made and ``latest`` rewritten), and makes the
folder with ``mkdir``, which fails for a name that exists: two trainings started at once get
two folders, and ``latest`` always names the higher; ``discard_unused(run)`` takes back a run
that wrote nothing. ``find_run(artifacts, number)`` is the run ``number``, or the latest
(None); ``NoRunError`` when there is none yet, ``RunNotFound`` for a number that is not there,
``LatestDamaged`` when ``latest`` holds something other than a run's number (it is never
guessed around: the answer would be some other run's).

A run folder's own writers lock it for the run (``run_lock``), so a ``--resume`` of a run that
is still training is refused rather than mixed with it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from graphcore.commands.train.run_lock import LOCK_FILE
from graphcore.errors import GraphcoreError
from graphcore.files.atomic import write_atomic

RUNS = "runs"
LATEST = "latest"
ALLOCATION_LOCK = ".allocate"
MAX_LATEST_BYTES = 32


class NoRunError(GraphcoreError, LookupError):
    """``folder`` holds no run yet."""

    def __init__(self, folder: Path) -> None:
        super().__init__(f"no training run in {folder} yet")
        self.folder = folder


class RunNotFound(GraphcoreError, LookupError):
    """Run ``number`` is not in ``folder`` (``available``: the numbers that are)."""

    def __init__(self, folder: Path, number: int, available: list[int]) -> None:
        have = (f"runs there: {_ranges(available)}" if available else "it holds no run")
        super().__init__(f"no run {number} in {folder} ({have})")
        self.folder, self.number, self.available = folder, number, available


class LatestDamaged(GraphcoreError, ValueError):
    """``runs/latest`` does not name a run folder that is there."""


@dataclass(frozen=True)
class Run:
    """Run ``number`` of a spec, kept in ``folder`` (``<artifacts>/runs/<number>``)."""

    number: int
    folder: Path


def runs_folder(artifacts: str | os.PathLike[str]) -> Path:
    return Path(artifacts) / RUNS


def new_run(artifacts: str | os.PathLike[str]) -> Run:
    """A new, empty run folder, numbered one past the highest there, marked the latest."""
    runs = runs_folder(artifacts)
    runs.mkdir(parents=True, exist_ok=True)
    with _allocating(runs):
        number = max(run_numbers(runs), default=0) + 1
        while True:
            try:
                (runs / str(number)).mkdir()
                break
            except FileExistsError:  # made by hand, or by a writer that took no lock
                number += 1
        write_atomic(str(runs / LATEST), f"{number}\n".encode("ascii"))
    return Run(number, runs / str(number))


def discard_unused(run: Run) -> bool:
    """Remove ``run``'s folder when it holds nothing but its lock (its command failed before
    it wrote anything), ``latest`` then naming the highest run left; whether it was removed."""
    runs = run.folder.parent
    with _allocating(runs):
        names = os.listdir(run.folder)
        if set(names) - {LOCK_FILE}:
            return False
        for name in names:
            os.unlink(run.folder / name)
        os.rmdir(run.folder)
        left = run_numbers(runs)
        with contextlib.suppress(LatestDamaged):
            if latest_number(runs, [*left, run.number]) != run.number:
                return True
        if left:
            write_atomic(str(runs / LATEST), f"{left[-1]}\n".encode("ascii"))
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(runs / LATEST)
    return True


def find_run(artifacts: str | os.PathLike[str], number: int | None = None) -> Run:
    """Run ``number`` of the spec whose artifacts folder is ``artifacts``; None: the latest."""
    runs = runs_folder(artifacts)
    available = run_numbers(runs)
    if not available:
        raise NoRunError(runs)
    if number is None:
        number = latest_number(runs, available)
    elif number not in available:
        raise RunNotFound(runs, number, available)
    return Run(number, runs / str(number))


def run_numbers(runs: Path) -> list[int]:
    """The numbers of the run folders in ``runs``, ascending (none: ``[]``)."""
    try:
        names = os.listdir(runs)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(int(name) for name in names
                  if name.isascii() and name.isdigit() and not name.startswith("0")
                  and (runs / name).is_dir())


def latest_number(runs: Path, available: list[int]) -> int:
    """The number ``runs/latest`` holds; the highest run where there is no such file (runs
    copied without it)."""
    path = runs / LATEST
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_LATEST_BYTES + 1)
    except FileNotFoundError:
        return available[-1]
    except IsADirectoryError:
        raise LatestDamaged(f"{path} is a folder; it should hold the latest run's number "
                            "(remove it, or name a run with --run N)") from None
    text = data.decode("ascii", errors="replace").strip()
    if len(data) > MAX_LATEST_BYTES or not text.isdigit() or int(text) not in available:
        what = f"run {text}, which is not there" if text.isdigit() else f"{text[:20]!r}"
        raise LatestDamaged(f"{path} names {what}; runs there: {_ranges(available)} (write "
                            "the latest run's number into it, or name a run with --run N)")
    return int(text)


@contextlib.contextmanager
def _allocating(runs: Path) -> Iterator[None]:
    fd = os.open(runs / ALLOCATION_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held for a mkdir and a rename: never long
        yield
    finally:
        os.close(fd)


def _ranges(numbers: list[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``1-3, 5``."""
    parts: list[str] = []
    start = prev = None
    for n in [*numbers, None]:
        if n is not None and prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = n
    return ", ".join(parts)
