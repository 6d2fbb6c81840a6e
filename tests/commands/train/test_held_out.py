"""The ``test:`` split and the metrics of a training run: the three parts are disjoint and
seeded, the test rows are never read by training, early stopping or the choice of the best
parameters, and are evaluated once with ``best.npz``'s parameters; the per-epoch training
figures of F1/AUC/R² are over the epoch's rows (and survive an interruption mid-epoch)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphcore.commands.train.data import evaluation
from graphcore.commands.train.session import TrainingSession, load_spec_data, settings_for
from graphcore.errors import SpecError, SpecErrors
from graphcore.interpreter.params_file import load_params
from graphcore.spec import build_model, load_spec_text

SPEC = """graphtool: 1
name: blobs
seed: 0
data:
  file: blobs.npz
  x: {key: x}
  t: {key: t}
test: 0.2
validation: 0.25
train:
  epochs: 8
  batch_size: 8
  optimizer: {name: adam, alpha: 0.01}
  metrics: [accuracy, f1, auc, confusion]
  early_stopping: {metric: validation_f1, patience: 3}
graph:
  - {op: linear, out_size: 16, from: x}
  - relu
  - {op: linear, out_size: 3, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
outputs: [logits]
"""


def write_blobs(folder, x_of_rows=None):
    rng = np.random.RandomState(0)
    t = rng.randint(0, 3, 96).astype(np.int64)
    x = (rng.randn(96, 4) + np.eye(3, 4)[t] * 2).astype(np.float64)
    if x_of_rows is not None:
        x = x_of_rows(x)
    np.savez(folder / "blobs.npz", x=x, t=t)


@pytest.fixture
def blobs(tmp_path):
    write_blobs(tmp_path)
    return tmp_path


def load(folder, text=SPEC):
    return load_spec_text(text, str(folder / "blobs.yaml"), str(folder))


def train(spec, out, **overrides):
    settings = settings_for(spec, **overrides)
    session = TrainingSession(spec, settings, load_spec_data(spec, settings.seed), out)
    return session, session.run()


def test_the_three_parts_are_disjoint_seeded_and_cover_every_row(blobs):
    data = load_spec_data(load(blobs), 0)
    parts = [data.train_index, data.validation_index, data.test_index]
    assert [len(p) for p in parts] == [53, 24, 19]  # 96 rows: 20% test, 25% validation
    assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(96))
    assert np.array_equal(data.test["t"], np.load(blobs / "blobs.npz")["t"][data.test_index])
    again = load_spec_data(load(blobs), 0)
    assert np.array_equal(again.test_index, data.test_index)
    other = load_spec_data(load(blobs, SPEC.replace("test: 0.2", "test: {fraction: 0.2, "
                                                     "seed: 5}")), 0)
    assert not np.array_equal(other.test_index, data.test_index)
    # without test: the validation split is the one it always was
    plain = load_spec_data(load(blobs, SPEC.replace("test: 0.2\n", "")), 0)
    order = np.random.RandomState(0).permutation(96)
    assert np.array_equal(plain.validation_index, np.sort(order[:24]))
    assert np.array_equal(plain.train_index, np.sort(order[24:])) and plain.test is None


def test_the_test_rows_are_never_read_by_training_or_early_stopping(tmp_path):
    """The same run with the test rows' features replaced by others: every epoch's figures,
    the early stop, the best epoch and the parameters are the same; only the test figures
    differ."""
    clean, poisoned = tmp_path / "clean", tmp_path / "poisoned"
    for folder in (clean, poisoned):
        folder.mkdir()
    write_blobs(clean)
    test_rows = load_spec_data(load(clean), 0).test_index

    def poison(x):
        x[test_rows] = np.random.RandomState(1).randn(len(test_rows), 4) * 50
        return x

    write_blobs(poisoned, poison)
    spec_text = SPEC.replace("epochs: 8", "epochs: 40")
    runs = [train(load(f, spec_text), f / "out") for f in (clean, poisoned)]
    (a_session, a), (b_session, b) = runs
    assert a.stopped_early and a.epoch < 40  # early stopping did decide something

    def figures(log):
        return [{k: v for k, v in e.items() if k != "elapsed_time"} for e in log]

    assert figures(a.log) == figures(b.log)
    assert a.best == {**b.best, "file": a.best["file"]} and a.best["metric"] == "validation_f1"
    for name, value in a_session.params().items():
        np.testing.assert_array_equal(b_session.params()[name], value, err_msg=name)
    assert a.test["loss"] != b.test["loss"] and a.test["rows"] == b.test["rows"] == 19
    written = json.loads((poisoned / "out" / "test.json").read_text())
    assert written["loss"] == b.test["loss"]


def test_the_test_figures_are_best_npzs_on_the_test_rows(blobs):
    spec = load(blobs)
    session, outcome = train(spec, blobs / "out")
    best = outcome.best["epoch"]
    assert outcome.test["params"] == f"best (epoch {best})" and outcome.test["rows"] == 19
    model = build_model(spec, 0)
    load_params(blobs / "out" / "best.npz", model)
    expected = evaluation(spec, model, session.data.test, metrics=spec.train.metrics)
    assert outcome.test == {"rows": 19, "params": f"best (epoch {best})",
                            **expected.to_dict()}
    written = json.loads((blobs / "out" / "test.json").read_text())
    assert written["confusion"]["matrix"] == expected.confusion.tolist()
    assert sum(map(sum, written["confusion"]["matrix"])) == 19
    assert (blobs / "out" / "confusion.png").read_bytes()[:4] == b"\x89PNG"
    assert str(blobs / "out" / "test.json") in outcome.written


def test_without_validation_the_test_rows_get_the_final_parameters(blobs):
    text = SPEC.replace("validation: 0.25\n", "").replace("validation_f1", "f1")
    session, outcome = train(load(blobs, text), blobs / "out", epochs=2)
    assert outcome.test["params"] == "final"
    expected = evaluation(session.spec, session.model, session.data.test,
                          metrics=("accuracy",))
    assert outcome.test["accuracy"] == expected.values["accuracy"]


def test_a_session_without_files_still_evaluates_the_test_rows_with_the_best_parameters(
        blobs):
    spec = load(blobs)
    settings = settings_for(spec)
    kept = TrainingSession(spec, settings, load_spec_data(spec, 0), blobs / "kept").run()
    session = TrainingSession(spec, settings, load_spec_data(spec, 0), blobs / "none",
                              files=False)
    outcome = session.run()
    assert outcome.written == [] and not any((blobs / "none").iterdir())
    assert outcome.test == kept.test


@pytest.mark.parametrize("parts, message", [
    ("test: 0.6\nvalidation: 0.5\n", "blobs.yaml:9:13: error: test fraction 0.6 (58 rows) "
     "and validation fraction 0.5 (48 rows) of 96 rows leave -10 for training"),
    ("test: 0.001\nvalidation: 0.25\n", "blobs.yaml:8:7: error: test fraction 0.001 of 96 "
     "rows leaves 96 for training and 0 for test; both need at least one"),
    ("test: 0.999\n", "blobs.yaml:8:7: error: test fraction 0.999 of 96 rows leaves 0 for "
     "training and 96 for test"),
])
def test_fractions_that_leave_no_rows_are_located_errors(blobs, parts, message):
    text = SPEC.replace("test: 0.2\nvalidation: 0.25\n", parts)
    with pytest.raises(SpecError) as caught:
        load_spec_data(load(blobs, text), 0)
    assert message in caught.value.render()


def test_two_fractions_that_each_take_no_row_are_both_reported(blobs):
    text = SPEC.replace("test: 0.2\nvalidation: 0.25\n", "test: 0.001\nvalidation: 0.002\n")
    with pytest.raises(SpecErrors) as caught:
        load_spec_data(load(blobs, text), 0)
    assert [e.line for e in caught.value.errors] == [8, 9]


@pytest.mark.parametrize("edit, message", [
    ("test: 1.5", "test fraction must be in (0, 1), got 1.5"),
    ("test: {fraction: 0.2, file: t.csv}", "test needs exactly one of fraction or file"),
    ("test: {fractoin: 0.2}", "test: unknown key 'fractoin'"),
    ("test: {file: t.txt}", "test file must be a .csv, .npz, .npy or .jsonl path"),
])
def test_the_test_section_is_validated_like_validation(blobs, edit, message):
    with pytest.raises((SpecError, SpecErrors)) as caught:
        load(blobs, SPEC.replace("test: 0.2", edit))
    assert message in str(caught.value)


def test_a_test_file_is_read_like_data(blobs):
    rng = np.random.RandomState(9)
    np.savez(blobs / "held.npz", x=rng.randn(7, 4), t=rng.randint(0, 3, 7))
    spec = load(blobs, SPEC.replace("test: 0.2", "test: {file: held.npz}"))
    data = load_spec_data(spec, 0)
    assert len(data.test["t"]) == 7 and data.test_index is None
    assert data.rows == 72  # every data row is training or validation


NO_DROPOUT_SLOW = SPEC.replace("optimizer: {name: adam, alpha: 0.01}",
                               "optimizer: {name: sgd, lr: 1.0e-30}").replace(
    "metrics: [accuracy, f1, auc, confusion]", "metrics: [f1, precision, auc]")


def test_training_figures_are_over_the_epochs_rows_not_means_over_batches(blobs):
    """With a learning rate too small to change a parameter, every step of an epoch sees the
    same model: the epoch's training F1, precision and AUC equal those of all the training
    rows at once (a mean over batches of one row would not)."""
    spec = load(blobs, NO_DROPOUT_SLOW)
    session, outcome = train(spec, blobs / "out", epochs=1, batch_size=1)
    whole = evaluation(spec, session.model, session.data.train,
                       metrics=("f1", "precision", "auc")).values
    entry = outcome.log[0]
    for m in ("f1", "precision", "auc"):
        assert entry[f"main/{m}"] == pytest.approx(whole[m], rel=1e-12), m
    columns = (blobs / "out" / "train.csv").read_text().splitlines()[0].split(",")
    assert {"f1", "auc", "validation_f1", "validation_auc"} <= set(columns)
    assert "confusion" not in columns


def test_early_stopping_maximizes_f1_on_its_own(blobs):
    session, outcome = train(load(blobs), blobs / "out")
    assert session.better(0.9, 0.5) and not session.better(0.5, 0.9)
    values = [e["validation/main/f1"] for e in outcome.log]
    assert outcome.best["value"] == max(values)
    assert outcome.best["epoch"] == 1 + values.index(max(values))


def test_a_run_interrupted_mid_epoch_resumes_to_the_same_figures(blobs):
    spec = load(blobs, SPEC.replace("early_stopping: {metric: validation_f1, patience: 3}",
                                    "checkpoint_every: 100"))
    full_session, full = train(spec, blobs / "full", epochs=3)
    holder = {}

    def stop_at(step, epoch, loss):
        if step == 10:  # inside epoch 2 (7 steps an epoch)
            holder["session"].request_stop()

    settings = settings_for(spec, epochs=3)
    first = TrainingSession(spec, settings, load_spec_data(spec, 0), blobs / "part",
                            on_step=stop_at)
    holder["session"] = first
    assert first.run().interrupted
    with np.load(blobs / "part" / "checkpoint.npz") as checkpoint:
        assert "trainer/updater/epoch_metrics/labels" in checkpoint.files
    resumed = TrainingSession(spec, settings, load_spec_data(spec, 0), blobs / "part")
    resumed.resume(blobs / "part" / "checkpoint.npz")
    outcome = resumed.run()

    def figures(log):
        return [{k: v for k, v in e.items() if k != "elapsed_time"} for e in log]

    assert figures(outcome.log) == figures(full.log)
    assert outcome.test == full.test
