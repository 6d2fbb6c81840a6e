"""`graphtool sweep` on a real distributed.LocalCluster of worker processes (started once for
the module): a 6-point train sweep equal to the points run one at a time with `graphtool
train`, a bench sweep, a failing point recorded while the rest run, --resume running only the
missing points, a data-fed spec (its data file travels with the tasks; editing it reruns the
points), the default local cluster, and Ctrl-C keeping the finished rows."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from sweep_helpers import SPEC, SPECS, assert_train_rows_equal_alone, invoke, sweep_rows

from graphcore.commands.sweep import local_cluster

distributed = pytest.importorskip("distributed")
# Every test but the usage errors runs on a cluster of worker processes: slow (the sweep's logic
# is tested without a cluster in test_sweep_grid, _limits, _resume_file and _data).


@pytest.fixture(scope="module")
def scheduler():
    with local_cluster(2) as cluster:
        yield cluster.scheduler_address


@pytest.mark.slow
def test_the_local_cluster_workers_log_only_critical(scheduler):
    """Dask's shutdown race (a heartbeat meeting the closing scheduler) logs an ERROR with a
    traceback from a worker after a sweep that succeeded: the sweep's own workers keep quiet
    but for CRITICAL (``graphcore.commands.sweep.worker_logs``; failures are rows)."""
    import logging

    with distributed.Client(scheduler) as client:
        levels = client.run(lambda: logging.getLogger("distributed.worker").getEffectiveLevel())
    assert len(levels) == 2 and set(levels.values()) == {logging.CRITICAL}


@pytest.mark.slow
def test_six_point_train_sweep_equals_the_points_alone(scheduler, tmp_path):
    result = invoke("sweep", SPEC, "--grid", "params.width=4,8,16", "--grid",
                    "train.lr=1e-3,1e-2", "--grid", "train.steps=5", "--scheduler", scheduler,
                    "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    rows = sweep_rows(tmp_path)
    assert [r["index"] for r in rows] == list(range(6))
    assert {(r["settings"]["params.width"], r["settings"]["train.lr"]) for r in rows} == {
        (w, lr) for w in ("4", "8", "16") for lr in ("1e-3", "1e-2")}
    assert all(r["worker"].startswith("tcp://127.0.0.1:") for r in rows)
    assert_train_rows_equal_alone(rows, tmp_path / "alone")
    best = min(rows, key=lambda r: r["figures"]["final_loss"])
    lines = result.stdout.splitlines()
    assert lines[-1].startswith("best (final_loss): graphtool train ")
    assert f"--set params.width={best['settings']['params.width']}" in lines[-1]
    csv_lines = (tmp_path / "residual_mlp" / "sweep.csv").read_text().splitlines()
    assert len(csv_lines) == 7 and "final_loss" in csv_lines[0]


@pytest.mark.slow
def test_bench_sweep_rows_match_bench_alone(scheduler, tmp_path):
    result = invoke("sweep", SPEC, "--command", "bench", "--grid", "bench.batch=2,4",
                    "--repeat", 2, "--scheduler", scheduler, "--out-dir", tmp_path, "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["sort"] == "dynamic.median_ms" and len(doc["rows"]) == 2
    for row in doc["rows"]:
        assert row["status"] == "ok", row
        alone = invoke("bench", SPEC, "--batch", row["settings"]["bench.batch"], "--repeat", 2,
                       "--json", "--out-dir", tmp_path / "alone")
        assert alone.exit_code == 0, alone.stderr
        results = json.loads(alone.stdout)["results"]
        # the same measurements, per mode, under the same names (times differ run to run)
        assert set(row["figures"]) == {f"{r['mode']}.{k}" for r in results for k in
                                       ("median_ms", "min_ms", "iqr_ms", "compile_ms",
                                        "speedup", "peak_memory_bytes") if r[k] is not None}
        assert all(r["batch"] == int(row["settings"]["bench.batch"]) for r in results)


@pytest.mark.slow
def test_a_failing_point_is_recorded_and_the_rest_run(scheduler, tmp_path):
    result = invoke("sweep", SPEC, "--grid", "train.batch_size=2,100,4", "--grid",
                    "train.steps=3", "--scheduler", scheduler, "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    rows = sweep_rows(tmp_path)
    failed = [r for r in rows if r["status"] == "failed"]
    assert len(rows) == 3 and [r["settings"]["train.batch_size"] for r in failed] == ["100"]
    assert failed[0]["exit_code"] == 2 and failed[0]["exit_class"] == "usage"
    assert "larger than the data" in failed[0]["error"]
    assert "1 of 3 points failed" in result.stderr
    assert_train_rows_equal_alone([r for r in rows if r["status"] == "ok"], tmp_path / "a")


@pytest.mark.slow
def test_every_point_failing_is_exit_1(scheduler, tmp_path):
    result = invoke("sweep", SPEC, "--grid", "train.batch_size=100", "--scheduler", scheduler,
                    "--out-dir", tmp_path)
    assert result.exit_code == 1 and "every point failed" in result.stderr
    assert sweep_rows(tmp_path)[0]["exit_class"] == "usage"


@pytest.mark.slow
def test_resume_runs_only_the_missing_points(scheduler, tmp_path):
    first = invoke("sweep", SPEC, "--grid", "train.lr=1e-3,1e-2", "--grid", "train.steps=4",
                   "--scheduler", scheduler, "--out-dir", tmp_path)
    assert first.exit_code == 0, first.stderr
    before = {r["key"]: r for r in sweep_rows(tmp_path)}
    second = invoke("sweep", SPEC, "--grid", "train.lr=1e-3,1e-2,0.1", "--grid",
                    "train.steps=4", "--scheduler", scheduler, "--out-dir", tmp_path, "--resume")
    assert second.exit_code == 0, second.stderr
    assert "resuming: 2 of 3 points already done" in second.stderr
    assert second.stderr.count("] point ") == 1 and "] point 2: ok" in second.stderr
    after = sweep_rows(tmp_path)
    assert len(after) == 3
    for row in after:  # the earlier rows are kept as they were (their times, their workers)
        if row["key"] in before:
            assert row == before[row["key"]]
    nothing = invoke("sweep", SPEC, "--grid", "train.lr=1e-3,1e-2,0.1", "--grid",
                     "train.steps=4", "--scheduler", scheduler, "--out-dir", tmp_path,
                     "--resume")
    assert nothing.exit_code == 0 and "] point " not in nothing.stderr
    assert sweep_rows(tmp_path) == after


def test_usage_errors(tmp_path):
    for args, message in ((["--grid", "train.lr=x"], "takes numbers"),
                          (["--grid", "bench.batch=2"], "does not apply to train"),
                          (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "--workers"),
                          (["--grid", "train.lr=0.1:0.2"], "--random")):
        result = invoke("sweep", SPEC, *args, "--out-dir", tmp_path)
        assert result.exit_code == 2 and message in result.stderr, (args, result.stderr)


@pytest.mark.slow
def test_unknown_sort_figure_names_the_figures(scheduler, tmp_path):
    result = invoke("sweep", SPEC, "--grid", "train.steps=2", "--sort", "val_accuracy",
                    "--scheduler", scheduler, "--out-dir", tmp_path)
    assert result.exit_code == 2 and "figures: final_loss" in result.stderr


@pytest.mark.slow
def test_default_local_cluster_and_random_points(tmp_path):
    result = invoke("sweep", SPEC, "--grid", "train.lr=1e-3:1e-1", "--grid", "train.steps=3",
                    "--random", 3, "--workers", 1, "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    rows = sweep_rows(tmp_path)
    assert len(rows) == 3 and len({r["worker"] for r in rows}) == 1
    assert_train_rows_equal_alone(rows, tmp_path / "alone")


@pytest.mark.slow
def test_ctrl_c_keeps_the_finished_rows(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", "sweep", str(SPEC), "--grid",
         "train.lr=" + ",".join(f"{i}e-3" for i in range(1, 31)), "--grid", "train.steps=300",
         "--workers", "1", "--out-dir", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    path = tmp_path / "residual_mlp" / "sweep.json"
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if path.exists() and json.loads(path.read_text())["rows"]:
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    rows = json.loads(path.read_text())["rows"]
    assert 1 <= len(rows) < 30 and all(r["status"] == "ok" for r in rows)


@pytest.mark.slow
def test_bench_points_take_a_whole_worker(tmp_path):
    """On one worker with two threads, two train points may run at once but two bench points
    never do: each takes the worker's whole graphtool resource."""
    from distributed import Client, LocalCluster

    from graphcore.commands.sweep import RESOURCE

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                      resources={RESOURCE: 1}, dashboard_address=":0") as cluster, \
            Client(cluster):
        result = invoke("sweep", SPEC, "--command", "bench", "--grid", "bench.batch=2,4,8",
                        "--repeat", 20, "--scheduler", cluster.scheduler_address,
                        "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    spans = sorted((r["started"], r["started"] + r["seconds"]) for r in sweep_rows(tmp_path))
    assert len(spans) == 3
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert start >= end - 1e-3, spans


PLUGIN = '''
import graphcore


@graphcore.register_op
class Twice(graphcore.FunctionNode):
    """2 x, elementwise."""
    name = "twice_sweep_plugin"
    elementwise = True
    arity = 1

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        return 2 * grad_outputs[0],
'''
PLUGGED = """graphtool: 1
name: plugged
seed: 0
inputs:
  x: {random: normal, shape: [4, 3]}
graph:
  - {op: linear, out_size: 2, name: l1}
  - twice_sweep_plugin
loss: {op: sum}
"""


@pytest.mark.slow
def test_plugin_ops_travel_to_the_workers(scheduler, tmp_path):
    """`--plugin` reaches worker processes (the task carries the file's contents; each worker
    runs it once), and the best point's command line names it."""
    (tmp_path / "ops.py").write_text(PLUGIN + f"# {tmp_path}\n")  # one module per test run
    (tmp_path / "plugged.yaml").write_text(PLUGGED)
    result = invoke("sweep", tmp_path / "plugged.yaml", "--command", "run", "--grid",
                    "seed=0,1,2", "--plugin", tmp_path / "ops.py", "--scheduler", scheduler,
                    "--out-dir", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    rows = sweep_rows(tmp_path / "out", "plugged")
    assert [r["status"] for r in rows] == ["ok"] * 3, rows
    alone = invoke("run", tmp_path / "plugged.yaml", "--seed", "1", "--plugin",
                   tmp_path / "ops.py", "--json", "--out-dir", tmp_path / "alone")
    assert alone.exit_code == 0, alone.stderr
    assert rows[1]["figures"]["loss"] == json.loads(alone.stdout)["loss"]
    assert f"--plugin {tmp_path / 'ops.py'}" in result.stdout.splitlines()[-1]


@pytest.mark.slow
def test_a_data_fed_spec_sweeps_as_graphtool_train_and_evaluate(scheduler, tmp_path):
    """The issue's line: every point of digits_mlp trains (its data file reached the worker);
    a row's validation figures are `graphtool evaluate` of `graphtool train --save` for it."""
    spec = SPECS / "digits_mlp.yaml"
    result = invoke("sweep", spec, "--grid", "train.lr=1e-3,3e-3", "--grid", "train.steps=20",
                    "--scheduler", scheduler, "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    rows = sweep_rows(tmp_path, "digits_mlp")
    assert [r["status"] for r in rows] == ["ok", "ok"], rows
    for row in rows:
        saved = tmp_path / f"point{row['index']}.npz"
        train = invoke("train", spec, "--lr", row["settings"]["train.lr"], "--steps", "20",
                       "--save", saved, "-q", "--out-dir", tmp_path / "alone")
        assert train.exit_code == 0, train.stderr
        evaluated = invoke("evaluate", spec, "--params", saved, "--json")
        assert evaluated.exit_code == 0, evaluated.stderr
        doc = json.loads(evaluated.stdout)
        # the same computation, but dask's workers run one BLAS thread and this process may
        # run several: OpenBLAS sums a product in another order then (last bits differ)
        assert row["figures"]["validation_loss"] == pytest.approx(doc["loss"], rel=1e-6)
        assert row["figures"]["validation_accuracy"] == doc["accuracy"]
    assert result.stdout.splitlines()[-1].startswith("best (validation_loss): graphtool train ")


@pytest.mark.slow
def test_editing_the_data_file_reruns_the_points_on_resume(scheduler, tmp_path):
    (tmp_path / "data").mkdir()
    shutil.copy(SPECS / "digits_mlp.yaml", tmp_path / "digits_mlp.yaml")
    data = tmp_path / "data" / "digits.npz"
    shutil.copy(SPECS / "data" / "digits.npz", data)
    args = ["sweep", tmp_path / "digits_mlp.yaml", "--grid", "train.batch_size=16,64",
            "--grid", "train.steps=4", "--scheduler", scheduler, "--out-dir", tmp_path / "out"]
    first = invoke(*args)
    assert first.exit_code == 0, first.stderr
    same = invoke(*args, "--resume")
    assert "resuming: 2 of 2 points already done" in same.stderr, same.stderr
    with np.load(data) as arrays:
        fewer = {name: arrays[name][:1000] for name in arrays.files}
    np.savez(data, **fewer)
    edited = invoke(*args, "--resume")
    assert edited.exit_code == 0, edited.stderr
    assert "resuming: 0 of 2 points already done" in edited.stderr
    rows = sweep_rows(tmp_path / "out", "digits_mlp")
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows), rows


@pytest.mark.slow
def test_random_larger_than_the_grid_runs_every_point_and_says_so(scheduler, tmp_path):
    result = invoke("sweep", SPEC, "--grid", "params.width=4,8", "--grid", "train.steps=2",
                    "--random", 5, "--scheduler", scheduler, "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "--random 5: the grid holds 2 points; running every one" in result.stderr
    rows = sweep_rows(tmp_path)
    assert [r["settings"]["params.width"] for r in rows] == ["4", "8"]


MEMORY_SPEC = """graphtool: 1
name: held_once
seed: 0
inputs:
  x: {file: x.npy, shape: [250000, 10]}
graph:
  - {op: linear, out_size: 2, name: l1}
loss: {op: sum}
"""
# graphtool sweep in a child, which prints its own peak resident set (KiB) at the end: VmHWM,
# not ru_maxrss, which Linux starts from the parent's peak (pytest's) across the exec
PEAK_RSS = """
import sys
from cli.app import app
try:
    app(sys.argv[1:])
except SystemExit as stop:
    assert stop.code in (0, None), stop.code
with open("/proc/self/status") as status:
    print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
"""


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads Linux's VmHWM")
def test_the_sweep_process_holds_the_input_files_once_however_many_points(tmp_path):
    """A 10 MB input under 2 and 12 points: the files are scattered to each worker once, so
    ten more points cost the sweep process (client and scheduler) no more memory; a copy
    per point's task cost about 27 MB a point (10 more points: about 270 MB)."""
    np.save(tmp_path / "x.npy", np.ones((250_000, 10), dtype=np.float32))
    (tmp_path / "spec.yaml").write_text(MEMORY_SPEC)
    size_kib = (tmp_path / "x.npy").stat().st_size / 1024

    def peak_kib(points):
        seeds = ",".join(str(i) for i in range(points))
        done = subprocess.run(
            [sys.executable, "-c", PEAK_RSS, "sweep", str(tmp_path / "spec.yaml"), "--command",
             "run", "--grid", f"seed={seeds}", "--workers", "2", "-q", "--out-dir",
             str(tmp_path / f"out{points}")], capture_output=True, text=True, timeout=300,
            env={**os.environ, "PYTHONPATH": os.getcwd()})
        assert done.returncode == 0, done.stderr
        rows = sweep_rows(tmp_path / f"out{points}", "held_once")
        assert len(rows) == points and all(r["status"] == "ok" for r in rows), rows
        return int(done.stdout.split()[-1])

    few, many = peak_kib(2), peak_kib(12)
    assert many - few < 2 * size_kib, (few, many, size_kib)
