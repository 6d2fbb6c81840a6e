"""The spec's training loop as a library: evaluation mode, dynamic == static with dropout,
sequence data files, dtypes kept, early stopping, regression metrics, spec errors."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

from graphcore.commands.train.session import (
    TrainingSession,
    evaluate_arrays,
    load_spec_data,
    settings_for,
)
from graphcore.config import using_config
from graphcore.errors import ArgumentValueError, SpecError, SpecErrors
from graphcore.inputs.data_files import read_data
from graphcore.optimizers import Adam
from graphcore.spec import build_model, load_spec_text, make_inputs, run_spec
from graphcore.spec_static.runner import StaticSpecRunner

EVAL_SPEC = """graphtool: 1
name: evalmode
seed: 0
inputs:
  x: {random: normal, shape: [6, 4]}
graph:
  - {op: linear, out_size: 5, name: l1}
  - {op: batch_normalization, name: bn}
  - {op: dropout, ratio: 0.5}
loss: {op: sum}
outputs: [_]
"""


def array(value):
    return np.asarray(getattr(value, "array", value))


@pytest.mark.parametrize("mode", ["dynamic", "static"])
def test_evaluation_mode_turns_dropout_off_and_uses_running_statistics(mode):
    spec = load_spec_text(EVAL_SPEC)
    model = build_model(spec)
    inputs = make_inputs(spec.inputs, 0)
    if mode == "static":
        runner = StaticSpecRunner(spec, model)
        run = runner.run
    else:
        def run(inputs, backward):
            return run_spec(spec, model, inputs, backward=backward)
    trained = array(run(inputs, backward=False).outputs["_"])
    assert np.count_nonzero(trained == 0) > 0  # training: dropout zeroes some values
    with using_config("train", False):
        first = array(run(inputs, backward=False).outputs["_"])
        second = array(run(inputs, backward=False).outputs["_"])
    h = inputs["x"] @ model.l1.W.array.T + model.l1.b.array
    bn = model.bn
    expected = (h - bn.avg_mean) / np.sqrt(bn.avg_var + bn.eps) * bn.gamma.array + bn.beta.array
    np.testing.assert_allclose(first, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(first, second)


DATA_SPEC = """graphtool: 1
name: blobs
seed: 0
data:
  file: blobs.npz
  x: {key: x}
  t: {key: t}
validation: 0.25
train: {epochs: 4, batch_size: 8, optimizer: {name: momentum, lr: 0.05}, metrics: [accuracy]}
graph:
  - {op: linear, out_size: 16, from: x}
  - relu
  - {op: dropout, ratio: 0.3}
  - {op: linear, out_size: 3, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
outputs: [logits]
"""


@pytest.fixture
def blobs(tmp_path):
    rng = np.random.RandomState(0)
    t = rng.randint(0, 3, 96).astype(np.int64)
    x = (rng.randn(96, 4) + np.eye(3, 4)[t] * 3).astype(np.float64)
    np.savez(tmp_path / "blobs.npz", x=x, t=t)
    (tmp_path / "blobs.yaml").write_text(DATA_SPEC)
    return tmp_path


def load(folder, text=DATA_SPEC):
    return load_spec_text(text, str(folder / "blobs.yaml"), str(folder))


def train(spec, folder, **overrides):
    settings = settings_for(spec, **overrides)
    data = load_spec_data(spec, settings.seed)
    session = TrainingSession(spec, settings, data, folder / "out")
    return session, session.run()


def test_npz_integer_labels_keep_their_dtype_and_floats_become_float32(blobs):
    data = load_spec_data(load(blobs), 0)
    assert data.train["t"].dtype == np.int64 and data.train["x"].dtype == np.float32
    assert (data.rows, len(data.validation["t"])) == (72, 24)


def test_dynamic_and_static_training_with_dropout_lose_the_same_step_by_step(blobs):
    spec = load(blobs)
    spec.train.log_every = 1
    dynamic, d = train(spec, blobs)
    static, s = train(spec, blobs, mode="static")
    d_steps = [e["main/loss"] for e in dynamic.step_log.log]
    s_steps = [e["main/loss"] for e in static.step_log.log]
    assert len(d_steps) == 36
    np.testing.assert_allclose(s_steps, d_steps, rtol=1e-5)
    for key in ("main/accuracy", "validation/main/accuracy"):
        np.testing.assert_allclose([e[key] for e in s.log], [e[key] for e in d.log])
    assert d.log[-1]["validation/main/accuracy"] > 0.8
    rows = (blobs / "out" / "train.csv").read_text().splitlines()
    assert sum(r.startswith("step,") for r in rows) == 36
    assert sum(r.startswith("epoch,") for r in rows) == 4


def test_evaluate_arrays_weights_every_row_once(blobs):
    spec = load(blobs)
    session, outcome = train(spec, blobs, epochs=1)
    data = session.data
    whole = evaluate_arrays(spec, session.model, data.validation, batch_size=1000,
                            metrics=("accuracy",))
    small = evaluate_arrays(spec, session.model, data.validation, batch_size=5,
                            metrics=("accuracy",))
    assert whole["loss"] == pytest.approx(small["loss"], rel=1e-6)
    assert whole["accuracy"] == small["accuracy"] == outcome.log[-1]["validation/main/accuracy"]


def test_early_stopping_ends_before_the_last_epoch(blobs):
    text = DATA_SPEC.replace("epochs: 4,", "epochs: 50, early_stopping: {metric: "
                             "validation_loss, patience: 2},")
    session, outcome = train(load(blobs, text), blobs)
    assert outcome.stopped_early and outcome.epoch < 50
    losses = [e["validation/main/loss"] for e in outcome.log]
    assert min(losses[:-2]) <= min(losses[-2:])


REGRESSION = """graphtool: 1
name: line
seed: 0
data:
  file: line.csv
  x: {columns: [a]}
  y: {columns: [b]}
validation: {file: line_val.csv}
train: {epochs: 2, batch_size: 4, optimizer: sgd, metrics: [mse, mae]}
graph:
  - {op: linear, out_size: 1, from: x, to: p}
loss: {op: mean_squared_error, from: [p, y]}
outputs: [p]
"""


def test_mse_and_mae_metrics_on_a_validation_file(tmp_path):
    (tmp_path / "line.csv").write_text("a,b\n" + "".join(f"{i},{2 * i}\n" for i in range(8)))
    (tmp_path / "line_val.csv").write_text("a,b\n1,2\n3,6\n")
    spec = load_spec_text(REGRESSION, str(tmp_path / "line.yaml"), str(tmp_path))
    session, outcome = train(spec, tmp_path)
    entry = outcome.log[-1]
    p = session.model.linear_0.W.array[0, 0] * np.array([1.0, 3.0]) + \
        session.model.linear_0.b.array[0]
    assert entry["validation/main/mse"] == pytest.approx(np.mean((p - [2, 6]) ** 2), rel=1e-5)
    assert entry["validation/main/mae"] == pytest.approx(np.mean(np.abs(p - [2, 6])), rel=1e-5)
    assert entry["validation/main/loss"] == pytest.approx(entry["validation/main/mse"], rel=1e-5)


def test_sequences_from_npz_values_and_offsets_and_from_json_lines(tmp_path):
    np.savez(tmp_path / "seq.npz", tokens=np.arange(7, dtype=np.int32),
             starts=np.array([0, 2, 2, 5]))
    (tmp_path / "seq.jsonl").write_text(
        json.dumps({"tokens": [1, 2], "label": 0}) + "\n\n" +
        json.dumps({"tokens": [3, 4, 5], "label": 1}) + "\n")
    text = """graphtool: 1
data:
  file: seq.npz
  s: {values: tokens, offsets: starts}
graph: [{op: sum, from: s}]
"""
    spec = load_spec_text(text, str(tmp_path / "s.yaml"), str(tmp_path))
    arrays = make_inputs(spec.inputs, 0, tmp_path)
    assert [a.tolist() for a in arrays["s"]] == [[0, 1], [], [2, 3, 4], [5, 6]]
    assert arrays["s"][0].dtype == np.int32
    lines = load_spec_text(text.replace("seq.npz", "seq.jsonl").replace(
        "{values: tokens, offsets: starts}", "{field: tokens, dtype: int32}") +
        "  # labels\n", str(tmp_path / "s.yaml"), str(tmp_path))
    got = read_data(tmp_path / "seq.jsonl", lines.inputs)
    assert [a.tolist() for a in got["s"]] == [[1, 2], [3, 4, 5]]


@pytest.mark.parametrize("edit, message", [
    (("optimizer: {name: momentum, lr: 0.05}", "optimizer: {name: momentum, lr: 0.05, "
      "momentun: 0.8}"), "optimizer momentum has no hyperparameter 'momentun'"),
    (("metrics: [accuracy]", "metrics: [acuracy]"), "unknown metric 'acuracy'"),
    (("validation: 0.25", "validation: 1"), "validation fraction must be in (0, 1), got 1"),
    (("x: {key: x}", "x: {key: x, colum: a}"), "data input 'x': unknown key 'colum'"),
])
def test_workflow_sections_are_validated(blobs, edit, message):
    with pytest.raises(SpecErrors, match=message.replace("(", r"\(").replace(")", r"\)")):
        load(blobs, DATA_SPEC.replace(*edit))


def test_a_named_batch_dimension_needs_data():
    text = """graphtool: 1
inputs:
  x: {random: normal, shape: [batch, 3]}
graph: [relu]
"""
    with pytest.raises(SpecErrors, match="a named batch dimension \\('batch'\\) takes its size "
                       "from data"):
        load_spec_text(text)


def test_file_inputs_with_a_named_batch_dimension_run_on_any_rows(tmp_path):
    text = """graphtool: 1
inputs:
  x: {file: x.npy, shape: [rows, 3]}
  m: {file: m.npy, shape: [rows, 3]}
graph: [{op: add, from: [x, m]}]
outputs: [_]
"""
    spec = load_spec_text(text, str(tmp_path / "a.yaml"), str(tmp_path))
    for n in (1, 5):
        np.save(tmp_path / "x.npy", np.ones((n, 3), np.float32))
        np.save(tmp_path / "m.npy", np.ones((n, 3), np.float32))
        inputs = make_inputs(spec.inputs, 0, tmp_path)
        model = build_model(spec)
        for result in (run_spec(spec, model, inputs), StaticSpecRunner(spec, model).run(inputs)):
            assert array(result.outputs["_"]).shape == (n, 3)
            assert [(p.kind, p.detail) for p in result.path] == [
                ("batch", {"dim": "rows", "size": n})]
    np.save(tmp_path / "m.npy", np.ones((2, 3), np.float32))
    with pytest.raises(SpecError, match="batch dimension 'rows' is 5 for input 'x' but 2 for "
                       "input 'm'"):
        make_inputs(spec.inputs, 0, tmp_path)


def test_early_stopping_on_validation_needs_validation_data(blobs):
    from graphcore.commands.train.session import TrainingOptionError

    text = DATA_SPEC.replace("validation: 0.25\n", "").replace(
        "epochs: 4,", "epochs: 4, early_stopping: {metric: validation_loss},")
    with pytest.raises(TrainingOptionError, match="watches validation_loss, but the spec has "
                       "no validation data"):
        train(load(blobs, text), blobs)


SEQUENCE_TRAINING = """graphtool: 1
data:
  file: seq.npz
  s: {values: feats, offsets: starts}
graph:
  - {op: linear, from: s, out_size: 2, name: proj}
  - tanh
  - {op: sum}
loss: {op: square}
train: {steps: 4, batch_size: 4, shuffle: false, optimizer: {name: sgd, lr: 0.1}}
"""


@pytest.mark.parametrize("mode", ["dynamic", "static"])
def test_training_batches_per_example_runs_as_asked(tmp_path, monkeypatch, mode):
    """The session passes ``batching`` to every step's run (it used to be dropped: the CLI's
    --batching did nothing for a spec with data), and every mode trains alike."""
    from graphcore.batching import batcher

    rng = np.random.RandomState(1)
    np.savez(tmp_path / "seq.npz", feats=rng.randn(40, 3), starts=np.arange(0, 40, 5) -
             np.array([0, 1, 2, 0, 1, 2, 0, 1]))
    spec = load_spec_text(SEQUENCE_TRAINING, str(tmp_path / "s.yaml"), str(tmp_path))
    asked = []
    real_run = batcher.run
    monkeypatch.setattr(batcher, "run", lambda *a: asked.append(a[5]) or real_run(*a))
    losses = {}
    for batching in ("off", "auto", "pad"):
        asked.clear()
        settings = settings_for(spec, mode=mode)
        data = load_spec_data(spec, settings.seed)
        session = TrainingSession(spec, settings, data, tmp_path / batching, batching=batching)
        losses[batching] = [e["main/loss"] for e in session.run().log]
        if mode == "dynamic":
            assert asked and set(asked) == {batching}
    np.testing.assert_allclose(losses["auto"], losses["off"], rtol=1e-5)
    np.testing.assert_allclose(losses["pad"], losses["off"], rtol=1e-5)
    with pytest.raises(ArgumentValueError, match="batching must be one of auto, pad, off"):
        TrainingSession(spec, settings_for(spec), load_spec_data(spec, 0), tmp_path / "x",
                        batching="on")


# ---------------------------------------------------------------- the learning rate, three ways

LR_SPEC = """graphtool: 1
inputs:
  x: {random: normal, shape: [4, 3]}
graph:
  - {op: linear, out_size: 2}
loss: {op: sum}
train: TRAIN
"""


def settings(train: str, **overrides):
    return settings_for(load_spec_text(LR_SPEC.replace("TRAIN", train)), **overrides)


def rate_of(optimizer) -> dict:
    """The optimizer's learning-rate hyperparameter as it will update with it (RMSprop's
    alpha is its decay, Adam's its rate)."""
    keyword = "alpha" if isinstance(optimizer, Adam) else "lr"
    return {keyword: getattr(optimizer.hyperparam, keyword)}


@pytest.mark.parametrize("name", ["sgd", "momentum", "nesterov", "adagrad", "rmsprop", "adam"])
def test_train_lr_the_optimizers_own_rate_and_dash_dash_lr_are_one_setting(name):
    """Regression: `train: {lr: 0.03}` was refused as an unknown key, though `--lr` and a
    sweep's `train.lr` exist. The three spellings now give the same optimizer."""
    from graphcore.commands.train.settings import make_optimizer

    own = "alpha" if name == "adam" else "lr"
    spellings = [settings(f"{{optimizer: {name}, lr: 0.03}}"),
                 settings(f"{{optimizer: {{name: {name}, {own}: 0.03}}}}"),
                 settings(f"{{optimizer: {name}}}", lr=0.03)]
    made = [make_optimizer(s) for s in spellings]
    assert all(type(m) is type(made[0]) for m in made)
    assert [rate_of(m) for m in made] == [{own: 0.03}] * 3
    # a sweep's train.lr on a spec without train: goes to the same hyperparameter
    plain = load_spec_text("graphtool: 1\ninputs: {x: {zeros: [2]}}\ngraph: [relu]\n"
                           "loss: {op: sum}\n")
    assert rate_of(make_optimizer(settings_for(plain, optimizer=name, lr=0.03))) == {own: 0.03}


def test_one_optimizer_table_names_every_optimizer_with_chainers_defaults():
    """The names a spec's `train:`, `--optimizer` and a sweep accept are one table; the
    learning rate each starts from is its class's default (Chainer's)."""
    from graphcore import optimizers

    assert dict(optimizers.BY_NAME) == {
        "sgd": optimizers.SGD, "momentum": optimizers.MomentumSGD,
        "momentum_sgd": optimizers.MomentumSGD, "nesterov": optimizers.NesterovAG,
        "adagrad": optimizers.AdaGrad, "rmsprop": optimizers.RMSprop,
        "adadelta": optimizers.AdaDelta, "adam": optimizers.Adam}
    rates = {name: optimizers.default_learning_rate(name) for name in optimizers.BY_NAME}
    assert rates == {"sgd": 0.01, "momentum": 0.01, "momentum_sgd": 0.01, "nesterov": 0.01,
                     "adagrad": 0.001, "rmsprop": 0.01, "adadelta": None, "adam": 0.001}
    assert optimizers.learning_rate_keyword("adam") == "alpha"
    assert optimizers.learning_rate_keyword("adadelta") is None
    assert optimizers.hyperparameters("adam")[-1] == "lr"  # Adam's alpha, spelled lr
    assert "lr" not in optimizers.hyperparameters("adadelta")
    with pytest.raises(TypeError):
        optimizers.BY_NAME["lbfgs"] = optimizers.SGD  # read-only


def test_train_lr_follows_the_optimizer_that_runs_as_dash_dash_lr_does():
    from graphcore.commands.train.settings import make_optimizer

    switched = settings("{lr: 0.03}", optimizer="momentum")
    assert switched.hyperparameters == settings("{}", optimizer="momentum", lr=0.03)\
        .hyperparameters == {"lr": 0.03}
    assert settings("{lr: 0.03}", lr=0.5).hyperparameters == {"alpha": 0.5}  # --lr wins
    assert rate_of(make_optimizer(settings("{lr: 0.03}"))) == {"alpha": 0.03}  # adam default


def test_dash_dash_lr_overrides_adams_lr_spelling():
    """Regression: `{name: adam, lr: 0.02}` was kept as `lr` and renamed to `alpha` when the
    optimizer was made, after `--lr` had set `alpha`: `--lr 0.5` was silently ignored."""
    from graphcore.commands.train.settings import make_optimizer

    made = make_optimizer(settings("{optimizer: {name: adam, lr: 0.02}}", lr=0.5))
    assert rate_of(made) == {"alpha": 0.5}


@pytest.mark.parametrize(("train", "where", "message", "hint"), [
    ("{optimizer: adadelta, lr: 0.1}", "<spec>:7:30",
     "train: optimizer adadelta has no learning rate for lr to set",
     "remove lr, or choose an optimizer that has one: sgd, momentum, momentum_sgd, nesterov, "
     "adagrad, rmsprop, adam"),
    ("{optimizer: {name: momentum, lr: 0.1}, lr: 0.2}", "<spec>:7:47",
     "train: lr 0.2 and the optimizer's lr 0.1 are two values for one learning rate",
     "keep one of them"),
    ("{optimizer: {name: adam, alpha: 0.1}, lr: 0.2}", "<spec>:7:46",
     "train: lr 0.2 and the optimizer's alpha 0.1 are two values for one learning rate",
     "keep one of them"),
    ("{optimizer: {name: adam, lr: 0.02, alpha: 0.03}}", "<spec>:7:33",
     "optimizer adam: lr 0.02 and alpha 0.03 are two values for its one learning rate",
     "keep one: lr is another name for adam's alpha"),
    ("{optimizer: {name: adadelta, lr: 0.1}}", "<spec>:7:37",
     "optimizer adadelta has no hyperparameter 'lr' (it takes rho, eps)",
     "adadelta has no learning rate: it adapts its steps from rho and eps"),
    ("{lr: -1}", "<spec>:7:13", "lr must be a positive number, got -1", None),
])
def test_a_learning_rate_that_cannot_apply_is_refused_where_it_is_written(train, where,
                                                                          message, hint):
    with pytest.raises(SpecErrors) as info:
        load_spec_text(LR_SPEC.replace("TRAIN", train))
    (e,) = info.value.errors
    assert (f"{e.file}:{e.line}:{e.col}", e.message, e.hint) == (where, message, hint)


def test_the_same_rate_given_twice_is_one_rate():
    assert settings("{optimizer: {name: sgd, lr: 0.1}, lr: 0.1}").hyperparameters == {"lr": 0.1}


def test_switching_to_an_optimizer_without_a_rate_names_the_spec_lr():
    from graphcore.commands.train.settings import TrainingOptionError

    with pytest.raises(TrainingOptionError, match=r"optimizer adadelta has no learning rate "
                       r"\(the spec's train: sets lr\)"):
        settings("{lr: 0.1}", optimizer="adadelta")


# --- the log appended, the checkpoint of constant size -----------------------------------------

class _Recorder:
    """A writer that writes, and remembers how often each file was written whole."""

    def __init__(self):
        self.counts: dict[str, int] = {}
        self.sizes: dict[str, list[int]] = {}

    def __call__(self, path, data):
        from graphcore.files.atomic import write_atomic

        name = path.rsplit("/", 1)[-1]
        self.counts[name] = self.counts.get(name, 0) + 1
        self.sizes.setdefault(name, []).append(len(data))
        write_atomic(path, data)


def test_train_csv_is_appended_and_the_checkpoint_does_not_grow_with_the_epochs(blobs):
    """Regression: every epoch rewrote the whole log into train.csv and into the checkpoint
    (as JSON), so epoch 1000 cost several times epoch 100 and log_every: 1 was quadratic."""
    spec = load(blobs)
    spec.train.log_every = 1
    settings = settings_for(spec, epochs=40)
    writer = _Recorder()
    session = TrainingSession(spec, settings, load_spec_data(spec, settings.seed),
                              blobs / "out", writer=writer)
    session.run()
    assert writer.counts["train.csv"] == 1  # its first rows; then one append per entry
    rows = (blobs / "out" / "train.csv").read_text().splitlines()
    assert len(rows) == 1 + 40 + 40 * 9
    sizes = writer.sizes["checkpoint.npz"]
    assert len(sizes) == 40 and max(sizes) - min(sizes) < 100  # compressed counters vary
    with np.load(blobs / "out" / "checkpoint.npz") as checkpoint:
        assert not [k for k in checkpoint.files if k.endswith("/_log")]
        log = json.loads(str(checkpoint["graphtool/log"]))
    assert log["bytes"] == (blobs / "out" / "train.csv").stat().st_size


def test_resume_cuts_train_csv_to_the_checkpoint_and_continues_it(blobs):
    """Rows written after the checkpoint (a run killed between the two) are not the resumed
    run's: train.csv is cut to the length the checkpoint recorded, then appended."""
    spec = load(blobs)
    spec.train.checkpoint_every = 2
    full, _ = train(spec, blobs, epochs=4)
    full_rows = (blobs / "out" / "train.csv").read_text().splitlines()
    part_dir = blobs / "part"
    settings = settings_for(spec, epochs=3)
    part = TrainingSession(spec, settings, load_spec_data(spec, 0), part_dir)
    part.run()  # checkpoints at epoch 2 only: train.csv goes on to epoch 3
    assert len((part_dir / "train.csv").read_text().splitlines()) == 4
    settings = settings_for(spec, epochs=4)
    resumed = TrainingSession(spec, settings, load_spec_data(spec, 0), part_dir)
    resumed.resume(part_dir / "checkpoint.npz")
    assert [e["epoch"] for e in resumed.epoch_log.log] == [1, 2]
    outcome = resumed.run()
    assert [e["epoch"] for e in outcome.log] == [1, 2, 3, 4] and not outcome.notes
    rows = (part_dir / "train.csv").read_text().splitlines()
    assert [r.rsplit(",", 1)[0] for r in rows] == [r.rsplit(",", 1)[0] for r in full_rows]
    for name, value in full.params().items():
        np.testing.assert_array_equal(resumed.params()[name], value, err_msg=name)


def test_an_edited_train_csv_is_not_taken_for_the_checkpoints_log(blobs):
    spec = load(blobs)
    train(spec, blobs, epochs=2)
    csv_path = blobs / "out" / "train.csv"
    csv_path.write_text(csv_path.read_text().replace("epoch,1,", "epoch,7,"))
    session = TrainingSession(spec, settings_for(spec, epochs=3), load_spec_data(spec, 0),
                              blobs / "out")
    session.resume(blobs / "out" / "checkpoint.npz")
    assert session.notes == [f"the log before this checkpoint is not available ({csv_path} "
                             "has changed since the checkpoint was written); "
                             f"{csv_path} holds the steps after it"]
    outcome = session.run()
    assert [e["epoch"] for e in outcome.log] == [3]
    assert [r[:8] for r in csv_path.read_text().splitlines()[1:]] == ["epoch,3,"]


def test_a_checkpoint_resumes_with_or_without_a_progress_bar(blobs):
    """Regression: the progress bar (a terminal) was an extension with a trigger saved in the
    checkpoint, so a run in a terminal could not resume one made in a pipe (a missing key)."""
    spec = load(blobs)
    train(spec, blobs, epochs=2)
    seen = []
    session = TrainingSession(spec, settings_for(spec, epochs=3), load_spec_data(spec, 0),
                              blobs / "out", on_step=lambda *step: seen.append(step))
    session.resume(blobs / "out" / "checkpoint.npz")
    session.run()
    assert seen and seen[-1][:2] == (27, 3)
    again = TrainingSession(spec, settings_for(spec, epochs=4), load_spec_data(spec, 0),
                            blobs / "out")
    again.resume(blobs / "out" / "checkpoint.npz")
    assert again.run().epoch == 4


def test_a_session_without_files_writes_nothing(blobs):
    spec = load(blobs)
    settings = settings_for(spec, epochs=2)
    session = TrainingSession(spec, settings, load_spec_data(spec, 0), blobs / "none",
                              files=False)
    outcome = session.run()
    assert [e["epoch"] for e in outcome.log] == [1, 2] and outcome.written == []
    assert not any((blobs / "none").iterdir())


def test_a_run_folder_is_held_by_one_run_at_a_time(tmp_path):
    import os

    from graphcore.commands.train.run_lock import RunFolderBusy, locked

    with locked(tmp_path):
        with pytest.raises(RunFolderBusy) as busy, locked(tmp_path):
            pass
        assert busy.value.pid == os.getpid()
        assert str(busy.value) == f"{tmp_path} is being written by another training run " \
            f"(process {os.getpid()})"
    with locked(tmp_path):  # released when its holder ends
        pass


def test_an_interruption_while_a_checkpoint_is_written_waits_until_the_file_is_whole(
        blobs, monkeypatch):
    """Regression: SIGTERM arriving inside numpy's npz writer left zipfile half-closed, and its
    clean-up replaced the interruption with "Can't close the ZIP file" (exit 70). What a
    signal handler passes to ``session.interrupt`` mid-write is raised once the file is
    written; outside a file it is raised at once."""
    spec = load(blobs)
    settings = settings_for(spec, epochs=3)
    session = TrainingSession(spec, settings, load_spec_data(spec, settings.seed),
                              blobs / "out")
    with pytest.raises(KeyboardInterrupt):
        session.interrupt(KeyboardInterrupt())
    write_array = np.lib.format.write_array
    arrived = []

    def signal_arrives(*args, **kwargs):
        making_checkpoint = any(f.function == "save_checkpoint" for f in inspect.stack())
        if making_checkpoint and not arrived:  # as a handler would, inside numpy's writer
            arrived.append(True)
            session.interrupt(KeyboardInterrupt())
        return write_array(*args, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", signal_arrives)
    with pytest.raises(KeyboardInterrupt):
        session.run()
    assert arrived
    monkeypatch.undo()
    checkpoint = blobs / "out" / "checkpoint.npz"
    with np.load(checkpoint) as arrays:
        assert "graphtool/log" in arrays.files
    resumed = TrainingSession(spec, settings, load_spec_data(spec, settings.seed),
                              blobs / "out")
    resumed.resume(checkpoint)
