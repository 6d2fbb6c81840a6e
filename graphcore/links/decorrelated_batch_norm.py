"""``DecorrelatedBatchNormalization``: ZCA whitening of groups of channels by batch
statistics while training, by running averages otherwise (``graphcore.config.train``)."""

from __future__ import annotations

import numpy as np

from graphcore.config import config
from graphcore.errors import ArgumentTypeError
from graphcore.links.link import Link
from graphcore.ops.normalization_decorrelated import (
    decorrelated_batch_normalization,
    fixed_decorrelated_batch_normalization,
)


class DecorrelatedBatchNormalization(Link):
    """Chainer's ``L.DecorrelatedBatchNormalization(size, groups=16, decay=0.9, eps=2e-5,
    dtype=float32)``: persistent ``avg_mean`` ``(groups, size // groups)`` (starts at 0),
    ``avg_projection`` ``(groups, C, C)`` (starts as identities) and ``N`` (batches seen).
    ``finetune=True`` keeps a cumulative average instead of an exponential one."""

    def __init__(self, size: int, groups: int = 16, decay: float = 0.9, eps: float = 2e-5,
                 dtype=np.float32) -> None:
        super().__init__()
        channels = size // groups
        self.add_persistent("avg_mean", np.zeros((groups, channels), dtype=dtype))
        self.add_persistent("avg_projection",
                            np.broadcast_to(np.eye(channels, dtype=dtype),
                                            (groups, channels, channels)).copy())
        self.add_persistent("N", 0)
        self.decay = decay
        self.eps = eps
        self.groups = groups

    def forward(self, x, **kwargs):
        finetune = kwargs.pop("finetune", False)
        if kwargs:
            raise ArgumentTypeError(f"DecorrelatedBatchNormalization: got unexpected keyword "
                                    f"argument(s) {', '.join(sorted(kwargs))}")
        if not config.train:
            return fixed_decorrelated_batch_normalization(x, self.avg_mean, self.avg_projection,
                                                          groups=self.groups)
        if finetune:
            self.N += 1
            decay = 1.0 - 1.0 / self.N
        else:
            decay = self.decay
        running_mean, running_projection = self.avg_mean, self.avg_projection
        if config.in_recomputing:  # a recomputed forward must not count the batch twice
            if finetune:
                self.N -= 1
            running_mean = running_projection = None
        return decorrelated_batch_normalization(
            x, groups=self.groups, eps=self.eps, running_mean=running_mean,
            running_projection=running_projection, decay=decay)

    def start_finetuning(self) -> None:
        """Reset the batch count before a ``finetune=True`` pass over the data."""
        self.N = 0
