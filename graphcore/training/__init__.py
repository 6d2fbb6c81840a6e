"""``graphcore.training``: Chainer's training loop. ``Trainer`` runs an ``updater`` until a
stop trigger; ``extensions`` evaluate, log, plot and snapshot. The datasets, iterators,
reporter and converter Chainer keeps elsewhere live here too and are re-exported where Chainer
scripts import them (``graphcore.datasets``, ``graphcore.iterators``, ``graphcore.reporter``,
``graphcore.dataset.concat_examples``)."""

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
