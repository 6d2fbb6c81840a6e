"""Kernels: how each IR node runs at replay time, writing into its preallocated buffer.

A kernel builder gets the node, its input arrays (fixed buffers, bound once), its output
buffer and a ``Context``, and returns a zero-argument step (a ``functools.partial`` of a numpy
call where one call suffices) or ``None`` when nothing needs to run. Ops without a dedicated
kernel fall back to the op's own ``forward``/``backward`` (``generic_forward``/``generic_vjp``),
copying the result into the buffer: correct for every op, just not allocation-free.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.generic import unbroadcast_array
from graphcore.ops.reduction import kept_shape, normalize_axes
from graphcore.registry import get_op
from graphcore.static.ir import Node
from graphcore.static.kernels import concat as concat_kernels
from graphcore.static.kernels import concat_linear as concat_linear_kernels
from graphcore.static.kernels import conv as conv_kernels
from graphcore.static.kernels import loss_norm as loss_norm_kernels
from graphcore.static.kernels import mask as mask_kernels
from graphcore.static.kernels import permutate as permutate_kernels
from graphcore.variable import constant

Step = Callable[[], Any]


class Context:
    """What kernels share: per-forward-node state (saved values, op objects for fallbacks)."""

    def __init__(self, instances: dict[int, Any], first_replay: bool = False) -> None:
        self.instances = instances
        # the replay right after tracing: random ops reuse what the traced run drew
        self.first_replay = first_replay
        self.state: dict[int, dict[str, Any]] = {}
        self.holders: dict[int, list] = {}

    def holder(self, node_id: int) -> list:
        return self.holders.setdefault(node_id, [None])


# --- forward ---------------------------------------------------------------------------------
def _activation_steps(name: str | None, out: np.ndarray) -> list[Step]:
    if name is None:
        return []
    if name == "relu":
        return [partial(np.maximum, out, 0, out=out)]
    if name == "tanh":
        return [partial(np.tanh, out, out=out)]
    if name == "sigmoid":
        return [partial(np.multiply, out, 0.5, out=out), partial(np.tanh, out, out=out),
                partial(np.multiply, out, 0.5, out=out), partial(np.add, out, 0.5, out=out)]
    raise errors.TraceError(f"linear_act: unknown activation {name!r}")


class Steps(list):
    """Several steps that run in order; the plan splices them into its flat step list."""


def _chain(steps: list) -> Step | Steps:
    flat = Steps()
    for step in steps:
        if isinstance(step, Steps):
            flat.extend(step)
        else:
            flat.append(step)
    return flat[0] if len(flat) == 1 else flat


def _matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> Step:
    """``a @ b`` (``b`` 2-D) into ``out``. Over a contraction of one (a one-unit readout's
    gradient, an input of one feature) it is an outer product, which a broadcast multiply
    computes several times faster than a matrix product, with the same single rounding."""
    if a.ndim >= 2 and a.shape[-1] == 1 and b.ndim == 2 and b.shape[0] == 1:
        return partial(np.multiply, a, b, out=out)
    return partial(np.matmul, a, b, out=out)


def linear(node: Node, ins: list, out: np.ndarray, ctx: Context) -> Step:
    x, W = ins[0], ins[1]
    steps = [_matmul(x, W.T, out)]
    if len(ins) == 3:
        steps.append(partial(np.add, out, ins[2], out=out))
    steps += _activation_steps(node.attrs.get("activation"), out)
    return _chain(steps)


def matmul_bias(node: Node, ins: list, out: np.ndarray, ctx: Context) -> Step:
    steps = [partial(np.matmul, ins[0], ins[1], out=out), partial(np.add, out, ins[2], out=out)]
    steps += _activation_steps(node.attrs.get("activation"), out)
    return _chain(steps)


_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
           "pow": np.power, "maximum": np.maximum, "minimum": np.minimum}
_UNARY = {"tanh": np.tanh, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
          "square": np.square, "abs": np.abs, "neg": np.negative}
# op -> (ufunc, whether the scalar is the first operand)
_SCALAR = {"add_scalar": (np.add, False), "scale": (np.multiply, False),
           "rsub_scalar": (np.subtract, True), "rdiv_scalar": (np.divide, True),
           "pow_scalar": (np.power, False)}


def _scalar_value(attrs: dict) -> float:
    return attrs.get("value", attrs.get("by", attrs.get("exponent")))


def elementwise_step(op: str, attrs: dict, args: list, out: np.ndarray,
                     scratch: Callable[[], np.ndarray]) -> Step | None:
    """One elementwise op ``op(*args)`` into ``out``; None if no dedicated kernel."""
    if op in _UFUNCS:
        return partial(_UFUNCS[op], args[0], args[1], out=out)
    if op in _UNARY:
        return partial(_UNARY[op], args[0], out=out)
    if op == "relu":
        return partial(np.maximum, args[0], 0, out=out)
    if op == "sigmoid":
        return _chain([partial(np.multiply, args[0], 0.5, out=out), partial(np.tanh, out, out=out),
                       partial(np.multiply, out, 0.5, out=out), partial(np.add, out, 0.5, out=out)])
    if op in _SCALAR:
        fn, reflected = _SCALAR[op]
        value = _scalar_value(attrs)
        return partial(fn, value, args[0], out=out) if reflected else \
            partial(fn, args[0], value, out=out)
    if op.startswith("vjp:"):
        gy, y = args
        kind = op[4:]
        if kind == "relu":
            mask = scratch()
            return _chain([partial(np.greater, y, 0, out=mask),
                           partial(np.multiply, gy, mask, out=out)])
        if kind == "tanh":
            tmp = scratch(dtype=out.dtype)
            return _chain([partial(np.multiply, y, y, out=tmp),
                           partial(np.subtract, 1, tmp, out=tmp),
                           partial(np.multiply, gy, tmp, out=out)])
        if kind == "sigmoid":
            tmp = scratch(dtype=out.dtype)
            return _chain([partial(np.subtract, 1, y, out=tmp),
                           partial(np.multiply, tmp, y, out=tmp),
                           partial(np.multiply, gy, tmp, out=out)])
        if kind == "exp":
            return partial(np.multiply, gy, y, out=out)
    return None


def fused(node: Node, ins: list, out: np.ndarray, ctx: Context) -> Step:
    steps = []
    for op, attrs, operands in node.attrs["program"]:
        args = [out if k == -1 else ins[k] for k in operands]
        step = elementwise_step(op, dict(attrs), args, out, _scratch(out))
        if step is None:
            raise errors.TraceError(f"fused: no kernel for instruction {op!r}")
        steps.append(step)
    return _chain(steps)


def _scratch(out: np.ndarray):
    def make(dtype=bool) -> np.ndarray:
        return np.empty(out.shape, dtype)

    return make


def reduction(node: Node, ins: list, out: np.ndarray, ctx: Context) -> Step:
    x = ins[0]
    axes = normalize_axes(node.op, node.attrs.get("axis"), x.ndim)
    keepdims = bool(node.attrs.get("keepdims"))
    if axes is not None and all(x.shape[a] == 1 for a in axes) and x.dtype == out.dtype:
        view = view_as(x, out.shape)  # over axes of one: each value is its own sum and mean
        if view is not None:
            return partial(np.copyto, out, view)
    # ufunc.reduce directly: np.sum's Python wrapper costs more than a small reduction
    total = partial(np.add.reduce, x, axis=axes, keepdims=keepdims, out=out)
    if node.op == "sum":
        return total
    count = x.size if axes is None else int(np.prod([x.shape[a] for a in axes]))
    return _chain([total, partial(np.multiply, out, 1.0 / max(count, 1), out=out)])


# --- vjp -------------------------------------------------------------------------------------
def vjp_linear(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list, out: np.ndarray,
               ctx: Context) -> Step | None:
    gy = gys[0]
    x, W = fwd_ins[0], fwd_ins[1]
    index = node.attrs["index"]
    if index == 0:
        return _matmul(gy, W, out)
    gy2 = rows(gy)
    if index == 1:
        x2 = rows(x)
        if gy2 is None or x2 is None:  # a strided view: reshaped (copied) at each replay
            return lambda: np.matmul(gy.reshape(-1, gy.shape[-1]).T,
                                     x.reshape(-1, x.shape[-1]), out=out)
        return partial(np.matmul, gy2.T, x2, out=out)
    if gy2 is None:
        return lambda: np.add.reduce(gy.reshape(-1, gy.shape[-1]), axis=0, out=out)
    return partial(np.add.reduce, gy2, axis=0, out=out)


def rows(a: np.ndarray) -> np.ndarray | None:
    """``a`` as a 2-D ``(rows, last axis)`` view, bound once; None when that reshape would copy
    (a strided view's, which the kernel then reshapes at each replay: a copy made here would
    never see the buffer's new values)."""
    if a.ndim == 2:
        return a
    return view_as(a, (-1, a.shape[-1]))


def view_as(a: np.ndarray, shape: tuple) -> np.ndarray | None:
    """``a.reshape(shape)`` when it is a view of ``a`` (always, for a contiguous ``a``)."""
    view = a.reshape(shape)
    return view if view.size == 0 or np.shares_memory(view, a) else None


def vjp_reduction(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list, out: np.ndarray,
                  ctx: Context) -> Step | None:
    x = fwd_ins[0]
    axes = normalize_axes(fwd.op, fwd.attrs.get("axis"), x.ndim)
    gy = gys[0]
    if not fwd.attrs.get("keepdims"):
        gy = view_as(gy, kept_shape(x.shape, axes))
        if gy is None:
            return None  # a strided gradient: the op's own backward
    if fwd.op == "sum":
        return partial(np.copyto, out, gy)
    count = x.size if axes is None else int(np.prod([x.shape[a] for a in axes]))
    return _chain([partial(np.copyto, out, gy), partial(np.multiply, out, 1.0 / count, out=out)])


def vjp_elementwise_unary(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list,
                          out: np.ndarray, ctx: Context) -> Step | None:
    return elementwise_step(f"vjp:{fwd.op}", {}, [gys[0], fwd_out], out, _scratch(out))


def vjp_linear_act(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list, out: np.ndarray,
                   ctx: Context) -> Step | None:
    """A vjp whose forward node was fused into ``linear_act`` (``matmul_bias``,
    ``convolution_act``): by its ``of`` op."""
    of = node.attrs["of"]
    if of == "linear":
        return vjp_linear(node, fwd, fwd_ins, fwd_out, gys, out, ctx)
    if of in conv_kernels.VJP:
        return conv_kernels.VJP[of](node, fwd, fwd_ins, fwd_out, gys, out, ctx)
    return elementwise_step(f"vjp:{of}", {}, [gys[0], fwd_out], out, _scratch(out))


def vjp_scale(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list, out: np.ndarray,
              ctx: Context) -> Step | None:
    """``gy * by``, as ``Scale.backward`` computes it (a plan's mean over examples ends so)."""
    gy = gys[0]
    if gy.shape != out.shape or gy.dtype != out.dtype:
        return None
    return partial(np.multiply, gy, fwd.attrs["by"], out=out)


def vjp_add_sub(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list, out: np.ndarray,
                ctx: Context) -> Step | None:
    gy = gys[0]
    index = node.attrs["index"]
    negate = fwd.op == "sub" and index == 1
    if gy.shape == out.shape:
        return partial(np.negative, gy, out=out) if negate else partial(np.copyto, out, gy)

    def run() -> None:
        g = unbroadcast_array(gy, out.shape)
        np.negative(g, out=out) if negate else np.copyto(out, g)

    return run


FORWARD = {"linear": linear, "linear_act": linear, "matmul_bias": matmul_bias, "fused": fused,
           "sum": reduction, "mean": reduction}
VJP = {"linear": vjp_linear, "sum": vjp_reduction, "mean": vjp_reduction,
       "relu": vjp_elementwise_unary, "tanh": vjp_elementwise_unary,
       "sigmoid": vjp_elementwise_unary, "exp": vjp_elementwise_unary,
       "add": vjp_add_sub, "sub": vjp_add_sub, "scale": vjp_scale}
# convolution and pooling; where and cast; permutate; concat; the softmax cross-entropy and
# layer normalization: each family in its own file
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
