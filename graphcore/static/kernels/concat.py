"""Kernels for ``concat``: the inputs written straight into the result's buffer
(``np.concatenate`` with ``out=``), and each input's gradient, its slice of the incoming
gradient copied into the input's buffer. The op's own ``forward`` allocates the result and
its ``backward`` makes graph nodes for every slice at every replay; a batched ``if`` merges
its branches' values with a ``concat`` (``spec/batch_split.py``), so it is on that hot path.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from graphcore.static.ir import Node


def concat(node: Node, ins: list, out: np.ndarray, ctx: Any):
    if not ins or any(a.dtype != out.dtype for a in ins):
        return None  # mixed dtypes: the op's own forward promotes them
    axis = node.attrs.get("axis", 1) % out.ndim
    return partial(np.concatenate, tuple(ins), axis=axis, out=out)


def vjp_concat(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list, out: np.ndarray,
               ctx: Any):
    gy = gys[0]
    if gy.dtype != out.dtype:
        return None
    axis = fwd.attrs.get("axis", 1) % gy.ndim
    i = node.attrs["index"]
    start = sum(x.shape[axis] for x in fwd_ins[:i])
    part = gy[(slice(None),) * axis + (slice(start, start + fwd_ins[i].shape[axis]),)]
    return partial(np.copyto, out, part)  # a view of the gradient's buffer, bound once


FORWARD = {"concat": concat}
VJP = {"concat": vjp_concat}
