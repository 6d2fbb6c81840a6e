"""Kernels for ``permutate`` (Chainer's ``F.permutate``) and its gradient, which is the same
reordering in the other direction over the same indices.

The indices are a plan value like any other (an input buffer, or the buffer of the node that
computes them), filled anew at each replay: a step reads that buffer when it runs and never
keeps a copy made at lowering, so one plan serves every permutation of the traced length.

- forward (``inv`` False): ``np.take(x, indices, axis, out=out, mode="wrap")``;
- inverse: the inverse permutation into a small index buffer (``inverse[indices] = arange``),
  then the same take by it. A take is several times faster than assigning ``out`` through
  the indices, most of all along an inner axis, where the assignment walks strided rows.

``mode="wrap"``: with the default ``mode="raise"`` numpy buffers a take that has ``out=``
(an allocation and a second copy, 2-8 times slower); wrapping gives numpy's result for every
index in ``[-n, n)``. Whether the indices form a permutation is not checked at replay, as
Chainer checks only in debug mode (the define-by-run forward does there); an index past the
axis raises in the inverse's assignment, and wraps in a forward take.

Any dtype or shape the traced op would not give (indices not 1-D signed integers, an output
of another shape or dtype than ``x``) falls back to the op's own code.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from graphcore.static.ir import Node
from graphcore.static.kernels.base import Steps


def _reorder(x: np.ndarray, indices: np.ndarray, out: np.ndarray, axis: int, inv: bool):
    if (indices.ndim != 1 or indices.dtype.kind != "i" or out.shape != x.shape
            or out.dtype != x.dtype or not -x.ndim <= axis < x.ndim
            or indices.shape[0] != x.shape[axis]):
        return None
    axis %= x.ndim
    if not inv:
        return partial(np.take, x, indices, axis=axis, out=out, mode="wrap")
    n = indices.shape[0]
    inverse = np.zeros(n, np.intp)  # zeros: a replay's take never reads an unset entry
    positions = np.arange(n, dtype=np.intp)
    return Steps([partial(np.put, inverse, indices, positions),
                  partial(np.take, x, inverse, axis=axis, out=out, mode="wrap")])


def permutate(node: Node, ins: list, out: np.ndarray, ctx: Any):
    x, indices = ins
    return _reorder(x, indices, out, int(node.attrs.get("axis", 0)),
                    bool(node.attrs.get("inv", False)))


def vjp_permutate(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list, out: np.ndarray,
                  ctx: Any):
    if node.attrs["index"] != 0:
        return None  # the indices have no gradient: the op's own code says so
    return _reorder(gys[0], fwd_ins[1], out, int(fwd.attrs.get("axis", 0)),
                    not fwd.attrs.get("inv", False))


FORWARD = {"permutate": permutate}
VJP = {"permutate": vjp_permutate}
