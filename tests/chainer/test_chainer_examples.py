"""Chainer's own example scripts, unchanged (``chainer_suite/chainer_examples/``, Chainer
7.8.1's ``examples/``, MIT), run as programs after ``chainer_compat.install()`` on synthetic
data written where Chainer's dataset loaders look for their cached copies."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "chainer_suite" / "chainer_examples"

RUN_UNCHANGED = """
import runpy, sys
from graphcore import chainer_compat
chainer_compat.install()
script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")
"""


def run_example(script: Path, args: list[str], cwd: Path, dataset_root: Path):
    env = {"CHAINER_DATASET_ROOT": str(dataset_root), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg", "HOME": str(cwd)}
    return subprocess.run([sys.executable, "-c", RUN_UNCHANGED, str(script), *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def write_synthetic_mnist(root: Path, n_train: int = 600, n_test: int = 200) -> None:
    """MNIST's cached form (uint8 images (N, 784), uint8 labels): each class lights its own
    band of pixels over noise, so a few steps of training separate them."""
    directory = root / "pfnet" / "chainer" / "mnist"
    directory.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for name, n in (("train", n_train), ("test", n_test)):
        y = rng.integers(0, 10, n).astype(np.uint8)
        x = rng.integers(0, 40, (n, 784)).astype(np.uint8)
        for label in range(10):
            x[y == label, label * 78:(label + 1) * 78] = 255
        np.savez_compressed(directory / f"{name}.npz", x=x, y=y)


def test_train_mnist_runs_unchanged_and_learns(tmp_path):
    write_synthetic_mnist(tmp_path / "datasets")
    done = run_example(EXAMPLES / "mnist" / "train_mnist.py",
                       ["--epoch", "3", "--unit", "50", "--batchsize", "50", "--out", "result"],
                       tmp_path, tmp_path / "datasets")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Device: @numpy" in done.stdout
    log = json.loads((tmp_path / "result" / "log").read_text())
    assert [entry["epoch"] for entry in log] == [1, 2, 3]
    assert log[-1]["main/loss"] < log[0]["main/loss"]
    assert log[-1]["validation/main/accuracy"] > 0.9
    for name in ("loss.png", "accuracy.png", "cg.dot", "snapshot_iter_36"):
        assert (tmp_path / "result" / name).is_file(), name
    # --resume continues from the snapshot: one more epoch, the log keeps the first three
    again = run_example(EXAMPLES / "mnist" / "train_mnist.py",
                        ["--epoch", "4", "--unit", "50", "--batchsize", "50", "--out", "result",
                         "--resume", "result/snapshot_iter_36"],
                        tmp_path, tmp_path / "datasets")
    assert again.returncode == 0, again.stderr[-3000:]
    log = json.loads((tmp_path / "result" / "log").read_text())
    assert [entry["epoch"] for entry in log] == [1, 2, 3, 4]


def test_train_mnist_without_the_cached_dataset_says_it_cannot_download(tmp_path):
    done = run_example(EXAMPLES / "mnist" / "train_mnist.py", ["--epoch", "1"], tmp_path,
                       tmp_path / "empty")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert "DatasetNotCached" in last
    assert f"{tmp_path}/empty/pfnet/chainer/mnist/train.npz: not in the dataset cache, and " \
        "graphcore does not download" in last


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_get_mnist_reads_chainers_cache_and_preprocesses_as_chainer(tmp_path, monkeypatch, ndim):
    from graphcore import datasets

    write_synthetic_mnist(tmp_path, n_train=20, n_test=10)
    monkeypatch.setenv("CHAINER_DATASET_ROOT", str(tmp_path))
    train, test = datasets.get_mnist(ndim=ndim, scale=2.0)
    assert len(train) == 20 and len(test) == 10
    x, t = train[0]
    assert x.shape == {1: (784,), 2: (28, 28), 3: (1, 28, 28)}[ndim]
    assert x.dtype == np.float32 and t.dtype == np.int32
    raw = np.load(tmp_path / "pfnet/chainer/mnist/train.npz")
    np.testing.assert_allclose(x.ravel(), raw["x"][0] * (2.0 / 255), rtol=1e-6)
    assert t == raw["y"][0]
    images, _ = datasets.get_mnist(withlabel=False, ndim=3, rgb_format=True)
    assert images.shape == (20, 3, 28, 28)
