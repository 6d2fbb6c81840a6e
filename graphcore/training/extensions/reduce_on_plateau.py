"""``ReduceLROnPlateau`` (not in Chainer; Keras' callback of that name, as a trainer
extension): multiply an optimizer hyperparameter by ``factor`` when a reported value has not
improved for ``patience`` checks.

Called every iteration, it averages the observed ``monitor`` over each ``check_trigger``
interval (an epoch: the epoch's mean training loss, or the one validation value reported at
its end), then decides as Keras does: a value better than the best by more than
``min_delta`` is the new best; otherwise, outside a cooldown, it counts one check without
improvement, and at ``patience`` of them the value becomes ``max(value * factor, min_value)``
and ``cooldown`` checks follow in which nothing is counted. Its counters, the best value, the
average in progress and the value it set are kept in snapshots.
"""

from __future__ import annotations

import math
from typing import Any

from graphcore.reporter import DictSummary
from graphcore.training.extension import Extension
from graphcore.training.triggers import get_trigger


class ReduceLROnPlateau(Extension):
    trigger = 1, "iteration"

    def __init__(self, attr: str = "lr", monitor: str = "validation/main/loss",
                 factor: float = 0.1, patience: int = 10, mode: str = "min",
                 min_delta: float = 0.0, cooldown: int = 0, min_value: float = 0.0,
                 check_trigger: Any = (1, "epoch"), optimizer: Any = None) -> None:
        if not 0 < factor < 1:
            raise ValueError(f"ReduceLROnPlateau: factor must be in (0, 1), got {factor!r}")
        if not patience >= 1:
            raise ValueError(f"ReduceLROnPlateau: patience must be >= 1, got {patience!r}")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        self._attr, self._monitor, self._factor = attr, monitor, factor
        self._patience, self._mode, self._min_delta = int(patience), mode, min_delta
        self._cooldown, self._min_value = int(cooldown), min_value
        self._check_trigger = get_trigger(check_trigger)
        self._optimizer = optimizer
        self._summary = DictSummary()
        self._best = math.inf if mode == "min" else -math.inf
        self._wait = 0
        self._cooldown_left = 0
        self._value: float | None = None  # the value it set last (None: the optimizer's own)

    def _target(self, trainer: Any) -> Any:
        return self._optimizer or trainer.updater.get_optimizer("main")

    def initialize(self, trainer: Any) -> None:
        if self._value is not None:  # resumed from a snapshot
            setattr(self._target(trainer).hyperparam, self._attr, self._value)

    def __call__(self, trainer: Any) -> None:
        if self._monitor in trainer.observation:
            self._summary.add({self._monitor: trainer.observation[self._monitor]})
        if not self._check_trigger(trainer):
            return
        mean = self._summary.compute_mean().get(self._monitor)
        self._summary = DictSummary()
        if mean is None:
            raise KeyError(f"ReduceLROnPlateau: nothing reported {self._monitor!r} in the "
                           "interval it checks")
        self.check(float(mean), self._target(trainer))

    def skip(self, trainer: Any) -> None:
        """An iteration that does not count (a warm-up's): the check trigger moves on, so the
        first interval that counts starts after it, and nothing is observed."""
        self._check_trigger(trainer)

    def check(self, current: float, optimizer: Any) -> None:
        """One check of the averaged value ``current`` (it may change ``optimizer``'s)."""
        if self._cooldown_left > 0:
            self._cooldown_left -= 1
            self._wait = 0
        if self._improves(current):
            self._best = current
            self._wait = 0
        elif self._cooldown_left == 0:
            self._wait += 1
            if self._wait >= self._patience:
                old = float(getattr(optimizer.hyperparam, self._attr))
                if old > self._min_value:
                    self._value = max(old * self._factor, self._min_value)
                    setattr(optimizer.hyperparam, self._attr, self._value)
                    self._cooldown_left = self._cooldown
                self._wait = 0

    def _improves(self, current: float) -> bool:
        if self._mode == "min":
            return current < self._best - self._min_delta
        return current > self._best + self._min_delta

    def serialize(self, serializer: Any) -> None:
        self._summary.serialize(serializer["_summary"])
        if hasattr(self._check_trigger, "serialize"):
            self._check_trigger.serialize(serializer["_check_trigger"])
        self._best = serializer("_best", float(self._best))
        self._wait = serializer("_wait", self._wait)
        self._cooldown_left = serializer("_cooldown_left", self._cooldown_left)
        value = serializer("_value", math.nan if self._value is None else float(self._value))
        self._value = None if math.isnan(value) else float(value)
