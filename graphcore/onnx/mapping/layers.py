"""Converters of the windowed layers (convolution, deconvolution, pooling, local response
normalization) and of the LSTM cell, for any number of spatial axes (the 1-d, 2-d and n-d ops).

Chainer's conventions that ONNX spells differently are translated here:

- ``cover_all`` (convolution): one last partial window, i.e. ``stride - 1`` more zeros at the
  end of each axis; (max pooling): ONNX's ``ceil_mode``, the same output size, except that
  Chainer keeps a last window starting in the end padding (its max is -inf) where ONNX
  Runtime drops it: those windows are pooled without ``ceil_mode`` and padded with -inf.
- deconvolution ``outsize``: any size whose convolution gives the input's size, i.e. the
  default ``s (in - 1) + dk - 2 p`` minus up to ``s - 1`` (more padding at the end) or plus up
  to ``s - 1`` (ONNX's ``output_padding``). Both crop the full transposed convolution from
  ``pad`` on, as Chainer's ``col2im`` does.
- average pooling ``pad_value=None``: padding not counted (``count_include_pad=0``).
- LRN: Chainer sums ``n // 2`` channels on each side (``n + 1`` channels for an even ``n``) and
  scales the sum by ``alpha``; ONNX's window has ``size`` channels and scales by
  ``alpha / size``.
"""

from __future__ import annotations

import numpy as np

from graphcore.onnx.mapping.base import converts


def _tuple(v, n: int) -> tuple[int, ...]:
    return tuple(int(x) for x in v) if isinstance(v, tuple | list) else (int(v),) * n


def _spatial(e, node) -> int:
    return len(e.shape_of(node.inputs[0])) - 2


@converts("convolution_2d", "convolution_1d", "convolution_nd")
def _convolution(e, node, ins):
    a, nd = node.attrs, _spatial(e, node)
    pad, stride = _tuple(a.get("pad", 0), nd), _tuple(a.get("stride", 1), nd)
    end = [p + (s - 1 if a.get("cover_all") else 0) for p, s in zip(pad, stride, strict=True)]
    return e.op("Conv", ins, strides=list(stride), pads=list(pad) + end,
                dilations=list(_tuple(a.get("dilate", 1), nd)), group=int(a.get("groups", 1)))


@converts("deconvolution_2d", "deconvolution_1d", "deconvolution_nd")
def _deconvolution(e, node, ins):
    a, nd = node.attrs, _spatial(e, node)
    pad, stride = _tuple(a.get("pad", 0), nd), _tuple(a.get("stride", 1), nd)
    dilate = _tuple(a.get("dilate", 1), nd)
    x_shape, w_shape = e.shape_of(node.inputs[0]), e.shape_of(node.inputs[1])
    end, extra = [], []
    for i in range(nd):
        dk = (w_shape[2 + i] - 1) * dilate[i] + 1
        default = stride[i] * (x_shape[2 + i] - 1) + dk - 2 * pad[i]
        grow = node.shape[2 + i] - default  # outsize against the default size
        end.append(pad[i] + max(-grow, 0))
        extra.append(max(grow, 0))
    attrs = {"output_padding": extra} if any(extra) else {}
    return e.op("ConvTranspose", ins, strides=list(stride), pads=list(pad) + end,
                dilations=list(dilate), group=int(a.get("groups", 1)), **attrs)


def _pool_attrs(e, node) -> dict:
    a, nd = node.attrs, _spatial(e, node)
    ksize = _tuple(a["ksize"], nd)
    stride = _tuple(a["stride"], nd) if a.get("stride") is not None else ksize
    pad = list(_tuple(a.get("pad", 0), nd))
    return {"kernel_shape": list(ksize), "strides": list(stride), "pads": pad + pad}


@converts("max_pooling_2d", "max_pooling_1d", "max_pooling_nd")
def _max_pooling(e, node, ins):
    attrs = _pool_attrs(e, node)
    cover_all = bool(node.attrs.get("cover_all", True))
    nd, spatial = _spatial(e, node), e.shape_of(node.inputs[0])[2:]
    pad, stride, ksize = attrs["pads"][:nd], attrs["strides"], attrs["kernel_shape"]
    out = node.shape[2:]
    # windows that start in the end padding see no input: Chainer's max there is -inf, ONNX
    # Runtime's ceil_mode drops them; pool the others and pad the result with -inf
    valid = [min(o, -(-(n + p) // s)) for o, n, p, s in zip(out, spatial, pad, stride,
                                                             strict=True)]
    if not cover_all or valid == list(out):
        return e.op("MaxPool", ins, ceil_mode=int(cover_all), **attrs)
    end = [max((v - 1) * s + k - n - p, 0)
           for v, s, k, n, p in zip(valid, stride, ksize, spatial, pad, strict=True)]
    y = e.op("MaxPool", ins, **{**attrs, "pads": [*pad, *end]})
    pads = [0] * (nd + 2) + [0, 0] + [o - v for o, v in zip(out, valid, strict=True)]
    return e.op("Pad", [y, e.const(np.asarray(pads, np.int64)),
                        e.const(np.asarray(-np.inf, node.dtype))])


@converts("average_pooling_2d", "average_pooling_1d", "average_pooling_nd")
def _average_pooling(e, node, ins):
    counted = int(node.attrs.get("pad_value", 0) is not None)
    return e.op("AveragePool", ins, count_include_pad=counted, **_pool_attrs(e, node))


@converts("unpooling_nd")
def _unpooling(e, node, ins):
    # a depthwise transposed convolution with a filter of ones; the output size as in
    # _deconvolution (cover_all's smaller default is more padding at the end)
    attrs, nd = _pool_attrs(e, node), _spatial(e, node)
    pad, stride, ksize = attrs["pads"][:nd], attrs["strides"], attrs["kernel_shape"]
    x_shape = e.shape_of(node.inputs[0])
    end, extra = [], []
    for i in range(nd):
        default = stride[i] * (x_shape[2 + i] - 1) + ksize[i] - 2 * pad[i]
        grow = node.shape[2 + i] - default
        end.append(pad[i] + max(-grow, 0))
        extra.append(max(grow, 0))
    ones = e.const(np.ones((x_shape[1], 1, *ksize), node.dtype))
    more = {"output_padding": extra} if any(extra) else {}
    return e.op("ConvTranspose", [ins[0], ones], strides=stride, pads=pad + end,
                group=int(x_shape[1]), **more)


@converts("local_response_normalization")
def _local_response_normalization(e, node, ins):
    a = node.attrs
    size = 2 * (int(a["n"]) // 2) + 1
    x = ins[0]
    rank = len(node.shape)
    if rank != 4:  # ONNX Runtime's LRN takes (N, C, H, W): other ranks as (N, C, rest, 1)
        x = e.op("Reshape", [x, e.const(np.asarray([0, 0, -1, 1], np.int64))])
    y = e.op("LRN", [x], size=size, alpha=float(a["alpha"]) * size, beta=float(a["beta"]),
             bias=float(a["k"]))
    return y if rank == 4 else e.op("Reshape", [y, e.op("Shape", [ins[0]])])


def _gates(e, x, shape):
    """``x`` ``(B, 4n, ...)`` -> its four gates ``(B, n, ...)`` (a, i, f, o interleaved per
    unit)."""
    n = shape[1] // 4
    gates = e.op("Reshape", [x, e.const(np.asarray([0, n, 4, *shape[2:]], np.int64))])
    return [e.op("Gather", [gates, e.const(np.asarray(k, np.int64))], axis=2) for k in range(4)]


def _rows(e, x, start: int, stop: int):
    return e.op("Slice", [x, e.const(np.asarray([start], np.int64)),
                          e.const(np.asarray([stop], np.int64)),
                          e.const(np.asarray([0], np.int64))])


@converts("lstm")
def _lstm(e, node, ins):
    """Chainer's LSTM activation, unrolled: ``x`` holds the gates (a, i, f, o) interleaved per
    unit on axis 1, ``(B, 4n, ...)`` -> ``(B, n, 4, ...)``; rows of ``c_prev`` past ``x``'s
    batch are carried to ``c``."""
    c_prev, x = ins
    shape = e.shape_of(node.inputs[1])
    rows = e.shape_of(node.inputs[0])[0]
    a, i, f, o = _gates(e, x, shape)
    a = e.op("Tanh", [a])
    i, f, o = (e.op("Sigmoid", [g]) for g in (i, f, o))
    head = _rows(e, c_prev, 0, shape[0]) if rows > shape[0] else c_prev
    c = e.op("Add", [e.op("Mul", [a, i]), e.op("Mul", [f, head])])
    h = e.op("Mul", [o, e.op("Tanh", [c])])
    if rows > shape[0]:
        c = e.op("Concat", [c, _rows(e, c_prev, shape[0], rows)], axis=0)
    return [c, h]


@converts("slstm")
def _slstm(e, node, ins):
    """Chainer's S-LSTM cell, unrolled as ``_lstm`` over two children."""
    c1, c2, x1, x2 = ins
    shape = e.shape_of(node.inputs[2])
    a1, i1, f1, o1 = _gates(e, x1, shape)
    a2, i2, f2, o2 = _gates(e, x2, shape)
    terms = [e.op("Mul", [e.op("Tanh", [a1]), e.op("Sigmoid", [i1])]),
             e.op("Mul", [e.op("Tanh", [a2]), e.op("Sigmoid", [i2])]),
             e.op("Mul", [e.op("Sigmoid", [f1]), c1]), e.op("Mul", [e.op("Sigmoid", [f2]), c2])]
    c = e.op("Sum", terms)
    o = e.op("Sigmoid", [e.op("Add", [o1, o2])])
    return [c, e.op("Mul", [o, e.op("Tanh", [c])])]
