"""train_spec: optimizer steps lower the loss, batches are deterministic slices of the data,
options that do not fit the data are typed errors, and final_loss is what a run reports."""

from pathlib import Path

import numpy as np
import pytest

from graphcore import errors, serializers, spec
from graphcore.commands.run import run_report
from graphcore.commands.train.settings import TrainingOptionError
from graphcore.commands.train.steps import Batches, NoLossError, train_spec

SPECS = Path(__file__).resolve().parents[3] / "specs"


def load(name):
    return spec.load_spec_file(SPECS / f"{name}.yaml")


@pytest.mark.parametrize("optimizer", ["sgd", "momentum", "adam"])
def test_every_optimizer_lowers_the_loss(optimizer):
    result = train_spec(load("residual_mlp"), steps=20, optimizer=optimizer)
    assert len(result.losses) == 20
    assert result.final_loss < result.losses[0]
    assert result.batch_size == 8  # the default: all 8 rows every step


def test_training_is_deterministic_and_seeded():
    s = load("residual_mlp")
    first = train_spec(s, steps=10, batch_size=3, seed=1)
    again = train_spec(s, steps=10, batch_size=3, seed=1)
    other = train_spec(s, steps=10, batch_size=3, seed=2)
    assert first.losses == again.losses
    assert first.losses != other.losses


def test_final_loss_is_what_run_reports_with_the_trained_params(tmp_path):
    s = load("csv_classifier")
    result = train_spec(s, steps=15, optimizer="adam", lr=0.01)
    path = tmp_path / "params.npz"
    serializers.save_npz(path, result.model)
    with np.load(path) as saved:
        assert set(saved.files) == set(result.params()) == {
            "hidden/W", "hidden/b", "out/W", "out/b"}
    report = run_report(s, params_file=str(path))
    assert report.result.loss == pytest.approx(result.final_loss, rel=1e-6)
    assert result.final_loss < result.losses[0]


def test_on_step_sees_every_step():
    seen = []
    result = train_spec(load("seed_static"), steps=4, on_step=lambda k, loss: seen.append(
        (k, loss)))
    assert seen == list(enumerate(result.losses, 1))


def test_sequence_inputs_batch_over_examples():
    result = train_spec(load("rnn_sequences"), steps=6, batch_size=2, optimizer="adam",
                        lr=0.01)
    assert result.batch_size == 2 and len(result.losses) == 6
    with pytest.raises(TrainingOptionError, match="larger than the data: 3 examples"):
        train_spec(load("rnn_sequences"), steps=1, batch_size=4)


def test_batches_slice_every_input_that_shares_the_leading_axis():
    x = np.arange(10 * 2).reshape(10, 2)
    t = np.arange(10)
    w = np.ones((3, 2))  # another length: shared by every batch
    batches = Batches({"x": x, "t": t, "w": w}, 4, seed=0)
    seen = []
    for _ in range(5):  # 20 rows: two full passes over the 10 rows
        b = batches.next()
        assert b["x"].shape == (4, 2) and b["w"] is w
        np.testing.assert_array_equal(b["x"][:, 0] // 2, b["t"])  # rows stay paired
        seen.extend(b["t"].tolist())
    assert sorted(seen[:10]) == list(range(10)) and sorted(seen[10:]) == list(range(10))
    assert seen[:10] != list(range(10))  # shuffled
    again = Batches({"x": x, "t": t, "w": w}, 4, seed=0)
    np.testing.assert_array_equal(again.next()["t"], seen[:4])


def test_full_batches_are_the_data_itself():
    data = {"x": np.zeros((5, 2))}
    for size in (None, 5):
        batches = Batches(data, size, 0)
        assert batches.size == 5 and batches.next()["x"] is data["x"]


def test_batch_size_that_does_not_fit_is_a_typed_error():
    with pytest.raises(TrainingOptionError, match="batch size 9 is larger than the data: 8 "
                       "rows along the leading axis of x, t"):
        train_spec(load("residual_mlp"), steps=1, batch_size=9)
    with pytest.raises(TrainingOptionError, match="no batch axis"):
        Batches({"x": np.float32(1.0)}, 1, 0)
    with pytest.raises(TrainingOptionError, match="positive integer"):
        Batches({"x": np.zeros(3)}, 0, 0)


def test_bad_options_are_typed_errors():
    s = load("seed_static")
    with pytest.raises(TrainingOptionError, match="unknown optimizer 'lbfgs'"):
        train_spec(s, steps=1, optimizer="lbfgs")
    with pytest.raises(TrainingOptionError, match="learning rate"):
        train_spec(s, steps=1, lr=0.0)
    with pytest.raises(TrainingOptionError, match="steps"):
        train_spec(s, steps=0)
    assert train_spec(s, steps=1).lr == 0.001 and train_spec(s, steps=1, optimizer="sgd",
                                                               lr=0.5).lr == 0.5
    with pytest.raises(TrainingOptionError, match="optimizer adadelta has no learning rate"):
        train_spec(s, steps=1, optimizer="adadelta", lr=0.1)
    assert train_spec(s, steps=1, optimizer="adadelta").lr is None  # one table: accepted


def test_a_spec_without_a_loss_cannot_be_trained():
    s = spec.load_spec_text("graphtool: 1\ninputs: {x: {zeros: [2, 3]}}\ngraph: [relu]\n")
    with pytest.raises(NoLossError, match="has no loss"):
        train_spec(s, steps=1)


def test_a_failing_step_names_the_step():
    # csv_classifier reshapes the labels to exactly 12 rows, so a batch of 4 cannot run
    with pytest.raises(errors.SpecRuntimeError, match="training step 1: reshape"):
        train_spec(load("csv_classifier"), steps=1, batch_size=4)
