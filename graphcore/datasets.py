"""``graphcore.datasets``: where Chainer scripts import datasets from (they live in
``graphcore.training.datasets``)."""

from graphcore.training.datasets import (  # noqa: F401
    DatasetMixin,
    DictDataset,
    SubDataset,
    TupleDataset,
    split_dataset,
    split_dataset_random,
)
