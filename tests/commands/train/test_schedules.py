"""Learning-rate schedules, warm-up, weight decay and gradient clipping of a spec's training:
the ``lr`` column of train.csv equals each schedule's formula (computed here on its own),
the hooks change one SGD step as their definitions say, an interrupted and resumed run has
the uninterrupted one's learning rates and parameters, and bad values are located errors."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest

from graphcore import optimizers, serializers
from graphcore.commands.train.session import (
    TrainingOptionError,
    TrainingSession,
    load_spec_data,
    settings_for,
)
from graphcore.errors import SpecErrors
from graphcore.interpreter.parameters import build_model
from graphcore.spec import load_spec_text
from graphcore.training.extensions import CosineShift, MultistepShift, StepShift, WarmupShift

SPEC = """graphtool: 1
name: blobs
seed: 0
data:
  file: blobs.npz
  x: {key: x}
  t: {key: t}
validation: 0.25
train:
  epochs: EPOCHS
  batch_size: 8
  optimizer: sgd
  lr: 0.1
  metrics: [accuracy]
TRAIN
graph:
  - {op: linear, out_size: 8, from: x}
  - tanh
  - {op: linear, out_size: 3, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
"""


@pytest.fixture
def blobs(tmp_path):
    rng = np.random.RandomState(0)
    t = rng.randint(0, 3, 48).astype(np.int64)
    x = (rng.randn(48, 4) + np.eye(3, 4)[t] * 1.5).astype(np.float64)
    np.savez(tmp_path / "blobs.npz", x=x, t=t)
    return tmp_path


def spec_of(folder, train="", epochs=8):
    text = SPEC.replace("EPOCHS", str(epochs)).replace("TRAIN\n", train)
    return load_spec_text(text, str(folder / "blobs.yaml"), str(folder))


def run(spec, folder, name="out", on_step=None, **overrides):
    settings = settings_for(spec, **overrides)
    session = TrainingSession(spec, settings, load_spec_data(spec, settings.seed),
                              folder / name, on_step=on_step)
    return session, session.run()


def rows(folder, kind="epoch", name="out"):
    with open(folder / name / "train.csv", newline="") as f:
        return [r for r in csv.DictReader(f) if r["kind"] == kind]


def rates(folder, kind="epoch", name="out"):
    return [float(r["lr"]) for r in rows(folder, kind, name)]


# --- each schedule's learning rate per epoch, as its formula says --------------------------

def cosine(lr, floor, k, over):
    return floor + (lr - floor) * (1 + math.cos(math.pi * min(k - 1, over) / over)) / 2


FORMULAS = {
    "  schedule: constant\n  warmup: 3\n":
        lambda e: 0.1 * e / 4 if e <= 3 else 0.1,
    "  schedule: {kind: step, every: 3, factor: 0.5}\n":
        lambda e: 0.1 * 0.5 ** ((e - 1) // 3),
    "  schedule: {kind: exponential, factor: 0.7, min_lr: 0.02}\n":
        lambda e: max(0.1 * 0.7 ** (e - 1), 0.02),
    "  schedule: {kind: cosine}\n":
        lambda e: cosine(0.1, 0.0, e, 8),
    "  schedule: {kind: cosine, min_lr: 0.01}\n  warmup: 2\n  warmup_start: 0.001\n":
        lambda e: 0.001 + (0.1 - 0.001) * (e - 1) / 2 if e <= 2 else
        cosine(0.1, 0.01, e - 2, 6),
    "  schedule: {kind: cosine, over: 4}\n":
        lambda e: cosine(0.1, 0.0, e, 4),
}


@pytest.mark.parametrize("train", list(FORMULAS), ids=["warmup", "step", "exponential",
                                                       "cosine", "cosine-warmup", "over"])
def test_each_schedules_learning_rate_per_epoch_is_its_formula(blobs, train):
    spec = spec_of(blobs, train)
    _, outcome = run(spec, blobs)
    expected = [FORMULAS[train](e) for e in range(1, 9)]
    np.testing.assert_allclose(rates(blobs), expected, rtol=1e-12, atol=0)
    assert [e["main/lr"] for e in outcome.log] == rates(blobs)  # --json's log, the table's


def test_a_schedule_per_iteration_changes_the_rate_after_every_step(blobs):
    """36 rows / 8 = 4.5 steps an epoch; 3 epochs = 14 steps (the last one a full batch)."""
    train = ("  schedule: {kind: cosine, per: iteration}\n  warmup: 4\n  log_every: 1\n")
    spec = spec_of(blobs, train, epochs=3)
    run(spec, blobs)
    steps = -(-3 * 36 // 8)
    expected = [0.1 * s / 5 if s <= 4 else cosine(0.1, 0.0, s - 4, steps - 4)
                for s in range(1, steps + 1)]
    np.testing.assert_allclose(rates(blobs, "step"), expected, rtol=1e-12, atol=0)
    epoch_ends = [int(r["step"]) for r in rows(blobs)]  # an epoch row: its last step's rate
    np.testing.assert_allclose(rates(blobs), [expected[s - 1] for s in epoch_ends], rtol=1e-12)


def plateau_rates(values, lr, factor, patience, better, cooldown=0, floor=0.0):
    """Keras' ReduceLROnPlateau, written out: the rate of each epoch from the values the
    epochs before it reported."""
    best, wait, cool, out = None, 0, 0, [lr]
    for value in values[:-1]:
        if cool > 0:
            cool -= 1
            wait = 0
        if best is None or better(value, best):
            best, wait = value, 0
        elif cool == 0:
            wait += 1
            if wait >= patience:
                if lr > floor:
                    lr = max(lr * factor, floor)
                    cool = cooldown
                wait = 0
        out.append(lr)
    return out


@pytest.mark.parametrize("metric,better", [("validation_accuracy", lambda a, b: a > b),
                                           ("loss", lambda a, b: a < b)])
def test_plateau_reduces_the_rate_when_its_metric_stops_improving(blobs, metric, better):
    """Validation accuracy on 12 rows stalls (mode auto: max); the training loss at a rate
    of 3 climbs now and then (min). The rates follow the metric's column of train.csv."""
    lr = 0.3 if metric.startswith("validation") else 3.0
    train = f"  schedule: {{kind: plateau, metric: {metric}, factor: 0.5, patience: 2, " \
            "cooldown: 1}\n"
    spec = spec_of(blobs, train.replace("lr: 0.1", ""), epochs=14)
    run(spec, blobs, lr=lr)
    values = [float(r[metric]) for r in rows(blobs)]
    expected = plateau_rates(values, lr, 0.5, 2, better, cooldown=1)
    assert len(set(expected)) > 2  # the run did stall (and recover): the test can fail
    np.testing.assert_allclose(rates(blobs), expected, rtol=1e-12)


def test_the_lr_column_is_each_optimizers_learning_rate(blobs):
    """--lr reaches every optimizer (Adam's alpha); AdaDelta has no learning rate: no
    column, and a schedule for it is refused."""
    spec = spec_of(blobs, epochs=1)
    for name in optimizers.BY_NAME:
        if optimizers.learning_rate_keyword(name) is None:
            continue
        session, _ = run(spec, blobs, name=name, optimizer=name, lr=0.0625)
        assert rates(blobs, name=name) == [0.0625], name
        keyword = optimizers.learning_rate_keyword(name)
        assert getattr(session.optimizer.hyperparam, keyword) == 0.0625
    ada = load_spec_text(SPEC.replace("EPOCHS", "1").replace("TRAIN\n", "").replace(
        "  optimizer: sgd\n  lr: 0.1\n", "  optimizer: adadelta\n"),
        str(blobs / "blobs.yaml"), str(blobs))
    run(ada, blobs, name="ada")
    assert "lr" not in rows(blobs, name="ada")[0]
    with pytest.raises(TrainingOptionError, match="adadelta has no learning rate for the "
                       "schedule"):
        settings_for(ada, schedule="cosine")


# --- weight decay and clipping: one SGD step by hand ----------------------------------------

STEP_SPEC = """graphtool: 1
name: one_step
seed: 3
data:
  file: rows.npz
  x: {key: x}
  t: {key: t}
train: {steps: 1, batch_size: 4, shuffle: false, optimizer: sgd, lr: 0.5}
graph:
  - {op: linear, in_size: 3, out_size: 2, from: x, to: y, name: l1}
loss: {op: mean_squared_error, from: [y, t]}
"""


@pytest.mark.parametrize("decay,clip", [(None, None), (0.1, None), (None, 0.05),
                                        (0.1, 0.05)])
def test_weight_decay_and_clipping_change_an_sgd_step_as_defined(tmp_path, decay, clip):
    """The gradient of the mean squared error, rescaled to a global norm of at most
    ``clip`` (GradientClipping: times clip / (norm + 1e-6)), then ``decay * param`` added
    (WeightDecay), then ``param -= lr * grad``."""
    rng = np.random.RandomState(1)
    x, t = rng.randn(4, 3), rng.randn(4, 2)
    np.savez(tmp_path / "rows.npz", x=x, t=t)
    spec = load_spec_text(STEP_SPEC, str(tmp_path / "s.yaml"), str(tmp_path))
    start = {n.lstrip("/"): p.array.copy() for n, p in build_model(spec, 3).namedparams()}
    session, _ = run(spec, tmp_path, weight_decay=decay, gradient_clipping=clip)
    w, b = start["l1/W"], start["l1/b"]
    residual = x @ w.T + b - t
    grads = {"l1/W": 2 * residual.T @ x / residual.size,
             "l1/b": 2 * residual.sum(0) / residual.size}
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    if clip is not None and clip / (norm + 1e-6) < 1:
        grads = {k: g * clip / (norm + 1e-6) for k, g in grads.items()}
    for name, grad in grads.items():
        if decay is not None:
            grad = grad + decay * start[name]
        np.testing.assert_allclose(session.params()[name], start[name] - 0.5 * grad,
                                   rtol=1e-5, atol=1e-6, err_msg=name)  # float32
    assert norm > 0.05  # clipping 0.05 does rescale this step


# --- resume ---------------------------------------------------------------------------------

@pytest.mark.parametrize("train", [
    "  schedule: {kind: plateau, metric: validation_accuracy, factor: 0.5, patience: 1}\n"
    "  warmup: 2\n",
    "  schedule: {kind: cosine, min_lr: 0.01}\n  warmup: 3\n  weight_decay: 0.01\n"
    "  gradient_clipping: 1\n",
    "  schedule: {kind: step, every: 5, factor: 0.5, per: iteration}\n  warmup: 7\n"
    "  log_every: 2\n"], ids=["plateau", "cosine", "per-iteration"])
def test_an_interrupted_and_resumed_run_has_the_uninterrupted_ones_rates_and_parameters(
        blobs, train):
    """Stopped mid-epoch during the warm-up and again mid-schedule: the warm-up's count, the
    plateau's best, counters and the mean in progress, the cosine's period come back."""
    spec = spec_of(blobs, train, epochs=10)
    full, _ = run(spec, blobs, name="full")
    for stop_at in (7, 31, None):
        running = []

        def stop(step, epoch, loss, at=stop_at, running=running):
            if step == at:
                running[0].request_stop()

        settings = settings_for(spec)
        session = TrainingSession(spec, settings, load_spec_data(spec, 0), blobs / "part",
                                  on_step=stop)
        running.append(session)
        if (blobs / "part" / "checkpoint.npz").exists():
            session.resume(blobs / "part" / "checkpoint.npz")
        outcome = session.run()
        assert outcome.interrupted == (stop_at is not None)
    for kind in ("epoch", "step"):
        assert [{k: v for k, v in r.items() if k != "elapsed_s"} for r in rows(blobs, kind,
                                                                              "part")] == \
            [{k: v for k, v in r.items() if k != "elapsed_s"} for r in rows(blobs, kind, "full")]
    assert len(set(rates(blobs, name="full"))) > 3
    for name, value in full.params().items():
        np.testing.assert_array_equal(session.params()[name], value, err_msg=name)


def test_a_checkpoint_of_another_schedule_is_refused(blobs):
    from graphcore.errors import SerializationError
    spec = spec_of(blobs, "  schedule: {kind: step, every: 2}\n", epochs=2)
    run(spec, blobs)
    for change in ({"schedule": "step:every=3"}, {"weight_decay": 0.1}, {"warmup": 1}):
        session = TrainingSession(spec, settings_for(spec, epochs=3, **change),
                                  load_spec_data(spec, 0), blobs / "out")
        with pytest.raises(SerializationError, match="other training settings"):
            session.resume(blobs / "out" / "checkpoint.npz")


# --- the extensions themselves (Chainer's) --------------------------------------------------

class _Hyper:
    lr = 1.0


class _Optimizer:
    def __init__(self):
        self.hyperparam = _Hyper()


@pytest.mark.parametrize("make,expected", [
    (lambda o: StepShift("lr", 0.5, 2, init=1.0, optimizer=o), [1, 1, .5, .5, .25]),
    (lambda o: MultistepShift("lr", 1.0, 0.1, [2, 4], optimizer=o), [1, 1, .1, .1, .01]),
    (lambda o: WarmupShift("lr", 0.2, 4, 1.0, optimizer=o), [.2, .4, .6, .8, 1.0]),
    (lambda o: CosineShift("lr", 4, 0.0, init=1.0, optimizer=o),
     [1, (1 + 2 ** -.5) / 2, .5, (1 - 2 ** -.5) / 2, 0.0]),
])
def test_the_shifts_values_per_call_and_after_a_snapshot(make, expected):
    """The value before the first call, then after each; a copy restored from a snapshot
    taken after two calls goes on from the third value (Chainer's MultistepShift and
    WarmupShift would start again)."""
    optimizer = _Optimizer()
    shift = make(optimizer)
    shift.initialize(None)
    seen = [optimizer.hyperparam.lr]
    for _ in range(4):
        shift(None)
        seen.append(optimizer.hyperparam.lr)
        if len(seen) == 3:
            snapshot = io.BytesIO()
            serializers.save_npz(snapshot, shift)
    np.testing.assert_allclose(seen, expected, atol=1e-15)
    restored_optimizer = _Optimizer()
    restored = make(restored_optimizer)
    snapshot.seek(0)
    serializers.load_npz(snapshot, restored)
    restored.initialize(None)
    after = [restored_optimizer.hyperparam.lr]
    for _ in range(2):
        restored(None)
        after.append(restored_optimizer.hyperparam.lr)
    np.testing.assert_allclose(after, expected[2:], atol=1e-15)


# --- located errors -------------------------------------------------------------------------

BAD = {
    "  schedule: {kind: cosin}\n": ("unknown schedule kind 'cosin'", "did you mean 'cosine'"),
    "  schedule: {kind: step}\n": ("schedule step needs 'every'", None),
    "  schedule: {kind: step, every: 0.5}\n": ("every must be an integer >= 1, got 0.5", None),
    "  schedule: {kind: exponential, factor: -1}\n": ("factor must be > 0, got -1", None),
    "  schedule: {kind: plateau, factor: 2}\n": ("factor must be in (0, 1), got 2", None),
    "  schedule: {kind: plateau, per: iteration}\n": ("it takes no per: iteration", None),
    "  schedule: {kind: plateau, metric: validation_f1}\n":
        ("metric 'validation_f1' is not reported", None),
    "  schedule: {kind: cosine, per: week}\n": ("per must be one of epoch, iteration", None),
    "  schedule: {kind: cosine, min_lr: 0.5}\n": ("min_lr 0.5 is not below the learning rate "
                                                  "0.1", None),
    "  schedule: {kind: step, every: 2, factr: 0.5}\n":
        ("schedule step has no setting 'factr'", "did you mean 'factor'"),
    "  schedule: [cosine]\n": ("schedule must be a kind (cosine) or a mapping", None),
    "  warmup: 1.5\n": ("warmup must be an integer >= 0 (epochs), got 1.5", None),
    "  warmup: 2\n  warmup_start: 0.2\n": ("warmup_start 0.2 is not below the learning rate",
                                           None),
    "  warmup_start: 0.01\n": ("warmup_start without a warm-up", "add warmup: N"),
    "  weight_decay: -0.1\n": ("weight_decay must be a number >= 0, got -0.1", None),
    "  gradient_clipping: 0\n": ("gradient_clipping must be a number > 0, got 0", None),
}


def test_bad_schedule_values_are_located_errors_all_at_once(tmp_path):
    text = SPEC.replace("EPOCHS", "3")
    lines = text.splitlines()
    at = lines.index("TRAIN")
    for bad, (message, hint) in BAD.items():
        with pytest.raises(SpecErrors) as caught:
            load_spec_text(text.replace("TRAIN\n", bad), str(tmp_path / "s.yaml"),
                           str(tmp_path))
        errors = caught.value.errors
        assert len(errors) == 1, (bad, [str(e) for e in errors])
        error = errors[0]
        assert message in error.message, (bad, error.message)
        assert error.line - 1 in range(at, at + bad.count("\n")), (bad, error.line)
        if hint is not None:
            assert hint in (error.hint or ""), (bad, error.hint)
    together = "".join(b for b in BAD if "warmup" not in b and "schedule" not in b)
    with pytest.raises(SpecErrors) as caught:
        load_spec_text(text.replace("TRAIN\n", together), str(tmp_path / "s.yaml"),
                       str(tmp_path))
    assert len(caught.value.errors) == 2


def test_adadelta_with_a_schedule_is_a_located_error(tmp_path):
    text = SPEC.replace("EPOCHS", "3").replace("  optimizer: sgd\n  lr: 0.1\n",
                                                "  optimizer: adadelta\n")
    with pytest.raises(SpecErrors) as caught:
        load_spec_text(text.replace("TRAIN\n", "  warmup: 2\n"), str(tmp_path / "s.yaml"),
                       str(tmp_path))
    (error,) = caught.value.errors
    assert "optimizer adadelta has no learning rate for warmup to change" in error.message
    assert error.line == text.splitlines().index("TRAIN") + 1
