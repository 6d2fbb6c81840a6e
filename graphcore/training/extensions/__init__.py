"""``graphcore.training.extensions``: Chainer's training extensions.

- ``shifts``: ``ExponentialShift``, ``LinearShift``; ``schedule_shifts``: Chainer's
  ``StepShift``, ``MultistepShift``, ``WarmupShift``, ``PolynomialShift``, ``InverseShift``
  and a ``CosineShift``; ``reduce_on_plateau``: ``ReduceLROnPlateau`` (Keras' callback);
- ``evaluator``, ``log_report``, ``print_report``, ``progress_bar``, ``plot_report``,
  ``snapshot``, ``dump_graph``, ``value_observation``, ``writer``, ``tensorboard_report``.
"""

from graphcore.training.extensions.dump_graph import DumpGraph, dump_graph
from graphcore.training.extensions.evaluator import Evaluator
from graphcore.training.extensions.log_report import LogReport
from graphcore.training.extensions.plot_report import PlotReport
from graphcore.training.extensions.print_report import PrintReport
from graphcore.training.extensions.progress_bar import ProgressBar
from graphcore.training.extensions.reduce_on_plateau import ReduceLROnPlateau
from graphcore.training.extensions.schedule_shifts import (
    CosineShift,
    InverseShift,
    MultistepShift,
    PolynomialShift,
    StepShift,
    WarmupShift,
)
from graphcore.training.extensions.shifts import ExponentialShift, LinearShift
from graphcore.training.extensions.snapshot import snapshot, snapshot_object
from graphcore.training.extensions.tensorboard_report import TensorBoardReport
from graphcore.training.extensions.value_observation import observe_lr, observe_value

__all__ = ["CosineShift", "DumpGraph", "Evaluator", "ExponentialShift", "InverseShift",
           "LinearShift", "LogReport", "MultistepShift", "PlotReport", "PolynomialShift",
           "PrintReport", "ProgressBar", "ReduceLROnPlateau", "StepShift", "TensorBoardReport",
           "WarmupShift", "dump_graph", "observe_lr", "observe_value", "snapshot",
           "snapshot_object"]
