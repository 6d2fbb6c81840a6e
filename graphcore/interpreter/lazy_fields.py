"""Dataclass fields built on first read (``RunResult``'s per-example path and outputs).

A batched call (``spec.batching``) knows every example's path entries and outputs as a few
group arrays; expanding them into one Python object per example costs more than the batched
run itself, and most callers (benchmarks, training without metrics) never read them. Such a
field is assigned a ``Deferred(build)``: the first read calls ``build()`` once and stores its
value in the field's place, so every later read, ``==``, ``repr`` and ``dataclasses.asdict``
sees an ordinary value (a plain ``list``), exactly as if it had been assigned up front.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Deferred:
    """A field's value, made by ``build()`` on the field's first read."""

    __slots__ = ("build",)

    def __init__(self, build: Callable[[], Any]) -> None:
        self.build = build


class _LazyField:
    """A data descriptor over the instance's ``__dict__`` entry of the same name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name]
        if type(value) is Deferred:
            value = obj.__dict__[self.name] = value.build()
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value


def lazy_fields(cls: type, *names: str) -> None:
    """Let ``cls`` (a dataclass, already made) take ``Deferred`` values in fields ``names``."""
    for name in names:
        setattr(cls, name, _LazyField(name))
