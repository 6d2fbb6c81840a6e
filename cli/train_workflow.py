"""`graphtool train` for specs with `data:`/`train:` sections: a Trainer configured from the
spec (graphcore.training.from_spec), a per-epoch table, the files it writes, Ctrl-C."""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cli import files, output, stdout, workflow
from cli.errors import INTERRUPTED, USAGE, CliError
from graphcore import serializers
from graphcore.spec import Spec
from graphcore.training.batching_choice import ROUNDS, BatchingChoice
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
          quiet: bool, batching: str | None = None) -> None:
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
        rows = None if json_out else _EpochRows.to_stdout()
        with _progress(total, settings.steps is None, quiet) as on_step:
            lines = None if on_step is not None or quiet or rows is not None else \
                _EpochLines(total if settings.steps is None else None)
            session = TrainingSession(spec, settings, data, folder, writer=files.write_bytes,
                                      on_step=on_step, passes=passes, batching=batching,
                                      on_batching=lambda c: _say_batching(c, quiet),
                                      on_epoch=(rows or lines or _Ignore()).epoch)
            if rows is not None:
                rows.start(_title(spec, session), session.columns())
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
        _render(spec, session, outcome, streamed=rows is not None)
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


def _cells(entry: Mapping[str, Any], keys: list[str]) -> list[str]:
    return [str(entry["epoch"]), str(entry["iteration"]),
            *(f"{entry[k]:.4g}" if k in entry else "-" for k in keys),
            f"{entry['elapsed_time']:.1f}"]


def _headers(keys: list[str]) -> list[str]:
    return ["epoch", "step", *(k.replace("validation/main/", "val ").replace("main/", "")
                               for k in keys), "time s"]


def _title(spec: Spec, session: TrainingSession) -> str:
    s = session.settings
    hyper = " ".join(f"{k} {v:g}" for k, v in s.hyperparameters.items())
    length = f"{s.epochs} epochs" if s.steps is None else f"{s.steps} steps"
    return (f"{spec.name}  mode {s.mode}  seed {s.seed}  {s.optimizer}"
            f"{' ' + hyper if hyper else ''}  {length}  batch {s.batch_size}  "
            f"{session.data.rows} training rows"
            + (f"  {_rows(session.data.validation)} validation rows"
               if session.data.validation is not None else ""))


def _render(spec: Spec, session: TrainingSession, outcome: TrainOutcome,
            streamed: bool = False) -> None:
    """The run's title and epoch table (unless its rows were printed as the epochs ended),
    then how it ended. On a terminal narrower than the table, its columns are split over
    several tables, each with the epoch and step: numbers are never cut."""
    console = output.stdout_console()
    s = session.settings
    if not streamed:
        console.print(_title(spec, session))
        keys = session.columns()
        output.show_columns(console, _headers(keys), [_cells(e, keys) for e in outcome.log],
                            keep=2)
    if outcome.stopped_early:
        console.print(f"stopped early at epoch {outcome.epoch}: "
                      f"{s.early_stopping['metric']} did not improve for "
                      f"{s.early_stopping['patience']} epochs")
    if outcome.best is not None:
        b = outcome.best
        console.print(f"best {b['metric']} {b['value']:.4g} at epoch {b['epoch']}")
    console.file.flush()


class _EpochRows:
    """The epoch table printed row by row, each flushed as its epoch ends, where stdout is not
    a terminal (a pipe, `| tee log`, a CI log): columns of fixed widths, so the rows line up
    without knowing the numbers to come."""

    NUMBER = 10  # the widest `.4g`: -1.234e-05

    def __init__(self, file: Any) -> None:
        self.file = file
        self.keys: list[str] = []
        self.widths: list[int] = []

    @classmethod
    def to_stdout(cls) -> _EpochRows | None:
        """Rows for stdout where it is not a terminal, let through as they come (made before
        a progress bar on a terminal's stderr takes ``sys.stdout`` over)."""
        if output.stdout_console().is_terminal:
            return None
        stdout.stream_through()
        return cls(sys.stdout)

    def start(self, title: str, keys: list[str]) -> None:
        self.keys = keys
        headers = _headers(keys)
        self.widths = [max(len(h), 5 if i < 2 else self.NUMBER) for i, h in enumerate(headers)]
        self._write(title)
        self._write(self._line(headers))

    def epoch(self, entry: Mapping[str, Any]) -> None:
        self._write(self._line(_cells(entry, self.keys)))

    def _line(self, cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, self.widths, strict=True)).rstrip()

    def _write(self, line: str) -> None:
        self.file.write(line + "\n")
        self.file.flush()


class _EpochLines:
    """Where stderr is not a terminal (no progress bar) and stdout is, or carries --json: a
    flushed line on stderr per epoch, so a log shows the run advancing."""

    def __init__(self, epochs: int | None) -> None:
        self.epochs = epochs

    def epoch(self, entry: Mapping[str, Any]) -> None:
        of = f"/{self.epochs}" if self.epochs else ""
        values = "  ".join(f"{_friendly(k).replace('_', ' ')} {v:.4g}"
                           for k, v in entry.items()
                           if k.startswith(("main/", "validation/")))
        output.note(f"epoch {entry['epoch']}{of}  step {entry['iteration']}  {values}  "
                    f"{entry['elapsed_time']:.1f} s")


class _Ignore:
    def epoch(self, entry: Mapping[str, Any]) -> None:
        pass


def _say_batching(choice: BatchingChoice, quiet: bool) -> None:
    """On stderr: which batching the steps use and why, where there was a choice."""
    line = batching_sentence(choice)
    if line is not None:
        output.note(line, quiet)


def batching_sentence(choice: BatchingChoice) -> str | None:
    """What ``train`` says of its batching (None: nothing worth a line)."""
    used, reason = choice.batching, choice.reason
    if choice.how == "measured":
        times = ", ".join(f"{k} {v:.3g}" for k, v in choice.step_ms.items())
        return (f"batching {used}: the fastest of those measured on steps 1-{ROUNDS} (median "
                f"ms per step of steps 2-{ROUNDS}: {times}); --batching names one instead")
    if choice.how == "resumed":
        return f"batching {used}: as measured when this run began (kept in the checkpoint)"
    if choice.how == "only":
        return f"batching off: one example at a time, the only way here: {reason}"
    if choice.how == "short":
        return f"batching off: {reason}; --batching names one"
    if choice.how == "given" and reason is not None:
        if used == "pad" and choice.left_out.get("auto") is None:
            return output.pad_warning(reason)
        return f"batching {used}: one example at a time: {reason}"
    return None


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
        "batching": None if session.batching is None else session.batching.to_dict(),
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
