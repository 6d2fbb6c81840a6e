"""Scaled dot-product attention, the core of a transformer block (Chainer has no such
function; the signature follows Chainer's style: arrays in, one Variable out).

``attention(q, k, v, mask=None, scale=None)``:

- ``q`` (..., Lq, d), ``k`` (..., Lk, d), ``v`` (..., Lk, dv); leading axes (batch, heads)
  broadcast as in ``F.matmul``;
- ``mask`` (optional, boolean, broadcastable to (..., Lq, Lk)): True where query i may attend
  to key j. A query whose keys are all masked attends to nothing: its output row is zero and
  it passes no gradient (never a NaN, never a uniform average over padding);
- ``scale`` (default ``1 / sqrt(d)``) multiplies the scores ``q @ k^T``;
- result: ``softmax(scale * q @ k^T, over keys) @ v`` of shape (..., Lq, dv).
"""

from __future__ import annotations

import math

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.checks import is_float
from graphcore.registry import register_op
from graphcore.variable import Variable


def attention_weights(scores, keep: np.ndarray | None):
    """Softmax over the last axis restricted to ``keep`` (arrays or Variables). Masked scores
    get -inf before the softmax; rows with nothing kept are zeroed by the final ``* keep``."""
    if keep is None:
        return g.softmax(scores, axis=-1)
    empty = ~keep.any(axis=-1, keepdims=True)
    bias = np.where(keep | empty, 0.0, -np.inf).astype(g.array_of(scores).dtype)
    shifted = scores + bias
    if isinstance(scores, Variable):
        return g.softmax(shifted, axis=-1) * keep.astype(scores.dtype)
    return g.softmax_array(shifted, -1) * keep


@register_op
class Attention(FunctionNode):
    """``softmax(scale * q @ k^T) @ v`` over the keys; inputs q, k, v and an optional mask.

    The mask is boolean, True where a query may attend to a key (see the module's doc)."""

    __slots__ = ("scale",)
    name = "attention"
    label = "Attention"
    arity = None  # q, k, v [, mask]
    attributes = {"scale": Attr((float, type(None)), None,
                                doc="score scale (null: 1/sqrt of the key size)")}

    def shape_rule(self, inputs):
        if len(inputs) not in (3, 4):
            shapes.fail(self, inputs, f"takes q, k, v and an optional mask, got {len(inputs)} "
                                      "inputs")
        q, k, v = inputs[:3]
        for x in (q, k, v):
            shapes.float_like_first(self, (x,))
            if x.ndim < 2:
                shapes.fail(self, inputs, "q, k and v need (..., length, size)")
        dtype = shapes.same_dtype(self, inputs, inputs[:3])
        if shapes.conflict(q.shape[-1], k.shape[-1]) or shapes.conflict(k.shape[-2],
                                                                       v.shape[-2]):
            shapes.fail(self, inputs, "expected q (..., Lq, d), k (..., Lk, d), v (..., Lk, dv)")
        lead = shapes.broadcast(self, inputs, [q.shape[:-2], k.shape[:-2], v.shape[:-2]])
        if len(inputs) == 4:
            mask = inputs[3]
            if mask.dtype is not None and mask.dtype != np.bool_:
                shapes.fail_dtype(self, inputs, f"the mask must be boolean, got {mask.dtype}")
            scores = lead + (q.shape[-2], k.shape[-2])
            joint = shapes.broadcast(self, inputs, [mask.shape, scores])
            if any(map(shapes.conflict, joint, scores)):
                shapes.fail(self, inputs, "the mask does not broadcast to the scores")
        return shapes.TensorType(lead + (q.shape[-2], v.shape[-1]), dtype),

    def __init__(self, scale: float | None = None) -> None:
        self.scale = scale

    def _scale(self, d: int) -> float:
        return self.scale if self.scale is not None else 1.0 / math.sqrt(d)

    def forward(self, inputs):
        q, k, v, keep = self._check(inputs)
        scores = (q @ k.swapaxes(-1, -2)) * q.dtype.type(self._scale(q.shape[-1]))
        weights = attention_weights(scores, keep)
        self._saved = weights
        return (weights @ v).astype(q.dtype, copy=False),

    def _check(self, inputs):
        if len(inputs) not in (3, 4):
            raise errors.ShapeError(f"{self.label}: takes q, k, v and an optional mask, got "
                                    f"{len(inputs)} inputs")
        q, k, v = inputs[:3]
        for what, x in (("q", q), ("k", k), ("v", v)):
            is_float(self.label, x, what)
            if x.ndim < 2:
                raise errors.ShapeError(f"{self.label}: {what} needs (..., length, size), got "
                                        f"{x.shape}")
        if not q.dtype == k.dtype == v.dtype:
            raise errors.DTypeError(f"{self.label}: q, k, v must share one dtype, got "
                                    f"{q.dtype}, {k.dtype}, {v.dtype}")
        if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
            raise errors.ShapeError(
                f"{self.label}: expected q (..., Lq, d), k (..., Lk, d), v (..., Lk, dv), got "
                f"q {q.shape}, k {k.shape}, v {v.shape}")
        try:
            lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
        except ValueError:
            raise errors.ShapeError(f"{self.label}: leading axes of q {q.shape}, k {k.shape}, "
                                    f"v {v.shape} do not broadcast") from None
        keep = None
        if len(inputs) == 4:
            keep = inputs[3]
            if keep.dtype != np.bool_:
                raise errors.DTypeError(f"{self.label}: the mask must be boolean (True = "
                                        f"attend), got {keep.dtype}")
            scores = lead + (q.shape[-2], k.shape[-2])
            try:
                ok = np.broadcast_shapes(keep.shape, scores) == scores
            except ValueError:
                ok = False
            if not ok:
                raise errors.ShapeError(f"{self.label}: mask {keep.shape} does not broadcast "
                                        f"to the scores' shape {scores}")
        return q, k, v, keep

    def backward(self, indexes, grad_outputs):
        inputs = self.get_retained_inputs()
        q, k, v = inputs[:3]
        keep = g.array_of(inputs[3]) if len(inputs) == 4 else None
        gy, = grad_outputs
        scale = self._scale(q.shape[-1])
        weights = self._saved
        if weights is None or isinstance(q, Variable):  # double backprop: weights of q, k
            weights = attention_weights((q @ g.swapaxes(k, -1, -2)) * scale, keep)
        gq = gk = gv = None
        if 2 in indexes:
            gv = g.sum_to(g.swapaxes(weights, -1, -2) @ gy, v.shape)
        if 0 in indexes or 1 in indexes:
            g_weights = gy @ g.swapaxes(v, -1, -2)
            g_scores = weights * (g_weights - g.sum(g_weights * weights, axis=-1,
                                                    keepdims=True)) * scale
            if 0 in indexes:
                gq = g.sum_to(g_scores @ k, q.shape)
            if 1 in indexes:
                gk = g.sum_to(g.swapaxes(g_scores, -1, -2) @ q, k.shape)
        return (gq, gk, gv) + ((None,) if keep is not None else ())


def attention(q, k, v, mask=None, scale: float | None = None):
    """``softmax(scale * q @ k^T) @ v`` over the keys, with an optional boolean ``mask``
    (True = attend); see ``graphcore.ops.attention`` for shapes."""
    if mask is not None and not _bool_variable(mask):
        mask = np.asarray(g.array_of(mask), bool)
    # a boolean Variable stays one: a traced model (static mode, ONNX export) reads it as an
    # input, not as a constant of the traced call's values
    return Attention(scale).apply((q, k, v) if mask is None else (q, k, v, mask))[0]


def _bool_variable(x) -> bool:
    return isinstance(x, Variable) and x.dtype == np.bool_
