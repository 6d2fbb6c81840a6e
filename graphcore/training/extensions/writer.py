"""How extensions write files: ``writer(path, data: bytes)``. The default writes next to the
target and renames, so a crash never leaves a half-written log, plot or snapshot; a caller
(the CLI) may pass its own writer."""

from __future__ import annotations

from collections.abc import Callable

from graphcore.files.atomic import write_atomic  # noqa: F401  (the default writer)

Writer = Callable[[str, bytes], object]
