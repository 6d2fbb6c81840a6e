"""Triggers: callables ``trigger(trainer) -> bool`` deciding when an extension runs or
training stops. ``(period, 'epoch' | 'iteration')`` means an ``IntervalTrigger``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphcore.reporter import DictSummary


class IntervalTrigger:
    """Fires each time the epoch (or iteration) count crosses a multiple of ``period``."""

    def __init__(self, period: float, unit: str) -> None:
        if unit not in ("epoch", "iteration"):
            raise ValueError(f"Trigger unit must be either 'epoch' or 'iteration', got {unit!r}")
        if not period > 0:
            raise ValueError(f"the trigger period must be positive, got {period!r}")
        self.period = period
        self.unit = unit
        self._previous_iteration = 0
        self._previous_epoch_detail = 0.0

    def __call__(self, trainer: Any) -> bool:
        updater = trainer.updater
        if self.unit == "epoch":
            epoch_detail = updater.epoch_detail
            fire = self._previous_epoch_detail // self.period != epoch_detail // self.period
        else:
            iteration = updater.iteration
            fire = self._previous_iteration // self.period != iteration // self.period
        self._previous_iteration = updater.iteration
        self._previous_epoch_detail = updater.epoch_detail
        return fire

    def get_training_length(self) -> tuple[float, str]:
        return self.period, self.unit

    def serialize(self, serializer: Any) -> None:
        self._previous_iteration = serializer("previous_iteration", self._previous_iteration)
        self._previous_epoch_detail = serializer("previous_epoch_detail",
                                                 float(self._previous_epoch_detail))


class BestValueTrigger:
    """Fires when ``key`` (as LogReport summarises it every ``trigger``) reaches a new best."""

    def __init__(self, key: str, compare: Callable[[float, float], bool],
                 trigger: Any = (1, "epoch")) -> None:
        self._key = key
        self._compare = compare
        self._best_value: float | None = None
        self._interval_trigger = get_trigger(trigger)
        self._summary = DictSummary()

    def __call__(self, trainer: Any) -> bool:
        observation = trainer.observation
        if self._key in observation:
            self._summary.add({self._key: observation[self._key]})
        if not self._interval_trigger(trainer):
            return False
        stats = self._summary.compute_mean()
        self._summary = DictSummary()
        if self._key not in stats:
            return False
        value = float(stats[self._key])
        if self._best_value is None or self._compare(self._best_value, value):
            self._best_value = value
            return True
        return False

    def serialize(self, serializer: Any) -> None:
        self._interval_trigger.serialize(serializer["interval_trigger"])
        best = serializer("best_value", np.nan if self._best_value is None else self._best_value)
        self._best_value = None if best is None or np.isnan(best) else float(best)


class MaxValueTrigger(BestValueTrigger):
    def __init__(self, key: str, trigger: Any = (1, "epoch")) -> None:
        super().__init__(key, lambda best, new: new > best, trigger)


class MinValueTrigger(BestValueTrigger):
    def __init__(self, key: str, trigger: Any = (1, "epoch")) -> None:
        super().__init__(key, lambda best, new: new < best, trigger)


class EarlyStoppingTrigger:
    """Stops training when ``monitor`` has not improved for ``patience`` checks, or at
    ``max_trigger``; ``mode``: ``min``, ``max`` or ``auto`` (max for accuracy-like keys)."""

    def __init__(self, check_trigger: Any = (1, "epoch"), monitor: str = "main/loss",
                 patience: int = 3, mode: str = "auto", verbose: bool = False,
                 max_trigger: Any = (100, "epoch")) -> None:
        self.count = 0
        self.stopped_early = False
        self.patience = patience
        self.monitor = monitor
        self.verbose = verbose
        self.already_warning = False
        self._max_trigger = get_trigger(max_trigger)
        self._interval_trigger = get_trigger(check_trigger)
        self._summary = DictSummary()
        if mode == "auto":
            mode = "max" if "accuracy" in monitor else "min"
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be min, max or auto, got {mode!r}")
        self._better = (lambda new, best: new > best) if mode == "max" else \
            (lambda new, best: new < best)
        self.best = -np.inf if mode == "max" else np.inf

    def __call__(self, trainer: Any) -> bool:
        if self._max_trigger(trainer):
            return True
        observation = trainer.observation
        if self.monitor in observation:
            self._summary.add({self.monitor: observation[self.monitor]})
        if not self._interval_trigger(trainer):
            return False
        stats = self._summary.compute_mean()
        self._summary = DictSummary()
        if self.monitor not in stats:
            return False
        value = float(stats[self.monitor])
        if self._better(value, self.best):
            self.best = value
            self.count = 0
        else:
            self.count += 1
        self.stopped_early = self.count >= self.patience  # not Chainer's: says why it fired
        return self.stopped_early

    def get_training_length(self) -> tuple[float, str]:
        return self._max_trigger.get_training_length()

    def serialize(self, serializer: Any) -> None:
        self._max_trigger.serialize(serializer["max_trigger"])
        self._interval_trigger.serialize(serializer["interval_trigger"])
        self.count = serializer("count", self.count)
        self.best = serializer("best", float(self.best))


class ManualScheduleTrigger:
    """Fires at the listed epochs (or iterations): ``ManualScheduleTrigger([10, 15], 'epoch')``."""

    def __init__(self, points: Any, unit: str) -> None:
        if unit not in ("epoch", "iteration"):
            raise ValueError(f"Trigger unit must be either 'epoch' or 'iteration', got {unit!r}")
        self.points = points if isinstance(points, list) else [points]
        self.unit = unit
        self.finished = False
        self._previous_iteration = 0
        self._previous_epoch_detail = 0.0

    def __call__(self, trainer: Any) -> bool:
        updater = trainer.updater
        if self.unit == "epoch":
            now, before = updater.epoch_detail, self._previous_epoch_detail
        else:
            now, before = updater.iteration, self._previous_iteration
        fire = any(before < point <= now for point in self.points)
        self.finished = now >= max(self.points)
        self._previous_iteration = updater.iteration
        self._previous_epoch_detail = updater.epoch_detail
        return fire

    def serialize(self, serializer: Any) -> None:
        self._previous_iteration = serializer("previous_iteration", self._previous_iteration)
        self._previous_epoch_detail = serializer("previous_epoch_detail",
                                                 float(self._previous_epoch_detail))
        self.finished = serializer("finished", self.finished)


def _never(trainer: Any) -> bool:
    return False


def get_trigger(trigger: Any) -> Callable[[Any], bool]:
    """A trigger from a callable, ``None`` (never fires) or ``(period, unit)``."""
    if callable(trigger):
        return trigger
    if trigger is None:
        return _never
    return IntervalTrigger(*trigger)
