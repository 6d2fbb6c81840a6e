"""``graphcore.dataset``: Chainer's converter and dataset base class."""

from graphcore.dataset import convert  # noqa: F401
from graphcore.dataset.convert import concat_examples, to_device  # noqa: F401
from graphcore.datasets import DatasetMixin  # noqa: F401
from graphcore.iterators import SerialIterator as _SerialIterator

Iterator = _SerialIterator  # what isinstance checks in Chainer code usually mean
