"""The installed package's version, from its metadata (one place, read when asked)."""

from __future__ import annotations

from importlib import metadata


def version() -> str:
    """``graphtool``'s version as installed (``pip install -e .`` records pyproject's)."""
    try:
        return metadata.version("graphtool")
    except metadata.PackageNotFoundError:  # running from a source tree that was not installed
        return "unknown (not installed)"
