"""Sweeps given hostile sizes and addresses, without a cluster: a grid's size is bounded from
its axes before anything is expanded, --random draws distinct points in linear time (and all
of a grid smaller than K), the files every point reads are read once and shared by the tasks
(a task sent to a worker holds none of them), a file that is not a regular file is refused at
once, --scheduler is checked before anything connects, and rewriting the rows takes a bounded
share of a long sweep. Every refusal happens before a cluster is asked for, so these CLI runs
point at a closed port they never reach."""

import os
import pickle
import time

import numpy as np
import pytest
from sweep_helpers import SPEC, invoke

from graphcore.commands.sweep import (
    MAX_POINTS,
    SweepOptionError,
    expand_grid,
    grid_size,
    make_tasks,
    parse_grid,
    run_point,
    sample_grid,
)
from graphcore.commands.sweep.schedule import check_scheduler_address
from graphcore.commands.sweep.tasks import MAX_CARRIED_BYTES
from graphcore.spec import load_spec_file

CLOSED = "tcp://127.0.0.1:1"  # nothing listens there; a refusal comes before connecting


def _values(count):
    return ",".join(str(i) for i in range(count))


def test_a_grid_over_the_point_limit_is_refused_before_it_is_expanded():
    just_over = parse_grid([f"params.a={_values(101)}", f"params.b={_values(100)}"], "train")
    assert grid_size(just_over) == 10_100 > MAX_POINTS
    with pytest.raises(SweepOptionError, match=r"makes 10,100 points \(101 \(params.a\) x "
                                               r"100 \(params.b\)\), over the limit of 10,000"):
        expand_grid(just_over)
    huge = parse_grid([f"params.{k}={_values(10_000)}" for k in "abc"], "train")
    start = time.perf_counter()
    with pytest.raises(SweepOptionError, match="makes 1,000,000,000,000 points"):
        expand_grid(huge)
    assert time.perf_counter() - start < 0.5
    assert len(expand_grid(parse_grid([f"params.a={_values(100)}",
                                       f"params.b={_values(100)}"], "train"))) == MAX_POINTS


def test_the_cli_refuses_a_grid_over_the_limit_before_anything_runs(tmp_path):
    result = invoke("sweep", SPEC, "--grid", f"params.width={_values(101)}", "--grid",
                    f"seed={_values(100)}", "--scheduler", CLOSED, "--out-dir", tmp_path / "o")
    assert result.exit_code == 2, result.stderr
    assert "makes 10,100 points" in result.stderr and "--random K" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "o").exists()


def test_random_draws_k_distinct_points_in_linear_time():
    """Over a million-point grid, 10,000 draws repeat about 50 points: each is drawn anew,
    against a set of the points so far, not a scan of them."""
    axes = parse_grid([f"params.{k}={_values(100)}" for k in "abc"], "train")
    start = time.perf_counter()
    points = sample_grid(axes, MAX_POINTS, seed=1)
    assert time.perf_counter() - start < 3
    assert len(points) == MAX_POINTS
    assert len({tuple(p.values()) for p in points}) == MAX_POINTS
    assert points == sample_grid(axes, MAX_POINTS, seed=1) != sample_grid(axes, MAX_POINTS,
                                                                           seed=2)
    ranges = parse_grid(["train.lr=1e-4:1e-1", "train.steps=1:3"], "train")
    points = sample_grid(ranges, 5000, seed=0)
    assert len({tuple(p.values()) for p in points}) == 5000


def test_random_k_over_the_grid_s_size_takes_every_point_in_grid_order():
    axes = parse_grid(["params.width=8,16", "train.steps=1:3"], "train")
    assert grid_size(axes) == 6
    every = sample_grid(axes, 10, seed=4)
    assert every == [{"params.width": w, "train.steps": s} for w in ("8", "16")
                     for s in ("1", "2", "3")]
    assert sample_grid(axes, 6, seed=4) == every
    five = sample_grid(axes, 5, seed=4)
    assert len(five) == 5 and all(p in every for p in five)
    assert len({tuple(p.values()) for p in five}) == 5
    assert grid_size(parse_grid(["train.lr=1e-3:1e-2"], "train")) is None


def test_random_over_the_point_limit_is_refused(tmp_path):
    with pytest.raises(SweepOptionError, match="--random 10,001 is over the limit"):
        sample_grid(parse_grid(["train.lr=1e-4:1e-1"], "train"), MAX_POINTS + 1)
    result = invoke("sweep", SPEC, "--grid", "train.lr=1e-4:1e-1", "--random",
                    MAX_POINTS + 1, "--scheduler", CLOSED, "--out-dir", tmp_path / "o")
    assert result.exit_code == 2 and "over the limit of 10,000" in result.stderr, result.stderr


@pytest.mark.parametrize("address, message", [
    ("bogus://host:8786", "over tcp://, not bogus://"),
    ("tls://127.0.0.1:8786", "over tcp://, not tls://"),
    ("127.0.0.1", "127.0.0.1: no port; give tcp://127.0.0.1:PORT"),
    ("tcp://127.0.0.1", "no port"),
    ("tcp://:8786", "no host"),
    ("tcp://127.0.0.1:99999", "from 1 to 65535, not '99999'"),
    ("tcp://127.0.0.1:http", "from 1 to 65535"),
])
def test_a_bad_scheduler_address_is_a_usage_error_at_once(address, message, tmp_path):
    start = time.monotonic()
    result = invoke("sweep", SPEC, "--grid", "train.steps=2", "--scheduler", address,
                    "--out-dir", tmp_path / "o")
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith(f"error: --scheduler {address}: ")
    assert message in result.stderr and "Traceback" not in result.stderr
    assert time.monotonic() - start < 5 and not (tmp_path / "o").exists()


def test_scheduler_addresses_that_are_accepted():
    assert check_scheduler_address("tcp://127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    assert check_scheduler_address("localhost:8786") == "tcp://localhost:8786"
    assert check_scheduler_address("tcp://[::1]:8786") == "tcp://[::1]:8786"


@pytest.mark.slow
def test_a_closed_scheduler_port_is_exit_1_within_about_10_s(tmp_path):
    start = time.monotonic()
    result = invoke("sweep", SPEC, "--grid", "train.steps=2", "--scheduler", CLOSED,
                    "--out-dir", tmp_path)
    assert result.exit_code == 1, result.stderr
    assert f"error: --scheduler {CLOSED}: cannot connect" in result.stderr
    assert time.monotonic() - start < 30


def test_the_files_are_read_once_and_shared_by_every_point(tmp_path):
    """20 points over a file of 12 MB (more than a single task could once carry): one copy in
    the sweep process, and a task as a worker is sent it holds none of the file."""
    data = tmp_path / "x.npy"
    np.save(data, np.zeros((300_000, 10), dtype=np.float32))
    assert 8 * 2**20 < data.stat().st_size < MAX_CARRIED_BYTES
    spec = load_spec_file(SPEC)
    tasks = make_tasks("run", str(SPEC), SPEC.read_text(), spec,
                       [{"seed": str(i)} for i in range(20)], {"x": str(data)})
    assert all(t.files is tasks[0].files for t in tasks)
    assert tasks[0].input_files["x"][1] == data.read_bytes()
    sent = tasks[3].with_files(None)
    assert len(pickle.dumps(sent)) < 2000 and sent.key == tasks[3].key
    assert len({t.key for t in tasks}) == 20
    # scattered, the contents travel as buffers of their own (Dask's protocol 5 frames),
    # not copied into the pickle
    buffers = []
    pickled = pickle.dumps(tasks[0].files, protocol=5, buffer_callback=buffers.append)
    assert len(pickled) < 2 * len(SPEC.read_text()) + 1000
    assert sum(len(b.raw()) for b in buffers) == data.stat().st_size
    back = pickle.loads(pickled, buffers=buffers)
    assert back.input_files == tasks[0].input_files and back.spec_text == tasks[0].spec_text
    assert pickle.loads(pickle.dumps(tasks[0].files)).input_files == tasks[0].input_files


def test_a_task_sent_without_its_files_runs_with_them_given_apart(tmp_path):
    data = tmp_path / "x.npy"
    np.save(data, np.linspace(-1, 1, 80, dtype=np.float32).reshape(8, 10))
    task, = make_tasks("train", str(SPEC), SPEC.read_text(), load_spec_file(SPEC),
                       [{"train.steps": "3"}], {"x": str(data)})
    whole = run_point(task)
    apart = run_point(task.with_files(None), task.files)
    assert whole["status"] == apart["status"] == "ok", apart
    assert whole["figures"] == apart["figures"] and whole["key"] == apart["key"]
    without = run_point(task.with_files(None))
    assert without["status"] == "failed" and "without its files" in without["error"]


SPEC_WITH_DATA = """graphtool: 1
name: data_path
seed: 0
data:
  file: data/train.csv
  x: {columns: [a, b]}
  t: {column: label, dtype: int32}
train: {epochs: 1, batch_size: 2}
graph:
  - {op: linear, out_size: 2, name: out, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
"""


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_data_file_that_is_not_a_regular_file_is_refused_at_once(kind, tmp_path):
    """A folder was an internal error (IsADirectoryError); a FIFO hung the sweep reading it."""
    import subprocess
    import sys

    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC_WITH_DATA)
    path = tmp_path / "data" / "train.csv"
    path.parent.mkdir()
    if kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)
    done = subprocess.run([sys.executable, "-m", "cli", "sweep", str(spec), "--grid",
                           "train.steps=2", "--scheduler", CLOSED, "--out-dir",
                           str(tmp_path / "o")], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert done.returncode == 66, done.stderr
    assert f"data file {path}" in done.stderr and "Traceback" not in done.stderr
    assert ("is a folder, not a file" if kind == "folder" else "is not a regular file") \
        in done.stderr
    assert not (tmp_path / "o").exists()


def test_rewriting_the_rows_takes_a_bounded_share_of_a_long_sweep():
    """sweep.json and sweep.csv are the whole document each time: written at every row, a
    10,000-point sweep spends hours writing them (0.8 s a write at 5,000 rows). Paced, a write
    waits until 20 times its own duration has passed: at every row while writing is cheap."""
    from graphcore.commands.sweep.records import SAVE_SHARE, SavePacer

    now = [0.0]
    pacer = SavePacer(clock=lambda: now[0])
    writes = []

    def write(rows):
        now[0] += 0.00016 * rows  # what writing that many rows takes
        writes.append(rows)

    for rows in range(1, MAX_POINTS + 1):
        now[0] += 0.01  # a row finishes every 10 ms
        if pacer.due():
            pacer.save(lambda rows=rows: write(rows))
    assert writes[:4] == [1, 2, 3, 4]  # small documents: written at every row
    writing = sum(0.00016 * rows for rows in writes)
    # each write is followed by 20 times its time without one (the last one, by the end)
    assert writing - 0.00016 * writes[-1] <= SAVE_SHARE * now[0], (writing, now[0])
    assert len(writes) < 400  # not 10,000
