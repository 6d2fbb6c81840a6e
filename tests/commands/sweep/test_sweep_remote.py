"""`graphtool sweep --scheduler` against a cluster started as separate processes on loopback:
`dask scheduler` and two `dask worker`s (one thread each, offering the graphtool resource).
A 6-point train sweep spread over both workers equals the points run alone; a bench sweep
has every row; a failing point is recorded; --resume runs only the missing points; a data-fed
spec's data and validation files reach workers started elsewhere."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sweep_helpers import SPEC, SPECS, assert_train_rows_equal_alone, invoke, sweep_rows

distributed = pytest.importorskip("distributed")
# A scheduler and two workers as processes: slow (the sweep's logic is tested without a cluster
# in test_sweep_grid, _limits, _resume_file and _data).
pytestmark = pytest.mark.slow
DASK = Path(sys.executable).with_name("dask")


def _start(args, log):
    return subprocess.Popen([str(DASK), *args], stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONPATH": os.getcwd()})


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The scheduler's address and the two workers' addresses."""
    folder = tmp_path_factory.mktemp("dask")
    scheduler_file = folder / "scheduler.json"
    procs = []
    with open(folder / "log.txt", "w") as log:
        try:
            procs.append(_start(["scheduler", "--host", "127.0.0.1", "--port", "0",
                                 "--dashboard-address", "127.0.0.1:0",
                                 "--scheduler-file", str(scheduler_file)], log))
            for _ in range(2):
                procs.append(_start(["worker", "--scheduler-file", str(scheduler_file),
                                     "--host", "127.0.0.1", "--nthreads", "1",
                                     "--nworkers", "1", "--no-dashboard",
                                     "--resources", "graphtool=1"], log))
            deadline = time.monotonic() + 60
            while not scheduler_file.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            with distributed.Client(scheduler_file=str(scheduler_file), timeout=30) as client:
                client.wait_for_workers(2, timeout=60)
                address = client.scheduler.address
                workers = set(client.scheduler_info()["workers"])
            yield address, workers
        finally:
            for proc in reversed(procs):
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def test_train_sweep_on_separate_scheduler_and_workers(cluster, tmp_path):
    address, workers = cluster
    result = invoke("sweep", SPEC, "--grid", "params.width=4,8,16", "--grid",
                    "train.lr=1e-3,1e-2", "--grid", "train.steps=40", "--scheduler", address,
                    "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    rows = sweep_rows(tmp_path)
    assert len(rows) == 6 and all(r["status"] == "ok" for r in rows)
    assert {r["worker"] for r in rows} <= workers
    assert_train_rows_equal_alone(rows, tmp_path / "alone")


def test_bench_sweep_and_a_failing_point(cluster, tmp_path):
    address, workers = cluster
    result = invoke("sweep", SPEC, "--command", "bench", "--grid", "bench.batch=2,4",
                    "--grid", "mode=dynamic,static", "--repeat", 2, "--scheduler", address,
                    "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    rows = sweep_rows(tmp_path)
    assert len(rows) == 4 and {r["worker"] for r in rows} <= workers
    for row in rows:
        mode = row["settings"]["mode"]
        assert row["status"] == "ok" and row["figures"][f"{mode}.median_ms"] > 0
    failing = invoke("sweep", SPEC, "--grid", "train.optimizer=adam,nosuch", "--grid",
                     "train.steps=3", "--scheduler", address, "--out-dir", tmp_path / "f")
    assert failing.exit_code == 0, failing.stderr
    rows = sweep_rows(tmp_path / "f")
    assert [r["status"] for r in rows] == ["ok", "failed"]
    assert rows[1]["exit_class"] == "usage" and "unknown optimizer" in rows[1]["error"]


def test_resume_on_separate_workers(cluster, tmp_path):
    address, _ = cluster
    args = ["--grid", "train.steps=3", "--scheduler", address, "--out-dir", tmp_path]
    assert invoke("sweep", SPEC, "--grid", "seed=0,1", *args).exit_code == 0
    second = invoke("sweep", SPEC, "--grid", "seed=0,1,2,3", *args, "--resume")
    assert second.exit_code == 0, second.stderr
    assert "resuming: 2 of 4" in second.stderr and second.stderr.count("] point ") == 2
    assert len(sweep_rows(tmp_path)) == 4


def test_data_and_validation_files_reach_separate_workers(cluster, tmp_path):
    """digits_mlp with its data file and a validation file outside the spec's folder: the
    workers (started in another folder) train every point from the files the tasks carry."""
    import numpy as np

    address, workers = cluster
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    with np.load(SPECS / "data" / "digits.npz") as arrays:
        images, labels = arrays["images"], arrays["labels"]
    np.savez(project / "data" / "digits.npz", images=images[:1500], labels=labels[:1500])
    np.savez(tmp_path / "held_out.npz", images=images[1500:], labels=labels[1500:])
    text = (SPECS / "digits_mlp.yaml").read_text().replace(
        "validation: 0.2", "validation: {file: ../held_out.npz}")
    (project / "digits_mlp.yaml").write_text(text)
    result = invoke("sweep", project / "digits_mlp.yaml", "--grid", "train.lr=1e-3,3e-3",
                    "--grid", "train.steps=10", "--scheduler", address, "--out-dir",
                    tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    rows = sweep_rows(tmp_path / "out", "digits_mlp")
    assert [r["status"] for r in rows] == ["ok", "ok"], rows
    assert {r["worker"] for r in rows} <= workers
    saved = tmp_path / "point.npz"
    assert invoke("train", project / "digits_mlp.yaml", "--lr", "1e-3", "--steps", "10",
                  "--save", saved, "-q", "--out-dir", tmp_path / "alone").exit_code == 0
    evaluated = invoke("evaluate", project / "digits_mlp.yaml", "--params", saved, "--json")
    doc = json.loads(evaluated.stdout)
    assert doc["rows"] == len(labels) - 1500  # the held-out file, not a split
    assert rows[0]["figures"]["validation_loss"] == doc["loss"]
