"""Train a spec's parameters. Every `train` writes a new run folder, outputs/<name>/runs/<N>/
(N = 1, 2, ...; outputs/<name>/runs/latest holds the newest N), so no run is overwritten. A spec
with `data:`/`train:` sections trains for epochs with validation, metrics and checkpoints
(train.csv, curves.png, checkpoint.npz, best.npz; with --tensorboard, TensorBoard event files
in tensorboard/); Ctrl-C writes a checkpoint and exits 130 (`--save` is written only by a run
that finishes), `--resume [CHECKPOINT]` continues the latest run (`--run N`: run N) in its own
folder with the interrupted run's options (kept in the checkpoint; an option given again
replaces its value). A run folder is written by one `train` at a time (exit 73 for a second
`--resume` of a run still training). Other specs take N optimizer steps over their inputs,
print a loss table and write train.csv in their run folder. Exit 2 when an option does not fit
the data, 1 when the spec has no loss, 65 for bad data or a checkpoint of another spec."""

# A batch size larger than the data (or a spec whose inputs have no batch axis) is a usage
# error, exit 2, not 65: the spec and its data are fine, the option does not fit them.

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cli import files, output, train_workflow, workflow
from cli.commands.run import pad_refusal
from cli.errors import USAGE, CliError, command
from cli.options import Batching, Mode, parse_passes, passes_option, plugin_option
from graphcore import optimizers, serializers
from graphcore.commands.train.settings import TrainingOptionError
from graphcore.commands.train.steps import TrainResult, train_spec

TABLE_ROWS = 10  # the loss table shows about this many steps: the first, every k-th, the last



OptimizerName = StrEnum("OptimizerName", {name: name for name in optimizers.BY_NAME})
LR_DEFAULTS = ", ".join(f"{name} {optimizers.default_learning_rate(name):g}"
                        for name in optimizers.BY_NAME
                        if optimizers.learning_rate_keyword(name) is not None)


@command
def train(
    spec: str = typer.Argument(..., help="Spec file, or - to read the spec from stdin."),
    checkpoint: Path | None = typer.Argument(
        None, help="With --resume: the checkpoint to continue from (default: the latest run's, "
        "OUT_DIR/NAME/runs/N/checkpoint.npz)."),
    steps: int | None = typer.Option(None, "--steps", min=1, help="Optimizer steps (default "
                                     "100; with data: the spec's epochs)."),
    epochs: int | None = typer.Option(None, "--epochs", min=1, help="Passes over the data "
                                      "(specs with `data:`)."),
    data: Path | None = typer.Option(None, "--data", help="Read the spec's `data:` inputs "
                                     "from this file."),
    resume: bool = typer.Option(False, "--resume", help="Continue a run from its checkpoint, "
                                "in its folder."),
    run: int | None = typer.Option(None, "--run", min=1, help="With --resume: the run to "
                                   "continue (default: the latest)."),
    tensorboard: bool | None = typer.Option(
        None, "--tensorboard/--no-tensorboard", help="Also write the losses, metrics and "
        "learning rate of every log entry as TensorBoard event files in the run folder's "
        "tensorboard/ (the optional extra: pip install -e '.[tensorboard]'; default: "
        "off, or the resumed run's)."),
    shuffle: bool | None = typer.Option(None, "--shuffle/--no-shuffle", help="Visit the rows "
                                        "in a new random order each epoch (default: the "
                                        "spec's, true)."),
    params: Path | None = typer.Option(None, "--params", help="Start from these parameters "
                                       "(.npz)."),
    optimizer: OptimizerName | None = typer.Option(None, "--optimizer",
                                                   help="Update rule (default adam)."),
    lr: float | None = typer.Option(None, "--lr", help="Learning rate, > 0 (default: "
                                    f"{LR_DEFAULTS}; adadelta has none)."),
    schedule: str | None = typer.Option(
        None, "--schedule", help="Learning-rate schedule: KIND[:KEY=VALUE,...], KIND one of "
        "constant, step (every=, factor=), exponential (factor=, min_lr=), cosine (min_lr=, "
        "over=), plateau (metric=, factor=, patience=, min_lr=, min_delta=, cooldown=, "
        "mode=); per=iteration changes it after every step instead of every epoch. E.g. "
        "cosine, step:every=10,factor=0.5 (default: the spec's train.schedule)."),
    warmup: int | None = typer.Option(None, "--warmup", min=0, help="Epochs (iterations "
                                      "with per=iteration) of linear warm-up to the learning "
                                      "rate before the schedule; 0: none."),
    warmup_start: float | None = typer.Option(None, "--warmup-start", help="The warm-up's "
                                              "first learning rate (default: lr / (N + 1))."),
    weight_decay: float | None = typer.Option(None, "--weight-decay", help="L2 weight decay: "
                                              "adds RATE * param to each gradient; 0: none."),
    gradient_clipping: float | None = typer.Option(
        None, "--gradient-clipping", help="Rescale the gradients when their global L2 norm "
        "is above this."),
    batch_size: int | None = typer.Option(None, "--batch-size", min=1,
                                          help="Examples per step (default: all the data)."),
    mode: Mode | None = typer.Option(None, "--mode", help="Execution mode: dynamic (the "
                                     "default) or static (every step replays one compiled "
                                     "plan)."),
    passes: str | None = passes_option(),
    batching: Batching | None = typer.Option(
        None, "--batching", help="Per-example runs (lengths/examples inputs, data files' "
        "sequences): auto groups examples by path and pads where it pays, pad pads every "
        "sequence into one batch, off runs one example at a time. Default: with `data:`, the "
        "fastest of those that apply, measured on the first steps; else auto."),
    seed: int | None = typer.Option(None, "--seed", min=0, help="RNG seed (default: the spec's)."),
    sets: list[str] = typer.Option([], "--set", help="Override a param: params.NAME=VALUE."),
    inputs: list[str] = typer.Option([], "--input", help="Read an input: NAME=PATH or NAME=-."),
    plugins: list[Path] = plugin_option(),
    save: str | None = typer.Option(None, "--save", help="Save the trained parameters "
                                     "(.npz)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON document."),
    out_dir: str = typer.Option("outputs", "--out-dir", help="Artifacts folder."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages or progress on stderr."),
) -> None:
    pass_list = parse_passes(passes)
    if pass_list is not None and mode is not Mode.static and not resume:
        raise CliError("--passes applies to --mode static", USAGE)
    files.check_out_dir(out_dir)
    if save is not None:
        files.check_output(save)
    if checkpoint is not None and not resume:
        raise CliError(f"unexpected argument {str(checkpoint)!r} (a checkpoint goes after "
                       "--resume)", USAGE)
    if run is not None and not resume:
        raise CliError("--run names the run --resume continues; a `train` without --resume "
                       "starts a new run", USAGE)
    loaded, overrides = workflow.load_spec(spec, sets, inputs, plugins, data)
    if loaded.data is not None or loaded.train is not None or epochs is not None or resume:
        given = train_workflow.RunOptions(
            epochs=epochs, steps=steps, batch_size=batch_size,
            optimizer=None if optimizer is None else optimizer.value, lr=lr, shuffle=shuffle,
            seed=seed, mode=None if mode is None else mode.value,
            batching=None if batching is None else batching.value, passes=pass_list,
            tensorboard=tensorboard, schedule=schedule, warmup=warmup,
            warmup_start=warmup_start, weight_decay=weight_decay,
            gradient_clipping=gradient_clipping)
        inputs_given = [*(("--set", v) for v in sets), *(("--input", v) for v in inputs),
                        *(("--plugin", str(v)) for v in plugins),
                        *((("--data", str(data)),) if data is not None else ())]
        train_workflow.train(loaded, overrides, given, spec_arg=spec, inputs_given=inputs_given,
                             resume=resume, checkpoint=checkpoint, params=params, save=save,
                             json_out=json_out, out_dir=out_dir, quiet=quiet,
                             run_number=run)
        return
    mode = mode or Mode.dynamic
    for flag, value in (("--params", params), ("--shuffle", shuffle),
                        ("--tensorboard", tensorboard)):
        if value is not None:
            raise CliError(f"{flag} applies to specs with a `data:` or `train:` section", USAGE)
    optimizer = optimizer or OptimizerName.adam
    steps = 100 if steps is None else steps
    with _progress(steps, quiet) as on_step:
        try:
            result = train_spec(loaded, steps=steps, optimizer=optimizer.value, lr=lr,
                                batch_size=batch_size, seed=seed, input_overrides=overrides,
                                on_step=on_step, mode=mode.value, passes=pass_list,
                                batching="auto" if batching is None else batching.value,
                                schedule=schedule, warmup=warmup, warmup_start=warmup_start,
                                weight_decay=weight_decay,
                                gradient_clipping=gradient_clipping)
        except TrainingOptionError as e:
            raise CliError(str(e), USAGE) from None
    refused = pad_refusal(result.batching)
    if refused is not None:
        output.note(output.pad_warning(refused), quiet)
    run = workflow.new_run(out_dir, loaded.name)
    written = [files.write_text(run.folder / "train.csv", _csv(result.losses))]
    if save is not None:
        buffer = io.BytesIO()  # every array the model has (persistent values too), as npz
        serializers.save_npz(buffer, result.model)
        written.append(files.write_bytes(save, buffer.getvalue()))
    document = {**result.to_dict(), "run": run.number, "run_folder": str(run.folder)}
    if json_out:
        output.emit_json(document)
    else:
        _render(result)
    output.wrote(written, quiet)


def _csv(losses: list[float]) -> str:
    return "step,loss\n" + "".join(f"{i},{loss!r}\n" for i, loss in enumerate(losses, 1))


def table_steps(steps: int, rows: int = TABLE_ROWS) -> list[int]:
    """The steps the loss table shows: 1, every k-th, and the last."""
    every = max(1, steps // rows)
    return sorted({1, steps, *range(every, steps + 1, every)})


@contextlib.contextmanager
def _progress(steps: int, quiet: bool) -> Iterator[Callable[[int, float], None] | None]:
    """A Rich progress bar on stderr when it is a terminal (and not --quiet), else nothing."""
    console = output.stderr_console()
    if quiet or not console.is_terminal:
        yield None
        return
    columns = (TextColumn("train", markup=False), BarColumn(), MofNCompleteColumn(),
               TextColumn("loss {task.fields[loss]}", markup=False), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("train", total=steps, loss="-")

        def on_step(step: int, loss: float) -> None:
            progress.update(task, completed=step, loss=f"{loss:.6g}")

        yield on_step


def _render(result: TrainResult) -> None:
    console = output.stdout_console()
    batch = "all" if result.batch_size is None else str(result.batch_size)
    rate = "" if result.lr is None else f" lr {result.lr:g}"
    console.print(f"{result.spec.name}  mode {result.mode}  seed {result.seed}  "
                  f"{result.optimizer}{rate}  {result.steps} steps  batch {batch}")
    t = output.table("step", "loss", console=console)
    for step in table_steps(result.steps):
        t.add_row(str(step), f"{result.losses[step - 1]:.6g}")
    output.show(console, t)
    console.print(f"final loss {result.final_loss:.6g} (all the data, trained parameters)")
    if result.cache is not None:
        c = result.cache
        console.print(f"static  compile {c.compile_ms:.3f} ms  cache {c.hits} hits {c.misses} "
                      f"misses  {len(c.keys)} plans")
