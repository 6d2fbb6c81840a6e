"""``run_point``: what a worker runs for one sweep point. It never raises for a failing point:
the row records the error, its exit class and the exit code ``graphtool`` would have given.

The point runs through the same library functions as ``graphtool train/bench/run/check``,
with the same defaults, so a row equals the command run alone (``records.command_line``).
"""

from __future__ import annotations

import hashlib
import math
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graphcore import errors
from graphcore.atomic import write_atomic
from graphcore.plugins import load_plugin
from graphcore.spec.loader import load_spec_text
from graphcore.sweep.tasks import SweepTask

# Figures of a command's JSON document that only echo the point's own options.
_ECHOES = {"schema_version", "spec", "seed", "mode", "optimizer", "lr", "steps", "batch_size",
           "losses", "eps", "rtol", "atol", "repeat", "warmup", "batch", "examples"}
# bench: the measurements each mode contributes as ``MODE.NAME``.
BENCH_FIGURES = ("median_ms", "min_ms", "iqr_ms", "compile_ms", "speedup", "peak_memory_bytes")


def run_point(task: SweepTask) -> dict[str, Any]:
    """Run one point; the row: key, index, command, settings, figures, status ("ok" or
    "failed"), error, exit_code, exit_class, started (Unix time), seconds, worker."""
    started = time.time()
    start = time.perf_counter()
    row: dict[str, Any] = {"key": task.key, "index": task.index, "command": task.command,
                           "settings": dict(task.settings), "figures": {}, "status": "ok",
                           "error": None, "exit_code": 0, "exit_class": None}
    try:
        with tempfile.TemporaryDirectory(prefix="graphtool-sweep-") as scratch:
            row["figures"] = _run(task, Path(scratch))
    except Exception as exc:  # a failing point is a row, never the end of the sweep
        code, kind, message = classify(exc)
        row.update(status="failed", error=message, exit_code=code, exit_class=kind)
    row["started"] = started
    row["seconds"] = round(time.perf_counter() - start, 6)
    row["worker"] = _worker_name()
    return row


def classify(exc: BaseException) -> tuple[int, str, str]:
    """The exit code ``graphtool`` gives for ``exc``, its class and a one-line message."""
    from graphcore.spec.bench import BenchOptionError
    from graphcore.spec.training import TrainingOptionError

    if isinstance(exc, errors.SpecErrors | errors.SpecError):
        return 65, "bad spec", exc.render().splitlines()[0]
    if isinstance(exc, TrainingOptionError | BenchOptionError):
        return 2, "usage", str(exc)
    if isinstance(exc, errors.SpecRuntimeError):
        return 1, "runtime", exc.render().splitlines()[0]
    if isinstance(exc, FileNotFoundError):
        return 66, "missing input", str(exc)
    if isinstance(exc, errors.SerializationError):
        return 65, "bad data", str(exc)
    if isinstance(exc, errors.GraphcoreError):
        return 1, "runtime", str(exc)
    if isinstance(exc, MemoryError):
        return 1, "out of memory", "out of memory"
    return 70, "internal", f"{type(exc).__name__}: {exc}"


def _run(task: SweepTask, scratch: Path) -> dict[str, Any]:
    settings = task.settings
    for file_name, data in task.plugins:
        load_plugin(_plugin_file(file_name, data))
    folder = _lay_out_files(task, scratch)
    overrides = {}
    for name, (file_name, data) in task.input_files.items():
        path = scratch / "inputs" / name / file_name
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        overrides[name] = str(path)
    sets = [f"{k}={v}" for k, v in settings.items() if k.startswith("params.")]
    spec = load_spec_text(task.spec_text, task.spec_file, str(folder), sets)
    seed = int(settings["seed"]) if "seed" in settings else None
    mode = settings.get("mode", "dynamic")
    if task.command == "train":
        from graphcore.spec.training import train_spec

        lr = settings.get("train.lr")
        batch = settings.get("train.batch_size")
        result = train_spec(spec, steps=int(settings.get("train.steps", 100)),
                            optimizer=settings.get("train.optimizer", "adam"),
                            lr=None if lr is None else float(lr),
                            batch_size=None if batch is None else int(batch), seed=seed,
                            input_overrides=overrides, mode=mode)
        return _figures(result.to_dict())
    if task.command == "run":
        from graphcore.spec.report import run_report

        report = run_report(spec, seed=seed, input_overrides=overrides, mode=mode)
        doc = report.to_dict()
        figures = {"loss": doc.get("loss"), "all_finite": int(report.all_finite())}
        return {k: v for k, v in figures.items() if v is not None}
    if task.command == "check":
        from graphcore.spec.checking import NOT_CHECKED, SKIPPED, check_spec

        report = check_spec(spec, seed=seed, input_overrides=overrides, mode=mode)
        worst = max((p.rel_error for p in report.params  # of the comparisons that judged
                     if p.verdict not in (NOT_CHECKED, SKIPPED)), default=0.0)
        return _figures({"ok": int(report.ok), "loss": report.loss,
                         "failures": len(report.failures()), "max_rel_error": worst})
    if task.command == "bench":
        from graphcore.spec.bench import MODES, bench_spec

        if overrides:
            raise errors.GraphcoreError("bench times generated inputs; --input does not apply")
        batch = settings.get("bench.batch")
        modes = [mode] if "mode" in settings else list(MODES)
        results = bench_spec(spec, modes, None if batch is None else [int(batch)],
                             repeat=task.bench_repeat, seed=seed)
        figures: dict[str, Any] = {}
        for r in results:
            doc = r.to_dict()
            figures.update({f"{r.mode}.{name}": doc[name] for name in BENCH_FIGURES
                            if doc.get(name) is not None})
        return figures
    raise ValueError(f"unknown sweep command {task.command!r}")


def _plugin_file(file_name: str, data: bytes) -> Path:
    """A carried plugin as a file named by its contents' hash, so a worker process runs each
    plugin source once however many points it runs (``load_plugin`` loads a path once)."""
    folder = Path(tempfile.gettempdir()) / "graphtool-sweep-plugins" / \
        hashlib.sha256(data).hexdigest()[:16]
    path = folder / file_name
    if not path.is_file():
        write_atomic(path, data)  # whole, even with two workers writing it at once
    return path


def _lay_out_files(task: SweepTask, scratch: Path) -> Path:
    """The folder the spec's ``file:`` paths resolve against: a scratch copy of the files the
    task carries, or, when the spec also reads files from outside its folder (which the task
    cannot carry), the spec's own folder, which must then be readable on the worker."""
    spec_dir = scratch / "spec"
    spec_dir.mkdir()
    for relative, data in task.spec_files.items():
        target = spec_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    if task.needs_spec_folder:
        return Path(task.spec_folder)
    return spec_dir


def _figures(doc: Mapping[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Any]:
    """The numbers of a command's document, nested names joined with dots: an open set, so a
    figure a later version adds (``val_accuracy``) is a figure a sweep can sort by."""
    out: dict[str, Any] = {}
    for name, value in doc.items():
        if not prefix and name in _ECHOES:
            continue
        if isinstance(value, bool):
            out[prefix + name] = int(value)
        elif isinstance(value, int | float):
            out[prefix + name] = value if math.isfinite(value) else None
        elif isinstance(value, Mapping) and depth < 2:
            out.update(_figures(value, f"{prefix}{name}.", depth + 1))
    return out


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return "local"
