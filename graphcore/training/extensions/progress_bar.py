"""``ProgressBar``: a text progress bar of the training length on ``out`` (default
``sys.stdout``) every ``update_interval`` iterations."""

from __future__ import annotations

import sys
from typing import IO, Any

from graphcore.training.extension import PRIORITY_READER, Extension


class ProgressBar(Extension):
    trigger = 1, "iteration"
    priority = PRIORITY_READER

    def __init__(self, training_length: tuple[float, str] | None = None,
                 update_interval: int = 100, bar_length: int = 50,
                 out: IO[str] | None = None) -> None:
        self._training_length = training_length
        self._update_interval = update_interval
        self._bar_length = bar_length
        self._out = out

    def __call__(self, trainer: Any) -> None:
        if trainer.updater.iteration % self._update_interval:
            return
        length = self._training_length
        if length is None:
            get = getattr(trainer.stop_trigger, "get_training_length", None)
            length = get() if get else None
        out = sys.stdout if self._out is None else self._out
        updater = trainer.updater
        if length is None:
            out.write(f"iteration {updater.iteration}\n")
        else:
            period, unit = length
            done = updater.epoch_detail if unit == "epoch" else updater.iteration
            rate = min(done / period, 1.0)
            filled = int(rate * self._bar_length)
            out.write(f"[{'#' * filled}{'.' * (self._bar_length - filled)}] "
                      f"{rate * 100:6.2f}%  epoch {updater.epoch}  iteration "
                      f"{updater.iteration}\n")
        if hasattr(out, "flush"):
            out.flush()
