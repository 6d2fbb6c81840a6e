"""Evaluate trained parameters: the loss and the spec's metrics in evaluation mode (dropout
off, batch normalization's running statistics) on the validation data, or on all the rows of
--data FILE. The figures equal those train reports for the same parameters."""

from __future__ import annotations

from pathlib import Path

import typer

from cli import output, workflow
from cli.errors import USAGE, CliError, command
from cli.options import plugin_option
from graphcore.commands.schema import SCHEMA_VERSION
from graphcore.commands.train.data import SpecData, check_labels
from graphcore.commands.train.session import (
    TrainingOptionError,
    evaluate_arrays,
    load_spec_data,
    settings_for,
)
from graphcore.interpreter.parameters import build_model


@command
def evaluate(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    params: Path = typer.Option(..., "--params", help="Trained parameters (.npz: --save, "
                                "best.npz or a checkpoint)."),
    data: Path | None = typer.Option(None, "--data", help="Evaluate every row of this file "
                                     "(default: the spec's validation data)."),
    batch_size: int | None = typer.Option(None, "--batch-size", min=1, help="Rows per "
                                          "forward pass (default: as train evaluates)."),
    seed: int | None = typer.Option(None, "--seed", help="RNG seed (default: the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH or NAME=-."),
    plugins: list[Path] = plugin_option(),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    loaded, overrides = workflow.load_spec(spec, sets, inputs, plugins, data)
    if loaded.loss is None:
        raise CliError(f"spec '{loaded.name}' has no loss to evaluate", USAGE)
    try:
        settings = settings_for(loaded, seed=seed)
        split = data is None and not overrides
        arrays = load_spec_data(loaded, settings.seed, overrides, split=split,
                                verb="evaluate")
        rows = arrays.validation if arrays.validation is not None else arrays.train
        which = "validation" if arrays.validation is not None else "all"
        model = build_model(loaded, settings.seed)
        workflow.load_params(params, model)
        index = arrays.validation_index if arrays.validation is not None else None
        check_labels(loaded, model, SpecData(rows, None, arrays.shared, index))
        size = batch_size or max(settings.batch_size, 256)
        result = evaluate_arrays(loaded, model, rows, arrays.shared, size, settings.metrics,
                                 settings.seed)
    except TrainingOptionError as e:
        raise CliError(str(e), USAGE, at=e.loc) from None
    count = len(next(iter(rows.values())))
    if json_out:
        output.emit_json({"schema_version": SCHEMA_VERSION, "spec": loaded.name,
                          "params": str(params), "data": which, "rows": count, **result})
        return
    console = output.stdout_console()
    console.print(f"{loaded.name}  {which} data  {count} rows  params {params}")
    t = output.table("metric", "value", console=console)
    for name, value in result.items():
        t.add_row(name, f"{value:.6g}")
    output.show(console, t)
