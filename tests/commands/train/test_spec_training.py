"""train_spec (a spec without data: trained by a TrainingSession on its own inputs): optimizer
steps lower the loss, full batches are the data itself, mini-batches deterministic shuffled
slices, options that do not fit the data are typed errors, final_loss is what a run reports."""

import tempfile
from pathlib import Path

import numpy as np
import pytest

from graphcore import errors, optimizers, serializers, spec
from graphcore.commands.run import run_report
from graphcore.commands.train.data import inputs_as_data
from graphcore.commands.train.session import TrainingSession
from graphcore.commands.train.settings import TrainingOptionError
from graphcore.commands.train.steps import NoLossError, plain_settings, train_spec
from graphcore.spec import build_model, make_inputs, run_spec

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


def test_the_result_says_how_the_last_step_batched_its_examples():
    s = load("rnn_sequences")
    result = train_spec(s, steps=2, batching="pad")
    model = build_model(s, s.seed)
    run = run_spec(s, model, make_inputs(s.inputs, s.seed, s.folder), batching="pad")
    assert result.batching is not None and result.batching == dict(run.batching)


def test_sequence_inputs_batch_over_examples():
    result = train_spec(load("rnn_sequences"), steps=6, batch_size=2, optimizer="adam",
                        lr=0.01)
    assert result.batch_size == 2 and len(result.losses) == 6
    with pytest.raises(TrainingOptionError, match="larger than the data: 3 examples"):
        train_spec(load("rnn_sequences"), steps=1, batch_size=4)


SHARED_SPEC = """graphtool: 1
name: shared
seed: 3
inputs:
  x: {random: normal, shape: [10, 2]}
  t: {random: normal, shape: [10, 1]}
  w: {random: normal, shape: [2, 1]}
graph:
  - {op: matmul, from: [x, w]}
  - {op: linear, out_size: 1, name: l}
  - {op: sub, from: [_, t]}
  - {op: mul, from: [_, _]}
loss: {op: mean}
"""


def test_the_inputs_that_share_the_leading_axis_are_batched_the_rest_shared():
    data = inputs_as_data(spec.load_spec_text(SHARED_SPEC), 3)
    assert list(data.train) == ["x", "t"] and list(data.shared) == ["w"]
    assert data.rows == 10 and data.validation is None
    scalars = inputs_as_data(spec.load_spec_text(
        "graphtool: 1\ninputs: {x: {zeros: []}}\ngraph: [relu]\nloss: {op: sum}\n"), 0)
    assert scalars.train == {} and list(scalars.shared) == ["x"] and scalars.rows == 1
    sequences = inputs_as_data(load("rnn_sequences"), 0)
    assert isinstance(next(iter(sequences.train.values())), list) and sequences.rows == 3


def reference_losses(s, steps, optimizer):
    """What a full-batch step is: run_spec over all the data, seeded seed + step - 1, then
    the optimizer's update; final_loss: all the data once more, without backward."""
    model = build_model(s, s.seed)
    data = make_inputs(s.inputs, s.seed, s.folder)
    optimizer.setup(model)
    losses = []
    for step in range(1, steps + 1):
        losses.append(float(run_spec(s, model, data, seed=s.seed + step - 1).loss))
        optimizer.update()
    return losses, float(run_spec(s, model, data, backward=False, seed=s.seed).loss)


@pytest.mark.parametrize("name", ["residual_mlp", "rnn_sequences", "param_depth"])
def test_full_batches_are_all_the_data_in_order_every_step(name):
    s = load(name)
    result = train_spec(s, steps=6, optimizer="sgd", lr=0.05)
    losses, final = reference_losses(s, 6, optimizers.SGD(lr=0.05))
    assert (result.losses, result.final_loss) == (losses, final)  # exactly: the same runs
    given = train_spec(s, steps=6, optimizer="sgd", lr=0.05, batch_size=result.batch_size)
    assert given.losses == result.losses  # a batch size of all the data: unshuffled


def test_mini_batches_cover_the_data_each_epoch_in_a_seeded_order():
    s = spec.load_spec_text(SHARED_SPEC)
    seen = []

    def record(inputs, seed):  # every step's batch, as the session's run receives it
        seen.append(inputs)
        return real(inputs, seed=seed)

    data = inputs_as_data(s, 3)
    settings = plain_settings(s, data, steps=5, batch_size=4, seed=3)
    assert settings.shuffle and settings.batch_size == 4 and settings.checkpoint_every is None
    with tempfile.TemporaryDirectory() as scratch:
        session = TrainingSession(s, settings, data, scratch, batching="auto", files=False)
        real = session.trainer.updater.run
        session.trainer.updater.run = record
        session.run()
    rows = {tuple(r): i for i, r in enumerate(data.train["x"].tolist())}
    order = [rows[tuple(r)] for b in seen for r in b["x"].tolist()]
    assert all(b["w"] is data.shared["w"] for b in seen)  # shared: whole, every step
    for b in seen:  # rows stay paired with their targets
        index = [rows[tuple(r)] for r in b["x"].tolist()]
        np.testing.assert_array_equal(b["t"], data.train["t"][index])
    assert sorted(order[:10]) == list(range(10)) and sorted(order[10:20]) == list(range(10))
    assert order[:10] != list(range(10))  # shuffled
    assert train_spec(s, steps=5, batch_size=4).losses == \
        train_spec(s, steps=5, batch_size=4).losses


def test_batch_size_that_does_not_fit_is_a_typed_error():
    with pytest.raises(TrainingOptionError, match="batch size 9 is larger than the data: 8 "
                       "rows along the leading axis of x, t"):
        train_spec(load("residual_mlp"), steps=1, batch_size=9)
    scalars = spec.load_spec_text("graphtool: 1\ninputs: {x: {zeros: []}}\ngraph: [relu]\n"
                                  "loss: {op: sum}\n")
    with pytest.raises(TrainingOptionError, match="no batch axis"):
        train_spec(scalars, steps=1, batch_size=1)
    assert train_spec(scalars, steps=2).batch_size is None  # nothing batched: whole inputs
    with pytest.raises(TrainingOptionError, match="positive integer"):
        train_spec(load("residual_mlp"), steps=1, batch_size=0)


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
