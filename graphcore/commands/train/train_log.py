"""``train.csv``, appended: a row per log entry (an epoch's, or every ``log_every`` steps'),
each written whole by one ``write`` as its entry is made, so the cost of an epoch does not
grow with the epochs before it and a reader (``tail -f``, a killed run) sees whole rows.

A checkpoint records how far the file belonged to it (``state()``: its length in bytes and
the SHA-256 of those bytes, kept as the rows are written); a resumed run ``restore``s the log
from the ``train.csv`` beside the checkpoint, cut to that length (rows written after the
checkpoint are not the resumed run's), and appends after it. The file starts with the header
and its first rows written together (beside the target, then renamed), so it is never
missing its header.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphcore.errors import SerializationError

Entry = dict[str, Any]
MAX_LOG_BYTES = 1 << 28  # the part of train.csv a resumed run reads back


class TrainLog:
    """The rows of ``path`` (None: nothing is written, the entries are only counted);
    ``keys``: the observed values of the columns between ``step`` and ``elapsed_s``, their
    names given by ``friendly``; ``writer(path, data)`` writes the file's first version."""

    def __init__(self, path: Path | None, keys: list[str], friendly: Callable[[str], str],
                 writer: Callable[[str, bytes], object]) -> None:
        self.path, self.keys, self.writer = path, keys, writer
        self.header = _line(["kind", "epoch", "step", *map(friendly, keys), "elapsed_s"])
        self.size = 0
        self.digest = hashlib.sha256()
        self.fd: int | None = None

    def append(self, rows: list[tuple[str, Entry]]) -> None:
        """Write the rows of these entries (``kind``: epoch or step), in order."""
        text = "".join(self._row(kind, entry) for kind, entry in rows)
        first = self.size == 0
        data = ((self.header if first else "") + text).encode("utf-8")
        self.digest.update(data)
        self.size += len(data)
        if self.path is None:
            return
        if first:
            self.writer(str(self.path), data)
        else:
            _write_all(self._descriptor(), data)

    def state(self) -> dict[str, Any]:
        """What a checkpoint records of the file: its length and the hash of those bytes."""
        return {"bytes": self.size, "sha256": self.digest.copy().hexdigest()}

    def restore(self, state: dict[str, Any], source: Path) -> tuple[list[Entry], list[Entry],
                                                                     str | None]:
        """Continue the log a checkpoint recorded (``state``) from ``source``, the
        ``train.csv`` beside it: ``(epoch entries, step entries, None)``, the file (this
        log's ``path``) holding that part of ``source`` and nothing after it; or, when
        ``source`` does not hold it, ``([], [], why)`` and a file that starts after the
        checkpoint."""
        size = state["bytes"]
        why = None
        data = b""
        if size:
            data, why = _prefix(source, size, state["sha256"])
        if why is None and data:
            try:
                entries = self._parse(data)
            except ValueError as e:
                entries, why = ([], []), f"{source} does not hold this run's rows ({e})"
        else:
            entries = ([], [])
        if why is not None:
            data, entries = b"", ([], [])
        self.digest = hashlib.sha256(data)
        self.size = len(data)
        if self.path is not None and data:
            if _same_file(source, self.path):  # rows after the checkpoint are cut off
                fd = _open_append(self.path)
                try:
                    os.ftruncate(fd, len(data))
                finally:
                    os.close(fd)
            else:
                self.writer(str(self.path), data)
        return entries[0], entries[1], why

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _descriptor(self) -> int:
        if self.fd is None:  # opened at the first row appended (again after ``close``)
            self.fd = _open_append(self.path)
        return self.fd

    def _row(self, kind: str, entry: Entry) -> str:
        return _line([kind, entry["epoch"], entry["iteration"],
                      *(repr(entry[k]) if k in entry else "" for k in self.keys),
                      f"{entry['elapsed_time']:.3f}"])

    def _parse(self, data: bytes) -> tuple[list[Entry], list[Entry]]:
        text = data.decode("utf-8")
        if not text.startswith(self.header):
            raise ValueError("another header")
        epochs: list[Entry] = []
        steps: list[Entry] = []
        for row in csv.reader(io.StringIO(text[len(self.header):])):
            if len(row) != len(self.keys) + 4 or row[0] not in ("epoch", "step"):
                raise ValueError(f"a row of another form: {','.join(row)[:80]}")
            entry: Entry = {k: float(v) for k, v in zip(self.keys, row[3:-1], strict=True)
                            if v != ""}
            entry.update(epoch=int(row[1]), iteration=int(row[2]),
                         elapsed_time=float(row[-1]))
            (epochs if row[0] == "epoch" else steps).append(entry)
        return epochs, steps


def _line(cells: list[Any]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    return out.getvalue()


def _prefix(source: Path, size: int, sha256: str) -> tuple[bytes, str | None]:
    """The first ``size`` bytes of ``source`` when they hash to ``sha256``, else why not."""
    if size > MAX_LOG_BYTES:
        raise SerializationError(f"the checkpoint's log is {size:,} bytes of train.csv, over "
                                 f"the limit of {MAX_LOG_BYTES:,}")
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return b"", f"{source} is missing"
    except OSError as e:
        return b"", f"{source} cannot be read ({e.strerror})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b"", f"{source} is not a regular file"
        chunks, left = [], size
        while left:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as e:
        return b"", f"{source} cannot be read ({e.strerror})"
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) < size:
        return b"", f"{source} is shorter than the part the checkpoint recorded"
    if hashlib.sha256(data).hexdigest() != sha256:
        return b"", f"{source} has changed since the checkpoint was written"
    return data, None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _open_append(path: Path) -> int:
    """``path`` opened to append (a FIFO or a device is refused, never blocked on)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file, and rows are appended to a file",
                      str(path))
    os.set_blocking(fd, True)
    return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
