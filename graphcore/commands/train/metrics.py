"""Metrics of a spec's training: computed from the two arrays the loss step takes
(predictions ``y`` and targets ``t``), as sums so that means over batches of different sizes
are exact.

- ``accuracy``: ``argmax(y, axis=1) == t`` over integer labels (label -1 is ignored, as
  ``softmax_cross_entropy`` ignores it);
- ``mse`` / ``mae``: mean squared / absolute difference of ``y`` and ``t``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graphcore.variable import Variable


class MetricError(ValueError):
    """A metric does not apply to what the loss compares (say which, and why)."""


def _array(value: Any) -> np.ndarray:
    return np.asarray(value.array if isinstance(value, Variable) else value)


def metric_sums(name: str, loss_inputs: Sequence[tuple[Any, ...]]) -> tuple[float, int]:
    """(sum, count) of metric ``name`` over examples' loss inputs."""
    total, count = 0.0, 0
    for args in loss_inputs:
        if len(args) < 2:
            raise MetricError(f"metric {name}: the loss takes {len(args)} input; a metric "
                              "compares the loss's first two inputs (predictions, targets)")
        y, t = _array(args[0]), _array(args[1])
        if name == "accuracy":
            if t.dtype.kind not in "iu":
                raise MetricError("metric accuracy needs integer labels as the loss's second "
                                  f"input, got {t.dtype}")
            labels = t.reshape(-1)
            if y.ndim != 2 or y.shape[0] != labels.shape[0]:
                raise MetricError(f"metric accuracy: predictions of shape {y.shape} do not "
                                  f"match labels of shape {t.shape} (it needs [N, classes] "
                                  "and [N])")
            predicted = y.argmax(axis=1)
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
