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
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from graphcore import errors, optimizers, serializers
from graphcore.config import no_backprop_mode, using_config
from graphcore.spec.inputs import make_inputs
from graphcore.spec.interpreter import SpecModel, build_model, run_spec
from graphcore.spec.model import Spec
from graphcore.spec.validate_workflow import OPTIMIZER_CLASSES, optimizer_hyperparameters
from graphcore.training import extension as ext
from graphcore.training.datasets import DictDataset
from graphcore.training.extensions.log_report import LogReport
from graphcore.training.extensions.plot_report import render_panels
from graphcore.training.extensions.writer import Writer, write_atomic
from graphcore.training.iterators import SerialIterator
from graphcore.training.metrics import MetricError, metric_sums
from graphcore.training.reporter import report
from graphcore.training.serialization import Saver
from graphcore.training.trainer import Trainer
from graphcore.training.triggers import EarlyStoppingTrigger, IntervalTrigger
from graphcore.training.updaters import StandardUpdater

Array = np.ndarray | list[np.ndarray]
DEFAULT_EPOCHS = 10
DEFAULT_BATCH_SIZE = 32
CHECKPOINT = "checkpoint.npz"
BEST = "best.npz"
CSV_LOG = "train.csv"
CURVES = "curves.png"


class TrainingOptionError(errors.GraphcoreError, ValueError):
    """A training setting does not fit the spec or its data (the CLI: a usage error)."""


@dataclass
class TrainSettings:
    seed: int
    epochs: int | None = DEFAULT_EPOCHS
    steps: int | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    shuffle: bool = True
    optimizer: str = "adam"
    hyperparameters: dict[str, float] = field(default_factory=dict)
    metrics: tuple[str, ...] = ()
    early_stopping: dict[str, Any] | None = None
    checkpoint_every: int = 1
    log_every: int | None = None
    mode: str = "dynamic"

    def fingerprint(self) -> str:
        """What a checkpoint must match to be resumed (the mode and the length of training
        may differ: a run can be continued for more epochs)."""
        doc = asdict(self)
        for key in ("mode", "epochs", "steps", "early_stopping"):
            doc.pop(key)
        return json.dumps(doc, sort_keys=True)


def settings_for(spec: Spec, *, seed: int | None = None, epochs: int | None = None,
                 steps: int | None = None, batch_size: int | None = None,
                 optimizer: str | None = None, lr: float | None = None,
                 shuffle: bool | None = None, mode: str = "dynamic") -> TrainSettings:
    """The spec's ``train:`` settings with the caller's overrides applied."""
    t = spec.train
    s = TrainSettings(seed=spec.seed if seed is None else seed, mode=mode)
    if t is not None:
        s.epochs, s.steps = t.epochs, t.steps
        if s.epochs is None and s.steps is None:
            s.epochs = DEFAULT_EPOCHS
        s.batch_size = t.batch_size or DEFAULT_BATCH_SIZE
        s.shuffle, s.optimizer = t.shuffle, t.optimizer
        s.hyperparameters = dict(t.hyperparameters)
        s.metrics, s.early_stopping = tuple(t.metrics), t.early_stopping
        s.checkpoint_every, s.log_every = t.checkpoint_every, t.log_every
    if epochs is not None:
        s.epochs, s.steps = epochs, None
    if steps is not None:
        s.epochs, s.steps = None, steps
    if batch_size is not None:
        s.batch_size = batch_size
    if shuffle is not None:
        s.shuffle = shuffle
    if optimizer is not None and optimizer != s.optimizer:
        if optimizer not in OPTIMIZER_CLASSES:
            raise TrainingOptionError(f"unknown optimizer {optimizer!r}; choose one of "
                                      f"{', '.join(OPTIMIZER_CLASSES)}")
        s.optimizer, s.hyperparameters = optimizer, {}
    if lr is not None:
        if not lr > 0 or not np.isfinite(lr):
            raise TrainingOptionError(f"the learning rate must be a positive number, got {lr}")
        keyword = "alpha" if s.optimizer == "adam" else "lr"
        if keyword not in optimizer_hyperparameters(s.optimizer):
            raise TrainingOptionError(f"optimizer {s.optimizer} has no learning rate")
        s.hyperparameters[keyword] = float(lr)
    for name in ("epochs", "steps", "batch_size"):
        value = getattr(s, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise TrainingOptionError(f"{name} must be a positive integer, got {value!r}")
    return s


def make_optimizer(settings: TrainSettings) -> optimizers.Optimizer:
    hyper = dict(settings.hyperparameters)
    if settings.optimizer == "adam" and "lr" in hyper:
        hyper["alpha"] = hyper.pop("lr")
    return OPTIMIZER_CLASSES[settings.optimizer](**hyper)


# ------------------------------------------------------------------------------------ data

@dataclass
class SpecData:
    """The training data split into the batched inputs (rows) and the shared ones."""

    train: dict[str, Array]
    validation: dict[str, Array] | None
    shared: dict[str, Array]
    # With a validation fraction: which rows of the data each part holds (for messages).
    train_index: np.ndarray | None = None
    validation_index: np.ndarray | None = None

    @property
    def rows(self) -> int:
        return _rows(self.train)


def _rows(arrays: Mapping[str, Array]) -> int:
    first = next(iter(arrays.values()))
    return len(first)


def batched_inputs(spec: Spec, arrays: Mapping[str, Array]) -> list[str]:
    """Inputs split into batches: those with a named batch dimension, and sequences."""
    return [name for name, s in spec.inputs.items()
            if s.batch_dim is not None or isinstance(arrays.get(name), list)]


def load_spec_data(spec: Spec, seed: int, input_overrides: Mapping[str, str] | None = None,
                   stdin: BinaryIO | None = None, split: bool = True) -> SpecData:
    """Read the spec's inputs and split off the validation data (a seeded fraction, or the
    ``validation: file:``). ``split=False`` keeps every row for training."""
    arrays = make_inputs(spec.inputs, seed, spec.folder, input_overrides, stdin)
    names = batched_inputs(spec, arrays)
    if not names:
        raise TrainingOptionError(f"spec '{spec.name}' has no batched input to train over; "
                                  "feed inputs from `data:` or name their leading axis "
                                  "(shape: [batch, ...])")
    rows = {n: arrays[n] for n in names}
    shared = {n: v for n, v in arrays.items() if n not in rows}
    v = spec.validation if split else None
    validation = None
    val_index = train_index = None
    if v is not None and v.fraction is not None:
        n = _rows(rows)
        n_val = int(round(n * v.fraction))
        if n_val < 1 or n_val >= n:
            raise errors.SpecError(
                f"validation fraction {v.fraction:g} of {n} rows leaves "
                f"{n - n_val} for training and {n_val} for validation; both need at least one",
                v.loc.file, v.loc.line, v.loc.col)
        order = np.random.RandomState(seed if v.seed is None else v.seed).permutation(n)
        val_index, train_index = np.sort(order[:n_val]), np.sort(order[n_val:])
        validation = {k: _take(a, val_index) for k, a in rows.items()}
        rows = {k: _take(a, train_index) for k, a in rows.items()}
    elif v is not None and v.file is not None:
        from graphcore.training.data_files import read_data

        fed = {n: s for n, s in spec.inputs.items() if s.source == "data"}
        validation = read_data(Path(spec.folder) / v.file, fed, v.loc)
    return SpecData(rows, validation, shared, train_index, val_index)


def _take(array: Array, index: np.ndarray) -> Array:
    if isinstance(array, list):
        return [array[int(i)] for i in index]
    return array[index]


def collate(batch: list[dict[str, Any]], shared: Mapping[str, Array],
            sequences: frozenset[str]) -> dict[str, Array]:
    """Examples -> the spec's inputs: rows stacked, sequences kept as lists, shared added."""
    out: dict[str, Array] = dict(shared)
    for key in batch[0]:
        column = [example[key] for example in batch]
        out[key] = column if key in sequences else np.stack(column)
    return out


def batches(arrays: Mapping[str, Array], batch_size: int):
    """Consecutive slices of ``batch_size`` rows (the last may be shorter)."""
    n = _rows(arrays)
    for start in range(0, n, batch_size):
        yield start, {k: v[start:start + batch_size] for k, v in arrays.items()}


# ---------------------------------------------------------------------- evaluate, predict

def evaluate_arrays(spec: Spec, model: SpecModel, rows: Mapping[str, Array],
                    shared: Mapping[str, Array] | None = None, batch_size: int = 256,
                    metrics: tuple[str, ...] = (), seed: int | None = None) -> dict[str, float]:
    """Loss and ``metrics`` over every row, in evaluation mode; exact means over rows."""
    if spec.loss is None:
        raise TrainingOptionError(f"spec '{spec.name}' has no loss to evaluate")
    loss_sum, n = 0.0, 0
    sums = {m: [0.0, 0] for m in metrics}
    with using_config("train", False), no_backprop_mode():
        for _, batch in batches(rows, batch_size):
            size = _rows(batch)
            result = run_spec(spec, model, {**(shared or {}), **batch}, backward=False,
                              seed=spec.seed if seed is None else seed)
            loss_sum += float(result.loss) * size
            n += size
            for m in metrics:
                total, count = _metric(m, result.loss_inputs)
                sums[m][0] += total
                sums[m][1] += count
    out = {"loss": loss_sum / n}
    out.update({m: (t / c if c else float("nan")) for m, (t, c) in sums.items()})
    return out


def predict_arrays(spec: Spec, model: SpecModel, rows: Mapping[str, Array],
                   shared: Mapping[str, Array] | None = None, batch_size: int = 256,
                   seed: int | None = None) -> dict[str, Array]:
    """The spec's outputs for every row, in evaluation mode, computed ``batch_size`` rows at
    a time and joined along the batch axis (sequences: one output per example)."""
    parts: dict[str, list[Any]] = {name: [] for name in spec.outputs}
    sequences = any(isinstance(v, list) for v in rows.values())
    with using_config("train", False), no_backprop_mode():
        for _, batch in batches(rows, batch_size):
            result = run_spec(spec, model, {**(shared or {}), **batch}, backward=False,
                              seed=spec.seed if seed is None else seed)
            for name in spec.outputs:
                if sequences:
                    parts[name].extend(_array(o[name]) for o in result.example_outputs)
                else:
                    parts[name].append(_array(result.outputs[name]))
    if sequences:
        return parts
    return {name: np.concatenate([np.atleast_1d(p) for p in values])
            for name, values in parts.items()}


def _array(value: Any) -> np.ndarray:
    return np.asarray(getattr(value, "array", value))


def _metric(name: str, loss_inputs: list) -> tuple[float, int]:
    try:
        return metric_sums(name, loss_inputs)
    except MetricError as e:
        raise TrainingOptionError(str(e)) from None


def check_labels(spec: Spec, model: SpecModel, data: SpecData) -> None:
    """Labels a softmax cross entropy cannot take (outside [0, classes), -1 ignored) are a
    data error naming the input and the first bad row, found before training starts."""
    loss = spec.loss
    if loss is None or loss.op != "softmax_cross_entropy" or len(loss.inputs) < 2:
        return
    label = loss.inputs[1]
    if label not in data.train or isinstance(data.train[label], list):
        return
    probe = {k: v[:1] for k, v in data.train.items()}
    with using_config("train", False), no_backprop_mode():
        try:
            result = run_spec(spec, model, {**data.shared, **probe}, backward=False)
        except errors.SpecRuntimeError:
            return  # the loss itself will report what is wrong, at its step
    logits = _array(result.loss_inputs[0][0]) if result.loss_inputs else None
    if logits is None or logits.ndim != 2:
        return
    classes = logits.shape[1]
    parts = (("training", data.train, data.train_index),
             ("validation", data.validation or {}, data.validation_index))
    for part, arrays, index in parts:
        labels = arrays.get(label)
        if labels is None:
            continue
        labels = np.asarray(labels).reshape(len(labels), -1)[:, 0]
        bad = np.flatnonzero((labels != -1) & ((labels < 0) | (labels >= classes)))
        if bad.size:
            where = spec.inputs[label].loc
            row = int(bad[0] if index is None else index[bad[0]]) + 1
            what = "data row" if index is not None or part == "training" else "validation row"
            raise errors.SpecError(
                f"input '{label}': {what} {row} has label {labels[bad[0]].item()!r}, outside "
                f"0..{classes - 1} for softmax_cross_entropy over {classes} classes "
                f"({bad.size} such row{'s' * (bad.size != 1)})", where.file, where.line, where.col)


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


def _friendly(key: str) -> str:
    """``main/loss`` -> ``loss``; ``validation/main/accuracy`` -> ``validation_accuracy``."""
    return key.replace("validation/main/", "validation_").replace("main/", "")


def _observed(metric: str) -> str:
    return ("validation/main/" + metric[len("validation_"):] if metric.startswith("validation_")
            else "main/" + metric)


class _StoppableTrigger:
    """The stop trigger, plus a request to stop after the current step (Ctrl-C)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.requested = False

    def __call__(self, trainer: Any) -> bool:
        return self.requested or self.inner(trainer)

    def get_training_length(self) -> Any:
        return self.inner.get_training_length()

    def serialize(self, serializer: Any) -> None:
        self.inner.serialize(serializer)


class _SpecUpdater(StandardUpdater):
    def __init__(self, iterator: Any, optimizer: Any, converter: Callable, run: Callable,
                 seed: int, metrics: tuple[str, ...], report_metrics: bool) -> None:
        super().__init__(iterator, optimizer, converter=converter)
        self.run = run
        self.seed = seed
        self.metrics = metrics
        self.report_metrics = report_metrics

    def update_core(self) -> None:
        iterator = self._iterators["main"]
        optimizer = self._optimizers["main"]
        inputs = self.converter(iterator.next())
        step = self.iteration + 1
        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                result = self.run(inputs, seed=self.seed + self.iteration)
        except errors.SpecRuntimeError as e:
            raise errors.SpecRuntimeError(f"training step {step}: {e.message}", e.file, e.line,
                                          e.col, e.source_line, e.length) from None
        optimizer.update()
        values = {"loss": float(result.loss)}
        if self.report_metrics:
            for m in self.metrics:
                total, count = _metric(m, result.loss_inputs)
                if count:
                    values[m] = total / count
        report(values, optimizer.target)
        if iterator.is_new_epoch:
            optimizer.new_epoch()


class _SpecEvaluator(ext.Extension):
    trigger = 1, "epoch"
    priority = ext.PRIORITY_WRITER
    default_name = "validation"

    def __init__(self, session: TrainingSession) -> None:
        self.session = session

    def __call__(self, trainer: Any) -> None:
        s = self.session
        result = evaluate_arrays(s.spec, s.model, s.data.validation, s.data.shared,
                                 max(s.settings.batch_size, 256), s.settings.metrics,
                                 s.settings.seed)
        report({f"validation/main/{k}": v for k, v in result.items()})


class _Files(ext.Extension):
    """After each log entry: ``train.csv`` and ``best.npz`` (parameters at the best value of
    the watched metric so far). ``curves.png`` is drawn once, when the loop ends (drawing
    takes longer than an epoch of a small model)."""

    trigger = 1, "iteration"
    priority = 50  # after LogReport (a reader, 100)

    def __init__(self, session: TrainingSession) -> None:
        self.session = session
        self.seen = 0
        self.seen_steps = 0
        self.best_value: float | None = None
        self.best_epoch = 0

    def __call__(self, trainer: Any) -> None:
        s = self.session
        log = s.epoch_log.log
        steps = 0 if s.step_log is None else len(s.step_log.log)
        if len(log) == self.seen and steps == self.seen_steps:
            return
        self.seen_steps = steps
        if len(log) > self.seen:
            entry = log[-1]
            value = entry.get(s.watch)
            if value is not None and np.isfinite(value) and (
                    self.best_value is None or s.better(value, self.best_value)):
                self.best_value, self.best_epoch = float(value), int(entry["epoch"])
                s.write(s.out / BEST, _model_bytes(s.model))
            self.seen = len(log)
        s.write(s.out / CSV_LOG, s.csv_text().encode("utf-8"))

    def serialize(self, serializer: Any) -> None:
        self.seen = serializer("seen", self.seen)
        self.seen_steps = serializer("seen_steps", self.seen_steps)
        best = serializer("best_value", np.nan if self.best_value is None else self.best_value)
        self.best_value = None if np.isnan(best) else float(best)
        self.best_epoch = serializer("best_epoch", self.best_epoch)


class _Checkpoint(ext.Extension):
    priority = ext.PRIORITY_SNAPSHOT

    def __init__(self, session: TrainingSession, every: int) -> None:
        self.session = session
        self.trigger = (every, "epoch")

    def __call__(self, trainer: Any) -> None:
        self.session.save_checkpoint()


def _model_bytes(model: SpecModel) -> bytes:
    buffer = io.BytesIO()
    serializers.save_npz(buffer, model)
    return buffer.getvalue()


class _CheckpointState:
    """What ``checkpoint.npz`` holds: the trainer (parameters, optimizer state, iterator
    position and order, random state, logs, triggers) and the settings it was made with."""

    def __init__(self, session: TrainingSession) -> None:
        self.session = session

    def serialize(self, serializer: Any) -> None:
        s = self.session
        if isinstance(serializer, Saver):
            serializer("graphtool/spec", s.spec.name)
            serializer("graphtool/settings", s.settings.fingerprint())
        else:
            settings = serializer("graphtool/settings", "")
            if settings != s.settings.fingerprint():
                raise errors.SerializationError(
                    "the checkpoint was made with other training settings "
                    f"({_settings_diff(settings, s.settings.fingerprint())}); resume with "
                    "the same spec and options")
        s.trainer.serialize(serializer["trainer"])


def _settings_diff(saved: str, current: str) -> str:
    try:
        a, b = json.loads(saved), json.loads(current)
    except ValueError:
        return "unreadable settings"
    return ", ".join(f"{k}: {a.get(k)!r} then, {b.get(k)!r} now"
                     for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k))


class TrainingSession:
    """One training run of a spec (see the module docstring)."""

    def __init__(self, spec: Spec, settings: TrainSettings, data: SpecData,
                 out_dir: str | Path, writer: Writer | None = None,
                 initial_params: str | Path | None = None,
                 on_step: Callable[[int, int, float], None] | None = None,
                 passes: list[str] | None = None) -> None:
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
        self.spec, self.settings, self.data = spec, settings, data
        self.out = Path(out_dir)
        self.writer = writer or write_atomic
        self.model = build_model(spec, settings.seed)
        if initial_params is not None:
            serializers.load_npz(initial_params, self.model)
        check_labels(spec, self.model, data)
        self.optimizer = make_optimizer(settings)
        self.optimizer.setup(self.model)
        sequences = frozenset(k for k, v in data.train.items() if isinstance(v, list))
        dataset = DictDataset(**data.train)
        rng = np.random.RandomState(settings.seed)
        order = None if not settings.shuffle else _Sampler(rng)
        iterator = SerialIterator(dataset, settings.batch_size, shuffle=None if order else False,
                                  order_sampler=order)
        run = self._runner(passes)
        updater = _SpecUpdater(iterator, self.optimizer,
                               lambda batch: collate(batch, data.shared, sequences), run,
                               settings.seed, settings.metrics, True)
        self.stop = _StoppableTrigger(self._stop_trigger())
        self.trainer = Trainer(updater, self.stop, out=str(self.out))
        if data.validation is not None:
            self.trainer.extend(_SpecEvaluator(self))
        self.epoch_log = LogReport(filename=None)
        self.trainer.extend(self.epoch_log)
        self.step_log = None
        if settings.log_every:
            self.step_log = LogReport(trigger=(settings.log_every, "iteration"), filename=None)
            self.trainer.extend(self.step_log, name="StepLog")
        self.watch = self._watched_metric()
        self.files = _Files(self)
        self.trainer.extend(self.files)
        self.trainer.extend(_Checkpoint(self, settings.checkpoint_every))
        if on_step is not None:
            def progress(trainer: Any) -> None:
                loss = trainer.observation.get("main/loss")
                on_step(trainer.updater.iteration, trainer.updater.epoch,
                        float("nan") if loss is None else float(loss))
            self.trainer.extend(progress, name="progress", trigger=(1, "iteration"))
        self.resumed_from: str | None = None

    def _runner(self, passes: list[str] | None) -> Callable:
        if self.settings.mode == "static":
            from graphcore.static.spec_mode import StaticSpecRunner

            self.static_runner = StaticSpecRunner(self.spec, self.model, passes=passes,
                                                  loss_inputs=bool(self.settings.metrics))
            return self.static_runner.run
        return lambda inputs, seed: run_spec(self.spec, self.model, inputs, seed=seed)

    def _stop_trigger(self) -> Any:
        s = self.settings
        length = (s.epochs, "epoch") if s.steps is None else (s.steps, "iteration")
        if s.early_stopping is None:
            return IntervalTrigger(*length)
        return EarlyStoppingTrigger(monitor=_observed(s.early_stopping["metric"]),
                                    patience=s.early_stopping["patience"],
                                    mode=s.early_stopping["mode"], max_trigger=length)

    def _watched_metric(self) -> str:
        s = self.settings
        if s.early_stopping is not None:
            metric = s.early_stopping["metric"]
        else:
            prefix = "validation_" if self.data.validation is not None else ""
            metric = prefix + ("accuracy" if "accuracy" in s.metrics else "loss")
        mode = (s.early_stopping or {}).get("mode", "auto")
        if mode == "auto":
            mode = "max" if metric.endswith("accuracy") else "min"
        self.better = (lambda a, b: a > b) if mode == "max" else (lambda a, b: a < b)
        return _observed(metric)

    # --- files ------------------------------------------------------------------------------
    def write(self, path: Path, data: bytes) -> None:
        self.writer(str(path), data)

    def columns(self) -> list[str]:
        keys = ["main/loss", *(f"main/{m}" for m in self.settings.metrics)]
        if self.data.validation is not None:
            keys += ["validation/main/loss",
                     *(f"validation/main/{m}" for m in self.settings.metrics)]
        return keys

    def csv_text(self) -> str:
        rows = [("epoch", e) for e in self.epoch_log.log]
        if self.step_log is not None:
            rows += [("step", e) for e in self.step_log.log]
        rows.sort(key=lambda r: (r[1]["iteration"], r[0] == "epoch"))
        keys = self.columns()
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["kind", "epoch", "step", *(_friendly(k) for k in keys), "elapsed_s"])
        for kind, entry in rows:
            writer.writerow([kind, entry["epoch"], entry["iteration"],
                             *(repr(entry[k]) if k in entry else "" for k in keys),
                             f"{entry['elapsed_time']:.3f}"])
        return out.getvalue()

    def curves_png(self) -> bytes:
        panels: dict[str, dict[str, list[tuple[float, float]]]] = {}
        for name in ("loss", *self.settings.metrics):
            series = {}
            for label, key in (("train", f"main/{name}"), ("validation",
                                                           f"validation/main/{name}")):
                points = [(e["epoch"], e[key]) for e in self.epoch_log.log if key in e]
                if points:
                    series[label] = points
            panels[name] = series
        return render_panels(panels, "epoch")

    def save_checkpoint(self) -> str:
        buffer = io.BytesIO()
        serializers.save_npz(buffer, _CheckpointState(self))
        path = self.out / CHECKPOINT
        self.write(path, buffer.getvalue())
        return str(path)

    def resume(self, path: str | Path) -> None:
        serializers.load_npz(path, _CheckpointState(self))
        self.resumed_from = str(path)

    def request_stop(self) -> None:
        """End the loop after the current step (safe from a signal handler)."""
        self.stop.requested = True

    # --- the loop ---------------------------------------------------------------------------
    def run(self) -> TrainOutcome:
        self.trainer.run()
        interrupted = self.stop.requested
        written = []
        if interrupted:
            written.append(self.save_checkpoint())
        if self.epoch_log.log:
            self.write(self.out / CURVES, self.curves_png())
        updater = self.trainer.updater
        stopped_early = not interrupted and getattr(self.stop.inner, "stopped_early", False)
        best = None
        if self.files.best_value is not None:
            best = {"metric": _friendly(self.watch), "value": self.files.best_value,
                    "epoch": self.files.best_epoch, "file": str(self.out / BEST)}
        for name in (CSV_LOG, CURVES, CHECKPOINT, BEST):
            if (self.out / name).exists() and str(self.out / name) not in written:
                written.append(str(self.out / name))
        return TrainOutcome([dict(e) for e in self.epoch_log.log], updater.iteration,
                            updater.epoch, interrupted, stopped_early, best, written)

    def params(self) -> dict[str, np.ndarray]:
        return {name.lstrip("/"): p.array for name, p in self.model.namedparams()
                if p.array is not None}


class _Sampler:
    """Shuffled epochs from the session's own generator (saved in checkpoints)."""

    def __init__(self, rng: np.random.RandomState) -> None:
        self.rng = rng

    def __call__(self, current_order: np.ndarray, current_position: int) -> np.ndarray:
        return self.rng.permutation(len(current_order))

    def serialize(self, serializer: Any) -> None:
        from graphcore.training.serialization import serialize_random_state

        serialize_random_state(serializer, self.rng)
