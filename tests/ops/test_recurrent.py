"""LSTM and GRU: ``F.n_step_lstm`` / ``F.n_step_gru`` and the links against loop
implementations written here gate by gate (forward values and gradients), Chainer's call
semantics of the stateful and stateless links, and the N-step links' sorting of sequences."""

from __future__ import annotations

import math

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import Variable, errors
from graphcore.gradient_check import check_backward, check_double_backward

TIGHT = {"eps": 1e-6, "atol": 1e-7, "rtol": 1e-6, "dtype": np.float64}


def sig(v):
    return 1 / (1 + math.exp(-v))


def dot(w, x, b):
    return [sum(w[u][j] * x[j] for j in range(len(x))) + b[u] for u in range(len(w))]


def lstm_loop(hx, cx, ws, bs, seqs):
    """Stacked LSTM, one sequence and one unit at a time (Chainer's cuDNN weight layout:
    0/4 input gate, 1/5 forget gate, 2/6 candidate, 3/7 output gate). ``seqs``: batch-major
    sequences; returns final h, c per layer and sequence, and the last layer's outputs."""
    n_layers, units = len(ws), len(bs[0][0])
    hy, cy = np.zeros_like(hx), np.zeros_like(cx)
    outputs = []
    for s, seq in enumerate(seqs):
        inputs = [list(x) for x in seq]
        for layer in range(n_layers):
            w, b = ws[layer], bs[layer]
            h, c = list(hx[layer, s]), list(cx[layer, s])
            outs = []
            for x in inputs:
                pre = [[a + r for a, r in zip(dot(w[g], x, b[g]), dot(w[g + 4], h, b[g + 4]),
                                              strict=True)] for g in range(4)]
                i = [sig(v) for v in pre[0]]
                f = [sig(v) for v in pre[1]]
                a = [math.tanh(v) for v in pre[2]]
                o = [sig(v) for v in pre[3]]
                c = [f[u] * c[u] + i[u] * a[u] for u in range(units)]
                h = [o[u] * math.tanh(c[u]) for u in range(units)]
                outs.append(h)
            hy[layer, s], cy[layer, s] = h, c
            inputs = outs
        outputs.append(np.array(inputs).reshape(len(seq), units))
    return hy, cy, outputs


def gru_loop(hx, ws, bs, seqs):
    """Stacked GRU as F.n_step_gru defines it (0/3 reset, 1/4 update, 2/5 candidate)."""
    n_layers, units = len(ws), len(bs[0][0])
    hy = np.zeros_like(hx)
    outputs = []
    for s, seq in enumerate(seqs):
        inputs = [list(x) for x in seq]
        for layer in range(n_layers):
            w, b = ws[layer], bs[layer]
            h = list(hx[layer, s])
            outs = []
            for x in inputs:
                xr, xz, xh = (dot(w[g], x, b[g]) for g in range(3))
                hr, hz, hh = (dot(w[g], h, b[g]) for g in range(3, 6))
                r = [sig(xr[u] + hr[u]) for u in range(units)]
                z = [sig(xz[u] + hz[u]) for u in range(units)]
                bar = [math.tanh(xh[u] + r[u] * hh[u]) for u in range(units)]
                h = [(1 - z[u]) * bar[u] + z[u] * h[u] for u in range(units)]
                outs.append(h)
            hy[layer, s] = h
            inputs = outs
        outputs.append(np.array(inputs).reshape(len(seq), units))
    return hy, outputs


def _weights(rng, n_layers, n_weights, in_size, units):
    ws = [[rng.normal(size=(units, in_size if layer == 0 and j < n_weights // 2 else units))
           for j in range(n_weights)] for layer in range(n_layers)]
    bs = [[rng.normal(size=units) for _ in range(n_weights)] for _ in range(n_layers)]
    return ws, bs


LENGTHS = (4, 2, 2, 1)  # sorted by decreasing length, as F.n_step_* expects


def _problem(seed, n_weights):
    rng = np.random.default_rng(seed)
    in_size, units, n_layers = 3, 2, 2
    seqs = [rng.normal(size=(n, in_size)) for n in LENGTHS]
    hx = rng.normal(size=(n_layers, len(seqs), units))
    cx = rng.normal(size=(n_layers, len(seqs), units))
    ws, bs = _weights(rng, n_layers, n_weights, in_size, units)
    return rng, seqs, hx, cx, ws, bs


def test_n_step_lstm_equals_the_loop_reference():
    rng, seqs, hx, cx, ws, bs = _problem(0, 8)
    hy, cy, ys = F.n_step_lstm(2, 0.0, hx, cx, ws, bs, F.transpose_sequence(seqs))
    ref_h, ref_c, ref_ys = lstm_loop(hx, cx, ws, bs, seqs)
    np.testing.assert_allclose(hy.array, ref_h, rtol=1e-12)
    np.testing.assert_allclose(cy.array, ref_c, rtol=1e-12)
    per_sequence = F.transpose_sequence(list(ys))
    for y, ref in zip(per_sequence, ref_ys, strict=True):
        np.testing.assert_allclose(y.array, ref, rtol=1e-12)


def test_n_step_gru_equals_the_loop_reference():
    rng, seqs, hx, _, ws, bs = _problem(1, 6)
    hy, ys = F.n_step_gru(2, 0.0, hx, ws, bs, F.transpose_sequence(seqs))
    ref_h, ref_ys = gru_loop(hx, ws, bs, seqs)
    np.testing.assert_allclose(hy.array, ref_h, rtol=1e-12)
    for y, ref in zip(F.transpose_sequence(list(ys)), ref_ys, strict=True):
        np.testing.assert_allclose(y.array, ref, rtol=1e-12)


def _flat(seqs, states, ws, bs):
    return tuple(seqs) + tuple(states) + tuple(a for layer in ws + bs for a in layer)


def _unflat(arrays, n_seqs, n_states, n_layers, n_weights):
    seqs = list(arrays[:n_seqs])
    states = arrays[n_seqs:n_seqs + n_states]
    rest = list(arrays[n_seqs + n_states:])
    ws = [rest[i * n_weights:(i + 1) * n_weights] for i in range(n_layers)]
    rest = rest[n_layers * n_weights:]
    bs = [rest[i * n_weights:(i + 1) * n_weights] for i in range(n_layers)]
    return seqs, states, ws, bs


def _numeric(f, arrays, gys, eps=1e-6):
    grads = []
    for a in arrays:
        ga = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + eps
            plus = sum((y * g).sum() for y, g in zip(f(arrays), gys, strict=True))
            a[idx] = old - eps
            minus = sum((y * g).sum() for y, g in zip(f(arrays), gys, strict=True))
            a[idx] = old
            ga[idx] = (plus - minus) / (2 * eps)
        grads.append(ga)
    return grads


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_n_step_gradients_equal_the_loop_reference(kind):
    n_weights = 8 if kind == "lstm" else 6
    rng, seqs, hx, cx, ws, bs = _problem(2, n_weights)
    states = (hx, cx) if kind == "lstm" else (hx,)
    arrays = [a.copy() for a in _flat(seqs, states, ws, bs)]

    def reference(arrays):
        s, st, w, b = _unflat(arrays, len(seqs), len(states), 2, n_weights)
        if kind == "lstm":
            h, c, ys = lstm_loop(st[0], st[1], w, b, s)
            return [h, c] + ys
        h, ys = gru_loop(st[0], w, b, s)
        return [h] + ys

    gys = [rng.normal(size=y.shape) for y in reference(arrays)]
    variables = [Variable(a.copy()) for a in arrays]
    s, st, w, b = _unflat(variables, len(seqs), len(states), 2, n_weights)
    if kind == "lstm":
        h, c, ys = F.n_step_lstm(2, 0.0, st[0], st[1], w, b, F.transpose_sequence(s))
        outs = [h, c] + list(F.transpose_sequence(list(ys)))
    else:
        h, ys = F.n_step_gru(2, 0.0, st[0], w, b, F.transpose_sequence(s))
        outs = [h] + list(F.transpose_sequence(list(ys)))
    total = sum(F.sum(y * g) for y, g in zip(outs, gys, strict=True))
    total.backward()
    expected = _numeric(reference, arrays, gys)
    for v, e in zip(variables, expected, strict=True):
        np.testing.assert_allclose(v.grad, e, rtol=1e-6, atol=1e-7)


def test_n_step_lstm_second_order():
    rng = np.random.default_rng(3)
    seqs = [rng.normal(size=(n, 2)) for n in (2, 1)]
    hx, cx = rng.normal(size=(2, 1, 2, 2))
    ws, bs = _weights(rng, 1, 8, 2, 2)

    def f(x0, x1, h, c, w0, w5):
        w = [w0] + ws[0][1:5] + [w5] + ws[0][6:]
        hy, cy, ys = F.n_step_lstm(1, 0.0, h, c, [w], bs, F.transpose_sequence([x0, x1]))
        return (hy, cy) + tuple(ys)

    inputs = (seqs[0], seqs[1], hx, cx, ws[0][0], ws[0][5])
    outs = f(*inputs)
    gys = tuple(rng.normal(size=y.shape) for y in outs)
    ggxs = tuple(rng.normal(size=x.shape) for x in inputs)
    check_backward(f, inputs, gys, **TIGHT)
    check_double_backward(f, inputs, gys, ggxs, **TIGHT)


def test_n_step_refuses_bad_shapes_with_chainers_message():
    rng, seqs, hx, cx, ws, bs = _problem(4, 8)
    with pytest.raises(errors.ShapeError, match="inconsistent input size"):
        F.n_step_lstm(2, 0.0, hx, cx, ws, bs, [s[:, :2] for s in F.transpose_sequence(seqs)])
    with pytest.raises(errors.ShapeError, match="must not increase"):
        F.n_step_lstm(2, 0.0, hx, cx, ws, bs, [np.ones((1, 3)), np.ones((2, 3))])
    with pytest.raises(errors.ShapeError, match="2 layers of 8 weights"):
        F.n_step_lstm(2, 0.0, hx, cx, ws[:1], bs[:1], F.transpose_sequence(seqs))
    with pytest.raises(errors.ShapeError, match="sorted by non-increasing length"):
        F.transpose_sequence([np.ones((1, 2)), np.ones((2, 2))])


@pytest.mark.parametrize("link_class", [L.NStepLSTM, L.NStepGRU])
def test_n_step_links_sort_and_restore_the_order_of_sequences(link_class):
    """A batch of sequences in any order gives each sequence what it gets alone."""
    rng = np.random.default_rng(5)
    with graphcore.using_config("dtype", np.float64):
        rnn = link_class(2, None, 3, 0.0)
    seqs = [rng.normal(size=(n, 4)) for n in (2, 5, 1, 3)]
    lstm = link_class is L.NStepLSTM
    batched = rnn(None, None, seqs) if lstm else rnn(None, seqs)
    assert rnn[0].w0.shape == (3, 4) and rnn[1].w0.shape == (3, 3)
    for i, seq in enumerate(seqs):
        alone = rnn(None, None, [seq]) if lstm else rnn(None, [seq])
        np.testing.assert_allclose(batched[-1][i].array, alone[-1][0].array, rtol=1e-12)
        for state, single in zip(batched[:-1], alone[:-1], strict=True):
            np.testing.assert_allclose(state.array[:, i], single.array[:, 0], rtol=1e-12)


def test_n_step_lstm_link_equals_the_loop_with_given_states_and_gradients():
    rng = np.random.default_rng(6)
    with graphcore.using_config("dtype", np.float64):
        rnn = L.NStepLSTM(1, 2, 2, 0.0)
    seqs = [rng.normal(size=(n, 2)) for n in (1, 3)]
    hx, cx = rng.normal(size=(2, 1, 2, 2))
    hy, cy, ys = rnn(hx, cx, seqs)
    ws = [[w.array for w in layer] for layer in rnn.ws]
    bs = [[b.array for b in layer] for layer in rnn.bs]
    ref_h, ref_c, ref_ys = lstm_loop(hx, cx, ws, bs, seqs)
    np.testing.assert_allclose(hy.array, ref_h, rtol=1e-12)
    np.testing.assert_allclose(cy.array, ref_c, rtol=1e-12)
    for y, ref in zip(ys, ref_ys, strict=True):
        np.testing.assert_allclose(y.array, ref, rtol=1e-12)
    check_backward(lambda a, b: rnn(None, None, [a, b])[2][1], tuple(seqs),
                   rng.normal(size=(3, 2)), params=tuple(rnn.params()), **TIGHT)
    assert [n for n, _ in rnn.namedparams()][:3] == ["/0/w0", "/0/b0", "/0/w1"]


def test_n_step_dropout_only_between_layers_and_only_in_training():
    rng = np.random.default_rng(7)
    rnn = L.NStepGRU(2, 3, 4, 0.5)
    seqs = [rng.normal(size=(3, 3)).astype(np.float32)]
    with graphcore.using_config("train", False):
        a = rnn(None, seqs)[1][0].array
        b = rnn(None, seqs)[1][0].array
    np.testing.assert_array_equal(a, b)
    np.random.seed(1)
    assert not np.allclose(rnn(None, seqs)[1][0].array, a)
    single = L.NStepGRU(1, 3, 4, 0.5)  # one layer: nothing between layers to drop
    with graphcore.using_config("train", False):
        evaluation = single(None, seqs)[1][0].array
    np.testing.assert_array_equal(single(None, seqs)[1][0].array, evaluation)


# --- stateful and stateless cells -----------------------------------------------------------

def test_stateful_lstm_equals_the_stateless_cell_carrying_state():
    rng = np.random.default_rng(8)
    lstm = L.LSTM(None, 3)
    cell = L.StatelessLSTM(4, 3)
    xs = [rng.normal(size=(2, 4)).astype(np.float32) for _ in range(3)]
    lstm(xs[0])  # lazy in_size
    cell.copyparams(lstm)
    lstm.reset_state()
    c = h = None
    for x in xs:
        y = lstm(x)
        c, h = cell(c, h, x)
        np.testing.assert_array_equal(y.array, h.array)
    np.testing.assert_array_equal(lstm.c.array, c.array)
    lstm.reset_state()
    assert lstm.h is None and lstm.c is None
    np.testing.assert_array_equal(lstm(xs[0]).array, cell(None, None, xs[0])[1].array)


def test_stateful_lstm_shrinking_batch_updates_only_the_first_rows():
    rng = np.random.default_rng(9)
    lstm = L.LSTM(2, 3)
    cell = L.StatelessLSTM(2, 3)
    cell.copyparams(lstm)
    x0, x1 = rng.normal(size=(3, 2)).astype(np.float32), rng.normal(size=(2, 2)).astype(
        np.float32)
    lstm(x0)
    h0, c0 = lstm.h.array.copy(), lstm.c.array.copy()
    y = lstm(x1)
    c_ref, h_ref = cell(c0[:2], h0[:2], x1)
    np.testing.assert_allclose(y.array, h_ref.array, rtol=1e-6)
    np.testing.assert_array_equal(lstm.h.array[2], h0[2])
    np.testing.assert_array_equal(lstm.c.array[2], c0[2])
    with pytest.raises(TypeError, match="at most"):
        lstm(rng.normal(size=(4, 2)).astype(np.float32))


def test_stateful_lstm_backpropagates_through_time():
    rng = np.random.default_rng(10)
    with graphcore.using_config("dtype", np.float64):
        lstm = L.LSTM(2, 2)

    def unrolled(a, b):
        lstm.reset_state()
        lstm(a)
        return lstm(b)

    check_backward(unrolled, (rng.normal(size=(2, 2)), rng.normal(size=(2, 2))),
                   rng.normal(size=(2, 2)), params=tuple(lstm.params()), **TIGHT)


def test_gru_cells_follow_their_formulas():
    rng = np.random.default_rng(11)
    with graphcore.using_config("dtype", np.float64):
        gru = L.GRU(3, 2)
        cell = L.StatelessGRU(3, 2)
    for p in gru.params():
        p.array[...] = rng.normal(size=p.shape)
    cell.copyparams(gru)
    x0, x1 = rng.normal(size=(2, 2, 3))

    def lin(name, v):
        link = getattr(gru, name)
        return v @ link.W.array.T + link.b.array

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    # first step: no previous state, so (as in Chainer) no U_* terms
    h1 = sigmoid(lin("W_z", x0)) * np.tanh(lin("W", x0))
    np.testing.assert_allclose(gru(x0).array, h1, rtol=1e-12)
    r = sigmoid(lin("W_r", x1) + lin("U_r", h1))
    z = sigmoid(lin("W_z", x1) + lin("U_z", h1))
    h2 = (1 - z) * h1 + z * np.tanh(lin("W", x1) + lin("U", r * h1))
    np.testing.assert_allclose(gru(x1).array, h2, rtol=1e-12)
    np.testing.assert_allclose(cell(h1, x1).array, h2, rtol=1e-12)
    with pytest.raises(ValueError, match="StatelessGRU"):
        gru(h1, x1)
    gru.reset_state()
    assert gru.h is None
    check_backward(lambda h, x: cell(h, x), (h1, x1), rng.normal(size=(2, 2)),
                   params=tuple(cell.params()), **TIGHT)


def test_lstm_bias_initialization_follows_chainer():
    lstm = L.LSTM(3, 2, forget_bias_init=2.0, bias_init=0.5)
    np.testing.assert_array_equal(lstm.upward.b.array.reshape(2, 4), [[0.5, 0.5, 2.0, 0.5]] * 2)
    lstm = L.LSTM(3, 2, forget_bias_init=graphcore.initializers.Constant(-1.0))
    np.testing.assert_array_equal(lstm.upward.b.array.reshape(2, 4), [[0, 0, -1.0, 0]] * 2)


def test_ptb_style_rnnlm_trains_with_truncated_bptt():
    """The model code of Chainer's examples/ptb (stateful LSTMs, dropout, reset_state,
    unchain_backward) runs unchanged and learns a repeating sequence."""

    class RNNLM(graphcore.Chain):
        def __init__(self, n_vocab, n_units):
            super().__init__()
            with self.init_scope():
                self.embed = L.EmbedID(n_vocab, n_units)
                self.l1 = L.LSTM(n_units, n_units)
                self.l2 = L.LSTM(n_units, n_units)
                self.l3 = L.Linear(n_units, n_vocab)
            for param in self.params():
                param.array[...] = np.random.uniform(-0.1, 0.1, param.shape)

        def reset_state(self):
            self.l1.reset_state()
            self.l2.reset_state()

        def forward(self, x):
            h0 = self.embed(x)
            h1 = self.l1(F.dropout(h0))
            h2 = self.l2(F.dropout(h1))
            return self.l3(F.dropout(h2))

    np.random.seed(0)
    model = RNNLM(6, 16)
    optimizer = graphcore.optimizers.Adam(alpha=0.01).setup(model)
    corpus = np.tile(np.arange(6, dtype=np.int32), 40)
    batch, bprop_len = 4, 5
    offsets = [i * len(corpus) // batch for i in range(batch)]
    losses = []
    for epoch_step in range(60):
        loss = 0
        for t in range(bprop_len):
            position = epoch_step * bprop_len + t
            x = np.array([corpus[(o + position) % len(corpus)] for o in offsets], np.int32)
            y = np.array([corpus[(o + position + 1) % len(corpus)] for o in offsets], np.int32)
            loss += F.softmax_cross_entropy(model(x), y)
        model.cleargrads()
        loss.backward()
        loss.unchain_backward()  # truncate: the state stays, its history goes
        optimizer.update()
        losses.append(float(loss.array) / bprop_len)
    assert np.mean(losses[-5:]) < 0.7 * np.mean(losses[:5])
    model.reset_state()
    assert model.l1.h is None
