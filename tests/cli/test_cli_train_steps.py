"""`bench --train` (training steps timed per mode and batching), the batching `train` chooses
and says, `--batching pad` that cannot pad saying why (run, bench, train), and `train` read
through a pipe (each epoch's row as it ends) or on an 80-column terminal (no number cut)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import invoke as cli
from sequence_training import BODY_IF, write_sequences

from graphcore.commands.bench_train import FIELDS

ROOT = Path(__file__).resolve().parents[2]


# --- bench --train --------------------------------------------------------------------------
def test_bench_train_times_every_mode_and_batching_that_applies(tmp_path):
    spec = write_sequences(tmp_path)
    out = tmp_path / "out"
    result = cli("bench", spec, "--train", "--repeat", 2, "--warmup", 1, "--json",
                 "--out-dir", out)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    rows = doc["results"]
    assert [(r["mode"], r["batching"]) for r in rows] == [
        (m, b) for m in ("dynamic", "static") for b in ("off", "auto", "pad")]
    for r in rows:
        assert r["repeat"] == 2 and r["warmup"] == 1 and r["batch_size"] == 4
        assert r["steps_per_epoch"] == 18 / 4
        assert r["epoch_s"] == pytest.approx((4.5 * r["mean_ms"] + r["epoch_work_ms"]) / 1e3,
                                             abs=1e-3)
        assert r["min_ms"] <= r["median_ms"] <= r["max_ms"] and r["epoch_work_ms"] >= 0
        # the same batches, the same steps: one loss within float rounding
        assert r["last_loss"] == pytest.approx(rows[0]["last_loss"], rel=1e-4)
    assert rows[0]["speedup"] == 1.0
    static = [r for r in rows if r["mode"] == "static"]
    assert all(r["compile_ms"] > 0 and r["plans"] >= 1 for r in static)
    assert rows[2]["padding_waste"] > 0 and rows[2]["groups"] == 1
    saved = json.loads((out / "seqs" / "bench_train.json").read_text())
    assert [r["batching"] for r in saved["results"]] == [r["batching"] for r in rows]
    assert not (out / "seqs" / "bench.json").exists()  # `report` reads that one
    text = (out / "seqs" / "bench_train.txt").read_text()
    assert "ms per training step" in text and "epoch s" in text


def test_bench_train_table_csv_and_what_is_left_out(tmp_path):
    spec = write_sequences(tmp_path, body=BODY_IF)
    result = cli("bench", spec, "--train", "--modes", "dynamic", "--repeat", 1, "--warmup", 0,
                 "--format", "csv", "--out-dir", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert tuple(rows[0]) == FIELDS
    assert [r["batching"] for r in rows] == ["off", "auto"]
    assert (f"seqs: batching pad left out: {tmp_path / 'seqs.yaml'}:11:5: the for_each body "
            "has live control flow") in result.stderr
    table = cli("bench", spec, "--train", "--modes", "dynamic", "--repeat", 1, "--warmup", 0,
                "--batch", "2,6", "--out-dir", tmp_path / "out")
    assert table.exit_code == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].startswith("ms per training step") and "epoch s" in lines[1]
    assert [line.split()[:4] for line in lines[2:]] == [
        ["seqs", "dynamic", "off", "2"], ["seqs", "dynamic", "auto", "2"],
        ["seqs", "dynamic", "off", "6"], ["seqs", "dynamic", "auto", "6"]]


def test_bench_train_refuses_what_it_cannot_time(tmp_path):
    result = cli("bench", ROOT / "specs" / "rnn_sequences.yaml", "--train",
                 "--out-dir", tmp_path)
    assert result.exit_code == 2
    assert "spec 'rnn_sequences' has no `data:` or `train:` section" in result.stderr
    result = cli("bench", write_sequences(tmp_path), "--train", "--profile",
                 "--out-dir", tmp_path)
    assert result.exit_code == 2 and "--profile" in result.stderr
    result = cli("bench", write_sequences(tmp_path), "--train", "--batch", 100,
                 "--out-dir", tmp_path)
    assert result.exit_code == 2
    assert "batch size 100 is larger than the training data of spec 'seqs'" in result.stderr


# --- the batching train uses ----------------------------------------------------------------
def test_train_says_which_batching_it_measured_and_its_result_does_not_depend_on_it(tmp_path):
    spec = write_sequences(tmp_path, epochs=3)
    saved = {}
    for batching in (None, "off", "auto", "pad"):
        name = batching or "measured"
        extra = [] if batching is None else ["--batching", batching]
        result = cli("train", spec, *extra, "--json", "--save", tmp_path / f"{name}.npz",
                     "--out-dir", tmp_path / name)
        assert result.exit_code == 0, result.stderr
        doc = json.loads(result.stdout)
        saved[name] = (doc, dict(np.load(tmp_path / f"{name}.npz")))
    doc, _ = saved["measured"]
    choice = doc["batching"]
    assert choice["how"] == "measured" and choice["used"] in ("off", "auto", "pad")
    assert set(choice["step_ms"]) <= {"off", "auto", "pad"}
    stderr = cli("train", spec, "--out-dir", tmp_path / "again").stderr
    assert re.search(r"^batching (off|auto|pad): the fastest of those measured on steps 1-3 "
                     r"\(median ms per step of steps 2-3: off [\d.e+]+", stderr, re.M), stderr
    assert saved["pad"][0]["batching"] == {"used": "pad", "how": "given", "reason": None,
                                           "step_ms": None, "left_out": None}
    reference = saved["off"]
    for name, (doc, params) in saved.items():
        assert [e["loss"] for e in doc["log"]] == pytest.approx(
            [e["loss"] for e in reference[0]["log"]], rel=1e-5), name
        for key, value in reference[1].items():
            np.testing.assert_allclose(params[key], value, rtol=1e-4, atol=1e-6,
                                       err_msg=f"{name} {key}")


def test_pad_that_cannot_pad_says_so_once_in_run_bench_and_train(tmp_path):
    spec = write_sequences(tmp_path, body=BODY_IF)
    why = (f"warning: --batching pad: the sequences are not padded, examples are grouped by "
           f"shape instead: {tmp_path / 'seqs.yaml'}:11:5: the for_each body has live control "
           "flow, which padded steps would decide on padding")
    train = cli("train", spec, "--batching", "pad", "--epochs", 1, "--out-dir", tmp_path)
    run = cli("run", spec, "--batching", "pad", "--out-dir", tmp_path)
    bench = cli("bench", spec, "--batching", "pad", "--repeat", 1, "--warmup", 0,
                "--out-dir", tmp_path)
    for result in (train, run, bench):
        assert result.exit_code == 0, result.stderr
    assert train.stderr.count(why) == 1 and run.stderr.count(why) == 1, train.stderr
    assert bench.stderr.count(why.replace("warning: ", "warning: seqs: ")) == 1, bench.stderr
    quiet = cli("train", spec, "--batching", "pad", "--epochs", 1, "-q", "--out-dir", tmp_path)
    assert quiet.exit_code == 0 and quiet.stderr == ""


# --- train through a pipe, and on a narrow terminal -----------------------------------------
def test_piped_train_prints_each_epoch_as_it_ends(tmp_path):
    """A real process writing into a pipe: the first epoch's row arrives while the run goes on
    (Ctrl-C then stops it)."""
    spec = write_sequences(tmp_path, epochs=100_000, validation=False)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen([sys.executable, "-m", "cli", "train", str(spec), "--batching",
                              "auto", "--out-dir", str(tmp_path / "out")], cwd=tmp_path,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    running_then: list[bool] = []

    def read() -> None:
        for line in child.stdout:
            lines.append(line)
            if line.startswith("1 "):
                running_then.append(child.poll() is None)
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)
    arrived = not reader.is_alive()
    child.send_signal(signal.SIGINT)
    child.communicate(timeout=120)
    assert arrived, f"no epoch row within 60 s of the start; read so far: {lines}"
    assert running_then == [True], "the first epoch's row came only when the process ended"
    assert lines[0].startswith("seqs  mode dynamic  seed 0")
    assert lines[1].split() == ["epoch", "step", "loss", "lr", "time", "s"]
    assert lines[2].split()[:2] == ["1", "6"]


def test_train_with_json_prints_a_line_per_epoch_on_stderr(tmp_path):
    result = cli("train", write_sequences(tmp_path, epochs=2), "--batching", "pad", "--json",
                 "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    epochs = [line for line in result.stderr.splitlines() if line.startswith("epoch ")]
    assert [line.split("  ")[:2] for line in epochs] == [["epoch 1/2", "step 5"],
                                                          ["epoch 2/2", "step 9"]]
    assert "validation loss" in epochs[0]
    assert json.loads(result.stdout)["epoch"] == 2


def test_an_80_column_terminal_cuts_no_number(tmp_path):
    rows = "".join(f"{i * 1e-6:.9f},{-i * 3e-7:.9f},{i * 2e-6:.9f}\n" for i in range(40))
    (tmp_path / "d.csv").write_text("a,b,y\n" + rows)
    (tmp_path / "wide.yaml").write_text("""graphtool: 1
name: wide
data: {file: d.csv, x: {columns: [a, b]}, y: {columns: [y]}}
validation: 0.25
train: {epochs: 3, batch_size: 10, optimizer: {name: sgd, lr: 0.001}, metrics: [mae, mse]}
graph: [{op: linear, out_size: 1, from: x, to: p}]
loss: {op: mean_squared_error, from: [p, y]}
""")
    result = cli("train", tmp_path / "wide.yaml", "--out-dir", tmp_path,
                 env={"COLUMNS": "80", "TTY_COMPATIBLE": "1", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.stderr
    text = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
    assert "…" not in text and "..." not in text
    assert max(len(line) for line in text.splitlines()[1:]) <= 80, text
    words = set(text.split())
    with open(tmp_path / "wide" / "runs" / "1" / "train.csv") as f:
        for row in csv.DictReader(f):
            for key in ("loss", "mae", "mse", "validation_loss", "validation_mae",
                        "validation_mse"):
                assert f"{float(row[key]):.4g}" in words, (key, row[key], text)
