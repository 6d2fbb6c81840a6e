"""Artifacts: written under ``<out-dir>/<spec name>/`` (or to an explicit path), atomically —
a temporary file next to the target, then a rename — so an interrupted command never leaves a
half-written file."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import numpy as np


def artifact_dir(out_dir: str | os.PathLike[str], name: str) -> Path:
    folder = Path(out_dir) / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_bytes(path: str | os.PathLike[str], data: bytes) -> str:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return str(path)


def write_text(path: str | os.PathLike[str], text: str) -> str:
    return write_bytes(path, text.encode("utf-8"))


def write_npz(path: str | os.PathLike[str], arrays: dict[str, np.ndarray]) -> str:
    import io

    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return write_bytes(path, buffer.getvalue())
