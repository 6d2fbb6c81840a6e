"""Summarize a spec, as Keras' model.summary(): each step with the output shapes it produced
(define-by-run, on the spec's inputs; a data-fed spec on its first --rows rows), its parameter
count and the IR nodes static mode traced from it; the totals (trainable and not), and the
static plan's (plans, IR nodes before and after the passes, guards, buffer bytes)."""

from __future__ import annotations

from pathlib import Path

import typer

from cli import output, specs, workflow
from cli.errors import command
from cli.options import plugin_option
from graphcore.commands.summary import DEFAULT_ROWS, SpecSummary, spec_summary


@command
def summary(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    params: Path | None = typer.Option(None, "--params", help="Load parameters (.npz)."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH or NAME=-."),
    data: Path | None = typer.Option(None, "--data", help="Read the spec's `data:` inputs "
                                     "from this file."),
    rows: int = typer.Option(DEFAULT_ROWS, "--rows", min=1, help="Rows (examples) of a "
                             "data-fed spec to run on."),
    seed: int | None = typer.Option(None, "--seed", min=0, help="RNG seed (default: the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    plugins: list[Path] = plugin_option(),
    no_static: bool = typer.Option(False, "--no-static", help="Leave static mode out."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    if params is not None:
        specs.require_readable(params, "--params ")
    loaded, overrides = workflow.load_spec(spec, sets, inputs, plugins, data)
    result = spec_summary(loaded, seed=seed, params_file=str(params) if params else None,
                          input_overrides=overrides, rows=rows, static=not no_static)
    if json_out:
        output.emit_json(result.to_dict())
    else:
        _render(result)


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _render(result: SpecSummary) -> None:
    console = output.stdout_console()
    spec = result.spec
    ran = f"{result.examples} examples" if result.examples > 1 else "one pass"
    if result.rows_run is not None:
        ran += f" over the first {result.rows_run} rows of its data"
    console.print(f"{spec.name}  seed {result.seed}  shapes from {ran}; inputs: "
                  + ", ".join(f"{k} {v}" for k, v in result.inputs.items()))
    static = result.static is not None and "error" not in result.static
    headers = ["step", "at", "output shape", "runs", "params"] + (["static ops"] if static
                                                                   else [])
    cells = []
    for row in result.rows:
        label = "  " * row.depth + row.op + (f" {row.name}" if row.name else "")
        params = f"{row.non_trainable:,}" if row.kind == "preprocessing" and row.non_trainable \
            else "" if row.kind not in ("layer", "loss") or not row.layers else \
            f"shared ({row.shared_with})" if row.shared_with and not row.trainable else \
            _count(None if row.trainable is None else row.trainable + row.non_trainable)
        line = [label, row.at, row.shape_text() if row.kind not in
                ("if", "repeat", "while", "for_each") else "", str(row.runs) if row.runs else
                ("" if row.kind in ("if", "repeat", "while", "for_each") else "0"), params]
        if static:
            line.append("" if row.static_ops is None else str(row.static_ops))
        cells.append(line)
    output.show_columns(console, headers, cells, keep=1)
    trainable = result.trainable
    total = None if trainable is None else trainable + result.non_trainable
    console.print(f"params: {_count(total)} ({_count(trainable)} trainable, "
                  f"{result.non_trainable:,} not trainable)"
                  + ("; '?': a layer on a path no run took has no size yet (give --params)"
                     if trainable is None else ""))
    if result.static is not None:
        s = result.static
        if "error" in s:
            console.print(f"static: not traced: {s['error']}")
        else:
            console.print(f"static: {s['plans']} plan{'s' * (s['plans'] != 1)}"
                          f"{' (forward and backward)' if s['backward'] else ''}; the last: "
                          f"{s['nodes_traced']} IR nodes traced, {s['nodes_optimized']} after "
                          f"the passes, {s['kernels']} kernels, {s['guards']} guards, "
                          f"{s['buffer_bytes']:,} bytes of buffers")
    console.file.flush()
