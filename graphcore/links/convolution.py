"""Convolution links with Chainer's constructors: ``Convolution2D``, ``ConvolutionND`` (and
its ``Convolution1D`` / ``Convolution3D``), ``Deconvolution2D``, ``DeconvolutionND`` (and
``Deconvolution1D`` / ``Deconvolution3D``), ``DilatedConvolution2D``,
``DepthwiseConvolution2D``, ``LocalConvolution2D``, ``MLPConvolution2D`` and
``DeformableConvolution2D`` (with its ``DeformableConvolution2DSampler``).

``in_channels=None``, or the form without it (``Convolution2D(out_channels, ksize)``), infers
the input channels on the first call; ``from_params(W, b)`` builds a link around given arrays.
"""

from __future__ import annotations

import numpy as np

from graphcore import initializers
from graphcore.errors import ShapeError
from graphcore.links.link import Chain, ChainList, Link
from graphcore.ops import convolution as conv_ops
from graphcore.ops.activation import relu
from graphcore.ops.convolution import (
    Convolution1DFunction,
    Convolution2DFunction,
    Deconvolution1DFunction,
    Deconvolution2DFunction,
    depthwise_convolution_2d,
)
from graphcore.ops.deformable_convolution import deformable_convolution_2d_sampler
from graphcore.ops.local_convolution import local_convolution_2d
from graphcore.ops.windows import as_tuple
from graphcore.variable import Parameter


def _array(value):
    """A Variable's array (``from_params`` takes either)."""
    return getattr(value, "array", value)


class _ConvolutionLink(Link):
    """``W`` (and ``b`` unless ``nobias``) of a convolution over ``ndim`` spatial axes;
    ``transposed``: ``W`` is ``(in, out / groups, *k)`` (a deconvolution)."""

    ndim = 2
    transposed = False

    def __init__(self, in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                 initial_bias, dilate, groups, ndim: int | None = None) -> None:
        super().__init__()
        if ndim is not None:
            self.ndim = as_tuple(ndim, 1, type(self).__name__, "ndim", 1)[0]
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
        self.in_channels = None if in_channels is None else int(in_channels)
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
        self.in_channels = in_channels
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

    @staticmethod
    def _from_params_shape(W, b, groups: int, transposed: bool):
        """``(in_channels, out_channels, ksize)`` of filters ``W`` (and a check of ``b``)."""
        W = _array(W)
        if transposed:
            in_channels, out_channels = W.shape[0], W.shape[1] * groups
        else:
            out_channels, in_channels = W.shape[0], W.shape[1] * groups
        if b is not None and _array(b).size != out_channels:
            raise ValueError(f"from_params: b has {_array(b).size} elements, W {W.shape} has "
                             f"{out_channels} output channels")
        return in_channels, out_channels, tuple(W.shape[2:])


class Convolution2D(_ConvolutionLink):
    """2-d convolution layer: ``W: (out_channels, in_channels / groups, kh, kw)``, ``b``.

    >>> conv = Convolution2D(None, 16, 3, pad=1)     # or Convolution2D(16, 3)
    >>> y = conv(np.zeros((8, 3, 32, 32), np.float32))      # (8, 16, 32, 32)
    """

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
                 initialW=None, initial_bias=None, *, dilate=1, groups=1) -> None:
        super().__init__(in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, dilate, groups)

    @classmethod
    def from_params(cls, W, b=None, stride=1, pad=0, nobias=False, *, dilate=1, groups=1):
        """A link whose parameters are copies of the arrays ``W`` (and ``b``)."""
        in_channels, out_channels, ksize = cls._from_params_shape(W, b, groups, False)
        return cls(in_channels, out_channels, ksize, stride, pad, nobias,
                   initialW=np.array(_array(W)),
                   initial_bias=None if b is None else np.array(_array(b)), dilate=dilate,
                   groups=groups)

    def forward(self, x):
        return Convolution2DFunction(self.stride, self.pad, False, self.dilate,
                                     self.groups).apply(self._inputs(x))[0]


class ConvolutionND(_ConvolutionLink):
    """Convolution layer over ``ndim`` spatial axes: ``W: (out_channels, in_channels /
    groups, *ksize)``, ``b``; ``ConvolutionND(ndim, out_channels, ksize)`` infers the input
    channels."""

    def __init__(self, ndim, in_channels, out_channels, ksize=None, stride=1, pad=0,
                 nobias=False, initialW=None, initial_bias=None, cover_all=False, dilate=1,
                 groups=1) -> None:
        super().__init__(in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, dilate, groups, ndim)
        self.cover_all = bool(cover_all)

    @classmethod
    def from_params(cls, W, b=None, stride=1, pad=0, nobias=False, *, cover_all=False,
                    dilate=1, groups=1):
        """A link whose parameters are copies of the arrays ``W`` (and ``b``)."""
        in_channels, out_channels, ksize = cls._from_params_shape(W, b, groups, False)
        return ConvolutionND(len(ksize), in_channels, out_channels, ksize, stride, pad, nobias,
                             initialW=np.array(_array(W)),
                             initial_bias=None if b is None else np.array(_array(b)),
                             cover_all=cover_all, dilate=dilate, groups=groups)

    def forward(self, x):
        args = (self.stride, self.pad, self.cover_all, self.dilate, self.groups)
        if self.ndim == 2:
            node = Convolution2DFunction(*args)
        elif self.ndim == 1:
            node = Convolution1DFunction(*args)
        else:
            node = conv_ops.ConvolutionND(self.ndim, *args)
        return node.apply(self._inputs(x))[0]


class Convolution1D(ConvolutionND):
    """1-d convolution layer over ``(N, C, W)``: ``W: (out_channels, in_channels / groups,
    k)``, ``b``."""

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
                 initialW=None, initial_bias=None, cover_all=False, dilate=1,
                 groups=1) -> None:
        super().__init__(1, in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, cover_all, dilate, groups)


class Convolution3D(ConvolutionND):
    """3-d convolution layer over ``(N, C, D, H, W)``: ``W: (out_channels, in_channels /
    groups, kd, kh, kw)``, ``b``."""

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
                 initialW=None, initial_bias=None, cover_all=False, dilate=1,
                 groups=1) -> None:
        super().__init__(3, in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, cover_all, dilate, groups)


def _outsize(outsize, ndim: int, name: str):
    """``None`` (computed), or ``ndim`` sizes where ``None`` entries are computed."""
    if outsize is None or (isinstance(outsize, tuple | list)
                           and all(o is None for o in outsize)):
        return None
    return tuple(outsize) if isinstance(outsize, tuple | list) else as_tuple(
        outsize, ndim, name, "outsize", 1)


class Deconvolution2D(_ConvolutionLink):
    """2-d transposed convolution layer: ``W: (in_channels, out_channels / groups, kh, kw)``;
    ``outsize`` fixes the output's spatial size where several are possible."""

    transposed = True

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
                 outsize=None, initialW=None, initial_bias=None, *, dilate=1,
                 groups=1) -> None:
        super().__init__(in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, dilate, groups)
        self.outsize = _outsize(outsize, 2, type(self).__name__)

    def forward(self, x):
        return Deconvolution2DFunction(self.stride, self.pad, self.outsize, self.dilate,
                                       self.groups).apply(self._inputs(x))[0]


class DeconvolutionND(_ConvolutionLink):
    """Transposed convolution layer over ``ndim`` spatial axes: ``W: (in_channels,
    out_channels / groups, *ksize)``, ``b``."""

    transposed = True

    def __init__(self, ndim, in_channels, out_channels, ksize=None, stride=1, pad=0,
                 nobias=False, outsize=None, initialW=None, initial_bias=None, dilate=1,
                 groups=1) -> None:
        super().__init__(in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, dilate, groups, ndim)
        self.outsize = _outsize(outsize, self.ndim, type(self).__name__)

    def forward(self, x):
        args = (self.stride, self.pad, self.outsize, self.dilate, self.groups)
        if self.ndim == 2:
            node = Deconvolution2DFunction(*args)
        elif self.ndim == 1:
            node = Deconvolution1DFunction(*args)
        else:
            node = conv_ops.DeconvolutionND(self.ndim, *args)
        return node.apply(self._inputs(x))[0]


class Deconvolution1D(DeconvolutionND):
    """1-d transposed convolution layer: ``W: (in_channels, out_channels / groups, k)``."""

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
                 outsize=None, initialW=None, initial_bias=None, dilate=1,
                 groups=1) -> None:
        super().__init__(1, in_channels, out_channels, ksize, stride, pad, nobias, outsize,
                         initialW, initial_bias, dilate, groups)


class Deconvolution3D(DeconvolutionND):
    """3-d transposed convolution layer: ``W: (in_channels, out_channels / groups, kd, kh,
    kw)``."""

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
                 outsize=None, initialW=None, initial_bias=None, dilate=1,
                 groups=1) -> None:
        super().__init__(3, in_channels, out_channels, ksize, stride, pad, nobias, outsize,
                         initialW, initial_bias, dilate, groups)


class DilatedConvolution2D(Convolution2D):
    """A ``Convolution2D`` whose filter taps are ``dilate`` apart (Chainer's argument order:
    ``dilate`` after ``pad``)."""

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, dilate=1,
                 nobias=False, initialW=None, initial_bias=None) -> None:
        super().__init__(in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, dilate=dilate)


class DepthwiseConvolution2D(Link):
    """Each input channel convolved with its own ``channel_multiplier`` filters: ``W:
    (channel_multiplier, in_channels, kh, kw)``, ``b: (in_channels * channel_multiplier,)``.
    The default ``initialW`` is ``HeNormal(1 / sqrt(2))`` (Chainer's)."""

    def __init__(self, in_channels, channel_multiplier, ksize, stride=1, pad=0, nobias=False,
                 initialW=None, initial_bias=None) -> None:
        super().__init__()
        name = type(self).__name__
        self.ksize = as_tuple(ksize, 2, name, "ksize", 1)
        self.stride = as_tuple(stride, 2, name, "stride", 1)
        self.pad = as_tuple(pad, 2, name, "pad", 0)
        self.channel_multiplier = int(channel_multiplier)
        self.nobias = bool(nobias)
        if initialW is None:
            initialW = initializers.HeNormal(1.0 / np.sqrt(2))
        with self.init_scope():
            self.W = Parameter(initialW)
            self.b = None if nobias else Parameter(
                0.0 if initial_bias is None else initial_bias)
        if in_channels is not None:
            self._initialize_params(int(in_channels))

    def _initialize_params(self, in_channels: int) -> None:
        self.W.initialize((self.channel_multiplier, in_channels) + self.ksize)
        if self.b is not None:
            self.b.initialize((self.channel_multiplier * in_channels,))

    def forward(self, x):
        if self.W.array is None:
            self._initialize_params(x.shape[1])
        return depthwise_convolution_2d(x, self.W, self.b, self.stride, self.pad)


class LocalConvolution2D(Link):
    """Unshared filters, one per output position: ``W: (out_channels, out_h, out_w,
    in_channels, kh, kw)``, ``b: (out_channels, out_h, out_w)``, no padding. The parameters
    are made when ``in_channels`` and ``in_size`` are known (else on the first call)."""

    def __init__(self, in_channels, out_channels, in_size=None, ksize=None, stride=1,
                 nobias=False, initialW=None, initial_bias=None) -> None:
        super().__init__()
        name = type(self).__name__
        if ksize is None:
            raise TypeError(f"{name}: ksize is required")
        self.ksize = as_tuple(ksize, 2, name, "ksize", 1)
        self.stride = as_tuple(stride, 2, name, "stride", 1)
        self.nobias = bool(nobias)
        self.out_channels = int(out_channels)
        with self.init_scope():
            self.W = Parameter(initialW)
            self.b = None if nobias else Parameter(
                0.0 if initial_bias is None else initial_bias)
            if in_channels is not None and in_size is not None:
                self._initialize_params(int(in_channels), as_tuple(in_size, 2, name,
                                                                   "in_size", 1))

    def _initialize_params(self, in_channels: int, in_size) -> None:
        out = tuple((n - k) // s + 1 for n, k, s in zip(in_size, self.ksize, self.stride,
                                                        strict=True))
        if any(o <= 0 for o in out):
            raise ShapeError(f"{type(self).__name__}: the window {self.ksize} does not fit the "
                             f"input size {tuple(in_size)}")
        self.W.initialize((self.out_channels,) + out + (in_channels,) + self.ksize)
        if self.b is not None:
            self.b.initialize((self.out_channels,) + out)

    def forward(self, x):
        if self.W.array is None:
            self._initialize_params(x.shape[1], tuple(x.shape[2:]))
        return local_convolution_2d(x, self.W, self.b, self.stride)


class MLPConvolution2D(ChainList):
    """Network-in-network's mlpconv: a ``ksize`` convolution to ``out_channels[0]``, then
    1x1 convolutions through the rest of ``out_channels``, ``activation`` between them (not
    after the last). ``conv_init`` / ``bias_init`` initialize every convolution."""

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0,
                 activation=relu, *args, conv_init=None, bias_init=None, **kwargs) -> None:
        name = type(self).__name__
        wscale = (f"{name}: wscale is not supported anymore; use conv_init and bias_init to "
                  f"change the scale of the initial parameters")
        if args:  # Chainer's old positional wscale
            raise TypeError(wscale)
        if "wscale" in kwargs:
            raise ValueError(wscale)
        if kwargs:
            raise TypeError(f"{name}: unexpected keyword arguments {sorted(kwargs)}")
        if ksize is None:
            in_channels, out_channels, ksize = None, in_channels, out_channels
        out_channels = tuple(out_channels)
        if not out_channels:
            raise ValueError(f"{name}: out_channels must name at least one layer")
        convs = [Convolution2D(in_channels, out_channels[0], ksize, stride, pad,
                               initialW=conv_init, initial_bias=bias_init)]
        convs += [Convolution2D(n_in, n_out, 1, initialW=conv_init, initial_bias=bias_init)
                  for n_in, n_out in zip(out_channels, out_channels[1:], strict=False)]
        super().__init__(*convs)
        self.activation = activation

    def forward(self, x):
        for conv in self[:-1]:
            x = self.activation(conv(x))
        return self[-1](x)


class DeformableConvolution2DSampler(Link):
    """The sampling half of a deformable convolution: ``W: (out_channels, in_channels, kh,
    kw)`` (zeros unless ``initialW`` is given, Chainer's default) and ``b`` applied to ``x`` read
    at the given ``offset`` (``F.deformable_convolution_2d_sampler``)."""

    def __init__(self, in_channels, out_channels, ksize, stride=1, pad=0, nobias=False,
                 initialW=None, initial_bias=None) -> None:
        super().__init__()
        name = type(self).__name__
        self.ksize = as_tuple(ksize, 2, name, "ksize", 1)
        self.stride = as_tuple(stride, 2, name, "stride", 1)
        self.pad = as_tuple(pad, 2, name, "pad", 0)
        self.out_channels = int(out_channels)
        with self.init_scope():
            self.W = Parameter(initializers.Zero() if initialW is None else initialW)
            self.b = None if nobias else Parameter(
                0.0 if initial_bias is None else initial_bias)
        if in_channels is not None:
            self._initialize_params(int(in_channels))

    def _initialize_params(self, in_channels: int) -> None:
        self.W.initialize((self.out_channels, in_channels) + self.ksize)
        if self.b is not None:
            self.b.initialize((self.out_channels,))

    def forward(self, x, offset):
        if self.W.array is None:
            self._initialize_params(x.shape[1])
        return deformable_convolution_2d_sampler(x, offset, self.W, self.b, self.stride,
                                                 self.pad)


class DeformableConvolution2D(Chain):
    """Deformable convolution: ``offset_conv`` (a ``Convolution2D`` to ``2 * kh * kw``
    channels) computes each tap's offset from ``x``, ``deform_conv`` (a
    ``DeformableConvolution2DSampler``) convolves ``x`` read there."""

    def __init__(self, in_channels, out_channels, ksize, stride=1, pad=0, offset_nobias=False,
                 offset_initialW=None, offset_initial_bias=None, deform_nobias=False,
                 deform_initialW=None, deform_initial_bias=None) -> None:
        super().__init__()
        kh, kw = as_tuple(ksize, 2, type(self).__name__, "ksize", 1)
        with self.init_scope():
            self.offset_conv = Convolution2D(in_channels, 2 * kh * kw, ksize, stride, pad,
                                             offset_nobias, offset_initialW,
                                             offset_initial_bias)
            self.deform_conv = DeformableConvolution2DSampler(
                in_channels, out_channels, ksize, stride, pad, deform_nobias, deform_initialW,
                deform_initial_bias)

    def forward(self, x):
        return self.deform_conv(x, self.offset_conv(x))
