"""`graphtool train` for specs with `data:`/`train:` sections: a Trainer configured from the
spec (graphcore.commands.train.session), a per-epoch table, the files it writes, Ctrl-C."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import os
import shlex
import stat
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cli import files, output, stdout, workflow
from cli.errors import CANT_CREATE, INTERRUPTED, NO_INPUT, USAGE, CliError
from graphcore import optimizers, serializers
from graphcore.commands.schema import SCHEMA_VERSION
from graphcore.commands.train import run_folders, run_lock
from graphcore.commands.train.batching_choice import ROUNDS, BatchingChoice
from graphcore.commands.train.run_folders import Run
from graphcore.commands.train.session import (
    CHECKPOINT,
    TrainingOptionError,
    TrainingSession,
    TrainOutcome,
    load_spec_data,
    recorded_command,
    settings_for,
)
from graphcore.errors import SerializationError
from graphcore.spec import Spec
from graphcore.training import learning_rate
from graphcore.training.extensions.tensorboard_report import (
    TensorBoardUnavailable,
    require_tensorboardx,
)

DEFAULT_OUT_DIR = "outputs"  # train's --out-dir default


@dataclass
class RunOptions:
    """The options of a ``train`` command that set how it trains (None: not given). A
    checkpoint keeps them, so ``--resume`` continues with them: an option given with
    ``--resume`` replaces the interrupted run's value, one not given is the interrupted run's
    (not the spec's). The length (``--epochs``/``--steps``), ``--mode``, ``--batching``,
    ``--passes`` and ``--tensorboard`` may change on resume; the other options are training
    settings, which must be the run's (else exit 65)."""

    epochs: int | None = None
    steps: int | None = None
    batch_size: int | None = None
    optimizer: str | None = None
    lr: float | None = None
    shuffle: bool | None = None
    seed: int | None = None
    mode: str | None = None
    batching: str | None = None
    passes: list[str] | None = None
    tensorboard: bool | None = None
    schedule: str | None = None  # the command line's form, as given
    warmup: int | None = None
    warmup_start: float | None = None
    weight_decay: float | None = None
    gradient_clipping: float | None = None

    def over(self, recorded: RunOptions) -> RunOptions:
        """These options, each one not given taken from ``recorded``; the length as one
        (``--steps`` given replaces a recorded ``--epochs``, and the other way round)."""
        merged = RunOptions(**{f.name: getattr(self, f.name) if getattr(self, f.name)
                               is not None else getattr(recorded, f.name) for f in fields(self)})
        if self.epochs is not None or self.steps is not None:
            merged.epochs, merged.steps = self.epochs, self.steps
        return merged

    def arguments(self) -> list[str]:
        """The options as command-line arguments."""
        out: list[str] = []
        for flag, value in (("--epochs", self.epochs), ("--steps", self.steps),
                            ("--batch-size", self.batch_size), ("--optimizer", self.optimizer),
                            ("--lr", None if self.lr is None else repr(self.lr)),
                            ("--seed", self.seed), ("--mode", self.mode),
                            ("--batching", self.batching),
                            ("--passes", None if self.passes is None else
                             ",".join(self.passes)),
                            ("--schedule", self.schedule), ("--warmup", self.warmup),
                            *((flag, None if value is None else repr(value)) for flag, value in (
                                ("--warmup-start", self.warmup_start),
                                ("--weight-decay", self.weight_decay),
                                ("--gradient-clipping", self.gradient_clipping)))):
            if value is not None:
                out += [flag, str(value)]
        if self.shuffle is not None:
            out.append("--shuffle" if self.shuffle else "--no-shuffle")
        if self.tensorboard is not None:
            out.append("--tensorboard" if self.tensorboard else "--no-tensorboard")
        return out

    @classmethod
    def recorded(cls, path: Path) -> RunOptions:
        """The options the checkpoint at ``path`` keeps (none given: an empty set)."""
        stored = recorded_command(path).get("options", {})
        kinds = {"epochs": _positive, "steps": _positive, "batch_size": _positive,
                 "optimizer": lambda v: v in optimizers.BY_NAME,
                 "lr": lambda v: isinstance(v, int | float) and not isinstance(v, bool)
                 and math.isfinite(v) and v > 0,
                 "shuffle": lambda v: isinstance(v, bool),
                 "tensorboard": lambda v: isinstance(v, bool),
                 "seed": lambda v: _positive(v) or v == 0,
                 "mode": lambda v: v in ("dynamic", "static"),
                 "batching": lambda v: v in ("auto", "pad", "off"),
                 "passes": lambda v: isinstance(v, list) and all(isinstance(p, str) for p in v),
                 "schedule": _schedule_text, "warmup": lambda v: _positive(v) or v == 0,
                 "warmup_start": _non_negative, "weight_decay": _non_negative,
                 "gradient_clipping": lambda v: _non_negative(v) and v > 0}
        if not isinstance(stored, dict) or not set(stored) <= set(kinds):
            raise SerializationError(f"{path}: graphtool/command: options of another form")
        for key, value in stored.items():
            if value is not None and not kinds[key](value):
                raise SerializationError(f"{path}: graphtool/command: option {key} holds "
                                         f"{value!r}, which it cannot be")
        return cls(**stored)


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _non_negative(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and \
        math.isfinite(value) and value >= 0


def _schedule_text(value: Any) -> bool:
    try:
        learning_rate.parse_schedule(value)
    except (ValueError, AttributeError):
        return False
    return isinstance(value, str)


def train(spec: Spec, overrides: Mapping[str, str], given: RunOptions, *, spec_arg: str,
          inputs_given: list[tuple[str, str]], resume: bool, checkpoint: Path | None,
          params: Path | None, save: str | None, json_out: bool, out_dir: str,
          quiet: bool, run_number: int | None = None) -> None:
    """A new run folder, or with ``resume`` the run continued in its own: ``run_number``'s
    (None: the latest), or ``checkpoint``'s when that is in one of this spec's run folders
    (elsewhere: a new run continues it). ``inputs_given``: the options that changed the spec
    or its data (``--set``, ``--input``, ``--plugin``, ``--data``), for the command line that
    continues the run."""
    if resume and params is not None:
        raise CliError("--params and --resume both set the parameters; give one", USAGE)
    if run_number is not None and checkpoint is not None:
        raise CliError("--run and a CHECKPOINT both name the checkpoint to resume; give one",
                       USAGE)
    try:
        files.check_out_dir(out_dir)
        artifacts = Path(out_dir) / spec.name
        run: Run | None = None  # None: a new run, its folder made once the data is read
        start = None
        options = given
        if resume:
            if checkpoint is None:
                run = workflow.find_run(out_dir, spec.name, run_number, spec_arg)
                start = _checkpoint(run.folder / CHECKPOINT)
            else:
                start = _checkpoint(checkpoint)
                run = _run_holding(start, artifacts)
            options = given.over(RunOptions.recorded(start))
        if options.passes is not None and options.mode != "static":
            raise CliError("--passes applies to --mode static", USAGE)
        if options.tensorboard:
            require_tensorboard()
        settings = settings_for(spec, seed=options.seed, epochs=options.epochs,
                                steps=options.steps, batch_size=options.batch_size,
                                optimizer=options.optimizer, lr=options.lr,
                                shuffle=options.shuffle, mode=options.mode or "dynamic",
                                schedule=options.schedule, warmup=options.warmup,
                                warmup_start=options.warmup_start,
                                weight_decay=options.weight_decay,
                                gradient_clipping=options.gradient_clipping)
        data = load_spec_data(spec, settings.seed, overrides)
        command = _command_line(spec_arg, options, inputs_given, out_dir, save)
        total = _length(settings, data.rows)
        made = workflow.new_run(out_dir, spec.name) if run is None else None
        run = made or run
        folder = run.folder
        with workflow.kept_if_used(made), _locked(folder):
            rows = None if json_out else _EpochRows.to_stdout()
            with _progress(total, settings.steps is None, quiet) as on_step:
                lines = None if on_step is not None or quiet or rows is not None else \
                    _EpochLines(total if settings.steps is None else None)
                session = TrainingSession(
                    spec, settings, data, folder, writer=files.write_bytes, on_step=on_step,
                    passes=options.passes, batching=options.batching,
                    on_batching=lambda c: _say_batching(c, quiet),
                    on_epoch=(rows or lines or _Ignore()).epoch,
                    command={"options": dataclasses.asdict(options), "command_line": command},
                    tensorboard=bool(options.tensorboard))
                if params is not None:
                    workflow.load_params(params, session.model)
                    session.keep_data_state(params)
                if start is not None:
                    session.resume(start)
                for note in session.notes:
                    output.note(f"note: {note}", quiet)
                if rows is not None:
                    rows.start(_title(spec, session), session.columns())
                with workflow.stop_on_signals(session), _writing(folder):
                    outcome = session.run()
                    written = list(outcome.written)
                    if save is not None and not outcome.interrupted:
                        with session.whole_files():
                            buffer = io.BytesIO()
                            serializers.save_npz(buffer, session.model)
                            written.append(files.write_bytes(save, buffer.getvalue()))
    except TrainingOptionError as e:
        raise CliError(str(e), USAGE, at=e.loc) from None
    if json_out:
        output.emit_json(_document(spec, session, outcome, run))
    else:
        _render(spec, session, outcome, streamed=rows is not None)
    output.wrote(written, quiet)
    if outcome.interrupted:
        kept = "" if save is None else f"; not written: {save} (--save is written when the run " \
            "finishes)"
        output.note(f"interrupted at step {outcome.iteration} (epoch {outcome.epoch}); "
                    f"checkpoint: {folder / CHECKPOINT}{kept}; continue with: {command} "
                    f"--resume --run {run.number}", quiet=False)
        raise typer.Exit(INTERRUPTED)


def require_tensorboard() -> None:
    """``--tensorboard`` without the optional extra installed is a usage error, said before
    anything is trained."""
    try:
        require_tensorboardx()
    except TensorBoardUnavailable as e:
        raise CliError(f"--tensorboard: {e}", USAGE,
                       hint="pip install -e '.[tensorboard]' (the tensorboardX package)") \
            from None


def _run_holding(checkpoint: Path, artifacts: Path) -> Run | None:
    """The run of this spec whose folder holds ``checkpoint`` (None: it is kept elsewhere)."""
    folder = checkpoint.resolve().parent
    runs = run_folders.runs_folder(artifacts)
    with contextlib.suppress(OSError):
        if folder.parent == runs.resolve() and folder.name.isdigit() and \
                int(folder.name) in run_folders.run_numbers(runs):
            return Run(int(folder.name), runs / folder.name)
    return None


def _checkpoint(path: Path) -> Path:
    """The checkpoint to resume from, refused at once (66) unless a readable file."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(2, "no checkpoint to resume from", str(path)) from None
    except OSError as e:
        raise CliError(f"cannot read checkpoint {path}: {e.strerror}", NO_INPUT) from None
    if stat.S_ISDIR(mode):
        raise CliError(f"checkpoint {path} is a folder, not a checkpoint file", NO_INPUT,
                       hint=f"name the file in it, e.g. {Path(path) / CHECKPOINT}")
    if not stat.S_ISREG(mode):
        raise CliError(f"checkpoint {path} is not a regular file (a FIFO, a device or a "
                       "socket); a checkpoint is read from a file", NO_INPUT)
    return Path(path)


def _command_line(spec_arg: str, options: RunOptions, inputs_given: list[tuple[str, str]],
                  out_dir: str, save: str | None) -> str:
    """The ``graphtool train`` command that runs this training, shell-quoted."""
    words = ["graphtool", "train", spec_arg, *options.arguments()]
    for flag, value in inputs_given:
        words += [flag, value]
    if os.fspath(out_dir) != DEFAULT_OUT_DIR:
        words += ["--out-dir", os.fspath(out_dir)]
    if save is not None:
        words += ["--save", save]
    return shlex.join(words)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """The run folder locked for this run (exit 73 while another run holds it)."""
    try:
        with run_lock.locked(folder):
            yield
    except run_lock.RunFolderBusy as e:
        raise CliError(str(e), CANT_CREATE, hint="wait for it to end; `train` without "
                       "--resume starts a run of its own") from None
    except OSError as e:
        if e.filename is None or Path(e.filename).name != run_lock.LOCK_FILE:
            raise
        raise files.output_error(e.filename, e) from None


@contextlib.contextmanager
def _writing(folder: Path) -> Iterator[None]:
    """A file of the run folder that cannot be written (train.csv appended) is exit 73/74."""
    try:
        yield
    except OSError as e:
        if isinstance(e, FileNotFoundError) or e.filename is None:
            raise
        raise files.output_error(e.filename, e) from None


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
    extras = [f"schedule {learning_rate.describe(s.schedule)}" if s.schedule else "",
              f"warmup {s.warmup}" if s.warmup else "",
              f"weight decay {s.weight_decay:g}" if s.weight_decay else "",
              f"clipping {s.gradient_clipping:g}" if s.gradient_clipping else ""]
    hyper = " ".join(filter(None, [hyper, *extras]))
    return (f"{spec.name}  mode {s.mode}  seed {s.seed}  {s.optimizer}"
            f"{' ' + hyper if hyper else ''}  {length}  batch {s.batch_size}  "
            f"{session.data.rows} training rows"
            + (f"  {_rows(session.data.validation)} validation rows"
               if session.data.validation is not None else "")
            + (f"  {_rows(session.data.test)} test rows"
               if session.data.test is not None else ""))


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
    if outcome.test is not None:
        console.print(f"test: {outcome.test['rows']} rows, {outcome.test['params']} "
                      "parameters")
        show_evaluation(console, outcome.test)
    console.file.flush()


def show_evaluation(console: Any, figures: Mapping[str, Any]) -> None:
    """An evaluation's figures (``Evaluation.to_dict()``): the loss and each metric, then each
    class's precision, recall and F1 and the confusion matrix (rows the true classes) where
    they were computed."""
    t = output.table("metric", "value", console=console)
    for name, value in figures.items():
        if name not in ("rows", "params", "per_class", "confusion"):
            t.add_row(name, f"{value:.6g}")
    output.show(console, t)
    per_class = figures.get("per_class")
    if per_class:
        output.show_columns(console, ["class", "precision", "recall", "f1", "support"],
                            [[c["name"], f"{c['precision']:.4g}", f"{c['recall']:.4g}",
                              f"{c['f1']:.4g}", str(c["support"])] for c in per_class])
    confusion = figures.get("confusion")
    if confusion:
        names = confusion["classes"]
        output.show_columns(console, ["true \\ predicted", *names],
                            [[name, *map(str, row)]
                             for name, row in zip(names, confusion["matrix"], strict=True)],
                            title="confusion matrix (rows: true class, columns: predicted)")


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


def _document(spec: Spec, session: TrainingSession, outcome: TrainOutcome,
              run: Run) -> dict[str, Any]:
    s = session.settings
    log = [{_friendly(k): v for k, v in entry.items()} for entry in outcome.log]
    return {
        "schema_version": SCHEMA_VERSION, "spec": spec.name, "run": run.number,
        "run_folder": str(run.folder), "seed": s.seed, "mode": s.mode,
        "optimizer": s.optimizer, "hyperparameters": s.hyperparameters,
        "schedule": s.schedule, "warmup": s.warmup, "warmup_start": s.warmup_start,
        "weight_decay": s.weight_decay, "gradient_clipping": s.gradient_clipping,
        "epochs": s.epochs, "steps": s.steps, "batch_size": s.batch_size,
        "metrics": list(s.metrics), "training_rows": session.data.rows,
        "validation_rows": None if session.data.validation is None
        else _rows(session.data.validation),
        "test_rows": None if session.data.test is None else _rows(session.data.test),
        "test": outcome.test,
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
