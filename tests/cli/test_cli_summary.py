"""`graphtool summary SPEC`: each step's output shapes and parameter count, the totals
(trainable and not), and static mode's plan, as a table and as `--json`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from cli.app import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
STEP_KEYS = {"at", "depth", "kind", "op", "name", "layers", "output_shapes", "output_shape",
             "runs", "params", "trainable", "non_trainable", "shared_with", "static_ops"}


def cli(*args):
    return runner.invoke(app, [str(a) for a in args])


def summary(*args) -> dict:
    result = cli("summary", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def layers(doc: dict) -> dict[str, dict]:
    return {s["name"]: s for s in doc["steps"] if s["kind"] == "layer"}


def test_an_mlp_counts_each_layers_parameters_and_the_total():
    doc = summary(ROOT / "specs" / "digits_mlp.yaml")
    assert {"schema_version", "spec", "seed", "inputs", "examples", "rows_run", "steps",
            "params", "static"} <= set(doc)
    assert all(set(s) == STEP_KEYS for s in doc["steps"])
    by_name = layers(doc)
    assert by_name["hidden"]["params"] == 64 * 128 + 128
    assert by_name["out"]["params"] == 128 * 10 + 10
    assert by_name["hidden"]["output_shapes"] == [[[32, 128]]]  # the first 32 rows
    assert by_name["out"]["output_shape"] == "(32, 10)"
    assert doc["rows_run"] == 32 and doc["inputs"]["x"] == "(32, 64)"
    assert doc["params"] == {"total": 9610, "trainable": 9610, "non_trainable": 0}
    assert [s["kind"] for s in doc["steps"]] == ["op", "layer", "op", "op", "layer", "loss"]
    static = doc["static"]
    assert static["plans"] == 1 and static["backward"] is True
    assert static["nodes_traced"] >= static["nodes_optimized"] > 0 and static["buffer_bytes"] > 0
    assert all(s["static_ops"] >= 1 for s in doc["steps"])


def test_a_convolution_spec_counts_equal_the_sizes_of_its_trained_parameters(tmp_path):
    spec = ROOT / "specs" / "digits_cnn.yaml"
    trained = cli("train", spec, "--steps", 1, "--save", tmp_path / "p.npz", "--out-dir",
                  tmp_path / "out", "-q")
    assert trained.exit_code == 0, trained.stderr
    with np.load(tmp_path / "p.npz") as saved:
        sizes = {key: saved[key].size for key in saved.files}
    doc = summary(spec, "--rows", 5)
    assert doc["params"]["total"] == sum(sizes.values()) == 13706
    for name, step in layers(doc).items():
        assert step["params"] == sum(v for k, v in sizes.items() if k.split("/")[0] == name)
    assert layers(doc)["conv1"]["output_shape"] == "(5, 16, 8, 8)"
    assert sum(s["params"] or 0 for s in doc["steps"]) == doc["params"]["total"]


SHARED = """graphtool: 1
name: shared
seed: 0
inputs:
  x: {random: normal, shape: [3, 4]}
graph:
  - {op: linear, out_size: 4, name: twice}
  - {op: batch_normalization, name: norm}
  - {op: linear, out_size: 4, name: twice}
  - sum
outputs: [_]
"""


def test_a_shared_layer_counts_once_and_running_statistics_are_not_trainable(tmp_path):
    spec = tmp_path / "shared.yaml"
    spec.write_text(SHARED)
    doc = summary(spec)
    first, norm, second = (s for s in doc["steps"] if s["kind"] == "layer")
    assert first["params"] == 20 and second["params"] == 0
    assert second["shared_with"] == first["at"] == "7:5" and second["runs"] == 1
    assert norm["trainable"] == 8 and norm["non_trainable"] == 8  # gamma, beta; mean, var
    assert doc["params"] == {"total": 36, "trainable": 28, "non_trainable": 8}
    table = cli("summary", spec)
    assert table.exit_code == 0, table.stderr
    assert "shared (7:5)" in table.stdout
    assert "params: 36 (28 trainable, 8 not trainable)" in table.stdout


def test_loops_and_per_example_sequences_show_every_shape_they_made():
    doc = summary(ROOT / "specs" / "rnn_sequences.yaml")
    assert doc["examples"] == 3
    loop, *body = [s for s in doc["steps"] if s["depth"] <= 1][:5]
    assert loop["kind"] == "for_each" and all(s["depth"] == 1 for s in body)
    lengths = [int(n) for n in doc["inputs"]["s"].strip("()").split(", ")[0].split("..")]
    cell = layers(doc)["cell"]
    assert cell["runs"] > 3 and cell["output_shape"] == "(1, 12)"
    assert doc["static"]["plans"] >= 2  # a plan per sequence length
    tagger = summary(ROOT / "specs" / "lstm_tagger.yaml")
    encoder = layers(tagger)["encoder"]
    assert encoder["output_shape"] == tagger["inputs"]["words"].replace(",)", ", 16)")
    assert len(lengths) == 2 and lengths[0] < lengths[1]


def test_a_branch_not_taken_shows_no_shape_and_no_static_mode_is_left_out():
    spec = ROOT / "tests" / "data" / "matrix" / "live_branch.yaml"
    doc = summary(spec, "--no-static")
    assert doc["static"] is None
    untaken = [s for s in doc["steps"] if s["depth"] == 1 and s["runs"] == 0]
    assert untaken and all(s["output_shape"] == "-" and s["output_shapes"] == []
                           for s in untaken)
    assert all(s["static_ops"] is None for s in doc["steps"])


def test_normalization_statistics_count_as_not_trainable_as_the_parameters_file_holds_them(
        tmp_path):
    spec = ROOT / "specs" / "iris.yaml"
    trained = cli("train", spec, "--steps", 1, "--save", tmp_path / "p.npz", "--out-dir",
                  tmp_path / "out", "-q")
    assert trained.exit_code == 0, trained.stderr
    with np.load(tmp_path / "p.npz") as saved:  # the vocabulary is names, not numbers
        numbers = sum(saved[k].size for k in saved.files if saved[k].dtype.kind == "f")
        statistics = sum(saved[k].size for k in saved.files if k.startswith("_preprocessing")
                         and saved[k].dtype.kind == "f")
    doc = summary(spec, "--params", tmp_path / "p.npz")
    normalize, encode = doc["steps"][:2]
    assert normalize["kind"] == encode["kind"] == "preprocessing"
    assert normalize["op"] == "normalize standard" and normalize["name"] == "x"
    assert normalize["non_trainable"] == statistics == 8 and normalize["output_shape"] == "(32, 4)"
    assert encode["op"] == "encode 3 classes" and encode["params"] == 0
    assert doc["params"] == {"total": numbers, "trainable": numbers - 8, "non_trainable": 8}
