"""Chainer's linear-chain conditional random field: ``crf1d`` (the negative log-likelihood of
label sequences) and ``argmax_crf1d`` (the Viterbi path and its score).

Both take time-major sequences as ``transpose_sequence`` makes them: ``xs[t]`` is ``(B_t, K)``
with ``B_0 >= B_1 >= ...`` (the examples sorted by length, longest first); ``cost[i, j]`` is
the score of label ``j`` following label ``i``. Composites of registered ops (``split_axis``,
``concat``, ``get_item``, ``exp``, ``log``, ``max``), so gradients and double backprop come
from those; each step costs a handful of ops, ``B_t K^2`` numbers.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore.ops.array import broadcast_to, concat, reshape, split_axis
from graphcore.ops.indexing import get_item
from graphcore.ops.loss import log_sum_exp
from graphcore.ops.reduction import max as _max
from graphcore.ops.reduction import sum as _sum
from graphcore.variable import as_array, as_variable

__all__ = ["argmax_crf1d", "crf1d"]


def _pair_scores(alpha, cost):
    """``alpha[b, i] + cost[i, j]`` as ``(B, K, K)``."""
    batch, labels = alpha.shape
    shape = (batch, labels, labels)
    return (broadcast_to(reshape(alpha, (batch, labels, 1)), shape)
            + broadcast_to(reshape(cost, (1, labels, labels)), shape))


def _check(name: str, cost, xs) -> None:
    if len(xs) == 0:
        raise errors.ShapeError(f"{name}: xs has no steps")
    if cost.ndim != 2 or cost.shape[0] != cost.shape[1]:
        raise errors.ShapeError(f"{name}: cost must be a square (K, K) matrix, got {cost.shape}")
    previous = None
    for t, x in enumerate(xs):
        if x.ndim != 2 or x.shape[1] != cost.shape[0]:
            raise errors.ShapeError(f"{name}: xs[{t}] must be (B, {cost.shape[0]}), got "
                                    f"{x.shape}")
        if previous is not None and x.shape[0] > previous:
            raise errors.ShapeError(f"{name}: batch sizes must not grow along the sequence "
                                    f"(sorted by length, as transpose_sequence gives), "
                                    f"xs[{t}] has {x.shape[0]} after {previous}")
        previous = x.shape[0]


def crf1d(cost, xs, ys, reduce: str = "mean"):
    """Chainer's ``F.crf1d``: per example ``log Z - score(ys)``, where ``score`` sums the
    unary scores ``xs[t][b, ys[t][b]]`` and the transition costs ``cost[ys[t-1], ys[t]]`` and
    ``Z`` sums ``exp(score)`` over every label sequence of the example's length.
    ``reduce='mean'`` sums over the examples and divides by their number, ``'no'`` gives one
    loss per example (in ``xs[0]``'s order)."""
    if reduce not in ("mean", "no"):
        raise ValueError(f"crf1d: reduce must be 'mean' or 'no', got {reduce!r}")
    cost = as_variable(cost)
    xs = [as_variable(x) for x in xs]
    ys = [np.asarray(as_array(y)) for y in ys]
    _check("crf1d", cost, xs)
    if len(ys) != len(xs) or any(y.shape != x.shape[:1] or y.dtype.kind not in "iu"
                                 for x, y in zip(xs, ys, strict=False)):
        raise errors.ShapeError("crf1d: ys must hold one integer label vector (B_t,) per step "
                                "of xs")
    n_batch = xs[0].shape[0]

    alpha = xs[0]
    finished = []  # the forward scores of the examples that ended, in the order they ended
    for x in xs[1:]:
        batch = x.shape[0]
        if alpha.shape[0] > batch:
            alpha, rest = split_axis(alpha, [batch], axis=0)
            finished.append(rest)
        alpha = log_sum_exp(_pair_scores(alpha, cost), axis=1) + x
    if finished:
        alpha = concat([alpha] + finished[::-1], axis=0)
    log_z = log_sum_exp(alpha, axis=1)

    score = get_item(xs[0], (np.arange(n_batch), ys[0]))
    done = []
    for x, y, y_prev in zip(xs[1:], ys[1:], ys[:-1], strict=True):
        batch = x.shape[0]
        if score.shape[0] > batch:
            score, rest = split_axis(score, [batch], axis=0)
            done.append(rest)
        score = (score + get_item(x, (np.arange(batch), y))
                 + get_item(cost, (y_prev[:batch], y)))
    if done:
        score = concat([score] + done[::-1], axis=0)
    loss = log_z - score
    if reduce == "mean":
        return _sum(loss) * (1.0 / n_batch)
    return loss


def argmax_crf1d(cost, xs):
    """Chainer's ``argmax_crf1d``: ``(score, path)``, the highest sequence score per example
    (a Variable, ``(B_0,)``) and the labels reaching it, one integer array ``(B_t,)`` per step."""
    cost = as_variable(cost)
    xs = [as_variable(x) for x in xs]
    _check("argmax_crf1d", cost, xs)
    alpha = xs[0]
    finished = []  # per step: the scores of the examples that ended before it, or None
    best_previous = []
    for x in xs[1:]:
        batch = x.shape[0]
        if alpha.shape[0] > batch:
            alpha, rest = split_axis(alpha, [batch], axis=0)
            finished.append(rest)
        else:
            finished.append(None)
        scores = _pair_scores(alpha, cost)
        best_previous.append(scores.array.argmax(axis=1))
        alpha = _max(scores, axis=1) + x
    labels = alpha.array.argmax(axis=1)
    path = [labels]
    for previous, rest in zip(best_previous[::-1], finished[::-1], strict=True):
        labels = previous[np.arange(len(labels)), labels]
        if rest is not None:
            labels = np.concatenate([labels, rest.array.argmax(axis=1)])
        path.append(labels)
    path.reverse()
    score = _max(alpha, axis=1)
    for rest in finished[::-1]:
        if rest is not None:
            score = concat([score, _max(rest, axis=1)], axis=0)
    return score, path
