"""Output layers for large vocabularies (word2vec): negative sampling, BlackOut and the
binary hierarchical softmax, as Chainer computes them. Composites of registered ops
(``embed_id``, ``mul``, ``sum``, ``softplus``, ``exp``, ``log``), so gradients, double backprop
and static mode come from those.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from graphcore.backend import CpuDevice
from graphcore.ops.activation import softplus
from graphcore.ops.array import broadcast_to, reshape
from graphcore.ops.embed import embed_id
from graphcore.ops.indexing import get_item
from graphcore.ops.loss import log_sum_exp
from graphcore.ops.math import exp, log
from graphcore.ops.reduction import sum as _sum
from graphcore.variable import as_array, as_variable

__all__ = ["TreePaths", "WalkerSampler", "black_out", "hierarchical_softmax_loss", "huffman_tree",
           "negative_sampling"]


def _scores(x, W, ids: np.ndarray):
    """``scores[i, k] = x[i] . W[ids[i, k]]`` for ids of shape (B, K)."""
    x = as_variable(x)
    w = embed_id(ids, W)  # (B, K, D)
    xb = broadcast_to(reshape(x, (x.shape[0], 1, x.shape[1])), w.shape)
    return _sum(w * xb, axis=2)


def negative_sampling(x, t, W, sampler: Callable[[tuple[int, ...]], np.ndarray],
                      sample_size: int, reduce: str = "sum", return_samples: bool = False):
    """Chainer's ``F.negative_sampling``: for each row, ``-log sigmoid(x . W[t])`` plus
    ``-log sigmoid(-x . W[s])`` over ``sample_size`` ids ``s`` drawn by ``sampler(shape)``.
    Rows whose label is -1 are ignored. ``reduce='sum'`` (a scalar) or ``'no'`` (one per row).
    """
    if reduce not in ("sum", "no"):
        raise ValueError(f"negative_sampling: reduce must be 'sum' or 'no', got {reduce!r}")
    t = np.asarray(as_array(t))
    batch = len(t)
    samples = np.empty((batch, sample_size + 1), np.int32)
    samples[:, 0] = t
    samples[:, 1:] = sampler((batch, sample_size))
    ignore = t == -1
    ids = np.where(ignore[:, None], 0, samples)
    sign = np.ones(ids.shape, as_variable(x).dtype)
    sign[:, 0] = -1  # softplus(-s) = -log sigmoid(s) for the true word
    per_row = _sum(softplus(_scores(x, W, ids) * sign), axis=1)
    if ignore.any():
        per_row = per_row * (~ignore).astype(per_row.dtype)
    loss = _sum(per_row) if reduce == "sum" else per_row
    return (loss, samples) if return_samples else loss


def black_out(x, t, W, samples, reduce: str = "mean"):
    """Chainer's ``F.black_out`` (Ji et al., 2016): per row, with ``p`` the softmax of the
    scores ``x . W[w]`` over the true word ``t`` and the sampled words ``samples`` (B, S),
    ``-(log p(t) + sum_s log(1 - p(s)))``; ``reduce='mean'`` averages over the batch, ``'no'``
    gives one loss per row."""
    if reduce not in ("mean", "no"):
        raise ValueError(f"black_out: reduce must be 'mean' or 'no', got {reduce!r}")
    t = np.asarray(as_array(t))
    samples = np.asarray(as_array(samples))
    if t.ndim != 1 or samples.ndim != 2 or len(samples) != len(t):
        raise ValueError(f"black_out: expected labels (B,) and samples (B, S), got {t.shape} "
                         f"and {samples.shape}")
    scores = _scores(x, W, np.concatenate([t[:, None], samples], axis=1))  # (B, 1 + S)
    log_z = log_sum_exp(scores, axis=1)
    batch, width = scores.shape
    log_p = scores - broadcast_to(reshape(log_z, (batch, 1)), (batch, width))
    positive = reshape(get_item(log_p, (slice(None), slice(0, 1))), (batch,))
    negatives = _sum(log(1 - exp(get_item(log_p, (slice(None), slice(1, None))))), axis=1)
    loss = -(positive + negatives)
    return _sum(loss) * (1.0 / batch) if reduce == "mean" else loss


class WalkerSampler:
    """Draws ids with probabilities proportional to ``weights`` (numpy's global generator).
    It lives on the host, as every array here does (``device``)."""

    device = CpuDevice()

    def __init__(self, weights: np.ndarray) -> None:
        weights = np.asarray(weights, np.float64)
        if weights.ndim != 1 or len(weights) == 0 or (weights < 0).any() or weights.sum() <= 0:
            raise ValueError("sampler: weights must be a non-empty 1-d array of non-negative "
                             "numbers with a positive sum")
        self.p = weights / weights.sum()

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.random.choice(len(self.p), size=shape, p=self.p).astype(np.int32)


def huffman_tree(word_counts: Mapping[Any, float]) -> Any:
    """Chainer's ``create_huffman_tree``: nested pairs of words, the rarest merged first
    (ties broken by insertion order)."""
    if not word_counts:
        raise ValueError("huffman_tree: empty vocabulary")
    heap = [(count, uid, word) for uid, (word, count) in enumerate(word_counts.items())]
    heapq.heapify(heap)
    while len(heap) >= 2:
        c1, id1, w1 = heapq.heappop(heap)
        c2, id2, w2 = heapq.heappop(heap)
        heapq.heappush(heap, (c1 + c2, min(id1, id2), (w1, w2)))
    return heap[0][2]


class TreePaths:
    """A binary tree of words as ``hierarchical_softmax_loss`` reads it: ``n_internal`` inner
    nodes, and per word its ``paths`` and ``codes`` (see ``tree_paths``)."""

    def __init__(self, tree: Any) -> None:
        self.n_internal, self.paths, self.codes = tree_paths(tree)


def tree_paths(tree: Any) -> tuple[int, np.ndarray, np.ndarray]:
    """``(n_internal, paths, codes)``: for word ``w``, ``paths[w]`` lists the internal nodes
    (numbered in pre-order, as Chainer's parser does) from the root, ``codes[w]`` is +1 where
    the path goes left and -1 where it goes right, 0 past the path's end."""
    found: dict[int, tuple[list[int], list[float]]] = {}
    counter = [0]

    def walk(node: Any, path: list[int], code: list[float]) -> None:
        if isinstance(node, tuple):
            if len(node) != 2:
                raise ValueError("hierarchical softmax: every inner node must be a pair")
            index = counter[0]
            counter[0] += 1
            walk(node[0], path + [index], code + [1.0])
            walk(node[1], path + [index], code + [-1.0])
        else:
            word = int(node)
            if word < 0 or word in found:
                raise ValueError(f"hierarchical softmax: word {word} is negative or repeated")
            found[word] = (path, code)

    walk(tree, [], [])
    n_words = max(found) + 1
    depth = max(len(p) for p, _ in found.values())
    paths = np.zeros((n_words, max(depth, 1)), np.int32)
    codes = np.zeros((n_words, max(depth, 1)), np.float32)
    for word, (path, code) in found.items():
        paths[word, :len(path)] = path
        codes[word, :len(code)] = code
    return counter[0], paths, codes


def hierarchical_softmax_loss(x, t, W, paths: np.ndarray, codes: np.ndarray):
    """Sum over rows of ``-log p(t | x)`` along ``t``'s path: ``softplus(-code * x . W[node])``
    per step (Chainer's ``BinaryHierarchicalSoftmax``)."""
    t = np.asarray(as_array(t))
    if t.min(initial=0) < 0 or t.max(initial=0) >= len(paths):
        raise ValueError(f"hierarchical softmax: labels must be in [0, {len(paths)})")
    x = as_variable(x)
    code = codes[t].astype(x.dtype)
    steps = softplus(_scores(x, W, paths[t]) * -code)
    return _sum(steps * (code != 0).astype(x.dtype))
