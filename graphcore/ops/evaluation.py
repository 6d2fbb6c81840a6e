"""Chainer's evaluation functions: ``accuracy`` (an op recorded as no graph node),
``binary_accuracy``, ``r2_score`` and ``classification_summary`` with ``precision``,
``recall``, ``fbeta_score`` and ``f1_score`` (functions of the arrays returning constant
Variables). None has a gradient.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore.config import no_backprop_mode
from graphcore.function_node import Attr, FunctionNode
from graphcore.registry import register_op
from graphcore.variable import as_array, constant


def _check_scores_and_labels(label: str, y: np.ndarray, t: np.ndarray) -> None:
    """Chainer's rule: ``y`` (N, C, d1, ..., dk, 1, ...) for integer labels ``t`` (N, d1,
    ..., dk)."""
    if t.dtype.kind not in "iu":
        raise errors.DTypeError(f"{label}: labels must be integers, got {t.dtype}")
    if y.dtype.kind != "f":
        raise errors.DTypeError(f"{label}: scores must be floating point, got {y.dtype}")
    k = t.ndim
    if (y.ndim < max(k + 1, 2) or y.shape[0] != t.shape[0] or y.shape[2:k + 1] != t.shape[1:]
            or any(n != 1 for n in y.shape[k + 1:])):
        raise errors.ShapeError(f"{label}: expected scores of shape (N, C) + "
                                f"{t.shape[1:]} (and trailing axes of 1) for labels "
                                f"{t.shape}, got {y.shape}")


@register_op
class Accuracy(FunctionNode):
    """Fraction of ``argmax(y, axis=1) == t``; labels equal to ``ignore_label`` do not count.

    ``y``: ``(N, C, ...)`` scores, ``t``: ``(N, ...)`` integer labels (``y`` may have trailing
    axes of length 1 beyond ``t``'s, as in Chainer). An evaluation, not a
    loss: its output never has a gradient (it is recorded as no graph node).
    """

    __slots__ = ("ignore_label",)
    name = "accuracy"
    label = "Accuracy"
    arity = 2
    higher_order = False
    differentiable = False
    attributes = {"ignore_label": Attr((int, type(None)), None,
                                       doc="label value that is not counted")}

    def shape_rule(self, inputs):
        y, t = inputs
        if t.dtype is not None and t.dtype.kind not in "iu":
            shapes.fail_dtype(self, inputs, f"labels must be integers, got {t.dtype}")
        if y.dtype is not None and y.dtype.kind != "f":
            shapes.fail_dtype(self, inputs, f"scores must be floating point, got {y.dtype}")
        k = t.ndim
        if (y.ndim < max(k + 1, 2) or shapes.conflict(y.shape[0], t.shape[0] if k else None)
                or any(map(shapes.conflict, y.shape[2:k + 1], t.shape[1:]))
                or any(shapes.conflict(n, 1) for n in y.shape[k + 1:])):
            shapes.fail(self, inputs, "expected scores of shape (N, C, ...) for labels (N, ...)")
        return shapes.TensorType((), y.dtype),

    def __init__(self, ignore_label: int | None = None) -> None:
        self.ignore_label = ignore_label

    def apply(self, inputs):
        with no_backprop_mode():
            return super().apply(inputs)

    def forward(self, inputs):
        y, t = inputs
        _check_scores_and_labels(self.label, y, t)
        dtype = y.dtype if y.dtype.kind == "f" else np.float32
        pred = y.argmax(axis=1).reshape(t.shape)
        if self.ignore_label is None:
            return np.asarray((pred == t).mean() if t.size else 0.0, dtype),
        counted = t != self.ignore_label
        total = int(counted.sum())
        correct = int(((pred == t) & counted).sum())
        return np.asarray(correct / total if total else 0.0, dtype),

    def backward(self, indexes, grad_outputs):
        raise errors.GraphError("accuracy has no gradient")


def accuracy(y, t, ignore_label=None):
    """Chainer's ``F.accuracy``: a 0-d Variable, never part of a graph."""
    return Accuracy(ignore_label).apply((y, t))[0]


def _arrays(*xs) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(as_array(x)) for x in xs)


def binary_accuracy(y, t):
    """Chainer's ``F.binary_accuracy``: the fraction of ``(y >= 0) == t`` over labels that are
    not -1 (ignored). ``y``: float logits, ``t``: integer 0/1 labels of the same shape."""
    y, t = _arrays(y, t)
    if y.dtype.kind != "f" or t.dtype.kind not in "iu":
        raise errors.DTypeError(f"binary_accuracy: expected float logits and integer labels, "
                                f"got {y.dtype} and {t.dtype}")
    if y.shape != t.shape:
        raise errors.ShapeError(f"binary_accuracy: labels of shape {t.shape} for logits of "
                                f"shape {y.shape}")
    correct = int(((y >= 0) == t).sum())
    counted = max(int((t != -1).sum()), 1)
    return constant(np.asarray(correct / counted, y.dtype))


def r2_score(pred, true, sample_weight=None, multioutput: str = "uniform_average"):
    """Chainer's ``F.r2_score``: per output (axis 0 is the samples) ``1 - SS_res / SS_tot``,
    0 where ``true`` does not vary; ``multioutput='uniform_average'`` averages them,
    ``'raw_values'`` keeps them. ``sample_weight`` is not supported (as in Chainer)."""
    if sample_weight is not None:
        raise NotImplementedError("r2_score: sample_weight is not supported")
    if multioutput not in ("uniform_average", "raw_values"):
        raise ValueError("r2_score: multioutput must be 'uniform_average' or 'raw_values', "
                         f"got {multioutput!r}")
    pred, true = _arrays(pred, true)
    if pred.dtype.kind != "f" or true.dtype.kind != "f":
        raise errors.DTypeError(f"r2_score: expected float arrays, got {pred.dtype} and "
                                f"{true.dtype}")
    if pred.shape != true.shape or pred.ndim == 0:
        raise errors.ShapeError(f"r2_score: pred {pred.shape} and true {true.shape} must have "
                                "one shape with a sample axis")
    residual = ((pred - true) ** 2).sum(axis=0)
    total = ((true - true.mean(axis=0)) ** 2).sum(axis=0)
    flat = total == 0
    score = np.where(flat, 0.0, 1 - residual / np.where(flat, 1, total)).astype(pred.dtype)
    if multioutput == "uniform_average":
        score = score.mean()
    return constant(np.asarray(score, pred.dtype))


def classification_summary(y, t, label_num=None, beta: float = 1.0, ignore_label: int = -1):
    """Chainer's ``F.classification_summary``: per class (``label_num`` of them, default
    ``max(t) + 1``) the precision, recall, F-beta score and support of ``argmax(y, axis=1)``
    against labels ``t`` (shapes as for ``accuracy``; ``ignore_label`` entries do not count).
    A class never predicted (or never present) has a NaN precision (recall), as in Chainer;
    the scores are float64 (numpy's quotient of counts, as Chainer's) and support int64."""
    y, t = _arrays(y, t)
    _check_scores_and_labels("classification_summary", y, t)
    labels = t.astype(np.int64).ravel()
    ignored = labels == ignore_label
    classes = int(labels.max()) + 1 if label_num is None else int(label_num)
    if classes < 0 or ((labels < 0) | (labels >= classes))[~ignored].any():
        raise errors.ShapeError(f"classification_summary: labels must be in [0, {classes}) "
                                f"or {ignore_label} (ignored)")
    pred = np.where(ignored, classes, y.argmax(axis=1).ravel())
    true = np.where(ignored, classes, labels)
    support = np.bincount(true, minlength=classes + 1)[:classes]
    relevant = np.bincount(pred, minlength=classes + 1)[:classes]
    tp = np.bincount(np.where(pred == true, true, classes), minlength=classes + 1)[:classes]
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = tp / relevant
        recall = tp / support
        beta_sq = beta * beta
        fbeta = (1 + beta_sq) * precision * recall / (beta_sq * precision + recall)
    return tuple(constant(np.asarray(a)) for a in (precision, recall, fbeta, support))


def precision(y, t, label_num=None, ignore_label: int = -1):
    """``(precision, support)`` of ``classification_summary``."""
    summary = classification_summary(y, t, label_num, 1.0, ignore_label)
    return summary[0], summary[3]


def recall(y, t, label_num=None, ignore_label: int = -1):
    """``(recall, support)`` of ``classification_summary``."""
    summary = classification_summary(y, t, label_num, 1.0, ignore_label)
    return summary[1], summary[3]


def fbeta_score(y, t, label_num=None, beta: float = 1.0, ignore_label: int = -1):
    """``(F-beta score, support)`` of ``classification_summary``."""
    summary = classification_summary(y, t, label_num, beta, ignore_label)
    return summary[2], summary[3]


def f1_score(y, t, label_num=None, ignore_label: int = -1):
    """``(F1 score, support)`` of ``classification_summary``."""
    return fbeta_score(y, t, label_num, 1.0, ignore_label)
