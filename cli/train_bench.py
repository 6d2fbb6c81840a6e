"""`graphtool bench --train`: training steps timed per mode and batching
(graphcore.commands.bench_train), as a table, JSON or CSV, and the artifacts bench_train.json,
bench_train.csv and bench_train.txt (beside bench.json, which `report` reads)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console

from cli import files, output
from cli.errors import USAGE, CliError
from graphcore.commands.bench_train import (
    FIELDS,
    TrainBench,
    TrainBenchOptionError,
    TrainBenchResult,
    bench_training,
)
from graphcore.commands.schema import SCHEMA_VERSION
from graphcore.commands.train.settings import TrainingOptionError
from graphcore.spec import Spec

ARTIFACT = "bench_train"


def measure(loaded: list[Spec], modes: list[str], batchings: list[str] | None,
            batches: list[int] | None, repeat: int | None, warmup: int, seed: int | None,
            passes: list[str] | None, progress: Any) -> TrainBench:
    try:
        return bench_training(loaded, modes, batchings, batches, repeat, warmup, seed, passes,
                              progress)
    except (TrainBenchOptionError, TrainingOptionError) as e:
        raise CliError(str(e), USAGE) from None


def report(measured: TrainBench, fmt: str, out_dir: str, quiet: bool) -> None:
    """The notes (batchings left out, and why) on stderr, the artifacts, then the results."""
    for spec, note in measured.notes:
        output.note(f"{spec}: {note}", quiet)
    results = measured.results
    written = []
    for name in dict.fromkeys(r.spec for r in results):
        mine = [r for r in results if r.spec == name]
        folder = files.artifact_dir(out_dir, name)
        written += [
            files.write_text(folder / f"{ARTIFACT}.json", output.to_json(document(mine))),
            files.write_text(folder / f"{ARTIFACT}.csv", csv_text(mine)),
            files.write_text(folder / f"{ARTIFACT}.txt", plain_text(mine))]
    if fmt == "json":
        output.emit_json(document(results))
    elif fmt == "csv":
        sys.stdout.write(csv_text(results))
    else:
        render(results, output.stdout_console())
    output.wrote(written, quiet)


def document(results: Sequence[TrainBenchResult]) -> dict[str, Any]:
    seeds = {r.seed for r in results}
    return {
        "schema_version": SCHEMA_VERSION, "kind": "train steps",
        "specs": list(dict.fromkeys(r.spec for r in results)),
        "seed": seeds.pop() if len(seeds) == 1 else None,
        "modes": list(dict.fromkeys(r.mode for r in results)),
        "batchings": list(dict.fromkeys(r.batching for r in results)),
        "warmup": results[0].warmup,
        "results": [r.to_dict() for r in results],
    }


def csv_text(results: Sequence[TrainBenchResult]) -> str:
    return output.csv_table(FIELDS, (r.to_dict() for r in results))


def plain_text(results: Sequence[TrainBenchResult]) -> str:
    console = output.text_console()
    render(results, console)
    return console.file.getvalue()


def render(results: Sequence[TrainBenchResult], console: Console) -> None:
    """Per (spec, batch size, mode, batching): ms per step (median, mean, range), the
    predicted seconds per epoch of `train` and the ms an epoch's end adds (validation, logs,
    files), static mode's tracing and plan cache, the final
    loss (equal across batchings within float rounding) and the speedup over dynamic mode
    one example at a time. Columns split over several tables where a terminal is narrow."""
    rows = [r.to_dict() for r in results]
    first = results[0]
    timed = sorted({r.repeat for r in results})
    title = (f"ms per training step as train takes it (batch, forward, backward, update, "
             f"logs), {'/'.join(map(str, timed))} steps after {first.warmup} warm-up; epoch "
             "s: steps per epoch x mean + an epoch end's validation and files")
    columns = {
        "spec": lambda d: d["spec"],
        "mode": lambda d: d["mode"],
        "batching": lambda d: _or_dash(d["batching"]),
        "batch": lambda d: str(d["batch_size"]),
        "median": lambda d: _ms(d["median_ms"]),
        "mean": lambda d: _ms(d["mean_ms"]),
        "range": lambda d: f"{_ms(d['min_ms'])}..{_ms(d['max_ms'])}",
        "epoch s": lambda d: f"{d['epoch_s']:.3f}",
        "epoch end": lambda d: _or_dash(d["epoch_work_ms"], _ms),
        "compile": lambda d: _or_dash(d["compile_ms"], _ms),
        "plans": lambda d: "-" if d["plans"] is None else
        f"{d['plans']} ({d['cache_misses']} new)",
        "loss": lambda d: _or_dash(d["last_loss"], lambda v: f"{v:.6g}"),
        "speedup": lambda d: _or_dash(d["speedup"], lambda s: f"{s:.2f}x"),
    }
    if all(d["compile_ms"] is None for d in rows):
        columns.pop("compile")
        columns.pop("plans")
    headers = list(columns)
    cells = [[cell(d) for cell in columns.values()] for d in rows]
    output.show_columns(console, headers, cells, keep=3, title=title)


def _ms(value: float) -> str:
    return f"{value:.3f}"


def _or_dash(value: Any, fmt=str) -> str:
    return "-" if value is None else fmt(value)
