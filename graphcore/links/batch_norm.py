"""``BatchNormalization``: normalize by batch statistics while training, by running averages
otherwise (``graphcore.config.train``).
"""

from __future__ import annotations

import numpy as np

from graphcore import initializers
from graphcore.attributes import Attr, check_arguments
from graphcore.config import config
from graphcore.errors import ArgumentTypeError, ShapeError
from graphcore.functions import batch_normalization, fixed_batch_normalization
from graphcore.links.link import Link
from graphcore.variable import Parameter, Variable, as_array

_ARGS = {"size": Attr((int, type(None)), low=1), "decay": Attr(float, low=0.0, high=1.0),
         "eps": Attr(float, low=0.0), "use_gamma": Attr(bool), "use_beta": Attr(bool)}


class BatchNormalization(Link):
    """Batch normalization over every axis but axis 1 (the channel axis), Chainer's layer.

    Parameters ``gamma`` (scale, starts at 1) and ``beta`` (shift, starts at 0); persistent
    values ``avg_mean`` and ``avg_var`` (starting at 0 and 1) and ``N`` (batches seen).  Each
    training call moves the averages towards the batch's mean and *unbiased* variance::

        avg_mean = decay * avg_mean + (1 - decay) * mean
        avg_var  = decay * avg_var  + (1 - decay) * var * m / (m - 1)   # m values per channel

    With ``config.train`` False the layer uses the averages instead (``finetune=True`` keeps a
    cumulative average instead of an exponential one).  ``size=None`` takes the size from the
    first input.
    """

    def __init__(self, size: int | None = None, decay: float = 0.9, eps: float = 2e-5,
                 dtype=None, use_gamma: bool = True, use_beta: bool = True,
                 initial_gamma=None, initial_beta=None) -> None:
        super().__init__()
        check_arguments(type(self).__name__, _ARGS, size=size, decay=decay, eps=eps,
                        use_gamma=use_gamma, use_beta=use_beta)
        self.decay = decay
        self.eps = eps
        self._dtype = np.dtype(dtype or config.dtype)
        self.add_persistent("avg_mean", None)
        self.add_persistent("avg_var", None)
        self.add_persistent("N", 0)
        with self.init_scope():
            self.gamma = self._param(1.0, initial_gamma) if use_gamma else None
            self.beta = self._param(0.0, initial_beta) if use_beta else None
        if size is not None:
            self._initialize(size)

    def _param(self, default: float, initial) -> Parameter:
        if initial is None or isinstance(initial, int | float):
            initial = initializers.Constant(default if initial is None else initial, self._dtype)
        return Parameter(initial)

    def _initialize(self, size: int) -> None:
        for p in (self.gamma, self.beta):
            if p is not None and p.array is None:
                p.initialize((size,))
        self.avg_mean = np.zeros(size, self._dtype)
        self.avg_var = np.ones(size, self._dtype)

    def forward(self, x, finetune: bool = False):
        if self.avg_mean is None:
            if not isinstance(x, Variable | np.ndarray):
                raise ArgumentTypeError(f"{type(self).__name__}: input must be a Variable or a "
                                        f"numpy array, got {type(x).__name__}")
            if x.ndim < 2:
                raise ShapeError(f"{type(self).__name__}: input must have a channel axis "
                                 f"(batch, channels, ...), got shape {x.shape}")
            self._initialize(x.shape[1])
        size = self.avg_mean.shape[0]
        gamma = self.gamma if self.gamma is not None else np.ones(size, x.dtype)
        beta = self.beta if self.beta is not None else np.zeros(size, x.dtype)
        if not config.train:
            return fixed_batch_normalization(x, gamma, beta, self.avg_mean, self.avg_var,
                                             self.eps)
        if finetune:
            self.N += 1
            decay = 1.0 - 1.0 / self.N
        else:
            decay = self.decay
        self._update_averages(as_array(x), decay)
        return batch_normalization(x, gamma, beta, self.eps)

    def _update_averages(self, x: np.ndarray, decay: float) -> None:
        axes = (0,) + tuple(range(2, x.ndim))  # every axis but the channel axis
        mean = x.mean(axis=axes)
        var = x.var(axis=axes)
        m = x.size // self.avg_mean.size
        unbias = m / max(m - 1, 1)
        self.avg_mean *= decay
        self.avg_mean += (1 - decay) * mean
        self.avg_var *= decay
        self.avg_var += (1 - decay) * unbias * var

    def start_finetuning(self) -> None:
        """Reset the batch count before a ``finetune=True`` pass over the data."""
        self.N = 0
