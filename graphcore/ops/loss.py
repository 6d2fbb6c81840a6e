"""Softmax, log-softmax and the losses built on them: softmax cross entropy, sigmoid cross
entropy, mean squared error. Each computes its forward stably and saves what backward needs.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore import generic as g
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.checks import is_float, normalize_axis, same_dtype, same_shape
from graphcore.registry import register_op

_AXIS = {"axis": Attr(int, 1, doc="axis the distribution runs along")}
_REDUCE = Attr(str, "mean", choices=("mean", "no"), doc="mean over examples, or per example")


def log_softmax_array(x: np.ndarray, axis: int) -> np.ndarray:
    y = x - x.max(axis=axis, keepdims=True)
    y -= np.log(np.exp(y).sum(axis=axis, keepdims=True))
    return y


@register_op
class Softmax(FunctionNode):
    """``exp(x) / sum(exp(x))`` along ``axis``."""

    __slots__ = ("axis",)
    name = "softmax"
    label = "Softmax"
    arity = 1
    attributes = _AXIS
    _out_keep = (0,)

    def __init__(self, axis: int = 1) -> None:
        self.axis = axis

    def forward(self, inputs):
        x, = inputs
        is_float(self.label, x)
        return g.softmax_array(x, normalize_axis(self.label, self.axis, x.ndim)),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        gy, = grad_outputs
        yg = y * gy
        return yg - y * g.sum(yg, axis=self.axis, keepdims=True),


@register_op
class LogSoftmax(FunctionNode):
    """``log(softmax(x))`` along ``axis``, computed without overflow."""

    __slots__ = ("axis",)
    name = "log_softmax"
    label = "LogSoftmax"
    arity = 1
    attributes = _AXIS
    _out_keep = (0,)

    def __init__(self, axis: int = 1) -> None:
        self.axis = axis

    def forward(self, inputs):
        x, = inputs
        is_float(self.label, x)
        return log_softmax_array(x, normalize_axis(self.label, self.axis, x.ndim)),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        gy, = grad_outputs
        return gy - g.exp(y) * g.sum(gy, axis=self.axis, keepdims=True),


def _check_labels(label: str, x: np.ndarray, t: np.ndarray, ignore_label: int) -> np.ndarray:
    """Validate integer class labels ``t`` for scores ``x`` (classes on axis 1); return the
    not-ignored mask."""
    if t.dtype.kind not in "iu":
        raise errors.DTypeError(f"{label}: labels must be integers, got {t.dtype}")
    expected = x.shape[:1] + x.shape[2:]
    if t.shape != expected:
        raise errors.ShapeError(f"{label}: expected labels of shape {expected} for scores "
                                f"{x.shape}, got {t.shape}")
    keep = t != ignore_label
    bad = keep & ((t < 0) | (t >= x.shape[1]))
    if bad.any():
        raise errors.ShapeError(f"{label}: label {int(t[bad][0])} is out of range for "
                                f"{x.shape[1]} classes")
    return keep


def _class_weight(value) -> np.ndarray | None:
    if value is None:
        return None
    weight = np.asarray(value)
    if weight.ndim != 1 or weight.dtype.kind not in "fiu":
        raise errors.ShapeError(f"SoftmaxCrossEntropy: class_weight must be a 1-D array of "
                                f"numbers, one per class, got shape {weight.shape}, "
                                f"dtype {weight.dtype}")
    return weight


@register_op
class SoftmaxCrossEntropy(FunctionNode):
    """Mean negative log-likelihood of integer labels ``t`` under ``softmax(x)`` (Chainer's).

    ``x``: ``(N, C)`` or ``(N, C, d1, ...)`` scores, classes on axis 1; ``t``: ``(N,)`` or
    ``(N, d1, ...)`` class indices; ``ignore_label`` entries count for nothing. ``normalize``
    divides by the number of counted labels (else by N). ``class_weight`` (one number per
    class) scales each label's term; as in Chainer it does not change the divisor.
    """

    __slots__ = ("normalize", "reduce", "ignore_label", "class_weight")
    name = "softmax_cross_entropy"
    label = "SoftmaxCrossEntropy"
    arity = 2
    attributes = {"normalize": Attr(bool, True, doc="divide by counted labels, not N"),
                  "reduce": _REDUCE,
                  "ignore_label": Attr(int, -1, doc="label value that is skipped"),
                  "class_weight": Attr((list, tuple, np.ndarray, type(None)), None,
                                       doc="one weight per class for its label's term")}

    def __init__(self, normalize: bool = True, reduce: str = "mean",
                 ignore_label: int = -1, class_weight=None) -> None:
        if reduce not in ("mean", "no"):
            raise ValueError(f"SoftmaxCrossEntropy: reduce must be 'mean' or 'no', got "
                             f"{reduce!r}")
        self.normalize = normalize
        self.reduce = reduce
        self.ignore_label = ignore_label
        self.class_weight = _class_weight(class_weight)

    def forward(self, inputs):
        x, t = inputs
        if x.ndim < 2:
            raise errors.ShapeError(f"{self.label}: expected scores of shape (N, C) or "
                                    f"(N, C, ...), got {x.shape}")
        is_float(self.label, x, "score array")
        keep = _check_labels(self.label, x, t, self.ignore_label)
        log_y = log_softmax_array(x, 1)
        picked = np.where(keep, t, 0)
        factor = keep.astype(x.dtype)
        if self.class_weight is not None:
            if len(self.class_weight) != x.shape[1]:
                raise errors.ShapeError(f"{self.label}: class_weight has "
                                        f"{len(self.class_weight)} entries for {x.shape[1]} "
                                        "classes")
            factor *= self.class_weight.astype(x.dtype)[picked]
        nll = -np.take_along_axis(log_y, picked[:, None], axis=1)[:, 0] * factor
        if self.reduce == "mean":
            count = max(int(keep.sum()), 1) if self.normalize else max(len(t), 1)
            loss = np.asarray(nll.sum() / count, dtype=x.dtype)
        else:
            count = 1
            loss = nll.astype(x.dtype, copy=False)
        self._saved = (log_y, factor, picked, count)
        return loss,

    def backward(self, indexes, grad_outputs):
        log_y, factor, picked, count = self._saved
        gy, = grad_outputs
        if isinstance(gy, np.ndarray):
            gx = np.exp(log_y)
            at = picked[:, None]
            np.put_along_axis(gx, at, np.take_along_axis(gx, at, axis=1) - 1, axis=1)
            gx *= factor[:, None]
            gx *= (gy / count) if self.reduce == "mean" else gy[:, None]
            return gx, None
        x, _ = self.get_retained_inputs()
        onehot = _onehot(picked, log_y.shape[1], log_y.dtype)
        diff = g.scale_by(g.softmax(x, axis=1) - onehot, factor[:, None])
        if self.reduce == "mean":
            return diff * (gy * (1.0 / count)), None
        return diff * g.reshape(gy, gy.shape[:1] + (1,) + gy.shape[1:]), None


def _onehot(picked: np.ndarray, classes: int, dtype) -> np.ndarray:
    """``picked`` (N, ...) as one-hot rows with the classes on axis 1: (N, C, ...)."""
    return np.moveaxis(np.eye(classes, dtype=dtype)[picked], -1, 1)


@register_op
class SigmoidCrossEntropy(FunctionNode):
    """Binary cross entropy of logits ``x`` against 0/1 labels ``t`` (``-1`` = ignore).

    ``normalize=True`` divides by the number of counted labels, else by the batch size.
    """

    __slots__ = ("normalize", "reduce", "ignore_label")
    name = "sigmoid_cross_entropy"
    label = "SigmoidCrossEntropy"
    arity = 2
    attributes = {"normalize": Attr(bool, True, doc="divide by counted labels, not N"),
                  "reduce": _REDUCE,
                  "ignore_label": Attr(int, -1, doc="label value that is skipped")}

    def __init__(self, normalize: bool = True, reduce: str = "mean",
                 ignore_label: int = -1) -> None:
        self.normalize = normalize
        self.reduce = reduce
        self.ignore_label = ignore_label

    def forward(self, inputs):
        x, t = inputs
        is_float(self.label, x, "logit array")
        if t.shape != x.shape:
            raise errors.ShapeError(f"{self.label}: expected labels of shape {x.shape}, got "
                                    f"{t.shape}")
        if t.dtype.kind not in "iu":
            raise errors.DTypeError(f"{self.label}: labels must be integers, got {t.dtype}")
        keep = t != self.ignore_label
        tf = t.astype(x.dtype)
        loss = (np.maximum(x, 0) - x * tf + np.log1p(np.exp(-np.abs(x)))) * keep
        if self.reduce == "mean":
            count = max(int(keep.sum()), 1) if self.normalize else max(len(x), 1)
            out = np.asarray(loss.sum() / count, dtype=x.dtype)
        else:
            count = 1
            out = loss.astype(x.dtype, copy=False)
        self._saved = (keep, tf, count)
        return out,

    def backward(self, indexes, grad_outputs):
        keep, tf, count = self._saved
        x, _ = self.get_retained_inputs()
        gy, = grad_outputs
        diff = g.mask(g.sigmoid(x) - tf, keep)
        return (diff * (gy * (1.0 / count)) if self.reduce == "mean" else diff * gy), None


@register_op
class MeanSquaredError(FunctionNode):
    """``mean((a - b) ** 2)`` over all elements of two arrays of one shape."""

    __slots__ = ()
    name = "mean_squared_error"
    label = "MeanSquaredError"
    arity = 2

    def forward(self, inputs):
        a, b = inputs
        same_shape(self.label, a, b)
        same_dtype(self.label, a, b)
        diff = a - b
        self._saved = diff
        return np.asarray(np.vdot(diff, diff) / max(diff.size, 1), dtype=a.dtype),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        if isinstance(gy, np.ndarray):
            diff = self._saved
        else:
            a, b = self.get_retained_inputs()
            diff = a - b
        ga = diff * (gy * (2.0 / max(diff.size, 1)))
        return ga, (-ga if 1 in indexes else None)


def softmax(x, axis: int = 1):
    return Softmax(axis).apply((x,))[0]


def log_softmax(x, axis: int = 1):
    return LogSoftmax(axis).apply((x,))[0]


def softmax_cross_entropy(x, t, normalize: bool = True, cache_score: bool = True,
                          class_weight=None, ignore_label: int = -1, reduce: str = "mean",
                          enable_double_backprop: bool = True):
    """Chainer's signature. ``cache_score`` and ``enable_double_backprop`` are accepted for
    compatibility: scores are always kept and double backprop always works."""
    return SoftmaxCrossEntropy(normalize, reduce, ignore_label, class_weight).apply((x, t))[0]


def sigmoid_cross_entropy(x, t, normalize: bool = True, reduce: str = "mean",
                          ignore_label: int = -1):
    return SigmoidCrossEntropy(normalize, reduce, ignore_label).apply((x, t))[0]


def mean_squared_error(a, b):
    return MeanSquaredError().apply((a, b))[0]
