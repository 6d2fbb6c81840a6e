"""How extensions write files: ``writer(path, data: bytes)``. The default writes next to the
target and renames, so a crash never leaves a half-written log, plot or snapshot; a caller
(the CLI) may pass its own writer."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable

Writer = Callable[[str, bytes], object]


def write_atomic(path: str, data: bytes) -> None:
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
