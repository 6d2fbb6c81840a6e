"""Run a spec once: forward, and backward when it has a loss; report outputs, loss, gradient
norms, the path taken and timings."""

from __future__ import annotations

from pathlib import Path

import typer

from cli import files, output, specs
from cli.errors import USAGE, CliError, command
from cli.options import Mode
from graphcore.spec.report import run_report


@command
def run(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    mode: Mode = typer.Option(Mode.dynamic, "--mode", help="Execution mode."),
    seed: int | None = typer.Option(None, "--seed", help="RNG seed (default: the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH or NAME=-."),
    params: Path | None = typer.Option(None, "--params", help="Load parameters (.npz)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
    out_dir: Path = typer.Option(Path("outputs"), "--out-dir", help="Artifacts folder."),
    arrays: Path | None = typer.Option(None, "-o", "--output",
                                       help="Save outputs, loss and gradients (.npz)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages on stderr."),
) -> None:
    overrides = specs.parse_inputs(inputs)
    if spec == specs.STDIN and specs.STDIN in overrides.values():
        raise CliError("stdin cannot carry both the spec and an input", USAGE)
    loaded = specs.load(spec, sets)
    report = run_report(loaded, seed=seed, params_file=str(params) if params else None,
                        input_overrides=overrides, mode=mode.value)
    document = report.to_dict()
    folder = files.artifact_dir(out_dir, loaded.name)
    written = [files.write_text(folder / "run.json", output.to_json(document))]
    if arrays is not None:
        written.append(files.write_npz(arrays, report.arrays()))
    if json_out:
        output.emit_json(document)
    else:
        _render(document)
    output.wrote(written, quiet)


def _render(doc: dict) -> None:
    console = output.stdout_console()
    loss = "none" if doc["loss"] is None else f"{doc['loss']:.6g}"
    console.print(f"{doc['spec']}  mode {doc['mode']}  seed {doc['seed']}  loss {loss}")
    t = output.table("output", "shape", "dtype", "mean", "std", "min", "max", console=console)
    for name, s in doc["outputs"].items():
        if "parts" in s:
            t.add_row(name, f"{len(s['parts'])} values", "", "", "", "", "")
            continue
        t.add_row(name, str(tuple(s["shape"])), s["dtype"],
                  *(f"{s[k]:.4g}" if k in s else "" for k in ("mean", "std", "min", "max")))
    output.show(console, t)
    if doc["grads"]:
        g = output.table("parameter", "grad norm", console=console)
        for name, norm in doc["grads"].items():
            g.add_row(name, f"{norm:.4g}")
        output.show(console, g)
    for entry in doc["path"]:
        detail = ", ".join(f"{k}={v}" for k, v in entry.items() if k not in ("kind", "at"))
        console.print(f"path  {entry['at']}  {entry['kind']}  {detail}")
    timing = doc["timing_ms"]
    console.print(f"time  forward {timing['forward']:.3f} ms  backward {timing['backward']:.3f} "
                  f"ms  total {timing['total']:.3f} ms")
