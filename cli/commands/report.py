"""Write outputs/<name>/report.html: one offline page with the spec's source (each step linked
to the nodes it made), the executed graph, the IR before and after the passes and what the
passes changed (inline SVG, pan and zoom), the path taken, what each pass removed, and, with
the artifacts for them, a dynamic-vs-static timing chart per batch size and training curves.
It reads run.json, ir.txt, ir.optimized.txt and bench.json from the artifacts folder and
train.csv from the latest run's folder (runs/N/; --run N: run N's), and runs `run --mode
static`, `bench` (with --bench) or `train` (with --train: a new run) first for any that is
missing, older than the spec, or unreadable (not what its command writes; a run named with
--run is shown as it is). An
artifact it shows without making it (bench.json without --bench, train.csv without --train)
that cannot be read is an error (65) at its place in that file; a folder or a FIFO in an
artifact's place is an error (66) at once."""

from __future__ import annotations

import contextlib
import io
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

from cli import files, output, specs, workflow
from cli.errors import NO_INPUT, USAGE, CliError, command
from cli.options import plugin_option
from graphcore.commands.report.artifacts import (
    MAX_ARTIFACT_BYTES,
    parse_bench_json,
    parse_ir_text,
    parse_run_json,
    parse_train_csv,
)
from graphcore.commands.report.page import GraphView, ReportData, render_report
from graphcore.commands.train.run_folders import run_numbers, runs_folder
from graphcore.commands.viz.diff import diff_dots, parse_dot
from graphcore.commands.viz.draw import draw_stages, render_svg
from graphcore.errors import RenderError, SpecError, SpecErrors

BENCH_BATCHES = "1,8,32"
# graphviz-pure lays out a clustered executed graph of 300 nodes in about a second, but takes
# minutes over an IR of 400 (long edges, no clusters)
MAX_DRAWN_NODES = {"executed": 1000, "ir": 300}
RENDER_BUDGET_S = 30
T = TypeVar("T")


@command
def report(
    ctx: typer.Context,
    spec: str = typer.Argument(..., help="Spec file."),
    with_train: bool = typer.Option(False, "--train", help="Show training curves (runs "
                                    "`graphtool train` when train.csv is missing)."),
    with_bench: bool = typer.Option(False, "--bench", help="Show the timing chart (runs "
                                    "`graphtool bench --batch 1,8,32` when bench.json is "
                                    "missing)."),
    run_number: int | None = typer.Option(None, "--run", min=1, help="Show run N's training "
                                          "curves (default: the latest run's)."),
    plugins: list[Path] = plugin_option(),
    out_dir: str = typer.Option("outputs", "--out-dir", help="Artifacts folder."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages on stderr."),
) -> None:
    if spec == specs.STDIN:
        raise CliError("report needs a spec file: the commands it runs read the spec again",
                       USAGE)
    files.check_out_dir(out_dir)
    loaded = specs.load(spec, plugins=[str(p) for p in plugins])
    # the commands it runs for missing artifacts load the same plugins
    plugged = [word for p in plugins for word in ("--plugin", str(p))]
    folder = Path(out_dir) / loaded.name
    spec_time = Path(spec).stat().st_mtime
    notes: list[str] = []

    run_json, ir_txt, ir_optimized = (folder / "run.json", folder / "ir.txt",
                                      folder / "ir.optimized.txt")
    run = _fresh_artifact(run_json, parse_run_json, spec_time)
    if run is None or "static" not in run or not _readable_ir(ir_txt, ir_optimized, spec_time):
        if _invoke(ctx, ["run", spec, *plugged, "--mode", "static", "--out-dir", out_dir,
                    "-q"]) != 0:
            notes.append("static mode could not run this spec; the page shows the dynamic run")
            _require(_invoke(ctx, ["run", spec, *plugged, "--out-dir", out_dir, "-q"]))
    bench_json = folder / "bench.json"
    if with_bench and _fresh_artifact(bench_json, parse_bench_json, spec_time) is None:
        if _invoke(ctx, ["bench", spec, *plugged, "--batch", BENCH_BATCHES, "--out-dir", out_dir,
                    "-q"]) != 0 or not bench_json.exists():
            _require(_invoke(ctx, ["bench", spec, *plugged, "--out-dir", out_dir, "-q"]))
    train_csv = _train_csv(out_dir, loaded.name, run_number, spec)
    if with_train and run_number is None and (
            train_csv is None or _fresh_artifact(train_csv, parse_train_csv, spec_time) is None):
        _require(_invoke(ctx, ["train", spec, *plugged, "--out-dir", out_dir, "-q"]))
        train_csv = _train_csv(out_dir, loaded.name, None, spec)

    problems: list[SpecError] = []  # every artifact's, said at once

    def shown(path: Path, parse: Callable[[bytes, str], T]) -> T | None:
        try:
            return _artifact(path, parse)
        except SpecErrors as e:
            problems.extend(e.errors)
            return None

    run = shown(run_json, parse_run_json) or {}
    static = "static" in run
    ir_before = shown(ir_txt, parse_ir_text) if static else None
    ir_after = shown(ir_optimized, parse_ir_text) if static else None
    bench = shown(bench_json, parse_bench_json)
    train = None if train_csv is None else shown(train_csv, parse_train_csv)
    if problems:
        raise SpecErrors(problems)
    data = ReportData(
        name=loaded.name, spec_file=spec, source=Path(spec).read_text(encoding="utf-8"),
        graphs=_graphs(loaded, static=static, notes=notes), run=run, ir_before=ir_before,
        ir_after=ir_after, bench=bench, train=train, notes=notes)
    written = files.write_text(folder / "report.html", render_report(data))
    output.wrote([written], quiet)


def _train_csv(out_dir: str, name: str, number: int | None, spec: str) -> Path | None:
    """The train.csv of run ``number`` (None: the latest run's, or None with no run yet)."""
    if number is None and not run_numbers(runs_folder(Path(out_dir) / name)):
        return None
    return workflow.find_run(out_dir, name, number, spec).folder / "train.csv"


def _graphs(loaded: Any, *, static: bool, notes: list[str]) -> list[GraphView]:
    """The executed graph, and with a static run the IR before and after the passes and their
    difference, as SVG. A drawing too large to lay out in time is a note, not a failure."""
    stages = ["executed", "ir", "optimized"] if static else ["executed"]
    drawings = draw_stages(loaded, stages, expand=False)
    executed = drawings["executed"]
    views = [_view("Executed graph (define-by-run)", executed.dot,
                   note="Click a node to see the spec step that made it; click a step in the "
                   "spec to light up its nodes.", node_lines=_lines(executed), kind="executed")]
    if executed.examples > 1:
        notes.append(f"the executed graph is example {executed.example + 1} of "
                     f"{executed.examples}")
    if static:
        ir, optimized = drawings["ir"], drawings["optimized"]
        views.append(_view("Static IR, as traced", ir.dot, node_lines=_lines(ir),
                           note="Click a node to see the spec step it was traced from (a vjp: "
                           "the step it differentiates)."))
        views.append(_view("Static IR after the passes", optimized.dot,
                           node_lines=_lines(optimized),
                           note="Nodes a pass made (a fusion) link to no step."))
        change = diff_dots(ir.dot, optimized.dot, "the traced IR", "the optimized IR")
        views.append(_view(
            "What the passes changed", change.dot,
            note=f"{len(change.only_first)} nodes removed or rewritten, "
                 f"{len(change.only_second)} made by the passes, "
                 f"{len(change.shared) + len(change.fed_differently)} kept."))
    return views


def _lines(drawing: Any) -> dict[str, int]:
    """A drawing's node -> spec line map (what the page links)."""
    return {node: int(at.split(":")[0]) for node, at in drawing.locations.items()}


def _view(title: str, dot: str, note: str = "", node_lines: dict[str, int] | None = None,
          kind: str = "ir") -> GraphView:
    """One drawing as SVG; over ``MAX_DRAWN_NODES`` drawn nodes, or when the renderer runs out
    of time, a note saying so (the IR's text is on the page either way)."""
    nodes = len(parse_dot(dot).nodes)
    if nodes > MAX_DRAWN_NODES[kind]:
        return GraphView(title, "", note=f"{nodes} nodes: too many to lay out here (over "
                         f"{MAX_DRAWN_NODES[kind]}); `graphtool viz` draws it"
                         + (", and the IR's text is under the passes." if kind == "ir" else "."))
    try:
        svg = render_svg(dot, timeout_s=RENDER_BUDGET_S)
    except RenderError as e:
        return GraphView(title, "", note=f"not drawn: {e}")
    return GraphView(title, svg, note=note, node_lines=node_lines or {})


def _fresh(path: Path, spec_time: float) -> bool:
    """Whether ``path`` exists and was written after the spec last changed."""
    try:
        return path.stat().st_mtime >= spec_time
    except OSError:
        return False


def _artifact(path: Path, parse: Callable[[bytes, str], T]) -> T | None:
    """The artifact at ``path`` as ``parse`` reads it; None when there is none. A malformed
    one raises ``SpecErrors`` (65) at its place in the file; a folder, a FIFO or an unreadable
    file in its place a ``CliError`` (66), before anything waits on it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror}", NO_INPUT) from None
    if not stat.S_ISREG(mode):
        what = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise CliError(f"cannot read {path}: it is {what}", NO_INPUT,
                       hint=f"remove it: graphtool writes {path.name} itself") from None
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_ARTIFACT_BYTES + 1)
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror}", NO_INPUT) from None
    return parse(data, str(path))


def _fresh_artifact(path: Path, parse: Callable[[bytes, str], T], spec_time: float) -> T | None:
    """The artifact when it is newer than the spec and reads as its command writes it; None
    when it is to be made (again): missing, older than the spec, or malformed."""
    if not _fresh(path, spec_time):
        return None
    try:
        return _artifact(path, parse)
    except SpecErrors:
        return None


def _readable_ir(ir_txt: Path, ir_optimized: Path, spec_time: float) -> bool:
    """Whether the IR texts a static run wrote are there, fresh and readable."""
    return all(_fresh_artifact(path, parse_ir_text, spec_time) is not None
               for path in (ir_txt, ir_optimized))


def _invoke(ctx: typer.Context, args: list[str]) -> int:
    """Run another graphtool command in this process, through the running command group (the
    root of ``ctx``), its stdout discarded (its messages on stderr stay); its exit code."""
    with contextlib.redirect_stdout(io.StringIO()):
        code = ctx.find_root().command.main(args=args, prog_name="graphtool",
                                            standalone_mode=False)
    return code if isinstance(code, int) else 0


def _require(code: int) -> None:
    if code != 0:
        raise typer.Exit(code)  # the command said why on stderr
