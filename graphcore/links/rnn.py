"""Recurrent cells, Chainer's names and call conventions.

- ``RNN``: an Elman cell, ``h = cell(x, h)`` (the caller carries the state);
- ``StatelessLSTM``: ``c, h = cell(c, h, x)`` (the caller carries the state);
- ``LSTM``: stateful, ``h = lstm(x)`` keeps ``c`` and ``h`` until ``reset_state()``;
- ``StatelessGRU``: ``h = gru(h, x)``; ``GRU`` (alias ``StatefulGRU``): stateful, ``h = gru(x)``;
- ``StatefulPeepholeLSTM``: ``h = lstm(x)`` with peephole connections;
- ``StatelessMGU`` (``h = mgu(h, x)``) and ``StatefulMGU`` (``h = mgu(x)``): minimal gated
  units.

>>> lstm = LSTM(None, 32)
>>> for x in xs:                       # x: (batch, features)
...     h = lstm(x)
>>> lstm.reset_state()                 # the next call starts from zeros again
"""

from __future__ import annotations

import numpy as np

from graphcore.attributes import Attr, check_arguments
from graphcore.config import config
from graphcore.errors import ArgumentTypeError
from graphcore.functions import concat, lstm, reshape, sigmoid, split_axis, tanh
from graphcore.links.linear import SIZE, Linear
from graphcore.links.link import Chain
from graphcore.variable import Variable


def _check_sizes(owner: str, in_size: object, out_size: object) -> None:
    if out_size is None:
        raise ArgumentTypeError(f"{owner}: argument 'out_size' is required: {owner}(in_size, "
                                f"out_size), or {owner}(out_size) to infer in_size")
    check_arguments(owner, {"in_size": SIZE, "out_size": Attr(int, low=1)}, in_size=in_size,
                    out_size=out_size)


class RNN(Chain):
    """Elman cell ``h' = tanh(upward(x) + lateral(h))``; ``in_size=None`` is inferred lazily.

    Children: ``upward`` (``Linear(in_size, out_size)``) and ``lateral``
    (``Linear(out_size, out_size, nobias=True)``), so parameters are ``/upward/W``,
    ``/upward/b`` and ``/lateral/W``.  ``h=None`` means a zero state.
    """

    def __init__(self, in_size: int | None, out_size: int | None = None) -> None:
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        _check_sizes(type(self).__name__, in_size, out_size)
        self.state_size = out_size
        with self.init_scope():
            self.upward = Linear(in_size, out_size)
            self.lateral = Linear(out_size, out_size, nobias=True)

    def forward(self, x, h=None):
        a = self.upward(x)
        if h is not None:
            a = a + self.lateral(h)
        return tanh(a)


class LSTMBase(Chain):
    """The parameters of an LSTM cell (Chainer's layout, ``F.lstm``'s interleaved gates).

    Children: ``upward`` (``Linear(in_size, 4 * out_size)``) and ``lateral``
    (``Linear(out_size, 4 * out_size, nobias=True)``). The gate biases start at ``bias_init``
    (0) except the forget gate's, at ``forget_bias_init`` (1, as in Chainer) so early training
    remembers. ``in_size=None`` (or ``LSTM(out_size)``) takes it from the first input.
    """

    def __init__(self, in_size: int | None, out_size: int | None = None,
                 lateral_init=None, upward_init=None, bias_init=0.0,
                 forget_bias_init=1.0) -> None:
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        _check_sizes(type(self).__name__, in_size, out_size)
        self.state_size = out_size
        with self.init_scope():
            self.upward = Linear(in_size, 4 * out_size, initialW=upward_init)
            self.lateral = Linear(out_size, 4 * out_size, nobias=True, initialW=lateral_init)
        # F.lstm interleaves the gates per unit (a, i, f, o): column 4*k + 2 is unit k's
        # forget gate.
        gates = self.upward.b.array.reshape(out_size, 4)
        for gate in range(4):
            _fill(gates[:, gate], forget_bias_init if gate == 2 else bias_init)

    def _gates(self, x, h):
        a = self.upward(x)
        if h is not None:
            a = a + self.lateral(h)
        return a


def _fill(view: np.ndarray, init) -> None:
    """Fill ``view`` from a number or an initializer (a callable filling an array)."""
    if callable(init):
        values = np.empty(view.shape, view.dtype)
        init(values)
        view[...] = values
    else:
        view[...] = init


class StatelessLSTM(LSTMBase):
    """LSTM cell whose caller carries the state: ``c_new, h_new = cell(c, h, x)`` (Chainer's
    argument order); ``c=None`` or ``h=None`` mean zeros."""

    def forward(self, c, h, x):
        a = self._gates(x, h)
        if c is None:
            c = np.zeros((x.shape[0], self.state_size), dtype=a.dtype)
        return lstm(c, a)


class LSTM(LSTMBase):
    """Stateful LSTM layer (Chainer's ``L.LSTM``): ``h = lstm(x)`` updates and returns the
    hidden state; ``c`` and ``h`` are kept until ``reset_state()`` (or ``set_state(c, h)``).

    Variable-length batches work as in Chainer: a batch may be smaller than the previous one
    (sequences sorted by decreasing length); only the first ``len(x)`` rows of the state are
    updated, the rest keep their values.
    """

    def __init__(self, in_size: int | None, out_size: int | None = None, **kwargs) -> None:
        super().__init__(in_size, out_size, **kwargs)
        self.reset_state()

    def reset_state(self) -> None:
        self.c = self.h = None

    def set_state(self, c, h) -> None:
        if not isinstance(c, Variable) or not isinstance(h, Variable):
            raise TypeError("LSTM.set_state: c and h must be Variables")
        self.c, self.h = c, h

    def forward(self, x):
        if not isinstance(x, Variable | np.ndarray):
            raise ArgumentTypeError(f"{type(self).__name__}: input must be a Variable or a "
                                    f"numpy array, got {type(x).__name__}")
        batch = x.shape[0]
        h_rest = c_rest = None
        h = self.h
        if h is not None:
            if len(h) < batch:  # a TypeError, as Chainer's
                raise TypeError(f"LSTM: the batch size of x ({batch}) must be at most that of "
                                f"the previous state h ({len(h)})")
            if len(h) > batch:
                h, h_rest = split_axis(h, [batch], axis=0)
        a = self._gates(x, h)
        c = self.c
        if c is None:
            c = np.zeros((batch, self.state_size), dtype=a.dtype)
        elif len(c) > batch:
            c, c_rest = split_axis(c, [batch], axis=0)
        c, y = lstm(c, a)
        self.c = c if c_rest is None else concat([c, c_rest], axis=0)
        self.h = y if h_rest is None else concat([y, h_rest], axis=0)
        return y


class GRUBase(Chain):
    """The six ``Linear`` children of a GRU cell (Chainer's names): ``W_r``, ``U_r``, ``W_z``,
    ``U_z``, ``W``, ``U``; ``W_*`` read the input, ``U_*`` the hidden state."""

    def __init__(self, in_size: int | None, out_size: int | None = None, init=None,
                 inner_init=None, bias_init=None) -> None:
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        self.state_size = out_size
        with self.init_scope():
            for name in ("W_r", "U_r", "W_z", "U_z", "W", "U"):
                inner = name.startswith("U")
                setattr(self, name, Linear(out_size if inner else in_size, out_size,
                                           initialW=inner_init if inner else init,
                                           initial_bias=bias_init))


class StatelessGRU(GRUBase):
    """GRU cell ``h_new = gru(h, x)``::

        r = sigmoid(W_r x + U_r h),  z = sigmoid(W_z x + U_z h)
        h_bar = tanh(W x + U (r * h)),  h_new = (1 - z) * h + z * h_bar
    """

    def forward(self, h, x):
        r = sigmoid(self.W_r(x) + self.U_r(h))
        z = sigmoid(self.W_z(x) + self.U_z(h))
        h_bar = tanh(self.W(x) + self.U(r * h))
        return (1 - z) * h + z * h_bar


class StatefulGRU(GRUBase):
    """Stateful GRU (Chainer's ``L.StatefulGRU`` / ``L.GRU``): ``h = gru(x)`` keeps ``h``.

    The first step after ``reset_state()`` has no previous state, and as in Chainer it skips
    the ``U_*`` links entirely: ``h = sigmoid(W_z x) * tanh(W x)``.
    """

    def __init__(self, in_size: int | None, out_size: int | None = None, init=None,
                 inner_init=None, bias_init=0.0) -> None:
        super().__init__(in_size, out_size, init, inner_init, bias_init)
        self.reset_state()

    def reset_state(self) -> None:
        self.h = None

    def set_state(self, h) -> None:
        if not isinstance(h, Variable):
            raise TypeError("GRU.set_state: h must be a Variable")
        self.h = h

    def forward(self, x):
        z = self.W_z(x)
        h_bar = self.W(x)
        if self.h is not None:
            r = sigmoid(self.W_r(x) + self.U_r(self.h))
            z = z + self.U_z(self.h)
            h_bar = h_bar + self.U(r * self.h)
        z = sigmoid(z)
        h_bar = tanh(h_bar)
        if self.h is None:
            self.h = z * h_bar
        else:
            self.h = (1 - z) * self.h + z * h_bar
        return self.h


class GRU(StatefulGRU):
    """Stateful GRU, ``h = gru(x)`` (Chainer's ``L.GRU`` since v2; ``StatelessGRU`` is the
    ``gru(h, x)`` form)."""

    def forward(self, *args):
        # Chainer's errors: ValueError for any other number of arguments than one
        if len(args) != 1:
            hint = (" GRU is stateful since Chainer v2: call it as gru(x); StatelessGRU is "
                    "gru(h, x)") if len(args) == 2 else ""
            raise ValueError(f"GRU.forward takes one argument (x), got {len(args)}.{hint}")
        return super().forward(args[0])


class StatefulPeepholeLSTM(Chain):
    """Stateful LSTM with peephole connections (Chainer's ``L.StatefulPeepholeLSTM``):
    ``h = lstm(x)``; the input and forget gates also see the previous ``c``, the output gate
    the new one.

    Children: ``upward`` (``Linear(in_size, 4 out_size)``), ``lateral`` (``Linear(out_size,
    4 out_size, nobias)``), ``peep_i``, ``peep_f``, ``peep_o`` (``Linear(out_size, out_size,
    nobias)``); the gates (a, i, f, o) interleaved per unit, as ``F.lstm``'s.
    """

    def __init__(self, in_size: int | None, out_size: int) -> None:
        super().__init__()
        self.state_size = out_size
        self.reset_state()
        with self.init_scope():
            self.upward = Linear(in_size, 4 * out_size)
            self.lateral = Linear(out_size, 4 * out_size, nobias=True)
            self.peep_i = Linear(out_size, out_size, nobias=True)
            self.peep_f = Linear(out_size, out_size, nobias=True)
            self.peep_o = Linear(out_size, out_size, nobias=True)

    def reset_state(self) -> None:
        self.c = self.h = None

    def forward(self, x):
        gates = self.upward(x)
        if self.h is not None:
            gates = gates + self.lateral(self.h)
        if self.c is None:
            self.c = Variable(np.zeros((len(x), self.state_size), x.dtype))
        n = self.state_size
        a, i, f, o = (reshape(g, (len(x), n))
                      for g in split_axis(reshape(gates, (len(x), n, 4)), 4, axis=2))
        i = sigmoid(i + self.peep_i(self.c))
        f = sigmoid(f + self.peep_f(self.c))
        self.c = tanh(a) * i + f * self.c
        o = sigmoid(o + self.peep_o(self.c))
        self.h = o * tanh(self.c)
        return self.h


class MGUBase(Chain):
    """The two ``Linear(in_size + out_size, out_size)`` children of a minimal gated unit
    (Chainer's ``W_f``, ``W_h``): ``f = sig(W_f [h, x])``, ``h' = f tanh(W_h [f h, x]) + (1 -
    f) h``."""

    def __init__(self, in_size: int, out_size: int) -> None:
        super().__init__()
        check_arguments(type(self).__name__, {"in_size": Attr(int, low=1),
                                              "out_size": Attr(int, low=1)},
                        in_size=in_size, out_size=out_size)
        with self.init_scope():
            self.W_f = Linear(in_size + out_size, out_size)
            self.W_h = Linear(in_size + out_size, out_size)

    def _step(self, h, x):
        f = sigmoid(self.W_f(concat([h, x], axis=1)))
        h_bar = tanh(self.W_h(concat([f * h, x], axis=1)))
        return f * h_bar + (1 - f) * h


class StatelessMGU(MGUBase):
    """MGU cell whose caller carries the state: ``h_new = cell(h, x)``."""

    def forward(self, h, x):
        return self._step(h, x)


class StatefulMGU(MGUBase):
    """Stateful MGU: ``h = mgu(x)`` keeps ``h`` (zeros of ``config.dtype`` at first) until
    ``reset_state()``."""

    def __init__(self, in_size: int, out_size: int) -> None:
        super().__init__(in_size, out_size)
        self._state_size = out_size
        self.reset_state()

    def set_state(self, h) -> None:
        if not isinstance(h, Variable):
            raise TypeError("StatefulMGU.set_state: h must be a Variable")
        self.h = h

    def reset_state(self) -> None:
        self.h = None

    def forward(self, x):
        h = self.h
        if h is None:
            h = Variable(np.zeros((x.shape[0], self._state_size), np.dtype(config.dtype)))
        self.h = self._step(h, x)
        return self.h
