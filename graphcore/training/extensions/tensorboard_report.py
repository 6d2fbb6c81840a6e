"""``TensorBoardReport``: the entries of one or more ``LogReport``s written as TensorBoard
scalars (event files in ``logdir``), each as it is made: an entry's every value but its
``epoch``, ``iteration`` and ``elapsed_time`` becomes the scalar ``<kind>/<name>`` at the
entry's iteration (``kind``: the name its ``LogReport`` is given, e.g. ``step`` and
``epoch``), so per-step and per-epoch curves share one axis.

Needs the optional ``tensorboardX`` package (``require_tensorboardx()`` says so before
anything runs), imported only here. A trainer resumed from a snapshot at iteration T starts a
new event file whose first record purges the scalars after T (``purge_step``): those were
written by the run after its snapshot, and TensorBoard shows the resumed run's instead. The
entries the ``LogReport``s already hold when the loop starts (restored with a snapshot) are not
written again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from graphcore.errors import GraphcoreError
from graphcore.training.extension import Extension

BOOKKEEPING = ("epoch", "iteration", "elapsed_time")


class TensorBoardUnavailable(GraphcoreError, ImportError):
    """The ``tensorboardX`` package, which writes TensorBoard's event files, is missing."""


def require_tensorboardx() -> None:
    """Raise ``TensorBoardUnavailable`` unless ``tensorboardX`` can be imported."""
    try:
        import tensorboardX  # noqa: F401
    except ImportError as e:
        raise TensorBoardUnavailable(f"TensorBoard event files are written by the tensorboardX "
                                     f"package, which is not installed ({e})") from None


class TensorBoardReport(Extension):
    """``reports``: ``{kind: LogReport}``; ``name(key)``: a value's name in its tag (default:
    the observed key itself, e.g. ``main/loss``)."""

    trigger = 1, "iteration"
    priority = 50  # after the LogReports (readers, 100) have made this step's entries

    def __init__(self, logdir: str | Path, reports: Mapping[str, Any],
                 name: Callable[[str], str] | None = None) -> None:
        require_tensorboardx()
        self.logdir = Path(logdir)
        self.reports = dict(reports)
        self.tag = name or (lambda key: key)
        self.seen = {kind: 0 for kind in self.reports}
        self.writer: Any = None

    def initialize(self, trainer: Any) -> None:
        from tensorboardX import SummaryWriter

        start = trainer.updater.iteration
        # an event file is named by the second it was opened: a resume within that second
        # would replace the file before it; the count of files already there keeps them apart,
        # and in order (TensorBoard reads a folder's files in the order of their names)
        earlier = len(list(self.logdir.glob("events.out.tfevents.*"))) if \
            self.logdir.is_dir() else 0
        self.writer = SummaryWriter(str(self.logdir), purge_step=start + 1 if start else None,
                                    filename_suffix=f".{earlier + 1:06d}")
        self.seen = {kind: len(report.log) for kind, report in self.reports.items()}

    def __call__(self, trainer: Any) -> None:
        wrote = False
        for kind, report in self.reports.items():
            for entry in report.log[self.seen[kind]:]:
                for key, value in entry.items():
                    if key not in BOOKKEEPING:
                        self.writer.add_scalar(f"{kind}/{self.tag(key)}", float(value),
                                               int(entry["iteration"]))
                wrote = True
            self.seen[kind] = len(report.log)
        if wrote:  # a run killed later still leaves every entry made so far
            self.writer.flush()

    def finalize(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
