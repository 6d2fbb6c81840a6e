"""Kernels for ``softmax_cross_entropy`` (2-d logits, mean over the kept rows) and
``layer_normalization``, and their vjps: the statistics in preallocated buffers, what the vjps
need (the log-softmax, ``x_hat``, ``1 / std``) kept in the node's ``Context`` state. The same
arithmetic as the ops' own ``forward``/``backward``; other cases fall back to those."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from graphcore.static.ir import Node
from graphcore.static.kernels.base import chain


def softmax_cross_entropy(node: Node, ins: list, out: np.ndarray, ctx: Any):
    x, t = ins
    a = node.attrs
    if x.ndim != 2 or a.get("reduce", "mean") != "mean" or a.get("class_weight") is not None:
        return None  # the op's own forward and backward handle the general case
    n, c = x.shape
    state = ctx.state.setdefault(node.id, {})
    log_y = state["log_y"] = np.empty_like(x)
    peak = np.empty((n, 1), x.dtype)
    total = np.empty((n, 1), x.dtype)
    rows = np.arange(n)
    ignore, normalize = a.get("ignore_label", -1), a.get("normalize", True)

    def run() -> None:
        np.max(x, axis=1, keepdims=True, out=peak)
        np.subtract(x, peak, out=log_y)
        np.exp(log_y, out=state.setdefault("tmp", np.empty_like(x)))
        np.sum(state["tmp"], axis=1, keepdims=True, out=total)
        np.log(total, out=total)
        np.subtract(log_y, total, out=log_y)
        keep = t != ignore
        picked = np.where(keep, t, 0)
        count = max(int(keep.sum()), 1) if normalize else max(n, 1)
        state["keep"], state["picked"], state["count"] = keep, picked, count
        out[...] = -(log_y[rows, picked] * keep).sum() / count

    state["rows"] = rows
    return run


def layer_normalization(node: Node, ins: list, out: np.ndarray, ctx: Any):
    """Layer normalization into ``out`` with the statistics in preallocated buffers; keeps
    ``x_hat`` and ``1 / std`` for the vjps. Same arithmetic as the op's forward."""
    x, gamma, beta = ins
    if x.ndim < 1 or out.shape != x.shape or out.dtype != x.dtype:
        return None
    n = x.shape[-1]
    eps = node.attrs.get("eps", 1e-5)
    stat = x.shape[:-1] + (1,)
    mean = np.empty(stat, x.dtype)
    state = ctx.state.setdefault(node.id, {})
    inv_std = state["inv_std"] = np.empty(stat, x.dtype)
    x_hat = state["x_hat"] = np.empty(x.shape, x.dtype)
    return chain([
        partial(np.add.reduce, x, axis=-1, keepdims=True, out=mean),
        partial(np.multiply, mean, 1.0 / n, out=mean),
        partial(np.subtract, x, mean, out=x_hat),
        partial(np.multiply, x_hat, x_hat, out=out),  # out as scratch: x is not read again
        partial(np.add.reduce, out, axis=-1, keepdims=True, out=inv_std),
        partial(np.multiply, inv_std, 1.0 / n, out=inv_std),
        partial(np.add, inv_std, eps, out=inv_std),
        partial(np.power, inv_std, -0.5, out=inv_std),
        partial(np.multiply, x_hat, inv_std, out=x_hat),
        partial(np.multiply, x_hat, gamma, out=out),
        partial(np.add, out, beta, out=out),
    ])


def vjp_softmax_cross_entropy(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list,
                              out: np.ndarray, ctx: Any):
    state = ctx.state.get(fwd.id)
    if state is None or node.attrs["index"] != 0:
        return None
    gy = gys[0]
    rows = state["rows"]

    def run() -> None:
        np.exp(state["log_y"], out=out)
        out[rows, state["picked"]] -= 1
        np.multiply(out, state["keep"][:, None], out=out)
        np.multiply(out, gy / state["count"], out=out)

    return run


def vjp_layer_normalization(node: Node, fwd: Node, fwd_ins: list, fwd_out, gys: list,
                            out: np.ndarray, ctx: Any):
    """The three gradients of layer normalization from the forward kernel's saved statistics."""
    state = ctx.state.get(fwd.id)
    gy = gys[0]
    if state is None or gy.shape != state["x_hat"].shape or not gy.flags.c_contiguous:
        return None
    x_hat, inv_std = state["x_hat"], state["inv_std"]
    gamma = fwd_ins[1]
    n = x_hat.shape[-1]
    index = node.attrs["index"]
    tmp = np.empty(x_hat.shape, x_hat.dtype)
    if index == 2:
        return partial(np.add.reduce, gy.reshape(-1, n), axis=0, out=out)
    if index == 1:
        return chain([partial(np.multiply, gy, x_hat, out=tmp),
                       partial(np.add.reduce, tmp.reshape(-1, n), axis=0, out=out)])
    # gx = (g_hat - mean(g_hat) - x_hat * mean(g_hat * x_hat)) * inv_std, g_hat = gy * gamma
    g_hat = np.empty(x_hat.shape, x_hat.dtype)
    mean_g = np.empty(inv_std.shape, x_hat.dtype)
    mean_gx = np.empty(inv_std.shape, x_hat.dtype)
    return chain([
        partial(np.multiply, gy, gamma, out=g_hat),
        partial(np.add.reduce, g_hat, axis=-1, keepdims=True, out=mean_g),
        partial(np.multiply, mean_g, 1.0 / n, out=mean_g),
        partial(np.multiply, g_hat, x_hat, out=tmp),
        partial(np.add.reduce, tmp, axis=-1, keepdims=True, out=mean_gx),
        partial(np.multiply, mean_gx, 1.0 / n, out=mean_gx),
        partial(np.subtract, g_hat, mean_g, out=out),
        partial(np.multiply, x_hat, mean_gx, out=tmp),
        partial(np.subtract, out, tmp, out=out),
        partial(np.multiply, out, inv_std, out=out),
    ])


FORWARD = {"softmax_cross_entropy": softmax_cross_entropy,
           "layer_normalization": layer_normalization}
VJP = {"softmax_cross_entropy": vjp_softmax_cross_entropy,
       "layer_normalization": vjp_layer_normalization}
