"""The Chainer training loop: Trainer + StandardUpdater + extensions on a TupleDataset, as a
Chainer script writes it; resuming from a snapshot equals an uninterrupted run."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import training
from graphcore.training import extensions


class MLP(graphcore.Chain):
    def __init__(self, n_units: int, n_out: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = dropout
        with self.init_scope():
            self.l1 = L.Linear(None, n_units)
            self.l2 = L.Linear(None, n_out)

    def forward(self, x):
        h = F.relu(self.l1(x))
        if self.dropout:
            h = F.dropout(h, self.dropout)
        return self.l2(h)


class Classifier(graphcore.Chain):
    """Chainer's L.Classifier in a few lines: reports loss and accuracy to the reporter."""

    def __init__(self, predictor) -> None:
        super().__init__()
        with self.init_scope():
            self.predictor = predictor

    def forward(self, x, t):
        y = self.predictor(x)
        loss = F.softmax_cross_entropy(y, t)
        accuracy = float((y.array.argmax(axis=1) == t).mean())
        graphcore.report({"loss": loss, "accuracy": accuracy}, self)
        return loss


def synthetic(n: int = 120, seed: int = 0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 4).astype(np.float32)
    t = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
    return graphcore.datasets.TupleDataset(x, t)


def make_trainer(out, epochs, dropout=0.0, seed=0):
    np.random.seed(seed)
    model = Classifier(MLP(8, 2, dropout))
    optimizer = graphcore.optimizers.Adam(alpha=0.05)
    optimizer.setup(model)
    train, test = graphcore.datasets.split_dataset_random(synthetic(), 90, seed=0)
    train_iter = graphcore.iterators.SerialIterator(train, 16)
    test_iter = graphcore.iterators.SerialIterator(test, 16, repeat=False, shuffle=False)
    updater = training.updaters.StandardUpdater(train_iter, optimizer, device=-1)
    trainer = training.Trainer(updater, (epochs, "epoch"), out=str(out))
    trainer.extend(extensions.Evaluator(test_iter, model, device=-1))
    trainer.extend(extensions.LogReport())
    return trainer, model


def test_chainer_style_training_reports_each_epoch(tmp_path):
    trainer, model = make_trainer(tmp_path, 5)
    printed = io.StringIO()
    trainer.extend(extensions.snapshot(n_retains=1), trigger=(5, "epoch"))
    trainer.extend(extensions.PrintReport(
        ["epoch", "main/loss", "validation/main/loss", "main/accuracy",
         "validation/main/accuracy", "elapsed_time"], out=printed))
    assert extensions.PlotReport.available()
    trainer.extend(extensions.PlotReport(["main/loss", "validation/main/loss"], "epoch",
                                         file_name="loss.png"))
    trainer.run()
    log = trainer.get_extension("LogReport").log
    assert [entry["epoch"] for entry in log] == [1, 2, 3, 4, 5]
    assert log[-1]["iteration"] == trainer.updater.iteration == int(np.ceil(5 * 90 / 16))
    assert log[-1]["main/loss"] < log[0]["main/loss"]
    assert log[-1]["validation/main/accuracy"] > 0.8
    assert json.loads((tmp_path / "log").read_text()) == log
    assert (tmp_path / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.glob("snapshot_iter_*")] == [
        f"snapshot_iter_{trainer.updater.iteration}"]
    lines = printed.getvalue().splitlines()
    assert lines[0].split() == ["epoch", "main/loss", "validation/main/loss", "main/accuracy",
                                "validation/main/accuracy", "elapsed_time"]
    assert len(lines) == 6 and lines[5].split()[0] == "5"


def test_evaluator_runs_in_evaluation_mode(tmp_path):
    seen = []

    class Probe(graphcore.Chain):
        def forward(self, x, t):
            seen.append((graphcore.config.train, graphcore.config.enable_backprop))
            graphcore.report({"n": float(len(x))}, self)
            return F.sum(x)

    probe = Probe()
    it = graphcore.iterators.SerialIterator(synthetic(10), 4, repeat=False, shuffle=False)
    evaluator = extensions.Evaluator(it, probe)
    evaluator.name = "validation"
    result = evaluator()
    assert set(seen) == {(False, False)}
    assert result == {"validation/main/n": pytest.approx((4 + 4 + 2) / 3)}
    assert evaluator() == result  # the iterator is reset before each evaluation


@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_resumed_from_snapshot_equals_uninterrupted(tmp_path, dropout):
    full, full_model = make_trainer(tmp_path / "full", 6, dropout)
    full.run()

    first, _ = make_trainer(tmp_path / "part", 3, dropout)
    first.extend(extensions.snapshot(filename="snap"), trigger=(3, "epoch"))
    first.run()
    np.random.seed(12345)  # a fresh process: the global generator is restored from the file
    resumed, resumed_model = make_trainer(tmp_path / "part", 6, dropout, seed=99)
    graphcore.serializers.load_npz(tmp_path / "part" / "snap", resumed)
    assert resumed.updater.iteration == first.updater.iteration
    resumed.run()

    for (name, p), (_, q) in zip(full_model.namedparams(), resumed_model.namedparams(),
                                 strict=True):
        np.testing.assert_array_equal(p.array, q.array, err_msg=name)
    full_log = full.get_extension("LogReport").log
    resumed_log = resumed.get_extension("LogReport").log
    assert [e["main/loss"] for e in resumed_log] == [e["main/loss"] for e in full_log]


def test_serial_iterator_follows_chainer():
    it = graphcore.iterators.SerialIterator(list(range(5)), 2, shuffle=False)
    batches = [it.next() for _ in range(3)]
    assert batches == [[0, 1], [2, 3], [4, 0]]
    assert it.epoch == 1 and it.is_new_epoch and it.epoch_detail == pytest.approx(1.2)
    once = graphcore.iterators.SerialIterator(list(range(5)), 2, repeat=False, shuffle=False)
    assert list(once) == [[0, 1], [2, 3], [4]]
    shuffled = graphcore.iterators.SerialIterator(list(range(7)), 7)
    assert sorted(shuffled.next()) == list(range(7))


def test_datasets_and_concat_examples():
    data = synthetic(10)
    a, b = graphcore.datasets.split_dataset_random(data, 7, seed=3)
    assert len(a) == 7 and len(b) == 3
    xs = {tuple(ex[0]) for ex in a} | {tuple(ex[0]) for ex in b}
    assert len(xs) == 10
    x, t = graphcore.dataset.concat_examples(a[0:3])
    assert x.shape == (3, 4) and t.dtype == np.int32
    padded = graphcore.dataset.concat_examples([np.ones(2), np.ones(3)], padding=-1)
    np.testing.assert_array_equal(padded, [[1, 1, -1], [1, 1, 1]])
    with pytest.raises(ValueError, match="wrong length"):
        graphcore.datasets.TupleDataset(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="exceeds"):
        graphcore.datasets.split_dataset(data, 11)


def test_report_outside_a_reporter_does_nothing():
    graphcore.report({"loss": 1.0})
    reporter = graphcore.Reporter()
    observer = object()
    reporter.add_observer("main", observer)
    observation = {}
    with reporter.scope(observation):
        graphcore.report({"loss": graphcore.Variable(np.float32(2.0))}, observer)
    assert observation == {"main/loss": np.float32(2.0)}
    with reporter.scope({}), pytest.raises(KeyError):
        graphcore.report({"x": 1}, object())


def test_learning_rate_schedules_and_observe_lr(tmp_path):
    trainer, model = make_trainer(tmp_path, 4)
    optimizer = trainer.updater.get_optimizer("main")
    trainer.extend(extensions.ExponentialShift("alpha", 0.5),
                   trigger=training.triggers.ManualScheduleTrigger([2, 3], "epoch"))
    trainer.extend(extensions.observe_lr())
    trainer.extend(extensions.observe_value(
        "alpha", lambda t: t.updater.get_optimizer("main").alpha))
    trainer.run()
    assert optimizer.alpha == pytest.approx(0.05 * 0.25)
    log = trainer.get_extension("LogReport").log
    # observed before the shift of the same iteration (writers run before readers)
    assert [entry["alpha"] for entry in log] == pytest.approx([0.05, 0.05, 0.025, 0.0125])
    assert all(entry["lr"] > 0 for entry in log)

    linear = training.extensions.LinearShift("alpha", (0.1, 0.0), (0, 10))
    trainer2, _ = make_trainer(tmp_path / "b", 1)
    trainer2.extend(linear, trigger=(1, "iteration"))
    trainer2.run()
    steps = trainer2.updater.iteration
    assert trainer2.updater.get_optimizer("main").alpha == pytest.approx(
        max(0.1 * (1 - steps / 10), 0.0))


@pytest.mark.parametrize("key, value, message", [
    ("updater/iteration", np.array([3, 4]), "updater/iteration: expected an integer (a "
     "scalar); the file holds shape (2,), dtype int64"),
    ("updater/iterator:main/order", np.arange(90)[::-1] * 2, "updater/iterator:main/order: "
     "not an order of the 90 examples"),
    ("_numpy_random/keys", np.zeros(624, np.float64), "_numpy_random/keys: expected shape "
     "(624,), dtype uint32; the file holds shape (624,), dtype float64"),
    ("_numpy_random/keys", np.zeros(10**6, np.uint32), "_numpy_random/keys: expected shape "
     "(624,), dtype uint32; the file holds shape (1000000,), dtype uint32"),
    ("extensions/LogReport/_log", np.asarray("[{"), "extensions/LogReport/_log: not JSON"),
    ("extensions/LogReport/_log", np.asarray('[{"main/loss": "x"}]'),
     "extensions/LogReport/_log: expected a list of log entries (objects of numbers)"),
])
def test_a_tampered_snapshot_is_refused_naming_the_key(tmp_path, key, value, message):
    """Regression: these were a ValueError from numpy or json (a traceback) or accepted; an
    array is checked against what it is read into from its header, before it is inflated."""
    first, _ = make_trainer(tmp_path / "part", 1)
    first.extend(extensions.snapshot(filename="snap"), trigger=(1, "epoch"))
    first.run()
    with np.load(tmp_path / "part" / "snap") as npz:
        arrays = {k: npz[k] for k in npz.files}
    assert key in arrays
    arrays[key] = value
    np.savez(tmp_path / "bad.npz", **arrays)
    resumed, _ = make_trainer(tmp_path / "part", 2)
    with pytest.raises(graphcore.errors.SerializationError) as info:
        graphcore.serializers.load_npz(tmp_path / "bad.npz", resumed)
    assert str(info.value).startswith(message)
