"""``NStepLSTM`` and ``NStepGRU``: stacked recurrent layers over a list of variable-length
sequences (Chainer's links over ``F.n_step_lstm`` / ``F.n_step_gru``).

>>> rnn = NStepLSTM(n_layers=2, in_size=8, out_size=16, dropout=0.0)
>>> hy, cy, ys = rnn(None, None, [x0, x1, x2])   # x_i: (L_i, 8) in any order of length
>>> [y.shape for y in ys]                        # (L_i, 16), in the order given
"""

from __future__ import annotations

import math

import numpy as np

from graphcore import initializers
from graphcore.config import config
from graphcore.errors import ShapeError
from graphcore.links.link import ChainList, Link
from graphcore.ops.array import transpose_sequence
from graphcore.ops.indexing import get_item
from graphcore.ops.recurrent import n_step_gru, n_step_lstm
from graphcore.variable import Parameter


class NStepRNNBase(ChainList):
    """One child link per layer holding ``w0..w{n-1}`` and ``b0..b{n-1}`` (Chainer's names:
    ``/0/w0``, ``/0/b0``, ...). Weights start from ``Normal(sqrt(1 / fan_in))``, biases at 0.

    ``in_size=None`` creates the first layer's input weights on the first call.
    """

    n_weights = 0

    def __init__(self, n_layers: int, in_size: int | None, out_size: int,
                 dropout: float) -> None:
        if n_layers < 1:
            raise ValueError(f"{type(self).__name__}: n_layers must be at least 1, got "
                             f"{n_layers}")
        dtype = np.dtype(config.dtype)  # a lazy first layer gets the dtype of the others
        layers = []
        half = self.n_weights // 2
        for i in range(n_layers):
            layer = Link()
            with layer.init_scope():
                for j in range(self.n_weights):
                    w_in = in_size if i == 0 and j < half else out_size
                    w = Parameter(None)
                    if w_in is not None:
                        w.initializer = initializers.Normal(math.sqrt(1.0 / w_in), dtype)
                        w.initialize((out_size, w_in))
                    setattr(layer, f"w{j}", w)
                    setattr(layer, f"b{j}", Parameter(0.0, (out_size,)))
            layers.append(layer)
        super().__init__(*layers)
        self._dtype = dtype
        self.n_layers = n_layers
        self.out_size = out_size
        self.dropout = dropout

    @property
    def ws(self):
        return [[getattr(layer, f"w{j}") for j in range(self.n_weights)] for layer in self]

    @property
    def bs(self):
        return [[getattr(layer, f"b{j}") for j in range(self.n_weights)] for layer in self]

    def _initialize_input(self, in_size: int) -> None:
        for j in range(self.n_weights // 2):
            w = getattr(self[0], f"w{j}")
            w.initializer = initializers.Normal(math.sqrt(1.0 / in_size), self._dtype)
            w.initialize((self.out_size, in_size))

    def _run(self, states, xs):
        """Sort by decreasing length, transpose to time-major, run, and undo both."""
        if not isinstance(xs, list | tuple) or not xs:
            raise ShapeError(f"{type(self).__name__}: xs must be a non-empty list of "
                             "sequences of shape (length, in_size)")
        if any(x.ndim != 2 for x in xs):
            raise ShapeError(f"{type(self).__name__}: each sequence must be (length, "
                             f"in_size), got {[x.shape for x in xs]}")
        if self[0].w0.array is None:
            self._initialize_input(xs[0].shape[1])
        order = np.argsort([-len(x) for x in xs], kind="stable")
        sorted_xs = [xs[i] for i in order]
        dtype = self[0].w0.dtype
        shape = (self.n_layers, len(xs), self.out_size)
        states = [np.zeros(shape, dtype) if s is None else get_item(s, (slice(None), order))
                  for s in states]
        *final, trans_y = self.rnn(*states, transpose_sequence(sorted_xs))
        inverse = np.argsort(order)
        final = [get_item(s, (slice(None), inverse)) for s in final]
        ys = transpose_sequence(trans_y)
        return final, [ys[i] for i in inverse]


class NStepLSTM(NStepRNNBase):
    """``NStepLSTM(n_layers, in_size, out_size, dropout)``;
    ``hy, cy, ys = rnn(hx, cx, xs)`` with ``hx``/``cx`` ``(n_layers, batch, out_size)`` or
    None (zeros) and ``xs`` a list of ``(L_i, in_size)`` sequences."""

    n_weights = 8

    def rnn(self, hx, cx, xs):
        hy, cy, ys = n_step_lstm(self.n_layers, self.dropout, hx, cx, self.ws, self.bs, xs)
        return hy, cy, ys

    def forward(self, hx, cx, xs):
        (hy, cy), ys = self._run([hx, cx], xs)
        return hy, cy, ys


class NStepGRU(NStepRNNBase):
    """``NStepGRU(n_layers, in_size, out_size, dropout)``; ``hy, ys = rnn(hx, xs)``."""

    n_weights = 6

    def rnn(self, hx, xs):
        return n_step_gru(self.n_layers, self.dropout, hx, self.ws, self.bs, xs)

    def forward(self, hx, xs):
        (hy,), ys = self._run([hx], xs)
        return hy, ys
