"""Kernels for boolean masks: ``where`` (a select by a condition), its two gradients, and
``cast`` (how ``passes/mask_grads.py`` turns a mask into 0/1 factors, once per replay).

``where(c, x, y)`` is how a batched run keeps the carried state of the examples that have
ended (``where(t < length, new, old)``), once per time step, so its replay should cost two
numpy calls and allocate nothing, where the op's own ``forward`` and ``backward`` allocate and
broadcast on every call:

- forward: ``out <- y``, then ``out <- x`` where ``c`` holds (``np.copyto`` with ``where=``);
- gradient of ``x``: ``gy * c``; of ``y``: ``gy * (not c)``, the negation in a scratch buffer
  of ``c``'s shape. Products, as the op's backward computes them (``g.mask``), so the values
  are the same, NaN and infinities included.

``cast`` is ``x.astype(dtype)`` written into the buffer (``np.copyto``, unsafe casting as
``astype`` casts).

The condition may broadcast (``c`` of shape ``(batch, 1)`` against ``(batch, hidden)``
values). A gradient whose input broadcast (a ``y`` of another shape than the result, which
then sums over the broadcast axes) and mixed dtypes fall back to the op's own code.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from graphcore.static.ir import Node
from graphcore.static.kernels.base import Steps


def where(node: Node, ins: list, out: np.ndarray, ctx: Any):
    c, x, y = ins
    if c.dtype != np.bool_ or x.dtype != out.dtype or y.dtype != out.dtype:
        return None
    if np.broadcast_shapes(c.shape, x.shape, y.shape) != out.shape:
        return None
    if np.shares_memory(out, x) or np.shares_memory(out, c):
        return None  # the first copy would overwrite what the second reads
    return Steps([partial(np.copyto, out, y), partial(np.copyto, out, x, where=c)])


def vjp_where(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list, out: np.ndarray,
              ctx: Any):
    c = fwd_ins[0]
    gy = gys[0]
    index = node.attrs["index"]
    if index == 0 or gy.shape != out.shape or gy.dtype != out.dtype or c.dtype != np.bool_:
        return None  # the condition has no gradient; a broadcast input sums: the op's code
    if index == 1:
        return partial(np.multiply, gy, c, out=out)
    negated = np.empty(c.shape, np.bool_)
    return Steps([partial(np.logical_not, c, out=negated),
                  partial(np.multiply, gy, negated, out=out)])


def cast(node: Node, ins: list, out: np.ndarray, ctx: Any):
    if ins[0].shape != out.shape:
        return None
    return partial(np.copyto, out, ins[0], casting="unsafe")


FORWARD = {"where": where, "cast": cast}
VJP = {"where": vjp_where}
