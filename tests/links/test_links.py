"""Links: parameter naming, lazy shapes, Sequential, EmbedID, RNN and StatelessLSTM cells,
BatchNormalization."""

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import Variable
from graphcore.gradient_check import check_backward


class MLP(graphcore.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(None, 4)
            self.l2 = L.Linear(4, 2)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


class Outer(graphcore.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.mlp = MLP()
            self.head = L.Linear(2, 1, nobias=True)


def test_nested_chain_names_parameters_by_assignment():
    names = [name for name, _ in Outer().namedparams()]
    assert names == ["/mlp/l1/W", "/mlp/l1/b", "/mlp/l2/W", "/mlp/l2/b", "/head/W"]


def test_lazy_linear_takes_input_size_from_first_call():
    model = MLP()
    assert model.l1.W.array is None
    y = model(np.ones((3, 7), np.float32))
    assert y.shape == (3, 2)
    assert model.l1.W.shape == (4, 7)
    assert [n for n, _ in model.namedparams(include_uninit=False)][0] == "/l1/W"


def test_sequential_runs_links_and_functions_in_order():
    model = L.Sequential(L.Linear(3, 5), F.relu, L.Linear(5, 2))
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    l0, l2 = model[0], model[2]
    hidden = np.maximum(x @ l0.W.array.T + l0.b.array, 0)
    np.testing.assert_allclose(model(x).array, hidden @ l2.W.array.T + l2.b.array, rtol=1e-5)
    assert [n for n, _ in model.namedparams()] == ["/0/W", "/0/b", "/1/W", "/1/b"]


def test_embed_id_looks_up_rows_and_scatters_gradients():
    embed = L.EmbedID(5, 3, ignore_label=-1)
    ids = np.array([[1, 3], [1, -1]])
    y = embed(ids)
    assert y.shape == (2, 2, 3)
    np.testing.assert_array_equal(y.array[0, 0], embed.W.array[1])
    np.testing.assert_array_equal(y.array[1, 1], 0)
    F.sum(y).backward()
    np.testing.assert_array_equal(embed.W.grad[:, 0], [0, 2, 0, 1, 0])


def test_rnn_cell_shapes_and_lazy_input_size():
    cell = L.RNN(None, 5)
    x = np.ones((2, 3), np.float32)
    h = cell(x)
    assert h.shape == (2, 5)
    h = cell(x, h)
    assert h.shape == (2, 5)
    assert cell.upward.W.shape == (5, 3)
    assert np.all(np.abs(h.array) < 1)


def test_rnn_cell_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    with graphcore.using_config("dtype", np.float64):
        cell = L.RNN(3, 4)
    x, h = rng.normal(size=(2, 3)), rng.normal(size=(2, 4))
    check_backward(lambda x, h: cell(x, cell(x, h)), (x, h), rng.normal(size=(2, 4)),
                   params=tuple(cell.params()), eps=1e-6, atol=1e-7, rtol=1e-6)


def test_lstm_cell_shapes_and_zero_state():
    cell = L.StatelessLSTM(3, 4)
    x = np.random.default_rng(2).normal(size=(2, 3)).astype(np.float32)
    c, h = cell(None, None, x)
    assert h.shape == c.shape == (2, 4)
    c_zero, h_zero = cell(np.zeros((2, 4), np.float32), np.zeros((2, 4), np.float32), x)
    np.testing.assert_allclose(h.array, h_zero.array, rtol=1e-6)
    np.testing.assert_allclose(c.array, c_zero.array, rtol=1e-6)
    # The forget gate (every 4th bias starting at 2) starts at 1, the others at 0.
    np.testing.assert_array_equal(cell.upward.b.array.reshape(4, 4), [[0, 0, 1, 0]] * 4)


def test_lstm_cell_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    with graphcore.using_config("dtype", np.float64):
        cell = L.StatelessLSTM(3, 2)

    def two_steps(x, h, c):
        c, h = cell(c, h, x)
        return cell(c, h, x)

    inputs = (rng.normal(size=(2, 3)), rng.normal(size=(2, 2)), rng.normal(size=(2, 2)))
    grads = (rng.normal(size=(2, 2)), rng.normal(size=(2, 2)))
    check_backward(two_steps, inputs, grads, params=tuple(cell.params()), eps=1e-6, atol=1e-7,
                   rtol=1e-6)


def test_batch_norm_training_normalizes_and_updates_running_averages():
    bn = L.BatchNormalization(3, decay=0.9)
    x = np.random.default_rng(4).normal(2.0, 3.0, size=(16, 3, 2)).astype(np.float32)
    y = bn(x).array
    np.testing.assert_allclose(y.mean(axis=(0, 2)), 0, atol=1e-5)
    np.testing.assert_allclose(y.var(axis=(0, 2)), 1, rtol=1e-3)
    mean = x.mean(axis=(0, 2))
    unbiased_var = x.var(axis=(0, 2), ddof=1)
    np.testing.assert_allclose(bn.avg_mean, 0.1 * mean, rtol=1e-5)
    np.testing.assert_allclose(bn.avg_var, 0.9 + 0.1 * unbiased_var, rtol=1e-5)
    assert [n for n, _ in bn.namedpersistent()] == ["/avg_mean", "/avg_var", "/N"]


def test_batch_norm_test_mode_uses_running_averages_and_leaves_them_alone():
    bn = L.BatchNormalization(2)
    bn.avg_mean[...] = [1.0, -1.0]
    bn.avg_var[...] = [4.0, 0.25]
    bn.gamma.array[...] = [2.0, 1.0]
    bn.beta.array[...] = [0.5, 0.0]
    x = np.array([[3.0, 0.0], [1.0, -1.5]], np.float32)
    with graphcore.using_config("train", False):
        y = bn(x).array
    expected = (x - [1.0, -1.0]) / np.sqrt(np.array([4.0, 0.25]) + bn.eps) * [2.0, 1.0] + [0.5, 0]
    np.testing.assert_allclose(y, expected, rtol=1e-5)
    np.testing.assert_array_equal(bn.avg_mean, [1.0, -1.0])


def test_batch_norm_lazy_size_and_gradients():
    bn = L.BatchNormalization(axis=0)
    x = Variable(np.random.default_rng(5).normal(size=(6, 4)).astype(np.float32))
    F.sum(bn(x) * np.arange(4, dtype=np.float32)).backward()
    assert bn.gamma.shape == bn.avg_mean.shape == (4,)
    np.testing.assert_allclose(bn.beta.grad, 6 * np.arange(4), rtol=1e-6)


def test_disable_update_stops_gradients_for_frozen_parameters():
    model = Outer()
    model.mlp.disable_update()
    F.sum(model.head(model.mlp(np.ones((2, 3), np.float32)))).backward()
    assert all(p.grad is None for p in model.mlp.params())
    assert model.head.W.grad is not None
    model.mlp.enable_update()
    assert all(p.requires_grad for p in model.params())


def test_link_without_forward_is_a_type_error():
    with pytest.raises(TypeError, match="forward"):
        graphcore.Link()(1)


def test_lazy_linear_refuses_a_0d_input_with_a_shape_error():
    from graphcore.errors import ShapeError

    with pytest.raises(ShapeError, match="0-d input"):
        L.Linear(None, 3)(np.ones((), np.float32))


# --- Link.copy / repeat / add_link (Chainer's semantics) -------------------------------------


class _Block(graphcore.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l = L.Linear(4, 3)
            self.lazy = L.Linear(None, 2)

    def forward(self, x):
        return self.lazy(F.relu(self.l(x)))


def test_copy_share_shares_arrays_but_not_gradients():
    block = _Block()
    block(np.ones((2, 4), np.float32))
    block.cleargrads()  # caches the parameter list, which the copy must not inherit
    shared = block.copy("share")
    assert shared.l.W is not block.l.W and shared.l.W.array is block.l.W.array
    F.sum(shared(np.ones((2, 4), np.float32))).backward()
    assert shared.l.W.grad is not None and block.l.W.grad is None
    shared.cleargrads()
    assert shared.l.W.grad is None
    block.l.W.array[...] = 0  # an update through one is seen by the other
    assert not shared.l.W.array.any()
    assert shared.name is None and shared.l.name == "l"


def test_copy_copy_starts_equal_then_diverges_and_init_redraws():
    block = _Block()
    copied, redrawn = block.copy("copy"), block.copy("init")
    np.testing.assert_array_equal(copied.l.W.array, block.l.W.array)
    assert copied.l.W.array is not block.l.W.array
    assert redrawn.l.W.shape == block.l.W.shape
    assert not np.array_equal(redrawn.l.W.array, block.l.W.array)
    assert redrawn.lazy.W.array is None  # a lazy parameter stays lazy


def test_repeat_builds_a_sequential_of_copies():
    net = _Block().repeat(3)
    assert isinstance(net, graphcore.Sequential) and len(net) == 3
    assert [name for name, _ in net.namedparams()][:2] == ["/0/l/W", "/0/l/b"]
    assert not np.array_equal(net[0].l.W.array, net[1].l.W.array)  # 'init' by default
    shared = _Block().repeat(2, mode="share")
    assert shared[0].l.W.array is shared[1].l.W.array
    assert len(_Block().repeat(0)) == 0
    with pytest.raises(ValueError, match="mode"):
        _Block().repeat(2, mode="deep")


def test_sequential_copy_keeps_its_plain_functions_in_order():
    seq = graphcore.Sequential(L.Linear(3, 2), F.relu)
    again = seq.copy("copy")
    assert again[1] is F.relu and again[0] is not seq[0]
    x = np.ones((1, 3), np.float32)
    np.testing.assert_array_equal(again(x).array, seq(x).array)


def test_add_link_on_chain_and_chainlist():
    chain = graphcore.Chain()
    chain.add_link("fc", L.Linear(2, 2))
    assert [name for name, _ in chain.namedparams()] == ["/fc/W", "/fc/b"]
    with pytest.raises(AttributeError, match="exists"):
        chain.add_link("fc", L.Linear(2, 2))
    chain_list = graphcore.ChainList()
    chain_list.add_link(L.Linear(2, 2))
    assert [name for name, _ in chain_list.namedparams()] == ["/0/W", "/0/b"]
    with pytest.raises(TypeError, match="takes a Link"):
        chain_list.add_link(F.relu)
