"""Connectionist temporal classification (Chainer's ``F.connectionist_temporal_classification``).

One op, ``ConnectionistTemporalClassification``: the forward-backward (alpha-beta) recursion
over the label path in the log domain, in float64 whatever the scores' dtype (the recursion
sums many small probabilities; the results are cast back). Its gradient with respect to the
scores is the softmax minus each label's posterior occupancy; like Chainer's, it is first
order only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphcore import errors, shapes
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.array import stack
from graphcore.registry import register_op
from graphcore.variable import Variable, as_array

__all__ = ["ConnectionistTemporalClassification", "connectionist_temporal_classification"]


def _logaddexp3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return np.logaddexp(np.logaddexp(a, b), c)


def _shift(a: np.ndarray, by: int) -> np.ndarray:
    """``a`` moved ``by`` places to the right along its last axis, -inf coming in."""
    out = np.full_like(a, -np.inf)
    out[..., by:] = a[..., :-by]
    return out


@register_op
class ConnectionistTemporalClassification(FunctionNode):
    """CTC loss of label sequences ``t`` under per-step scores ``x``.

    Inputs: ``input_length`` ``(B,)`` (steps of ``x`` each example uses), ``label_length``
    ``(B,)`` (labels of ``t`` it uses), ``t`` ``(B, M)`` integer labels, ``x`` ``(T, B, V)``
    unnormalized scores (the softmax over V is taken here). Output: ``-log p(t | x)`` per
    example, or (``reduce='mean'``) their mean. An example no alignment fits (too few steps
    for its labels) has an infinite loss and a zero gradient.
    """

    __slots__ = ("blank_symbol", "reduce")
    name = "connectionist_temporal_classification"
    label = "ConnectionistTemporalClassification"
    arity = 4
    higher_order = False
    attributes = {"blank_symbol": Attr(int, required=True, low=0, doc="the blank label"),
                  "reduce": Attr(str, "mean", choices=("mean", "no"),
                                 doc="mean over examples, or per example")}

    def shape_rule(self, inputs):
        x = inputs[3]
        shapes.float_like_first(self, inputs[3:])
        shapes.expect_ndim(self, inputs, x, 3, "x (steps, batch, classes)")
        input_length, label_length, t = inputs[:3]
        shapes.expect_ndim(self, inputs, t, 2, "labels (batch, M)")
        for what, lengths in (("labels", t), ("input_length", input_length),
                              ("label_length", label_length)):
            if lengths.dtype is not None and lengths.dtype.kind not in "iu":
                shapes.fail_dtype(self, inputs, f"{what} must be integers, got {lengths.dtype}")
            if what != "labels" and lengths.ndim != 1:
                shapes.fail(self, inputs, f"{what} must be one integer per sequence")
            shapes.expect_dim(self, inputs, lengths.shape[0], x.shape[1], f"{what}'s batch")
        if self.reduce == "mean":
            return shapes.TensorType((), x.dtype),
        return shapes.TensorType((x.shape[1],), x.dtype),

    def __init__(self, blank_symbol: int, reduce: str = "mean") -> None:
        self.blank_symbol = blank_symbol
        self.reduce = reduce

    def _check(self, input_length, label_length, t, x) -> None:
        label = self.label
        if x.ndim != 3 or x.dtype.kind != "f":
            raise errors.ShapeError(f"{label}: expected float scores of shape (T, B, V), got "
                                    f"{x.shape} {x.dtype}")
        steps, batch, vocabulary = x.shape
        if t.ndim != 2 or t.dtype.kind not in "iu" or len(t) != batch:
            raise errors.ShapeError(f"{label}: expected integer labels of shape ({batch}, M), "
                                    f"got {t.shape} {t.dtype}")
        for what, lengths, most in (("input_length", input_length, steps),
                                    ("label_length", label_length, t.shape[1])):
            if lengths.shape != (batch,) or lengths.dtype.kind not in "iu":
                raise errors.ShapeError(f"{label}: {what} must be {batch} integers, got "
                                        f"{lengths.shape} {lengths.dtype}")
            if batch and (lengths.min() < 0 or lengths.max() > most):
                raise errors.ShapeError(f"{label}: {what} must be in [0, {most}], got "
                                        f"{lengths.min()}..{lengths.max()}")
        if not 0 <= self.blank_symbol < vocabulary:
            raise errors.ShapeError(f"{label}: blank_symbol {self.blank_symbol} is not one of "
                                    f"the {vocabulary} labels")
        used = np.arange(t.shape[1]) < label_length[:, None]
        if ((t < 0) | (t >= vocabulary))[used].any():
            raise errors.ShapeError(f"{label}: labels must be in [0, {vocabulary})")

    def forward(self, inputs):
        input_length, label_length, t, x = inputs
        self._check(input_length, label_length, t, x)
        steps, batch, _ = x.shape
        x64 = x.astype(np.float64)
        log_y = x64 - x64.max(axis=2, keepdims=True)
        log_y -= np.log(np.exp(log_y).sum(axis=2, keepdims=True))
        path = np.full((batch, 2 * t.shape[1] + 1), self.blank_symbol, np.int64)
        path[:, 1::2] = t
        path_length = 2 * label_length.astype(np.int64) + 1
        width = path.shape[1]
        inside = np.arange(width) < path_length[:, None]  # (B, S)
        skip = np.zeros((batch, width), bool)  # s-2 -> s allowed: a label unlike two back
        skip[:, 2:] = (path[:, 2:] != self.blank_symbol) & (path[:, 2:] != path[:, :-2])
        lp = log_y[:, np.arange(batch)[:, None], path]  # (T, B, S)
        lp[:, ~inside] = -np.inf

        alpha = np.full((steps, batch, width), -np.inf)
        if steps:
            alpha[0, :, :2] = lp[0, :, :2]
        for i in range(1, steps):
            prev = alpha[i - 1]
            alpha[i] = _logaddexp3(prev, _shift(prev, 1),
                                   np.where(skip, _shift(prev, 2), -np.inf)) + lp[i]

        last = input_length.astype(np.int64) - 1
        rows = np.arange(batch)
        ends = np.zeros((batch, width), bool)  # where a path may end: its last two places
        ends[rows, path_length - 1] = True
        ends[rows, np.maximum(path_length - 2, 0)] = True
        beta = np.full((steps, batch, width), -np.inf)
        for i in range(steps - 1, -1, -1):
            end = np.where(ends, lp[i], -np.inf)
            if i + 1 < steps:
                nxt = beta[i + 1]
                step = _logaddexp3(nxt, _shift_left(nxt, 1),
                                   np.where(_shift_left_mask(skip), _shift_left(nxt, 2),
                                            -np.inf)) + lp[i]
            else:
                step = np.full((batch, width), -np.inf)
            beta[i] = np.where((i == last)[:, None], end,
                               np.where((i < last)[:, None], step, -np.inf))

        safe_last = np.maximum(last, 0)
        finals = alpha[safe_last, rows] if steps else np.full((batch, width), -np.inf)
        log_p = np.logaddexp.reduce(np.where(ends, finals, -np.inf), axis=1)
        # no step used: the empty alignment fits only an empty label sequence
        log_p = np.where(last < 0, np.where(label_length == 0, 0.0, -np.inf), log_p)
        loss = -log_p
        self._saved = (alpha, beta, lp, log_y, log_p, path, input_length)
        if self.reduce == "mean":
            return np.asarray(loss.mean() if batch else 0.0, dtype=x.dtype),
        return loss.astype(x.dtype),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        if not isinstance(gy, np.ndarray):
            raise errors.GraphError("connectionist_temporal_classification: its gradient is not "
                                    "differentiable (second order is not supported, as in "
                                    "Chainer)")
        alpha, beta, lp, log_y, log_p, path, input_length = self._saved
        steps, batch, vocabulary = log_y.shape
        feasible = np.isfinite(log_p)
        with np.errstate(invalid="ignore"):
            occupancy = np.exp(alpha + beta - lp - np.where(feasible, log_p, 0.0)[:, None])
        occupancy[~np.isfinite(occupancy)] = 0.0
        onehot = np.zeros(path.shape + (vocabulary,))
        np.put_along_axis(onehot, path[..., None], 1.0, axis=2)
        label_prob = np.einsum("tbs,bsv->tbv", occupancy, onehot)
        gx = np.exp(log_y) - label_prob
        used = np.arange(steps)[:, None] < input_length[None, :]
        gx *= (used & feasible[None, :])[..., None]
        if self.reduce == "mean":
            gx *= gy / max(batch, 1)
        else:
            gx *= gy[None, :, None]
        return None, None, None, gx.astype(gy.dtype)


def _shift_left(a: np.ndarray, by: int) -> np.ndarray:
    """``a`` moved ``by`` places to the left along its last axis, -inf coming in."""
    out = np.full_like(a, -np.inf)
    out[..., :-by] = a[..., by:]
    return out


def _shift_left_mask(skip: np.ndarray) -> np.ndarray:
    """``allowed[b, s]``: the path may jump from ``s`` to ``s + 2``."""
    out = np.zeros_like(skip)
    out[:, :-2] = skip[:, 2:]
    return out


def connectionist_temporal_classification(x, t, blank_symbol, input_length=None,
                                          label_length=None, reduce: str = "mean"):
    """Chainer's CTC loss. ``x``: a list (one per step) of ``(B, V)`` unnormalized scores;
    ``t``: ``(B, M)`` labels; ``blank_symbol``: the blank's index; ``input_length`` /
    ``label_length`` (``(B,)``, default all of ``x`` / all of ``t``) say how much of each
    example counts. Returns the mean loss (``reduce='mean'``) or one per example (``'no'``);
    differentiable in ``x`` only, first order."""
    if not isinstance(x, Sequence):
        raise TypeError("connectionist_temporal_classification: x must be a list or tuple of "
                        f"(B, V) arrays, one per step, got {type(x).__name__}")
    if isinstance(blank_symbol, bool) or not isinstance(blank_symbol, (int, np.integer)):
        raise TypeError("connectionist_temporal_classification: blank_symbol must be a "
                        f"non-negative integer, got {blank_symbol!r}")
    if reduce not in ("mean", "no"):
        raise ValueError("connectionist_temporal_classification: reduce must be 'mean' or "
                         f"'no', got {reduce!r}")
    if len(x) == 0:
        raise errors.ShapeError("connectionist_temporal_classification: x has no steps")
    if x[0].ndim != 2:
        raise errors.ShapeError("connectionist_temporal_classification: each step of x must "
                                f"be (B, V), got {x[0].shape}")
    labels = np.asarray(as_array(t))
    if input_length is None:
        input_length = np.full(x[0].shape[0], len(x), np.int32)
    if label_length is None:
        label_length = np.full(len(labels), labels.shape[1] if labels.ndim == 2 else 0,
                               np.int32)
    xs = stack(list(x), axis=0)
    op = ConnectionistTemporalClassification(int(blank_symbol), reduce)
    return op.apply((_constant(input_length), _constant(label_length), labels, xs))[0]


def _constant(a):
    return a.array if isinstance(a, Variable) else np.asarray(a)
