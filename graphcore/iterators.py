"""``graphcore.iterators``: where Chainer scripts import iterators from."""

from graphcore.training.iterators import SerialIterator, ShuffleOrderSampler  # noqa: F401
