"""Stacked recurrent networks over lists of variable-length sequences: Chainer's
``F.n_step_lstm``, ``F.n_step_gru`` and ``F.n_step_rnn`` (Elman, tanh or relu), and their
bidirectional forms ``n_step_bilstm``, ``n_step_bigru``, ``n_step_birnn``.

These are composites of registered ops (``linear``, ``lstm``'s gates, ``split_axis``,
``concat``, ``stack``, ``get_item``), as Chainer's own CPU path is: every gradient, first and
second order, is exactly the chain rule over ops that are gradient-checked one by one, and a
drawn graph shows the unrolled cells. The input-to-hidden products of all time steps are one
``linear`` per layer (one matrix product), the recurrent ones one per step.

Weight layout (Chainer's, i.e. cuDNN's): per layer, LSTM ``ws[l] = [W0..W7]`` with ``W0..W3``
multiplying the layer input and ``W4..W7`` the hidden state, for the input gate (0, 4), forget
gate (1, 5), cell candidate (2, 6) and output gate (3, 7); ``bs[l]`` likewise. (Chainer's
docstring swaps the roles of 2/6 and 3/7; its code, followed here, does not.) GRU:
``W0, W3`` reset gate, ``W1, W4`` update gate, ``W2, W5`` candidate. Elman: ``W0`` the input,
``W1`` the hidden state. Bidirectional: ``ws[2l]`` runs forward in time, ``ws[2l + 1]``
backward, and ``hx[2l]``, ``hx[2l + 1]`` are their states.
"""

from __future__ import annotations

import numpy as np

from graphcore.errors import ShapeError
from graphcore.ops.activation import relu, sigmoid, tanh
from graphcore.ops.array import concat, reshape, split_axis, stack
from graphcore.ops.indexing import get_item
from graphcore.ops.linalg import linear
from graphcore.ops.lstm_cell import lstm
from graphcore.ops.noise import dropout


def n_step_lstm(n_layers, dropout_ratio, hx, cx, ws, bs, xs):
    """Stacked LSTM over time-major batches ``xs[t]`` of shape ``(B_t, I)`` (``B_t``
    non-increasing: ``F.transpose_sequence`` of sequences sorted by decreasing length).

    ``hx``, ``cx``: ``(n_layers, B_0, N)`` initial states. Returns ``(hy, cy, ys)``: the final
    states (same shape; a sequence that ended early keeps the state of its last step) and a
    tuple of ``ys[t]`` of shape ``(B_t, N)`` from the last layer. ``dropout_ratio`` drops the
    input of every layer but the first while ``config.train`` is True.
    """
    hy, cy, ys = _stacked("n_step_lstm", _lstm_cell, 8, n_layers, dropout_ratio, hx, cx, ws,
                          bs, xs, False)
    return hy, cy, ys


def n_step_bilstm(n_layers, dropout_ratio, hx, cx, ws, bs, xs):
    """Bidirectional ``n_step_lstm`` (Chainer's ``F.n_step_bilstm``): layer ``l`` runs one
    LSTM forward in time (weights ``ws[2l]``) and one backward (``ws[2l + 1]``); ``ys[t]`` and
    the next layer's input are their outputs concatenated, ``(B_t, 2N)``; ``hx``, ``cx``,
    ``hy``, ``cy``: ``(2 n_layers, B_0, N)``."""
    return _stacked("n_step_bilstm", _lstm_cell, 8, n_layers, dropout_ratio, hx, cx, ws, bs,
                    xs, True)


def n_step_gru(n_layers, dropout_ratio, hx, ws, bs, xs):
    """Stacked GRU, as ``n_step_lstm`` without the cell state: returns ``(hy, ys)``.

    ``r = sigmoid(W0 x + b0 + W3 h + b3)``, ``z = sigmoid(W1 x + b1 + W4 h + b4)``,
    ``h_bar = tanh(W2 x + b2 + r * (W5 h + b5))``, ``h' = (1 - z) * h_bar + z * h``.
    """
    hy, _, ys = _stacked("n_step_gru", _gru_cell, 6, n_layers, dropout_ratio, hx, None, ws,
                         bs, xs, False)
    return hy, ys


def n_step_bigru(n_layers, dropout_ratio, hx, ws, bs, xs):
    """Bidirectional ``n_step_gru`` (Chainer's ``F.n_step_bigru``), laid out as
    ``n_step_bilstm``: returns ``(hy, ys)``."""
    hy, _, ys = _stacked("n_step_bigru", _gru_cell, 6, n_layers, dropout_ratio, hx, None, ws,
                         bs, xs, True)
    return hy, ys


def n_step_rnn(n_layers, dropout_ratio, hx, ws, bs, xs, activation="tanh"):
    """Stacked Elman RNN (Chainer's ``F.n_step_rnn``): ``h' = act(W0 x + b0 + W1 h + b1)``,
    ``act`` ``"tanh"`` or ``"relu"``; laid out as ``n_step_gru``, returns ``(hy, ys)``."""
    hy, _, ys = _stacked("n_step_rnn", _elman_cell(activation, "n_step_rnn"), 2, n_layers,
                         dropout_ratio, hx, None, ws, bs, xs, False)
    return hy, ys


def n_step_birnn(n_layers, dropout_ratio, hx, ws, bs, xs, activation="tanh"):
    """Bidirectional ``n_step_rnn`` (Chainer's ``F.n_step_birnn``), laid out as
    ``n_step_bilstm``: returns ``(hy, ys)``."""
    hy, _, ys = _stacked("n_step_birnn", _elman_cell(activation, "n_step_birnn"), 2, n_layers,
                         dropout_ratio, hx, None, ws, bs, xs, True)
    return hy, ys


# --- one cell per family: (input weights, input bias, step) from a layer's ws[l], bs[l] ------

def _lstm_cell(w, b):
    # F.lstm reads the gates interleaved per unit, in the order a, i, f, o
    xw, hw = _interleave([w[2], w[0], w[1], w[3]]), _interleave([w[6], w[4], w[5], w[7]])
    xb, hb = _interleave([b[2], b[0], b[1], b[3]]), _interleave([b[6], b[4], b[5], b[7]])

    def step(x_proj, h, c):
        c, h = lstm(c, x_proj + linear(h, hw, hb))
        return h, c
    return xw, xb, step


def _gru_cell(w, b):
    xw, hw = concat(w[:3], axis=0), concat(w[3:6], axis=0)
    xb, hb = concat(b[:3], axis=0), concat(b[3:6], axis=0)

    def step(x_proj, h, c):
        x_r, x_z, x_h = split_axis(x_proj, 3, axis=1)
        h_r, h_z, h_h = split_axis(linear(h, hw, hb), 3, axis=1)
        r = sigmoid(x_r + h_r)
        z = sigmoid(x_z + h_z)
        h_bar = tanh(x_h + r * h_h)
        return (1 - z) * h_bar + z * h, None
    return xw, xb, step


def _elman_cell(activation: str, where: str):
    if activation not in ("tanh", "relu"):
        raise ValueError(f"{where}: activation must be 'tanh' or 'relu', got {activation!r}")
    act = tanh if activation == "tanh" else relu

    def cell(w, b):
        def step(x_proj, h, c):
            return act(x_proj + linear(h, w[1], b[1])), None
        return w[0], b[0], step
    return cell


def _stacked(where, cell, n_weights, n_layers, dropout_ratio, hx, cx, ws, bs, xs,
             bidirectional: bool):
    """The layers (and directions) of a stacked recurrent network: ``(hy, cy, ys)``, ``cy``
    None without a cell state."""
    directions = 2 if bidirectional else 1
    _check(n_layers * directions, hx, ws, bs, xs, n_weights, where)
    if cx is not None:
        _check_state(cx, hx, "cx", where)
    hy, cy = [], []
    for layer in range(n_layers):
        outs = []
        for direction in range(directions):
            k = directions * layer + direction
            xw, xb, step = cell(ws[k], bs[k])
            xs_in = _layer_input(xs, layer, dropout_ratio)
            if direction:
                xs_in = xs_in[::-1]
            h, c, hs = _one_direction(step, _input_products(xs_in, xw, xb), get_item(hx, k),
                                      None if cx is None else get_item(cx, k))
            outs.append(hs[::-1] if direction else hs)
            hy.append(h)
            cy.append(c)
        xs = outs[0] if directions == 1 else [concat(pair, axis=1)
                                              for pair in zip(*outs, strict=True)]
    return stack(hy), (None if cx is None else stack(cy)), tuple(xs)


def _one_direction(step, x_projs, h, c):
    """Run ``step`` over the steps' input products; a step with a smaller batch updates the
    first rows of the state and keeps the rest."""
    hs = []
    for x_proj in x_projs:
        (h_now, h_rest) = _split_batch(h, len(x_proj))
        c_now, c_rest = _split_batch(c, len(x_proj)) if c is not None else (None, None)
        h_now, c_now = step(x_proj, h_now, c_now)
        hs.append(h_now)
        h = _join_batch(h_now, h_rest)
        if c is not None:
            c = _join_batch(c_now, c_rest)
    return h, c, hs


def _interleave(parts):
    """``[A, B, C, D]`` of shape (N, ...) -> (4N, ...) with row 4u + g = parts[g][u]."""
    joined = stack(parts, axis=1)
    return reshape(joined, (joined.shape[0] * joined.shape[1],) + joined.shape[2:])


def _layer_input(xs, layer: int, ratio: float):
    if layer == 0 or not ratio:
        return xs
    return [dropout(x, ratio) for x in xs]


def _input_products(xs, w, b):
    """``linear(x_t, w, b)`` for every step, as one matrix product over all steps."""
    sizes = [len(x) for x in xs]
    if len(xs) == 1:
        return [linear(xs[0], w, b)]
    joined = linear(concat(xs, axis=0), w, b)
    return split_axis(joined, np.cumsum(sizes[:-1]).tolist(), axis=0)


def _split_batch(h, batch: int):
    if len(h) == batch:
        return h, None
    return split_axis(h, [batch], axis=0)


def _join_batch(h, rest):
    return h if rest is None else concat([h, rest], axis=0)


def _check(n_layers, hx, ws, bs, xs, n_weights: int, where: str) -> None:
    if len(ws) != n_layers or len(bs) != n_layers or any(
            len(w) != n_weights for w in ws) or any(len(b) != n_weights for b in bs):
        raise ShapeError(f"{where}: expected {n_layers} layers of {n_weights} weights and "
                         f"{n_weights} biases, got {[len(w) for w in ws]} and "
                         f"{[len(b) for b in bs]}")
    if not xs:
        raise ShapeError(f"{where}: xs has no time steps")
    batches = [len(x) for x in xs]
    if any(a < b for a, b in zip(batches, batches[1:], strict=False)):
        raise ShapeError(f"{where}: batch sizes of xs must not increase over time, got "
                         f"{batches} (sort sequences by decreasing length, then "
                         "F.transpose_sequence)")
    if xs[0].shape[1:] != (ws[0][0].shape[1],):
        raise ShapeError(f"{where}: inconsistent input size in input values and weight "
                         f"parameters: {xs[0].shape} and W0 {ws[0][0].shape}")
    units = ws[0][0].shape[0]
    if hx.shape != (n_layers, batches[0], units):
        raise ShapeError(f"{where}: hx must have shape (n_layers, batch, units) = "
                         f"{(n_layers, batches[0], units)}, got {hx.shape}")


def _check_state(state, hx, name: str, where: str) -> None:
    if state.shape != hx.shape:
        raise ShapeError(f"{where}: {name} must have hx's shape {hx.shape}, got {state.shape}")
