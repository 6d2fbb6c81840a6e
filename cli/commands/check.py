"""Validate a spec and gradient-check every parameter: backward (define-by-run, or with
--mode static the compiled plan's) against finite differences of the loss in float64, one
random direction per parameter, on a few rows of the data; a table of the result per
parameter. Where the loss has no derivative (relu at 0, ties in max pooling, ...) the op and
its step are named and the parameter is checked at a nearby point instead. Exit 1 when backward
disagrees (or when the spec has no loss to differentiate); a kink alone is not a failure."""

from __future__ import annotations

from pathlib import Path

import typer

from cli import output, specs
from cli.errors import FAILURE, USAGE, CliError, command
from cli.options import Mode, parse_passes, passes_option, plugin_option
from graphcore.commands.check import (
    BATCH_SIZE,
    FAILED,
    NOT_CHECKED,
    PASSED_NEARBY,
    SKIPPED,
    CheckReport,
    ParamCheck,
    check_spec,
)

_RESULT = {FAILED: "FAIL", PASSED_NEARBY: "ok nearby", NOT_CHECKED: "not checked",
           SKIPPED: "skipped (not initialized)"}


@command
def check(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    mode: Mode = typer.Option(Mode.dynamic, "--mode", help="Execution mode."),
    passes: str | None = passes_option(),
    seed: int | None = typer.Option(None, "--seed", min=0,
                                    help="RNG seed (default: the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH or NAME=-."),
    batch_size: int = typer.Option(BATCH_SIZE, "--batch-size", min=1,
                                   help="Check on at most this many rows of the inputs that "
                                   "have rows (data, sequences), drawn by the seed."),
    plugins: list[Path] = plugin_option(),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages on stderr."),
) -> None:
    pass_list = parse_passes(passes)
    if pass_list is not None and mode is not Mode.static:
        raise CliError("--passes applies to --mode static", USAGE)
    loaded, overrides = specs.load_with_inputs(spec, sets, inputs, plugins)
    report = check_spec(loaded, seed=seed, input_overrides=overrides, mode=mode.value,
                        passes=pass_list, batch_size=batch_size)
    if json_out:
        output.emit_json(report.to_dict(mode.value))
    else:
        _render(report, mode.value)
    if not report.ok:
        failed = report.failures()
        raise CliError(f"gradient check failed for {len(failed)} parameter(s): "
                       f"{', '.join(failed)}", FAILURE,
                       "an op's backward disagrees with finite differences of its forward")
    output.note(_summary(report), quiet)


def _summary(report: CheckReport) -> str:
    checked = len(report.params) - len(report.with_verdict(NOT_CHECKED))
    text = f"gradient check passed: {checked} parameter(s)"
    nearby = report.with_verdict(PASSED_NEARBY)
    if nearby:
        text += (f", {len(nearby)} of them at a nearby point (the loss has no derivative at "
                 f"the spec's own: {', '.join(p.name for p in nearby)})")
    skipped = report.with_verdict(NOT_CHECKED)
    if skipped:
        text += (f"; {len(skipped)} not checked at a non-differentiable point: "
                 f"{', '.join(p.name for p in skipped)}")
    return text


def _render(report: CheckReport, mode: str) -> None:
    console = output.stdout_console()
    rows = "" if report.rows is None else f"  rows {report.rows[0]} of {report.rows[1]}"
    console.print(f"{report.spec.name}  mode {mode}  seed {report.seed}  loss "
                  f"{report.loss:.6g}  eps {report.eps:g}  rtol {report.rtol:g}  "
                  f"atol {report.atol:g}{rows}")
    if not report.params:
        console.print("no parameters to check")
        return
    t = output.table("parameter", "shape", "backward", "numeric", "rel error", "result",
                     console=console)
    for p in report.params:
        if p.verdict == SKIPPED:
            t.add_row(p.name, "-", "-", "-", "-", _RESULT[SKIPPED])
            continue
        t.add_row(p.name, str(p.shape), f"{p.backward:.6g}", f"{p.numeric:.6g}",
                  f"{p.rel_error:.2e}", _RESULT.get(p.verdict, "ok"))
    output.show(console, t)
    for p in report.params:
        if p.kinks:
            console.print(_kink_note(p))


def _kink_note(p: ParamCheck) -> str:
    where = "; ".join(k.describe() for k in p.kinks) or "no single op located"
    if p.verdict == NOT_CHECKED:
        return (f"{p.name}: not checked at a non-differentiable point: {where}; no nearby "
                "point tried was differentiable either")
    outcome = "FAILED" if p.verdict == FAILED else "passed"
    return (f"{p.name}: no derivative at the spec's point: {where}; checked at a nearby point "
            f"instead (every parameter moved by {p.nearby_scale * 100:g}% of its scale): "
            f"{outcome}")
