"""GoogLeNet's inception modules (Chainer's ``Inception`` and ``InceptionBN``): parallel 1x1,
3x3, 5x5 (or two 3x3) convolutions and a pooling branch, concatenated along the channels."""

from __future__ import annotations

from graphcore import errors
from graphcore.links.batch_norm import BatchNormalization
from graphcore.links.convolution import Convolution2D
from graphcore.links.link import Chain
from graphcore.ops.activation import relu
from graphcore.ops.array import concat
from graphcore.ops.pooling import average_pooling_2d, max_pooling_2d


class InceptionArchitectureError(errors.ArgumentValueError, AssertionError):
    """An ``InceptionBN`` whose branches do not fit together (Chainer asserts there, so this
    is an ``AssertionError`` too)."""


class Inception(Chain):
    """Inception module (Szegedy et al., 2014): ``conv1`` (1x1 to ``out1``), ``proj3`` ->
    ``conv3`` (3x3 to ``out3``), ``proj5`` -> ``conv5`` (5x5 to ``out5``) and 3x3 max pooling
    -> ``projp`` (1x1 to ``proj_pool``); ReLU after each projection and on the result. The
    output has ``out1 + out3 + out5 + proj_pool`` channels."""

    def __init__(self, in_channels, out1, proj3, out3, proj5, out5, proj_pool, conv_init=None,
                 bias_init=None) -> None:
        super().__init__()

        def conv(n_in, n_out, ksize, pad=0):
            return Convolution2D(n_in, n_out, ksize, pad=pad, initialW=conv_init,
                                 initial_bias=bias_init)

        with self.init_scope():
            self.conv1 = conv(in_channels, out1, 1)
            self.proj3 = conv(in_channels, proj3, 1)
            self.conv3 = conv(proj3, out3, 3, pad=1)
            self.proj5 = conv(in_channels, proj5, 1)
            self.conv5 = conv(proj5, out5, 5, pad=2)
            self.projp = conv(in_channels, proj_pool, 1)

    def forward(self, x):
        out1 = self.conv1(x)
        out3 = self.conv3(relu(self.proj3(x)))
        out5 = self.conv5(relu(self.proj5(x)))
        pool = self.projp(max_pooling_2d(x, 3, stride=1, pad=1))
        return relu(concat((out1, out3, out5, pool), axis=1))


class InceptionBN(Chain):
    """Inception module with batch normalization (Ioffe and Szegedy, 2015): 1x1 (``out1``, may
    be 0), 1x1 -> 3x3 (``out3``), 1x1 -> 3x3 -> 3x3 (``out33``) and a ``pooltype`` (``'max'``
    or ``'avg'``) 3x3 pooling, optionally projected to ``proj_pool``; every convolution has no
    bias and is followed by ``BatchNormalization`` and ReLU. ``stride`` applies to the last
    convolution of each branch and the pooling (``out1`` must then be 0)."""

    def __init__(self, in_channels, out1, proj3, out3, proj33, out33, pooltype, proj_pool=None,
                 stride=1, conv_init=None, dtype=None) -> None:
        super().__init__()
        if pooltype not in ("max", "avg"):
            raise NotImplementedError(f"InceptionBN: pooltype must be 'max' or 'avg', got "
                                      f"{pooltype!r}")
        if out1 > 0 and (stride != 1 or proj_pool is None):
            raise InceptionArchitectureError("InceptionBN: a 1x1 branch (out1 > 0) needs "
                                             "stride 1 and a proj_pool")
        self.out1, self.proj_pool, self.stride, self.pooltype = out1, proj_pool, stride, pooltype

        def conv(n_in, n_out, ksize, stride=1, pad=0):
            return Convolution2D(n_in, n_out, ksize, stride=stride, pad=pad, nobias=True,
                                 initialW=conv_init)

        with self.init_scope():
            self.proj3 = conv(in_channels, proj3, 1)
            self.conv3 = conv(proj3, out3, 3, stride=stride, pad=1)
            self.proj33 = conv(in_channels, proj33, 1)
            self.conv33a = conv(proj33, out33, 3, pad=1)
            self.conv33b = conv(out33, out33, 3, stride=stride, pad=1)
            self.proj3n = BatchNormalization(proj3, dtype=dtype)
            self.conv3n = BatchNormalization(out3, dtype=dtype)
            self.proj33n = BatchNormalization(proj33, dtype=dtype)
            self.conv33an = BatchNormalization(out33, dtype=dtype)
            self.conv33bn = BatchNormalization(out33, dtype=dtype)
            if out1 > 0:
                self.conv1 = conv(in_channels, out1, 1)
                self.conv1n = BatchNormalization(out1, dtype=dtype)
            if proj_pool is not None:
                self.poolp = conv(in_channels, proj_pool, 1)
                self.poolpn = BatchNormalization(proj_pool, dtype=dtype)

    def forward(self, x):
        outs = []
        if self.out1 > 0:
            outs.append(relu(self.conv1n(self.conv1(x))))
        h3 = relu(self.proj3n(self.proj3(x)))
        outs.append(relu(self.conv3n(self.conv3(h3))))
        h33 = relu(self.proj33n(self.proj33(x)))
        h33 = relu(self.conv33an(self.conv33a(h33)))
        outs.append(relu(self.conv33bn(self.conv33b(h33))))
        if self.pooltype == "max":
            pool = max_pooling_2d(x, 3, stride=self.stride, pad=1, cover_all=False)
        else:
            pool = average_pooling_2d(x, 3, stride=self.stride, pad=1)
        if self.proj_pool is not None:
            pool = relu(self.poolpn(self.poolp(pool)))
        outs.append(pool)
        return concat(outs, axis=1)
