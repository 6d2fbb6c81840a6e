"""Predict: the spec's outputs for any number of rows, in evaluation mode, in batches. Rows
come from --input NAME=FILE (a CSV with the data's column names, .npy, .npz) or the spec's
data; written as CSV (one row per example, columns named after the outputs), .npz, or - for
CSV on stdout. The parameters: --params FILE, else the best.npz of the latest run
(OUT_DIR/NAME/runs/N/; --run N: run N). Without -o, the predictions go into the folder of the
run they come from (runs/N/predictions.csv), or with --params into
OUT_DIR/NAME/predictions.csv."""

from __future__ import annotations

import csv
import dataclasses
import io
import sys
from pathlib import Path

import numpy as np
import typer

from cli import files, output, workflow
from cli.errors import USAGE, CliError, command
from cli.options import plugin_option
from graphcore.batching.analysis import reads
from graphcore.commands.train.data import data_origins, no_batched_input, require_rows
from graphcore.commands.train.session import TrainingOptionError, batched_inputs, predict_arrays
from graphcore.inputs.make import make_inputs
from graphcore.interpreter.parameters import build_model
from graphcore.interpreter.preprocessing import prepare_inputs
from graphcore.language.syntax import PREVIOUS, OpStep, walk_steps

STDOUT = "-"


@command
def predict(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    params: Path | None = typer.Option(None, "--params", help="Trained parameters (.npz; "
                                       "default: the latest run's best.npz)."),
    run: int | None = typer.Option(None, "--run", min=1, help="Take run N's best.npz "
                                   "(default: the latest run's)."),
    inputs: list[str] = typer.Option([], "--input", help="Rows of an input: NAME=PATH or "
                                     "NAME=-."),
    data: Path | None = typer.Option(None, "--data", help="Read the spec's `data:` inputs "
                                     "from this file."),
    out: str | None = typer.Option(None, "-o", "--output", help="preds.csv, preds.npz or - "
                                   "(default: predictions.csv in the run's folder; with "
                                   "--params, in OUT_DIR/NAME/)."),
    batch_size: int = typer.Option(256, "--batch-size", min=1, help="Rows per forward pass."),
    seed: int | None = typer.Option(None, "--seed", help="RNG seed (default: the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    plugins: list[Path] = plugin_option(),
    out_dir: Path = typer.Option(Path("outputs"), "--out-dir", help="Artifacts folder."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages on stderr."),
) -> None:
    if out is not None and out != STDOUT and Path(out).suffix.lower() not in (".csv", ".npz"):
        raise CliError(f"-o {out}: predictions are written as .csv, .npz or - (CSV on "
                       "stdout)", USAGE)
    if params is not None and run is not None:
        raise CliError("--params and --run both name the parameters; give one", USAGE)
    loaded, overrides = workflow.load_spec(spec, sets, inputs, plugins, data)
    if not loaded.outputs:
        raise CliError(f"spec '{loaded.name}' declares no outputs to predict", USAGE)
    folder = None  # where the predictions go without -o: the run's folder, if they are a run's
    if params is None:
        params, taken = workflow.run_params(out_dir, loaded.name, run, spec)
        folder = taken.folder
    graph_only = _without_loss(loaded)
    seed = loaded.seed if seed is None else seed
    arrays = make_inputs(graph_only.inputs, seed, loaded.folder, overrides,
                         max_elements=loaded.max_elements)
    names = batched_inputs(graph_only, arrays)
    if not names:
        refusal = no_batched_input(graph_only, "predict")
        raise CliError(str(refusal), USAGE, at=refusal.loc)
    rows = {n: arrays[n] for n in names}
    require_rows(graph_only, rows, "predict")
    shared = {n: v for n, v in arrays.items() if n not in rows}
    model = build_model(loaded, seed)
    workflow.load_params(params, model)
    prepared = prepare_inputs(graph_only, model, arrays, data_origins(graph_only, overrides))
    rows = {n: prepared[n] for n in rows}
    shared = {n: prepared[n] for n in shared}
    try:
        predictions = predict_arrays(graph_only, model, rows, shared, batch_size, seed)
    except TrainingOptionError as e:
        raise CliError(str(e), USAGE) from None
    ragged = [name for name, v in predictions.items() if isinstance(v, list)]
    if ragged:
        if out is None or Path(out).suffix.lower() != ".npz":
            name = ragged[0]
            shapes = ", ".join(str(np.shape(a)) for a in predictions[name][:3])
            raise CliError(f"output '{name}' differs in shape from example to example "
                           f"({shapes}, ...); a CSV row per example holds outputs of one "
                           f"shape: write -o preds.npz (one array per example: {name}/0, "
                           f"{name}/1, ...)", USAGE, at=_bound_at(loaded, name))
        predictions = {key: a for name, values in predictions.items()
                       for key, a in _per_example(name, values)}
    if out == STDOUT:
        _print(_csv(predictions))
        return
    if out is not None:
        target = Path(out)
    else:
        target = (folder or files.artifact_dir(out_dir, loaded.name)) / "predictions.csv"
    if target.suffix.lower() == ".npz":
        written = files.write_npz(target, predictions)
    else:
        written = files.write_text(target, _csv(predictions))
    output.wrote([written], quiet)


def _print(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _bound_at(spec, name: str):
    """Where ``name`` is bound: the last step writing it (``to:``), else its input."""
    steps = [s for s in walk_steps(spec.graph) if getattr(s, "to", None) == name]
    if steps:
        return steps[-1].loc
    return spec.inputs[name].loc if name in spec.inputs else spec.loc


def _without_loss(spec):
    """The spec without its loss and without the top-level op steps only the loss needed
    (a label's reshape), keeping only the inputs what is left reads: labels are not needed to
    predict."""
    steps = _needed_steps(spec)
    used: set[str] = set()
    for step in walk_steps(steps):
        if isinstance(step, OpStep):
            used.update(step.inputs)
        for attr in ("sequence",):
            if hasattr(step, attr):
                used.add(getattr(step, attr))
        predicate = getattr(step, "predicate", None)
        if predicate is not None:
            used.update(ref.name for ref in predicate.name_refs())
    used.update(spec.outputs)
    first = next(iter(spec.inputs), None)
    if PREVIOUS in used and first is not None:
        used.add(first)
    inputs = {n: s for n, s in spec.inputs.items() if n in used}
    return dataclasses.replace(spec, loss=None, inputs=inputs, graph=steps)


def _needed_steps(spec) -> list:
    """The graph's steps less the top-level op steps whose values no output needs: walked
    back from the outputs, an op step is kept when a later step or an output reads what it
    binds (its ``to:`` name, or ``_``); control flow is always kept, with all it reads."""
    needed = set(spec.outputs)
    kept = []
    for step in reversed(spec.graph):
        if isinstance(step, OpStep):
            binds = {PREVIOUS} | ({step.to} if step.to else set())
            if not binds & needed:
                continue
            needed -= binds
            needed.update(step.inputs)
        else:
            needed |= reads(step) | {PREVIOUS}
        kept.append(step)
    if not kept:
        return list(spec.graph)
    return kept[::-1]


def _per_example(name: str, values):
    """An output's npz entries: one array, or ``NAME/k`` per example where shapes differ."""
    if isinstance(values, list):
        return [(f"{name}/{k}", a) for k, a in enumerate(values)]
    return [(name, values)]


def _csv(predictions: dict[str, np.ndarray]) -> str:
    """One row per example, a column per output element (``NAME_k`` where an output has
    several per row); each value as the shortest text that reads back as its own dtype
    (float32 ``194.744``, not float64's ``194.74400329589844``)."""
    header: list[str] = []
    columns: list[list[str]] = []
    for name, array in predictions.items():
        array = np.asarray(array)
        flat = array.reshape(array.shape[0], -1) if array.ndim > 1 else array.reshape(-1, 1)
        if flat.shape[1] == 1:
            header.append(name)
        else:
            header.extend(f"{name}_{i}" for i in range(flat.shape[1]))
        columns.extend([str(v) for v in flat[:, i]] for i in range(flat.shape[1]))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(zip(*columns, strict=True))
    return out.getvalue()
