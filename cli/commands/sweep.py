"""Run one spec at every point of a grid (--grid KEY=V1,V2, or --random K samples) as tasks
on a Dask cluster: a local one of processes sized to the machine, or --scheduler ADDRESS's.
Writes outputs/<name>/sweep.csv and sweep.json (a row per point: settings, figures, status,
time, worker), prints the rows best first by --sort and the best point's command line. A
failing point is recorded and the sweep goes on; Ctrl-C keeps the finished rows (exit 130);
--resume skips the points sweep.json already holds."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from cli import files, output, specs
from cli.errors import FAILURE, IO_ERROR, NO_INPUT, USAGE, CliError, command
from cli.options import plugin_option
from graphcore.commands.sweep import (
    COMMANDS,
    SweepOptionError,
    best_row,
    command_line,
    expand_grid,
    grid_size,
    make_tasks,
    parse_grid,
    rows_csv,
    sample_grid,
    sort_rows,
    sweep_document,
)
from graphcore.commands.sweep.records import SavePacer, default_sort
from graphcore.commands.sweep.resume import resume as resumed_rows
from graphcore.commands.sweep.schedule import check_scheduler_address, local_cluster, run_tasks
from graphcore.commands.sweep.tasks import SweepInputError, SweepReadError

Command = StrEnum("Command", {name: name for name in COMMANDS})


@command
def sweep(
    spec: str = typer.Argument(..., help="Spec file."),
    grid: list[str] = typer.Option([], "--grid", help="KEY=V1,V2,... (every combination), or "
                                   "KEY=LO:HI with --random. Keys: params.NAME, seed, mode, "
                                   "train.steps|lr|optimizer|batch_size|schedule|warmup|warmup_start|weight_decay|"
                                   "gradient_clipping, bench.batch."),
    random_points: int | None = typer.Option(None, "--random", min=1,
                                             help="Sample this many points instead."),
    sweep_command: Command = typer.Option(Command.train, "--command",
                                          help="What each point runs."),
    repeat: int = typer.Option(10, "--repeat", min=1, help="bench: timed iterations."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="An existing Dask "
                                         "scheduler, tcp://HOST:PORT (default: a local cluster)."),
    workers: int | None = typer.Option(None, "--workers", min=1, help="Local cluster: worker "
                                       "processes (default: one per CPU core)."),
    sort: str | None = typer.Option(None, "--sort", help="The figure to order by (default: "
                                    "final_loss for train, validation_loss with validation "
                                    "data)."),
    resume: bool = typer.Option(False, "--resume", help="Skip the points sweep.json holds."),
    seed: int = typer.Option(0, "--seed", min=0, help="--random: the sampling seed."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH."),
    plugins: list[Path] = plugin_option(),
    json_out: bool = typer.Option(False, "--json", help="Print sweep.json's document."),
    out_dir: str = typer.Option("outputs", "--out-dir", help="Artifacts folder."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages on stderr."),
) -> None:
    name = sweep_command.value
    if scheduler is not None and workers is not None:
        raise CliError("--workers sizes the local cluster; --scheduler uses an existing one",
                       USAGE)
    if spec == specs.STDIN:
        raise CliError("sweep needs a spec file (its text travels to the workers)", USAGE)
    if scheduler is not None:
        try:
            scheduler = check_scheduler_address(scheduler)
        except SweepOptionError as e:
            raise CliError(str(e), USAGE) from None
    files.check_out_dir(out_dir)
    input_paths = specs.parse_inputs(inputs)
    if specs.STDIN in input_paths.values():
        raise CliError("sweep inputs must be files (their contents travel to the workers)",
                       USAGE)
    plugin_paths = [str(p) for p in plugins]
    loaded = specs.load(spec, plugins=plugin_paths)  # the workers get the plugins' contents
    text = Path(spec).read_text(encoding="utf-8-sig")
    try:
        axes = parse_grid(grid, name)
        points = sample_grid(axes, random_points, seed) if random_points else expand_grid(axes)
    except SweepOptionError as e:
        raise CliError(str(e), USAGE) from None
    if random_points and len(points) < random_points:
        size = grid_size(axes)
        output.note(f"--random {random_points}: the grid holds {size} points; running every "
                    "one" if size is not None and size <= random_points else
                    f"--random {random_points}: {len(points)} distinct points in "
                    f"{10 * random_points} draws (a range too narrow for its values written "
                    "with 6 digits); running those", quiet)
    figure = sort or default_sort(name, loaded)
    try:
        tasks = make_tasks(name, spec, text, loaded, points, input_paths, repeat, plugin_paths)
    except SweepOptionError as e:  # the spec's files are more than a sweep carries
        raise CliError(str(e), USAGE) from None
    except SweepInputError as e:
        raise CliError(str(e), IO_ERROR if isinstance(e, SweepReadError) else NO_INPUT) \
            from None
    folder = files.artifact_dir(out_dir, loaded.name)
    rows: dict[str, dict[str, Any]] = {}
    if resume:
        try:
            rows = resumed_rows(folder / "sweep.json", tasks)
        except SweepInputError as e:
            raise CliError(f"--resume: {e}", IO_ERROR if isinstance(e, SweepReadError)
                           else NO_INPUT) from None
        output.note(f"resuming: {len(rows)} of {len(tasks)} points already done", quiet)
    todo = [t for t in tasks if t.key not in rows]

    def save() -> list[str]:
        document = sweep_document(loaded.name, name, list(rows.values()), figure)
        return [files.write_text(folder / "sweep.json", output.to_json(document)),
                files.write_text(folder / "sweep.csv", rows_csv(list(rows.values())))]

    pacer = SavePacer()
    written = pacer.save(save)
    if todo:
        with _client(scheduler, workers) as client:
            results = run_tasks(client, todo)
            unsaved = False
            try:
                for row in results:
                    rows[row["key"]] = row
                    unsaved = True
                    if pacer.due():  # a finished row on disk at once while writing is cheap
                        pacer.save(save)
                        unsaved = False
                    output.note(f"[{len(rows)}/{len(tasks)}] point {row['index']}: "
                                f"{row['status']}", quiet)
            except SweepOptionError as e:
                raise CliError(str(e), USAGE) from None
            finally:
                results.close()  # cancels what has not finished (Ctrl-C)
                if unsaved:  # Ctrl-C or a failure keeps every finished row
                    save()
    ordered = _sorted(list(rows.values()), figure)
    best = best_row(ordered, figure)
    best_line = None if best is None else command_line(best, spec, input_paths, repeat,
                                                       plugin_paths)
    if json_out:
        document = sweep_document(loaded.name, name, ordered, figure)
        document["best"] = None if best is None else {"key": best["key"], "command": best_line}
        output.emit_json(document)
    else:
        _render(ordered, figure, best_line)
    output.wrote(written, quiet)
    failed = sum(r["status"] != "ok" for r in ordered)
    if failed:
        output.note(f"{failed} of {len(ordered)} points failed", quiet)
    if best is None and ordered:
        raise CliError("every point failed", FAILURE)


def _sorted(rows: list[dict[str, Any]], figure: str) -> list[dict[str, Any]]:
    try:
        return sort_rows(rows, figure)
    except SweepOptionError as e:
        raise CliError(str(e), USAGE) from None


@contextlib.contextmanager
def _client(scheduler: str | None, workers: int | None) -> Iterator[Any]:
    from distributed import Client

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=10)
        except (OSError, TimeoutError) as e:
            raise CliError(f"--scheduler {scheduler}: cannot connect: {e}", FAILURE) from None
        with client:
            yield client
        return
    with local_cluster(workers) as cluster, Client(cluster) as client:
        yield client


def _render(rows: list[dict[str, Any]], figure: str, best_line: str | None) -> None:
    console = output.stdout_console()
    settings = list(dict.fromkeys(k for r in rows for k in r["settings"]))
    figures = [figure, *(f for f in dict.fromkeys(k for r in rows for k in r["figures"])
                         if f != figure)][:4]
    t = output.table("#", *settings, *figures, "status", "s", "worker", console=console)
    for r in rows:
        t.add_row(str(r["index"]), *(r["settings"].get(k, "") for k in settings),
                  *(_number(r["figures"].get(k)) for k in figures),
                  r["status"] if r["status"] == "ok" else f"{r['exit_class']}: {r['error']}",
                  "" if r["seconds"] is None else f"{r['seconds']:.2f}", str(r["worker"] or ""))
    output.show(console, t)
    if best_line is not None:
        console.print(f"best ({figure}): {best_line}")


def _number(value: Any) -> str:
    return "" if value is None else f"{value:.6g}" if isinstance(value, float) else str(value)
