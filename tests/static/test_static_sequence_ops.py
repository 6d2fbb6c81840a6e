"""Static mode for the sequence and transformer ops: a compiled replay equals define-by-run
(loss and every parameter's gradient) for layer normalization, attention, swapaxes, copy,
transpose_sequence, the N-step and stateful recurrent links and multi-head attention, over
calls with optimizer updates in between; layer normalization has an allocation-free kernel."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore.static import kernels
from graphcore.static.kernels import loss_norm as loss_norm_kernels
from graphcore.static.kernels.base import chain


def _grads(model):
    return {n: p.grad.copy() for n, p in model.namedparams()}


def _same_as_define_by_run(model, fn, make_args, calls=3):
    step = graphcore.compile(fn, params=model)
    optimizer = graphcore.optimizers.SGD(lr=0.05).setup(model)
    for call in range(calls):
        args = make_args(call)
        model.cleargrads()
        want = fn(*args)
        want.backward()
        want_grads = _grads(model)
        model.cleargrads()
        got = step(*args)
        got.backward()
        np.testing.assert_allclose(got.array, want.array, rtol=1e-5, atol=1e-6)
        for name, g in _grads(model).items():
            np.testing.assert_allclose(g, want_grads[name], rtol=1e-4, atol=1e-5, err_msg=name)
        optimizer.update()
    assert step.stats.misses == 1 and step.stats.hits == calls - 1
    return step


def _normal(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_layer_norm_and_attention_ops():
    np.random.seed(0)
    ln = L.LayerNormalization(6)
    proj = L.Linear(6, 6)
    model = graphcore.ChainList(ln, proj)
    keep = np.ones((2, 4, 4), bool)
    keep[1, :, 3] = False

    def fn(x):
        h = ln(proj(x, n_batch_axes=2))  # Chainer: L.Linear flattens after n_batch_axes
        a = F.attention(h, h, F.copy(h), mask=keep, scale=0.3)
        return F.sum(F.swapaxes(a, 1, 2) * F.swapaxes(h, 1, 2))

    _same_as_define_by_run(model, fn, lambda i: (_normal(i, 2, 4, 6),))


def test_multi_head_attention_block():
    np.random.seed(1)
    mha = L.MultiHeadAttention(2, 8)
    norm = L.LayerNormalization()
    model = graphcore.ChainList(mha, norm)
    keep = np.ones((3, 1, 5), bool)
    keep[0, 0, 4] = False

    def fn(x):
        return F.sum(F.square(norm(mha(x, mask=keep) + x)))

    model.cleargrads()
    fn(_normal(9, 3, 5, 8))  # lazy sizes
    _same_as_define_by_run(model, fn, lambda i: (_normal(i, 3, 5, 8),))


@pytest.mark.parametrize("link_class", [L.NStepLSTM, L.NStepGRU])
def test_n_step_links_over_ragged_sequences(link_class):
    np.random.seed(2)
    rnn = link_class(2, 3, 4, 0.0)
    model = graphcore.ChainList(rnn)

    def fn(a, b, c):
        ys = rnn(None, None, [a, b, c])[-1] if link_class is L.NStepLSTM else \
            rnn(None, [a, b, c])[-1]
        return sum(F.sum(y * y) for y in ys)

    _same_as_define_by_run(model, fn, lambda i: (_normal(i, 2, 3), _normal(i + 10, 4, 3),
                                                  _normal(i + 20, 1, 3)))


def test_stateful_cells_unrolled():
    np.random.seed(3)
    lstm, gru = L.LSTM(3, 4), L.GRU(4, 2)
    model = graphcore.ChainList(lstm, gru)

    def fn(*xs):
        lstm.reset_state()
        gru.reset_state()
        for x in xs:
            y = gru(lstm(x))
        return F.sum(y)

    _same_as_define_by_run(model, fn, lambda i: tuple(_normal(i + k, 2, 3) for k in range(3)))


def test_transpose_sequence_round_trip():
    np.random.seed(4)
    lin = L.Linear(3, 3)
    model = graphcore.ChainList(lin)

    def fn(a, b):
        steps = F.transpose_sequence([lin(a), lin(b)])
        back = F.transpose_sequence(list(steps))
        return F.sum(back[0] * back[0]) + F.sum(steps[-1])

    _same_as_define_by_run(model, fn, lambda i: (_normal(i, 3, 3), _normal(i + 1, 2, 3)))


def _replay_peak(model, step, x):
    for _ in range(3):  # warm up: lower once, then replay
        model.cleargrads()
        step(x).backward()
    tracemalloc.start()
    model.cleargrads()
    step(x).backward()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_layer_normalization_replays_without_allocating(monkeypatch):
    """The replay allocates no array of the data's size (numpy's broadcasting ufuncs use a
    fixed iteration buffer of at most 8192 elements); the generic fallback allocates several."""
    np.random.seed(5)
    ln = L.LayerNormalization(512)
    model = graphcore.ChainList(ln)
    x = _normal(0, 256, 512)  # 512 KiB
    peak = _replay_peak(model, graphcore.compile(lambda x: F.sum(ln(x)), params=model), x)
    assert peak < 8192 * 8 + 4096, f"replay allocated {peak} bytes"
    monkeypatch.delitem(kernels.FORWARD, "layer_normalization")
    monkeypatch.delitem(kernels.VJP, "layer_normalization")
    fallback = _replay_peak(model, graphcore.compile(lambda x: F.sum(ln(x)), params=model), x)
    assert fallback > x.nbytes  # what the kernel saves


def test_layer_normalization_kernel_is_the_ops_arithmetic():
    """The dedicated kernels give the op's values exactly, gradients included."""
    from graphcore.static.ir import Node

    x, gamma, beta = _normal(1, 4, 5), _normal(2, 5), _normal(3, 5)
    out = np.empty_like(x)
    ctx = kernels.Context({})
    node = Node(id=7, op="layer_normalization", inputs=(0, 1, 2), attrs={"eps": 1e-3},
                shape=x.shape, dtype=x.dtype)
    step = loss_norm_kernels.layer_normalization(node, [x, gamma, beta], out, ctx)
    for run in chain([step]):
        run()
    xs = [graphcore.Variable(a) for a in (x, gamma, beta)]
    y = F.layer_normalization(*xs, eps=1e-3)
    np.testing.assert_array_equal(out, y.array)
    gy = _normal(4, 4, 5)
    y.grad = gy
    y.backward()
    for index, v in enumerate(xs):
        vjp = Node(id=8, op="vjp", inputs=(7,), attrs={"index": index, "of": node.op},
                   shape=v.shape, dtype=v.dtype)
        g = np.empty_like(v.array)
        steps = loss_norm_kernels.vjp_layer_normalization(vjp, node, [x, gamma, beta], out,
                                                          [gy], g, ctx)
        for run in steps if isinstance(steps, list) else [steps]:
            run()
        np.testing.assert_allclose(g, v.grad, rtol=1e-6, atol=1e-6)


def test_a_multi_output_op_with_unread_outputs_replays():
    """split_axis whose middle and last parts nothing reads (dead code elimination drops their
    buffers): the replay must still run the op's forward and backward (a regression: the
    generic kernel required a buffer for every output)."""
    np.random.seed(6)
    lin = L.Linear(4, 6)
    model = graphcore.ChainList(lin)

    def fn(x):
        first, _, _ = F.split_axis(lin(x), 3, axis=1)
        return F.sum(F.tanh(first))

    _same_as_define_by_run(model, fn, lambda i: (_normal(i, 5, 4),))
