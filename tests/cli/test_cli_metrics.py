"""``train`` and ``evaluate`` with the classification and regression metrics and a ``test:``
split, as a user sees them: the test figures in train's table, ``--json`` and ``test.json``;
``evaluate --split test`` giving the same numbers; per-class figures and the confusion matrix
as tables, JSON and a picture; refusals that say what to do."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import invoke, invoke_json, invoke_ok

SPEC = """graphtool: 1
name: points
seed: 0
data:
  file: points.csv
  x: {columns: [f1, f2]}
  t: {column: label, dtype: int32}
test: 0.2
validation: 0.2
train:
  epochs: 6
  batch_size: 16
  optimizer: {name: adam, alpha: 0.05}
  metrics: [accuracy, precision, recall, f1, auc, confusion]
  early_stopping: {metric: validation_auc, patience: 4}
graph:
  - {op: linear, out_size: 12, from: x}
  - tanh
  - {op: linear, out_size: 3, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
outputs: [logits]
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    rng = np.random.RandomState(0)
    x = rng.randn(150, 2)
    t = np.digitize(x[:, 0] + 0.5 * x[:, 1], [-0.5, 0.5])
    lines = ["f1,f2,label"] + [f"{a:.5f},{b:.5f},{c}" for (a, b), c in zip(x, t, strict=True)]
    (tmp_path / "points.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "points.yaml").write_text(SPEC)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_train_reports_the_test_split_and_evaluate_on_it_gives_the_same_figures(folder):
    doc = invoke_json("train", "points.yaml", "--json", "-q")
    out = folder / "outputs" / "points" / "runs" / "1"
    test = doc["test"]
    assert doc["test_rows"] == test["rows"] == 30 and doc["validation_rows"] == 30
    assert doc["training_rows"] == 90
    assert test["params"] == f"best (epoch {doc['best']['epoch']})"
    assert doc["best"]["metric"] == "validation_auc"
    assert json.loads((out / "test.json").read_text()) == test
    assert (out / "confusion.png").read_bytes()[:4] == b"\x89PNG"
    header = (out / "train.csv").read_text().splitlines()[0].split(",")
    for m in ("precision", "recall", "f1", "auc"):
        assert m in header and f"validation_{m}" in header
    evaluated = invoke_json("evaluate", "points.yaml", "--params", out / "best.npz",
                            "--split", "test", "--json")
    assert evaluated["data"] == "test" and evaluated["rows"] == 30
    for key in ("loss", "accuracy", "precision", "recall", "f1", "auc", "per_class",
                "confusion"):
        assert evaluated[key] == test[key], key
    assert [c["class"] for c in test["per_class"]] == [0, 1, 2]
    assert sum(c["support"] for c in test["per_class"]) == 30
    assert test["confusion"]["classes"] == ["0", "1", "2"]


def test_train_prints_the_test_figures_per_class_and_the_confusion_matrix(folder):
    result = invoke_ok("train", "points.yaml")
    text = result.stdout
    assert "30 test rows" in text.splitlines()[0]
    assert "test: 30 rows, best (epoch" in text
    lines = [line.split() for line in text.splitlines()]
    assert ["class", "precision", "recall", "f1", "support"] in lines
    per_class = lines[lines.index(["class", "precision", "recall", "f1", "support"]) + 1:][:3]
    assert [row[0] for row in per_class] == ["0", "1", "2"]
    assert sum(int(row[4]) for row in per_class) == 30
    assert "confusion matrix (rows: true class, columns: predicted)" in text
    assert "wrote outputs/points/runs/1/test.json" in result.stderr
    assert "wrote outputs/points/runs/1/confusion.png" in result.stderr


def test_evaluates_default_is_still_the_validation_rows_and_split_names_the_others(folder):
    invoke_ok("train", "points.yaml", "-q", "--epochs", "2")
    params = folder / "outputs" / "points" / "runs" / "1" / "checkpoint.npz"
    rows = {split: invoke_json("evaluate", "points.yaml", "--params", params, "--json",
                               *(["--split", split] if split else []))["rows"]
            for split in (None, "validation", "train", "test", "all")}
    assert rows == {None: 30, "validation": 30, "train": 90, "test": 30, "all": 150}


def test_evaluate_writes_the_confusion_picture_and_shows_the_tables(folder):
    invoke_ok("train", "points.yaml", "-q", "--epochs", "2")
    params = folder / "outputs" / "points" / "runs" / "1" / "best.npz"
    result = invoke_ok("evaluate", "points.yaml", "--params", params, "--split", "all",
                       "--confusion", "all.png")
    assert (folder / "all.png").read_bytes()[:4] == b"\x89PNG"
    assert "wrote all.png" in result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("points  all data  150 rows")
    matrix = [line.split() for line in lines if line.split()[:1] in (["0"], ["1"], ["2"])
              and len(line.split()) == 4]
    assert sum(int(v) for row in matrix for v in row[1:]) == 150


def test_split_refusals_say_what_to_do(folder):
    invoke_ok("train", "points.yaml", "-q", "--epochs", "1")
    params = folder / "outputs" / "points" / "runs" / "1" / "best.npz"
    (folder / "plain.yaml").write_text(SPEC.replace("test: 0.2\n", ""))
    no_test = invoke("evaluate", "plain.yaml", "--params", params, "--split", "test")
    assert no_test.exit_code == 2
    assert "--split test: spec 'points' has no `test:` section" in no_test.stderr
    assert "test: 0.2" in no_test.stderr
    other = invoke("evaluate", "points.yaml", "--params", params, "--split", "test",
                   "--data", "points.csv")
    assert other.exit_code == 2 and "--data and --input give other rows" in other.stderr
    wrong = invoke("evaluate", "points.yaml", "--params", params, "--split", "tests")
    assert wrong.exit_code == 2 and "choose one of test, validation, train, all" in \
        wrong.stderr


def test_regression_metrics_and_a_confusion_picture_of_no_classes(folder):
    rng = np.random.RandomState(1)
    x = rng.randn(40, 2)
    y = x @ [1.5, -2.0] + 0.1 * rng.randn(40)
    (folder / "line.csv").write_text("a,b,y\n" + "".join(
        f"{a:.5f},{b:.5f},{c:.5f}\n" for (a, b), c in zip(x, y, strict=True)))
    (folder / "line.yaml").write_text("""graphtool: 1
name: line
seed: 0
data: {file: line.csv, x: {columns: [a, b]}, y: {columns: [y]}}
test: {fraction: 0.25, seed: 3}
train: {epochs: 30, batch_size: 10, optimizer: {name: adam, alpha: 0.1}, metrics: [r2, mse]}
graph:
  - {op: linear, out_size: 1, from: x, to: p}
loss: {op: mean_squared_error, from: [p, y]}
outputs: [p]
""")
    doc = invoke_json("train", "line.yaml", "--json", "-q")
    assert doc["test"]["params"] == "final" and doc["test"]["rows"] == 10
    assert doc["test"]["r2"] > 0.9 and doc["log"][-1]["r2"] > 0.9
    assert "per_class" not in doc["test"] and "confusion" not in doc["test"]
    refused = invoke("evaluate", "line.yaml", "--params",
                     folder / "outputs" / "line" / "runs" / "1" / "checkpoint.npz", "--confusion",
                     "c.png")
    assert refused.exit_code == 2
    assert "metric confusion needs integer labels as the loss's second input, got float32" \
        in refused.stderr and not (folder / "c.png").exists()


def test_an_unknown_metric_lists_the_new_ones(folder):
    (folder / "bad.yaml").write_text(SPEC.replace("metrics: [accuracy,", "metrics: [f1_score,"))
    result = invoke("check", "bad.yaml")
    assert result.exit_code == 65
    assert "unknown metric 'f1_score'; choose from accuracy, mse, mae, precision, recall, " \
        "f1, auc, r2, confusion" in result.stderr
