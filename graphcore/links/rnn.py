"""Stateless recurrent cells: ``RNN`` (tanh) and ``LSTM``. The caller carries the state.

>>> cell = LSTM(None, 32)
>>> h = c = None                        # None means zeros
>>> for x in xs:
...     h, c = cell(x, h, c)
"""

from __future__ import annotations

import numpy as np

from graphcore.attributes import Attr, check_arguments
from graphcore.errors import ArgumentTypeError
from graphcore.functions import lstm, tanh
from graphcore.links.linear import SIZE, Linear
from graphcore.links.link import Chain


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


class LSTM(Chain):
    """LSTM cell (Chainer's gate layout, ``F.lstm``): ``h, c = cell(x, h, c)``.

    Children: ``upward`` (``Linear(in_size, 4 * out_size)``) and ``lateral``
    (``Linear(out_size, 4 * out_size, nobias=True)``).  The forget gate's bias starts at
    ``forget_bias_init`` (1 by default, as in Chainer) so early training remembers.
    ``h=None`` or ``c=None`` means zeros.
    """

    def __init__(self, in_size: int | None, out_size: int | None = None,
                 forget_bias_init: float = 1.0) -> None:
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        _check_sizes(type(self).__name__, in_size, out_size)
        self.state_size = out_size
        with self.init_scope():
            self.upward = Linear(in_size, 4 * out_size)
            self.lateral = Linear(out_size, 4 * out_size, nobias=True)
        # F.lstm interleaves the gates per unit: column 4*k + 2 is unit k's forget gate.
        self.upward.b.array.reshape(out_size, 4)[:, 2] = forget_bias_init

    def forward(self, x, h=None, c=None):
        a = self.upward(x)
        if h is not None:
            a = a + self.lateral(h)
        if c is None:
            c = np.zeros((x.shape[0], self.state_size), dtype=a.dtype)
        c_new, h_new = lstm(c, a)
        return h_new, c_new
