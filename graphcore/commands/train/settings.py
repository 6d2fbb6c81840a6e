"""A spec's training settings: the ``train:`` section with the caller's overrides
(``settings_for``), the optimizer they name (``make_optimizer``), and the files a training
session writes.
"""


from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from graphcore import errors, optimizers
from graphcore.language.syntax import Spec

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
    """The spec's ``train:`` settings with the caller's overrides applied.

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
    return s


def make_optimizer(settings: TrainSettings) -> optimizers.Optimizer:
    """The optimizer ``settings`` name, with their hyperparameters (the rest its defaults).
    A parameter a step's graph did not reach (a branch not taken) is left alone that step."""
    optimizer = optimizers.BY_NAME[settings.optimizer](**settings.hyperparameters)
    optimizer.zero_missing_grads = False
    return optimizer
