"""Chainer's reporter: named observations collected during a training step.

A ``Reporter`` maps observers (links) to names; ``report({'loss': loss}, link)`` inside a
``reporter.scope(observation)`` stores ``observation['main/loss']``. ``report`` outside any
scope does nothing, as in Chainer, so models that report still run on their own.

>>> reporter = Reporter()
>>> reporter.add_observer('main', model)
>>> observation = {}
>>> with reporter.scope(observation):
...     report({'loss': 1.5}, model)
>>> observation
{'main/loss': 1.5}
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from graphcore.config import config
from graphcore.serialization import Saver, load_json
from graphcore.variable import Variable

_reporters: list[Reporter] = []


def _value(value: Any) -> Any:
    """A reported value without its graph (Chainer keeps none unless keep_graph_on_report)."""
    if isinstance(value, Variable) and not config.keep_graph_on_report:
        return value.array
    return value


class Reporter:
    """Collects observed values under the names of their observers."""

    def __init__(self) -> None:
        self._observer_names: dict[int, str] = {}
        self.observation: dict[str, Any] = {}

    def __enter__(self) -> Reporter:
        _reporters.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _reporters.pop()

    @contextlib.contextmanager
    def scope(self, observation: dict[str, Any]) -> Iterator[None]:
        """Make this reporter current and write its reports into ``observation``."""
        old = self.observation
        self.observation = observation
        self.__enter__()
        try:
            yield
        finally:
            self.__exit__(None, None, None)
            self.observation = old

    def add_observer(self, name: str, observer: object) -> None:
        self._observer_names[id(observer)] = name

    def add_observers(self, prefix: str, observers: Iterable[tuple[str, object]]) -> None:
        for name, observer in observers:
            self._observer_names[id(observer)] = prefix + name

    def report(self, values: Mapping[str, Any], observer: object = None) -> None:
        values = {key: _value(value) for key, value in values.items()}
        if observer is None:
            self.observation.update(values)
            return
        name = self._observer_names.get(id(observer))
        if name is None:
            raise KeyError("Given observer is not registered to the reporter.")
        for key, value in values.items():
            self.observation[f"{name}/{key}"] = value


def get_current_reporter() -> Reporter:
    return _reporters[-1]


def report(values: Mapping[str, Any], observer: object = None) -> None:
    """Report ``values`` to the current reporter (nothing happens outside a reporter)."""
    if _reporters:
        _reporters[-1].report(values, observer)


@contextlib.contextmanager
def report_scope(observation: dict[str, Any]) -> Iterator[None]:
    """Direct the current reporter's reports into ``observation`` inside the block."""
    with _reporters[-1].scope(observation):
        yield


class Summary:
    """Online (weighted) mean and standard deviation of scalar values."""

    def __init__(self) -> None:
        self._x = 0.0
        self._x2 = 0.0
        self._n = 0.0

    def add(self, value: Any, weight: float = 1) -> None:
        if isinstance(value, Variable):
            value = value.array
        value = float(np.asarray(value))
        self._x += weight * value
        self._x2 += weight * value * value
        self._n += weight

    def compute_mean(self) -> float:
        return self._x / self._n

    def make_statistics(self) -> tuple[float, float]:
        mean = self._x / self._n
        var = max(self._x2 / self._n - mean * mean, 0.0)
        return mean, float(np.sqrt(var))

    def serialize(self, serializer: Any) -> None:
        self._x = float(serializer("_x", self._x))
        self._x2 = float(serializer("_x2", self._x2))
        self._n = float(serializer("_n", self._n))


class DictSummary:
    """A ``Summary`` per key of the dictionaries added (scalar values only)."""

    def __init__(self) -> None:
        self._summaries: dict[str, Summary] = {}

    def add(self, d: Mapping[str, Any]) -> None:
        for key, value in d.items():
            if isinstance(value, Variable):
                value = value.array
            if isinstance(value, bool | int | float | np.number) or (
                    isinstance(value, np.ndarray) and value.size == 1):
                self._summaries.setdefault(key, Summary()).add(value)

    def compute_mean(self) -> dict[str, float]:
        return {key: s.compute_mean() for key, s in self._summaries.items()}

    def make_statistics(self) -> dict[str, float]:
        stats = {}
        for key, s in self._summaries.items():
            mean, std = s.make_statistics()
            stats[key] = mean
            stats[key + ".std"] = std
        return stats

    def serialize(self, serializer: Any) -> None:
        if isinstance(serializer, Saver):
            names = list(self._summaries)
            serializer("_names", json.dumps(names))
        else:
            names = load_json(serializer, "_names", lambda v: isinstance(v, list) and all(
                isinstance(n, str) for n in v), "a list of names")
        for index, name in enumerate(names):
            summary = self._summaries.setdefault(name, Summary())
            summary.serialize(serializer[f"_summaries/{index}"])
