"""``observe_value`` / ``observe_lr``: report a value computed from the trainer (the learning
rate of an optimizer) every iteration, as Chainer's extensions do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphcore.training.extension import PRIORITY_WRITER, make_extension


def observe_value(observation_key: str, target_func: Callable[[Any], Any]) -> Any:
    @make_extension(trigger=(1, "epoch"), priority=PRIORITY_WRITER)
    def _observe_value(trainer: Any) -> None:
        trainer.observation[observation_key] = target_func(trainer)

    return _observe_value


def observe_lr(optimizer_name: str = "main", observation_key: str = "lr") -> Any:
    def learning_rate(trainer: Any) -> Any:
        return trainer.updater.get_optimizer(optimizer_name).lr

    return observe_value(observation_key, learning_rate)
