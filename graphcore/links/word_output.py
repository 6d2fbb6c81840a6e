"""Output layers for large vocabularies with Chainer's names: ``NegativeSampling``,
``BlackOut`` and ``BinaryHierarchicalSoftmax`` (the functions are in
``graphcore.ops.sampled_losses``)."""

from __future__ import annotations

import numpy as np

from graphcore import initializers
from graphcore.links.link import Link
from graphcore.ops import sampled_losses
from graphcore.ops.sampled_losses import (
    TreePaths,
    WalkerSampler,
    black_out,
    hierarchical_softmax_loss,
    huffman_tree,
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
        # looked up in its module at each call, as Chainer's link does, so that a test may
        # patch the module's function
        return sampled_losses.negative_sampling(x, t, self.W, self.sampler.sample,
                                                self.sample_size, reduce=reduce,
                                                return_samples=return_samples)


class BinaryHierarchicalSoftmax(Link):
    """``loss = hsm(x, t)``: ``-sum log p(t | x)`` over a binary tree of words (nested pairs;
    ``create_huffman_tree(counts)`` builds one). ``W`` has a row per inner node."""

    create_huffman_tree = staticmethod(huffman_tree)

    def __init__(self, in_size: int, tree, dtype=None) -> None:
        super().__init__()
        self._func = TreePaths(tree)  # Chainer's attribute name for the tree's arrays
        with self.init_scope():
            self.W = Parameter(initializers.Uniform(1.0, dtype), (self._func.n_internal,
                                                                   in_size))

    @property
    def paths(self):
        return self._func.paths

    @property
    def codes(self):
        return self._func.codes

    def forward(self, x, t):
        return hierarchical_softmax_loss(x, t, self.W, self._func.paths, self._func.codes)


class BlackOut(Link):
    """``loss = bo(x, t)``: BlackOut over a vocabulary of ``len(counts)`` words, the
    ``sample_size`` negatives of each row drawn with probability proportional to ``counts``
    (or taken from ``sample_data`` when it is set). ``W`` starts as NaN, as Chainer's: set it
    or load it before use."""

    sample_data = None

    def __init__(self, in_size: int, counts, sample_size: int) -> None:
        super().__init__()
        self.sampler = WalkerSampler(np.asarray(counts, np.float64))
        self.sample_size = sample_size
        with self.init_scope():
            self.W = Parameter(initializers.NaN(), (len(counts), in_size))

    def forward(self, x, t):
        samples = self.sample_data
        if samples is None:
            samples = self.sampler.sample((x.shape[0], self.sample_size))
        return black_out(x, t, self.W, samples)
