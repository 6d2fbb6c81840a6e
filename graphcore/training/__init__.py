"""``graphcore.training``: Chainer's training loop, and nothing of specs.

- ``trainer``: ``Trainer`` runs an ``updater`` until a stop trigger, calling its extensions;
- ``updaters``: ``StandardUpdater`` (a batch from the iterator, the converter, one optimizer
  update);
- ``triggers``: interval, early stopping, best value (``get_trigger``);
- ``extension``, ``extensions``: ``Evaluator``, ``LogReport``, ``PrintReport``, ``PlotReport``,
  ``snapshot``, ``ProgressBar``, ``DumpGraph``, the hyperparameter shifts,
  ``ReduceLROnPlateau``, ``TensorBoardReport`` (log entries as TensorBoard scalars; the
  optional ``tensorboardX`` package, imported only there);
- ``learning_rate``: learning-rate schedules by name (their settings, checks, the command
  line's form) and ``LearningRateSchedule``, a warm-up then a schedule as one extension.

The datasets, iterators, reporter, converter and serialize protocol it uses are Chainer's
modules of their own (``graphcore.datasets``, ``.iterators``, ``.reporter``, ``.dataset``,
``.serialization``); a spec's training (``graphtool train``) is ``graphcore.commands.train``."""

from graphcore.training import extensions, triggers, updaters  # noqa: F401
from graphcore.training.extension import (
    PRIORITY_EDITOR,
    PRIORITY_READER,
    PRIORITY_WRITER,
    Extension,
    make_extension,
)
from graphcore.training.trainer import Trainer
from graphcore.training.triggers import get_trigger
from graphcore.training.updaters import StandardUpdater, Updater

__all__ = ["PRIORITY_EDITOR", "PRIORITY_READER", "PRIORITY_WRITER", "Extension",
           "StandardUpdater", "Trainer", "Updater", "extensions", "get_trigger",
           "make_extension", "triggers", "updaters"]
