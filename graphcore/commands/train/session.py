"""A spec's training loop: a ``Trainer`` configured from the spec's ``data:``, ``validation:``
and ``train:`` sections (and the caller's overrides), plus the evaluation and prediction the
``evaluate`` and ``predict`` commands run.

>>> settings = settings_for(spec, epochs=5)
>>> data = load_spec_data(spec, settings.seed)
>>> session = TrainingSession(spec, settings, data, out_dir="outputs/digits_mlp")
>>> outcome = session.run()          # train.csv, curves.png, checkpoint.npz, best.npz
>>> evaluate_arrays(spec, session.model, data.validation, batch_size=256)

Each step takes a batch from a ``SerialIterator`` over the data-fed inputs (inputs not fed by
data are passed whole to every step), runs the spec forward and backward (define-by-run, or
one compiled plan per batch shape in static mode) and updates the parameters. Every epoch the
validation data is evaluated in evaluation mode (``config.train`` off: no dropout, batch
normalization's running statistics). ``request_stop()`` (the CLI's Ctrl-C) ends the loop
after the current step, so a checkpoint always holds a state between two steps; resuming from
it continues exactly as an uninterrupted run (the batches, dropout masks and optimizer state
are all restored).

Per-example runs (sequences, ``examples``) are batched as ``batching`` says; with None, the
steps measure the batchings that apply on the first steps and keep the fastest
(``batching_choice``); ``session.batching`` says what the steps use and why once it is known,
and ``on_batching(choice)`` is told then. ``on_epoch(entry)`` gets each epoch's log entry as
the epoch ends. ``tensorboard=True`` also writes every log entry (``train.csv``'s rows) as
TensorBoard scalars in ``out_dir/tensorboard/`` (``TensorBoardReport``: the optional
``tensorboardX`` package).

Metrics: ``accuracy``, ``mse`` and ``mae`` are reported every step (their epoch figure, the
mean over the epoch's steps); ``precision``, ``recall``, ``f1``, ``auc`` and ``r2`` once per
epoch, computed from the predictions of every step of the epoch (a checkpoint keeps those
gathered so far); validation figures are over every validation row, with the epoch's final
parameters. When the loop ends (not interrupted), the ``test:`` rows are evaluated once with the
parameters of ``best.npz`` (with validation data; without, the final parameters), as
``outcome.test`` and ``test.json``; with the ``confusion`` metric, ``confusion.png`` draws the
confusion matrix of the validation rows with those same parameters (without validation data:
of the training rows with the final parameters).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from graphcore import errors, optimizers, serializers
from graphcore.batching.batcher import check_mode
from graphcore.batching.run import run_spec
from graphcore.commands.train import checkpoint
from graphcore.commands.train.batching_choice import (
    ROUNDS,
    BatchingChoice,
    MeasuredRuns,
    candidates,
)
from graphcore.commands.train.checkpoint import recorded_command  # noqa: F401  (the API)
from graphcore.commands.train.data import (  # noqa: F401  (the API documented above)
    SpecData,
    batched_inputs,
    batches,
    check_labels,
    collate,
    evaluate_arrays,
    evaluation,
    load_spec_data,
    metric_value,
    predict_arrays,
)
from graphcore.commands.train.metrics import (
    COLLECTED_METRICS,
    SCALAR_METRICS,
    SUM_METRICS,
    MetricCollector,
    MetricError,
    higher_is_better,
)
from graphcore.commands.train.run_identity import RunIdentity
from graphcore.commands.train.settings import (  # noqa: F401  (the API documented above)
    BEST,
    CHECKPOINT,
    CONFUSION,
    CSV_LOG,
    CURVES,
    DEFAULT_BATCH_SIZE,
    DEFAULT_EPOCHS,
    TEST_REPORT,
    TrainingOptionError,
    TrainSettings,
    add_gradient_hooks,
    make_optimizer,
    settings_for,
)
from graphcore.commands.train.train_log import TrainLog
from graphcore.datasets import DictDataset
from graphcore.interpreter.parameters import SpecModel, build_model
from graphcore.interpreter.params_file import load_params
from graphcore.iterators import SerialIterator
from graphcore.language.syntax import Spec
from graphcore.reporter import report
from graphcore.serialization import Saver, serialize_random_state
from graphcore.spec_static.runner import StaticSpecRunner
from graphcore.training import extension as ext
from graphcore.training import learning_rate
from graphcore.training.extensions.log_report import LogReport
from graphcore.training.extensions.plot_report import render_matrix, render_panels
from graphcore.training.extensions.tensorboard_report import TensorBoardReport
from graphcore.training.extensions.writer import Writer, write_atomic
from graphcore.training.trainer import Trainer
from graphcore.training.triggers import EarlyStoppingTrigger, IntervalTrigger
from graphcore.training.updaters import StandardUpdater

Array = np.ndarray | list[np.ndarray]
TENSORBOARD = "tensorboard"  # the folder of a run's event files (``tensorboard=True``)


# ----------------------------------------------------------------------------- training

@dataclass
class TrainOutcome:
    log: list[dict[str, Any]]
    iteration: int
    epoch: int
    interrupted: bool
    stopped_early: bool
    best: dict[str, Any] | None
    written: list[str]
    notes: list[str] = field(default_factory=list)
    # the test rows' evaluation (``Evaluation.to_dict()`` with ``rows`` and ``params``)
    test: dict[str, Any] | None = None


def _friendly(key: str) -> str:
    """``main/loss`` -> ``loss``; ``validation/main/accuracy`` -> ``validation_accuracy``."""
    return key.replace("validation/main/", "validation_").replace("main/", "")


def _observed(metric: str) -> str:
    return ("validation/main/" + metric[len("validation_"):] if metric.startswith("validation_")
            else "main/" + metric)


class _StoppableTrigger:
    """The stop trigger, plus a request to stop after the current step (Ctrl-C), and the
    interruptions held back while a file is being made (see ``TrainingSession.interrupt``)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.requested = False
        self.writing = 0
        self.held: BaseException | None = None

    @contextlib.contextmanager
    def whole(self) -> Iterator[None]:
        self.writing += 1
        try:
            yield
        finally:
            self.writing -= 1
            if not self.writing and self.held is not None:
                held, self.held = self.held, None
                raise held

    def interrupt(self, exc: BaseException) -> None:
        if not self.writing:
            raise exc
        if self.held is None:
            self.held = exc

    def __call__(self, trainer: Any) -> bool:
        return self.requested or self.inner(trainer)

    def get_training_length(self) -> Any:
        return self.inner.get_training_length()

    def serialize(self, serializer: Any) -> None:
        self.inner.serialize(serializer)


class _SpecUpdater(StandardUpdater):
    """``rate``: the optimizer's learning-rate hyperparameter, reported as ``lr`` with each
    step (the value the step used), or None."""

    def __init__(self, iterator: Any, optimizer: Any, converter: Callable, run: Callable,
                 seed: int, metrics: tuple[str, ...], report_metrics: bool,
                 loss_op: str | None = None, rate: str | None = None) -> None:
        super().__init__(iterator, optimizer, converter=converter)
        self.run = run
        self.seed = seed
        self.metrics = tuple(m for m in metrics if m in SUM_METRICS)
        self.report_metrics = report_metrics
        self.loss_op = loss_op
        # the metrics computed from every step's predictions of an epoch, reported as it ends
        self.collected = tuple(m for m in metrics if m in COLLECTED_METRICS)
        self.epoch_metrics = MetricCollector(self.collected, loss_op)
        self.rate = rate
        self.last_rate: float | None = None
        # keep_last: the latest step's RunResult is kept (for its ``batching``) until the next
        # step ends; off by default, so a step's graph is not alive while the next one runs
        self.keep_last = False
        self.last_result: Any = None

    def update_core(self) -> None:
        iterator = self._iterators["main"]
        optimizer = self._optimizers["main"]
        inputs = self.converter(iterator.next())
        step = self.iteration + 1
        rate = None if self.rate is None else float(getattr(optimizer.hyperparam, self.rate))
        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                result = self.run(inputs, seed=self.seed + self.iteration)
        except errors.SpecRuntimeError as e:
            raise errors.SpecRuntimeError(f"training step {step}: {e.message}", e.file, e.line,
                                          e.col, e.source_line, e.length) from None
        optimizer.update()
        if self.keep_last:
            self.last_result = result
        values = {"loss": float(result.loss)}
        if rate is not None:
            values["lr"] = rate
            self.last_rate = rate
        if self.report_metrics:
            for m in self.metrics:
                total, count = metric_value(m, result.loss_inputs, self.loss_op)
                if count:
                    values[m] = total / count
            if self.collected:
                try:
                    self.epoch_metrics.add(result.loss_inputs)
                except MetricError as e:
                    raise TrainingOptionError(str(e)) from None
                if iterator.is_new_epoch:
                    values.update(self.epoch_metrics.values())
                    self.epoch_metrics = MetricCollector(self.collected, self.loss_op)
        report(values, optimizer.target)
        if iterator.is_new_epoch:
            optimizer.new_epoch()

    def serialize(self, serializer: Any) -> None:
        super().serialize(serializer)
        if not self.collected:
            return
        inner = serializer["epoch_metrics"]
        if isinstance(serializer, Saver):
            for key, value in self.epoch_metrics.state().items():
                inner(key, value)
            return
        keys = ("classes", *(f"sum_{m}" for m in self.epoch_metrics.sums),
                *self.epoch_metrics.parts)
        state = {key: value for key in keys if (value := inner(key, None)) is not None}
        try:
            self.epoch_metrics.restore(state)
        except MetricError as e:
            raise errors.SerializationError(f"{inner.path}: {e}") from None


class _SpecEvaluator(ext.Extension):
    trigger = 1, "epoch"
    priority = ext.PRIORITY_WRITER
    default_name = "validation"

    def __init__(self, session: TrainingSession) -> None:
        self.session = session

    def __call__(self, trainer: Any) -> None:
        s = self.session
        result = evaluate_arrays(s.spec, s.model, s.data.validation, s.data.shared,
                                 s.evaluation_batch_size, s.scalar_metrics,
                                 s.settings.seed, s.evaluation_batching)
        report({f"validation/main/{k}": v for k, v in result.items()})


class _Files(ext.Extension):
    """After each log entry: its row appended to ``train.csv``, and ``best.npz`` (parameters
    at the best value of the watched metric so far). ``curves.png`` is drawn once, when the
    loop ends (drawing takes longer than an epoch of a small model)."""

    trigger = 1, "iteration"
    priority = 50  # after LogReport (a reader, 100)

    def __init__(self, session: TrainingSession) -> None:
        self.session = session
        self.seen = 0
        self.seen_steps = 0
        self.best_value: float | None = None
        self.best_epoch = 0
        self.best_bytes: bytes | None = None  # best.npz's contents, where no file is kept

    def __call__(self, trainer: Any) -> None:
        with self.session.whole_files():
            self._write()

    def _write(self) -> None:
        s = self.session
        log = s.epoch_log.log
        steps = [] if s.step_log is None else s.step_log.log
        if len(log) == self.seen and len(steps) == self.seen_steps:
            return
        rows = [("step", e) for e in steps[self.seen_steps:]]
        rows += [("epoch", e) for e in log[self.seen:]]
        self.seen_steps = len(steps)
        s.log_file.append(rows)
        if len(log) > self.seen:
            entry = log[-1]
            self.seen = len(log)
            value = entry.get(s.watch)
            if value is not None and np.isfinite(value) and (
                    self.best_value is None or s.better(value, self.best_value)):
                self.best_value, self.best_epoch = float(value), int(entry["epoch"])
                if s.keeps_files:  # compressing the parameters takes a while: not to discard
                    s.write(s.out / BEST, _model_bytes(s.model))
                elif s.data.test is not None:  # the test rows are evaluated with them
                    self.best_bytes = _model_bytes(s.model)
            if s.on_epoch is not None:
                s.on_epoch(dict(entry))

    def finalize(self) -> None:
        self.session.log_file.close()

    def serialize(self, serializer: Any) -> None:
        best = serializer("best_value", np.nan if self.best_value is None else self.best_value)
        self.best_value = None if np.isnan(best) else float(best)
        self.best_epoch = serializer("best_epoch", self.best_epoch)


class _TensorBoard(TensorBoardReport):
    """The log entries as TensorBoard scalars in ``out/tensorboard/``, named as ``train.csv``'s
    columns (``epoch/validation_loss``); an interruption waits until a record is whole."""

    def __init__(self, session: TrainingSession, reports: dict[str, LogReport]) -> None:
        super().__init__(session.out / TENSORBOARD, reports, name=_friendly)
        self.session = session

    def __call__(self, trainer: Any) -> None:
        with self.session.whole_files():
            super().__call__(trainer)


class _SessionLog(LogReport):
    """A ``LogReport`` whose entries a checkpoint does not hold: they are ``train.csv``'s
    rows, read back from there on resume (so a checkpoint's size does not grow with them)."""

    def serialize(self, serializer: Any) -> None:
        if hasattr(self._trigger, "serialize"):
            self._trigger.serialize(serializer["_trigger"])
        self._summary.serialize(serializer["_summary"])


class _Checkpoint(ext.Extension):
    priority = ext.PRIORITY_SNAPSHOT

    def __init__(self, session: TrainingSession, every: int) -> None:
        self.session = session
        self.trigger = (every, "epoch")

    def __call__(self, trainer: Any) -> None:
        self.session.save_checkpoint()


def _finite(value: Any) -> Any:
    """``value`` as JSON data, NaN and infinities (which JSON lacks) as null."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _mode(metric: str, mode: str) -> str:
    """Early stopping's ``mode``, ``auto`` resolved: max where higher is better."""
    if mode != "auto":
        return mode
    return "max" if higher_is_better(metric) else "min"


def _model_bytes(model: SpecModel) -> bytes:
    buffer = io.BytesIO()
    serializers.save_npz(buffer, model)
    return buffer.getvalue()


class TrainingSession:
    """One training run of a spec (see the module docstring)."""

    def __init__(self, spec: Spec, settings: TrainSettings, data: SpecData,
                 out_dir: str | Path, writer: Writer | None = None,
                 initial_params: str | Path | None = None,
                 on_step: Callable[[int, int, float], None] | None = None,
                 passes: list[str] | None = None, batching: str | None = None,
                 on_batching: Callable[[BatchingChoice], None] | None = None,
                 on_epoch: Callable[[dict[str, Any]], None] | None = None,
                 files: bool = True, command: Mapping[str, Any] | None = None,
                 tensorboard: bool = False) -> None:
        if batching is not None:
            check_mode("TrainingSession", batching)
        if spec.loss is None:
            raise TrainingOptionError(f"spec '{spec.name}' has no loss, so there is nothing "
                                      "to train; add one, e.g. `loss: {op: sum}`")
        if settings.batch_size > data.rows:
            raise TrainingOptionError(f"batch size {settings.batch_size} is larger than the "
                                      f"training data ({data.rows} rows)")
        watched = (settings.early_stopping or {}).get("metric", "")
        if watched.startswith("validation_") and data.validation is None:
            raise TrainingOptionError(f"early stopping watches {watched}, but the spec has "
                                      "no validation data; add `validation:` (a fraction or "
                                      "a file) or watch a training metric")
        plateau = (settings.schedule or {}).get("metric") or ""
        if plateau.startswith("validation_") and data.validation is None:
            raise TrainingOptionError(f"schedule plateau watches {plateau}, but the spec has "
                                      "no validation data; add `validation:` (a fraction or "
                                      "a file) or watch a training metric")
        self.spec, self.settings, self.data = spec, settings, data
        self.static_runners: dict[str, Any] = {}
        self.out = Path(out_dir)
        self.keeps_files = files
        self.writer = (writer or write_atomic) if files else _discard
        self.command = None if command is None else dict(command)
        self.identity = RunIdentity.of(spec, data)
        self.notes: list[str] = []
        self.model = build_model(spec, settings.seed)
        if self.model.preprocessing is not None:  # fitted on the training rows
            self.model.preprocessing.load_state(data.state)
        if initial_params is not None:  # checked against the spec's shapes, as --params is
            load_params(initial_params, self.model)
            self.keep_data_state(initial_params)
        check_labels(spec, self.model, data)
        self.optimizer = make_optimizer(settings)
        self.optimizer.setup(self.model)
        add_gradient_hooks(self.optimizer, settings)
        self.rate = optimizers.learning_rate_keyword(settings.optimizer)
        sequences = frozenset(k for k, v in data.train.items() if isinstance(v, list))
        # nothing batched (inputs without an axis): every step takes the shared inputs whole
        dataset = DictDataset(**data.train) if data.train else [{}]
        rng = np.random.RandomState(settings.seed)
        order = None if not settings.shuffle else _Sampler(rng)
        iterator = SerialIterator(dataset, settings.batch_size, shuffle=None if order else False,
                                  order_sampler=order)
        self.passes, self.on_batching, self.on_epoch = passes, on_batching, on_epoch
        # evaluation mode draws no randomness, so batches where training may not: a batching
        # the caller names holds for it too, the measured one is training's own
        self.evaluation_batching = batching or "auto"
        run = self._runs(batching)
        self.scalar_metrics = tuple(m for m in settings.metrics if m in SCALAR_METRICS)
        self.evaluation_batch_size = max(settings.batch_size, 256)
        updater = _SpecUpdater(iterator, self.optimizer,
                               lambda batch: collate(batch, data.shared, sequences), run,
                               settings.seed, settings.metrics, True, spec.loss.op, self.rate)
        self.stop = _StoppableTrigger(self._stop_trigger())
        self.trainer = Trainer(updater, self.stop, out=str(self.out))
        schedule = self._schedule()
        if schedule is not None:
            self.trainer.extend(schedule, name="LearningRateSchedule")
        if data.validation is not None:
            self.trainer.extend(_SpecEvaluator(self))
        self.epoch_log = _SessionLog(filename=None, postprocess=self._last_rate)
        self.trainer.extend(self.epoch_log, name="LogReport")
        self.step_log = None
        if settings.log_every:
            self.step_log = _SessionLog(trigger=(settings.log_every, "iteration"),
                                        filename=None, postprocess=self._last_rate)
            self.trainer.extend(self.step_log, name="StepLog")
        self.log_file = TrainLog(self.out / CSV_LOG if files else None, self.columns(),
                                 _friendly, self.writer)
        self.watch = self._watched_metric()
        self.files = _Files(self)
        self.trainer.extend(self.files)
        if tensorboard and files:
            reports = {"epoch": self.epoch_log}
            if self.step_log is not None:
                reports["step"] = self.step_log
            # a trigger without state: a checkpoint does not depend on whether a run logs
            self.trainer.extend(_TensorBoard(self, reports), name="TensorBoard",
                                trigger=_every_step)
        if settings.checkpoint_every is not None:  # None: only on request_stop()
            self.trainer.extend(_Checkpoint(self, settings.checkpoint_every))
        if on_step is not None:
            def progress(trainer: Any) -> None:
                loss = trainer.observation.get("main/loss")
                on_step(trainer.updater.iteration, trainer.updater.epoch,
                        float("nan") if loss is None else float(loss))
            # a trigger without state: a checkpoint does not depend on a progress bar
            self.trainer.extend(progress, name="progress", trigger=_every_step)
        self.resumed_from: str | None = None

    def keep_data_state(self, params: str | os.PathLike[str]) -> None:
        """After loading initial parameters (``params``): the training rows' own state is
        the model's (their rows were encoded and are normalized with it); a vocabulary the
        file holds that differs is refused, since its class indices would change meaning."""
        preprocessing = self.model.preprocessing
        if preprocessing is None:
            return
        loaded = preprocessing.state()
        for name, values in self.data.state.items():
            given = loaded.get(name, {}).get("classes")
            own = values.get("classes")
            if given is not None and own is not None and given.tolist() != own.tolist():
                raise TrainingOptionError(
                    f"--params {os.fspath(params)} was trained with classes "
                    f"{', '.join(given.tolist()[:8])} of input '{name}', but the training "
                    f"rows give {', '.join(own.tolist()[:8])}; the class indices would change "
                    "meaning", self.spec.inputs[name].loc)
        preprocessing.load_state(self.data.state)

    def _runs(self, batching: str | None) -> Callable:
        """The steps' run, ``(inputs, seed) -> RunResult``, per-example runs batched as
        ``batching`` says, or as ``batching_choice`` chooses (None); ``self.batching`` is the
        choice once it is known (a measured one after its first steps)."""
        names, left_out = candidates(self.spec, self.data.train)
        self.batching: BatchingChoice | None = None
        if batching is not None:
            reason = left_out.get(batching) if batching != "off" else None
            self.batching = BatchingChoice(batching, "given", reason, left_out=left_out)
            return self._run_for(batching)
        if not names:
            self.batching = BatchingChoice(None, "none", "the spec has no per-example runs")
            return self._run_for("off")
        if len(names) == 1:
            self.batching = BatchingChoice(names[0], "only", left_out.get("auto"),
                                           left_out=left_out)
            return self._run_for(names[0])
        if self._total_steps() < 2 * ROUNDS:
            self.batching = BatchingChoice("off", "short", f"{self._total_steps()} steps are "
                                           f"too few to measure (fewer than {2 * ROUNDS})",
                                           left_out=left_out)
            return self._run_for("off")
        return MeasuredRuns(self._run_for, names, left_out, self.model, self._chosen)

    def _chosen(self, choice: BatchingChoice) -> None:
        self.batching = choice
        # the other candidates' plans are not replayed again
        self.static_runners = {k: r for k, r in self.static_runners.items()
                               if k == choice.batching}
        if self.on_batching is not None:
            self.on_batching(choice)

    def _run_for(self, batching: str) -> _StepRun:
        """One step's run with ``batching``: define-by-run, or its own ``StaticSpecRunner``
        (its plan cache) in static mode."""
        runner = None
        if self.settings.mode == "static":
            runner = StaticSpecRunner(self.spec, self.model, passes=self.passes,
                                      loss_inputs=bool(self.settings.metrics))
            self.static_runners[batching] = runner
        return _StepRun(self.spec, self.model, batching, runner)

    def _last_rate(self, entry: dict[str, Any]) -> None:
        """A log entry's ``lr`` is its last step's learning rate, not the mean of its steps':
        with a schedule per epoch, exactly the epoch's."""
        rate = self.trainer.updater.last_rate
        if rate is not None:
            entry["main/lr"] = rate

    def _schedule(self) -> learning_rate.LearningRateSchedule | None:
        """The settings' warm-up and learning-rate schedule as one extension (None: the
        rate stays the optimizer's)."""
        s = self.settings
        if s.schedule is None and s.warmup is None:
            return None
        per = (s.schedule or {}).get("per", "epoch")
        length = self._total_steps() if per == "iteration" else self._total_epochs()
        metric = (s.schedule or {}).get("metric") or (
            "validation_loss" if self.data.validation is not None else "loss")
        mode = _mode(metric, (s.schedule or {}).get("mode", "auto"))
        try:
            return learning_rate.LearningRateSchedule(
                self.rate, s.learning_rate, s.schedule, s.warmup or 0, s.warmup_start,
                length, _observed(metric), mode)
        except ValueError as e:
            raise TrainingOptionError(str(e)) from None

    def _total_epochs(self) -> int:
        s = self.settings
        if s.steps is None:
            return s.epochs
        return -(-s.steps * s.batch_size // self.data.rows)

    def _total_steps(self) -> int:
        s = self.settings
        if s.steps is not None:
            return s.steps
        return -(-s.epochs * self.data.rows // s.batch_size)

    @property
    def static_runner(self) -> Any:
        """Static mode: the runner of the batching the steps use (the last one made while
        the choice is measured)."""
        chosen = None if self.batching is None else self.batching.batching
        return self.static_runners.get(chosen or "off") or \
            next(reversed(self.static_runners.values()), None)

    def _stop_trigger(self) -> Any:
        s = self.settings
        length = (s.epochs, "epoch") if s.steps is None else (s.steps, "iteration")
        if s.early_stopping is None:
            return IntervalTrigger(*length)
        return EarlyStoppingTrigger(monitor=_observed(s.early_stopping["metric"]),
                                    patience=s.early_stopping["patience"],
                                    mode=_mode(s.early_stopping["metric"],
                                               s.early_stopping["mode"]),
                                    max_trigger=length)

    def _watched_metric(self) -> str:
        s = self.settings
        if s.early_stopping is not None:
            metric = s.early_stopping["metric"]
        else:
            prefix = "validation_" if self.data.validation is not None else ""
            metric = prefix + ("accuracy" if "accuracy" in s.metrics else "loss")
        mode = _mode(metric, (s.early_stopping or {}).get("mode", "auto"))
        self.better = (lambda a, b: a > b) if mode == "max" else (lambda a, b: a < b)
        return _observed(metric)

    # --- files ------------------------------------------------------------------------------
    def write(self, path: Path, data: bytes) -> None:
        self.writer(str(path), data)

    def columns(self) -> list[str]:
        keys = ["main/loss", *(f"main/{m}" for m in self.scalar_metrics)]
        if self.data.validation is not None:
            keys += ["validation/main/loss",
                     *(f"validation/main/{m}" for m in self.scalar_metrics)]
        if self.rate is not None:
            keys.append("main/lr")
        return keys

    def curves_png(self) -> bytes:
        panels: dict[str, dict[str, list[tuple[float, float]]]] = {}
        for name in ("loss", *self.scalar_metrics):
            series = {}
            for label, key in (("train", f"main/{name}"), ("validation",
                                                           f"validation/main/{name}")):
                points = [(e["epoch"], e[key]) for e in self.epoch_log.log if key in e]
                if points:
                    series[label] = points
            panels[name] = series
        rates = [(e["epoch"], e["main/lr"]) for e in self.epoch_log.log if "main/lr" in e]
        if rates and (self.settings.schedule is not None or self.settings.warmup is not None):
            panels["learning rate"] = {"lr": rates}
        return render_panels(panels, "epoch")

    def save_checkpoint(self) -> str:
        path = self.out / CHECKPOINT
        with self.whole_files():
            self.write(path, checkpoint.contents(self))
        return str(path)

    def resume(self, path: str | Path) -> None:
        """Continue from the checkpoint at ``path``: refused (``SerializationError`` naming the
        file and the key) when it is another spec's or data's, was made with other settings,
        or is damaged; every array's header is checked before its data is read."""
        checkpoint.load(self, path)
        self.resumed_from = os.fspath(path)

    def restore_log(self, state: dict[str, Any], source: Path) -> None:
        """The log entries a checkpoint's ``train.csv`` holds (``state``: how much of it)."""
        epochs, steps, why = self.log_file.restore(state, source)
        self.epoch_log._log[:] = epochs
        if self.step_log is not None:
            self.step_log._log[:] = steps
        self.files.seen, self.files.seen_steps = len(epochs), len(steps)
        if why is not None:
            self.notes.append(f"the log before this checkpoint is not available ({why}); "
                              f"{self.out / CSV_LOG} holds the steps after it")

    def serialize_batching(self, serializer: Any) -> None:
        """A measured choice is saved; a resumed run that would measure keeps it instead."""
        if isinstance(serializer, Saver):
            if self.batching is not None and self.batching.how in ("measured", "resumed"):
                serializer("graphtool/batching", self.batching.batching)
            return
        stored = serializer("graphtool/batching", None)
        measuring = self.trainer.updater.run
        if stored is not None and isinstance(measuring, MeasuredRuns):
            used = str(stored)
            self.static_runners.clear()
            self.trainer.updater.run = self._run_for(used)
            self.batching = BatchingChoice(used, "resumed", left_out=measuring.left_out)

    def request_stop(self) -> None:
        """End the loop after the current step (safe from a signal handler)."""
        self.stop.requested = True

    def interrupt(self, exc: BaseException) -> None:
        """Raise ``exc`` (the caller's interruption, e.g. from a signal handler) now; while
        the session is making one of its files, as soon as that file is whole. An exception
        raised inside numpy's or zipfile's writers would leave them half-closed, and their
        clean-up would replace it with an error of their own."""
        self.stop.interrupt(exc)

    def whole_files(self) -> contextlib.AbstractContextManager[None]:
        """A block in which ``interrupt`` waits (files the caller writes for the session)."""
        return self.stop.whole()

    # --- the loop ---------------------------------------------------------------------------
    def run(self) -> TrainOutcome:
        if self.batching is not None and self.on_batching is not None:
            self.on_batching(self.batching)
        self.trainer.run()
        interrupted = self.stop.requested
        written = []
        if interrupted:
            written.append(self.save_checkpoint())
        if self.epoch_log.log and self.keeps_files:  # drawing takes a while: not to discard
            with self.whole_files():
                self.write(self.out / CURVES, self.curves_png())
        test = None
        if not interrupted:
            test = self._held_out_figures()
        updater = self.trainer.updater
        stopped_early = not interrupted and getattr(self.stop.inner, "stopped_early", False)
        best = None
        if self.files.best_value is not None:
            best = {"metric": _friendly(self.watch), "value": self.files.best_value,
                    "epoch": self.files.best_epoch, "file": str(self.out / BEST)}
        for name in (CSV_LOG, CURVES, CHECKPOINT, BEST, TEST_REPORT, CONFUSION, TENSORBOARD):
            if (self.out / name).exists() and str(self.out / name) not in written:
                written.append(str(self.out / name))
        return TrainOutcome([dict(e) for e in self.epoch_log.log], updater.iteration,
                            updater.epoch, interrupted, stopped_early, best, written,
                            list(self.notes), test)

    def best_model(self) -> tuple[SpecModel, str]:
        """The model the held-out figures are of, and which parameters it holds: with
        validation data, ``best.npz``'s (the best validation value's); without (or before any
        best), the final ones."""
        path = self.out / BEST
        blob = self.files.best_bytes
        if self.data.validation is None or self.files.best_value is None or (
                blob is None and not (self.keeps_files and path.exists())):
            return self.model, "final"
        model = build_model(self.spec, self.settings.seed)
        if blob is not None:
            serializers.load_npz(io.BytesIO(blob), model)
        else:
            load_params(path, model)
        return model, f"best (epoch {self.files.best_epoch})"

    def _held_out_figures(self) -> dict[str, Any] | None:
        """``test.json`` and ``confusion.png`` (see the module docstring); the test figures."""
        metrics = self.settings.metrics
        wants_picture = "confusion" in metrics and self.keeps_files
        if self.data.test is None and not wants_picture:
            return None
        model, which = self.best_model()
        test = None
        if self.data.test is not None:
            result = evaluation(self.spec, model, self.data.test, self.data.shared,
                                self.evaluation_batch_size, metrics, self.settings.seed,
                                self.evaluation_batching)
            test = {"rows": result.rows, "params": which, **result.to_dict()}
            if self.keeps_files:
                with self.whole_files():
                    self.write(self.out / TEST_REPORT,
                               (json.dumps(_finite(test), indent=2, sort_keys=True,
                                           allow_nan=False) + "\n").encode())
        if wants_picture:
            rows, part = self.data.validation, "validation"
            if rows is None:
                rows, part, model, which = self.data.train, "training", self.model, "final"
            result = evaluation(self.spec, model, rows, self.data.shared,
                                self.evaluation_batch_size, ("confusion",),
                                self.settings.seed, self.evaluation_batching)
            if result.confusion is not None:
                title = f"{self.spec.name}: {part} rows ({result.rows}), {which} parameters"
                with self.whole_files():
                    self.write(self.out / CONFUSION,
                               render_matrix(result.confusion, result.classes or [], title))
        return test

    def params(self) -> dict[str, np.ndarray]:
        return {name.lstrip("/"): p.array for name, p in self.model.namedparams()
                if p.array is not None}


class _StepRun:
    """A training step's forward and backward with one batching: ``(inputs, seed=) ->
    RunResult``; ``compile_ms``: the time its static runner spent tracing plans so far."""

    def __init__(self, spec: Spec, model: SpecModel, batching: str, runner: Any) -> None:
        self.spec, self.model, self.batching, self.runner = spec, model, batching, runner

    def __call__(self, inputs: dict[str, Array], seed: int) -> Any:
        if self.runner is not None:
            return self.runner.run(inputs, seed=seed, batching=self.batching)
        return run_spec(self.spec, self.model, inputs, seed=seed, batching=self.batching)

    @property
    def compile_ms(self) -> float:
        return 0.0 if self.runner is None else self.runner.stats.compile_ms


class _Sampler:
    """Shuffled epochs from the session's own generator (saved in checkpoints)."""

    def __init__(self, rng: np.random.RandomState) -> None:
        self.rng = rng

    def __call__(self, current_order: np.ndarray, current_position: int) -> np.ndarray:
        return self.rng.permutation(len(current_order))

    def serialize(self, serializer: Any) -> None:
        serialize_random_state(serializer, self.rng)


def _every_step(trainer: Any) -> bool:
    return True


def _discard(path: str, data: bytes) -> None:
    """The writer of a session that keeps no files."""
