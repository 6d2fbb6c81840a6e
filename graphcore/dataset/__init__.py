"""``graphcore.dataset``: Chainer's converter, dataset base class and dataset cache
(``download``)."""

from graphcore import dataset_download as download  # noqa: F401  (chainer.dataset.download)
from graphcore.dataset import convert  # noqa: F401
from graphcore.dataset.convert import (  # noqa: F401
    Converter,
    concat_examples,
    converter,
    to_device,
)
from graphcore.datasets import DatasetMixin  # noqa: F401
from graphcore.iterators import SerialIterator as _SerialIterator

Iterator = _SerialIterator  # what isinstance checks in Chainer code usually mean
