"""Engine overhead benchmark: graphcore define-by-run vs a hand-written numpy floor.

For each workload this times one forward+backward (``model.cleargrads()``, forward, loss,
``loss.backward()``) through graphcore, and the same model's forward+backward written directly
in numpy (the "floor": no graph objects, in-place where that saves an allocation, no gradient
for the data input, the same ops as the model -- every Linear is ``x @ W.T + b`` -- without
algebraic restructuring). Both run in one process, interleaved round by round, and the table
shows the median time per iteration and the ratio graphcore / floor.

    python benchmarks/engine.py            # full run, plain table
    python benchmarks/engine.py --quick    # fast, noisier
    python benchmarks/engine.py --json     # machine-readable results only
    python benchmarks/engine.py --run-only W3 --iters 2000 --profile 15   # cProfile the loop

Before timing, every workload's graphcore parameter gradients are checked against the floor's
(same parameter values in both); the run aborts if they differ. ``tests/test_benchmark_floors.py``
runs that same check so the floors stay honest.

The workload builders (``build_w1`` ...) and floors (``mlp_floor``, ``rnn_floor``) are plain
importable functions; importing this module changes no environment variable.
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # one BLAS thread for both sides; must precede the numpy import
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import graphcore  # noqa: E402
import graphcore.functions as F  # noqa: E402
import graphcore.links as L  # noqa: E402

# --------------------------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------------------------


@dataclass
class Workload:
    """One benchmark case.

    An iteration is ``for unit in units: step(unit)`` on either side. ``gc_step(unit)`` runs
    cleargrads + forward + backward in graphcore and returns the loss Variable; afterwards the
    gradients are in ``gc_params[i].grad``. ``floor_step(unit)`` returns ``(loss, grads)`` with
    ``grads`` in the order of ``gc_params``.
    """

    key: str
    title: str
    target: float
    units: list[Any]
    gc_step: Callable[[Any], Any]
    gc_params: list[graphcore.Parameter]
    floor_step: Callable[[Any], tuple[Any, list[np.ndarray]]]
    model: Any = None  # the graphcore model (benchmarks/static.py compiles it)

    def gc_iteration(self) -> Callable[[], None]:
        units, step = self.units, self.gc_step

        def run() -> None:
            for u in units:
                step(u)

        return run

    def floor_iteration(self) -> Callable[[], None]:
        units, step = self.units, self.floor_step

        def run() -> None:
            for u in units:
                step(u)

        return run


def _set_params(params: Sequence[graphcore.Parameter], rng: np.random.Generator) -> None:
    """Fill parameters with random float32 values (biases too, so relu masks vary)."""
    for p in params:
        shape = p.array.shape
        scale = 1.0 / np.sqrt(shape[1]) if len(shape) == 2 else 0.1
        p.array = (rng.standard_normal(shape) * scale).astype(np.float32)


def _linear_params(links: Sequence[L.Linear]) -> list[graphcore.Parameter]:
    out = []
    for link in links:
        out += [link.W, link.b]
    return out


class SeedNet(graphcore.Chain):
    """W1: ``sum(l2(relu(l1(x))))``."""

    def __init__(self) -> None:
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(4, 5)
            self.l2 = L.Linear(5, 2)

    def forward(self, x, t=None):
        return F.sum(self.l2(F.relu(self.l1(x))))


class MLP(graphcore.ChainList):
    """Linear layers with relu between, then mean softmax cross entropy against ``t``."""

    def __init__(self, sizes: Sequence[int]) -> None:
        super().__init__(*[L.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:], strict=True)])

    def forward(self, x, t):
        h = x
        last = len(self) - 1
        for i, layer in enumerate(self):
            h = layer(h)
            if i < last:
                h = F.relu(h)
        return F.softmax_cross_entropy(h, t)


def _mlp_workload(key: str, title: str, target: float, model: graphcore.Link,
                  links: Sequence[L.Linear], x: np.ndarray, t: np.ndarray | None, head: str,
                  rng: np.random.Generator) -> Workload:
    params = _linear_params(links)
    _set_params(params, rng)
    floor_params = [p.array.copy() for p in params]

    def gc_step(unit):
        x, t = unit
        model.cleargrads()
        loss = model(x, t)
        loss.backward()
        return loss

    def floor_step(unit):
        return mlp_floor(floor_params, unit[0], unit[1], head)

    return Workload(key, title, target, [(x, t)], gc_step, params, floor_step, model)


def build_w1(seed: int = 0) -> Workload:
    """W1 seed static: x (3, 4) -> Linear(4, 5) -> relu -> Linear(5, 2) -> sum."""
    rng = np.random.default_rng(seed)
    model = SeedNet()
    x = rng.standard_normal((3, 4)).astype(np.float32)
    return _mlp_workload("W1", "seed static 3x4-5-2", 3.0, model, [model.l1, model.l2], x, None,
                         "sum", rng)


def build_w3(seed: int = 0) -> Workload:
    """W3 deep small MLP: batch 32, 64 -> 8 x (Linear(64, 64) + relu) -> Linear(64, 10), CE."""
    rng = np.random.default_rng(seed)
    model = MLP([64] * 9 + [10])
    x = rng.standard_normal((32, 64)).astype(np.float32)
    t = rng.integers(0, 10, 32).astype(np.int32)
    return _mlp_workload("W3", "deep MLP 32x64, 8x64, 10", 2.0, model, list(model), x, t, "sce",
                         rng)


def build_w4(seed: int = 0) -> Workload:
    """W4 large MLP: batch 256, 1024 -> 1024 -> 1024 -> 10 (relu between), CE."""
    rng = np.random.default_rng(seed)
    model = MLP([1024, 1024, 1024, 10])
    x = rng.standard_normal((256, 1024)).astype(np.float32)
    t = rng.integers(0, 10, 256).astype(np.int32)
    return _mlp_workload("W4", "large MLP 256x1024-1024-1024-10", 1.1, model, list(model), x, t,
                         "sce", rng)


class RNNCell(graphcore.Chain):
    """W5: ``h = tanh(lx(x) + lh(h))``."""

    def __init__(self, n_in: int, n_hidden: int) -> None:
        super().__init__()
        with self.init_scope():
            self.lx = L.Linear(n_in, n_hidden)
            self.lh = L.Linear(n_hidden, n_hidden)

    def forward(self, x, h):
        return F.tanh(self.lx(x) + self.lh(h))


def build_w5(seed: int = 0, lengths: Sequence[int] = tuple(range(5, 51, 5)),
             n_in: int = 16, n_hidden: int = 32) -> Workload:
    """W5 tanh RNN cell, batch 1, over sequences of ``lengths``; loss = sum of the final h.

    One iteration is a full pass over all sequences, one forward+backward (and cleargrads) per
    sequence. The initial state is zeros (data, no gradient) and ``lh`` is applied to it too.
    """
    rng = np.random.default_rng(seed)
    model = RNNCell(n_in, n_hidden)
    params = _linear_params([model.lx, model.lh])
    _set_params(params, rng)
    floor_params = [p.array.copy() for p in params]
    h0 = np.zeros((1, n_hidden), np.float32)
    seqs = [[rng.standard_normal((1, n_in)).astype(np.float32) for _ in range(n)]
            for n in lengths]

    def gc_step(xs):
        model.cleargrads()
        h = h0
        for x in xs:
            h = model(x, h)
        loss = F.sum(h)
        loss.backward()
        return loss

    def floor_step(xs):
        return rnn_floor(floor_params, h0, xs)

    return Workload("W5", f"tanh RNN 16-32, {len(seqs)} seqs", 3.0, seqs, gc_step, params,
                    floor_step, model)


class LeNet(graphcore.Chain):
    """W6: conv 5x5 x20 -> relu -> max pool 2 -> conv 5x5 x50 -> relu -> max pool 2 ->
    linear 500 -> relu -> linear 10, softmax cross entropy."""

    def __init__(self) -> None:
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


def build_w6(seed: int = 0, batch: int = 64) -> Workload:
    """W6 LeNet: batch 64 of 1x28x28 images, CE against 10 classes."""
    rng = np.random.default_rng(seed)
    model = LeNet()
    params = [model.conv1.W, model.conv1.b, model.conv2.W, model.conv2.b,
              model.fc1.W, model.fc1.b, model.fc2.W, model.fc2.b]
    for p in params:
        shape = p.array.shape
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 10
        p.array = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
    floor_params = [p.array.copy() for p in params]
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    t = rng.integers(0, 10, batch).astype(np.int32)

    def gc_step(unit):
        model.cleargrads()
        loss = model(*unit)
        loss.backward()
        return loss

    def floor_step(unit):
        return lenet_floor(floor_params, *unit)

    return Workload("W6", f"LeNet {batch}x1x28x28", 1.3, [(x, t)], gc_step, params,
                    floor_step, model)


class LSTMLanguageModel(graphcore.Chain):
    """W7: ``EmbedID -> LSTM (stateful) -> Linear`` per step, softmax CE summed over steps."""

    def __init__(self, n_vocab: int, n_embed: int, n_hidden: int) -> None:
        super().__init__()
        with self.init_scope():
            self.embed = L.EmbedID(n_vocab, n_embed)
            self.lstm = L.LSTM(n_embed, n_hidden)
            self.out = L.Linear(n_hidden, n_vocab)

    def forward(self, x, t):
        return F.softmax_cross_entropy(self.out(self.lstm(self.embed(x))), t)


def build_w7(seed: int = 0, n_vocab: int = 1000, n_embed: int = 128, n_hidden: int = 256,
             bptt: int = 35, batch: int = 20, windows: int = 2) -> Workload:
    """W7 LSTM language model with truncated backprop through time.

    One iteration reads ``windows`` consecutive windows of ``bptt`` steps (a batch of ``batch``
    token streams): the state starts from zeros at the first window and is carried, cut from
    the graph (``unchain_backward``), into the next; each window is one forward+backward of
    ``loss = sum over steps of mean softmax CE``. Parameters: embed W, lstm upward W/b, lateral
    W, out W/b (the floor's gradient order).
    """
    rng = np.random.default_rng(seed)
    model = LSTMLanguageModel(n_vocab, n_embed, n_hidden)
    params = [model.embed.W, model.lstm.upward.W, model.lstm.upward.b, model.lstm.lateral.W,
              model.out.W, model.out.b]
    _set_params(params, rng)
    floor_params = [p.array.copy() for p in params]
    tokens = rng.integers(0, n_vocab, (batch, windows * bptt + 1)).astype(np.int32)
    units = [(k == 0, [tokens[:, i] for i in range(k * bptt, (k + 1) * bptt)],
              [tokens[:, i + 1] for i in range(k * bptt, (k + 1) * bptt)])
             for k in range(windows)]
    floor_state: list[np.ndarray] = []

    def gc_step(unit):
        first, xs, ts = unit
        if first:
            model.lstm.reset_state()
        model.cleargrads()
        loss = 0
        for x, t in zip(xs, ts, strict=True):
            loss += model(x, t)
        loss.backward()
        loss.unchain_backward()
        return loss

    def floor_step(unit):
        first, xs, ts = unit
        if first or not floor_state:
            floor_state[:] = [np.zeros((batch, n_hidden), np.float32)] * 2
        loss, grads, h, c = lstm_lm_floor(floor_params, floor_state[0], floor_state[1], xs, ts)
        floor_state[:] = [h, c]
        return loss, grads

    return Workload("W7", f"LSTM LM v{n_vocab} e{n_embed} h{n_hidden}, {bptt} steps x "
                    f"{batch}", 1.3, units, gc_step, params, floor_step, model)


WORKLOADS: dict[str, Callable[..., Workload]] = {
    "W1": build_w1, "W3": build_w3, "W4": build_w4, "W5": build_w5, "W6": build_w6,
    "W7": build_w7,
}

# --------------------------------------------------------------------------------------------
# Floors: the same models' forward+backward in plain numpy
# --------------------------------------------------------------------------------------------


def mlp_floor(params: Sequence[np.ndarray], x: np.ndarray, t: np.ndarray | None,
              head: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """Linear layers (``params = [W0, b0, W1, b1, ...]``, ``W: (out, in)``) with relu between.

    ``head="sum"``: loss = sum of the outputs; ``head="sce"``: mean softmax cross entropy of
    integer labels ``t``. Returns ``(loss, [gW0, gb0, gW1, gb1, ...])``; no gradient for ``x``.
    """
    n = len(params) // 2
    acts = [x]  # the input of each layer: x, then relu outputs
    h = x
    for i in range(n):
        h = h @ params[2 * i].T
        h += params[2 * i + 1]
        if i < n - 1:
            np.maximum(h, 0, out=h)
            acts.append(h)
    if head == "sum":
        loss = h.sum()
        g = np.ones_like(h)
    else:
        rows = np.arange(len(t))
        h -= h.max(axis=1, keepdims=True)
        e = np.exp(h)
        s = e.sum(axis=1, keepdims=True)
        loss = np.log(s).mean() - h[rows, t].mean()  # -mean(log_softmax(h)[rows, t])
        g = e
        g /= s
        g[rows, t] -= 1
        g /= len(t)
    grads: list[np.ndarray] = [None] * (2 * n)  # type: ignore[list-item]
    for i in range(n - 1, -1, -1):
        a = acts[i]
        grads[2 * i] = g.T @ a
        grads[2 * i + 1] = g.sum(axis=0)
        if i:
            g = g @ params[2 * i]
            g *= a > 0
    return loss, grads


def rnn_floor(params: Sequence[np.ndarray], h0: np.ndarray,
              xs: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """``h = tanh(x_t @ Wx.T + bx + h @ Wh.T + bh)`` over ``xs`` from ``h0``; loss = sum(h).

    Returns ``(loss, [gWx, gbx, gWh, gbh])`` (backprop through time; no gradient for the data
    ``xs`` and ``h0``).
    """
    Wx, bx, Wh, bh = params
    hs = [h0]
    h = h0
    for x in xs:
        z = x @ Wx.T
        z += bx
        z += h @ Wh.T
        z += bh
        h = np.tanh(z, out=z)
        hs.append(h)
    loss = h.sum()
    gh = np.ones_like(h)
    gWx = np.zeros_like(Wx)
    gWh = np.zeros_like(Wh)
    gb = np.zeros_like(bx)  # d loss / d bx == d loss / d bh
    for i in range(len(xs) - 1, -1, -1):
        y = hs[i + 1]
        gz = y * y
        np.subtract(1, gz, out=gz)
        gz *= gh
        gWx += gz.T @ xs[i]
        gWh += gz.T @ hs[i]
        gb += gz.sum(axis=0)
        if i:
            gh = gz @ Wh
    return loss, [gWx, gb, gWh, gb.copy()]


def _im2col(x: np.ndarray, k: int) -> np.ndarray:
    """The k x k windows (stride 1, no padding) of ``x`` (N, C, H, W) as a
    ``(C * k * k, N * oh * ow)`` matrix: one strided view, one copy."""
    n, c, h, w = x.shape
    oh, ow = h - k + 1, w - k + 1
    sn, sc, sh, sw = x.strides
    view = np.lib.stride_tricks.as_strided(x, (c, k, k, n, oh, ow), (sc, sh, sw, sn, sh, sw))
    return view.reshape(c * k * k, n * oh * ow)


def _col2im(col: np.ndarray, shape: tuple[int, ...], k: int) -> np.ndarray:
    """The adjoint of ``_im2col``: add each window back where it was read."""
    n, c, h, w = shape
    oh, ow = h - k + 1, w - k + 1
    col = col.reshape(c, k, k, n, oh, ow)
    gx = np.zeros((c, n, h, w), col.dtype)
    for i in range(k):
        for j in range(k):
            gx[:, :, i:i + oh, j:j + ow] += col[:, i, j]
    return gx.transpose(1, 0, 2, 3)


def _conv_forward(x: np.ndarray, W: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """im2col + one GEMM; returns the NCHW output and the columns (for the filter gradient)."""
    k = W.shape[2]
    col = _im2col(x, k)
    n, oh, ow = x.shape[0], x.shape[2] - k + 1, x.shape[3] - k + 1
    y = (W.reshape(W.shape[0], -1) @ col).reshape(W.shape[0], n, oh, ow)
    return y.transpose(1, 0, 2, 3) + b[:, None, None], col


def _conv_backward(gy: np.ndarray, W: np.ndarray, col: np.ndarray, x_shape, need_gx: bool):
    oc = W.shape[0]
    gy2 = gy.transpose(1, 0, 2, 3).reshape(oc, -1)
    gW = (gy2 @ col.T).reshape(W.shape)
    gb = gy2.sum(axis=1)
    gx = _col2im(W.reshape(oc, -1).T @ gy2, x_shape, W.shape[2]) if need_gx else None
    return gx, gW, gb


def _pool2_forward(x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """2x2 max pooling, stride 2 (even sizes): three elementwise maxima of the four strided
    views (an argmax along a length-4 axis is several times slower); returns the views."""
    taps = [x[:, :, i::2, j::2] for i in (0, 1) for j in (0, 1)]
    y = np.maximum(taps[0], taps[1])
    np.maximum(y, taps[2], out=y)
    np.maximum(y, taps[3], out=y)
    return y, taps


def _pool2_backward(gy: np.ndarray, y: np.ndarray, taps: list[np.ndarray]) -> np.ndarray:
    """Each window's gradient to the first of its elements equal to the maximum."""
    n, c, oh, ow = gy.shape
    gx = np.empty((n, c, oh * 2, ow * 2), gy.dtype)  # every element is in one window
    taken = np.zeros(y.shape, bool)
    for (i, j), tap in zip(((0, 0), (0, 1), (1, 0), (1, 1)), taps, strict=True):
        hit = tap == y
        hit &= ~taken
        taken |= hit
        np.multiply(gy, hit, out=gx[:, :, i::2, j::2])
    return gx


def lenet_floor(params: Sequence[np.ndarray], x: np.ndarray,
                t: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """W6's LeNet forward + backward in numpy (im2col + GEMM convolutions, NCHW)."""
    W1, b1, W2, b2, W3, b3, W4, b4 = params
    n = len(x)
    a1, col1 = _conv_forward(x, W1, b1)
    np.maximum(a1, 0, out=a1)
    p1, taps1 = _pool2_forward(a1)
    a2, col2 = _conv_forward(p1, W2, b2)
    np.maximum(a2, 0, out=a2)
    p2, taps2 = _pool2_forward(a2)
    f = p2.reshape(n, -1)
    h3 = f @ W3.T
    h3 += b3
    np.maximum(h3, 0, out=h3)
    h = h3 @ W4.T
    h += b4
    rows = np.arange(n)
    h -= h.max(axis=1, keepdims=True)
    e = np.exp(h)
    s = e.sum(axis=1, keepdims=True)
    loss = np.log(s).mean() - h[rows, t].mean()
    g = e
    g /= s
    g[rows, t] -= 1
    g /= n
    gW4, gb4 = g.T @ h3, g.sum(axis=0)
    g = g @ W4
    g *= h3 > 0
    gW3, gb3 = g.T @ f, g.sum(axis=0)
    g = (g @ W3).reshape(p2.shape)
    g = _pool2_backward(g, p2, taps2)
    g *= a2 > 0
    g, gW2, gb2 = _conv_backward(g, W2, col2, p1.shape, True)
    g = _pool2_backward(g, p1, taps1)
    g *= a1 > 0
    _, gW1, gb1 = _conv_backward(g, W1, col1, x.shape, False)
    return loss, [gW1, gb1, gW2, gb2, gW3, gb3, gW4, gb4]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """In place: ``x <- 1 / (1 + exp(-x))``."""
    np.negative(x, out=x)
    np.exp(x, out=x)
    x += 1
    return np.reciprocal(x, out=x)


def lstm_lm_floor(params: Sequence[np.ndarray], h0: np.ndarray, c0: np.ndarray,
                  xs: Sequence[np.ndarray], ts: Sequence[np.ndarray]
                  ) -> tuple[np.ndarray, list[np.ndarray], np.ndarray, np.ndarray]:
    """One truncated-BPTT window of the W7 model from the state ``(h0, c0)`` (data).

    Per step: ``e = E[x]``, ``z = e @ Wx.T + bx + h @ Wh.T`` with the four gates interleaved
    per unit (a, i, f, o: Chainer's ``F.lstm`` layout), ``c = tanh(a) * sig(i) + sig(f) * c``,
    ``h = sig(o) * tanh(c)``, ``y = h @ Wo.T + bo``; loss = sum over steps of mean softmax CE.
    Returns ``(loss, [gE, gWx, gbx, gWh, gWo, gbo], h, c)``.
    """
    E, Wx, bx, Wh, Wo, bo = params
    batch, n = h0.shape
    rows = np.arange(batch)
    hs, cs, gates, tanh_cs, probs = [h0], [c0], [], [], []
    h, c = h0, c0
    loss = np.float32(0)
    for x, t in zip(xs, ts, strict=True):
        z = E[x] @ Wx.T
        z += bx
        z += h @ Wh.T
        g = _sigmoid(z.copy()).reshape(batch, n, 4)  # contiguous: ~10x faster than per gate
        np.tanh(z.reshape(batch, n, 4)[:, :, 0], out=g[:, :, 0])
        c = g[:, :, 0] * g[:, :, 1]
        c += g[:, :, 2] * cs[-1]
        tc = np.tanh(c)
        h = g[:, :, 3] * tc
        y = h @ Wo.T
        y += bo
        y -= y.max(axis=1, keepdims=True)
        p = np.exp(y)
        s = p.sum(axis=1, keepdims=True)
        loss += np.log(s).mean() - y[rows, t].mean()
        p /= s
        gates.append(g)
        tanh_cs.append(tc)
        cs.append(c)
        hs.append(h)
        probs.append(p)
    gE, gWx, gbx = np.zeros_like(E), np.zeros_like(Wx), np.zeros_like(bx)
    gWh, gWo, gbo = np.zeros_like(Wh), np.zeros_like(Wo), np.zeros_like(bo)
    gh = np.zeros_like(h0)
    gc = np.zeros_like(c0)
    gz = np.empty((batch, n, 4), np.float32)
    for k in range(len(xs) - 1, -1, -1):
        gy = probs[k]
        gy[rows, ts[k]] -= 1
        gy /= batch
        gWo += gy.T @ hs[k + 1]
        gbo += gy.sum(axis=0)
        gh += gy @ Wo
        g, tc = gates[k], tanh_cs[k]
        a, i, f, o = g[:, :, 0], g[:, :, 1], g[:, :, 2], g[:, :, 3]
        # h = o * tanh(c): dc += gh * o * (1 - tanh(c)^2); then each gate's factor times its
        # activation's slope, the slopes computed on the contiguous gates in one pass
        gc += gh * o * (1 - tc * tc)
        np.multiply(gc, i, out=gz[:, :, 0])
        np.multiply(gc, a, out=gz[:, :, 1])
        np.multiply(gc, cs[k], out=gz[:, :, 2])
        np.multiply(gh, tc, out=gz[:, :, 3])
        slope = 1 - g
        slope *= g
        np.multiply(a, a, out=slope[:, :, 0])
        np.subtract(1, slope[:, :, 0], out=slope[:, :, 0])
        gz *= slope
        gc *= f
        gzf = gz.reshape(batch, 4 * n)
        np.add.at(gE, xs[k], gzf @ Wx)
        gWx += gzf.T @ E[xs[k]]
        gbx += gzf.sum(axis=0)
        gWh += gzf.T @ hs[k]
        gh = gzf @ Wh
    return loss, [gE, gWx, gbx, gWh, gWo, gbo], h, c


# --------------------------------------------------------------------------------------------
# Correctness cross-check
# --------------------------------------------------------------------------------------------


def compare_gradients(wl: Workload, rtol: float = 1e-4, atol_rel: float = 1e-5) -> list[str]:
    """Run every unit through both sides; return a description of each mismatch (or [])."""
    problems = []
    for k, unit in enumerate(wl.units):
        loss = wl.gc_step(unit)
        gc_grads = [p.grad for p in wl.gc_params]
        floor_loss, floor_grads = wl.floor_step(unit)
        where = f"{wl.key} unit {k}"
        if not np.allclose(loss.array, floor_loss, rtol=rtol, atol=atol_rel):
            problems.append(f"{where}: loss {float(loss.array)!r} vs floor {float(floor_loss)!r}")
        if len(floor_grads) != len(gc_grads):
            problems.append(f"{where}: floor returned {len(floor_grads)} gradients for "
                            f"{len(gc_grads)} parameters")
            continue
        for j, (p, a, b) in enumerate(zip(wl.gc_params, gc_grads, floor_grads, strict=True)):
            name = f"{where} param {j} ({p.name}, {p.array.shape})"
            if a is None or b is None:
                problems.append(f"{name}: gradient missing (graphcore {a is not None}, "
                                f"floor {b is not None})")
                continue
            if a.shape != b.shape or a.dtype != b.dtype:
                problems.append(f"{name}: graphcore {a.shape} {a.dtype} vs floor {b.shape} "
                                f"{b.dtype}")
                continue
            scale = max(float(np.abs(a).max(initial=0.0)), 1e-30)
            if not np.allclose(b, a, rtol=rtol, atol=atol_rel * scale):
                diff = float(np.abs(a.astype(np.float64) - b).max())
                problems.append(f"{name}: max |diff| {diff:.3g} (max |grad| {scale:.3g})")
    return problems


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------


def _time_batch(fn: Callable[[], None], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return time.perf_counter() - t0


def _batch_size(fn: Callable[[], None], batch_s: float) -> int:
    """Iterations per timed batch so one batch lasts about ``batch_s`` seconds."""
    n = 1
    while True:
        elapsed = _time_batch(fn, n)
        if elapsed >= batch_s / 4 or n >= 1 << 20:
            return max(1, round(n * batch_s / max(elapsed, 1e-9)))
        n *= 2


def _summary(per_iter: list[float], n: int) -> dict[str, float]:
    q = statistics.quantiles(per_iter, n=4) if len(per_iter) > 1 else per_iter * 3
    return {"median_us": statistics.median(per_iter) * 1e6, "p25_us": q[0] * 1e6,
            "p75_us": q[2] * 1e6, "min_us": min(per_iter) * 1e6, "batches": len(per_iter),
            "iters_per_batch": n}


def measure(wl: Workload, rounds: int, batch_s: float, warmup_s: float) -> dict[str, Any]:
    """Median per-iteration time of both sides, timed in alternating rounds."""
    sides = {"graphcore": wl.gc_iteration(), "floor": wl.floor_iteration()}
    deadline = time.perf_counter() + warmup_s
    while True:  # warm up both (at least twice each)
        for fn in sides.values():
            fn()
            fn()
        if time.perf_counter() >= deadline:
            break
    sizes = {name: _batch_size(fn, batch_s) for name, fn in sides.items()}
    times: dict[str, list[float]] = {name: [] for name in sides}
    order = list(sides)
    for r in range(rounds):
        for name in (order if r % 2 == 0 else order[::-1]):
            n = sizes[name]
            times[name].append(_time_batch(sides[name], n) / n)
    result = {name: _summary(times[name], sizes[name]) for name in sides}
    result["ratio"] = result["graphcore"]["median_us"] / result["floor"]["median_us"]
    # median over rounds of that round's ratio: less sensitive to slow drifts of the machine
    result["ratio_paired"] = statistics.median(
        a / b for a, b in zip(times["graphcore"], times["floor"], strict=True))
    return result


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def _environment() -> dict[str, Any]:
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas_name = f"{blas.get('name')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 - purely informational
        blas_name = "unknown"
    return {
        "python": platform.python_version(), "numpy": np.__version__, "blas": blas_name,
        "machine": platform.machine(), "cpus": os.cpu_count(),
        "threads": {k: os.environ.get(k) for k in
                    ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")},
    }


def _table(rows: list[dict[str, Any]]) -> str:
    header = ["workload", "graphcore us/iter", "numpy floor us/iter", "ratio", "target", "met"]
    body = [[f"{r['key']} {r['title']}", f"{r['graphcore']['median_us']:.1f}",
             f"{r['floor']['median_us']:.1f}", f"{r['ratio']:.2f}x", f"{r['target']:.1f}x",
             "yes" if r["ratio"] <= r["target"] else "no"] for r in rows]
    widths = [max(len(row[i]) for row in [header] + body) for i in range(len(header))]
    lines = []
    for row in [header] + body:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:],
                                                                        strict=True)]
        lines.append("  ".join(cells))
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer, shorter rounds (noisier)")
    ap.add_argument("--json", action="store_true", help="print only a JSON document")
    ap.add_argument("--workloads", default=",".join(WORKLOADS),
                    help="comma-separated subset of " + ",".join(WORKLOADS))
    ap.add_argument("--rounds", type=int, help="timed rounds per side (default 31, quick 7)")
    ap.add_argument("--run-only", metavar="W",
                    help="no timing: run graphcore's iteration of workload W --iters times "
                         "(for profilers); with --floor, the floor's instead")
    ap.add_argument("--floor", action="store_true", help="with --run-only: run the floor")
    ap.add_argument("--iters", type=int, default=2000, help="iterations for --run-only")
    ap.add_argument("--profile", type=int, metavar="N", default=0,
                    help="with --run-only: cProfile the iterations only (not imports or set-up) "
                         "and print the top N functions by tottime")
    args = ap.parse_args(argv)
    keys = [k.strip().upper() for k in args.workloads.split(",") if k.strip()]
    unknown = [k for k in keys + ([args.run_only.upper()] if args.run_only else [])
               if k not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")

    if args.run_only:
        wl = WORKLOADS[args.run_only.upper()]()
        fn = wl.floor_iteration() if args.floor else wl.gc_iteration()
        _time_batch(fn, 10)  # warm up
        profiler = None
        if args.profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        elapsed = _time_batch(fn, args.iters)
        if profiler is not None:
            profiler.disable()
        print(f"{wl.key} {'floor' if args.floor else 'graphcore'}: {args.iters} iterations, "
              f"{elapsed / args.iters * 1e6:.1f} us/iter (mean, incl. any profiler overhead)")
        if profiler is not None:
            import pstats

            pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)
        return 0

    env = _environment()
    log = (lambda *a: print(*a, file=sys.stderr)) if args.json else print
    log(f"numpy {env['numpy']} ({env['blas']}), python {env['python']}, {env['machine']}, "
        f"{env['cpus']} cpus, OPENBLAS/OMP/MKL threads = "
        f"{'/'.join(str(v) for v in env['threads'].values())}")

    workloads = [WORKLOADS[k]() for k in keys]
    for wl in workloads:
        problems = compare_gradients(wl)
        if problems:
            print(f"ABORT: graphcore and the numpy floor disagree on {wl.key}:\n  "
                  + "\n  ".join(problems), file=sys.stderr)
            return 1
    log(f"gradient cross-check passed: {', '.join(keys)}")

    rounds = args.rounds or (7 if args.quick else 31)
    batch_s, warmup_s = (0.005, 0.05) if args.quick else (0.03, 0.5)
    rows = []
    for wl in workloads:
        r = measure(wl, rounds, batch_s, warmup_s)
        rows.append({"key": wl.key, "title": wl.title, "target": wl.target, **r})
    if args.json:
        print(json.dumps({"environment": env, "rounds": rounds, "batch_s": batch_s,
                          "results": rows}, indent=2))
    else:
        print(_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
