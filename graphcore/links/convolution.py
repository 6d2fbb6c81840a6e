"""Convolution links: ``Convolution2D``, ``Convolution1D``, ``Deconvolution2D``,
``Deconvolution1D`` with Chainer's constructors (``in_channels=None`` or the two-argument
form ``Convolution2D(out_channels, ksize)`` infer the input channels on the first call)."""

from __future__ import annotations

import numpy as np

from graphcore.errors import ShapeError
from graphcore.links.link import Link
from graphcore.ops.convolution import (
    Convolution1DFunction,
    Convolution2DFunction,
    Deconvolution1DFunction,
    Deconvolution2DFunction,
)
from graphcore.ops.windows import as_tuple
from graphcore.variable import Parameter


class _ConvolutionLink(Link):
    ndim = 2
    transposed = False

    def __init__(self, in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                 initial_bias, dilate, groups) -> None:
        super().__init__()
        if ksize is None:  # Convolution2D(out_channels, ksize): in_channels from the input
            in_channels, out_channels, ksize = None, in_channels, out_channels
        name = type(self).__name__
        if out_channels is None or ksize is None:
            raise TypeError(f"{name}: out_channels and ksize are required")
        self.ksize = as_tuple(ksize, self.ndim, name, "ksize", 1)
        self.stride = as_tuple(stride, self.ndim, name, "stride", 1)
        self.pad = as_tuple(pad, self.ndim, name, "pad", 0)
        self.dilate = as_tuple(dilate, self.ndim, name, "dilate", 1)
        self.groups = int(groups)
        self.out_channels = int(out_channels)
        if self.groups < 1 or self.out_channels % self.groups:
            raise ValueError(f"{name}: out_channels ({out_channels}) must be divisible by "
                             f"groups ({groups})")
        with self.init_scope():
            self.W = Parameter(initialW)
            if in_channels is not None:
                self._initialize_params(int(in_channels))
            self.b = None if nobias else Parameter(
                0.0 if initial_bias is None else initial_bias, (self.out_channels,))

    def _initialize_params(self, in_channels: int) -> None:
        name = type(self).__name__
        if in_channels % self.groups:
            raise ShapeError(f"{name}: {in_channels} input channels are not divisible by "
                             f"groups ({self.groups})")
        if self.transposed:
            shape = (in_channels, self.out_channels // self.groups) + self.ksize
        else:
            shape = (self.out_channels, in_channels // self.groups) + self.ksize
        if self.W.array is not None:  # given as an array
            if self.W.array.shape != shape:
                raise ShapeError(f"{name}: initialW has shape {self.W.array.shape}, expected "
                                 f"{shape}")
            return
        self.W.initialize(shape)

    def _inputs(self, x):
        if self.W.array is None:
            if np.ndim(x) != self.ndim + 2:
                raise ShapeError(f"{type(self).__name__}: expected an input of "
                                 f"{self.ndim + 2} dimensions (N, C, ...), got "
                                 f"{np.shape(x)}")
            self._initialize_params(x.shape[1])
        return (x, self.W) if self.b is None else (x, self.W, self.b)


class Convolution2D(_ConvolutionLink):
    """2-d convolution layer: ``W: (out_channels, in_channels / groups, kh, kw)``, ``b``.

    >>> conv = Convolution2D(None, 16, 3, pad=1)     # or Convolution2D(16, 3)
    >>> y = conv(np.zeros((8, 3, 32, 32), np.float32))      # (8, 16, 32, 32)
    """

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
                 initialW=None, initial_bias=None, *, dilate=1, groups=1) -> None:
        super().__init__(in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, dilate, groups)

    def forward(self, x):
        return Convolution2DFunction(self.stride, self.pad, False, self.dilate,
                                     self.groups).apply(self._inputs(x))[0]


class Convolution1D(_ConvolutionLink):
    """1-d convolution layer over ``(N, C, W)``: ``W: (out_channels, in_channels / groups,
    k)``, ``b``."""

    ndim = 1

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
                 initialW=None, initial_bias=None, cover_all=False, dilate=1,
                 groups=1) -> None:
        super().__init__(in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, dilate, groups)
        self.cover_all = cover_all

    def forward(self, x):
        return Convolution1DFunction(self.stride, self.pad, self.cover_all, self.dilate,
                                     self.groups).apply(self._inputs(x))[0]


class Deconvolution2D(_ConvolutionLink):
    """2-d transposed convolution layer: ``W: (in_channels, out_channels / groups, kh, kw)``;
    ``outsize`` fixes the output's spatial size where several are possible."""

    transposed = True

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
                 outsize=None, initialW=None, initial_bias=None, *, dilate=1,
                 groups=1) -> None:
        super().__init__(in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, dilate, groups)
        self.outsize = outsize

    def forward(self, x):
        return Deconvolution2DFunction(self.stride, self.pad, self.outsize, self.dilate,
                                       self.groups).apply(self._inputs(x))[0]


class Deconvolution1D(_ConvolutionLink):
    """1-d transposed convolution layer: ``W: (in_channels, out_channels / groups, k)``."""

    ndim = 1
    transposed = True

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
                 outsize=None, initialW=None, initial_bias=None, dilate=1,
                 groups=1) -> None:
        super().__init__(in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, dilate, groups)
        self.outsize = outsize

    def forward(self, x):
        return Deconvolution1DFunction(self.stride, self.pad, self.outsize, self.dilate,
                                       self.groups).apply(self._inputs(x))[0]
