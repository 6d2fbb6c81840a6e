"""Sweep rows as documents: the JSON (``sweep.json``), the CSV (``sweep.csv``), the order by a
figure, and the ``graphtool`` command line that reruns one point alone.

A row is ``run_point``'s dict; its ``figures`` are an open set of numbers (whatever the
command reported), so sorting by a figure a later version adds needs no change here.
"""

from __future__ import annotations

import csv
import io
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from graphcore.commands.sweep.grid import SweepOptionError

SCHEMA_VERSION = 1
# Figures where more is better; every other figure (losses, times, errors) sorts ascending.
_HIGHER_IS_BETTER = ("accuracy", "speedup", "ok", "precision", "recall", "f1", "score", "auc")
DEFAULT_SORT = {"train": "final_loss", "bench": "dynamic.median_ms", "run": "loss",
                "check": "max_rel_error"}
# Writing the rows may take this share of a sweep's time, at most (see SavePacer).
SAVE_SHARE = 1 / 20
_TRAIN_OPTIONS = {"train.steps": "--steps", "train.lr": "--lr", "train.optimizer": "--optimizer",
                  "train.batch_size": "--batch-size", "train.schedule": "--schedule",
                  "train.warmup": "--warmup", "train.warmup_start": "--warmup-start",
                  "train.weight_decay": "--weight-decay",
                  "train.gradient_clipping": "--gradient-clipping"}


def default_sort(command: str, spec: Any) -> str:
    """The figure a sweep orders by without ``--sort``: for training a spec with validation
    data, its loss on those held-out rows (the training rows' loss favours overfitting)."""
    if command == "train" and getattr(spec, "validation", None) is not None:
        return "validation_loss"
    return DEFAULT_SORT[command]


def figure_names(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every figure any row has, in first-seen order."""
    return list(dict.fromkeys(name for row in rows for name in row["figures"]))


def higher_is_better(figure: str) -> bool:
    last = figure.rsplit(".", 1)[-1]
    return any(word in last for word in _HIGHER_IS_BETTER) or last.split("_")[-1] == "r2"


def sort_rows(rows: Sequence[Mapping[str, Any]], figure: str) -> list[Mapping[str, Any]]:
    """The rows best first by ``figure``; rows without it (failed points) last, in grid order.
    A figure no row has is a ``SweepOptionError`` naming the ones there are."""
    having = [r for r in rows if r["figures"].get(figure) is not None]
    if rows and not having and any(r["status"] == "ok" for r in rows):
        raise SweepOptionError(f"--sort {figure}: no point has that figure; figures: "
                               f"{', '.join(figure_names(rows)) or 'none'}")
    descending = higher_is_better(figure)
    having.sort(key=lambda r: (-r["figures"][figure] if descending else r["figures"][figure],
                               r["index"]))
    rest = sorted((r for r in rows if r["figures"].get(figure) is None),
                  key=lambda r: r["index"])
    return having + rest


def best_row(rows: Sequence[Mapping[str, Any]], figure: str) -> Mapping[str, Any] | None:
    ordered = sort_rows(rows, figure)
    return ordered[0] if ordered and ordered[0]["figures"].get(figure) is not None else None


def command_line(row: Mapping[str, Any], spec_file: str, inputs: Mapping[str, str] | None = None,
                 bench_repeat: int = 10, plugins: Sequence[str] = ()) -> str:
    """The ``graphtool`` command that runs ``row``'s point alone."""
    command = row["command"]
    words = ["graphtool", command, spec_file]
    settings = row["settings"]
    for key, value in settings.items():
        if key in _TRAIN_OPTIONS:
            words += [_TRAIN_OPTIONS[key], value]
        elif key == "bench.batch":
            words += ["--batch", value]
        elif key == "mode":
            words += ["--modes" if command == "bench" else "--mode", value]
        elif key == "seed":
            words += ["--seed", value]
    if command == "bench" and bench_repeat != 10:
        words += ["--repeat", str(bench_repeat)]
    for key, value in settings.items():
        if key.startswith("params."):
            words += ["--set", f"{key}={value}"]
    for name, path in (inputs or {}).items():
        words += ["--input", f"{name}={path}"]
    for path in plugins:
        words += ["--plugin", path]
    return shlex.join(words)


def sweep_document(spec_name: str, command: str, rows: Sequence[Mapping[str, Any]],
                   sort: str) -> dict[str, Any]:
    """``sweep.json``: the rows in grid order (``index``), each with its key for --resume."""
    return {"schema_version": SCHEMA_VERSION, "spec": spec_name, "command": command,
            "sort": sort, "rows": sorted((dict(r) for r in rows), key=lambda r: r["index"])}


def rows_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """``sweep.csv``: one line per point: settings, figures, status, time, worker, error."""
    ordered = sorted(rows, key=lambda r: r["index"])
    settings = list(dict.fromkeys(k for r in ordered for k in r["settings"]))
    figures = figure_names(ordered)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["index", "key", *settings, *figures, "status", "seconds", "worker",
                     "exit_code", "exit_class", "error"])
    for r in ordered:
        writer.writerow([r["index"], r["key"], *(r["settings"].get(k, "") for k in settings),
                         *(_cell(r["figures"].get(k)) for k in figures), r["status"],
                         r["seconds"], r["worker"], r["exit_code"], r["exit_class"] or "",
                         r["error"] or ""])
    return buffer.getvalue()


def _cell(value: Any) -> str:
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)


_T = TypeVar("_T")


class SavePacer:
    """When a sweep rewrites ``sweep.json`` and ``sweep.csv`` as rows finish. Each write is the
    whole document, so writing at every row costs time quadratic in the points (one write at
    5,000 rows takes about 0.8 s: hours for 10,000 points). A write is due once the time since
    the last one is ``1 / SAVE_SHARE`` times what that one took: every row while the files are
    small, and never more than ``SAVE_SHARE`` of the sweep's time however many points it has.
    The caller writes the rows not yet written when it stops (at the end, on Ctrl-C)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._next = float("-inf")

    def due(self) -> bool:
        return self._clock() >= self._next

    def save(self, write: Callable[[], _T]) -> _T:
        """Run ``write`` now, and time it to set when the next write is due."""
        start = self._clock()
        result = write()
        end = self._clock()
        self._next = end + (end - start) / SAVE_SHARE
        return result
