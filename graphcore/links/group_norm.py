"""``GroupNormalization``: normalize each group of channels of each sample, then scale and
shift per channel."""

from __future__ import annotations

import numpy as np

from graphcore import initializers
from graphcore.config import get_dtype
from graphcore.errors import ArgumentTypeError, ShapeError
from graphcore.links.link import Link
from graphcore.ops.normalization_group import group_normalization
from graphcore.variable import Parameter


def _initializer(initial, default, dtype):
    if initial is None:
        initial = default
    if isinstance(initial, np.ndarray) or (np.isscalar(initial)
                                           and not isinstance(initial, str | bytes)):
        return initializers.Constant(initial, dtype)
    if not callable(initial):
        raise ArgumentTypeError(f"GroupNormalization: an initial value must be a number, an "
                                f"array or an initializer, got {type(initial).__name__}")
    initial.dtype = dtype
    return initial


class GroupNormalization(Link):
    """Chainer's ``L.GroupNormalization(groups, size=None, eps=1e-5, initial_gamma=None,
    initial_beta=None)``: parameters ``gamma`` (starts at 1) and ``beta`` (starts at 0) of
    shape ``(size,)``, in ``config.dtype`` (float32 under ``mixed16``); ``size=None`` takes
    the channel count from the first input's axis 1."""

    def __init__(self, groups: int, size: int | None = None, eps: float = 1e-5,
                 initial_gamma=None, initial_beta=None) -> None:
        super().__init__()
        dtype = get_dtype(None, map_mixed16=np.float32)
        self.groups = groups
        self.eps = eps
        with self.init_scope():
            self.gamma = Parameter(_initializer(initial_gamma, 1, dtype))
            self.beta = Parameter(_initializer(initial_beta, 0, dtype))
        if size is not None:
            self._initialize(size)

    def _initialize(self, size: int) -> None:
        self.gamma.initialize(size)
        self.beta.initialize(size)

    def forward(self, x):
        if self.gamma.array is None:
            if x.ndim < 2:
                raise ShapeError("GroupNormalization: input must have at least 2 dimensions, "
                                 f"batch and channels, got shape {x.shape}")
            self._initialize(x.shape[1])
        return group_normalization(x, self.groups, self.gamma, self.beta, self.eps)
