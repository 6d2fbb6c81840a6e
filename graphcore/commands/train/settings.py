"""A spec's training settings: the ``train:`` section with the caller's overrides
(``settings_for``), the optimizer they name (``make_optimizer``), and the files a training
session writes.
"""


from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from graphcore import errors, optimizers
from graphcore.language.syntax import Spec
from graphcore.language.validate_workflow import SCALAR_METRICS
from graphcore.optimizer_hooks import GradientClipping, WeightDecay
from graphcore.training import learning_rate

DEFAULT_EPOCHS = 10
DEFAULT_BATCH_SIZE = 32
CHECKPOINT = "checkpoint.npz"
BEST = "best.npz"
CSV_LOG = "train.csv"
CURVES = "curves.png"
TEST_REPORT = "test.json"
CONFUSION = "confusion.png"


class TrainingOptionError(errors.GraphcoreError, ValueError):
    """A training setting does not fit the spec or its data (the CLI: a usage error).
    ``loc``: the place in the spec the problem is about, when there is one (a ``Loc``)."""

    def __init__(self, message: str, loc: Any = None) -> None:
        super().__init__(message)
        self.loc = loc


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
    checkpoint_every: int | None = 1  # epochs; None: a checkpoint only when interrupted
    log_every: int | None = None
    mode: str = "dynamic"
    # the learning rate's schedule ({kind, per, ...}: learning_rate.check_schedule's), its
    # warm-up (epochs or iterations, as the schedule's per says) and the gradient hooks
    schedule: dict[str, Any] | None = None
    warmup: int | None = None
    warmup_start: float | None = None
    weight_decay: float | None = None
    gradient_clipping: float | None = None

    def fingerprint(self) -> str:
        """What a checkpoint must match to be resumed (the mode and the length of training
        may differ: a run can be continued for more epochs)."""
        doc = asdict(self)
        for key in ("mode", "epochs", "steps", "early_stopping"):
            doc.pop(key)
        for key in _UNSET_UNRECORDED:  # the settings of runs made before they existed
            if doc[key] is None:
                doc.pop(key)
        return json.dumps(doc, sort_keys=True)

    @property
    def learning_rate(self) -> float | None:
        """The optimizer's learning rate before any schedule (None: it has none)."""
        keyword = optimizers.learning_rate_keyword(self.optimizer)
        if keyword is None:
            return None
        return self.hyperparameters.get(keyword, optimizers.default_learning_rate(
            self.optimizer))


_UNSET_UNRECORDED = ("schedule", "warmup", "warmup_start", "weight_decay", "gradient_clipping")


def settings_for(spec: Spec, *, seed: int | None = None, epochs: int | None = None,
                 steps: int | None = None, batch_size: int | None = None,
                 optimizer: str | None = None, lr: float | None = None,
                 shuffle: bool | None = None, mode: str = "dynamic",
                 schedule: str | None = None, warmup: int | None = None,
                 warmup_start: float | None = None, weight_decay: float | None = None,
                 gradient_clipping: float | None = None) -> TrainSettings:
    """The spec's ``train:`` settings with the caller's overrides applied.

    ``schedule`` is the command line's form (``cosine``, ``step:every=10,factor=0.5``;
    ``constant``: none); ``warmup`` 0 and ``weight_decay`` 0 turn the spec's off.

    The learning rate is one setting however it is given: ``train: {lr: X}`` is the default of
    ``lr`` (``--lr``, a sweep's ``train.lr``), and either one goes to the learning-rate
    hyperparameter of the optimizer that runs (``lr``, Adam's ``alpha``) after ``optimizer``
    (``--optimizer``) has replaced the spec's, as the optimizer's own ``lr``/``alpha`` would.
    """
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
        s.schedule = None if t.schedule is None else dict(t.schedule)
        s.warmup, s.warmup_start = t.warmup, t.warmup_start
        s.weight_decay, s.gradient_clipping = t.weight_decay, t.gradient_clipping
    if epochs is not None:
        s.epochs, s.steps = epochs, None
    if steps is not None:
        s.epochs, s.steps = None, steps
    if batch_size is not None:
        s.batch_size = batch_size
    if shuffle is not None:
        s.shuffle = shuffle
    if optimizer is not None and optimizer != s.optimizer:
        if optimizer not in optimizers.BY_NAME:
            raise TrainingOptionError(f"unknown optimizer {optimizer!r}; choose one of "
                                      f"{', '.join(optimizers.BY_NAME)}")
        s.optimizer, s.hyperparameters = optimizer, {}
    given = lr is not None
    if not given and t is not None:
        lr = t.lr
    if lr is not None:
        if not lr > 0 or not np.isfinite(lr):
            raise TrainingOptionError(f"the learning rate must be a positive number, got {lr}")
        keyword = optimizers.learning_rate_keyword(s.optimizer)
        if keyword is None:
            raise TrainingOptionError(f"optimizer {s.optimizer} has no learning rate" + (
                "" if given else " (the spec's train: sets lr)"))
        s.hyperparameters[keyword] = float(lr)
    for name in ("epochs", "steps", "batch_size"):
        value = getattr(s, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise TrainingOptionError(f"{name} must be a positive integer, got {value!r}")
    _schedule_overrides(s, schedule, warmup, warmup_start, weight_decay, gradient_clipping)
    _check_schedule(s, None if t is None else t.loc)
    return s


def _schedule_overrides(s: TrainSettings, schedule: str | None, warmup: int | None,
                        warmup_start: float | None, weight_decay: float | None,
                        gradient_clipping: float | None) -> None:
    if schedule is not None:
        try:
            parsed = learning_rate.parse_schedule(schedule)
        except ValueError as e:
            raise TrainingOptionError(str(e)) from None
        s.schedule = None if parsed == {"kind": "constant", "per": "epoch"} else parsed
    for name, value, low in (("warmup", warmup, 0), ("warmup_start", warmup_start, 0),
                             ("weight_decay", weight_decay, 0),
                             ("gradient_clipping", gradient_clipping, None)):
        if value is None:
            continue
        whole = name == "warmup"
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                not math.isfinite(value) or (whole and not float(value).is_integer()) or \
                (value < low if low is not None else not value > 0):
            what = "an integer >= 0" if whole else "a number >= 0" if low is not None \
                else "a number > 0"
            raise TrainingOptionError(f"--{name.replace('_', '-')} must be {what}, got "
                                      f"{value!r}")
        setattr(s, name, int(value) if whole else float(value))
    if s.warmup == 0:
        s.warmup = None
    if s.weight_decay == 0:
        s.weight_decay = None


def _check_schedule(s: TrainSettings, loc: Any) -> None:
    """What the schedule needs of the other settings: an optimizer with a learning rate, a
    plateau metric that is reported, a warm-up start and minimum below the rate."""
    if s.schedule is None and s.warmup is None:
        if s.warmup_start is not None:
            raise TrainingOptionError("warmup_start is given, but there is no warm-up; add "
                                      "warmup: N", loc)
        return
    rate = s.learning_rate
    what = "the schedule" if s.schedule is not None else "the warm-up"
    if rate is None:
        raise TrainingOptionError(f"optimizer {s.optimizer} has no learning rate for "
                                  f"{what} to change; choose another optimizer", loc)
    schedule = s.schedule or {}
    floor = schedule.get("min_lr")
    if floor is not None and schedule["kind"] in ("cosine", "exponential") and \
            not floor < rate:
        raise TrainingOptionError(f"schedule {schedule['kind']}: min_lr {floor:g} is not "
                                  f"below the learning rate {rate:g}", loc)
    if s.warmup_start is not None and not s.warmup_start < rate:
        raise TrainingOptionError(f"warmup_start {s.warmup_start:g} is not below the "
                                  f"learning rate {rate:g} it warms up to", loc)
    if schedule.get("kind") == "plateau" and schedule.get("metric") is not None:
        scalar = tuple(m for m in s.metrics if m in SCALAR_METRICS)
        known = [f"{prefix}{m}" for prefix in ("", "validation_") for m in ("loss", *scalar)]
        if schedule["metric"] not in known:
            raise TrainingOptionError(f"schedule plateau: metric {schedule['metric']!r} is not "
                                      f"reported; choose from {', '.join(known)}", loc)


def make_optimizer(settings: TrainSettings) -> optimizers.Optimizer:
    """The optimizer ``settings`` name, with their hyperparameters (the rest its defaults).
    A parameter a step's graph did not reach (a branch not taken) is left alone that step."""
    optimizer = optimizers.BY_NAME[settings.optimizer](**settings.hyperparameters)
    optimizer.zero_missing_grads = False
    return optimizer


def add_gradient_hooks(optimizer: optimizers.Optimizer, settings: TrainSettings) -> None:
    """The settings' gradient clipping and weight decay on ``optimizer`` (set up). Clipping
    runs first, on the loss's gradients (the optimizer's pre-update hooks), then the decay
    adds ``weight_decay * param`` to each gradient as its parameter is updated (L2, coupled
    with the update rule: Adam's moments see it; Adam's ``weight_decay_rate`` is the
    decoupled AdamW form)."""
    if settings.gradient_clipping is not None:
        optimizer.add_hook(GradientClipping(settings.gradient_clipping))
    if settings.weight_decay is not None:
        optimizer.add_hook(WeightDecay(settings.weight_decay))
