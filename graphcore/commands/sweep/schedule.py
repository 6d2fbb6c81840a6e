"""Sweep tasks on a Dask cluster: submitted at once, rows yielded as they finish.

The files every point reads (``tasks.SweepFiles``: the spec's text and the contents of its
files) are scattered to every worker once, before the points are submitted; each point's task
is then its settings and a reference to them, so the sweep process (which, for a local
cluster, runs the scheduler too) holds the files once, not once per point. A worker that joins
later fetches them from another worker when it gets its first point.

Timing points (``bench``) ask for the whole of a worker: each worker of a sweep cluster offers
one unit of the resource ``RESOURCE`` and a bench task takes all of it, so no other task of
the sweep shares its worker while it measures. Other points take no resource; a worker runs
as many at once as it has threads (``local_cluster`` gives each worker one).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from graphcore.commands.sweep.grid import SweepOptionError
from graphcore.commands.sweep.task import run_point
from graphcore.commands.sweep.tasks import SweepTask
from graphcore.errors import GraphcoreError, clip

RESOURCE = "graphtool"  # one unit per worker; a timing point takes it whole
TIMING_COMMANDS = ("bench",)


def local_cluster(workers: int | None = None) -> Any:
    """A ``distributed.LocalCluster`` of ``workers`` processes (default: one per CPU core) of
    one thread each, each offering one unit of ``RESOURCE``; its HTTP server on a free port
    (another cluster may hold 8787)."""
    from distributed import LocalCluster

    count = workers if workers is not None else (os.cpu_count() or 1)
    return LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                        resources={RESOURCE: 1}, dashboard_address=":0",
                        silence_logs=logging.ERROR,
                        preload=["graphcore.commands.sweep.worker_logs"])


def check_scheduler_address(address: str) -> str:
    """``address`` (``tcp://HOST:PORT`` or ``HOST:PORT``) as ``tcp://HOST:PORT``, or a
    ``SweepOptionError`` saying what is wrong with it: another scheme, no host, no port or
    one out of range. Nothing is connected to."""
    shown = f"--scheduler {clip(address)}"
    scheme, sep, rest = address.strip().partition("://")
    if not sep:
        scheme, rest = "tcp", address.strip()
    if scheme.lower() != "tcp":
        raise SweepOptionError(f"{shown}: a sweep connects to a Dask scheduler over tcp://, "
                               f"not {scheme}://; give tcp://HOST:PORT")
    if rest.startswith("["):  # an IPv6 address: [::1]:8786
        host, bracket, port = rest[1:].partition("]")
        port = port[1:] if bracket and port.startswith(":") else ""
    else:
        host, _, port = rest.rpartition(":") if ":" in rest else (rest, "", "")
    if not host or any(c.isspace() or c in "/?#@[]" for c in host):
        raise SweepOptionError(f"{shown}: no host; give tcp://HOST:PORT")
    host = f"[{host}]" if ":" in host else host
    if not port:
        raise SweepOptionError(f"{shown}: no port; give tcp://{clip(host)}:PORT (a dask "
                               "scheduler listens on 8786 unless told otherwise)")
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        raise SweepOptionError(f"{shown}: the port must be a number from 1 to 65535, not "
                               f"{clip(port, 20)!r}")
    return f"tcp://{host}:{int(port)}"


def check_cluster(client: Any, command: str) -> None:
    """Fail before submitting anything when the cluster cannot run ``command``'s points: no
    workers, or (timing points) no worker offering ``RESOURCE``."""
    workers = client.scheduler_info().get("workers", {})
    if not workers:
        raise SweepOptionError("the Dask cluster has no workers")
    if command in TIMING_COMMANDS and not any(
            w.get("resources", {}).get(RESOURCE, 0) >= 1 for w in workers.values()):
        raise SweepOptionError(f"no worker of the cluster offers the resource {RESOURCE}, which "
                               f"{command} points take whole so timings are not shared; start "
                               f"workers with `dask worker ADDRESS --resources {RESOURCE}=1`")


def run_tasks(client: Any, tasks: Sequence[SweepTask]) -> Iterator[dict[str, Any]]:
    """Submit every task to ``client`` and yield each row as its task finishes. A task lost
    with its worker becomes a failed row. Closing the generator (Ctrl-C in the caller)
    cancels the tasks not yet finished."""
    from distributed import as_completed

    check_cluster(client, tasks[0].command if tasks else "run")
    futures = {}
    run_id = uuid.uuid4().hex[:8]  # keys unique on a cluster shared by several sweeps
    shared = {}  # one scatter per distinct SweepFiles (one for a sweep's tasks)
    for task in tasks:
        files = task.files
        if files is not None and id(files) not in shared:
            try:
                shared[id(files)] = client.scatter(files, broadcast=True, hash=False)
            except (OSError, TimeoutError) as exc:  # the cluster went away, or a worker
                raise GraphcoreError("cannot send the sweep's files to the cluster's workers: "
                                     f"{type(exc).__name__}: {exc}") from None
        resources = {RESOURCE: 1} if task.command in TIMING_COMMANDS else None
        future = client.submit(run_point, task.with_files(None),
                               None if files is None else shared[id(files)],
                               key=f"graphtool-sweep-{task.key}-{run_id}", pure=False,
                               resources=resources)
        futures[future] = task
    try:
        for future in as_completed(futures):
            task = futures[future]
            try:
                yield future.result()
            except Exception as exc:  # the worker died or the task could not be sent
                yield lost_row(task, exc)
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            client.cancel(pending)


def lost_row(task: SweepTask, exc: BaseException) -> dict[str, Any]:
    """The row of a task that never returned one (its worker died, say)."""
    return {"key": task.key, "index": task.index, "command": task.command,
            "settings": dict(task.settings), "figures": {}, "status": "failed",
            "error": f"{type(exc).__name__}: {exc}", "exit_code": 70, "exit_class": "worker lost",
            "started": None, "seconds": None, "worker": None}
