"""``LogReport``: every ``trigger`` (default: each epoch) the mean of each observed value since
the last entry, plus ``epoch``, ``iteration`` and ``elapsed_time``, appended to ``log`` and
written as JSON to ``out/filename`` (``None``: kept in memory only)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from graphcore.reporter import DictSummary
from graphcore.serialization import Saver, load_json
from graphcore.training.extension import Extension
from graphcore.training.extensions.writer import Writer, write_atomic
from graphcore.training.triggers import get_trigger


class LogReport(Extension):
    def __init__(self, keys: Sequence[str] | None = None, trigger: Any = (1, "epoch"),
                 postprocess: Callable[[dict[str, Any]], None] | None = None,
                 filename: str | None = "log", writer: Writer | None = None,
                 **kwargs: Any) -> None:
        if "log_name" in kwargs:  # Chainer's older name of the argument
            filename = kwargs.pop("log_name")
        if kwargs:
            raise TypeError(f"LogReport: unexpected arguments {sorted(kwargs)}")
        self._keys = keys
        self._trigger = get_trigger(trigger)
        self._postprocess = postprocess
        self._filename = filename
        self._writer = writer or write_atomic
        self._log: list[dict[str, Any]] = []
        self._summary = DictSummary()

    def __call__(self, trainer: Any) -> None:
        observation = trainer.observation
        if self._keys is None:
            self._summary.add(observation)
        else:
            self._summary.add({k: observation[k] for k in self._keys if k in observation})
        if not self._trigger(trainer):
            return
        stats = {name: float(value) for name, value in self._summary.compute_mean().items()}
        updater = trainer.updater
        stats["epoch"] = updater.epoch
        stats["iteration"] = updater.iteration
        stats["elapsed_time"] = trainer.elapsed_time
        if self._postprocess is not None:
            self._postprocess(stats)
        self._log.append(stats)
        if self._filename is not None:
            name = self._filename.format(**stats)
            self._writer(os.path.join(trainer.out, name),
                         json.dumps(self._log, indent=4).encode("utf-8"))
        self._summary = DictSummary()

    @property
    def log(self) -> list[dict[str, Any]]:
        return self._log

    def serialize(self, serializer: Any) -> None:
        if hasattr(self._trigger, "serialize"):
            self._trigger.serialize(serializer["_trigger"])
        self._summary.serialize(serializer["_summary"])
        if isinstance(serializer, Saver):
            serializer("_log", json.dumps(self._log))
        else:
            self._log = load_json(serializer, "_log", _is_log, "a list of log entries "
                                  "(objects of numbers)")


def _is_log(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(entry, dict) and all(isinstance(v, int | float) and not isinstance(v, bool)
                                        for v in entry.values()) for entry in value)
