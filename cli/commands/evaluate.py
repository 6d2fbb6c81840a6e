"""Evaluate trained parameters: the loss and the spec's metrics in evaluation mode (dropout
off, batch normalization's running statistics) on the validation data (the spec's default),
another part of its data (--split test|validation|train|all), or all the rows of --data FILE.
The figures equal those train reports for the same parameters; with the precision, recall or
f1 metric each class's figures too, with confusion (or --confusion FILE.png) the confusion
matrix. The parameters: --params FILE, else the best.npz of the latest run
(OUT_DIR/NAME/runs/N/; --run N: run N), evaluated on that run's rows (its --seed, kept in its
checkpoint, splits them)."""

from __future__ import annotations

from pathlib import Path

import typer

from cli import files, output, workflow
from cli.errors import USAGE, CliError, command
from cli.options import plugin_option
from cli.train_workflow import show_evaluation
from graphcore.commands.schema import SCHEMA_VERSION
from graphcore.commands.train.data import SpecData, check_labels, evaluation
from graphcore.commands.train.session import (
    TrainingOptionError,
    load_spec_data,
    settings_for,
)
from graphcore.interpreter.parameters import build_model
from graphcore.interpreter.preprocessing import model_state
from graphcore.training.extensions.plot_report import render_matrix

SPLITS = ("test", "validation", "train", "all")


@command
def evaluate(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    params: Path | None = typer.Option(None, "--params", help="Trained parameters (.npz: "
                                       "--save, best.npz or a checkpoint; default: the "
                                       "latest run's best.npz)."),
    run: int | None = typer.Option(None, "--run", min=1, help="Take run N's best.npz "
                                   "(default: the latest run's)."),
    out_dir: str = typer.Option("outputs", "--out-dir", help="Artifacts folder (its "
                                "NAME/runs/)."),
    data: Path | None = typer.Option(None, "--data", help="Evaluate every row of this file "
                                     "(default: the spec's validation data)."),
    split: str | None = typer.Option(None, "--split", help="Which rows of the spec's data: "
                                     "test, validation, train (the rows train trains on) or "
                                     "all (default: validation where the spec has it, else "
                                     "all)."),
    confusion: Path | None = typer.Option(None, "--confusion", help="Also write the "
                                          "confusion matrix of the rows as a PNG picture."),
    batch_size: int | None = typer.Option(None, "--batch-size", min=1, help="Rows per "
                                          "forward pass (default: as train evaluates)."),
    seed: int | None = typer.Option(None, "--seed", help="RNG seed (default: the run's, "
                                    "else the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH or NAME=-."),
    plugins: list[Path] = plugin_option(),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    if split is not None and split not in SPLITS:
        raise CliError(f"--split {split!r}: choose one of {', '.join(SPLITS)}", USAGE)
    if params is not None and run is not None:
        raise CliError("--params and --run both name the parameters; give one", USAGE)
    loaded, overrides = workflow.load_spec(spec, sets, inputs, plugins, data)
    if loaded.loss is None:
        raise CliError(f"spec '{loaded.name}' has no loss to evaluate", USAGE)
    if split not in (None, "all") and (data is not None or overrides):
        raise CliError(f"--split {split} names a part of the spec's data; --data and --input "
                       "give other rows, which are evaluated whole", USAGE)
    if params is None:
        params, taken = workflow.run_params(out_dir, loaded.name, run, spec)
        if seed is None:  # the run's seed splits off the run's validation rows
            seed = workflow.run_seed(taken)
    try:
        settings = settings_for(loaded, seed=seed)
        whole = split == "all" or data is not None or bool(overrides)
        model = build_model(loaded, settings.seed)
        workflow.load_params(params, model)  # its vocabularies encode the rows
        arrays = load_spec_data(loaded, settings.seed, overrides, split=not whole,
                                verb="evaluate", state=model_state(model))
        which = split or ("validation" if arrays.validation is not None else "all")
        rows, index = _part(loaded.name, arrays, which)
        check_labels(loaded, model, SpecData(rows, None, arrays.shared, index))
        size = batch_size or max(settings.batch_size, 256)
        result = evaluation(loaded, model, rows, arrays.shared, size, settings.metrics,
                            settings.seed, confusion=confusion is not None)
    except TrainingOptionError as e:
        raise CliError(str(e), USAGE, at=e.loc) from None
    if confusion is not None and result.confusion is not None:
        picture = render_matrix(result.confusion, result.classes or [],
                                f"{loaded.name}: {which} rows ({result.rows}), params {params}")
        written = files.write_bytes(confusion, picture)
    figures = result.to_dict()
    if json_out:
        output.emit_json({"schema_version": SCHEMA_VERSION, "spec": loaded.name,
                          "params": str(params), "data": which, "rows": result.rows,
                          **figures})
    else:
        console = output.stdout_console()
        console.print(f"{loaded.name}  {which} data  {result.rows} rows  params {params}")
        show_evaluation(console, figures)
    if confusion is not None and result.confusion is not None:
        output.wrote([written])


def _part(name: str, arrays: SpecData, which: str) -> tuple[dict, object]:
    """The rows of the part ``which`` names, and their indices in the data (None: a file's)."""
    if which in ("train", "all"):
        return arrays.train, arrays.train_index if which == "train" else None
    part = arrays.test if which == "test" else arrays.validation
    if part is None:
        raise CliError(f"--split {which}: spec '{name}' has no `{which}:` section", USAGE,
                       hint=f"add `{which}: 0.2` (a fraction of the data) or "
                       f"`{which}: {{file: PATH}}`")
    return part, arrays.test_index if which == "test" else arrays.validation_index
