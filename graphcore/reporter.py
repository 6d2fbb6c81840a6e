"""Chainer's reporter: ``report({'loss': loss}, observer)`` inside model code.

A model reports values; whoever runs it may collect them with a ``Reporter``:

>>> r = Reporter()
>>> r.add_observer("main", model)
>>> with r.scope(observation := {}):
...     loss = model(x, t)                 # model calls report({'loss': loss}, self)
>>> observation                            # {'main/loss': <Variable ...>}

Outside any ``scope`` a report is dropped, as in Chainer (so model code that reports runs
unchanged in a plain loop). Observer names come from ``add_observer`` (and
``add_observers(prefix, link.namedlinks())``); an observer the reporter does not know is an
error naming it, as Chainer's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["Reporter", "get_current_reporter", "report", "report_scope"]

_stack: list[Reporter] = []


class Reporter:
    def __init__(self) -> None:
        self.observation: dict[str, Any] | None = None
        self._names: dict[int, str] = {}

    def add_observer(self, name: str, observer: Any) -> None:
        self._names[id(observer)] = name

    def add_observers(self, prefix: str, observers: Iterable[tuple[str, Any]]) -> None:
        for name, observer in observers:
            self._names[id(observer)] = prefix + name

    @contextlib.contextmanager
    def scope(self, observation: dict[str, Any]) -> Iterator[None]:
        """Collect reports made inside the block into ``observation``."""
        old = self.observation
        self.observation = observation
        _stack.append(self)
        try:
            yield
        finally:
            _stack.pop()
            self.observation = old

    def report(self, values: dict[str, Any], observer: Any = None) -> None:
        if self.observation is None:
            return
        prefix = ""
        if observer is not None:
            name = self._names.get(id(observer))
            if name is None:
                raise KeyError(f"report: the observer {type(observer).__name__} is not "
                               "registered with this reporter (add_observer)")
            prefix = name + "/"
        for key, value in values.items():
            self.observation[prefix + key] = value


def get_current_reporter() -> Reporter | None:
    return _stack[-1] if _stack else None


def report(values: dict[str, Any], observer: Any = None) -> None:
    """Report ``values`` to the innermost active reporter; a no-op when there is none."""
    if _stack:
        _stack[-1].report(values, observer)


@contextlib.contextmanager
def report_scope(observation: dict[str, Any]) -> Iterator[None]:
    """Collect reports of the innermost reporter (a fresh one when none is active)."""
    reporter = _stack[-1] if _stack else Reporter()
    with reporter.scope(observation):
        yield
