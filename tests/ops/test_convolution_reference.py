"""Convolution, transposed convolution, pooling, LRN and accuracy against straightforward
loops written here: forward values and the gradients of ``sum(y * gy)`` for every input.

The loops follow the definitions element by element (an output position, a filter tap, the
input position it reads), so they share no code or layout trick with ``graphcore.ops``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
from graphcore import Variable


def _pair(v, nd):
    return (v,) * nd if isinstance(v, int) else tuple(v)


def _outsize(n, k, s, p, d, cover_all):
    dk = (k - 1) * d + 1
    return (n + 2 * p - dk + (s - 1 if cover_all else 0)) // s + 1


def conv_loops(x, W, b, gy, stride, pad, dilate, groups, cover_all=False):
    """y, and the gradients for x, W, b of sum(y * gy) (gy None: forward only)."""
    nd = x.ndim - 2
    s, p, d = _pair(stride, nd), _pair(pad, nd), _pair(dilate, nd)
    n_batch, c_in = x.shape[:2]
    c_out, cg, *ks = W.shape
    og = c_out // groups
    out = [_outsize(x.shape[2 + i], ks[i], s[i], p[i], d[i], cover_all) for i in range(nd)]
    y = np.zeros((n_batch, c_out, *out))
    gx, gW = np.zeros_like(x), np.zeros_like(W)
    for n, o in itertools.product(range(n_batch), range(c_out)):
        g = o // og
        for pos in itertools.product(*map(range, out)):
            for c in range(cg):
                for tap in itertools.product(*map(range, ks)):
                    at = [pos[i] * s[i] + tap[i] * d[i] - p[i] for i in range(nd)]
                    if all(0 <= at[i] < x.shape[2 + i] for i in range(nd)):
                        src = (n, g * cg + c, *at)
                        y[(n, o, *pos)] += W[(o, c, *tap)] * x[src]
                        if gy is not None:
                            gx[src] += W[(o, c, *tap)] * gy[(n, o, *pos)]
                            gW[(o, c, *tap)] += x[src] * gy[(n, o, *pos)]
            if b is not None:
                y[(n, o, *pos)] += b[o]
    gb = None if gy is None else gy.sum(axis=(0, *range(2, gy.ndim)))
    return y, gx, gW, gb


def deconv_loops(x, W, b, gy, stride, pad, dilate, groups, outsize):
    """Transposed convolution: each input element spreads W's taps onto the output."""
    nd = x.ndim - 2
    s, p, d = _pair(stride, nd), _pair(pad, nd), _pair(dilate, nd)
    n_batch, c_in = x.shape[:2]
    _, og, *ks = W.shape
    cg = c_in // groups
    y = np.zeros((n_batch, og * groups, *outsize))
    gx, gW = np.zeros_like(x), np.zeros_like(W)
    for n, c in itertools.product(range(n_batch), range(c_in)):
        g = c // cg
        for pos in itertools.product(*(range(k) for k in x.shape[2:])):
            for o in range(og):
                for tap in itertools.product(*map(range, ks)):
                    at = [pos[i] * s[i] + tap[i] * d[i] - p[i] for i in range(nd)]
                    if all(0 <= at[i] < outsize[i] for i in range(nd)):
                        dst = (n, g * og + o, *at)
                        y[dst] += W[(c, o, *tap)] * x[(n, c, *pos)]
                        if gy is not None:
                            gx[(n, c, *pos)] += W[(c, o, *tap)] * gy[dst]
                            gW[(c, o, *tap)] += x[(n, c, *pos)] * gy[dst]
    if b is not None:
        y += b.reshape((-1,) + (1,) * nd)
    gb = None if gy is None else gy.sum(axis=(0, *range(2, gy.ndim)))
    return y, gx, gW, gb


def pool_loops(x, gy, kind, ksize, stride, pad, cover_all, pad_value=0):
    """Max or average pooling; the average counts padding as zeros unless pad_value is None."""
    nd = x.ndim - 2
    k, p = _pair(ksize, nd), _pair(pad, nd)
    s = k if stride is None else _pair(stride, nd)
    out = [_outsize(x.shape[2 + i], k[i], s[i], p[i], 1, cover_all) for i in range(nd)]
    y = np.zeros(x.shape[:2] + tuple(out))
    gx = np.zeros_like(x)
    for n, c in itertools.product(*(range(m) for m in x.shape[:2])):
        for pos in itertools.product(*map(range, out)):
            inside = []
            for tap in itertools.product(*map(range, k)):
                at = tuple(pos[i] * s[i] + tap[i] - p[i] for i in range(nd))
                if all(0 <= at[i] < x.shape[2 + i] for i in range(nd)):
                    inside.append((n, c, *at))
            if kind == "max":
                best = max(inside, key=lambda src: x[src])
                y[(n, c, *pos)] = x[best]
                if gy is not None:
                    gx[best] += gy[(n, c, *pos)]
            else:
                count = len(inside) if pad_value is None else int(np.prod(k))
                y[(n, c, *pos)] = sum(x[src] for src in inside) / count
                if gy is not None:
                    for src in inside:
                        gx[src] += gy[(n, c, *pos)] / count
    return y, gx


def _grads(f, arrays, gy):
    xs = [Variable(a) for a in arrays]
    y = f(*xs)
    y.grad = gy
    y.backward()
    return y.array, [v.grad for v in xs]


CONV_2D = [
    dict(stride=1, pad=0, dilate=1, groups=1),
    dict(stride=2, pad=1, dilate=1, groups=1),
    dict(stride=(1, 2), pad=(2, 0), dilate=(2, 1), groups=1),
    dict(stride=1, pad=1, dilate=2, groups=2),
    dict(stride=2, pad=0, dilate=1, groups=3, cover_all=True),
]


@pytest.mark.parametrize("opts", CONV_2D, ids=lambda o: "-".join(f"{k}{v}" for k, v in
                                                                  o.items()))
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_convolution_2d_matches_loops(opts, bias):
    rng = np.random.default_rng(1)
    g = opts["groups"]
    x = rng.standard_normal((2, 2 * g, 7, 6))
    W = rng.standard_normal((2 * g, 2, 3, 2))
    b = rng.standard_normal(2 * g) if bias else None
    y_ref, *_ = conv_loops(x, W, b, None, **opts)
    gy = rng.standard_normal(y_ref.shape)
    y_ref, gx_ref, gW_ref, gb_ref = conv_loops(x, W, b, gy, **opts)
    args = (x, W, b) if bias else (x, W)
    y, grads = _grads(lambda *v: F.convolution_2d(*v, **opts) if bias else
                      F.convolution_2d(v[0], v[1], **opts), args, gy)
    np.testing.assert_allclose(y, y_ref, rtol=1e-12, atol=1e-12)
    for got, want in zip(grads, (gx_ref, gW_ref, gb_ref), strict=False):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("opts", [dict(stride=1, pad=0, dilate=1, groups=1),
                                  dict(stride=2, pad=2, dilate=2, groups=2),
                                  dict(stride=3, pad=0, dilate=1, groups=1, cover_all=True)])
def test_convolution_1d_matches_loops(opts):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 11))
    W = rng.standard_normal((6, 4 // opts["groups"], 3))
    b = rng.standard_normal(6)
    gy = rng.standard_normal(conv_loops(x, W, b, None, **opts)[0].shape)
    y_ref, *grads_ref = conv_loops(x, W, b, gy, **opts)
    y, grads = _grads(lambda *v: F.convolution_1d(*v, **opts), (x, W, b), gy)
    np.testing.assert_allclose(y, y_ref, rtol=1e-12, atol=1e-12)
    for got, want in zip(grads, grads_ref, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("opts, outsize", [
    (dict(stride=1, pad=0, dilate=1, groups=1), None),
    (dict(stride=2, pad=1, dilate=1, groups=1), None),
    (dict(stride=2, pad=0, dilate=1, groups=1), (8, 8)),   # the cover_all-sized output
    (dict(stride=(2, 1), pad=(0, 1), dilate=(1, 2), groups=2), None),
])
def test_deconvolution_2d_matches_loops(opts, outsize):
    rng = np.random.default_rng(3)
    g = opts["groups"]
    x = rng.standard_normal((2, 2 * g, 4, 4))
    W = rng.standard_normal((2 * g, 3, 2, 3 if outsize is None else 2))
    b = rng.standard_normal(3 * g)
    k, s, p, d = W.shape[2:], _pair(opts["stride"], 2), _pair(opts["pad"], 2), \
        _pair(opts["dilate"], 2)
    size = outsize or tuple(s[i] * 3 + (k[i] - 1) * d[i] + 1 - 2 * p[i] for i in range(2))
    gy = rng.standard_normal((2, 3 * g, *size))
    y_ref, *grads_ref = deconv_loops(x, W, b, gy, outsize=size, **opts)
    y, grads = _grads(lambda *v: F.deconvolution_2d(*v, outsize=outsize, **opts), (x, W, b),
                      gy)
    np.testing.assert_allclose(y, y_ref, rtol=1e-12, atol=1e-12)
    for got, want in zip(grads, grads_ref, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_deconvolution_1d_matches_loops():
    rng = np.random.default_rng(4)
    x, W, b = rng.standard_normal((2, 3, 5)), rng.standard_normal((3, 2, 4)), \
        rng.standard_normal(2)
    gy = rng.standard_normal((2, 2, 2 * 4 + 4 - 2))
    y_ref, *grads_ref = deconv_loops(x, W, b, gy, 2, 1, 1, 1, outsize=(10,))
    y, grads = _grads(lambda *v: F.deconvolution_1d(*v, stride=2, pad=1), (x, W, b), gy)
    np.testing.assert_allclose(y, y_ref, rtol=1e-12, atol=1e-12)
    for got, want in zip(grads, grads_ref, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_deconvolution_is_the_transpose_of_convolution():
    """<conv(x), z> == <x, deconv(z)>, with every option at once."""
    rng = np.random.default_rng(5)
    x, W = rng.standard_normal((2, 4, 9, 8)), rng.standard_normal((6, 2, 3, 2))
    opts = dict(stride=(2, 3), pad=(1, 2), dilate=(2, 1), groups=2)
    y = F.convolution_2d(x, W, **opts).array
    z = rng.standard_normal(y.shape)
    back = F.deconvolution_2d(z, W, outsize=(9, 8), **opts).array
    np.testing.assert_allclose((y * z).sum(), (x * back).sum(), rtol=1e-12)


POOLS = [
    ("max", 2, None, 0, True), ("max", 3, 2, 1, True), ("max", 2, None, 0, False),
    ("max", (3, 2), (1, 2), (1, 0), True),
    ("average", 2, None, 0, False), ("average", 3, 2, 1, False),
    ("average", (2, 3), (2, 1), (0, 1), False),
]


@pytest.mark.parametrize("kind, ksize, stride, pad, cover_all", POOLS)
def test_pooling_2d_matches_loops(kind, ksize, stride, pad, cover_all):
    rng = np.random.default_rng(6)
    x = rng.permutation(np.arange(2 * 3 * 7 * 5) * 0.1).reshape(2, 3, 7, 5)  # no ties
    gy = rng.standard_normal(pool_loops(x, None, kind, ksize, stride, pad, cover_all)[0].shape)
    y_ref, gx_ref = pool_loops(x, gy, kind, ksize, stride, pad, cover_all)
    if kind == "max":
        y, (gx,) = _grads(lambda v: F.max_pooling_2d(v, ksize, stride, pad, cover_all), (x,),
                          gy)
    else:
        y, (gx,) = _grads(lambda v: F.average_pooling_2d(v, ksize, stride, pad), (x,), gy)
    np.testing.assert_allclose(y, y_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-12, atol=1e-12)


MAX_POOLS = [(ksize, stride, pad, cover_all) for kind, ksize, stride, pad, cover_all in POOLS
             if kind == "max"]


@pytest.mark.parametrize("ksize, stride, pad, cover_all", MAX_POOLS)
def test_max_pooling_indices_are_chainers(ksize, stride, pad, cover_all):
    """``return_indices=True``: each maximum's offset in its window, ``kx + kw * ky`` (the
    first on ties, as an argmax), found by looping over the padded windows."""
    rng = np.random.default_rng(8)
    x = rng.integers(0, 4, (2, 3, 7, 5)).astype(np.float32)  # ties: the first one wins
    y, indexes = F.max_pooling_2d(x, ksize, stride, pad, cover_all, return_indices=True)
    np.testing.assert_array_equal(y.array, F.max_pooling_2d(x, ksize, stride, pad,
                                                            cover_all).array)
    kh, kw = (ksize, ksize) if isinstance(ksize, int) else ksize
    sy, sx = (kh, kw) if stride is None else (
        (stride, stride) if isinstance(stride, int) else stride)
    ph, pw = (pad, pad) if isinstance(pad, int) else pad
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph + sy), (pw, pw + sx)), constant_values=-np.inf)
    assert indexes.shape == y.shape and indexes.dtype.kind == "i"
    for n, c, i, j in itertools.product(*map(range, y.shape)):
        window = xp[n, c, i * sy:i * sy + kh, j * sx:j * sx + kw]
        assert indexes[n, c, i, j] == np.argmax(window)
    _, indexes_1d = F.max_pooling_1d(x[:, :, 0], 3, 2, 1, return_indices=True)
    xp1 = np.pad(x[:, :, 0], ((0, 0), (0, 0), (1, 3)), constant_values=-np.inf)
    for n, c, i in itertools.product(*map(range, indexes_1d.shape)):
        assert indexes_1d[n, c, i] == np.argmax(xp1[n, c, i * 2:i * 2 + 3])


@pytest.mark.parametrize("kind, pad_value", [("max", 0), ("average", 0), ("average", None)])
def test_pooling_1d_matches_loops(kind, pad_value):
    rng = np.random.default_rng(7)
    x = rng.permutation(np.arange(2 * 3 * 9) * 0.1).reshape(2, 3, 9)
    opts = (3, 2, 1)
    cover_all = kind == "max"
    gy = rng.standard_normal(pool_loops(x, None, kind, *opts, cover_all)[0].shape)
    y_ref, gx_ref = pool_loops(x, gy, kind, *opts, cover_all, pad_value)
    if kind == "max":
        y, (gx,) = _grads(lambda v: F.max_pooling_1d(v, *opts), (x,), gy)
    else:
        y, (gx,) = _grads(lambda v: F.average_pooling_1d(v, *opts, pad_value=pad_value),
                          (x,), gy)
    np.testing.assert_allclose(y, y_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-12, atol=1e-12)


def test_local_response_normalization_matches_loops():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 6, 3))
    n, k, alpha, beta = 3, 1.0, 0.3, 0.75
    y_ref = np.zeros_like(x)
    for i in range(6):
        window = x[:, max(0, i - n // 2):i + n // 2 + 1]
        y_ref[:, i] = x[:, i] / (k + alpha * (window ** 2).sum(axis=1)) ** beta
    y = F.local_response_normalization(x, n, k, alpha, beta).array
    np.testing.assert_allclose(y, y_ref, rtol=1e-12)


def test_accuracy_matches_counting():
    y = np.array([[0.1, 0.9, 0.0], [0.8, 0.1, 0.1], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1]],
                 np.float32)
    t = np.array([1, 2, 2, -1], np.int32)
    acc = F.accuracy(y, t)
    assert acc.dtype == np.float32 and acc.shape == ()
    assert float(acc.array) == pytest.approx(2 / 4)
    assert float(F.accuracy(y, t, ignore_label=-1).array) == pytest.approx(2 / 3)
    assert float(F.accuracy(y, np.full(4, -1, np.int32), ignore_label=-1).array) == 0.0


def test_accuracy_of_a_variable_records_no_graph():
    y = Variable(np.random.rand(4, 3))
    acc = F.accuracy(y, np.array([0, 1, 2, 0]))
    assert acc.creator is None


@pytest.mark.parametrize("call, message", [
    (lambda: F.convolution_2d(np.ones((1, 3, 5, 5)), np.ones((2, 2, 3, 3))),
     r"x has 3 channels but W \(2, 2, 3, 3\)"),
    (lambda: F.convolution_2d(np.ones((1, 2, 2, 2)), np.ones((2, 2, 3, 3))),
     r"does not fit the input's spatial size \(2, 2\)"),
    (lambda: F.convolution_2d(np.ones((2, 5, 5)), np.ones((2, 2, 3, 3))),
     r"expected x of 4 dimensions \(NCHW\)"),
    (lambda: F.convolution_1d(np.ones((1, 2, 5)), np.ones((2, 2, 3)), np.ones(3)),
     r"expected b of shape \(2,\)"),
    (lambda: F.deconvolution_2d(np.ones((1, 2, 3, 3)), np.ones((2, 2, 2, 2)), stride=2,
                                outsize=(9, 9)), "does not match"),
    (lambda: F.max_pooling_2d(np.ones((1, 2, 5)), 2), r"expected x of 4 dimensions"),
])
def test_bad_shapes_name_the_op(call, message):
    with pytest.raises(graphcore.errors.ShapeError, match=message):
        call()


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="stride.* must be at least 1"):
        F.convolution_2d(np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)), stride=0)
    with pytest.raises(ValueError, match="pad must be an integer or 2 integers"):
        F.max_pooling_2d(np.ones((1, 1, 3, 3)), 2, pad=(1, 1, 1))
