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
from graphcore.commands.bench import MODES, BenchOptionError, bench_spec
from graphcore.commands.check import NOT_CHECKED, SKIPPED, check_spec
from graphcore.commands.run import run_report
from graphcore.commands.sweep.tasks import SweepFiles, SweepTask
from graphcore.commands.train.session import (
    TrainingSession,
    evaluate_arrays,
    load_spec_data,
    settings_for,
)
from graphcore.commands.train.settings import TrainingOptionError
from graphcore.commands.train.steps import train_spec
from graphcore.errors import MAX_MESSAGE, clip_message
from graphcore.files.atomic import write_atomic
from graphcore.language.loader import load_spec_text
from graphcore.language.syntax import Spec
from graphcore.plugins import load_plugin

# Figures of a command's JSON document that only echo the point's own options.
_ECHOES = {"schema_version", "spec", "seed", "mode", "optimizer", "lr", "steps", "batch_size",
           "losses", "eps", "rtol", "atol", "repeat", "warmup", "batch", "examples"}
# bench: the measurements each mode contributes as ``MODE.NAME``.
BENCH_FIGURES = ("median_ms", "min_ms", "iqr_ms", "compile_ms", "speedup", "peak_memory_bytes")


def run_point(task: SweepTask, files: SweepFiles | None = None) -> dict[str, Any]:
    """Run one point; the row: key, index, command, settings, figures, status ("ok" or
    "failed"), error, exit_code, exit_class, started (Unix time), seconds, worker. ``files``:
    the sweep's files, for a task sent without them (a worker gets them once, scattered, and
    each point's task refers to them); otherwise the task's own."""
    if files is not None:
        task = task.with_files(files)
    started = time.time()
    start = time.perf_counter()
    row: dict[str, Any] = {"key": task.key, "index": task.index, "command": task.command,
                           "settings": dict(task.settings), "figures": {}, "status": "ok",
                           "error": None, "exit_code": 0, "exit_class": None}
    scratch = None
    try:
        with tempfile.TemporaryDirectory(prefix="graphtool-sweep-") as folder:
            scratch = Path(folder)
            row["figures"] = _run(task, scratch)
    except Exception as exc:  # a failing point is a row, never the end of the sweep
        code, kind, message = classify(exc)
        if scratch is not None and task.files is not None:
            message = _as_the_caller_names(message, task, scratch)
        # a row's error is one bounded line: sweep.json stays small however points fail
        row.update(status="failed", error=clip_message(message, width=MAX_MESSAGE),
                   exit_code=code, exit_class=kind)
    row["started"] = started
    row["seconds"] = round(time.perf_counter() - start, 6)
    row["worker"] = _worker_name()
    return row


def classify(exc: BaseException) -> tuple[int, str, str]:
    """The exit code ``graphtool`` gives for ``exc``, its class and a one-line message."""
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
    copies = _lay_out_files(task, scratch)
    overrides = {}
    for name, (file_name, data) in task.input_files.items():
        path = scratch / "inputs" / name / file_name
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        overrides[name] = str(path)
    sets = [f"{k}={v}" for k, v in settings.items() if k.startswith("params.")]
    # anchored at an empty folder: a path the task does not carry fails here, never reads
    # whatever the worker's machine has at the caller's path
    spec = load_spec_text(task.spec_text, task.spec_file, str(scratch / "spec"), sets)
    _relocate(spec, copies)
    seed = int(settings["seed"]) if "seed" in settings else None
    mode = settings.get("mode", "dynamic")
    if task.command == "train" and (spec.data is not None or spec.train is not None):
        return _train_workflow(spec, settings, overrides, seed, mode, scratch / "train")
    if task.command == "train":
        lr = settings.get("train.lr")
        batch = settings.get("train.batch_size")
        result = train_spec(spec, steps=int(settings.get("train.steps", 100)),
                            optimizer=settings.get("train.optimizer", "adam"),
                            lr=None if lr is None else float(lr),
                            batch_size=None if batch is None else int(batch), seed=seed,
                            input_overrides=overrides, mode=mode, **_schedule(settings))
        return _figures(result.to_dict())
    if task.command == "run":
        report = run_report(spec, seed=seed, input_overrides=overrides, mode=mode)
        doc = report.to_dict()
        figures = {"loss": doc.get("loss"), "all_finite": int(report.all_finite())}
        return {k: v for k, v in figures.items() if v is not None}
    if task.command == "check":
        report = check_spec(spec, seed=seed, input_overrides=overrides, mode=mode)
        worst = max((p.rel_error for p in report.params  # of the comparisons that judged
                     if p.verdict not in (NOT_CHECKED, SKIPPED)), default=0.0)
        return _figures({"ok": int(report.ok), "loss": report.loss,
                         "failures": len(report.failures()), "max_rel_error": worst})
    if task.command == "bench":
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


def _train_workflow(spec: Spec, settings: Mapping[str, str], overrides: Mapping[str, str],
                    seed: int | None, mode: str, folder: Path) -> dict[str, Any]:
    """A point of a spec with ``data:``/``train:`` sections, trained as ``graphtool train``
    trains it (the spec's epochs, batch size, optimizer, validation; ``train.*`` keys override
    them). Its figures are measured at the end, so a run ending mid-epoch has them too:
    ``final_loss`` (and ``final_<metric>``) over the training rows and ``validation_loss``
    (``validation_<metric>``) over the validation rows, in evaluation mode, as ``graphtool
    evaluate --params`` reports them for the trained parameters; ``best.value``/``best.epoch``
    of the metric ``best.npz`` follows; ``epoch``, ``step`` and ``stopped_early``."""
    def number(key: str, kind: type) -> Any:
        return None if key not in settings else kind(settings[key])

    run_settings = settings_for(spec, seed=seed, steps=number("train.steps", int),
                                batch_size=number("train.batch_size", int),
                                optimizer=settings.get("train.optimizer"),
                                lr=number("train.lr", float), mode=mode,
                                **_schedule(settings))
    data = load_spec_data(spec, run_settings.seed, overrides)
    # the point's checkpoints and best.npz are not kept: its figures are the row
    session = TrainingSession(spec, run_settings, data, folder, files=False)
    outcome = session.run()
    # the rows per pass `graphtool evaluate` uses (its batch size does not follow --batch-size)
    size = max(settings_for(spec, seed=seed).batch_size, 256)
    figures: dict[str, Any] = {}
    parts = [("final", data.train)]
    if data.validation is not None:
        parts.append(("validation", data.validation))
    for prefix, rows in parts:
        result = evaluate_arrays(spec, session.model, rows, data.shared, size,
                                 run_settings.metrics, run_settings.seed)
        figures.update({f"{prefix}_{name}": value for name, value in result.items()})
    figures.update(epoch=outcome.epoch, step=outcome.iteration,
                   stopped_early=outcome.stopped_early)
    if outcome.best is not None:
        figures["best"] = {"value": outcome.best["value"], "epoch": outcome.best["epoch"]}
    return _figures(figures)


def _schedule(settings: Mapping[str, str]) -> dict[str, Any]:
    """A point's ``train.schedule``/``warmup``/``warmup_start``/``weight_decay``/
    ``gradient_clipping``, as ``settings_for``'s keywords (the grid checked their types)."""
    kinds = {"schedule": str, "warmup": int, "warmup_start": float, "weight_decay": float,
             "gradient_clipping": float}
    return {name: kind(settings[f"train.{name}"]) for name, kind in kinds.items()
            if f"train.{name}" in settings}


def _plugin_file(file_name: str, data: bytes) -> Path:
    """A carried plugin as a file named by its contents' hash, so a worker process runs each
    plugin source once however many points it runs (``load_plugin`` loads a path once)."""
    folder = Path(tempfile.gettempdir()) / "graphtool-sweep-plugins" / \
        hashlib.sha256(data).hexdigest()[:16]
    path = folder / file_name
    if not path.is_file():
        write_atomic(path, data)  # whole, even with two workers writing it at once
    return path


def _lay_out_files(task: SweepTask, scratch: Path) -> dict[str, str]:
    """The task's copies of the files the spec reads, written under ``scratch``: each path as
    the spec writes it -> its copy (named as the original, which tells readers its format)."""
    (scratch / "spec").mkdir()
    copies = {}
    for written, data in task.spec_files.items():
        target = _copy_path(task, scratch, written)
        target.parent.mkdir(parents=True)
        target.write_bytes(data)
        copies[written] = str(target)
    return copies


def _copy_path(task: SweepTask, scratch: Path, written: str) -> Path:
    return scratch / "files" / str(list(task.spec_files).index(written)) / Path(written).name


def _relocate(spec: Spec, copies: Mapping[str, str]) -> None:
    """Point every file path of the loaded ``spec`` at the worker's copy of that file."""
    for item in spec.inputs.values():
        if item.source == "file" and item.path in copies:
            item.path = copies[item.path]
        if item.column is not None and item.column.file in copies:
            item.column.file = copies[item.column.file]
    if spec.data is not None:
        for column in spec.data.columns.values():
            column.file = copies.get(column.file, column.file)
        spec.data.file = copies.get(spec.data.file, spec.data.file)
    for part in (spec.validation, spec.test):
        if part is not None and part.file in copies:
            part.file = copies[part.file]


def _as_the_caller_names(message: str, task: SweepTask, scratch: Path) -> str:
    """``message`` with the worker's copies of the spec's files named as the caller names
    them (``specs/data/digits.npz``, not a temporary folder of the worker)."""
    folder = Path(task.spec_file).parent
    for written in task.spec_files:
        message = message.replace(str(_copy_path(task, scratch, written)), str(folder / written))
    return message.replace(str(scratch / "spec"), str(folder))


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
