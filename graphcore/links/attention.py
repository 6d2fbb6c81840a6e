"""``MultiHeadAttention``: the attention block of a transformer (Chainer has none; the API is
graphcore's, in Chainer's style).

>>> mha = MultiHeadAttention(n_heads=4, in_size=64)
>>> y = mha(x)                      # self-attention, x: (batch, length, 64) -> (batch, length, 64)
>>> y = mha(x, kv=memory, mask=m)   # cross-attention; m: True where query i may see key j
"""

from __future__ import annotations

import numpy as np

from graphcore.config import config
from graphcore.errors import ShapeError
from graphcore.links.link import Link
from graphcore.ops.array import reshape, swapaxes
from graphcore.ops.attention import attention
from graphcore.ops.linalg import linear
from graphcore.ops.noise import dropout
from graphcore.variable import Parameter, Variable, as_array

_PROJECTIONS = ("q", "k", "v")


class MultiHeadAttention(Link):
    """Multi-head scaled dot-product attention.

    ``MultiHeadAttention(n_heads, in_size=None, out_size=None, dropout=0.0, nobias=False)``.
    Parameters: ``W_q``, ``W_k``, ``W_v`` of shape ``(in_size, in_size)``, ``W_o`` of shape
    ``(out_size, in_size)`` (``out_size`` defaults to ``in_size``) and their biases ``b_q``,
    ``b_k``, ``b_v``, ``b_o`` (unless ``nobias``). ``in_size=None`` takes it from the first
    input's last axis; it must divide by ``n_heads``.

    ``mha(x, kv=None, mask=None)``: ``x`` is ``(batch, Lq, in_size)`` or ``(Lq, in_size)``;
    keys and values come from ``kv`` (same layout, default ``x``: self-attention). ``mask`` is
    boolean, broadcastable to ``(batch, Lq, Lk)`` (``(Lq, Lk)`` for unbatched ``x``; a padding
    mask over keys is ``(batch, 1, Lk)``), True where a query may attend to a key; it is shared
    by all heads. Each head attends with ``F.attention`` on its ``in_size // n_heads`` slice;
    the heads are joined and projected by ``W_o``. ``dropout`` is applied to that output while
    ``config.train`` is True, never in evaluation.
    """

    def __init__(self, n_heads: int, in_size: int | None = None, out_size: int | None = None,
                 dropout: float = 0.0, nobias: bool = False, initialW=None) -> None:
        super().__init__()
        if n_heads < 1:
            raise ValueError(f"MultiHeadAttention: n_heads must be at least 1, got {n_heads}")
        self.n_heads = n_heads
        self.out_size = out_size
        self.dropout = dropout
        self.nobias = nobias
        with self.init_scope():
            for p in _PROJECTIONS + ("o",):
                setattr(self, f"W_{p}", Parameter(initialW))
                setattr(self, f"b_{p}", None if nobias else Parameter(0.0))
        if in_size is not None:
            self._initialize(in_size)

    def _initialize(self, in_size: int) -> None:
        if in_size % self.n_heads:
            raise ShapeError(f"MultiHeadAttention: in_size {in_size} is not divisible by "
                             f"n_heads {self.n_heads}")
        out_size = self.out_size or in_size
        for p in _PROJECTIONS:
            getattr(self, f"W_{p}").initialize((in_size, in_size))
            if not self.nobias:
                getattr(self, f"b_{p}").initialize((in_size,))
        self.W_o.initialize((out_size, in_size))
        if not self.nobias:
            self.b_o.initialize((out_size,))

    def forward(self, x, kv=None, mask=None):
        if x.ndim not in (2, 3):
            raise ShapeError(f"MultiHeadAttention: expected x (batch, length, size) or "
                             f"(length, size), got {x.shape}")
        if self.W_q.array is None:
            self._initialize(x.shape[-1])
        in_size = self.W_q.shape[1]
        kv = x if kv is None else kv
        if x.shape[-1] != in_size or kv.shape[-1] != in_size or kv.ndim != x.ndim:
            raise ShapeError(f"MultiHeadAttention: expected x and kv of size {in_size} on the "
                             f"last axis and the same rank, got x {x.shape}, kv {kv.shape}")
        unbatched = x.ndim == 2
        if unbatched:
            x, kv = reshape(x, (1,) + x.shape), reshape(kv, (1,) + kv.shape)
        q = self._heads(self._project(x, "q"))
        k = self._heads(self._project(kv, "k"))
        v = self._heads(self._project(kv, "v"))
        keep = None
        if mask is not None:
            # a boolean Variable stays one, so a trace records the mask as an input
            keep = mask if isinstance(mask, Variable) and mask.dtype == np.bool_ else \
                np.asarray(as_array(mask), dtype=bool)
            if keep.ndim >= 3:  # (batch, Lq, Lk) -> (batch, 1 head axis, Lq, Lk)
                keep = reshape(keep, keep.shape[:-2] + (1,) + keep.shape[-2:])
        context = attention(q, k, v, keep)  # (batch, heads, Lq, head size)
        batch, length = x.shape[0], x.shape[1]
        joined = reshape(swapaxes(context, 1, 2), (batch, length, in_size))
        y = self._project(joined, "o")
        if self.dropout and config.train:
            y = dropout(y, self.dropout)
        return reshape(y, y.shape[1:]) if unbatched else y

    def _project(self, x, which: str):
        W = getattr(self, f"W_{which}")
        b = getattr(self, f"b_{which}")
        flat = reshape(x, (-1, x.shape[-1]))
        y = linear(flat, W) if b is None else linear(flat, W, b)
        return reshape(y, x.shape[:-1] + (W.shape[0],))

    def _heads(self, x):
        """(batch, length, size) -> (batch, heads, length, size // heads)."""
        batch, length, size = x.shape
        return swapaxes(reshape(x, (batch, length, self.n_heads, size // self.n_heads)), 1, 2)
