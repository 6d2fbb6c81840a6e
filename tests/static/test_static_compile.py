"""Static mode for Python models: compiled replay equals define-by-run (outputs and
gradients), over several calls, after optimizer updates, in training and inference, and with
each pass switched off in turn; plans are cached by input signature."""

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import Chain, errors
from graphcore.static.passes import PASS_NAMES


class StaticGraphModel(Chain):  # the seed's static example
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(None, 5)
            self.l2 = L.Linear(5, 2)

    def forward(self, x):
        h = F.relu(self.l1(x))
        return self.l2(h)


class Classifier(Chain):
    def __init__(self, depth=3):
        super().__init__()
        with self.init_scope():
            self.layers = graphcore.ChainList(*[L.Linear(8, 8) for _ in range(depth)])
            self.out = L.Linear(8, 3)

    def forward(self, x, t):
        h = x
        for layer in self.layers:
            h = F.tanh(layer(h)) + h * 0.5
        return F.softmax_cross_entropy(self.out(F.relu(h)), t)


def snapshot(model):
    return {n: (None if p.grad is None else p.grad.copy()) for n, p in model.namedparams()}


def reference(model, fn, *args):
    model.cleargrads()
    y = fn(*args)
    y.backward()
    return y.array.copy(), snapshot(model)


def compiled_run(model, step, *args):
    model.cleargrads()
    y = step(*args)
    y.backward()
    return y.array.copy(), snapshot(model)


def assert_same(a, b, rtol=1e-5):
    (ya, ga), (yb, gb) = a, b
    np.testing.assert_allclose(ya, yb, rtol=rtol, atol=1e-6)
    assert ga.keys() == gb.keys()
    for k in ga:
        np.testing.assert_allclose(ga[k], gb[k], rtol=rtol, atol=1e-6, err_msg=k)


def data(seed, n=6):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 8)).astype(np.float32), rng.integers(0, 3, n).astype(np.int32)


@pytest.mark.parametrize("off", [None] + [f"-{p}" for p in PASS_NAMES])
def test_classifier_equals_define_by_run_over_calls_and_updates(off):
    np.random.seed(0)
    model = Classifier()
    step = graphcore.compile(model, passes=None if off is None else [off])
    optimizer = graphcore.optimizers.SGD(lr=0.1).setup(model)
    for call in range(4):
        x, t = data(call)
        want = reference(model, model, x, t)
        got = compiled_run(model, step, x, t)
        assert_same(got, want)
        optimizer.update()  # in place: the next replay must see the new weights
    assert step.stats.misses == 1 and step.stats.hits == 3


def test_seed_static_model_in_training_and_inference():
    np.random.seed(1)
    model = StaticGraphModel()
    x = np.random.rand(3, 4).astype(np.float32)
    model(x)  # lazy l1 gets its shape
    loss_step = graphcore.compile(lambda x: F.sum(model(x)), params=model)
    for _ in range(3):
        assert_same(compiled_run(model, loss_step, x), reference(model, lambda x: F.sum(model(x)),
                                                                 x))
    infer = graphcore.compile(model)
    with graphcore.using_config("train", False):
        y = infer(x)
        np.testing.assert_allclose(y.array, model(x).array, rtol=1e-6)
    with graphcore.no_backprop_mode():
        x2 = np.random.rand(3, 4).astype(np.float32)
        np.testing.assert_allclose(infer(x2).array, model(x2).array, rtol=1e-6)


def test_static_graph_decorator_per_instance():
    class Net(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.l1 = L.Linear(4, 3)

        @graphcore.static_graph
        def forward(self, x):
            return F.sum(F.sigmoid(self.l1(x)))

    a, b = Net(), Net()
    x = np.ones((2, 4), np.float32)
    ya, yb = a(x), b(x)
    assert ya.array != yb.array  # each instance replays its own parameters
    a.cleargrads()
    ya.backward()
    assert a.l1.W.grad is not None and b.l1.W.grad is None


def test_plans_are_cached_by_input_shape_for_a_python_loop():
    np.random.seed(2)
    cell = L.Linear(6, 4)
    inp = L.Linear(3, 4)

    def sequence_loss(*xs):
        h = np.zeros((1, 4), np.float32)
        for x in xs:
            h = F.tanh(inp(x) + cell(F.concat([h, h[:, :2]], axis=1)))
        return F.sum(h)

    model = graphcore.ChainList(cell, inp)
    step = graphcore.compile(sequence_loss, params=model)
    rng = np.random.default_rng(0)
    for length in (3, 5, 3, 5, 2):
        xs = [rng.standard_normal((1, 3)).astype(np.float32) for _ in range(length)]
        assert_same(compiled_run(model, step, *xs), reference(model, sequence_loss, *xs))
    assert (step.stats.misses, step.stats.hits) == (3, 2)


def test_passes_shrink_the_program_and_report_it():
    np.random.seed(3)
    model = Classifier(depth=2)
    step = graphcore.compile(model)
    x, t = data(0)
    step(x, t).backward()
    compiled = step.last
    names = [r.name for r in compiled.reports]
    assert names == ["dce", "cse", "fold", "fuse_linear", "fuse_concat_linear", "mask_grads",
                     "fuse_elementwise", "plan_memory"] or names == list(PASS_NAMES)
    assert len(compiled.plan.graph.nodes) < len(compiled.trace.graph.nodes)
    assert "%0 = input x0 : f32[6,8]" in compiled.ir
    assert "linear_act" in compiled.optimized_ir or "fused" in compiled.optimized_ir
    assert sum(r.bytes_saved for r in compiled.reports) > 0


def test_unknown_pass_and_bad_outputs_are_errors():
    with pytest.raises(ValueError, match="unknown pass"):
        graphcore.compile(lambda x: x, passes=["-fusion"])
    step = graphcore.compile(lambda x: 3.0)
    with pytest.raises(errors.TraceError, match="must return Variables"):
        step(np.ones(2, np.float32))
