"""Kernels: how each IR node runs at replay time, writing into its preallocated buffer.

The tables ``FORWARD`` (op -> builder) and ``VJP`` (the forward op of a vjp node -> builder),
assembled from the kernel families, one per file: the dense kernels (``dense.py``),
convolution and pooling, where and cast, permutate, concat, the softmax cross-entropy and
layer normalization, ``concat_linear``. What the families share is in ``base.py``; no family
imports this package. Ops without a dedicated kernel fall back to the op's own
``forward``/``backward`` (``generic_forward``/``generic_vjp`` below), copying the result into
the buffer: correct for every op, just not allocation-free.
"""

from __future__ import annotations

import copy
from functools import partial

import numpy as np

from graphcore import errors
from graphcore.registry import get_op
from graphcore.static.ir import Node
from graphcore.static.kernels import concat as concat_kernels
from graphcore.static.kernels import concat_linear as concat_linear_kernels
from graphcore.static.kernels import conv as conv_kernels
from graphcore.static.kernels import dense as dense_kernels
from graphcore.static.kernels import loss_norm as loss_norm_kernels
from graphcore.static.kernels import mask as mask_kernels
from graphcore.static.kernels import permutate as permutate_kernels
from graphcore.static.kernels.base import Context, Step, Steps, elementwise_step, scratch
from graphcore.static.kernels.dense import vjp_linear_act
from graphcore.variable import constant

# what static/lower.py reads from here besides the tables and the fallbacks
__all__ = ["FORWARD", "VJP", "Context", "Step", "Steps", "elementwise_step", "generic_forward",
           "generic_vjp", "scratch", "vjp_linear_act"]

FORWARD = dict(dense_kernels.FORWARD)
VJP = dict(dense_kernels.VJP)
for _family in (conv_kernels, mask_kernels, permutate_kernels, concat_kernels,
                loss_norm_kernels):
    FORWARD.update(_family.FORWARD)
    VJP.update(_family.VJP)
FORWARD.update(concat_linear_kernels.FORWARD)  # its vjps: by the forward node, in lower.py


# --- fallbacks -------------------------------------------------------------------------------
def generic_forward(node: Node, ins: list, outs: list[np.ndarray], ctx: Context) -> Step:
    """Run the op's own ``forward`` (a fresh op object per call, so random ops draw anew) and
    copy its results into the buffers; keep the object for this node's vjps.

    In the replay right after tracing, an impure op runs as the traced object instead, so
    dropout applies the mask the traced (define-by-run) run drew rather than drawing again:
    static mode consumes numpy's generator exactly as define-by-run does."""
    holder = ctx.holder(node.id)
    traced = ctx.instances.get(node.id)
    if node.op == "opaque" or traced is None:
        # this plan's own copy: another plan of the same program may be awaiting backward
        own = copy.copy(traced)
        make = (lambda: own) if traced is not None else None
    else:
        cls = get_op(node.op)
        attrs = dict(node.attrs)
        make = partial(cls, **attrs)
    if make is None:
        raise errors.TraceError(f"no way to run IR node {node.text()}")
    in_vars = tuple(constant(a) for a in ins)
    arrays = tuple(ins)
    outs_tuple = tuple(outs)
    complete = all(buf is not None for buf in outs_tuple)

    first = [traced if ctx.first_replay and traced is not None and not traced.pure else None]

    def run() -> None:
        op = first[0]
        if op is None:
            op = make()
        else:
            first[0] = None
        ys = op.forward(arrays)
        if len(ys) < len(outs_tuple):
            raise errors.TraceError(f"{node.text()}: the op made {len(ys)} outputs, the plan "
                                    f"expects {len(outs_tuple)}")
        for buf, y in zip(outs_tuple, ys, strict=False):
            if buf is not None:
                np.copyto(buf, y)
        op.inputs = in_vars
        # an output nothing reads has no buffer (dead code elimination); backward may still
        # need its value, so it keeps the op's own array
        op._ys = outs_tuple if complete and len(ys) == len(outs_tuple) else \
            tuple(y if i >= len(outs_tuple) or outs_tuple[i] is None else outs_tuple[i]
                  for i, y in enumerate(ys))
        holder[0] = op

    run.generic = True  # runs an op's own code: the plan switches backprop off around it
    return run


def generic_vjp(node: Node, fwd: Node, fwd_ins: list, fwd_outs: list, gys: list,
                out: np.ndarray, ctx: Context) -> Step:
    """Run the forward op's own ``backward`` on arrays (first order) for one input."""
    holder = ctx.holder(fwd.id)
    index = node.attrs["index"]
    gys_tuple = tuple(gys)
    of = node.attrs["of"]

    def run() -> None:
        op = holder[0]
        if op is None:  # the forward ran as a dedicated kernel: rebuild the op around buffers
            op = get_op(of)(**{k: v for k, v in fwd.attrs.items() if k != "activation"})
            op.inputs = tuple(constant(a) for a in fwd_ins)
            op._ys = tuple(fwd_outs)
            holder[0] = op
        gxs = op.backward((index,), gys_tuple)
        g = gxs[index] if len(gxs) == len(fwd_ins) else gxs[0]
        np.copyto(out, g.array if hasattr(g, "array") else g)

    run.generic = True
    return run
