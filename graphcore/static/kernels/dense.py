"""The dense kernels: ``linear`` (and the fused ``linear_act``, ``matmul_bias``), ``fused``
elementwise programs, ``sum``/``mean``, and their vjps (those of the elementwise ops, ``add``,
``sub`` and ``scale`` included).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from graphcore import errors
from graphcore.generic import unbroadcast_array
from graphcore.ops.reduction import kept_shape, normalize_axes
from graphcore.static.ir import Node
from graphcore.static.kernels import conv as conv_kernels
from graphcore.static.kernels.base import (
    Context,
    Step,
    activation_steps,
    chain,
    elementwise_step,
    rows,
    scratch,
    view_as,
)


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
    steps += activation_steps(node.attrs.get("activation"), out)
    return chain(steps)


def matmul_bias(node: Node, ins: list, out: np.ndarray, ctx: Context) -> Step:
    steps = [partial(np.matmul, ins[0], ins[1], out=out), partial(np.add, out, ins[2], out=out)]
    steps += activation_steps(node.attrs.get("activation"), out)
    return chain(steps)


def fused(node: Node, ins: list, out: np.ndarray, ctx: Context) -> Step:
    steps = []
    for op, attrs, operands in node.attrs["program"]:
        args = [out if k == -1 else ins[k] for k in operands]
        step = elementwise_step(op, dict(attrs), args, out, scratch(out))
        if step is None:
            raise errors.TraceError(f"fused: no kernel for instruction {op!r}")
        steps.append(step)
    return chain(steps)


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
    return chain([total, partial(np.multiply, out, 1.0 / max(count, 1), out=out)])


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
    return chain([partial(np.copyto, out, gy), partial(np.multiply, out, 1.0 / count, out=out)])


def vjp_elementwise_unary(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list,
                          out: np.ndarray, ctx: Context) -> Step | None:
    return elementwise_step(f"vjp:{fwd.op}", {}, [gys[0], fwd_out], out, scratch(out))


def vjp_linear_act(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list, out: np.ndarray,
                   ctx: Context) -> Step | None:
    """A vjp whose forward node was fused into ``linear_act`` (``matmul_bias``,
    ``convolution_act``): by its ``of`` op."""
    of = node.attrs["of"]
    if of == "linear":
        return vjp_linear(node, fwd, fwd_ins, fwd_out, gys, out, ctx)
    if of in conv_kernels.VJP:
        return conv_kernels.VJP[of](node, fwd, fwd_ins, fwd_out, gys, out, ctx)
    return elementwise_step(f"vjp:{of}", {}, [gys[0], fwd_out], out, scratch(out))


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
