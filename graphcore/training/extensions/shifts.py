"""``ExponentialShift`` / ``LinearShift``: change an optimizer hyperparameter (``lr``,
``alpha``, ``momentum``) as training goes, as Chainer's extensions do; the value is restored
from snapshots (their state is the number of calls)."""

from __future__ import annotations

from typing import Any

from graphcore.training.extension import Extension


def _optimizer(trainer: Any, optimizer: Any) -> Any:
    return optimizer or trainer.updater.get_optimizer("main")


class ExponentialShift(Extension):
    """Multiply ``attr`` by ``rate`` at each call, clipped at ``target``."""

    def __init__(self, attr: str, rate: float, init: float | None = None,
                 target: float | None = None, optimizer: Any = None) -> None:
        if rate < 0:
            raise ValueError("ExponentialShift does not support negative rate")
        self._attr, self._rate, self._init, self._target = attr, rate, init, target
        self._optimizer = optimizer
        self._t = 0
        self._last_value: float | None = None

    def initialize(self, trainer: Any) -> None:
        optimizer = _optimizer(trainer, self._optimizer)
        if self._init is None:
            self._init = getattr(optimizer.hyperparam, self._attr)
        value = self._last_value if self._last_value is not None else self._init
        setattr(optimizer.hyperparam, self._attr, value)

    def __call__(self, trainer: Any) -> None:
        self._t += 1
        value = self._init * self._rate ** self._t
        if self._target is not None:
            if self._rate > 1:
                value = min(value, self._target) if self._target / value > 0 else value
            else:
                value = max(value, self._target) if self._target / value > 0 else value
        setattr(_optimizer(trainer, self._optimizer).hyperparam, self._attr, value)
        self._last_value = value

    def serialize(self, serializer: Any) -> None:
        self._t = serializer("_t", self._t)
        last = serializer("_last_value", float("nan") if self._last_value is None
                          else float(self._last_value))
        self._last_value = None if last != last else float(last)


class LinearShift(Extension):
    """Move ``attr`` linearly from ``value_range[0]`` to ``value_range[1]`` between the
    iterations ``time_range[0]`` and ``time_range[1]``."""

    def __init__(self, attr: str, value_range: tuple[float, float],
                 time_range: tuple[int, int], optimizer: Any = None) -> None:
        self._attr, self._value_range, self._time_range = attr, value_range, time_range
        self._optimizer = optimizer
        self._t = 0

    def initialize(self, trainer: Any) -> None:
        setattr(_optimizer(trainer, self._optimizer).hyperparam, self._attr, self._value())

    def __call__(self, trainer: Any) -> None:
        self._t += 1
        setattr(_optimizer(trainer, self._optimizer).hyperparam, self._attr, self._value())

    def _value(self) -> float:
        t1, t2 = self._time_range
        v1, v2 = self._value_range
        if self._t <= t1:
            return v1
        if self._t >= t2:
            return v2
        return v1 + (v2 - v1) * (self._t - t1) / (t2 - t1)

    def serialize(self, serializer: Any) -> None:
        self._t = serializer("_t", self._t)
