"""``Evaluator``: the mean of what the target reports over a (non-repeating) iterator, in
evaluation mode (``config.train`` False, no graph), reported under ``validation/``."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from graphcore import reporter as reporter_module
from graphcore.config import no_backprop_mode, using_config
from graphcore.dataset.convert import call_converter, check_device, concat_examples
from graphcore.training.extension import PRIORITY_WRITER, Extension


class Evaluator(Extension):
    trigger = 1, "epoch"
    default_name = "validation"
    priority = PRIORITY_WRITER

    def __init__(self, iterator: Any, target: Any,
                 converter: Callable[..., Any] = concat_examples, device: Any = None,
                 eval_hook: Callable[[Any], None] | None = None,
                 eval_func: Callable[..., Any] | None = None) -> None:
        check_device(device)
        self._iterators = iterator if isinstance(iterator, dict) else {"main": iterator}
        self._targets = target if isinstance(target, dict) else {"main": target}
        self.converter = converter
        self.device = device
        self.eval_hook = eval_hook
        self.eval_func = eval_func

    def get_iterator(self, name: str) -> Any:
        return self._iterators[name]

    def get_target(self, name: str) -> Any:
        return self._targets[name]

    def __call__(self, trainer: Any = None) -> dict[str, float]:
        reporter = reporter_module.Reporter()
        prefix = "" if self.name is None else self.name + "/"
        for name, target in self._targets.items():
            reporter.add_observer(prefix + name, target)
            reporter.add_observers(prefix + name, target.namedlinks(skipself=True))
        with reporter, using_config("train", False):
            result = self.evaluate()
        reporter_module.report(result)
        return result

    def evaluate(self) -> dict[str, float]:
        iterator = self._iterators["main"]
        eval_func = self.eval_func or self._targets["main"]
        if self.eval_hook:
            self.eval_hook(self)
        if hasattr(iterator, "reset"):
            iterator.reset()
            it = iterator
        else:
            it = copy.copy(iterator)
        summary = reporter_module.DictSummary()
        for batch in it:
            observation: dict[str, Any] = {}
            with reporter_module.report_scope(observation):
                in_arrays = call_converter(self.converter, batch, self.device)
                with no_backprop_mode():
                    if isinstance(in_arrays, tuple):
                        eval_func(*in_arrays)
                    elif isinstance(in_arrays, dict):
                        eval_func(**in_arrays)
                    else:
                        eval_func(in_arrays)
            summary.add(observation)
        return summary.compute_mean()
