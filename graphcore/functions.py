"""``graphcore.functions`` (imported as ``F``): every op as a function, Chainer's names.

Each function is a thin wrapper defined next to its op in ``graphcore.ops``; composites built
from registered ops (``batch_normalization``) live here and need no backward.
"""

from __future__ import annotations

import numpy as np

from graphcore.ops.activation import leaky_relu, relu, sigmoid, softplus, tanh
from graphcore.ops.arithmetic import add, div, mul, neg, pow, sub
from graphcore.ops.array import (
    broadcast_to,
    cast,
    concat,
    copy,
    reshape,
    split_axis,
    stack,
    sum_to,
    swapaxes,
    transpose,
    transpose_sequence,
)
from graphcore.ops.attention import attention
from graphcore.ops.checks import axis_argument
from graphcore.ops.convolution import (
    convolution_1d,
    convolution_2d,
    deconvolution_1d,
    deconvolution_2d,
)
from graphcore.ops.embed import embed_id
from graphcore.ops.evaluation import accuracy
from graphcore.ops.indexing import get_item, permutate, scatter_add
from graphcore.ops.linalg import linear, matmul
from graphcore.ops.loss import (
    log_softmax,
    mean_squared_error,
    sigmoid_cross_entropy,
    softmax,
    softmax_cross_entropy,
)
from graphcore.ops.lstm_cell import lstm
from graphcore.ops.math import absolute, clip, exp, log, maximum, minimum, sqrt, square, where
from graphcore.ops.noise import dropout
from graphcore.ops.normalization import local_response_normalization
from graphcore.ops.normalization_layer import layer_normalization
from graphcore.ops.pooling import (
    average_pooling_1d,
    average_pooling_2d,
    max_pooling_1d,
    max_pooling_2d,
)
from graphcore.ops.probabilistic import (
    bernoulli_nll,
    gaussian,
    gaussian_kl_divergence,
    gaussian_nll,
)
from graphcore.ops.recurrent import n_step_gru, n_step_lstm
from graphcore.ops.reduction import average, max, mean, min, prod, sum
from graphcore.ops.sampled_losses import negative_sampling

__all__ = [
    "absolute", "add", "average", "batch_normalization", "broadcast_to", "cast", "clip",
    "concat", "div",
    "dropout", "embed_id", "exp", "expand_dims", "fixed_batch_normalization", "get_item",
    "leaky_relu", "linear", "log", "log_softmax", "lstm", "matmul", "max", "maximum", "mean",
    "mean_squared_error", "min", "minimum", "mul", "neg", "permutate", "pow", "prod", "relu",
    "reshape",
    "scatter_add", "sigmoid", "sigmoid_cross_entropy", "softmax", "softmax_cross_entropy",
    "softplus", "split_axis", "sqrt", "square", "squeeze", "stack", "sub", "sum", "sum_to",
    "tanh", "transpose", "where",
    "attention", "copy", "layer_normalization", "n_step_gru", "n_step_lstm", "swapaxes",
    "transpose_sequence",
    # convolutional models
    "accuracy", "average_pooling_1d", "average_pooling_2d", "convolution_1d", "convolution_2d",
    "deconvolution_1d", "deconvolution_2d", "local_response_normalization", "max_pooling_1d",
    "max_pooling_2d",
    "bernoulli_nll", "gaussian", "gaussian_kl_divergence", "gaussian_nll", "negative_sampling",
]

abs = absolute  # noqa: A001


def expand_dims(x, axis: int):
    """Insert an axis of length 1 at ``axis``."""
    axis_argument("expand_dims", x, axis, none=False)
    shape = list(x.shape)
    shape.insert(axis % (len(shape) + 1), 1)
    return reshape(x, tuple(shape))


def squeeze(x, axis=None):
    """Drop axes of length 1 (all of them, or those in ``axis``)."""
    axis_argument("squeeze", x, axis, none=True)
    shape = x.shape
    axes = range(len(shape)) if axis is None else (
        [axis] if isinstance(axis, int) else list(axis))
    axes = {a % len(shape) for a in axes if shape[a % len(shape)] == 1}
    return reshape(x, tuple(n for i, n in enumerate(shape) if i not in axes))


def batch_normalization(x, gamma, beta, eps: float = 2e-5, axis=None):
    """Normalize ``x`` by its batch statistics over ``axis`` (default: all but axis 1), then
    scale by ``gamma`` and shift by ``beta``. Built from primitive ops, so double backprop works.
    Returns only the output; ``graphcore.links.BatchNormalization`` tracks running averages.
    """
    axes = _bn_axes(x, axis)
    mu = mean(x, axis=axes, keepdims=True)
    centered = x - mu
    var = mean(centered * centered, axis=axes, keepdims=True)
    xhat = centered / sqrt(var + eps)
    return xhat * _bn_param(gamma, x, axes) + _bn_param(beta, x, axes)


def fixed_batch_normalization(x, gamma, beta, mean_, var, eps: float = 2e-5, axis=None):
    """Batch normalization with given statistics (inference)."""
    axes = _bn_axes(x, axis)
    shape = _bn_shape(x, axes)
    inv = 1.0 / np.sqrt(np.asarray(var).reshape(shape) + eps)
    xhat = (x - np.asarray(mean_).reshape(shape).astype(x.dtype)) * inv.astype(x.dtype)
    return xhat * _bn_param(gamma, x, axes) + _bn_param(beta, x, axes)


def _bn_axes(x, axis):
    if axis is None:
        return (0,) + tuple(range(2, x.ndim))
    return (axis,) if isinstance(axis, int) else tuple(axis)


def _bn_shape(x, axes):
    return tuple(1 if i in axes else n for i, n in enumerate(x.shape))


def _bn_param(p, x, axes):
    return reshape(p, _bn_shape(x, axes))
