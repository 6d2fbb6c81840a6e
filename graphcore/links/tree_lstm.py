"""Tree-LSTM cells (Tai et al. 2015), Chainer's links: ``ChildSumTreeLSTM`` (any number of
children, their states summed) and ``NaryTreeLSTM`` (a fixed number of ordered children, one
recurrent matrix each). Both are called as ``c, h = cell(c_1, ..., c_N, h_1, ..., h_N, x)``
and end in ``F.tree_lstm``; a missing child state or ``x`` (``None``) is zeros.
"""

from __future__ import annotations

import numpy as np

from graphcore.attributes import Attr, check_arguments
from graphcore.errors import ArgumentTypeError
from graphcore.functions import concat, sigmoid, split_axis, tanh, tree_lstm
from graphcore.links.linear import Linear
from graphcore.links.link import Chain


def _fill_x(owner: str, cs, hs, x, in_size: int):
    """``x``, or zeros of ``(batch, in_size)`` when it is None (the batch from a state)."""
    if x is not None:
        return x
    base = next((v for v in (*cs, *hs) if v is not None), None)
    if base is None:
        raise ValueError(f"{owner}: all inputs (cs, hs, x) are None")
    return np.zeros((base.shape[0], in_size), base.dtype)


def _zeros_for_none(vs, shape, dtype) -> tuple:
    return tuple(np.zeros(shape, dtype) if v is None else v for v in vs)


class ChildSumTreeLSTM(Chain):
    """Child-Sum Tree-LSTM: ``c, h = cell(c_1..c_N, h_1..h_N, x)`` for any ``N >= 0``.

    Children: ``W_x`` (``Linear(in_size, 4 out_size)``: the a, i, o gates, then the forget
    gate shared by every child), ``W_h_aio`` (``Linear(out_size, 3 out_size, nobias)``, applied
    to the sum of the children's ``h``) and ``W_h_f`` (``Linear(out_size, out_size,
    nobias)``, applied to each child's ``h`` for its own forget gate).
    """

    def __init__(self, in_size: int, out_size: int) -> None:
        super().__init__()
        check_arguments(type(self).__name__, {"in_size": Attr(int, low=1),
                                              "out_size": Attr(int, low=1)},
                        in_size=in_size, out_size=out_size)
        with self.init_scope():
            self.W_x = Linear(in_size, 4 * out_size)
            self.W_h_aio = Linear(out_size, 3 * out_size, nobias=True)
            self.W_h_f = Linear(out_size, out_size, nobias=True)
        self.in_size = in_size
        self.state_size = out_size

    def forward(self, *cshsx):
        if len(cshsx) % 2 != 1:
            raise ArgumentTypeError(f"{type(self).__name__}: expected c_1..c_N, h_1..h_N, x "
                                    f"(an odd number of inputs), got {len(cshsx)}")
        cs, hs, x = cshsx[:len(cshsx) // 2], cshsx[len(cshsx) // 2:-1], cshsx[-1]
        x = _fill_x(type(self).__name__, cs, hs, x, self.in_size)
        n = self.state_size
        aio_x, f_x = split_axis(self.W_x(x), [3 * n], axis=1)
        if not hs:
            a, i, o = split_axis(aio_x, 3, axis=1)
            c = sigmoid(i) * tanh(a)
            return c, sigmoid(o) * tanh(c)
        shape = (x.shape[0], n)
        hs = _zeros_for_none(hs, shape, x.dtype)
        cs = _zeros_for_none(cs, shape, x.dtype)
        h_sum = hs[0]
        for h in hs[1:]:
            h_sum = h_sum + h
        aio = self.W_h_aio(h_sum) + aio_x
        # one product for every child's forget gate: the children stacked along the batch
        f_h = split_axis(self.W_h_f(concat(hs, axis=0)), len(hs), axis=0)
        f = concat(f_h, axis=1) + concat([f_x] * len(hs), axis=1)
        return tree_lstm(*cs, concat([aio, f], axis=1))


class NaryTreeLSTM(Chain):
    """N-ary Tree-LSTM: ``c, h = cell(c_1..c_N, h_1..h_N, x)`` for the fixed ``n_ary = N``.

    Children: ``W_x`` (``Linear(in_size, (3 + N) out_size)``) and ``W_h1`` .. ``W_hN``
    (``Linear(out_size, (3 + N) out_size, nobias)``, one per child position), their sum the
    gates a, i, o, f_1..f_N of ``F.tree_lstm``.
    """

    def __init__(self, in_size: int, out_size: int, n_ary: int = 2) -> None:
        super().__init__()
        check_arguments(type(self).__name__, {"in_size": Attr(int, low=1),
                                              "out_size": Attr(int, low=1),
                                              "n_ary": Attr(int, low=1)},
                        in_size=in_size, out_size=out_size, n_ary=n_ary)
        with self.init_scope():
            self.W_x = Linear(in_size, (3 + n_ary) * out_size)
            for k in range(1, n_ary + 1):
                setattr(self, f"W_h{k}", Linear(out_size, (3 + n_ary) * out_size, nobias=True))
        self.in_size = in_size
        self.state_size = out_size
        self.n_ary = n_ary

    def forward(self, *cshsx):
        if len(cshsx) != 2 * self.n_ary + 1:
            raise ArgumentTypeError(f"{type(self).__name__}: expected c_1..c_{self.n_ary}, "
                                    f"h_1..h_{self.n_ary}, x ({2 * self.n_ary + 1} inputs), "
                                    f"got {len(cshsx)}")
        cs, hs, x = cshsx[:self.n_ary], cshsx[self.n_ary:-1], cshsx[-1]
        x = _fill_x(type(self).__name__, cs, hs, x, self.in_size)
        gates = self.W_x(x)
        for k, h in enumerate(hs, start=1):
            if h is not None:
                gates = gates + getattr(self, f"W_h{k}")(h)
        cs = _zeros_for_none(cs, (x.shape[0], self.state_size), x.dtype)
        return tree_lstm(*cs, gates)
