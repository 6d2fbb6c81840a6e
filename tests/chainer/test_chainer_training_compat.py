"""Chainer's training scaffolding through ``graphcore.chainer_compat``: ``chainer.training``
(Trainer, updaters, extensions, triggers), ``chainer.iterators`` and ``chainer.datasets`` under
Chainer's module names, and a training script in the form of Chainer's MNIST example (its CPU
form, ``--gpu -1``) run as a program: Classifier + Adam, SerialIterators, StandardUpdater,
Trainer, Evaluator, dump_graph, snapshot, LogReport, PlotReport, PrintReport, ProgressBar and
``--resume`` from the snapshot. Only ``get_mnist`` (a download) is replaced by random data
of MNIST's shapes, which the compat layer refuses to fetch."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import graphcore
from graphcore import chainer_compat, training

TRAIN_MNIST_STYLE = textwrap.dedent('''\
    #!/usr/bin/env python
    import argparse

    import numpy as np

    from graphcore import chainer_compat

    chainer_compat.install()

    import chainer
    import chainer.functions as F
    import chainer.links as L
    from chainer import training
    from chainer.training import extensions


    class MLP(chainer.Chain):

        def __init__(self, n_units, n_out):
            super(MLP, self).__init__()
            with self.init_scope():
                self.l1 = L.Linear(None, n_units)
                self.l2 = L.Linear(None, n_units)
                self.l3 = L.Linear(None, n_out)

        def forward(self, x):
            h1 = F.relu(self.l1(x))
            h2 = F.relu(self.l2(h1))
            return self.l3(h2)


    def mnist_like(n, seed=0):
        """MNIST's shapes and dtypes (784 pixels in [0, 1), ten classes); learnable labels."""
        rng = np.random.RandomState(seed)
        x = rng.rand(n, 784).astype(np.float32)
        t = (x @ rng.randn(784, 10)).argmax(axis=1).astype(np.int32)
        return chainer.datasets.TupleDataset(x, t)


    def main():
        parser = argparse.ArgumentParser(description='Chainer-style example: MNIST')
        parser.add_argument('--batchsize', '-b', type=int, default=20)
        parser.add_argument('--epoch', '-e', type=int, default=3)
        parser.add_argument('--frequency', '-f', type=int, default=-1)
        parser.add_argument('--gpu', '-g', type=int, default=-1)
        parser.add_argument('--out', '-o', default='result')
        parser.add_argument('--resume', '-r', default='')
        parser.add_argument('--unit', '-u', type=int, default=32)
        parser.add_argument('--noplot', dest='plot', action='store_false')
        args = parser.parse_args()

        print('GPU: {}'.format(args.gpu))
        print('# unit: {}'.format(args.unit))
        print('# Minibatch-size: {}'.format(args.batchsize))
        print('# epoch: {}'.format(args.epoch))
        print('')

        model = L.Classifier(MLP(args.unit, 10))
        if args.gpu >= 0:
            chainer.backends.cuda.get_device_from_id(args.gpu).use()
            model.to_gpu()

        optimizer = chainer.optimizers.Adam()
        optimizer.setup(model)

        # in place of chainer.datasets.get_mnist(), which downloads
        train, test = chainer.datasets.split_dataset_random(mnist_like(300), 240, seed=0)

        train_iter = chainer.iterators.SerialIterator(train, args.batchsize)
        test_iter = chainer.iterators.SerialIterator(test, args.batchsize,
                                                     repeat=False, shuffle=False)

        updater = training.updaters.StandardUpdater(
            train_iter, optimizer, device=args.gpu)
        trainer = training.Trainer(updater, (args.epoch, 'epoch'), out=args.out)

        trainer.extend(extensions.Evaluator(test_iter, model, device=args.gpu))
        trainer.extend(extensions.dump_graph('main/loss'))

        frequency = args.epoch if args.frequency == -1 else max(1, args.frequency)
        trainer.extend(extensions.snapshot(), trigger=(frequency, 'epoch'))

        trainer.extend(extensions.LogReport())

        if args.plot and extensions.PlotReport.available():
            trainer.extend(
                extensions.PlotReport(['main/loss', 'validation/main/loss'],
                                      'epoch', file_name='loss.png'))
            trainer.extend(
                extensions.PlotReport(
                    ['main/accuracy', 'validation/main/accuracy'],
                    'epoch', file_name='accuracy.png'))

        trainer.extend(extensions.PrintReport(
            ['epoch', 'main/loss', 'validation/main/loss',
             'main/accuracy', 'validation/main/accuracy', 'elapsed_time']))

        trainer.extend(extensions.ProgressBar())

        if args.resume:
            chainer.serializers.load_npz(args.resume, trainer)

        trainer.run()


    if __name__ == '__main__':
        np.random.seed(0)
        main()
    ''')


def _train(tmp_path, *args):
    script = tmp_path / "train_mnist.py"
    script.write_text(TRAIN_MNIST_STYLE)
    return subprocess.run([sys.executable, str(script), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # three script processes
def test_a_train_mnist_style_script_trains_snapshots_and_resumes(tmp_path):
    done = _train(tmp_path)
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[5].split()
    assert header == ["epoch", "main/loss", "validation/main/loss", "main/accuracy",
                      "validation/main/accuracy", "elapsed_time"], done.stdout
    result = tmp_path / "result"
    log = json.loads((result / "log").read_text())
    assert [e["epoch"] for e in log] == [1, 2, 3]
    assert [e["iteration"] for e in log] == [12, 24, 36]  # 240 rows, 20 a batch
    assert log[-1]["main/loss"] < log[0]["main/loss"]
    assert log[-1]["main/accuracy"] > log[0]["main/accuracy"]
    assert all(0 <= e["validation/main/accuracy"] <= 1 for e in log)
    printed = [line.split() for line in done.stdout.splitlines()
               if line.split()[:1] in (["1"], ["2"], ["3"])]
    assert [float(row[1]) for row in printed] == pytest.approx(
        [e["main/loss"] for e in log], rel=1e-3)
    graph = (result / "cg.dot").read_text()  # the loss's graph at the first iteration
    assert graph.count('label="LinearFunction"') == 3 and graph.count('label="ReLU"') == 2
    assert 'label="SoftmaxCrossEntropy"' in graph and 'label="(20, 784), float32"' in graph
    for png in ("loss.png", "accuracy.png"):
        assert (result / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (result / "snapshot_iter_36").is_file()

    resumed = _train(tmp_path, "--resume", "result/snapshot_iter_36", "--epoch", "4",
                     "--out", "resumed", "--noplot")
    assert resumed.returncode == 0, resumed.stderr
    continued = json.loads((tmp_path / "resumed" / "log").read_text())
    assert [e["epoch"] for e in continued] == [1, 2, 3, 4]
    assert continued[:3] == log  # the snapshot's log, then one more epoch
    assert continued[3]["iteration"] == 48


@pytest.fixture
def chainer_alias():
    chainer_compat.install()
    yield
    chainer_compat.uninstall()


def test_chainer_s_training_modules_are_graphcore_s(chainer_alias):
    import chainer
    import chainer.datasets
    import chainer.iterators
    import chainer.training
    from chainer.training import extensions, triggers, updaters
    from chainer.training.extension import make_extension
    from chainer.training.util import get_trigger

    assert chainer.training.Trainer is training.Trainer
    assert chainer.training.StandardUpdater is updaters.StandardUpdater \
        is training.StandardUpdater
    assert chainer.training.IntervalTrigger is triggers.IntervalTrigger \
        is training.triggers.IntervalTrigger
    assert chainer.training.PRIORITY_WRITER == training.PRIORITY_WRITER
    assert make_extension is training.make_extension and get_trigger is training.get_trigger
    for name in ("Evaluator", "LogReport", "PrintReport", "PlotReport", "ProgressBar",
                 "snapshot", "snapshot_object", "DumpGraph", "dump_graph", "observe_lr",
                 "ExponentialShift", "LinearShift", "StepShift", "MultistepShift",
                 "WarmupShift", "PolynomialShift", "InverseShift"):
        assert getattr(extensions, name) is getattr(training.extensions, name), name
    assert triggers.EarlyStoppingTrigger is training.triggers.EarlyStoppingTrigger
    assert triggers.MinValueTrigger is training.triggers.MinValueTrigger
    assert chainer.iterators.SerialIterator is graphcore.iterators.SerialIterator
    for name in ("TupleDataset", "DictDataset", "SubDataset", "split_dataset",
                 "split_dataset_random"):
        assert getattr(chainer.datasets, name) is getattr(graphcore.datasets, name), name
    assert chainer.dataset.DatasetMixin is graphcore.dataset.DatasetMixin
    assert chainer.training.extensions is extensions  # `import chainer` alone reaches them


def test_what_graphcore_lacks_fails_with_what_it_is(chainer_alias, tmp_path, monkeypatch):
    import chainer

    monkeypatch.setenv("CHAINER_DATASET_ROOT", str(tmp_path))
    with pytest.raises(graphcore.dataset.download.DatasetNotCached,
                       match=r"pfnet/chainer/mnist/train\.npz: not in the dataset cache, and "
                       r"graphcore does not download \(Chainer fetches it from http://yann"):
        chainer.datasets.get_mnist()
    from chainer.datasets import get_cifar10
    with pytest.raises(FileNotFoundError, match="cifar-10.npz: not in the dataset cache"):
        get_cifar10()
    with pytest.raises(NotImplementedError, match="get_svhn downloads"):
        chainer.datasets.get_svhn()
    with pytest.raises(AttributeError, match=r"chainer\.iterators\.MultiprocessIterator is not "
                       r"covered.*use SerialIterator.*has: SerialIterator"):
        chainer.iterators.MultiprocessIterator  # noqa: B018
    with pytest.raises(AttributeError, match="ParallelUpdater.*several GPUs"):
        chainer.training.updaters.ParallelUpdater  # noqa: B018
    with pytest.raises(AttributeError, match=r"chainer\.training\.extensions\.MicroAverage is "
                       "not covered by graphcore.chainer_compat: graphcore has no counterpart"):
        chainer.training.extensions.MicroAverage  # noqa: B018
    with pytest.raises(ImportError):
        from chainer.datasets import TransformDataset  # noqa: F401
    with pytest.raises(ModuleNotFoundError):
        import chainer.training.nosuch  # noqa: F401


def test_uninstall_removes_the_training_modules():
    chainer_compat.install()
    import chainer.training.extensions  # noqa: F401

    chainer_compat.uninstall()
    assert not any(name == "chainer" or name.startswith("chainer.") for name in sys.modules)
    x = np.zeros((2, 3), np.float32)
    assert graphcore.datasets.TupleDataset(x, x)[0][0].shape == (3,)
