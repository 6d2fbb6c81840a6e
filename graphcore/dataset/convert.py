"""``graphcore.dataset.convert``: Chainer's module path of ``concat_examples``."""

from graphcore.training.convert import concat_examples, to_device  # noqa: F401
