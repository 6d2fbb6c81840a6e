"""Allocation-free kernels for convolution and pooling (static mode).

Everything a replay needs is allocated at lowering: the padded copy of the input (its border
filled once), the column matrix, the GEMM result, the gradient accumulators, and the strided
views between them. A convolution is then ``copyto`` (im2col) + one ``matmul`` + one ``add``
(bias, back to NCHW); its filter gradient is one ``matmul`` with the same columns, kept from the
forward kernel; its input gradient is one ``matmul`` and the column sums (col2im). Pooling is
one elementwise maximum or sum per window offset.

Builders follow ``kernels.py``: ``(node, ins, out, ctx)`` for forward and ``(node, fwd,
fwd_ins, fwd_out, gys, out, ctx)`` for a vjp, returning a zero-argument step, or None to fall
back to the op's own forward/backward (other dtypes of layouts than these cover).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.ops.windows import window_view

CONVOLUTIONS = ("convolution_2d", "convolution_1d")
MAX_POOLING = ("max_pooling_2d", "max_pooling_1d")
AVERAGE_POOLING = ("average_pooling_2d", "average_pooling_1d")


def _padding(x: np.ndarray, pad, out, ksize, stride, dilate, value: float):
    """A buffer for ``x`` padded as the windows need (border filled with ``value`` once) and
    the view of its interior, or ``(x, None)`` when no padding is needed."""
    spatial = x.shape[2:]
    high = [max(0, s * (o - 1) + d * (k - 1) + 1 - n - p)
            for n, k, s, p, d, o in zip(spatial, ksize, stride, pad, dilate, out, strict=True)]
    if not any(pad) and not any(high):
        return x, None
    xp = np.full(x.shape[:2] + tuple(n + p + h for n, p, h in zip(spatial, pad, high,
                                                                   strict=True)),
                 value, x.dtype)
    inside = (slice(None), slice(None)) + tuple(
        slice(p, p + n) for p, n in zip(pad, spatial, strict=True))
    return xp, xp[inside]


def _taps(xp: np.ndarray, ksize, stride, dilate, out) -> list[np.ndarray]:
    """For each kernel offset, the strided view of ``xp`` it reads in every window."""
    views = []
    for offset in itertools.product(*(range(k) for k in ksize)):
        index = (slice(None), slice(None)) + tuple(
            slice(j * d, j * d + s * (o - 1) + 1, s)
            for j, d, s, o in zip(offset, dilate, stride, out, strict=True))
        views.append(xp[index])
    return views


def _crop(pad, spatial):
    return (slice(None), slice(None)) + tuple(
        slice(p, p + n) for p, n in zip(pad, spatial, strict=True))


# --- convolution ----------------------------------------------------------------------------

def _conv_geometry(node, x: np.ndarray, W: np.ndarray, out_spatial) -> dict[str, Any]:
    a = node.attrs
    n, c = x.shape[:2]
    oc, ksize = W.shape[0], tuple(W.shape[2:])
    groups = a["groups"]
    return {"n": n, "c": c, "oc": oc, "ksize": ksize, "groups": groups,
            "stride": tuple(a["stride"]), "pad": tuple(a["pad"]),
            "dilate": tuple(a["dilate"]), "out": tuple(out_spatial),
            "ck": (c // groups) * math.prod(ksize), "no": n * math.prod(out_spatial)}


def _grouped(a: np.ndarray, groups: int, rows: int, cols: int) -> np.ndarray:
    """``a`` as ``(rows, cols)``, or ``(groups, rows / groups, cols)`` per group."""
    return a.reshape(rows, cols) if groups == 1 else a.reshape(groups, rows // groups, cols)


def _activation(name: str | None, out: np.ndarray) -> list:
    """The in-place steps of a fused activation (``convolution_act``)."""
    if name is None:
        return []
    if name == "relu":
        return [lambda: np.maximum(out, 0, out=out)]
    if name == "tanh":
        return [lambda: np.tanh(out, out=out)]
    if name == "sigmoid":  # tanh(x / 2) / 2 + 1 / 2, as the op computes it
        return [lambda: np.multiply(out, 0.5, out=out), lambda: np.tanh(out, out=out),
                lambda: np.multiply(out, 0.5, out=out), lambda: np.add(out, 0.5, out=out)]
    raise errors.TraceError(f"convolution_act: unknown activation {name!r}")


def convolution(node, ins: list, out: np.ndarray, ctx) -> Any:
    x, W = ins[0], ins[1]
    b = ins[2] if len(ins) == 3 else None
    if x.dtype != W.dtype or not out.flags.c_contiguous:
        if node.op == "convolution_act":  # no op to fall back to: the fusion needs this kernel
            raise errors.TraceError(f"convolution_act: no kernel for {node.text()}")
        return None
    geo = _conv_geometry(node, x, W, out.shape[2:])
    g, oc, ck, no = geo["groups"], geo["oc"], geo["ck"], geo["no"]
    xp, interior = _padding(x, geo["pad"], geo["out"], geo["ksize"], geo["stride"],
                            geo["dilate"], 0.0)
    windows = window_view(xp, geo["ksize"], geo["stride"], geo["dilate"], geo["out"])
    col = np.empty(windows.shape, x.dtype)
    cols = col.reshape(ck, no) if g == 1 else col.reshape(g, ck, no)
    weights = _grouped(W, g, oc, ck)
    product = np.empty((oc, no) if g == 1 else (g, oc // g, no), x.dtype)
    as_nchw = product.reshape((oc, geo["n"]) + geo["out"]).swapaxes(0, 1)
    bias = None if b is None else b.reshape((oc,) + (1,) * len(geo["out"]))
    ctx.state[node.id] = {"col": cols}
    activate = _activation(node.attrs.get("activation"), out)

    def run() -> None:
        if interior is not None:
            np.copyto(interior, x)
        np.copyto(col, windows)
        np.matmul(weights, cols, out=product)
        if bias is None:
            np.copyto(out, as_nchw)
        else:
            np.add(as_nchw, bias, out=out)
        for step in activate:
            step()

    return run


def vjp_convolution(node, fwd, fwd_ins: list, fwd_out, gys: list, out: np.ndarray,
                    ctx) -> Any:
    state = ctx.state.get(fwd.id)
    if state is None or not out.flags.c_contiguous:
        return None  # the forward ran as the op itself: its backward knows what it saved
    x, W = fwd_ins[0], fwd_ins[1]
    gy = gys[0]
    geo = _conv_geometry(fwd, x, W, gy.shape[2:])
    g, oc, ck, no = geo["groups"], geo["oc"], geo["ck"], geo["no"]
    index = node.attrs["index"]
    if index == 2:
        return lambda: np.sum(gy, axis=(0,) + tuple(range(2, gy.ndim)), out=out)
    gy_t = np.empty((oc, geo["n"]) + geo["out"], gy.dtype)  # (OC, N, *out): GEMM operand
    gy_rows = _grouped(gy_t, g, oc, no)
    gy_swapped = gy.swapaxes(0, 1)
    if index == 1:
        cols = state["col"]
        cols_t = cols.T if g == 1 else cols.swapaxes(1, 2)
        gW = _grouped(out, g, oc, ck)

        def grad_w() -> None:
            np.copyto(gy_t, gy_swapped)
            np.matmul(gy_rows, cols_t, out=gW)

        return grad_w
    # index 0: columns of the input gradient, summed back over the windows (col2im)
    weights = _grouped(W, g, oc, ck)
    weights_t = weights.T if g == 1 else weights.swapaxes(1, 2)
    gcol = np.empty((ck, no) if g == 1 else (g, ck, no), gy.dtype)
    gcol_windows = gcol.reshape((geo["c"],) + geo["ksize"] + (geo["n"],) + geo["out"])
    spatial = x.shape[2:]
    extent = tuple(max(p + n, s * (o - 1) + d * (k - 1) + 1) for n, k, s, p, d, o in zip(
        spatial, geo["ksize"], geo["stride"], geo["pad"], geo["dilate"], geo["out"],
        strict=True))
    acc = np.empty((geo["c"], geo["n"]) + extent, gy.dtype)  # channels first, like gcol
    pairs = []
    for offset, target in zip(itertools.product(*(range(k) for k in geo["ksize"])),
                              _taps(acc, geo["ksize"], geo["stride"], geo["dilate"],
                                    geo["out"]), strict=True):
        pairs.append((target, gcol_windows[(slice(None), *offset)]))
    inside = acc[_crop(geo["pad"], spatial)].swapaxes(0, 1)

    def grad_x() -> None:
        np.copyto(gy_t, gy_swapped)
        np.matmul(weights_t, gy_rows, out=gcol)
        acc.fill(0)
        for target, source in pairs:
            np.add(target, source, out=target)
        np.copyto(out, inside)

    return grad_x


# --- pooling --------------------------------------------------------------------------------

def _pool_geometry(node, x: np.ndarray, out: np.ndarray):
    a = node.attrs
    ksize, stride, pad = tuple(a["ksize"]), tuple(a["stride"]), tuple(a["pad"])
    return ksize, stride, pad, (1,) * len(ksize), tuple(out.shape[2:])


def max_pooling(node, ins: list, out: np.ndarray, ctx) -> Any:
    x = ins[0]
    ksize, stride, pad, ones, out_sp = _pool_geometry(node, x, out)
    xp, interior = _padding(x, pad, out_sp, ksize, stride, ones, -np.inf)
    first, *rest = _taps(xp, ksize, stride, ones, out_sp)
    ctx.state[node.id] = {"padded": xp}

    def run() -> None:
        if interior is not None:
            np.copyto(interior, x)
        np.copyto(out, first)
        for view in rest:
            np.maximum(out, view, out=out)

    return run


def vjp_max_pooling(node, fwd, fwd_ins: list, fwd_out, gys: list, out: np.ndarray,
                    ctx) -> Any:
    state = ctx.state.get(fwd.id)
    if state is None:
        return None
    xp, y, gy = state["padded"], fwd_out, gys[0]
    ksize, stride, pad, ones, out_sp = _pool_geometry(fwd, fwd_ins[0], fwd_out)
    padded = xp.shape != out.shape
    gxp = np.empty(xp.shape, out.dtype) if padded else out
    reads = _taps(xp, ksize, stride, ones, out_sp)
    writes = _taps(gxp, ksize, stride, ones, out_sp)
    disjoint = all(s >= k for s, k in zip(stride, ksize, strict=True))
    done = np.empty(y.shape, bool)
    picked = np.empty(y.shape, bool)
    part = np.empty(gy.shape, gy.dtype)
    inside = gxp[_crop(pad, out.shape[2:])] if padded else None

    def run() -> None:
        gxp.fill(0)
        done.fill(False)
        for read, write in zip(reads, writes, strict=True):
            # the first offset holding each window's maximum gets its gradient (argmax's)
            np.equal(read, y, out=picked)
            np.greater(picked, done, out=picked)
            np.logical_or(done, picked, out=done)
            if disjoint:
                np.multiply(gy, picked, out=write)
            else:
                np.multiply(gy, picked, out=part)
                np.add(write, part, out=write)
        if inside is not None:
            np.copyto(out, inside)

    return run


def _average_scale(node, x_shape, ksize, stride, pad, out_sp):
    """``1 / window size``, or one over each window's count of real elements."""
    if node.attrs.get("pad_value", 0) is not None or not any(pad):
        return 1.0 / math.prod(ksize)
    ones = np.ones((1, 1) + tuple(x_shape[2:]))
    padded_ones, interior = _padding(ones, pad, out_sp, ksize, stride, (1,) * len(ksize), 0.0)
    interior[...] = 1.0
    count = sum(_taps(padded_ones, ksize, stride, (1,) * len(ksize), out_sp))
    return 1.0 / count


def average_pooling(node, ins: list, out: np.ndarray, ctx) -> Any:
    x = ins[0]
    ksize, stride, pad, ones, out_sp = _pool_geometry(node, x, out)
    xp, interior = _padding(x, pad, out_sp, ksize, stride, ones, 0.0)
    first, *rest = _taps(xp, ksize, stride, ones, out_sp)
    scale = _average_scale(node, x.shape, ksize, stride, pad, out_sp)
    scale = scale.astype(x.dtype) if isinstance(scale, np.ndarray) else scale

    def run() -> None:
        if interior is not None:
            np.copyto(interior, x)
        np.copyto(out, first)
        for view in rest:
            np.add(out, view, out=out)
        np.multiply(out, scale, out=out)

    return run


def vjp_average_pooling(node, fwd, fwd_ins: list, fwd_out, gys: list, out: np.ndarray,
                        ctx) -> Any:
    gy = gys[0]
    ksize, stride, pad, ones, out_sp = _pool_geometry(fwd, fwd_ins[0], fwd_out)
    scale = _average_scale(fwd, out.shape, ksize, stride, pad, out_sp)
    scale = scale.astype(gy.dtype) if isinstance(scale, np.ndarray) else scale
    extent = tuple(max(p + n, s * (o - 1) + k) for n, k, s, p, o in zip(
        out.shape[2:], ksize, stride, pad, out_sp, strict=True))
    gxp = np.empty(out.shape[:2] + extent, out.dtype)
    writes = _taps(gxp, ksize, stride, ones, out_sp)
    part = np.empty(gy.shape, gy.dtype)
    inside = gxp[_crop(pad, out.shape[2:])]

    def run() -> None:
        np.multiply(gy, scale, out=part)
        gxp.fill(0)
        for write in writes:
            np.add(write, part, out=write)
        np.copyto(out, inside)

    return run


FORWARD = {**dict.fromkeys(CONVOLUTIONS + ("convolution_act",), convolution),
           **dict.fromkeys(MAX_POOLING, max_pooling),
           **dict.fromkeys(AVERAGE_POOLING, average_pooling)}
VJP = {**dict.fromkeys(CONVOLUTIONS, vjp_convolution),
       **dict.fromkeys(MAX_POOLING, vjp_max_pooling),
       **dict.fromkeys(AVERAGE_POOLING, vjp_average_pooling)}
