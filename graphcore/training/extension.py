"""``Extension``: something a Trainer calls when its trigger fires; priorities order the
extensions that fire at the same iteration (writers before editors before readers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PRIORITY_WRITER = 300
PRIORITY_EDITOR = 200
PRIORITY_READER = 100
PRIORITY_SNAPSHOT = -100  # after the readers, so a snapshot holds this iteration's log


class Extension:
    trigger: Any = (1, "iteration")
    priority = PRIORITY_READER
    name: str | None = None

    @property
    def default_name(self) -> str:
        return type(self).__name__

    def __call__(self, trainer: Any) -> None:
        raise NotImplementedError

    def initialize(self, trainer: Any) -> None:
        pass

    def finalize(self) -> None:
        pass

    def on_error(self, trainer: Any, exc: BaseException, tb: Any) -> None:
        pass

    def serialize(self, serializer: Any) -> None:
        pass


def make_extension(trigger: Any = None, default_name: str | None = None,
                   priority: int | None = None, finalizer: Callable[[], None] | None = None,
                   initializer: Callable[[Any], None] | None = None,
                   on_error: Callable[..., None] | None = None) -> Callable[[Any], Any]:
    """Decorate a function ``f(trainer)`` with the attributes ``Trainer.extend`` reads."""
    if trigger is None:
        trigger = Extension.trigger
    if priority is None:
        priority = Extension.priority

    def decorator(ext: Any) -> Any:
        ext.trigger = trigger
        ext.default_name = default_name or ext.__name__
        ext.priority = priority
        ext.finalize = finalizer
        ext.on_error = on_error
        ext.initialize = initializer
        return ext

    return decorator
