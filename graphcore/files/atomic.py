"""Writing a file whole or not at all: the bytes go to a temporary file beside the target,
then one rename replaces it, so a crash or Ctrl-C never leaves a half-written file (the CLI has
its own writer, ``cli/files.py``, with its exit codes and special files)."""

from __future__ import annotations

import contextlib
import os
import tempfile


def write_atomic(path: str | os.PathLike[str], data: bytes, *, create_folder: bool = True
                 ) -> None:
    """Write ``data`` to ``path`` atomically; ``create_folder=False`` refuses a missing
    folder (``FileNotFoundError``) instead of making it."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if create_folder:
        os.makedirs(folder, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
