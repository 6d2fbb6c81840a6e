"""``train --schedule/--warmup/--warmup-start/--weight-decay/--gradient-clipping``: they
override the spec's ``train:``, show in the title, the lr column and ``--json``, are kept in
the checkpoint so a bare ``--resume`` continues with them (and a changed one is refused), and
bad values are usage errors saying what is wrong."""

from __future__ import annotations

import csv
import json
import struct

import numpy as np
import pytest
from cli_helpers import invoke as cli
from cli_helpers import invoke_json

from graphcore.commands.train.session import recorded_command

SPEC = """graphtool: 1
name: points
seed: 0
data:
  file: points.csv
  x: {columns: [f1, f2]}
  t: {column: label, dtype: int32}
validation: 0.25
train:
  epochs: 6
  batch_size: 16
  optimizer: momentum
  lr: 0.2
  schedule: {kind: cosine, min_lr: 0.01}
  metrics: [accuracy]
graph:
  - {op: linear, out_size: 8, from: x}
  - tanh
  - {op: linear, out_size: 2, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
"""


@pytest.fixture
def folder(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.randn(64, 2)
    t = (x[:, 0] * x[:, 1] > 0).astype(int)
    lines = ["f1,f2,label"] + [f"{a:.5f},{b:.5f},{c}" for (a, b), c in zip(x, t, strict=True)]
    (tmp_path / "points.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "points.yaml").write_text(SPEC)
    return tmp_path


RUN = "points/runs/1"  # each out dir here holds one run of the spec


def rates(path):
    with open(path, newline="") as f:
        return [float(r["lr"]) for r in csv.DictReader(f)]


def test_command_line_options_replace_the_specs_schedule(folder):
    doc = invoke_json("train", folder / "points.yaml", "--schedule", "step:every=2,factor=0.5",
                      "--warmup", 2, "--weight-decay", 0.001, "--gradient-clipping", 2,
                      "--out-dir", folder / "out", "--json", "-q")
    assert doc["schedule"] == {"kind": "step", "every": 2, "factor": 0.5, "per": "epoch"}
    assert (doc["warmup"], doc["weight_decay"], doc["gradient_clipping"]) == (2, 0.001, 2.0)
    expected = [0.2 / 3, 0.4 / 3, 0.2, 0.2, 0.1, 0.1]
    np.testing.assert_allclose([e["lr"] for e in doc["log"]], expected, rtol=1e-12)
    np.testing.assert_allclose(rates(folder / "out" / RUN / "train.csv"), expected,
                               rtol=1e-12)
    table = cli("train", folder / "points.yaml", "--schedule", "constant", "--out-dir",
                folder / "plain")
    assert table.exit_code == 0, table.stderr
    assert "schedule" not in table.stdout.splitlines()[0]
    assert table.stdout.splitlines()[1].split()[-3:] == ["lr", "time", "s"]
    assert set(rates(folder / "plain" / RUN / "train.csv")) == {0.2}
    titled = cli("train", folder / "points.yaml", "--out-dir", folder / "spec")
    assert "momentum lr 0.2 schedule cosine:min_lr=0.01" in titled.stdout.splitlines()[0]


def png_width(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">I", data[16:20])[0]


def test_curves_have_a_learning_rate_panel_when_it_changes(folder):
    assert cli("train", folder / "points.yaml", "--out-dir", folder / "a", "-q").exit_code == 0
    assert cli("train", folder / "points.yaml", "--schedule", "constant", "--out-dir",
               folder / "b", "-q").exit_code == 0
    # one panel a metric (loss, accuracy), and one for the rate: 480 pixels each
    assert png_width(folder / "a" / RUN / "curves.png") == 3 * 480
    assert png_width(folder / "b" / RUN / "curves.png") == 2 * 480


@pytest.mark.slow  # four training runs
def test_a_bare_resume_continues_with_the_schedule_options_and_refuses_others(folder):
    spec = folder / "points.yaml"
    options = ["--schedule", "exponential:factor=0.8", "--warmup", 1, "--weight-decay", 0.01,
               "--gradient-clipping", 1]
    assert cli("train", spec, *options, "--out-dir", folder / "full", "--save",
               folder / "full.npz", "-q").exit_code == 0
    assert cli("train", spec, *options, "--epochs", 3, "--out-dir", folder / "o",
               "-q").exit_code == 0
    checkpoint = folder / "o" / RUN / "checkpoint.npz"
    line = recorded_command(checkpoint)["command_line"]
    assert "--schedule exponential:factor=0.8 --warmup 1 --weight-decay 0.01 " \
        "--gradient-clipping 1" in line
    resumed = cli("train", spec, "--resume", "--epochs", 6, "--out-dir", folder / "o",
                  "--save", folder / "resumed.npz", "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert json.loads(resumed.stdout)["schedule"]["factor"] == 0.8
    assert rates(folder / "o" / RUN / "train.csv") == \
        rates(folder / "full" / RUN / "train.csv")
    with np.load(folder / "full.npz") as a, np.load(folder / "resumed.npz") as b:
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    changed = cli("train", spec, "--resume", "--epochs", 7, "--schedule", "cosine",
                  "--out-dir", folder / "o")
    assert changed.exit_code == 65
    assert "other training settings (schedule:" in changed.stderr


@pytest.mark.parametrize("args,message", [
    (["--schedule", "cosin"], "unknown schedule kind 'cosin'"),
    (["--schedule", "step"], "schedule step needs 'every'"),
    (["--schedule", "step:every=two"], "every must be an integer >= 1, got 'two'"),
    (["--schedule", "plateau:metric=validation_f1"], "metric 'validation_f1' is not reported"),
    (["--schedule", "cosine:min_lr"], "expected KEY=VALUE, got 'min_lr'"),
    (["--schedule", "cosine:min_lr=1"], "min_lr 1 is not below the learning rate 0.2"),
    (["--warmup-start", "0.5", "--warmup", "2"], "warmup_start 0.5 is not below the learning "
                                                 "rate 0.2"),
    (["--warmup", "6"], "the warm-up takes the whole run, so the cosine has no epochs left"),
    (["--gradient-clipping", "0"], "--gradient-clipping must be a number > 0, got 0.0"),
    (["--weight-decay", "-1"], "--weight-decay must be a number >= 0, got -1.0"),
])
def test_bad_schedule_options_are_usage_errors(folder, args, message):
    result = cli("train", folder / "points.yaml", *args, "--out-dir", folder / "out")
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (folder / "out" / RUN / "train.csv").exists()


def test_a_plateau_on_validation_without_validation_data_is_refused(folder):
    (folder / "points.yaml").write_text(SPEC.replace("validation: 0.25\n", ""))
    result = cli("train", folder / "points.yaml", "--schedule",
                 "plateau:metric=validation_loss", "--out-dir", folder / "out")
    assert result.exit_code == 2
    assert "schedule plateau watches validation_loss, but the spec has no validation" in \
        result.stderr
