"""Layer normalization, attention and their links against straightforward loop
implementations written here (forward values and gradients), plus their error contracts."""

from __future__ import annotations

import math

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import Variable, errors
from graphcore.gradient_check import check_backward

TIGHT = {"eps": 1e-6, "atol": 1e-7, "rtol": 1e-6, "dtype": np.float64}


# --- loop references --------------------------------------------------------------------------

def layer_norm_loop(x, gamma, beta, eps):
    x2 = x.reshape(-1, x.shape[-1])
    out = np.empty_like(x2)
    for r, row in enumerate(x2):
        n = len(row)
        mean = sum(row) / n
        var = sum((v - mean) ** 2 for v in row) / n
        for j in range(n):
            out[r, j] = (row[j] - mean) / math.sqrt(var + eps) * gamma[j] + beta[j]
    return out.reshape(x.shape)


def attention_loop(q, k, v, keep=None, scale=None):
    """One query at a time: scores, a softmax over the kept keys, a weighted sum of values."""
    batch, lq, d = q.shape
    lk, dv = v.shape[1], v.shape[2]
    scale = 1 / math.sqrt(d) if scale is None else scale
    out = np.zeros((batch, lq, dv))
    for b in range(batch):
        for i in range(lq):
            kept = [j for j in range(lk) if keep is None or keep[b, i, j]]
            if not kept:
                continue
            scores = {j: scale * sum(q[b, i, c] * k[b, j, c] for c in range(d)) for j in kept}
            top = max(scores.values())
            weights = {j: math.exp(s - top) for j, s in scores.items()}
            total = sum(weights.values())
            for j in kept:
                out[b, i] += weights[j] / total * v[b, j]
    return out


def numeric_grads(f, arrays, gy, eps=1e-6):
    """Central differences of sum(f(*arrays) * gy) for each array (the reference gradient)."""
    grads = []
    for a in arrays:
        ga = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + eps
            plus = (f(*arrays) * gy).sum()
            a[idx] = old - eps
            minus = (f(*arrays) * gy).sum()
            a[idx] = old
            ga[idx] = (plus - minus) / (2 * eps)
        grads.append(ga)
    return grads


# --- layer normalization ---------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 5)])
def test_layer_normalization_equals_the_loop_reference(shape):
    rng = np.random.default_rng(0)
    x = rng.normal(1.0, 2.0, shape)
    gamma, beta = rng.normal(size=shape[-1]), rng.normal(size=shape[-1])
    xs = [Variable(a.copy()) for a in (x, gamma, beta)]
    y = F.layer_normalization(*xs, eps=1e-5)
    np.testing.assert_allclose(y.array, layer_norm_loop(x, gamma, beta, 1e-5), rtol=1e-12)
    gy = rng.normal(size=shape)
    F.sum(y * gy).backward()
    expected = numeric_grads(lambda a, g_, b: layer_norm_loop(a, g_, b, 1e-5),
                             [x.copy(), gamma.copy(), beta.copy()], gy)
    for v, e in zip(xs, expected, strict=True):
        np.testing.assert_allclose(v.grad, e, rtol=1e-6, atol=1e-7)


def test_layer_normalization_refuses_mismatched_parameters():
    with pytest.raises(errors.ShapeError, match=r"gamma and beta of shape \(n,\)"):
        F.layer_normalization(np.ones((2, 3)), np.ones(4), np.zeros(4))
    with pytest.raises(errors.DTypeError, match="dtype"):
        F.layer_normalization(np.ones((2, 3)), np.ones(3, np.float32), np.zeros(3))


def test_layer_normalization_link_is_lazy_and_starts_as_identity_scale():
    ln = L.LayerNormalization()
    x = np.random.default_rng(1).normal(size=(3, 4, 5)).astype(np.float32)
    y = ln(x)
    assert ln.gamma.shape == ln.beta.shape == (5,)
    assert [n for n, _ in ln.namedparams()] == ["/gamma", "/beta"]
    np.testing.assert_allclose(y.array, layer_norm_loop(x.astype(np.float64), np.ones(5),
                                                        np.zeros(5), 1e-6), rtol=1e-4,
                               atol=1e-5)
    assert y.dtype == np.float32


def test_layer_normalization_link_gradients():
    rng = np.random.default_rng(2)
    with graphcore.using_config("dtype", np.float64):
        ln = L.LayerNormalization(4)
    ln.gamma.array[...] = rng.normal(size=4)
    check_backward(ln, rng.normal(size=(3, 4)), rng.normal(size=(3, 4)),
                   params=(ln.gamma, ln.beta), **TIGHT)


# --- attention -------------------------------------------------------------------------------

@pytest.mark.parametrize("masked", [False, True])
def test_attention_equals_the_loop_reference(masked):
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2))
    keep = None
    if masked:
        keep = rng.random((2, 3, 5)) < 0.6
        keep[0, 1] = False  # a query that may see nothing: zero output, no gradient
    vars_ = [Variable(a.copy()) for a in (q, k, v)]
    y = F.attention(*vars_, mask=keep)
    np.testing.assert_allclose(y.array, attention_loop(q, k, v, keep), rtol=1e-12, atol=1e-14)
    if masked:
        np.testing.assert_array_equal(y.array[0, 1], 0.0)
    gy = rng.normal(size=y.shape)
    F.sum(y * gy).backward()
    expected = numeric_grads(lambda a, b, c: attention_loop(a, b, c, keep),
                             [q.copy(), k.copy(), v.copy()], gy)
    for var, e in zip(vars_, expected, strict=True):
        np.testing.assert_allclose(var.grad, e, rtol=1e-6, atol=1e-7)


def test_attention_scale_and_broadcast_heads():
    rng = np.random.default_rng(4)
    q = rng.normal(size=(2, 3, 4, 2))  # (batch, heads, length, size)
    y = F.attention(q, q, q, scale=0.5).array
    for h in range(3):
        np.testing.assert_allclose(y[:, h], attention_loop(q[:, h], q[:, h], q[:, h],
                                                           scale=0.5), rtol=1e-12)


@pytest.mark.parametrize("args, error, match", [
    ((np.ones((2, 3, 4)), np.ones((2, 5, 3)), np.ones((2, 5, 2))), errors.ShapeError,
     r"q \(\.\.\., Lq, d\)"),
    ((np.ones((2, 3, 4)), np.ones((2, 5, 4)), np.ones((2, 5, 2)), np.ones((2, 3, 5))),
     errors.DTypeError, "boolean"),
    ((np.ones((2, 3, 4)), np.ones((2, 5, 4)), np.ones((2, 5, 2)), np.ones((2, 3, 4), bool)),
     errors.ShapeError, "does not broadcast"),
    ((np.ones((2, 3, 4)), np.ones((2, 5, 4), np.float32), np.ones((2, 5, 2))),
     errors.DTypeError, "one dtype"),
])
def test_attention_refuses_bad_inputs_naming_the_op(args, error, match):
    with pytest.raises(error, match=match) as info:
        graphcore.get_op("attention")().apply(args)
    assert "Attention" in str(info.value)


def _mha_loop(mha, x, kv, keep):
    """Multi-head attention with explicit loops over heads (the link's contract)."""
    W = {p: getattr(mha, f"W_{p}").array.astype(np.float64) for p in "qkvo"}
    b = {p: getattr(mha, f"b_{p}").array.astype(np.float64) for p in "qkvo"}
    q, k, v = (a @ W[p].T + b[p] for a, p in ((x, "q"), (kv, "k"), (kv, "v")))
    size = W["q"].shape[0] // mha.n_heads
    heads = []
    for h in range(mha.n_heads):
        part = slice(h * size, (h + 1) * size)
        heads.append(attention_loop(q[..., part], k[..., part], v[..., part], keep))
    return np.concatenate(heads, axis=-1) @ W["o"].T + b["o"]


def test_multi_head_attention_equals_per_head_loops():
    rng = np.random.default_rng(5)
    with graphcore.using_config("dtype", np.float64):
        mha = L.MultiHeadAttention(n_heads=2, in_size=4)
    for p in mha.params():
        p.array[...] = rng.normal(size=p.shape)
    x, kv = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    keep = np.ones((2, 1, 5), bool)
    keep[1, 0, 3:] = False  # padding in the second example
    y = mha(x, kv, mask=keep)
    np.testing.assert_allclose(y.array, _mha_loop(mha, x, kv, np.broadcast_to(keep, (2, 3, 5))),
                               rtol=1e-10)
    check_backward(lambda a: mha(a, kv, mask=keep), x, rng.normal(size=(2, 3, 4)),
                   params=tuple(mha.params()), **TIGHT)


def test_multi_head_attention_lazy_unbatched_and_dropout_only_in_training():
    mha = L.MultiHeadAttention(n_heads=2, dropout=0.5)
    x = np.random.default_rng(6).normal(size=(3, 4)).astype(np.float32)
    with graphcore.using_config("train", False):
        y1 = mha(x).array
        y2 = mha(x).array
    assert y1.shape == (3, 4) and mha.W_o.shape == (4, 4)
    np.testing.assert_array_equal(y1, y2)  # no dropout in evaluation
    np.random.seed(0)
    y3 = mha(x).array
    assert (y3 == 0).any() and not np.allclose(y3, y1)
    assert [n for n, _ in mha.namedparams()] == ["/W_q", "/b_q", "/W_k", "/b_k", "/W_v",
                                                  "/b_v", "/W_o", "/b_o"]
    with pytest.raises(errors.ShapeError, match="not divisible"):
        L.MultiHeadAttention(n_heads=3)(x)
