"""``Trainer``: runs an updater until the stop trigger fires, calling extensions (evaluation,
logs, plots, snapshots) when their triggers fire, as Chainer's ``training.Trainer``.

>>> trainer = Trainer(StandardUpdater(train_iter, optimizer), (20, 'epoch'), out='result')
>>> trainer.extend(extensions.Evaluator(test_iter, model))
>>> trainer.extend(extensions.LogReport())
>>> trainer.run()

Each iteration runs inside ``reporter.scope(trainer.observation)``, so what the model reports
(``main/loss``) and what extensions report (``validation/main/loss``) land in one dictionary.
``serializers.save_npz(path, trainer)`` saves the updater (iterators, optimizers, models), the
extensions' state and numpy's global random state, so a run resumed from a snapshot draws the
same batches (and dropout masks) as an uninterrupted one.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from typing import Any

from graphcore.reporter import Reporter
from graphcore.serialization import Saver, serialize_random_state
from graphcore.training import extension as extension_module
from graphcore.training.triggers import get_trigger


@dataclass
class _ExtensionEntry:
    extension: Any
    priority: int
    trigger: Any
    call_before_training: bool = False


class Trainer:
    def __init__(self, updater: Any, stop_trigger: Any = None, out: str = "result",
                 extensions: list[Any] | None = None) -> None:
        self.updater = updater
        self.stop_trigger = get_trigger(stop_trigger)
        self.observation: dict[str, Any] = {}
        self.out = out
        self.reporter = Reporter()
        for name, optimizer in updater.get_all_optimizers().items():
            self.reporter.add_observer(name, optimizer.target)
            self.reporter.add_observers(name, optimizer.target.namedlinks(skipself=True))
        self._extensions: dict[str, _ExtensionEntry] = {}
        self._start_at: float | None = None
        self._snapshot_elapsed_time = 0.0
        self._final_elapsed_time: float | None = None
        self._done = False
        updater.connect_trainer(self)
        for ext in extensions or ():
            self.extend(ext)

    @property
    def elapsed_time(self) -> float:
        """Seconds of training so far, including those before a resumed snapshot."""
        if self._done:
            return self._final_elapsed_time
        if self._start_at is None:
            raise RuntimeError("training has not been started yet")
        return time.perf_counter() - self._start_at + self._snapshot_elapsed_time

    def extend(self, extension: Any, name: str | None = None, trigger: Any = None,
               priority: int | None = None, *, call_before_training: bool = False) -> None:
        if name is None:
            name = getattr(extension, "name", None)
            if name is None:
                name = getattr(extension, "default_name", None)
                if name is None:
                    name = getattr(extension, "__name__", None)
                    if name is None:
                        raise TypeError("name is not given for the extension")
        if name == "training":
            raise ValueError('the name "training" is prohibited as an extension name')
        if trigger is None:
            trigger = getattr(extension, "trigger", (1, "iteration"))
        trigger = get_trigger(trigger)
        if priority is None:
            priority = getattr(extension, "priority", extension_module.PRIORITY_READER)
        modified = name
        ordinal = 0
        while modified in self._extensions:
            ordinal += 1
            modified = f"{name}_{ordinal}"
        extension.name = modified
        self._extensions[modified] = _ExtensionEntry(extension, priority, trigger,
                                                     call_before_training)

    def get_extension(self, name: str) -> Any:
        if name in self._extensions:
            return self._extensions[name].extension
        raise ValueError(f"extension {name} not found")

    def run(self, show_loop_exception_msg: bool = True) -> None:
        """Train until the stop trigger fires (the library prints nothing, whatever
        ``show_loop_exception_msg`` says: an exception reaches the caller unchanged)."""
        if self._done:
            raise RuntimeError("cannot run training loop multiple times")
        os.makedirs(self.out, exist_ok=True)
        order = sorted(self._extensions, key=lambda n: self._extensions[n].priority,
                       reverse=True)
        extensions = [(name, self._extensions[name]) for name in order]
        self._start_at = time.perf_counter()
        for _, entry in extensions:
            initializer = getattr(entry.extension, "initialize", None)
            finished = getattr(entry.trigger, "finished", False)
            if initializer and not finished:
                initializer(self)
        for _, entry in extensions:
            if entry.call_before_training:
                entry.extension(self)
        update = self.updater.update
        reporter = self.reporter
        stop_trigger = self.stop_trigger
        try:
            while not stop_trigger(self):
                self.observation = {}
                with reporter.scope(self.observation):
                    update()
                    for _, entry in extensions:
                        if entry.trigger(self):
                            entry.extension(self)
        except BaseException as e:
            tb = sys.exc_info()[2]
            for _, entry in extensions:
                handler = getattr(entry.extension, "on_error", None)
                if handler:
                    handler(self, e, tb)
            raise
        finally:
            for _, entry in extensions:
                finalize = getattr(entry.extension, "finalize", None)
                if finalize:
                    finalize()
            self.updater.finalize()
        self._final_elapsed_time = self.elapsed_time
        self._done = True

    def serialize(self, serializer: Any) -> None:
        self.updater.serialize(serializer["updater"])
        if hasattr(self.stop_trigger, "serialize"):
            self.stop_trigger.serialize(serializer["stop_trigger"])
        ext_s = serializer["extensions"]
        trig_s = serializer["extension_triggers"]
        for name, entry in self._extensions.items():
            if hasattr(entry.extension, "serialize"):
                entry.extension.serialize(ext_s[name])
            if hasattr(entry.trigger, "serialize"):
                entry.trigger.serialize(trig_s[name])
        serialize_random_state(serializer["_numpy_random"], None)
        if isinstance(serializer, Saver):
            serializer("_snapshot_elapsed_time", self.elapsed_time if self._start_at else 0.0)
        else:
            self._snapshot_elapsed_time = serializer("_snapshot_elapsed_time", 0.0)
