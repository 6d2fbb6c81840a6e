"""``graphcore.training.extensions``: Chainer's training extensions."""

from graphcore.training.extensions.dump_graph import DumpGraph, dump_graph
from graphcore.training.extensions.evaluator import Evaluator
from graphcore.training.extensions.log_report import LogReport
from graphcore.training.extensions.plot_report import PlotReport
from graphcore.training.extensions.print_report import PrintReport
from graphcore.training.extensions.progress_bar import ProgressBar
from graphcore.training.extensions.shifts import ExponentialShift, LinearShift
from graphcore.training.extensions.snapshot import snapshot, snapshot_object
from graphcore.training.extensions.tensorboard_report import TensorBoardReport
from graphcore.training.extensions.value_observation import observe_lr, observe_value

__all__ = ["DumpGraph", "Evaluator", "ExponentialShift", "LinearShift", "LogReport",
           "PlotReport", "PrintReport", "ProgressBar", "TensorBoardReport", "dump_graph",
           "observe_lr", "observe_value", "snapshot", "snapshot_object"]
