"""train, evaluate and predict on a spec whose graph runs once per example, fed from data
(sequences and a label per row): each example trains on its own label, in every mode and
batching; predict writes one row per example (a stacked array in .npz), and only outputs
whose shape differs per example are written per example."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import invoke as cli
from sequence_data import JSONL, SEQUENCES, write_sequences

N = 24


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_sequences(tmp_path, N)
    (tmp_path / "seq.yaml").write_text(SEQUENCES)
    return tmp_path


def test_train_evaluate_predict_on_per_example_data(folder):
    spec = folder / "seq.yaml"
    docs = {}
    for mode in ("dynamic", "static"):
        for batching in ("off", "auto", "pad"):
            result = cli("train", spec, "--json", "--mode", mode, "--batching", batching,
                         "--out-dir", folder / f"{mode}-{batching}", "--save",
                         folder / f"{mode}-{batching}.npz")
            assert result.exit_code == 0, result.stderr
            docs[mode, batching] = json.loads(result.stdout)["log"]
    first = docs["dynamic", "off"]
    for key, log in docs.items():
        np.testing.assert_allclose([e["loss"] for e in log], [e["loss"] for e in first],
                                   rtol=1e-5, err_msg=str(key))
        assert [e["validation_accuracy"] for e in log] == \
            [e["validation_accuracy"] for e in first], key
    params = folder / "dynamic-off.npz"
    evaluated = cli("evaluate", spec, "--params", params, "--json")
    assert evaluated.exit_code == 0, evaluated.stderr
    figures = json.loads(evaluated.stdout)
    assert figures["rows"] == 6
    assert figures["loss"] == pytest.approx(first[-1]["validation_loss"], rel=1e-6)
    assert figures["accuracy"] == first[-1]["validation_accuracy"]

    printed = cli("predict", spec, "--params", params, "-o", "-", "--outputs", "raw")
    assert printed.exit_code == 0, printed.stderr
    lines = printed.stdout.splitlines()
    assert lines[0] == "logits_0,logits_1" and len(lines) == N + 1
    saved = cli("predict", spec, "--params", params, "-o", folder / "p.npz", "--batch-size", 5,
                "--outputs", "raw")
    assert saved.exit_code == 0, saved.stderr
    with np.load(folder / "p.npz") as arrays:
        assert arrays.files == ["logits"]
        logits = arrays["logits"]
    assert logits.shape == (N, 2)
    np.testing.assert_array_equal(np.array([line.split(",") for line in lines[1:]],
                                           dtype=np.float32), logits)
    with np.load(folder / "seq.npz") as data:
        t = data["t"]
    agree = float(np.mean(logits.argmax(axis=1) == t))
    assert agree > 0.75  # the labels were learnt per example


def test_outputs_whose_shape_differs_per_example_are_written_per_example(folder):
    spec = folder / "seq.yaml"
    spec.write_text(SEQUENCES.replace("  - {op: linear, from: s, out_size: 2, name: proj}",
                                      "  - {op: linear, from: s, out_size: 2, name: proj, "
                                      "to: steps}").replace("outputs: [logits]",
                                                            "outputs: [logits, steps]"))
    params = folder / "p.npz"
    assert cli("train", spec, "--out-dir", folder / "o", "--save", params,
               "-q").exit_code == 0
    refused = cli("predict", spec, "--params", params, "-o", "-")
    assert refused.exit_code == 2
    assert "output 'steps' differs in shape from example to example" in refused.stderr
    assert "write -o preds.npz (one array per example: steps/0, steps/1, ...)" in \
        refused.stderr
    assert cli("predict", spec, "--params", params, "-o", folder / "c.csv").exit_code == 2
    assert not (folder / "c.csv").exists()
    saved = cli("predict", spec, "--params", params, "-o", folder / "preds.npz")
    assert saved.exit_code == 0, saved.stderr
    with np.load(folder / "preds.npz") as arrays:
        assert arrays["logits"].shape == (N, 2)
        steps = [arrays[f"steps/{k}"] for k in range(N)]
        assert len(arrays.files) == N + 4  # and the class, its probability, the classes'
        assert arrays["t_probabilities"].shape == (N, 2)
    assert [s.shape for s in steps] == [(1 + k % 5, 2) for k in range(N)]
    np.testing.assert_allclose(np.stack([s.sum(axis=0) for s in steps]), arrays_logits(folder),
                               rtol=1e-5, atol=1e-5)


def arrays_logits(folder):
    with np.load(folder / "preds.npz") as arrays:
        return arrays["logits"]


def test_a_label_outside_the_classes_is_refused_at_its_input(folder):
    with np.load(folder / "seq.npz") as data:
        arrays = dict(data)
    arrays["t"][3] = 5
    np.savez(folder / "seq.npz", **arrays)
    result = cli("train", folder / "seq.yaml", "--out-dir", folder / "o")
    assert result.exit_code == 65, result.stderr
    assert "seq.yaml:7:6: error: input 't': data row 4 has label 5, outside 0..1 for " \
        "softmax_cross_entropy over 2 classes" in result.stderr


def test_predict_on_new_sequences_needs_no_labels(folder):
    jsonl = folder / "seq.yaml"
    jsonl.write_text(JSONL)
    params = folder / "p.npz"
    assert cli("train", jsonl, "--out-dir", folder / "o", "--save", params, "-q").exit_code == 0
    lines = (folder / "seq.jsonl").read_text().splitlines()[:5]
    new = folder / "new.jsonl"
    new.write_text("".join(json.dumps({"s": json.loads(line)["s"]}) + "\n" for line in lines))
    # the label's reshape feeds only the loss: predicting reads no `t` (the data file's 24
    # labels would not bind with 5 new examples)
    result = cli("predict", jsonl, "--params", params, "--input", f"s={new}", "-o", "-")
    assert result.exit_code == 0, result.stderr
    whole = cli("predict", jsonl, "--params", params, "-o", "-")
    assert result.stdout.splitlines() == whole.stdout.splitlines()[:6]
