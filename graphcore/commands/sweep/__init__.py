"""Sweeps: one spec run at every point of a grid of settings, each point a task that any
Dask worker with graphtool installed can run.

- ``grid``: ``--grid KEY=V1,V2`` items parsed and expanded (every combination, or
  ``sample_grid`` for K distinct random points; at most ``MAX_POINTS``, known from the
  axes' sizes before anything is expanded);
- ``tasks``: a point made self-contained: its settings and the sweep's ``SweepFiles`` (spec
  text and the contents of every file the spec reads: ``file:`` inputs, ``data:``,
  ``validation: file:``, ``--input`` and ``--plugin`` files, together at most
  ``MAX_CARRIED_BYTES``, read once and shared by every point), keyed by a hash of all of it,
  so ``--resume`` knows what already ran;
- ``task``: ``run_point``, the function a worker runs (a spec with ``data:``/``train:``
  trains as ``graphtool train`` trains it); it never raises: a failure is a row;
- ``records``: rows as CSV and JSON, sorting by a figure, the command line of one point;
- ``resume``: an earlier ``sweep.json`` read back as untrusted input (bounded, every row
  checked, errors located at the row) and the rows of this sweep's points kept;
- ``schedule``: the files scattered to every worker once, the tasks submitted to a Dask
  client referring to them, rows yielded as they finish.

The library never prints; ``graphtool sweep`` (``cli/commands/sweep.py``) draws the table.
"""

from graphcore.commands.sweep.grid import (
           COMMANDS,
           MAX_POINTS,
           GridAxis,
           SweepOptionError,
           expand_grid,
           grid_size,
           parse_grid,
           sample_grid,
)
from graphcore.commands.sweep.records import (
           best_row,
           command_line,
           figure_names,
           rows_csv,
           sort_rows,
           sweep_document,
)
from graphcore.commands.sweep.schedule import RESOURCE, local_cluster, run_tasks
from graphcore.commands.sweep.task import run_point
from graphcore.commands.sweep.tasks import SweepFiles, SweepTask, make_tasks

__all__ = ["COMMANDS", "MAX_POINTS", "RESOURCE", "GridAxis", "SweepFiles", "SweepOptionError",
           "SweepTask", "best_row", "command_line", "expand_grid", "figure_names", "grid_size",
           "local_cluster", "make_tasks", "parse_grid", "rows_csv", "run_point", "run_tasks",
           "sample_grid", "sort_rows", "sweep_document"]
