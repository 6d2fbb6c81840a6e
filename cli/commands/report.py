"""Write outputs/<name>/report.html: one offline page with the spec's source (each step linked
to the nodes it made), the executed graph, the IR before and after the passes and what the
passes changed (inline SVG, pan and zoom), the path taken, what each pass removed, and, with
the artifacts for them, a dynamic-vs-static timing chart per batch size and training curves.
It reads run.json, ir.txt, ir.optimized.txt, bench.json and train.csv from the artifacts
folder and runs `run --mode static`, `bench` (with --bench) or `train` (with --train) first for
any that is missing or older than the spec."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path
from typing import Any

import typer

from cli import files, output, specs
from cli.errors import USAGE, CliError, command
from cli.options import plugin_option
from graphcore.errors import RenderError
from graphcore.spec.drawing import draw_stages, render_svg
from graphcore.spec.graph_diff import diff_dots, parse_dot
from graphcore.spec.report_html import GraphView, ReportData, render_report

BENCH_BATCHES = "1,8,32"
# graphviz-pure lays out a clustered executed graph of 300 nodes in about a second, but takes
# minutes over an IR of 400 (long edges, no clusters)
MAX_DRAWN_NODES = {"executed": 1000, "ir": 300}
RENDER_BUDGET_S = 30


@command
def report(
    spec: str = typer.Argument(..., help="Spec file."),
    with_train: bool = typer.Option(False, "--train", help="Show training curves (runs "
                                    "`graphtool train` when train.csv is missing)."),
    with_bench: bool = typer.Option(False, "--bench", help="Show the timing chart (runs "
                                    "`graphtool bench --batch 1,8,32` when bench.json is "
                                    "missing)."),
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

    run_json = folder / "run.json"
    if not _fresh(run_json, spec_time) or "static" not in _read_json(run_json):
        if _invoke(["run", spec, *plugged, "--mode", "static", "--out-dir", out_dir,
                    "-q"]) != 0:
            notes.append("static mode could not run this spec; the page shows the dynamic run")
            _require(_invoke(["run", spec, *plugged, "--out-dir", out_dir, "-q"]))
    bench_json = folder / "bench.json"
    if with_bench and not _fresh(bench_json, spec_time):
        if _invoke(["bench", spec, *plugged, "--batch", BENCH_BATCHES, "--out-dir", out_dir,
                    "-q"]) != 0 or not bench_json.exists():
            _require(_invoke(["bench", spec, *plugged, "--out-dir", out_dir, "-q"]))
    train_csv = folder / "train.csv"
    if with_train and not _fresh(train_csv, spec_time):
        _require(_invoke(["train", spec, *plugged, "--out-dir", out_dir, "-q"]))

    run = _read_json(run_json)
    graphs = _graphs(loaded, static="static" in run, notes=notes)
    data = ReportData(
        name=loaded.name, spec_file=spec, source=Path(spec).read_text(encoding="utf-8"),
        graphs=graphs, run=run, ir_before=_read_text(folder / "ir.txt"),
        ir_after=_read_text(folder / "ir.optimized.txt"),
        bench=_read_json(bench_json) or None if bench_json.exists() else None,
        train=_read_train(train_csv) if train_csv.exists() else None, notes=notes)
    written = files.write_text(folder / "report.html", render_report(data))
    output.wrote([written], quiet)


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


def _invoke(args: list[str]) -> int:
    """Run another graphtool command in this process, its stdout discarded (its messages on
    stderr stay); its exit code."""
    from cli.app import app  # the app imports this module

    with contextlib.redirect_stdout(io.StringIO()):
        code = app(args=args, prog_name="graphtool", standalone_mode=False)
    return code if isinstance(code, int) else 0


def _require(code: int) -> None:
    if code != 0:
        raise typer.Exit(code)  # the command said why on stderr


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def _read_train(path: Path) -> list[dict[str, float]]:
    """train.csv's rows, keeping the columns whose every value is a number (new columns are
    welcome; text columns are left out)."""
    with path.open(encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))
    if not rows:
        return []
    numeric = [c for c in rows[0] if c and all(_number(r.get(c)) is not None for r in rows)]
    return [{c: _number(r[c]) for c in numeric} for r in rows]


def _number(text: str | None) -> float | None:
    """The number in a CSV cell (``nan`` and ``inf`` included: the chart skips them)."""
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None
