"""What every pass shares: its ``PassReport`` and ``count_by_op`` for its notes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class PassReport:
    """What one pass did: nodes removed (or fused away), bytes saved, its own notes."""

    name: str
    nodes_before: int = 0
    nodes_after: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    time_ms: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def nodes_removed(self) -> int:
        return self.nodes_before - self.nodes_after

    @property
    def bytes_saved(self) -> int:
        return self.bytes_before - self.bytes_after

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "nodes_removed": self.nodes_removed,
                "bytes_saved": self.bytes_saved, "time_ms": round(self.time_ms, 3),
                "notes": list(self.notes)}


def count_by_op(nodes: Iterable) -> str:
    """`` (2 exp, 1 dropout)``: how many nodes of each op, in first-seen order (for notes)."""
    counts: dict[str, int] = {}
    for n in nodes:
        counts[n.op] = counts.get(n.op, 0) + 1
    if not counts:
        return ""
    return " (" + ", ".join(f"{k} {op}" for op, k in counts.items()) + ")"
