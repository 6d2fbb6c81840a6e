"""Metrics of a spec's training and evaluation, computed from the two arrays the loss step
takes (predictions ``y`` and targets ``t``) over every row of an evaluation, so that none is a
mean of per-batch values. The definitions are scikit-learn's (``sklearn.metrics``):

- ``accuracy``: the fraction of rows whose predicted class is the label (a sum: exact over
  batches of any sizes);
- ``mse`` / ``mae``: mean squared / absolute difference of ``y`` and ``t`` (sums);
- ``precision``, ``recall``, ``f1``: per class, and their macro average
  (``precision_recall_fscore_support``, ``average='macro'``) over the classes that occur among
  the labels or the predictions (scikit-learn's default ``labels``); a ratio with a zero
  denominator is 0 (its default ``zero_division``, without the warning);
- ``auc``: ROC AUC (``roc_auc_score``): binary for a sigmoid cross entropy or two classes,
  one-vs-rest macro average otherwise (``multi_class='ovr', average='macro'``), scored by the
  softmax probabilities (the sigmoid for a sigmoid cross entropy); a class absent from the
  labels is left out of the average (scikit-learn refuses such data), and labels of a single
  class give NaN (ROC AUC is not defined there);
- ``r2``: ``r2_score`` with ``multioutput='uniform_average'`` over the targets' trailing
  elements; a constant target gives 1.0 if predicted exactly and 0.0 otherwise
  (``force_finite``), fewer than two rows give NaN;
- ``confusion``: ``confusion_matrix(labels=range(classes))``: rows the labels, columns the
  predictions (not a scalar: a table and a picture).

Classification metrics read integer labels; label -1 is ignored, as ``softmax_cross_entropy``
ignores it. The predicted class is ``argmax(y, axis=1)``; for a ``sigmoid_cross_entropy``
(``y`` one logit per row) it is 1 where the logit is >= 0, as Chainer's ``binary_accuracy``.
``MetricCollector`` gathers what they need batch by batch; ``class_names`` names the classes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphcore.language.validate_workflow import METRICS, SCALAR_METRICS  # noqa: F401
from graphcore.variable import Variable

# computed as sums over rows (the per-step figures of training)
SUM_METRICS = ("accuracy", "mse", "mae")
# computed from every row's predictions at once
COLLECTED_METRICS = tuple(m for m in SCALAR_METRICS if m not in SUM_METRICS)
HIGHER_IS_BETTER = ("accuracy", "precision", "recall", "f1", "auc", "r2")
CLASSIFICATION_METRICS = ("accuracy", "precision", "recall", "f1", "auc", "confusion")
PER_CLASS_METRICS = ("precision", "recall", "f1")
BINARY_LOSSES = ("sigmoid_cross_entropy",)


class MetricError(ValueError):
    """A metric does not apply to what the loss compares (say which, and why)."""


def class_names(classes: int, vocabulary: Sequence[str] | None = None) -> list[str]:
    """What the classes are called in tables, pictures and JSON: the label vocabulary's
    entries where there is one, else the class indices."""
    if vocabulary is not None and len(vocabulary) == classes:
        return [str(name) for name in vocabulary]
    return [str(i) for i in range(classes)]


def higher_is_better(metric: str) -> bool:
    """Whether a larger value of ``metric`` (``loss``, ``validation_f1``, ...) is better."""
    return metric.removeprefix("validation_") in HIGHER_IS_BETTER


def _array(value: Any) -> np.ndarray:
    return np.asarray(value.array if isinstance(value, Variable) else value)


def metric_sums(name: str, loss_inputs: Sequence[tuple[Any, ...]],
                loss_op: str | None = None) -> tuple[float, int]:
    """(sum, count) of metric ``name`` (one of ``SUM_METRICS``) over examples' loss inputs."""
    total, count = 0.0, 0
    for args in loss_inputs:
        y, t = _pair(name, args)
        if name == "accuracy":
            labels, predicted, _ = _classes(name, y, t, loss_op)
            keep = labels != -1
            total += float(np.count_nonzero(predicted[keep] == labels[keep]))
            count += int(np.count_nonzero(keep))
        else:
            if y.size != t.size:
                raise MetricError(f"metric {name}: predictions of shape {y.shape} and targets "
                                  f"of shape {t.shape} differ in size")
            diff = y.reshape(-1).astype(np.float64) - t.reshape(-1).astype(np.float64)
            total += float(np.sum(diff * diff) if name == "mse" else np.sum(np.abs(diff)))
            count += int(diff.size)
    return total, count


def _pair(name: str, args: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray]:
    if len(args) < 2:
        raise MetricError(f"metric {name}: the loss takes {len(args)} input; a metric "
                          "compares the loss's first two inputs (predictions, targets)")
    return _array(args[0]), _array(args[1])


def _classes(name: str, y: np.ndarray, t: np.ndarray, loss_op: str | None
             ) -> tuple[np.ndarray, np.ndarray, int]:
    """(labels, predicted classes, number of classes) of one example's loss inputs."""
    if t.dtype.kind not in "iu":
        raise MetricError(f"metric {name} needs integer labels as the loss's second input, "
                          f"got {t.dtype}")
    labels = t.reshape(-1).astype(np.int64)
    if loss_op in BINARY_LOSSES:
        if y.size != labels.size or (y.ndim == 2 and y.shape[1] != 1) or y.ndim > 2:
            raise MetricError(f"metric {name}: predictions of shape {y.shape} and labels of "
                              f"shape {t.shape}: {loss_op} metrics take one logit per row "
                              "([N] or [N, 1]) and a label 0 or 1 for each (multi-label "
                              "targets are not supported)")
        return labels, (y.reshape(-1) >= 0).astype(np.int64), 2
    if y.ndim != 2 or y.shape[0] != labels.shape[0]:
        raise MetricError(f"metric {name}: predictions of shape {y.shape} do not match labels "
                          f"of shape {t.shape} (it needs [N, classes] and [N])")
    return labels, y.argmax(axis=1).astype(np.int64), int(y.shape[1])


def _scores(y: np.ndarray, loss_op: str | None) -> np.ndarray:
    """The probabilities AUC ranks: sigmoid of a binary logit, softmax over classes."""
    logits = y.astype(np.float64)
    if loss_op in BINARY_LOSSES:
        return 1.0 / (1.0 + np.exp(-logits.reshape(-1)))
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


@dataclass
class ClassFigures:
    """One class's precision, recall and F1, and its support (rows with that label)."""

    index: int
    name: str
    precision: float
    recall: float
    f1: float
    support: int

    def to_dict(self) -> dict[str, Any]:
        return {"class": self.index, "name": self.name, "precision": self.precision,
                "recall": self.recall, "f1": self.f1, "support": self.support}


class MetricCollector:
    """The metrics ``metrics`` over every batch given to ``add``: sums for ``SUM_METRICS``;
    for the others the labels, predicted classes and scores (classification) or targets and
    predictions (``r2``) of every row, computed when asked (``values``, ``confusion``,
    ``per_class``). ``state``/``restore``: what it holds, as arrays (a checkpoint's)."""

    def __init__(self, metrics: Sequence[str], loss_op: str | None) -> None:
        self.metrics = tuple(metrics)
        self.loss_op = loss_op
        self.sums = {m: [0.0, 0] for m in self.metrics if m in SUM_METRICS}
        self.classify = any(m in self.metrics for m in CLASSIFICATION_METRICS
                            if m != "accuracy")
        self.scored = "auc" in self.metrics
        self.regress = "r2" in self.metrics
        self.parts: dict[str, list[np.ndarray]] = {
            "labels": [], "predicted": [], "scores": [], "targets": [], "predictions": []}
        self.classes = 0

    def add(self, loss_inputs: Sequence[tuple[Any, ...]]) -> None:
        """One batch: the loss inputs of each of its examples (a ``RunResult``'s)."""
        for m, pair in self.sums.items():
            total, count = metric_sums(m, loss_inputs, self.loss_op)
            pair[0] += total
            pair[1] += count
        if not (self.classify or self.regress):
            return
        for args in loss_inputs:
            y, t = _pair(self.metrics[0], args)
            if self.classify:
                name = next(m for m in self.metrics if m in CLASSIFICATION_METRICS
                            and m != "accuracy")
                labels, predicted, classes = _classes(name, y, t, self.loss_op)
                if self.classes and classes != self.classes:
                    raise MetricError(f"metric {name}: predictions over {classes} classes "
                                      f"after predictions over {self.classes}")
                self.classes = classes
                keep = labels != -1
                self.parts["labels"].append(labels[keep])
                self.parts["predicted"].append(predicted[keep])
                if self.scored:
                    self.parts["scores"].append(_scores(y, self.loss_op)[keep])
            if self.regress:
                if y.size != t.size:
                    raise MetricError(f"metric r2: predictions of shape {y.shape} and targets "
                                      f"of shape {t.shape} differ in size")
                rows = t.reshape(t.shape[0], -1) if t.ndim >= 2 else t.reshape(-1, 1)
                self.parts["targets"].append(rows.astype(np.float64))
                self.parts["predictions"].append(y.reshape(rows.shape).astype(np.float64))

    def _joined(self, key: str) -> np.ndarray:
        parts = self.parts[key]
        if not parts:
            return np.zeros((0,), np.int64 if key in ("labels", "predicted") else np.float64)
        return np.concatenate(parts)

    # --- the figures -------------------------------------------------------------------
    def values(self) -> dict[str, float]:
        """Each scalar metric asked for (NaN where there were no rows)."""
        out: dict[str, float] = {}
        for m in self.metrics:
            if m in self.sums:
                total, count = self.sums[m]
                out[m] = total / count if count else float("nan")
            elif m in ("precision", "recall", "f1"):
                out[m] = self._macro(m)
            elif m == "auc":
                out[m] = roc_auc(self._joined("labels"), self._joined("scores"),
                                 self.classes, binary=self.loss_op in BINARY_LOSSES)
            elif m == "r2":
                out[m] = r2(self._joined("targets"), self._joined("predictions"))
        return out

    def confusion(self) -> np.ndarray:
        """The confusion matrix, ``[classes, classes]``: rows the labels, columns the
        predicted classes."""
        return confusion_matrix(self._joined("labels"), self._joined("predicted"), self.classes)

    def per_class(self, names: Sequence[str] | None = None) -> list[ClassFigures]:
        """Precision, recall, F1 and support of each class (``names``: what they are called;
        default ``class_names``)."""
        matrix = self.confusion()
        names = list(names) if names is not None else class_names(self.classes)
        precision, recall, f1, support = _per_class(matrix)
        return [ClassFigures(i, names[i], float(precision[i]), float(recall[i]), float(f1[i]),
                             int(support[i])) for i in range(self.classes)]

    def _macro(self, metric: str) -> float:
        matrix = self.confusion()
        if not matrix.size:
            return float("nan")
        precision, recall, f1, support = _per_class(matrix)
        # scikit-learn averages over the classes that occur among labels or predictions
        occurring = (support > 0) | (matrix.sum(axis=0) > 0)
        if not occurring.any():
            return float("nan")
        figure = {"precision": precision, "recall": recall, "f1": f1}[metric]
        return float(np.mean(figure[occurring]))

    # --- a checkpoint's -----------------------------------------------------------------
    def state(self) -> dict[str, np.ndarray]:
        out = {f"sum_{m}": np.asarray([total, count], np.float64)
               for m, (total, count) in self.sums.items()}
        out["classes"] = np.asarray(self.classes, np.int64)
        for key in self.parts:
            if self.parts[key]:
                out[key] = self._joined(key)
        return out

    def restore(self, state: Mapping[str, np.ndarray]) -> None:
        """What ``state`` gave; its arrays are checked against each other (a checkpoint is
        untrusted), a ``MetricError`` saying what does not fit."""
        for m in self.sums:
            pair = np.asarray(state.get(f"sum_{m}", np.zeros(2)), np.float64).reshape(-1)
            if pair.shape != (2,) or not np.isfinite(pair[1]) or pair[1] < 0:
                raise MetricError(f"sum_{m}: not a (sum, count) pair")
            self.sums[m] = [float(pair[0]), int(pair[1])]
        self.classes = int(np.asarray(state.get("classes", 0)))
        rows = {}
        for key in self.parts:
            value = None if state.get(key) is None else np.asarray(state[key])
            integer = key in ("labels", "predicted")
            if value is not None and (value.ndim not in (1, 2) or value.dtype.kind not in (
                    "iu" if integer else "fiu")):
                raise MetricError(f"{key}: an array of shape {value.shape}, dtype "
                                  f"{value.dtype}, which it cannot be")
            if value is not None:
                value = value.astype(np.int64 if integer else np.float64)
            self.parts[key] = [] if value is None else [value]
            rows[key] = 0 if value is None else len(value)
        if self.classes < 0 or len({rows["labels"], rows["predicted"]}) != 1 or (
                self.scored and rows["scores"] != rows["labels"]) or \
                rows["targets"] != rows["predictions"]:
            raise MetricError("the collected labels, predictions and scores differ in rows")
        labels, predicted = self._joined("labels"), self._joined("predicted")
        if labels.size and (labels.min() < 0 or max(labels.max(), predicted.max())
                            >= max(self.classes, 1) or predicted.min() < 0):
            raise MetricError(f"collected classes outside 0..{self.classes - 1}")


def _per_class(matrix: np.ndarray) -> tuple[np.ndarray, ...]:
    true_positive = np.diag(matrix).astype(np.float64)
    predicted = matrix.sum(axis=0).astype(np.float64)
    support = matrix.sum(axis=1)
    actual = support.astype(np.float64)
    precision = _ratio(true_positive, predicted)
    recall = _ratio(true_positive, actual)
    f1 = _ratio(2 * true_positive, predicted + actual)
    return precision, recall, f1, support


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (scikit-learn's zero_division)."""
    out = np.zeros_like(numerator)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def confusion_matrix(labels: np.ndarray, predicted: np.ndarray, classes: int) -> np.ndarray:
    """Counts of (label, predicted class) pairs, ``[classes, classes]``."""
    flat = labels.astype(np.int64) * classes + predicted.astype(np.int64)
    return np.bincount(flat, minlength=classes * classes).reshape(classes, classes)


def roc_auc(labels: np.ndarray, scores: np.ndarray, classes: int, binary: bool) -> float:
    """ROC AUC of ``scores`` against ``labels``: binary (``binary``, or two classes: the
    second class's probability) or the one-vs-rest macro average over the classes present."""
    if labels.size == 0 or np.unique(labels).size < 2:
        return float("nan")
    if binary:
        return _binary_auc(labels == 1, scores)
    if classes == 2:
        return _binary_auc(labels == 1, scores[:, 1])
    present = np.unique(labels)
    return float(np.mean([_binary_auc(labels == c, scores[:, c]) for c in present]))


def _binary_auc(positive: np.ndarray, scores: np.ndarray) -> float:
    """The area under the ROC curve: the Mann-Whitney statistic, ties counted one half
    (what the trapezoidal area of scikit-learn's curve equals)."""
    n_pos = int(np.count_nonzero(positive))
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = _average_ranks(scores)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of ``values``, tied values sharing their mean rank."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts = np.concatenate(([0], np.flatnonzero(ordered[1:] != ordered[:-1]) + 1))
    ends = np.concatenate((starts[1:], [values.size]))
    ranks = np.empty(values.size, np.float64)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def r2(targets: np.ndarray, predictions: np.ndarray) -> float:
    """The coefficient of determination of each output (a column), averaged."""
    if targets.shape[0] < 2:
        return float("nan")
    residual = np.sum((targets - predictions) ** 2, axis=0)
    total = np.sum((targets - targets.mean(axis=0)) ** 2, axis=0)
    score = np.where(total > 0, 1.0 - residual / np.where(total > 0, total, 1.0),
                     np.where(residual == 0, 1.0, 0.0))
    return float(np.mean(score))
