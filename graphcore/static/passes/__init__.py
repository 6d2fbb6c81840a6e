"""Optimization passes: pure functions ``Graph -> (Graph, PassReport)``, one per file.

``run_passes`` applies the pipeline in order, verifying the IR after each pass; any pass can
be switched off by name (``passes=["-fuse_elementwise"]`` or ``--passes -fuse``). What the
passes share (``PassReport``, ``count_by_op``) is in ``base.py``; no pass imports this package.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from graphcore import errors
from graphcore.static.ir import Graph, verify
from graphcore.static.passes.base import PassReport, count_by_op
from graphcore.static.passes.constant_fold import fold_constants
from graphcore.static.passes.cse import eliminate_common_subexpressions
from graphcore.static.passes.dce import eliminate_dead_code
from graphcore.static.passes.fuse_concat_linear import fuse_concat_linear
from graphcore.static.passes.fuse_elementwise import fuse_elementwise
from graphcore.static.passes.fuse_linear import fuse_linear
from graphcore.static.passes.mask_grads import mask_select_grads
from graphcore.static.passes.plan_memory import plan_memory

__all__ = ["PASS_NAMES", "PassReport", "count_by_op", "pipeline", "run_passes", "select"]


PassFn = Callable[..., tuple[Graph, PassReport]]
PASS_NAMES = ("dce", "cse", "fold", "fuse_linear", "concat_linear", "mask_grads", "fuse",
              "memory")


def pipeline() -> dict[str, PassFn]:
    """The default passes, in the order they run."""
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
