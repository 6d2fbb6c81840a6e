"""Word2vec output layers with Chainer's names: ``NegativeSampling`` and
``BinaryHierarchicalSoftmax`` (the functions are in ``graphcore.ops.sampled_losses``)."""

from __future__ import annotations

import numpy as np

from graphcore import initializers
from graphcore.links.link import Link
from graphcore.ops.sampled_losses import (
    WalkerSampler,
    hierarchical_softmax_loss,
    huffman_tree,
    negative_sampling,
    tree_paths,
)
from graphcore.variable import Parameter


class NegativeSampling(Link):
    """``loss = ns(x, t)``: negative sampling over a vocabulary of ``len(counts)`` words, the
    negatives drawn with probability proportional to ``counts ** power``. ``W`` starts at 0."""

    def __init__(self, in_size: int, counts, sample_size: int, power: float = 0.75,
                 dtype=None) -> None:
        super().__init__()
        counts = np.asarray(counts, np.float64)
        self.vocab_size = len(counts)
        self.sample_size = sample_size
        self.sampler = WalkerSampler(np.power(counts, power))
        with self.init_scope():
            self.W = Parameter(initializers.Zero(dtype), (self.vocab_size, in_size))

    def forward(self, x, t, reduce: str = "sum", return_samples: bool = False):
        return negative_sampling(x, t, self.W, self.sampler.sample, self.sample_size,
                                 reduce=reduce, return_samples=return_samples)


class BinaryHierarchicalSoftmax(Link):
    """``loss = hsm(x, t)``: ``-sum log p(t | x)`` over a binary tree of words (nested pairs;
    ``create_huffman_tree(counts)`` builds one). ``W`` has a row per inner node."""

    create_huffman_tree = staticmethod(huffman_tree)

    def __init__(self, in_size: int, tree, dtype=None) -> None:
        super().__init__()
        n_internal, self.paths, self.codes = tree_paths(tree)
        with self.init_scope():
            self.W = Parameter(initializers.Uniform(1.0, dtype), (n_internal, in_size))

    def forward(self, x, t):
        return hierarchical_softmax_loss(x, t, self.W, self.paths, self.codes)
