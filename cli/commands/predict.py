"""Predict: the spec's outputs for any number of rows, in evaluation mode, in batches. Rows
come from --input NAME=FILE (a CSV with the data's column names, .npy, .npz) or the spec's
data; written as CSV (one row per example), .npz, or - for CSV on stdout. For a
classification loss, the predicted class and each class's probability too (--outputs);
--keep COLUMN passes a column of the data file (an id) through. The parameters: --params
FILE, else the best.npz of the latest run (OUT_DIR/NAME/runs/N/; --run N: run N). Without
-o, the predictions go into the folder of the run they come from (runs/N/predictions.csv),
or with --params into OUT_DIR/NAME/predictions.csv."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, BinaryIO

import typer

from cli import files, output, workflow
from cli.errors import USAGE, CliError, command
from cli.options import plugin_option
from graphcore.commands.train.data import data_origins, no_batched_input, require_rows
from graphcore.commands.train.predictions import (
    OUTPUT_KINDS,
    output_kinds,
    predict_table,
    prediction_spec,
)
from graphcore.commands.train.session import TrainingOptionError, batched_inputs
from graphcore.inputs.kept_columns import (
    KeptColumnError,
    kept_columns_from_bytes,
    read_kept_columns,
)
from graphcore.inputs.make import make_inputs
from graphcore.interpreter.parameters import build_model
from graphcore.interpreter.preprocessing import prepare_inputs
from graphcore.language.syntax import walk_steps

STDOUT = "-"
STDIN = "-"


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
    outputs: str | None = typer.Option(
        None, "--outputs", help="What to write, comma-separated: "
        f"{', '.join(OUTPUT_KINDS)} (default: all of them for a classification loss, raw "
        "otherwise)."),
    keep: list[str] = typer.Option([], "--keep", help="A column of the data file to pass "
                                   "through to the predictions (an id); repeatable."),
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
    try:
        kinds = output_kinds(loaded, [k.strip() for k in outputs.split(",")]
                             if outputs is not None else None)
        graph_only = prediction_spec(loaded)
    except TrainingOptionError as e:
        raise CliError(str(e), USAGE, at=e.loc) from None
    seed = loaded.seed if seed is None else seed
    stdin = _Recording(sys.stdin.buffer) if keep and "-" in overrides.values() else None
    arrays = make_inputs(graph_only.inputs, seed, loaded.folder, overrides, stdin,
                         max_elements=loaded.max_elements)
    names = batched_inputs(graph_only, arrays)
    if not names:
        refusal = no_batched_input(graph_only, "predict")
        raise CliError(str(refusal), USAGE, at=refusal.loc)
    rows = {n: arrays[n] for n in names}
    require_rows(graph_only, rows, "predict")
    shared = {n: v for n, v in arrays.items() if n not in rows}
    kept = _kept(graph_only, names, overrides, keep, stdin) if keep else None
    model = build_model(loaded, seed)
    workflow.load_params(params, model)
    prepared = prepare_inputs(graph_only, model, arrays, data_origins(graph_only, overrides))
    rows = {n: prepared[n] for n in rows}
    shared = {n: prepared[n] for n in shared}
    try:
        table = predict_table(loaded, model, rows, shared, batch_size=batch_size, seed=seed,
                              outputs=kinds, kept=kept, run_spec=graph_only)
    except TrainingOptionError as e:
        raise CliError(str(e), USAGE, at=e.loc) from None
    ragged = table.ragged()
    if ragged is not None and (out is None or Path(out).suffix.lower() != ".npz"):
        name = ragged.name
        shapes = ", ".join(str(a.shape) for a in ragged.values[:3])
        what = "output" if name in loaded.outputs else "predictions"
        raise CliError(f"{what} '{name}' differs in shape from example to example "
                       f"({shapes}, ...); a CSV row per example holds outputs of one "
                       f"shape: write -o preds.npz (one array per example: {name}/0, "
                       f"{name}/1, ...)", USAGE, at=_bound_at(loaded, ragged.source or name))
    try:
        if out == STDOUT:
            _print(table.csv_text())
            return
        if out is not None:
            target = Path(out)
        else:
            target = (folder or files.artifact_dir(out_dir, loaded.name)) / "predictions.csv"
        if target.suffix.lower() == ".npz":
            written = files.write_npz(target, table.arrays())
        else:
            written = files.write_text(target, table.csv_text())
    except TrainingOptionError as e:
        raise CliError(str(e), USAGE) from None
    output.wrote([written], quiet)


class _Recording:
    """stdin, with every byte read from it kept: ``--keep`` reads its columns from what
    ``--input NAME=-`` read."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.chunks: list[bytes] = []

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(size)
        self.chunks.append(chunk)
        return chunk

    def data(self) -> bytes:
        return b"".join(self.chunks)


def _kept(spec: Any, names: list[str], overrides: dict[str, str], keep: list[str],
          stdin: _Recording | None) -> dict:
    """The ``--keep`` columns, from the file the rows came from: the ``--input`` file of the
    rows' inputs, else the data file."""
    given = sorted({overrides[n] for n in names if n in overrides})
    if not given:
        given = sorted({str(Path(spec.folder) / spec.inputs[n].column.file) for n in names
                        if spec.inputs[n].column is not None})
    if len(given) != 1:
        where = "no data file" if not given else f"several files ({', '.join(given)})"
        raise CliError(f"--keep: the rows come from {where}; --keep passes columns of the "
                       "one file the rows are read from (`data:`, --data or --input NAME=FILE)",
                       USAGE)
    try:
        if given[0] == STDIN:  # stdin, as --input NAME=- read it
            return kept_columns_from_bytes(stdin.data(), keep, spec.max_elements)
        return read_kept_columns(given[0], keep, spec.max_elements)
    except KeptColumnError as e:
        raise CliError(str(e), USAGE) from None


def _print(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _bound_at(spec, name: str):
    """Where ``name`` is bound: the last step writing it (``to:``), else its input."""
    steps = [s for s in walk_steps(spec.graph) if getattr(s, "to", None) == name]
    if steps:
        return steps[-1].loc
    return spec.inputs[name].loc if name in spec.inputs else spec.loc
