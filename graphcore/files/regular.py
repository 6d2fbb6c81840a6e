"""Opening a file a user names, for reading, only when it is a regular file.

Every reader of user files opens through ``open_regular``: a folder, a FIFO, a device or a
socket is refused at once, from the opened descriptor's own status (a FIFO is opened without
blocking, so no writer is ever waited for, and nothing can swap the file between a check and
the open). A missing file stays a ``FileNotFoundError``; anything else that cannot be read is
an ``UnreadableFileError``, which the CLI reports with exit 66.
"""

from __future__ import annotations

import os
import stat
from typing import Any, BinaryIO

from graphcore.errors import UnreadableFileError


def open_regular(path: str | os.PathLike[str], what: str = "") -> BinaryIO:
    """``path`` opened for binary reading. ``what`` starts messages (``"--params "``,
    ``"input 'x': "``). Raises ``FileNotFoundError`` or ``UnreadableFileError``."""
    name = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(name, flags)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as err:  # ValueError: a NUL byte in the name
        raise UnreadableFileError(f"{what}{name}: cannot read it: "
                                  f"{getattr(err, 'strerror', None) or err}",
                                  filename=name) from None
    try:
        kind = _not_regular(os.fstat(fd).st_mode)
        if kind is not None:
            raise UnreadableFileError(f"{what}{name} is {kind}, not a regular file",
                                      filename=name)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _not_regular(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def located(err: UnreadableFileError, loc: Any) -> UnreadableFileError:
    """``err`` placed at ``loc`` (a spec ``Loc``: the file's name in the spec, or
    ``--input``); unchanged without one."""
    if loc is None:
        return err
    source_line = loc.source.line(loc.line) if getattr(loc, "source", None) else None
    return UnreadableFileError(err.message, loc.file, loc.line, loc.col, source_line,
                               loc.length, err.hint, filename=err.filename)
