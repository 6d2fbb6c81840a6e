"""Optimization passes: pure functions ``Graph -> (Graph, PassReport)``, one per file.

``run_passes`` applies the pipeline in order, verifying the IR after each pass; any pass can
be switched off by name (``passes=["-fuse_elementwise"]`` or ``--passes -fuse``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphcore import errors
from graphcore.static.ir import Graph, verify


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


PassFn = Callable[..., tuple[Graph, PassReport]]
PASS_NAMES = ("dce", "cse", "fold", "fuse_linear", "concat_linear", "mask_grads", "fuse",
              "memory")


def pipeline() -> dict[str, PassFn]:
    """The default passes, in the order they run."""
    from graphcore.static.passes.constant_fold import fold_constants
    from graphcore.static.passes.cse import eliminate_common_subexpressions
    from graphcore.static.passes.dce import eliminate_dead_code
    from graphcore.static.passes.fuse_concat_linear import fuse_concat_linear
    from graphcore.static.passes.fuse_elementwise import fuse_elementwise
    from graphcore.static.passes.fuse_linear import fuse_linear
    from graphcore.static.passes.mask_grads import mask_select_grads
    from graphcore.static.passes.plan_memory import plan_memory

    return {
        "dce": eliminate_dead_code,
        "cse": eliminate_common_subexpressions,
        "fold": fold_constants,
        "fuse_linear": fuse_linear,
        "concat_linear": fuse_concat_linear,
        "mask_grads": mask_select_grads,
        "fuse": fuse_elementwise,
        "memory": plan_memory,
    }


def select(spec: Iterable[str] | None) -> list[str]:
    """Pass names to run: the default pipeline, minus ``-name`` entries; or exactly the names
    given (when none starts with ``-``). Unknown names raise ``ValueError``."""
    names = list(PASS_NAMES)
    if spec is None:
        return names
    items = [s.strip() for s in spec if s.strip()]
    if not items:
        return []
    for item in items:
        if item.lstrip("-+") not in names:
            raise ValueError(f"unknown pass {item.lstrip('-+')!r}; passes: {', '.join(names)}")
    if items and all(i.startswith("-") for i in items):
        off = {i[1:] for i in items}
        return [n for n in names if n not in off]
    return [n for n in names if n in {i.lstrip("+") for i in items}]


def run_passes(graph: Graph, names: Sequence[str] | None = None,
               **options: Any) -> tuple[Graph, list[PassReport]]:
    """Run the selected passes; ``options`` go to the passes that accept them by keyword."""
    import inspect

    selected = select(names)
    table = pipeline() if selected else {}
    reports = []
    for name in selected:
        fn = table[name]
        accepted = inspect.signature(fn).parameters
        kwargs = {k: v for k, v in options.items() if k in accepted}
        start = time.perf_counter()
        graph, report = fn(graph, **kwargs)
        report.time_ms = (time.perf_counter() - start) * 1e3
        try:
            verify(graph)
        except errors.TraceError as e:
            raise errors.TraceError(f"after pass {name}: {e}") from e
        reports.append(report)
    return graph, reports
