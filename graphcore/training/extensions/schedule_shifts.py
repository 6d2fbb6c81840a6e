"""Schedules of an optimizer hyperparameter (``lr``, ``alpha``, ``momentum``), one value per
call of the extension (a trigger of ``(1, "epoch")`` makes it per epoch):

- Chainer 7.8.1's ``StepShift`` (``init * gamma ** floor(t / step)``), ``MultistepShift``
  (times ``gamma`` at each of ``step_value``), ``WarmupShift`` (linear from ``warmup_start``
  to ``init`` over ``warmup_iter`` calls), ``PolynomialShift`` (``init * (1 - t / max_count)
  ** rate``) and ``InverseShift`` (``init * (1 + gamma * t) ** -power``, Caffe's ``inv``);
- ``CosineShift`` (not in Chainer): half a cosine from ``init`` down to ``min_value`` over
  ``period`` calls, then ``min_value`` (PyTorch's ``CosineAnnealingLR`` without restarts).

``t`` is the number of calls so far; ``initialize`` (before the loop) sets the value of the
``t`` reached, so a trainer resumed from a snapshot continues with the value it had. Where
Chainer's own ``WarmupShift`` and ``MultistepShift`` go back to their first value on resume
(they keep only ``t``), these continue.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

from graphcore.training.extension import Extension


class _Shift(Extension):
    """A hyperparameter set from the number of calls ``t`` (``value(t)``); ``init`` None: the
    optimizer's value when training starts."""

    def __init__(self, attr: str, init: float | None, optimizer: Any) -> None:
        self._attr, self._init, self._optimizer = attr, init, optimizer
        self._t = 0
        self._last_value: float | None = None

    def _target(self, trainer: Any) -> Any:
        return self._optimizer or trainer.updater.get_optimizer("main")

    def initialize(self, trainer: Any) -> None:
        optimizer = self._target(trainer)
        if self._init is None:
            self._init = float(getattr(optimizer.hyperparam, self._attr))
        if self._last_value is not None:  # resumed from a snapshot
            self._set(optimizer, self._last_value)
        else:
            self._set(optimizer, self.first_value() if self._t == 0 else self.value(self._t))

    def first_value(self) -> float:
        """The value before the first call (``init``, unclipped, as in Chainer)."""
        return self._init

    def __call__(self, trainer: Any) -> None:
        self._t += 1
        self._set(self._target(trainer), self.value(self._t))

    def value(self, t: int) -> float:
        raise NotImplementedError

    def _set(self, optimizer: Any, value: float) -> None:
        setattr(optimizer.hyperparam, self._attr, value)
        self._last_value = value

    def serialize(self, serializer: Any) -> None:
        self._t = serializer("_t", self._t)
        last = serializer("_last_value", float("nan") if self._last_value is None
                          else float(self._last_value))
        self._last_value = None if math.isnan(last) else float(last)


def _clipped(value: float, target: float | None, rising: bool) -> float:
    """``value`` held at ``target`` once it passes it (the ratio test works for negative
    values too, as Chainer's does)."""
    if target is None:
        return value
    if rising:
        return target if value / target > 1 else value
    return target if value / target < 1 else value


class StepShift(_Shift):
    """``init * gamma ** floor(t / step)``, held at ``target`` once it reaches it."""

    def __init__(self, attr: str, gamma: float, step: int, init: float | None = None,
                 target: float | None = None, optimizer: Any = None) -> None:
        if not step >= 1:
            raise ValueError(f"StepShift: step must be a positive integer, got {step!r}")
        super().__init__(attr, init, optimizer)
        self._gamma, self._step, self._target_value = gamma, int(step), target

    def value(self, t: int) -> float:
        return _clipped(self._init * self._gamma ** (t // self._step), self._target_value,
                        self._gamma > 1)


class MultistepShift(_Shift):
    """``init * gamma ** k``, ``k`` the number of ``step_value`` entries reached by ``t``."""

    def __init__(self, attr: str, init: float | None, gamma: float, step_value: Sequence[int],
                 optimizer: Any = None) -> None:
        super().__init__(attr, init, optimizer)
        self._gamma = gamma
        self._step_value = sorted(int(s) for s in step_value)

    def value(self, t: int) -> float:
        return self._init * self._gamma ** bisect.bisect_right(self._step_value, t)


class WarmupShift(_Shift):
    """``warmup_start + (init - warmup_start) * t / warmup_iter`` for the first
    ``warmup_iter`` calls, then ``init``; ``warmup_start`` None: the optimizer's value."""

    def __init__(self, attr: str, warmup_start: float | None, warmup_iter: int, init: float,
                 optimizer: Any = None) -> None:
        if not warmup_iter >= 0:
            raise ValueError(f"WarmupShift: warmup_iter must be >= 0, got {warmup_iter!r}")
        super().__init__(attr, init, optimizer)
        self._warmup_start, self._warmup_iter = warmup_start, int(warmup_iter)

    @property
    def finished(self) -> bool:
        """Whether the warm-up has reached ``init`` (its calls no longer change anything)."""
        return self._t >= self._warmup_iter

    def initialize(self, trainer: Any) -> None:
        if self._warmup_start is None:
            self._warmup_start = float(getattr(self._target(trainer).hyperparam, self._attr))
        super().initialize(trainer)

    def first_value(self) -> float:
        return self.value(0)

    def value(self, t: int) -> float:
        if t >= self._warmup_iter:
            return self._init
        return (t * self._init + (self._warmup_iter - t) * self._warmup_start) / \
            self._warmup_iter


class PolynomialShift(_Shift):
    """``init * max(1 - t / max_count, 0) ** rate``, held at ``target`` once it reaches it."""

    def __init__(self, attr: str, rate: float, max_count: int, init: float | None = None,
                 target: float | None = None, optimizer: Any = None) -> None:
        super().__init__(attr, init, optimizer)
        self._rate, self._max_count, self._target_value = rate, max_count, target

    def value(self, t: int) -> float:
        decayed = self._init * max(1 - t / self._max_count, 0) ** self._rate
        return _clipped(decayed, self._target_value, self._rate <= 0)


class InverseShift(_Shift):
    """``init * (1 + gamma * t) ** -power``, held at ``target`` once it reaches it."""

    def __init__(self, attr: str, gamma: float, power: float, init: float | None = None,
                 target: float | None = None, optimizer: Any = None) -> None:
        if gamma < 0:
            raise ValueError("InverseShift does not support negative gamma")
        super().__init__(attr, init, optimizer)
        self._gamma, self._power, self._target_value = gamma, power, target

    def value(self, t: int) -> float:
        return _clipped(self._init * (1 + self._gamma * t) ** (-self._power),
                        self._target_value, self._power < 0)


class CosineShift(_Shift):
    """``min_value + (init - min_value) * (1 + cos(pi * t / period)) / 2`` for ``t`` up to
    ``period``, then ``min_value``. ``period`` is kept in snapshots: a run continued for
    longer than it first meant stays at ``min_value`` after the period it began with."""

    def __init__(self, attr: str, period: int, min_value: float = 0.0,
                 init: float | None = None, optimizer: Any = None) -> None:
        if not period >= 1:
            raise ValueError(f"CosineShift: period must be a positive integer, got {period!r}")
        super().__init__(attr, init, optimizer)
        self._period, self._min_value = int(period), min_value

    def value(self, t: int) -> float:
        share = min(t, self._period) / self._period
        return self._min_value + (self._init - self._min_value) * \
            (1 + math.cos(math.pi * share)) / 2

    def serialize(self, serializer: Any) -> None:
        super().serialize(serializer)
        self._period = serializer("_period", self._period)
