"""Chainer's margin and robust losses: ``contrastive``, ``triplet``, ``hinge``,
``huber_loss`` and ``discriminative_margin_based_clustering_loss``, with Chainer's signatures,
checks and reductions.

Composites of registered ops (``sum``, ``relu``, ``where``, ...): their gradients, double
backprop and export come from those ops. Where a loss has a point with no derivative (the
hinge's corner, the distance at zero) the composite's gradient is the one-sided one Chainer's
own backward returns.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore.ops.activation import relu
from graphcore.ops.array import broadcast_to, reshape
from graphcore.ops.math import absolute, sqrt, where
from graphcore.ops.reduction import sum as _sum
from graphcore.variable import as_array, as_variable

__all__ = ["contrastive", "discriminative_margin_based_clustering_loss", "hinge", "huber_loss",
           "triplet"]


def _check_reduce(name: str, reduce: str, allowed: tuple[str, ...] = ("mean", "no")) -> None:
    if reduce not in allowed:
        raise ValueError(f"{name}: reduce must be one of {', '.join(map(repr, allowed))}, "
                         f"got {reduce!r}")


def _check_margin(name: str, margin: float) -> None:
    if not margin > 0:
        raise ValueError(f"{name}: margin must be positive, got {margin!r}")


def _float_input(name: str, what: str, x):
    x = as_variable(x)
    if x.dtype.kind != "f":
        raise errors.DTypeError(f"{name}: {what} must be floating point, got {x.dtype}")
    return x


def _same(name: str, first, others: dict) -> None:
    for what, x in others.items():
        if x.dtype != first.dtype or x.shape != first.shape:
            raise errors.ShapeError(f"{name}: {what} must match the first input "
                                    f"({first.shape}, {first.dtype}), got {x.shape}, {x.dtype}")


def _batch_mean(loss, reduce: str):
    """The per-example losses, or (``reduce='mean'``) their sum over the batch size."""
    if reduce == "no":
        return loss
    return _sum(loss) * (1.0 / loss.shape[0])


def contrastive(x0, x1, y, margin: float = 1, reduce: str = "mean"):
    """Chainer's ``F.contrastive``: per pair of rows ``(y d^2 + (1 - y) max(margin - d, 0)^2)
    / 2`` with ``d = ||x0 - x1||``; ``y`` is 1 for a similar pair, 0 for a dissimilar one.
    ``x0``, ``x1``: ``(N, K)``; ``y``: ``(N,)`` integers. ``reduce='mean'`` averages over N,
    ``'no'`` gives the N losses."""
    _check_margin("contrastive", margin)
    _check_reduce("contrastive", reduce)
    x0 = _float_input("contrastive", "x0", x0)
    x1 = as_variable(x1)
    _same("contrastive", x0, {"x1": x1})
    labels = np.asarray(as_array(y))
    if labels.dtype.kind not in "iu":
        raise errors.DTypeError(f"contrastive: labels must be integers, got {labels.dtype}")
    if x0.ndim != 2 or labels.shape != x0.shape[:1] or x0.shape[0] == 0:
        raise errors.ShapeError(f"contrastive: expected x0, x1 of shape (N, K) with N > 0 and "
                                f"labels (N,), got {x0.shape} and {labels.shape}")
    diff = x0 - x1
    dist_sq = _sum(diff * diff, axis=1)
    # sqrt has no derivative at 0: take it only where the distance is positive, so a pair of
    # equal rows gets the zero gradient Chainer's backward gives it
    positive = dist_sq.array > 0
    ones = np.ones(dist_sq.shape, dist_sq.dtype)
    dist = where(positive, sqrt(where(positive, dist_sq, ones)), ones * 0)
    short = relu(margin - dist)
    similar = labels.astype(x0.dtype)
    loss = (dist_sq * similar + short * short * (1 - similar)) * 0.5
    return _batch_mean(loss, reduce)


def triplet(anchor, positive, negative, margin: float = 0.2, reduce: str = "mean"):
    """Chainer's ``F.triplet``: per row ``max(||a - p||^2 - ||a - n||^2 + margin, 0)``, averaged
    over the batch (``reduce='mean'``) or not (``'no'``). All three inputs ``(N, K)``."""
    _check_margin("triplet", margin)
    _check_reduce("triplet", reduce)
    anchor = _float_input("triplet", "anchor", anchor)
    positive, negative = as_variable(positive), as_variable(negative)
    _same("triplet", anchor, {"positive": positive, "negative": negative})
    if anchor.ndim < 1 or anchor.shape[0] == 0:
        raise errors.ShapeError(f"triplet: expected a non-empty batch, got {anchor.shape}")
    to_positive = anchor - positive
    to_negative = anchor - negative
    gap = _sum(to_positive * to_positive - to_negative * to_negative, axis=1) + margin
    return _batch_mean(relu(gap), reduce)


def hinge(x, t, norm: str = "L1", reduce: str = "mean"):
    """Chainer's ``F.hinge`` (one-vs-rest): ``max(0, 1 - x[i, t_i])`` for the true class and
    ``max(0, 1 + x[i, j])`` for the others, squared for ``norm='L2'``; ``reduce='mean'`` sums
    and divides by N, ``'no'`` keeps the ``(N, K)`` terms. ``x``: ``(N, K)``, ``t``: ``(N,)``."""
    if norm not in ("L1", "L2"):
        raise NotImplementedError(f"hinge: norm must be 'L1' or 'L2', got {norm!r}")
    _check_reduce("hinge", reduce)
    x = _float_input("hinge", "x", x)
    labels = np.asarray(as_array(t))
    if labels.dtype.kind not in "iu":
        raise errors.DTypeError(f"hinge: labels must be integers, got {labels.dtype}")
    if x.ndim != 2 or labels.shape != x.shape[:1]:
        raise errors.ShapeError(f"hinge: expected x of shape (N, K) and labels (N,), got "
                                f"{x.shape} and {labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() >= x.shape[1]):
        raise errors.ShapeError(f"hinge: labels must be in [0, {x.shape[1]}), got "
                                f"{labels.min()}..{labels.max()}")
    sign = np.ones(x.shape, x.dtype)
    sign[np.arange(len(labels)), labels] = -1
    margin = relu(x * sign + 1)
    loss = margin if norm == "L1" else margin * margin
    if reduce == "no":
        return loss
    return _sum(loss) * (1.0 / x.shape[0])


def huber_loss(x, t, delta: float, reduce: str = "sum_along_second_axis"):
    """Chainer's ``F.huber_loss``: elementwise ``d^2 / 2`` where ``|d| <= delta``, else
    ``delta (|d| - delta / 2)``, with ``d = x - t``; ``reduce='sum_along_second_axis'`` sums
    over axis 1, ``'no'`` keeps every element."""
    _check_reduce("huber_loss", reduce, ("sum_along_second_axis", "no"))
    x = _float_input("huber_loss", "x", x)
    t = as_variable(t)
    _same("huber_loss", x, {"t": t})
    diff = x - t
    size = absolute(diff)
    inside = size.array <= delta
    loss = where(inside, diff * diff * 0.5, (size - 0.5 * delta) * delta)
    if reduce == "no":
        return loss
    if x.ndim < 2:
        raise errors.ShapeError(f"huber_loss: reduce='sum_along_second_axis' needs at least 2 "
                                f"axes, got {x.shape}")
    return _sum(loss, axis=1)


def discriminative_margin_based_clustering_loss(embeddings, labels, delta_v: float,
                                                delta_d: float, max_embedding_dim: int,
                                                norm: int = 1, alpha: float = 1.0,
                                                beta: float = 1.0, gamma: float = 0.001):
    """Chainer's discriminative loss for instance segmentation (De Brabandere et al., 2017):
    ``(alpha * l_var, beta * l_dist, gamma * l_reg)`` for ``embeddings`` (N, C, H, W) and
    ``labels`` (N, H, W), where cluster ``k`` (1 to ``max_embedding_dim``, which must equal
    C) is the pixels labelled ``k``: ``l_var`` pulls each embedding to within ``delta_v`` of its
    cluster's mean, ``l_dist`` pushes the means of two clusters ``2 delta_d`` apart, ``l_reg``
    keeps the means small; distances in the L1 (``norm=1``) or L2 (``norm=2``) norm."""
    if max_embedding_dim <= 0:
        raise ValueError("discriminative_margin_based_clustering_loss: max_embedding_dim must "
                         f"be positive, got {max_embedding_dim}")
    if norm == 1:
        def distance(x, axis):
            return _sum(absolute(x), axis=axis)
    elif norm == 2:
        def distance(x, axis):
            return sqrt(_sum(x * x, axis=axis))
    else:
        raise ValueError("discriminative_margin_based_clustering_loss: norm must be 1 or 2, "
                         f"got {norm!r}")
    embeddings = _float_input("discriminative_margin_based_clustering_loss", "embeddings",
                              embeddings)
    labels = np.asarray(as_array(labels))
    if embeddings.ndim != 4 or embeddings.shape[1] != max_embedding_dim or \
            labels.shape != embeddings.shape[:1] + embeddings.shape[2:]:
        raise errors.ShapeError("discriminative_margin_based_clustering_loss: expected "
                                f"embeddings (N, {max_embedding_dim}, H, W) and labels "
                                f"(N, H, W), got {embeddings.shape} and {labels.shape}")
    clusters = max_embedding_dim
    n, channels, height, width = embeddings.shape
    full = (clusters, n, channels, height, width)
    masks = np.stack([labels == k + 1 for k in range(clusters)])[:, :, None]  # (K, N, 1, H, W)
    masks = masks.astype(embeddings.dtype)
    emb = broadcast_to(reshape(embeddings, (1,) + embeddings.shape), full)
    sizes = np.maximum(masks.sum(axis=(2, 3, 4)), 1)[:, :, None]  # pixels per cluster, (K, N, 1)
    means = _sum(emb * masks, axis=(3, 4)) * (1 / sizes)  # (K, N, C)

    l_reg = _sum(distance(means, (1, 2))) * (1.0 / (clusters * n))
    spread = (broadcast_to(reshape(means, means.shape + (1, 1)), full) - emb) * masks
    pull = relu(distance(spread, 2) - delta_v)
    l_var = _sum(pull * pull, axis=(1, 2, 3)) * (1 / np.maximum(masks.sum(axis=(1, 2, 3, 4)), 1))
    l_var = _sum(l_var) * (1.0 / clusters)

    l_dist = None
    pairs = 0
    for a in range(clusters):
        for b in range(a + 1, clusters):
            push = relu(2 * delta_d - distance(means[a] - means[b], 1))
            term = _sum(push * push)
            l_dist = term if l_dist is None else l_dist + term
            pairs += 1
    if l_dist is None:
        l_dist = _sum(means) * 0.0
    l_dist = l_dist * (1.0 / max(pairs * n, 1))
    return l_var * alpha, l_dist * beta, l_reg * gamma
