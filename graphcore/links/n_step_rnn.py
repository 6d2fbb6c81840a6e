"""``NStepLSTM``, ``NStepGRU``, ``NStepRNNTanh`` / ``NStepRNNReLU`` and their bidirectional
forms (``NStepBiLSTM``, ``NStepBiGRU``, ``NStepBiRNNTanh``, ``NStepBiRNNReLU``): stacked
recurrent layers over a list of variable-length sequences (Chainer's links over
``F.n_step_lstm``, ``n_step_gru``, ``n_step_rnn`` and the ``n_step_bi*`` functions).

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
from graphcore.ops.recurrent import (
    n_step_bigru,
    n_step_bilstm,
    n_step_birnn,
    n_step_gru,
    n_step_lstm,
    n_step_rnn,
)
from graphcore.variable import Parameter, Variable


class NStepRNNBase(ChainList):
    """One child link per layer and direction holding ``w0..w{n-1}`` and ``b0..b{n-1}``
    (Chainer's names: ``/0/w0``, ``/0/b0``, ...; bidirectional: child ``2 l`` runs forward in
    time, ``2 l + 1`` backward). Weights start from ``initialW`` (default ``Normal(sqrt(1 /
    fan_in))``, Chainer's LeCunNormal), biases from ``initial_bias`` (default 0).

    ``in_size=None`` creates the first layer's input weights on the first call.
    """

    n_weights = 0
    use_bi_direction = False
    n_cells = 1  # the states the network carries (hx; LSTM: hx and cx)

    def __init__(self, n_layers: int, in_size: int | None, out_size: int,
                 dropout: float, *, initialW=None, initial_bias=None) -> None:
        if n_layers < 1:
            raise ValueError(f"{type(self).__name__}: n_layers must be at least 1, got "
                             f"{n_layers}")
        dtype = np.dtype(config.dtype)  # a lazy first layer gets the dtype of the others
        direction = 2 if self.use_bi_direction else 1
        w_init = None if initialW is None else initializers.get_initializer(initialW)
        b_init = initializers.get_initializer(0.0 if initial_bias is None else initial_bias)
        layers = []
        half = self.n_weights // 2
        for i in range(n_layers):
            for _ in range(direction):
                layer = Link()
                with layer.init_scope():
                    for j in range(self.n_weights):
                        w_in = (in_size if i == 0 else out_size * direction) if j < half \
                            else out_size
                        w = Parameter(None)
                        w.initializer = self._weight_initializer(w_init, w_in, dtype)
                        if w_in is not None:
                            w.initialize((out_size, w_in))
                        setattr(layer, f"w{j}", w)
                        setattr(layer, f"b{j}", Parameter(b_init, (out_size,)))
                layers.append(layer)
        super().__init__(*layers)
        self._dtype = dtype
        self._w_init = w_init
        self.n_layers = n_layers
        self.out_size = out_size
        self.dropout = dropout
        self.direction = direction

    @staticmethod
    def _weight_initializer(given, fan_in: int | None, dtype):
        if given is not None:
            return given
        return None if fan_in is None else initializers.Normal(math.sqrt(1.0 / fan_in), dtype)

    @property
    def ws(self):
        return [[getattr(layer, f"w{j}") for j in range(self.n_weights)] for layer in self]

    @property
    def bs(self):
        return [[getattr(layer, f"b{j}") for j in range(self.n_weights)] for layer in self]

    def _initialize_input(self, in_size: int) -> None:
        for d in range(self.direction):
            for j in range(self.n_weights // 2):
                w = getattr(self[d], f"w{j}")
                w.initializer = self._weight_initializer(self._w_init, in_size, self._dtype)
                w.initialize((self.out_size, in_size))

    def init_hx(self, xs):
        """Zero states for ``xs``: ``(n_layers * direction, len(xs), out_size)``."""
        shape = (self.n_layers * self.direction, len(xs), self.out_size)
        return Variable(np.zeros(shape, xs[0].dtype))

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
        states = [self.init_hx(sorted_xs) if s is None else get_item(s, (slice(None), order))
                  for s in states]
        *final, trans_y = self.rnn(*states, transpose_sequence(sorted_xs))
        inverse = np.argsort(order)
        final = [get_item(s, (slice(None), inverse)) for s in final]
        ys = transpose_sequence(trans_y)
        return final, [ys[i] for i in inverse]

    def forward(self, hx, xs):
        (hy,), ys = self._run([hx], xs)
        return hy, ys


class NStepLSTM(NStepRNNBase):
    """``NStepLSTM(n_layers, in_size, out_size, dropout)``;
    ``hy, cy, ys = rnn(hx, cx, xs)`` with ``hx``/``cx`` ``(n_layers, batch, out_size)`` or
    None (zeros) and ``xs`` a list of ``(L_i, in_size)`` sequences."""

    n_weights = 8
    n_cells = 2

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


class NStepBiLSTM(NStepLSTM):
    """Bidirectional ``NStepLSTM``: ``hy, cy, ys = rnn(hx, cx, xs)`` with states
    ``(2 n_layers, batch, out_size)`` and ``ys[i]`` ``(L_i, 2 out_size)``."""

    use_bi_direction = True

    def rnn(self, hx, cx, xs):
        return n_step_bilstm(self.n_layers, self.dropout, hx, cx, self.ws, self.bs, xs)


class NStepBiGRU(NStepGRU):
    """Bidirectional ``NStepGRU``, laid out as ``NStepBiLSTM``."""

    use_bi_direction = True

    def rnn(self, hx, xs):
        return n_step_bigru(self.n_layers, self.dropout, hx, self.ws, self.bs, xs)


class NStepRNNTanh(NStepRNNBase):
    """Stacked Elman RNN with tanh (``F.n_step_rnn``): ``hy, ys = rnn(hx, xs)``."""

    n_weights = 2

    def rnn(self, hx, xs):
        return n_step_rnn(self.n_layers, self.dropout, hx, self.ws, self.bs, xs, "tanh")


class NStepRNNReLU(NStepRNNBase):
    """Stacked Elman RNN with relu (``F.n_step_rnn``): ``hy, ys = rnn(hx, xs)``."""

    n_weights = 2

    def rnn(self, hx, xs):
        return n_step_rnn(self.n_layers, self.dropout, hx, self.ws, self.bs, xs, "relu")


class NStepBiRNNTanh(NStepRNNTanh):
    """Bidirectional ``NStepRNNTanh`` (``F.n_step_birnn``)."""

    use_bi_direction = True

    def rnn(self, hx, xs):
        return n_step_birnn(self.n_layers, self.dropout, hx, self.ws, self.bs, xs, "tanh")


class NStepBiRNNReLU(NStepRNNReLU):
    """Bidirectional ``NStepRNNReLU`` (``F.n_step_birnn``)."""

    use_bi_direction = True

    def rnn(self, hx, xs):
        return n_step_birnn(self.n_layers, self.dropout, hx, self.ws, self.bs, xs, "relu")
