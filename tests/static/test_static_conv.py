"""Static mode for convolutional models: compiled replay equals define-by-run (outputs and
every parameter gradient) for every convolution, pooling and normalization op, over calls
and optimizer updates, with each pass off in turn; the LeNet step allocates (almost) nothing
at replay."""

import tracemalloc

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import Chain
from graphcore.static.passes import PASS_NAMES


class EveryOp(Chain):
    """Each new op once, with parameters upstream of all of them (so every vjp runs)."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.c1 = L.Convolution2D(3, 6, 3, stride=2, pad=1)
            self.c2 = L.Convolution2D(6, 6, 3, pad=2, dilate=2, groups=2, nobias=True)
            self.d1 = L.Deconvolution2D(6, 4, 3, stride=2, pad=1)
            self.k1 = L.Convolution1D(4, 5, 3, pad=1)
            self.e1 = L.Deconvolution1D(5, 3, 2, stride=2)
            self.out = L.Linear(None, 3)

    def forward(self, x, t):
        h = F.relu(self.c1(x))                                    # (N, 6, 5, 5)
        h = F.max_pooling_2d(self.c2(h), 3, stride=1, pad=1)      # overlapping, padded
        h = F.local_response_normalization(h, n=3)
        h = self.d1(F.tanh(h))                                    # (N, 4, 9, 9)
        h = F.average_pooling_2d(h, 3, stride=2, pad=1)           # (N, 4, 5, 5)
        h = F.reshape(h, (h.shape[0], 4, 25))
        h = F.max_pooling_1d(F.relu(self.k1(h)), 2)               # (N, 5, 13) cover_all
        h = F.average_pooling_1d(self.e1(h), 3, pad=1, pad_value=None)
        y = self.out(F.reshape(h, (h.shape[0], -1)))
        return F.softmax_cross_entropy(y, t) + 0 * F.accuracy(y, t)


class LeNet(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.conv1 = L.Convolution2D(1, 20, 5)
            self.conv2 = L.Convolution2D(20, 50, 5)
            self.fc1 = L.Linear(800, 500)
            self.fc2 = L.Linear(500, 10)

    def forward(self, x, t):
        h = F.max_pooling_2d(F.relu(self.conv1(x)), 2)
        h = F.max_pooling_2d(F.relu(self.conv2(h)), 2)
        h = F.relu(self.fc1(F.reshape(h, (h.shape[0], -1))))
        return F.softmax_cross_entropy(self.fc2(h), t)


def run(model, fn, x, t):
    model.cleargrads()
    loss = fn(x, t)
    loss.backward()
    return float(loss.array), {n: p.grad.copy() for n, p in model.namedparams()}


def data(seed, shape, classes):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape).astype(np.float32),
            rng.integers(0, classes, shape[0]).astype(np.int32))


@pytest.mark.parametrize("off", [None] + [f"-{p}" for p in PASS_NAMES])
def test_every_new_op_static_equals_define_by_run(off):
    np.random.seed(0)
    model = EveryOp()
    step = graphcore.compile(model, passes=None if off is None else [off])
    optimizer = graphcore.optimizers.SGD(lr=0.05).setup(model)
    for call in range(3):
        x, t = data(call, (2, 3, 9, 9), 3)
        want_loss, want = run(model, model, x, t)
        got_loss, got = run(model, step, x, t)
        assert got_loss == pytest.approx(want_loss, rel=1e-5)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-6,
                                       err_msg=name)
        optimizer.update()
    assert step.stats.misses == 1


def _replay_peak(batch):
    """Static LeNet equals define-by-run at this batch; returns the peak bytes a replay of its
    plan (forward and backward) allocates."""
    np.random.seed(0)
    model = LeNet()
    step = graphcore.compile(model)
    x, t = data(0, (batch, 1, 28, 28), 10)
    want_loss, want = run(model, model, x, t)
    got_loss, got = run(model, step, x, t)
    assert got_loss == pytest.approx(want_loss, rel=1e-5)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-6, err_msg=name)
    plan = step.last.plan
    inputs = {name: (x if buf.dtype.kind == "f" else t) for name, buf in plan.inputs.items()}
    plan.run(inputs)
    tracemalloc.start()
    plan.run(inputs)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def test_lenet_static_equals_define_by_run_and_replays_without_allocating():
    """No array is allocated at replay: what remains is numpy's own iteration buffers for
    strided operands (a few 8192-element chunks), the same at every batch size; one
    define-by-run step of this model allocates megabytes."""
    small, large = _replay_peak(8), _replay_peak(32)
    assert small < 160 * 1024, f"replay allocated {small} bytes"
    assert large <= small + 4096, f"replay allocations grow with the batch: {small} -> {large}"


def test_convolution_bias_and_activation_fuse_into_one_kernel():
    np.random.seed(0)
    model = LeNet()
    step = graphcore.compile(model)
    x, t = data(0, (2, 1, 28, 28), 10)
    run(model, step, x, t)
    graph = step.last.plan.graph
    fused = [n for n in graph.nodes if n.op == "convolution_act"]
    assert len(fused) == 2 and all(n.attrs["activation"] == "relu" for n in fused)
    assert not [n for n in graph.nodes if n.op in ("convolution_2d", "relu")]
    assert any("convolution_2d + " in note and "-> " in note
               for r in step.last.reports if r.name == "fuse_linear" for note in r.notes)
