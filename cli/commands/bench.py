"""Time specs: forward, backward and total time (median and spread) per mode and batch size,
peak memory, and with --profile the time each op took. Both modes by default, side by side
(--modes dynamic,static): static adds compile time, replay time, speedup over define-by-run,
the plan cache's hits and misses and what each pass removed. With several specs, one that
cannot take --batch (its inputs come from a file, or have no batch axis) is skipped with a
warning. With --train: whole training steps as `graphtool train` takes them (shuffled
batches of the spec's data, forward, backward, the optimizer's update) per mode and batching,
and the seconds an epoch of `train` takes at that pace."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from cli import files, output, specs, train_bench
from cli.errors import USAGE, CliError, command
from cli.options import Batching, parse_passes, passes_option, plugin_option
from graphcore.commands.bench import (
    FIELDS,
    MODES,
    BenchOptionError,
    BenchResult,
    batched_spec,
    bench_specs,
)
from graphcore.commands.schema import SCHEMA_VERSION
from graphcore.spec import Spec


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


@command
def bench(
    spec_paths: list[str] = typer.Argument(..., metavar="SPEC",
                                           help="Spec files (- reads one from stdin)."),
    modes: str = typer.Option(",".join(MODES), "--modes",
                              help=f"Comma-separated modes (available: {', '.join(MODES)})."),
    repeat: int | None = typer.Option(None, "--repeat", min=1, help="Timed iterations "
                                      "(default 10; with --train, one epoch's steps)."),
    warmup: int = typer.Option(2, "--warmup", min=0, help="Untimed iterations first."),
    batch: str | None = typer.Option(None, "--batch", help="Batch sizes, e.g. 1,32,256: the "
                                     "leading axis of every generated input (with --train: "
                                     "examples per training step)."),
    train: bool = typer.Option(False, "--train", help="Time training steps as `graphtool "
                               "train` takes them, per mode and batching (specs with `data:` "
                               "or `train:`)."),
    profile: bool = typer.Option(False, "--profile", help="Add a per-op time table."),
    passes: str | None = passes_option(),
    batching: Batching | None = typer.Option(
        None, "--batching", help="Per-example runs (lengths/examples inputs): auto groups "
        "examples by path and pads where it pays, pad pads every sequence into one batch, off "
        "runs one example at a time (default auto; with --train, every one that applies)."),
    plugins: list[Path] = plugin_option(),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
    fmt: Format | None = typer.Option(None, "--format", help="table (default), csv or json."),
    seed: int | None = typer.Option(None, "--seed", min=0,
                                    help="RNG seed (default: each spec's)."),
    out_dir: str = typer.Option("outputs", "--out-dir", help="Artifacts folder."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages on stderr."),
) -> None:
    if json_out and fmt not in (None, Format.json):
        raise CliError(f"--json and --format {fmt.value} ask for two formats; pick one", USAGE)
    fmt = Format.json if json_out else (fmt or Format.table)
    mode_list = _parse_modes(modes)
    pass_list = parse_passes(passes)
    if pass_list is not None and "static" not in mode_list:
        raise CliError("--passes applies to static mode; add it: --modes dynamic,static", USAGE)
    batches = _parse_batches(batch)
    if train and profile:
        raise CliError("--profile times the ops of one call; it does not apply with --train",
                       USAGE)
    files.check_out_dir(out_dir)
    if spec_paths.count(specs.STDIN) > 1:
        raise CliError("stdin can carry only one spec", USAGE)
    loaded = [specs.load(path, (), [str(p) for p in plugins]) for path in spec_paths]
    if train:
        with _progress_bar(quiet) as progress:
            measured = train_bench.measure(
                loaded, mode_list, None if batching is None else [batching.value], batches,
                repeat, warmup, seed, pass_list, progress)
        train_bench.report(measured, fmt.value, out_dir, quiet)
        return
    if batches is not None and len(loaded) > 1:
        loaded = _batchable(loaded, batches)
    with _progress_bar(quiet) as progress:
        try:
            results = bench_specs(loaded, mode_list, batches, 10 if repeat is None else repeat,
                                  warmup, profile, seed, progress, pass_list,
                                  "auto" if batching is None else batching.value)
        except BenchOptionError as e:
            raise CliError(str(e), USAGE, hint="without --batch each spec keeps its own "
                           "shapes") from None
    _say_pad_refusals(results, quiet)
    written = []
    for name in dict.fromkeys(r.spec for r in results):  # each spec's artifacts, in order
        mine = [r for r in results if r.spec == name]
        folder = files.artifact_dir(out_dir, name)
        written += [files.write_text(folder / "bench.json", output.to_json(_document(mine))),
                    files.write_text(folder / "bench.csv", _csv(mine)),
                    files.write_text(folder / "bench.txt", _plain_text(mine))]
    if fmt is Format.json:
        output.emit_json(_document(results))
    elif fmt is Format.csv:
        sys.stdout.write(_csv(results))
    else:
        _render(results, output.stdout_console())
    output.wrote(written, quiet)


def _say_pad_refusals(results: Sequence[BenchResult], quiet: bool) -> None:
    """Once per spec: --batching pad grouped the examples by shape instead, and why."""
    for spec, reason in dict.fromkeys((r.spec, r.pad_refused) for r in results
                                      if r.pad_refused is not None):
        output.note(output.pad_warning(reason, spec), quiet)


# --- options --------------------------------------------------------------------------------
def _parse_modes(text: str) -> list[str]:
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise CliError("--modes needs at least one mode", USAGE)
    for name in names:
        if name not in MODES:
            raise CliError(f"unknown mode '{name}' in --modes (available: "
                           f"{', '.join(MODES)})", USAGE)
    if len(set(names)) != len(names):
        raise CliError(f"--modes lists a mode twice: {text}", USAGE)
    return names


def _parse_batches(text: str | None) -> list[int] | None:
    if text is None:
        return None
    sizes = []
    for item in text.split(","):
        item = item.strip()
        if not item.isdigit() or int(item) < 1:
            raise CliError(f"--batch expects positive integers separated by commas, got "
                           f"{text!r}", USAGE)
        sizes.append(int(item))
    if len(set(sizes)) != len(sizes):
        raise CliError(f"--batch lists a size twice: {text}", USAGE)
    return sizes


def _batchable(loaded: list[Spec], batches: list[int]) -> list[Spec]:
    """The specs that can take every ``--batch`` size; a warning for each one left out. When
    none can, all are kept, and the first one's reason is the usage error."""
    usable = []
    for spec in loaded:
        try:
            for size in batches:
                batched_spec(spec, size)
        except BenchOptionError as e:
            output.note(f"warning: skipped: {e}")  # said even with -q: the results lack it
            continue
        usable.append(spec)
    return usable or loaded


@contextmanager
def _progress_bar(quiet: bool) -> Iterator[Any]:
    """A Rich bar on stderr when it is a terminal (and not --quiet); else no callback."""
    console = output.stderr_console()
    if quiet or not console.is_terminal:
        yield None
        return
    bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                   MofNCompleteColumn(), console=console, transient=True)
    task = bar.add_task("bench", total=None)
    with bar:
        yield lambda done, total, what: bar.update(task, completed=done, total=total,
                                                   description=what)


# --- documents ------------------------------------------------------------------------------
def _document(results: Sequence[BenchResult]) -> dict[str, Any]:
    seeds = {r.seed for r in results}
    first = results[0]
    return {
        "schema_version": SCHEMA_VERSION,
        "specs": list(dict.fromkeys(r.spec for r in results)),
        "seed": seeds.pop() if len(seeds) == 1 else None,
        "modes": list(dict.fromkeys(r.mode for r in results)),
        "batches": list(dict.fromkeys(r.batch for r in results)),
        "repeat": first.repeat,
        "warmup": first.warmup,
        "results": [r.to_dict() for r in results],
    }


def _csv(results: Sequence[BenchResult]) -> str:
    return output.csv_table(FIELDS, (r.to_dict() for r in results))


# --- tables ---------------------------------------------------------------------------------
def _render(results: Sequence[BenchResult], console: Console) -> None:
    output.show(console, _timing_table(results, console))
    if any(r.passes is not None for r in results):
        output.show(console, _passes_table(results, console))
    if any(r.batching is not None for r in results):
        output.show(console, _batching_table(results, console))
    for r in results:
        if r.profile is not None:
            output.show(console, _profile_table(r, console))


def _plain_text(results: Sequence[BenchResult]) -> str:
    """The tables as ``_render`` draws them off a terminal: plain aligned text."""
    console = output.text_console()
    _render(results, console)
    return console.file.getvalue()


def _timing_table(results: Sequence[BenchResult], console: Console):
    """Medians per iteration in ms; ``range`` is min..max of the total (JSON and CSV add the
    IQR and each phase's range). On a terminal too narrow for every column, the columns that
    say nothing here (one mode: mode and speedup; nothing compiled: compile) are left out."""
    rows = [r.to_dict() for r in results]
    columns = {
        "spec": lambda d: d["spec"],
        "mode": lambda d: d["mode"],
        "batch": lambda d: _or_dash(d["batch"]),
        "median": lambda d: _ms(d["median_ms"]),
        "forward": lambda d: _ms(d["forward_median_ms"]),
        "backward": lambda d: _ms(d["backward_median_ms"]),
        "range": lambda d: f"{_ms(d['min_ms'])}..{_ms(d['max_ms'])}",
        "compile": lambda d: _or_dash(d["compile_ms"], _ms),
        "speedup": lambda d: _or_dash(d["speedup"], lambda s: f"{s:.2f}x"),
        "peak mem": lambda d: _bytes(d["peak_memory_bytes"]),
        "cache": lambda d: "-" if d["cache_hits"] is None else
        f"{d['cache_hits']} hit / {d['cache_misses']} miss",
    }
    title = (f"ms per iteration, median of {results[0].repeat} after {results[0].warmup} "
             "warm-up")
    t = _table(columns, rows, title, console)
    natural = console.measure(t, options=console.options.update_width(10_000)).maximum
    if console.is_terminal and natural > console.width:
        one_mode = len({d["mode"] for d in rows}) == 1
        idle = {"mode": one_mode, "speedup": one_mode,
                "compile": all(d["compile_ms"] is None for d in rows),
                "cache": all(d["cache_hits"] is None for d in rows)}
        kept = {k: f for k, f in columns.items() if not idle.get(k)}
        t = _table(kept, rows, title + (f", mode {rows[0]['mode']}" if one_mode else ""),
                   console)
    return t


def _table(columns: dict[str, Any], rows: list[dict[str, Any]], title: str, console: Console):
    t = output.table(*columns, title=title, console=console)
    for d in rows:
        t.add_row(*(cell(d) for cell in columns.values()))
    t.columns[0].no_wrap = True
    for column in t.columns[1:]:
        column.justify = "right"
        column.no_wrap = True
    return t


def _batching_table(results: Sequence[BenchResult], console: Console):
    """Per result whose examples ran batched: groups, ifs run on both sides in one pass,
    padding waste, speedup over one example at a time (the same mode with --batching off)."""
    t = output.table("spec", "mode", "batching", "groups", "partitioned ifs", "padding waste",
                     "speedup over per-example", title="batched per-example runs",
                     console=console)
    for r in results:
        if r.batching is not None:
            t.add_row(r.spec, r.mode, r.batching, str(r.batching_groups),
                      str(r.batching_partitions), f"{100 * r.padding_waste:.1f}%",
                      _or_dash(r.batching_speedup, lambda s: f"{s:.2f}x"))
    return t


def _passes_table(results: Sequence[BenchResult], console: Console):
    """Per static result, what each pass removed from the plan it replayed."""
    t = output.table("spec", "batch", "pass", "nodes removed", "bytes saved",
                     title="static passes (the replayed plan)", console=console)
    for r in results:
        for p in r.passes or ():
            t.add_row(r.spec, _or_dash(r.batch), p["name"], str(p["nodes_removed"]),
                      _bytes(p["bytes_saved"]))
    t.columns[0].no_wrap = True
    for column in t.columns[1:]:
        column.justify = "right"
        column.no_wrap = True
    t.columns[2].justify = "left"
    return t


def _profile_table(r: BenchResult, console: Console):
    """Chainer's TimerHook report: per op, calls and self time (forward, backward, total)."""
    batch = "" if r.batch is None else f" batch {r.batch}"
    report = r.profile
    t = output.table("op", "calls", "bwd calls", "forward", "backward", "total", "share",
                     title=f"ops of {r.spec} {r.mode}{batch}, ms over {r.repeat} iterations "
                           f"({report.total_ms:.3f} ms in ops)", console=console)
    for op in report.rows():
        t.add_row(op.op, str(op.calls), str(op.backward_calls), _ms(op.forward_ms),
                  _ms(op.backward_ms), _ms(op.total_ms), f"{100 * report.share(op.op):.1f}%")
    t.columns[0].no_wrap = True
    for column in t.columns[1:]:
        column.justify = "right"
        column.no_wrap = True
    return t


def _ms(value: float) -> str:
    return f"{value:.3f}"


def _or_dash(value: Any, fmt=str) -> str:
    return "-" if value is None else fmt(value)


def _bytes(n: int | None) -> str:
    if n is None:
        return "-"
    if n < 1024:
        return f"{n} B"
    size = n / 1024
    for unit in ("KiB", "MiB"):
        if size < 1024:
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"
