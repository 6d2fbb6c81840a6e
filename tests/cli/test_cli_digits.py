"""The shipped data set: specs/digits_mlp.yaml reaches at least 95% validation accuracy, and
evaluate reproduces that figure from best.npz; specs/digits_cnn.yaml reaches 97%."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.app import app

SPECS = Path(__file__).resolve().parents[2] / "specs"
runner = CliRunner()


def test_digits_data_is_the_uci_set():
    with np.load(SPECS / "data" / "digits.npz") as data:
        images, labels = data["images"], data["labels"]
    assert images.shape == (1797, 64) and images.dtype == np.uint8 and images.max() == 16
    assert labels.dtype == np.int32 and np.bincount(labels).tolist() == [
        178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    assert "CC BY 4.0" in (SPECS / "data" / "README.md").read_text()


@pytest.mark.slow  # trains on 1,797 rows to an accuracy
def test_digits_mlp_reaches_95_percent_and_evaluate_agrees(tmp_path):
    trained = runner.invoke(app, ["train", str(SPECS / "digits_mlp.yaml"), "--json",
                                  "--out-dir", str(tmp_path)])
    assert trained.exit_code == 0, trained.stderr
    doc = json.loads(trained.stdout)
    assert (doc["training_rows"], doc["validation_rows"]) == (1438, 359)
    best = doc["best"]
    assert best["metric"] == "validation_accuracy" and best["value"] >= 0.95
    evaluated = runner.invoke(app, ["evaluate", str(SPECS / "digits_mlp.yaml"), "--params",
                                    best["file"], "--json"])
    assert evaluated.exit_code == 0, evaluated.stderr
    assert json.loads(evaluated.stdout)["accuracy"] == best["value"]


CNN = SPECS / "digits_cnn.yaml"


@pytest.mark.slow  # trains on 1,797 rows to an accuracy
def test_digits_cnn_reaches_97_percent(tmp_path):
    trained = runner.invoke(app, ["train", str(CNN), "--epochs", "5", "--json", "--out-dir",
                                  str(tmp_path)])
    assert trained.exit_code == 0, trained.stderr
    assert json.loads(trained.stdout)["best"]["value"] >= 0.97
