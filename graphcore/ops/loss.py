"""Softmax, log-softmax and the losses built on them: softmax cross entropy (integer labels
an op, soft targets a composite of ops), sigmoid cross entropy, mean squared and mean absolute
error. Each computes its forward stably and saves what backward needs.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.checks import is_float, normalize_axis, same_dtype, same_shape
from graphcore.ops.math import exp, log
from graphcore.ops.reduction import sum as _sum
from graphcore.registry import register_op
from graphcore.variable import Variable, as_array, as_variable

_AXIS = {"axis": Attr(int, 1, doc="axis the distribution runs along")}
_REDUCE = Attr(str, "mean", choices=("mean", "no"), doc="mean over examples, or per example")


def log_softmax_array(x: np.ndarray, axis: int) -> np.ndarray:
    y = x - x.max(axis=axis, keepdims=True)
    y -= np.log(np.exp(y).sum(axis=axis, keepdims=True))
    return y


def log_sum_exp(x, axis: int):
    """``log(sum(exp(x), axis))`` of a Variable as a composite of ops, the maximum taken out
    first (a constant shift: the gradient is the softmax either way)."""
    top = np.max(x.array, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0).astype(x.dtype)
    total = _sum(exp(x - top), axis=axis)
    return log(total) + np.squeeze(top, axis=axis)


def _same_shape_rule(op, inputs):
    """The shape two inputs of one shape share (a loss between predictions and targets)."""
    a, b = inputs
    if a.ndim != b.ndim or any(shapes.conflict(x, y) for x, y in zip(a.shape, b.shape,
                                                                      strict=True)):
        shapes.fail(op, inputs, "inputs must have one shape")
    return tuple(map(shapes.merge, a.shape, b.shape))


@register_op
class Softmax(FunctionNode):
    """``exp(x) / sum(exp(x))`` along ``axis``."""

    __slots__ = ("axis",)
    name = "softmax"
    label = "Softmax"
    arity = 1
    attributes = _AXIS
    _out_keep = (0,)

    def shape_rule(self, inputs):
        x, = inputs
        shapes.normalize_axis(self, inputs, self.axis, x.ndim)
        return shapes.float_like_first(self, inputs)

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

    def shape_rule(self, inputs):
        x, = inputs
        shapes.normalize_axis(self, inputs, self.axis, x.ndim)
        return shapes.float_like_first(self, inputs)

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


def _check_class_weight(value) -> None:
    """Chainer's rule for ``class_weight``: None, or a 1-d floating array (a list or tuple of
    numbers is taken as one); a Variable is refused (the weights are constants)."""
    if value is None:
        return
    if isinstance(value, Variable):
        raise ValueError("must be a numpy array of floats, not a Variable (the weights are "
                         "constants)")
    if isinstance(value, (list, tuple)):
        value = np.asarray(value, dtype=np.float64)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"must be a 1-d array of floats or None, got {type(value).__name__}")
    if value.ndim != 1:
        raise ValueError(f"must be 1-d (one weight per class), got shape {value.shape}")
    if value.dtype.kind != "f":
        raise ValueError(f"must be of a floating dtype, got {value.dtype}")


def _class_weight(value) -> np.ndarray | None:
    if value is None or isinstance(value, np.ndarray):
        return value
    return np.asarray(value, dtype=np.float64)


def _sum_to_scalar(values: np.ndarray, scale: float, dtype) -> np.ndarray:
    """``values.sum() * scale`` as a 0-d array of ``dtype``; float16 is summed in float32, as
    Chainer does, so a large batch neither overflows nor loses its small terms."""
    acc = np.float32 if values.dtype == np.float16 else values.dtype
    return np.asarray(values.sum(dtype=acc) * scale, dtype=dtype)


@register_op
class SoftmaxCrossEntropy(FunctionNode):
    """Mean negative log-likelihood of integer labels ``t`` under ``softmax(x)`` (Chainer's).

    ``x``: ``(N, C)`` or ``(N, C, d1, ...)`` scores, classes on axis 1; ``t``: ``(N,)`` or
    ``(N, d1, ...)`` class indices; ``ignore_label`` entries count for nothing. ``normalize``
    divides by the number of counted labels (else by N). ``class_weight`` (one number per
    class) scales each label's term; as in Chainer it does not change the divisor.
    ``cache_score`` keeps ``softmax(x)`` as ``self.y`` for backward (else backward computes
    it again from ``x``). Float (soft) targets are ``softmax_cross_entropy``'s composite.
    """

    __slots__ = ("normalize", "reduce", "ignore_label", "class_weight", "cache_score", "y")
    name = "softmax_cross_entropy"
    label = "SoftmaxCrossEntropy"
    arity = 2
    attributes = {"normalize": Attr(bool, True, doc="divide by counted labels, not N"),
                  "reduce": _REDUCE,
                  "ignore_label": Attr(int, -1, doc="label value that is skipped"),
                  "class_weight": Attr((list, tuple, np.ndarray, type(None)), None,
                                       doc="one weight per class for its label's term",
                                       check=_check_class_weight),
                  "cache_score": Attr(bool, True, doc="keep softmax(x) for backward")}

    def shape_rule(self, inputs):
        x, t = inputs
        if x.ndim < 2:
            shapes.fail(self, inputs, "expected scores of shape (N, C) or (N, C, ...)")
        shapes.float_like_first(self, inputs)
        if t.dtype is not None and t.dtype.kind not in "iu":
            shapes.fail_dtype(self, inputs, f"labels must be integers, got {t.dtype}")
        labels = x.shape[:1] + x.shape[2:]
        if t.ndim != len(labels) or any(shapes.conflict(a, b)
                                        for a, b in zip(t.shape, labels, strict=True)):
            shapes.fail(self, inputs, f"expected labels of shape {shapes.show_shape(labels)}")
        if self.reduce == "mean":
            return shapes.TensorType((), x.dtype),
        return shapes.TensorType(tuple(map(shapes.merge, t.shape, labels)), x.dtype),

    def __init__(self, normalize: bool = True, reduce: str = "mean",
                 ignore_label: int = -1, class_weight=None, cache_score: bool = True) -> None:
        self.normalize = normalize
        self.reduce = reduce
        self.ignore_label = ignore_label
        self.class_weight = _class_weight(class_weight)
        self.cache_score = cache_score
        self.y = None

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
            loss = _sum_to_scalar(nll, 1.0 / count, x.dtype)
        else:
            count = 1
            loss = nll.astype(x.dtype, copy=False)
        if self.cache_score:
            self.y = np.exp(log_y, out=log_y)
        self._saved = (factor, picked, count)
        return loss,

    def backward(self, indexes, grad_outputs):
        factor, picked, count = self._saved
        gy, = grad_outputs
        x, _ = self.get_retained_inputs()
        if isinstance(gy, np.ndarray):
            gx = self.y.copy() if self.y is not None else g.softmax_array(x, 1)
            at = picked[:, None]
            np.put_along_axis(gx, at, np.take_along_axis(gx, at, axis=1) - 1, axis=1)
            gx *= factor[:, None]
            gx *= (gy / count) if self.reduce == "mean" else gy[:, None]
            return gx, None
        onehot = _onehot(picked, x.shape[1], x.dtype)
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

    def shape_rule(self, inputs):
        x, t = inputs
        shapes.float_like_first(self, inputs)
        shape = _same_shape_rule(self, inputs)
        return shapes.TensorType(() if self.reduce == "mean" else shape, x.dtype),

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


def _accumulation_dtype(dtype):
    """The dtype a mean over many elements is summed in: float32 for float16 (Chainer's)."""
    return np.float32 if dtype == np.float16 else dtype


@register_op
class MeanSquaredError(FunctionNode):
    """``mean((a - b) ** 2)`` over all elements of two float arrays of one shape (float16
    summed in float32, so a large array does not overflow)."""

    __slots__ = ()
    name = "mean_squared_error"
    label = "MeanSquaredError"
    arity = 2

    def shape_rule(self, inputs):
        shapes.float_like_first(self, inputs)
        shapes.same_dtype(self, inputs, inputs)
        _same_shape_rule(self, inputs)
        return shapes.TensorType((), inputs[0].dtype),

    def forward(self, inputs):
        a, b = inputs
        is_float(self.label, a)
        same_shape(self.label, a, b)
        same_dtype(self.label, a, b)
        diff = a - b
        self._saved = diff
        flat = diff.ravel().astype(_accumulation_dtype(diff.dtype), copy=False)
        return np.asarray(np.vdot(flat, flat) / max(diff.size, 1), dtype=a.dtype),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        if isinstance(gy, np.ndarray):
            diff = self._saved
        else:
            a, b = self.get_retained_inputs()
            diff = a - b
        ga = diff * (gy * (2.0 / max(diff.size, 1)))
        return ga, (-ga if 1 in indexes else None)


@register_op
class MeanAbsoluteError(FunctionNode):
    """``mean(|a - b|)`` over all elements of two float arrays of one shape (float16 summed
    in float32). Its gradient is ``sign(a - b) / size``, 0 where ``a == b``."""

    __slots__ = ()
    name = "mean_absolute_error"
    label = "MeanAbsoluteError"
    arity = 2

    def shape_rule(self, inputs):
        shapes.float_like_first(self, inputs)
        shapes.same_dtype(self, inputs, inputs)
        _same_shape_rule(self, inputs)
        return shapes.TensorType((), inputs[0].dtype),

    def forward(self, inputs):
        a, b = inputs
        is_float(self.label, a)
        same_shape(self.label, a, b)
        same_dtype(self.label, a, b)
        diff = a - b
        self._saved = np.sign(diff)
        total = np.abs(diff).sum(dtype=_accumulation_dtype(diff.dtype))
        return np.asarray(total / max(diff.size, 1), dtype=a.dtype),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        sign = self._saved
        ga = (gy * (1.0 / max(sign.size, 1))) * sign
        return ga, (-ga if 1 in indexes else None)


def softmax(x, axis: int = 1):
    return Softmax(axis).apply((x,))[0]


def log_softmax(x, axis: int = 1):
    return LogSoftmax(axis).apply((x,))[0]


def softmax_cross_entropy(x, t, normalize: bool = True, cache_score: bool = True,
                          class_weight=None, ignore_label: int = -1, reduce: str = "mean",
                          enable_double_backprop: bool = False,
                          soft_target_loss: str = "cross-entropy"):
    """Chainer's ``F.softmax_cross_entropy``. Integer labels ``t`` (see
    ``SoftmaxCrossEntropy``); float labels of ``x``'s shape are soft targets, a distribution
    over axis 1 per example: ``soft_target_loss='cross-entropy'`` gives
    ``-sum(t * log_softmax(x))``, ``'kl-divergence'`` ``sum(t * (log(t + 1e-7) -
    log_softmax(x)))``, per example or (``reduce='mean'``) their mean over the examples
    (each position of ``(N, d1, ...)`` is one). Soft targets take neither ``class_weight``
    nor ``ignore_label`` nor ``normalize`` and get no gradient (as in Chainer). Double
    backprop works whatever ``enable_double_backprop`` says."""
    if reduce not in ("mean", "no"):
        raise ValueError(f"softmax_cross_entropy: reduce must be 'mean' or 'no', got "
                         f"{reduce!r}")
    try:
        _check_class_weight(class_weight)
    except (TypeError, ValueError) as e:
        raise errors.ArgumentValueError(f"softmax_cross_entropy: class_weight {e}") from None
    if np.asarray(as_array(t)).dtype.kind == "f":
        if class_weight is not None:
            raise errors.ArgumentValueError("softmax_cross_entropy: class_weight applies to "
                                            "integer labels, not soft targets")
        return _soft_target_cross_entropy(x, t, reduce, soft_target_loss)
    return SoftmaxCrossEntropy(normalize, reduce, ignore_label, class_weight,
                               cache_score).apply((x, t))[0]


_SOFT_TARGET_EPS = 1e-7


def _soft_target_cross_entropy(x, t, reduce: str, soft_target_loss: str):
    if soft_target_loss not in ("cross-entropy", "kl-divergence"):
        raise ValueError("softmax_cross_entropy: soft_target_loss must be 'cross-entropy' or "
                         f"'kl-divergence', got {soft_target_loss!r}")
    x, t = as_variable(x), np.asarray(as_array(t))  # targets are constants, as in Chainer
    if x.ndim < 2 or t.shape != x.shape:
        raise errors.ShapeError(f"softmax_cross_entropy: soft targets must have the scores' "
                                f"shape (N, C, ...), got {t.shape} for scores {x.shape}")
    is_float("softmax_cross_entropy", x.array, "score array")
    if t.dtype != x.dtype:
        raise errors.DTypeError(f"softmax_cross_entropy: soft targets of dtype {t.dtype} for "
                                f"scores of dtype {x.dtype}")
    log_y = log_softmax(x, axis=1)
    if soft_target_loss == "kl-divergence":
        terms = t * (np.log(t + _SOFT_TARGET_EPS) - log_y)
    else:
        terms = -(t * log_y)
    loss = _sum(terms, axis=1)
    if reduce == "no":
        return loss
    return _sum(loss) * (1.0 / max(loss.size, 1))


def sigmoid_cross_entropy(x, t, normalize: bool = True, reduce: str = "mean",
                          ignore_label: int = -1):
    return SigmoidCrossEntropy(normalize, reduce, ignore_label).apply((x, t))[0]


def mean_squared_error(a, b):
    return MeanSquaredError().apply((a, b))[0]


def mean_absolute_error(a, b):
    return MeanAbsoluteError().apply((a, b))[0]
