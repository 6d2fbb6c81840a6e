"""What running Chainer's example model code needed, each in a small model of our own written
in that code's style (Chainer's own code is kept outside this repository): ``L.Linear``
flattening an (N, C, ...) input, a ``@static_graph`` predictor under a loss computed outside
it, ``report``, ``concat_examples``, the VAE losses, ``Link.xp`` and the ``chainer`` alias.
"""

import sys

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import chainer_compat, dataset, errors, reporter
from graphcore.gradient_check import check_backward

# --- L.Linear: Chainer's n_batch_axes ---------------------------------------------------------


def test_linear_link_flattens_everything_after_the_batch_axis_as_chainer():
    x = np.random.default_rng(0).standard_normal((2, 4, 1)).astype(np.float32)
    lin = L.Linear(None, 3)  # a bag-of-words encoder's (B, N, 1) output, as Chainer feeds it
    y = lin(x)
    assert y.shape == (2, 3) and lin.W.shape == (3, 4)
    np.testing.assert_allclose(y.array, x.reshape(2, 4) @ lin.W.array.T + lin.b.array,
                               rtol=1e-6)
    per_step = L.Linear(1, 3)(x, n_batch_axes=2)  # Chainer's keyword keeps the leading axes
    assert per_step.shape == (2, 4, 3)


def test_a_spec_linear_still_maps_the_last_axis():
    from graphcore.language.layers import _linear

    link = _linear({"out_size": 3})
    assert link(np.ones((2, 5, 4), np.float32)).shape == (2, 5, 3)


# --- @static_graph / compile: a compiled predictor under an outside loss ----------------------


class StaticMLP(graphcore.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(6, 5)
            self.l2 = L.Linear(5, 3)

    @graphcore.static_graph
    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((4, 6)).astype(np.float32), rng.integers(0, 3, 4).astype(np.int32)


def test_gradients_flow_from_an_outside_loss_into_a_static_predictor():
    """Classifier(predictor) with a @static_graph predictor: the loss is computed outside the
    plan. Before, the plan's output was a constant and the parameters got no gradient."""
    x, t = _data()
    static = StaticMLP()
    dynamic = StaticMLP()
    dynamic.copyparams(static)
    for _ in range(2):  # the first call traces, the second replays
        static.cleargrads()
        F.softmax_cross_entropy(static(x) * 2.0, t).backward()
    dynamic.cleargrads()
    h = dynamic.l2(F.relu(dynamic.l1(x)))
    F.softmax_cross_entropy(h * 2.0, t).backward()
    for (name, p), q in zip(static.namedparams(), dynamic.params(), strict=True):
        assert p.grad is not None, name
        np.testing.assert_allclose(p.grad, q.grad, rtol=1e-5, atol=1e-7, err_msg=name)


def test_a_static_predictor_trains_with_an_optimizer():
    x, t = _data(1)
    model = StaticMLP()
    optimizer = graphcore.optimizers.SGD(lr=0.5).setup(model)
    losses = []
    for _ in range(5):
        model.cleargrads()
        loss = F.softmax_cross_entropy(model(x), t)
        loss.backward()
        optimizer.update()
        losses.append(float(loss.array))
    assert losses[-1] < losses[0]


def test_backward_after_the_plan_ran_again_gives_the_first_calls_gradients():
    """A second call while the first awaits backward gets its own buffers (never stale)."""
    x, t = _data()
    model = StaticMLP()
    reference = StaticMLP()
    reference.copyparams(model)
    first = F.softmax_cross_entropy(model(x), t)
    model(x[::-1].copy())  # replays the plan on another batch before the first backward
    first.backward()
    F.softmax_cross_entropy(reference.l2(F.relu(reference.l1(x))), t).backward()
    for p, q in zip(model.params(), reference.params(), strict=True):
        np.testing.assert_allclose(p.grad, q.grad, rtol=1e-5, atol=1e-7)


def test_several_outputs_all_carry_gradients_to_a_loss_outside():
    lin = L.Linear(3, 2)
    step = graphcore.compile(lambda x: (lin(x), lin(x) * 2), params=lin)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a, b = step(x)
    F.sum(a * b).backward()  # d/dW of sum(2 (xW^T + b)^2)
    expected = 4 * (x @ lin.W.array.T + lin.b.array).T @ x
    np.testing.assert_allclose(lin.W.grad, expected, rtol=1e-5)
    with graphcore.no_backprop_mode():  # inference: fine
        a, b = step(x)
    np.testing.assert_allclose(b.array, 2 * a.array)


def test_static_graph_accepts_chainers_options():
    class Unrolled(graphcore.Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.lstm = L.LSTM(3, 4)

        @graphcore.static_graph(enable_double_backprop=False, verbosity_level=0,
                                force_test_define_by_run=True)
        def forward(self, words):
            return [self.lstm(w) for w in words]

    model = Unrolled()
    ys = model([np.ones((2, 3), np.float32)] * 3)
    assert len(ys) == 3 and ys[-1].creator is not None  # define-by-run, as asked
    with pytest.raises(NotImplementedError, match="enable_double_backprop"):
        graphcore.static_graph(enable_double_backprop=True)


# --- reporter, concat_examples, xp ------------------------------------------------------------


class Reporting(graphcore.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l = L.Linear(2, 2)

    def forward(self, x):
        loss = F.sum(self.l(x))
        reporter.report({"loss": loss, "count": 3}, self)
        return loss


def test_report_is_dropped_outside_a_scope_and_collected_inside():
    model = Reporting()
    x = np.ones((1, 2), np.float32)
    model(x)  # no reporter: nothing happens
    r = reporter.Reporter()
    r.add_observer("main", model)
    observation = {}
    with r.scope(observation):
        loss = model(x)
        graphcore.report({"lr": 0.1})
    # the value without its graph, as Chainer reports unless config.keep_graph_on_report
    assert float(observation["main/loss"]) == float(loss.array)
    assert observation["main/count"] == 3
    assert observation["lr"] == 0.1
    with r.scope({}), pytest.raises(KeyError, match="not registered"):
        Reporting()(x)


def test_concat_examples_stacks_fields_and_pads():
    batch = [(np.array([1, 2], np.int32), np.int32(0)), (np.array([3], np.int32), np.int32(1))]
    with pytest.raises(ValueError):
        dataset.concat_examples(batch)  # ragged without padding
    xs, ts = dataset.concat_examples(batch, padding=-1)
    np.testing.assert_array_equal(xs, [[1, 2], [3, -1]])
    np.testing.assert_array_equal(ts, [0, 1])
    xs = dataset.concat_examples([np.zeros(2), np.ones(2)], -1)
    assert xs.shape == (2, 2)
    with pytest.raises(ValueError, match="host only"):
        dataset.concat_examples([np.zeros(2)], device=0)


def test_links_use_numpy_as_their_array_module():
    assert L.Linear(2, 3).xp is np


# --- VAE losses --------------------------------------------------------------------------------


def test_vae_losses_match_their_formulas_and_gradients():
    rng = np.random.default_rng(3)
    mu, ln_var = rng.standard_normal((2, 3, 4))
    x = (rng.random((3, 4)) > 0.5).astype(np.float64)
    y = rng.standard_normal((3, 4))
    kl = F.gaussian_kl_divergence(mu, ln_var)
    np.testing.assert_allclose(kl.array, 0.5 * np.sum(mu**2 + np.exp(ln_var) - ln_var - 1))
    nll = F.bernoulli_nll(x, y)
    np.testing.assert_allclose(nll.array, np.sum(np.log1p(np.exp(y)) - x * y))
    g = F.gaussian_nll(x, mu, ln_var, reduce="no")
    expect = 0.5 * (np.log(2 * np.pi) + ln_var + (x - mu) ** 2 * np.exp(-ln_var))
    np.testing.assert_allclose(g.array, expect)
    z, eps = F.gaussian(mu, ln_var, return_eps=True)
    np.testing.assert_allclose(z.array, mu + np.exp(ln_var / 2) * eps)
    check_backward(lambda m, v: F.gaussian_kl_divergence(m, v), (mu, ln_var), None)
    check_backward(lambda m, v: F.gaussian(m, v, eps=eps), (mu, ln_var), rng.standard_normal(
        (3, 4)))
    check_backward(lambda yy: F.bernoulli_nll(x, yy), y, None)
    with pytest.raises(ValueError, match="reduce"):
        F.bernoulli_nll(x, y, reduce="max")
    np.testing.assert_allclose(F.bernoulli_nll(x, y, reduce="mean").array,
                               F.bernoulli_nll(x, y).array / x.size, rtol=1e-6)


# --- the chainer alias -------------------------------------------------------------------------


@pytest.fixture
def chainer_alias():
    chainer_compat.install()
    yield
    chainer_compat.uninstall()


def test_install_maps_chainers_modules_and_uninstall_restores(chainer_alias):
    import chainer
    import chainer.functions
    import chainer.links
    from chainer import optimizers, serializers
    from chainer.backends import cuda
    from chainer.dataset import convert
    from chainer.functions.loss.vae import gaussian_kl_divergence

    assert chainer.functions.relu is F.relu and chainer.links.Linear is L.Linear
    assert chainer.Chain is graphcore.Chain and optimizers is graphcore.optimizers
    assert serializers.save_npz is graphcore.serializers.save_npz
    # Chainer's layout of modules, each name graphcore's object of that name
    from chainer.functions.math import basic_math
    from chainer.links.connection import linear
    assert basic_math.Add is graphcore.ops.arithmetic.Add and linear.Linear is L.Linear
    assert chainer.functions.noise.dropout.dropout is F.dropout
    with pytest.raises(AttributeError, match=r"chainer\.functions\.math\.basic_math\.Foo is "
                       "not covered"):
        basic_math.Foo  # noqa: B018
    assert convert.concat_examples is dataset.concat_examples
    assert gaussian_kl_divergence is F.gaussian_kl_divergence
    assert isinstance(cuda.to_cpu(graphcore.Variable(np.ones(2))), np.ndarray)
    with pytest.raises(RuntimeError, match="no GPU"):
        cuda.to_gpu(np.ones(2))
    with pytest.raises(ModuleNotFoundError):
        import chainer.links.model.vision  # noqa: F401  (not covered: fails loudly)
    import chainer.distributions as D

    assert D.Normal is graphcore.distributions.Normal
    with pytest.raises(AttributeError, match="chainer.distributions.Gamma is not covered"):
        D.Gamma  # noqa: B018
    chainer_compat.uninstall()
    assert "chainer" not in sys.modules
    chainer_compat.install()


def test_a_chainer_style_text_model_trains_through_the_alias(chainer_alias):
    """Old-style Chain(**links), self.xp, sequence embedding through concat/split_axis,
    NStepLSTM, a bag-of-words branch through concat_examples(padding=-1) and an (N, C, 1)
    Linear input, report(), an optimizer hook: the idioms of Chainer's text examples."""
    import chainer
    import chainer.functions as CF
    import chainer.links as CL
    from chainer import reporter as chainer_reporter

    class Encoder(chainer.Chain):
        def __init__(self, n_vocab, n_units):
            super().__init__(embed=CL.EmbedID(n_vocab, n_units, ignore_label=-1),
                             rnn=CL.NStepLSTM(1, n_units, n_units, 0.0),
                             out=CL.Linear(None, 2))

        def forward(self, xs, ys):
            sections = np.cumsum([len(x) for x in xs[:-1]])
            exs = CF.split_axis(self.embed(CF.concat(xs, axis=0)), sections, 0)
            h, _, _ = self.rnn(None, None, exs)
            block = chainer.dataset.convert.concat_examples(xs, padding=-1)
            bow = CF.sum(CF.transpose(self.embed(block), (0, 2, 1))[:, :, :, None], axis=2)
            bow = bow / self.xp.array([len(x) for x in xs], np.float32)[:, None, None]
            loss = CF.softmax_cross_entropy(self.out(h[-1]) + self.out(bow),
                                            CF.concat(ys, axis=0))
            chainer_reporter.report({"loss": loss}, self)
            return loss

    rng = np.random.default_rng(0)
    xs = [rng.integers(0, 9, n).astype(np.int32) for n in (4, 2, 3)]
    ys = [np.array([k % 2], np.int32) for k in range(3)]
    model = Encoder(9, 4)
    optimizer = chainer.optimizers.Adam(alpha=0.05)
    optimizer.setup(model)
    optimizer.add_hook(chainer.optimizer_hooks.WeightDecay(1e-4))
    losses = []
    for _ in range(6):
        optimizer.update(model, xs, ys)
        losses.append(float(model(xs, ys).array))
    assert losses[-1] < losses[0]


def test_readme_chainer_example_runs(tmp_path, monkeypatch):
    import re
    from pathlib import Path

    readme = Path(__file__).resolve().parents[2] / "README.md"
    blocks = [b for b in re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.S)
              if "chainer_compat.install()" in b]
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    try:
        exec(compile(blocks[0], str(readme), "exec"), namespace)  # noqa: S102 - our own README
    finally:
        chainer_compat.uninstall()
    assert namespace["model"].l1.W.shape == (16, 4)
    assert namespace["optimizer"].t == 3
    assert "chainer" not in sys.modules and list(tmp_path.iterdir()) == []


def test_static_code_runs_on_every_call_not_only_while_tracing():
    class Counting(graphcore.Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.l = L.Linear(3, 2)
            self.calls = 0

        @graphcore.static_code
        def count(self):
            self.calls += 1

        @graphcore.static_graph
        def forward(self, x):
            self.count()
            return F.sum(self.l(x))

    model = Counting()
    for _ in range(4):  # one trace, three replays
        model(np.ones((2, 3), np.float32)).backward()
    assert model.calls == 4

    class Reading(Counting):
        @graphcore.static_graph
        def forward(self, x):
            self.record(self.l(x))
            return F.sum(self.l(x))

        @graphcore.static_code
        def record(self, value):
            pass

    with pytest.raises(errors.TraceError, match="cannot take a Variable"):
        Reading()(np.ones((2, 3), np.float32))
