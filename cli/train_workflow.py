"""`graphtool train` for specs with `data:`/`train:` sections: a Trainer configured from the
spec (graphcore.training.from_spec), a per-epoch table, the files it writes, Ctrl-C."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cli import files, output, workflow
from cli.errors import INTERRUPTED, USAGE, CliError
from graphcore import serializers
from graphcore.spec import Spec
from graphcore.training.from_spec import (
    CHECKPOINT,
    TrainingOptionError,
    TrainingSession,
    TrainOutcome,
    load_spec_data,
    settings_for,
)


def train(spec: Spec, overrides: Mapping[str, str], *, steps: int | None, epochs: int | None,
          resume: bool, checkpoint: Path | None, params: Path | None, shuffle: bool | None,
          optimizer: str | None,
          lr: float | None, batch_size: int | None, mode: str, passes: list[str] | None,
          seed: int | None, save: Path | None, json_out: bool, out_dir: Path,
          quiet: bool, batching: str = "auto") -> None:
    try:
        settings = settings_for(spec, seed=seed, epochs=epochs, steps=steps,
                                batch_size=batch_size, optimizer=optimizer, lr=lr,
                                shuffle=shuffle, mode=mode)
        data = load_spec_data(spec, settings.seed, overrides)
        folder = files.artifact_dir(out_dir, spec.name)
        if resume and params is not None:
            raise CliError("--params and --resume both set the parameters; give one", USAGE)
        start = None
        if resume:
            start = checkpoint or folder / CHECKPOINT
            if not Path(start).exists():
                raise FileNotFoundError(2, "no checkpoint to resume from", str(start))
        total = _length(settings, data.rows)
        with _progress(total, settings.steps is None, quiet) as on_step:
            session = TrainingSession(spec, settings, data, folder, writer=files.write_bytes,
                                      on_step=on_step, passes=passes, batching=batching)
            if params is not None:
                workflow.load_params(params, session.model)
            if start is not None:
                session.resume(start)
            with workflow.stop_on_sigint(session):
                outcome = session.run()
    except TrainingOptionError as e:
        raise CliError(str(e), USAGE, at=e.loc) from None
    written = list(outcome.written)
    if save is not None:
        buffer = io.BytesIO()
        serializers.save_npz(buffer, session.model)
        written.append(files.write_bytes(save, buffer.getvalue()))
    if json_out:
        output.emit_json(_document(spec, session, outcome))
    else:
        _render(spec, session, outcome)
    output.wrote(written, quiet)
    if outcome.interrupted:
        output.note(f"interrupted at step {outcome.iteration} (epoch {outcome.epoch}); "
                    f"checkpoint: {folder / CHECKPOINT}; continue with: graphtool train "
                    f"{spec.file} --resume", quiet=False)
        raise typer.Exit(INTERRUPTED)


def _length(settings: Any, rows: int) -> int:
    if settings.steps is not None:
        return settings.steps
    return settings.epochs


def _row(entry: Mapping[str, Any], keys: list[str]) -> list[str]:
    return [f"{entry[k]:.4g}" if k in entry else "-" for k in keys]


def _render(spec: Spec, session: TrainingSession, outcome: TrainOutcome) -> None:
    console = output.stdout_console()
    s = session.settings
    hyper = " ".join(f"{k} {v:g}" for k, v in s.hyperparameters.items())
    length = f"{s.epochs} epochs" if s.steps is None else f"{s.steps} steps"
    console.print(f"{spec.name}  mode {s.mode}  seed {s.seed}  {s.optimizer}"
                  f"{' ' + hyper if hyper else ''}  {length}  batch {s.batch_size}  "
                  f"{session.data.rows} training rows"
                  + (f"  {_rows(session.data.validation)} validation rows"
                     if session.data.validation is not None else ""))
    keys = session.columns()
    t = output.table("epoch", "step", *(k.replace("validation/main/", "val ")
                                        .replace("main/", "") for k in keys), "time s",
                     console=console)
    for entry in outcome.log:
        t.add_row(str(entry["epoch"]), str(entry["iteration"]), *_row(entry, keys),
                  f"{entry['elapsed_time']:.1f}")
    output.show(console, t)
    if outcome.stopped_early:
        console.print(f"stopped early at epoch {outcome.epoch}: "
                      f"{s.early_stopping['metric']} did not improve for "
                      f"{s.early_stopping['patience']} epochs")
    if outcome.best is not None:
        b = outcome.best
        console.print(f"best {b['metric']} {b['value']:.4g} at epoch {b['epoch']}")


def _rows(arrays: Mapping[str, Any]) -> int:
    return len(next(iter(arrays.values())))


def _document(spec: Spec, session: TrainingSession, outcome: TrainOutcome) -> dict[str, Any]:
    from graphcore.spec.report import SCHEMA_VERSION

    s = session.settings
    log = [{_friendly(k): v for k, v in entry.items()} for entry in outcome.log]
    return {
        "schema_version": SCHEMA_VERSION, "spec": spec.name, "seed": s.seed, "mode": s.mode,
        "optimizer": s.optimizer, "hyperparameters": s.hyperparameters,
        "epochs": s.epochs, "steps": s.steps, "batch_size": s.batch_size,
        "metrics": list(s.metrics), "training_rows": session.data.rows,
        "validation_rows": None if session.data.validation is None
        else _rows(session.data.validation),
        "log": log, "step": outcome.iteration, "epoch": outcome.epoch,
        "interrupted": outcome.interrupted, "stopped_early": outcome.stopped_early,
        "best": outcome.best, "resumed_from": session.resumed_from,
    }


def _friendly(key: str) -> str:
    return key.replace("validation/main/", "validation_").replace("main/", "")


@contextlib.contextmanager
def _progress(total: int, by_epoch: bool, quiet: bool
              ) -> Iterator[Callable[[int, int, float], None] | None]:
    console = output.stderr_console()
    if quiet or not console.is_terminal:
        yield None
        return
    columns = (TextColumn("train"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[unit]}  loss {task.fields[loss]}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("train", total=total, loss="-",
                                 unit="epochs" if by_epoch else "steps")

        def on_step(step: int, epoch: int, loss: float) -> None:
            progress.update(task, completed=epoch if by_epoch else step, loss=f"{loss:.4g}")

        yield on_step
