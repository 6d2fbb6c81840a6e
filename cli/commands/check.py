"""Validate a spec and gradient-check every parameter: backward (define-by-run, or with
--mode static the compiled plan's) against central finite differences in float64, a table of
the largest relative error per parameter; exit 1 when one fails (or when the spec has no loss
to differentiate)."""

from __future__ import annotations

from pathlib import Path

import typer

from cli import output, specs
from cli.errors import FAILURE, USAGE, CliError, command
from cli.options import Mode, parse_passes, passes_option, plugin_option
from graphcore.spec.checking import CheckReport, check_spec


@command
def check(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    mode: Mode = typer.Option(Mode.dynamic, "--mode", help="Execution mode."),
    passes: str | None = passes_option(),
    seed: int | None = typer.Option(None, "--seed", min=0,
                                    help="RNG seed (default: the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH or NAME=-."),
    plugins: list[Path] = plugin_option(),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages on stderr."),
) -> None:
    pass_list = parse_passes(passes)
    if pass_list is not None and mode is not Mode.static:
        raise CliError("--passes applies to --mode static", USAGE)
    loaded, overrides = specs.load_with_inputs(spec, sets, inputs, plugins)
    report = check_spec(loaded, seed=seed, input_overrides=overrides, mode=mode.value,
                        passes=pass_list)
    if json_out:
        output.emit_json(report.to_dict(mode.value))
    else:
        _render(report, mode.value)
    if not report.ok:
        failed = report.failures()
        raise CliError(f"gradient check failed for {len(failed)} parameter(s): "
                       f"{', '.join(failed)}", FAILURE,
                       "an op's backward disagrees with finite differences of its forward")
    output.note(f"gradient check passed: {len(report.params)} parameter(s)", quiet)


def _render(report: CheckReport, mode: str) -> None:
    console = output.stdout_console()
    console.print(f"{report.spec.name}  mode {mode}  seed {report.seed}  loss "
                  f"{report.loss:.6g}  eps {report.eps:g}  rtol {report.rtol:g}  "
                  f"atol {report.atol:g}")
    if not report.params:
        console.print("no parameters to check")
        return
    t = output.table("parameter", "shape", "checked", "max rel error", "max abs error",
                     "result", console=console)
    for p in report.params:
        if p.shape is None:
            t.add_row(p.name, "-", "0", "-", "-", "skipped (not initialized)")
            continue
        t.add_row(p.name, str(p.shape), f"{p.checked}/{p.size}", f"{p.max_rel_error:.2e}",
                  f"{p.max_abs_error:.2e}", "ok" if p.ok else "FAIL")
    output.show(console, t)
