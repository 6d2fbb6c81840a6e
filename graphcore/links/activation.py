"""Activation layers with parameters, Chainer's names: ``PReLU`` (a learned negative slope),
``Swish`` (a learned ``beta``), ``Maxout`` (a linear layer then the maximum over pools of
units) and ``SimplifiedDropconnect`` (a linear layer whose weights are dropped at random)."""

from __future__ import annotations

import numpy as np

from graphcore import initializers
from graphcore.links.linear import Linear
from graphcore.links.link import Chain, Link
from graphcore.ops.activation import maxout, prelu, swish
from graphcore.ops.noise import simplified_dropconnect
from graphcore.variable import Parameter


class PReLU(Link):
    """``F.prelu`` with its slope ``W`` (of ``shape``, initially ``init``) a parameter."""

    def __init__(self, shape=(), init=0.25) -> None:
        super().__init__()
        with self.init_scope():
            self.W = Parameter(init, shape)

    def forward(self, x):
        return prelu(x, self.W)


class Swish(Link):
    """``F.swish`` with ``beta`` (of ``beta_shape``, initially ``beta_init``) a parameter;
    ``beta_shape`` None takes the input's shape after the batch axis on the first call."""

    def __init__(self, beta_shape, beta_init=1.0) -> None:
        super().__init__()
        with self.init_scope():
            if beta_shape is not None:
                self.beta = Parameter(beta_init, beta_shape)
            else:
                self.beta = Parameter(initializers.Constant(beta_init))

    def forward(self, x):
        if self.beta.array is None:
            self.beta.initialize(x.shape[1:])
        return swish(x, self.beta)


class Maxout(Chain):
    """A ``Linear`` layer to ``out_size * pool_size`` units, then the maximum over each pool:
    ``out_size`` outputs. ``initialW`` may be ``(out_size, pool_size, in_size)`` and
    ``initial_bias`` ``(out_size, pool_size)`` arrays, or initializers (None: no bias)."""

    def __init__(self, in_size, out_size, pool_size, initialW=None, initial_bias=0) -> None:
        super().__init__()
        units = out_size * pool_size
        if isinstance(initialW, np.ndarray):
            if initialW.ndim != 3:
                raise ValueError(f"Maxout: initialW must be 3-D (out_size, pool_size, "
                                 f"in_size), got {initialW.shape}")
            initialW = initialW.reshape(units, in_size)
        elif callable(initialW) and not isinstance(initialW, initializers.Initializer):
            initialW = _pooled_initializer(initialW, (out_size, pool_size, in_size))
        if isinstance(initial_bias, np.ndarray):
            if initial_bias.ndim != 2:
                raise ValueError(f"Maxout: initial_bias must be 2-D (out_size, pool_size), got "
                                 f"{initial_bias.shape}")
            initial_bias = initial_bias.reshape(units)
        elif callable(initial_bias) and not isinstance(initial_bias, initializers.Initializer):
            initial_bias = _pooled_initializer(initial_bias, (out_size, pool_size))
        with self.init_scope():
            self.linear = Linear(in_size, units, nobias=initial_bias is None,
                                 initialW=initialW, initial_bias=initial_bias)
        self.out_size = out_size
        self.pool_size = pool_size

    def forward(self, x):
        return maxout(self.linear(x), self.pool_size)


def _pooled_initializer(fill, shape: tuple[int, ...]):
    """An initializer callable that fills the pooled ``shape`` (Chainer's convention), for a
    parameter stored flat."""

    def initialize(array: np.ndarray) -> None:
        pooled = array.reshape(shape)
        fill(pooled)
        array[...] = pooled.reshape(array.shape)

    return initialize


class SimplifiedDropconnect(Link):
    """``F.simplified_dropconnect`` with ``W`` (``(out_size, in_size)``; ``in_size`` None: from
    the first input) and ``b`` parameters. ``initialW`` defaults to ``HeNormal(1/sqrt(2))``
    and ``initial_bias`` to zeros, as in Chainer."""

    def __init__(self, in_size, out_size, ratio=0.5, nobias=False, initialW=None,
                 initial_bias=None) -> None:
        super().__init__()
        self.out_size = out_size
        self.ratio = ratio
        if initialW is None:
            initialW = initializers.HeNormal(1.0 / np.sqrt(2))
        with self.init_scope():
            self.W = Parameter(initializers.get_initializer(initialW))
            if in_size is not None:
                self.W.initialize((out_size, in_size))
            if nobias:
                self.b = None
            else:
                if initial_bias is None:
                    initial_bias = initializers.Constant(0)
                self.b = Parameter(initializers.get_initializer(initial_bias), (out_size,))

    def forward(self, x, train=True, mask=None, use_batchwise_mask=True):
        if self.W.array is None:
            self.W.initialize((self.out_size, x.size // len(x)))
        if mask is not None and "mask" not in self.__dict__:
            self.add_persistent("mask", mask)
        return simplified_dropconnect(x, self.W, self.b, self.ratio, train, mask,
                                      use_batchwise_mask)
