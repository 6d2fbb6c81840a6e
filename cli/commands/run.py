"""Run a spec once: forward, and backward when it has a loss; report outputs, loss, gradient
norms, the path taken and timings. --mode static traces, optimizes and runs a plan, and also
writes the IR before and after the passes (ir.txt, ir.optimized.txt)."""

from __future__ import annotations

from pathlib import Path

import typer

from cli import files, output, specs
from cli.errors import USAGE, CliError, command
from cli.options import Batching, Mode, batching_option, parse_passes, passes_option, plugin_option
from graphcore.commands.run import run_report
from graphcore.config import using_config

IR_FILES = {"ir": "ir.txt", "optimized": "ir.optimized.txt"}


@command
def run(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    mode: Mode = typer.Option(Mode.dynamic, "--mode", help="Execution mode."),
    passes: str | None = passes_option(),
    batching: Batching = batching_option(),
    seed: int | None = typer.Option(None, "--seed", min=0, help="RNG seed (default: the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH or NAME=-."),
    plugins: list[Path] = plugin_option(),
    params: Path | None = typer.Option(None, "--params", help="Load parameters (.npz)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
    out_dir: str = typer.Option("outputs", "--out-dir", help="Artifacts folder."),
    arrays: str | None = typer.Option(None, "-o", "--output",
                                       help="Save outputs, loss and gradients (.npz)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages on stderr."),
    eval_mode: bool = typer.Option(False, "--eval", help="Evaluation mode: dropout off, batch "
                                   "normalization uses its running statistics."),
) -> None:
    pass_list = parse_passes(passes)
    if pass_list is not None and mode is not Mode.static:
        raise CliError("--passes applies to --mode static", USAGE)
    files.check_out_dir(out_dir)
    if arrays is not None:
        files.check_output(arrays)
    if params is not None:
        specs.require_readable(params, "--params ")
    loaded, overrides = specs.load_with_inputs(spec, sets, inputs, plugins)
    with using_config("train", not eval_mode):
        report = run_report(loaded, seed=seed, params_file=str(params) if params else None,
                            input_overrides=overrides, mode=mode.value, passes=pass_list,
                            batching=batching.value)
    document = report.to_dict()
    refused = pad_refusal(document.get("batching"))
    if refused is not None:
        output.note(output.pad_warning(refused), quiet)
    origin = report.nonfinite_origin()
    if origin is not None:  # said even with -q: the numbers are not what they should be
        output.note(f"warning: NaN or Inf in the results; the first: {origin}")
    folder = files.artifact_dir(out_dir, loaded.name)
    written = [files.write_text(folder / "run.json", output.to_json(document))]
    for stage, text in report.ir_texts().items():
        written.append(files.write_text(folder / IR_FILES[stage], text))
    if arrays is not None:
        written.append(files.write_npz(arrays, report.arrays()))
    if json_out:
        output.emit_json(document)
    else:
        _render(document)
    if report.ir_texts() and report.result.examples > 1:
        output.note(f"the IR files show the plan of the last example ({report.result.examples} "
                    "of them ran; the plan is traced per input shape and path)", quiet)
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
    if doc.get("static") is not None:
        console.print(static_line(doc["static"], timing["compile"]))
    if doc.get("batching") is not None:
        console.print(batching_line(doc["batching"]))


def pad_refusal(info: dict | None) -> str | None:
    """Why a ``--batching pad`` call did not pad (None: it did, or was not asked to)."""
    if not info or info["mode"] != "pad":
        return None
    if not info["applied"]:
        return f"one example at a time: {info['reason']}"
    return info.get("pad_refused")


def batching_line(info: dict) -> str:
    """How the examples ran: batched groups, or one at a time and why."""
    if not info["applied"]:
        return f"batching {info['mode']}  one example at a time: {info['reason']}"
    return (f"batching {info['mode']}  {info['groups']} groups {info['group_sizes']}  "
            f"{info['splits']} splits  {info['partitions']} partitioned ifs  "
            f"padding waste {100 * info['padding_waste']:.1f}%")


def static_line(static: dict, compile_ms: float) -> str:
    """One line: compile time, plan cache, IR size, and what each pass removed."""
    cache, nodes = static["cache"], static["nodes"]
    removed = [" ".join([p["name"], *(_less(p[key], unit) for key, unit in
                                      (("nodes_removed", "nodes"), ("bytes_saved", "B"))
                                      if p[key])])
               for p in static["passes"] if p["nodes_removed"] or p["bytes_saved"]]
    return (f"static  compile {compile_ms:.3f} ms  cache {cache['hits']} hits "
            f"{cache['misses']} misses  IR {nodes['traced']} -> {nodes['optimized']} nodes  "
            f"passes: {', '.join(removed) if removed else 'nothing removed'}")


def _less(n: int, unit: str) -> str:
    """``-3 nodes`` for 3 removed (``+3 nodes`` for 3 added)."""
    return f"-{n} {unit}" if n > 0 else f"+{-n} {unit}"
