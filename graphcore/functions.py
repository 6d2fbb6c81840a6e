"""``graphcore.functions`` (imported as ``F``): every op as a function, Chainer's names.

Each function is a thin wrapper defined next to its op in ``graphcore.ops``; composites built
from registered ops live here or next to the ops (``batch_normalization``) and need no
backward.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore.ops.activation import (
    clipped_relu,
    crelu,
    elu,
    hard_sigmoid,
    leaky_relu,
    maxout,
    prelu,
    relu,
    relu6,
    rrelu,
    selu,
    sigmoid,
    softplus,
    swish,
    tanh,
)
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
    convolution_3d,
    convolution_nd,
    deconvolution_1d,
    deconvolution_2d,
    deconvolution_3d,
    deconvolution_nd,
    depthwise_convolution_2d,
    dilated_convolution_2d,
)
from graphcore.ops.covariance_losses import cross_covariance, decov
from graphcore.ops.crf import argmax_crf1d, crf1d
from graphcore.ops.ctc import connectionist_temporal_classification
from graphcore.ops.cumulative import cumprod, cumsum
from graphcore.ops.deformable_convolution import deformable_convolution_2d_sampler
from graphcore.ops.einsum import einsum
from graphcore.ops.elementwise import (
    arccos,
    arcsin,
    arctan,
    arctan2,
    arctanh,
    ceil,
    cos,
    cosh,
    erf,
    erfc,
    expm1,
    fix,
    floor,
    fmod,
    log1p,
    log2,
    log10,
    ndtr,
    sign,
    sin,
    sinh,
    tan,
)
from graphcore.ops.embed import embed_id
from graphcore.ops.evaluation import (
    accuracy,
    binary_accuracy,
    classification_summary,
    f1_score,
    fbeta_score,
    precision,
    r2_score,
    recall,
)
from graphcore.ops.forget import forget
from graphcore.ops.identity import identity
from graphcore.ops.im2col import im2col
from graphcore.ops.indexing import get_item, permutate, scatter_add
from graphcore.ops.inverse import batch_det, batch_inv, det, inv
from graphcore.ops.linalg import (
    batch_l2_norm_squared,
    batch_matmul,
    bias,
    bilinear,
    linear,
    linear_interpolate,
    matmul,
    scale,
)
from graphcore.ops.local_convolution import local_convolution_2d
from graphcore.ops.loss import (
    log_softmax,
    mean_absolute_error,
    mean_squared_error,
    sigmoid_cross_entropy,
    softmax,
    softmax_cross_entropy,
)
from graphcore.ops.lstm_cell import lstm, slstm, tree_lstm
from graphcore.ops.margin_losses import (
    contrastive,
    discriminative_margin_based_clustering_loss,
    hinge,
    huber_loss,
    triplet,
)
from graphcore.ops.math import absolute, clip, exp, log, maximum, minimum, sqrt, square, where
from graphcore.ops.noise import dropout, gumbel_softmax, simplified_dropconnect, zoneout
from graphcore.ops.normalization import local_response_normalization
from graphcore.ops.normalization_batch import (
    batch_normalization,
    batch_renormalization,
    fixed_batch_normalization,
    fixed_batch_renormalization,
)
from graphcore.ops.normalization_decorrelated import (
    decorrelated_batch_normalization,
    fixed_decorrelated_batch_normalization,
)
from graphcore.ops.normalization_group import group_normalization
from graphcore.ops.normalization_layer import layer_normalization
from graphcore.ops.padding import pad, pad_sequence
from graphcore.ops.pooling import (
    average_pooling_1d,
    average_pooling_2d,
    average_pooling_3d,
    average_pooling_nd,
    max_pooling_1d,
    max_pooling_2d,
    max_pooling_3d,
    max_pooling_nd,
    spatial_pyramid_pooling_2d,
)
from graphcore.ops.probabilistic import (
    bernoulli_nll,
    gaussian,
    gaussian_kl_divergence,
    gaussian_nll,
)
from graphcore.ops.recurrent import (
    n_step_bigru,
    n_step_bilstm,
    n_step_birnn,
    n_step_gru,
    n_step_lstm,
    n_step_rnn,
)
from graphcore.ops.reduction import argmax, argmin, average, max, mean, min, prod, sum
from graphcore.ops.roi_pooling import (
    roi_average_align_2d,
    roi_average_pooling_2d,
    roi_max_align_2d,
    roi_max_pooling_2d,
    roi_pooling_2d,
)
from graphcore.ops.sampled_losses import black_out, negative_sampling
from graphcore.ops.shaping import (
    broadcast,
    depth2space,
    diagonal,
    dstack,
    flatten,
    flip,
    fliplr,
    flipud,
    hstack,
    moveaxis,
    rollaxis,
    select_item,
    separate,
    space2depth,
    vstack,
)
from graphcore.ops.shift import shift
from graphcore.ops.sparse import sparse_matmul
from graphcore.ops.spatial_transformer import (
    spatial_transformer_grid,
    spatial_transformer_sampler,
)
from graphcore.ops.unpooling import (
    unpooling_1d,
    unpooling_2d,
    unpooling_3d,
    unpooling_nd,
    upsampling_2d,
)
from graphcore.variable import Variable, as_variable

__all__ = [
    "absolute", "add", "average", "batch_normalization", "batch_renormalization",
    "broadcast_to", "cast", "clip",
    "concat", "div",
    "dropout", "embed_id", "exp", "forget", "identity", "expand_dims", "fixed_batch_normalization",
    "fixed_batch_renormalization", "get_item",
    "leaky_relu", "linear", "log", "log_softmax", "lstm", "matmul", "max", "maximum", "mean",
    "mean_squared_error", "min", "minimum", "mul", "neg", "permutate", "pow", "prod", "relu",
    "reshape",
    "scatter_add", "sigmoid", "sigmoid_cross_entropy", "softmax", "softmax_cross_entropy",
    "softplus", "split_axis", "sqrt", "square", "squeeze", "stack", "sub", "sum", "sum_to",
    "tanh", "transpose", "where",
    "attention", "copy", "decorrelated_batch_normalization",
    "fixed_decorrelated_batch_normalization", "group_normalization", "layer_normalization",
    "n_step_gru", "n_step_lstm", "swapaxes",
    "transpose_sequence",
    # convolutional models
    "accuracy", "average_pooling_1d", "average_pooling_2d", "convolution_1d", "convolution_2d",
    "deconvolution_1d", "deconvolution_2d", "local_response_normalization", "max_pooling_1d",
    "max_pooling_2d",
    "convolution_3d", "convolution_nd", "deconvolution_3d", "deconvolution_nd",
    "depthwise_convolution_2d", "dilated_convolution_2d", "im2col", "local_convolution_2d",
    # pooling and unpooling
    "average_pooling_3d", "average_pooling_nd", "max_pooling_3d", "max_pooling_nd",
    "unpooling_1d", "unpooling_2d", "unpooling_3d", "unpooling_nd", "upsampling_2d",
    "roi_average_align_2d", "roi_average_pooling_2d", "roi_max_align_2d", "roi_max_pooling_2d",
    "roi_pooling_2d", "spatial_transformer_grid", "spatial_transformer_sampler",
    "spatial_pyramid_pooling_2d",
    "shift", "deformable_convolution_2d_sampler",
    # recurrent cells
    "slstm", "tree_lstm", "n_step_bigru", "n_step_bilstm", "n_step_birnn", "n_step_rnn",
    "bernoulli_nll", "gaussian", "gaussian_kl_divergence", "gaussian_nll", "negative_sampling",
    # losses
    "argmax_crf1d", "black_out", "connectionist_temporal_classification", "contrastive", "crf1d",
    "cross_covariance", "decov", "discriminative_margin_based_clustering_loss",
    "hinge", "huber_loss", "mean_absolute_error", "squared_difference", "triplet",
    # evaluation
    "binary_accuracy", "classification_summary", "f1_score", "fbeta_score", "precision",
    "r2_score", "recall",
    # elementwise math, cumulative ops, index reductions
    "arccos", "arcsin", "arctan", "arctan2", "arctanh", "argmax", "argmin", "ceil", "cos",
    "cosh", "cumprod", "cumsum", "erf", "erfc", "expm1", "fix", "floor", "fmod", "log1p",
    "ndtr", "sign", "sin", "sinh", "tan", "log2", "log10",
    # composites under Chainer's names
    "absolute_error", "elu", "logsumexp", "normalize", "relu6", "repeat",
    "squared_error", "tensordot", "tile",
    # activations, noise, padding and shaping under Chainer's names
    "clipped_relu", "crelu", "hard_sigmoid", "maxout", "prelu", "rrelu", "selu", "swish",
    "gumbel_softmax", "simplified_dropconnect", "zoneout", "pad", "pad_sequence",
    "broadcast", "depth2space", "diagonal", "dstack", "flatten", "flip", "fliplr", "flipud",
    "hstack", "moveaxis", "rollaxis", "select_item", "separate", "space2depth", "vstack",
    # linear algebra
    "batch_det", "batch_inv", "batch_l2_norm_squared", "batch_matmul", "bias", "bilinear",
    "det", "einsum", "inv",
    "linear_interpolate", "scale", "sparse_matmul",
]

abs = absolute  # noqa: A001


def expand_dims(x, axis: int):
    """Insert an axis of length 1 at ``axis``."""
    axis_argument("expand_dims", x, axis, none=False)
    shape = list(x.shape)
    if not -len(shape) - 1 <= axis <= len(shape):
        raise errors.ShapeError(f"expand_dims: axis {axis} is out of range for an input of "
                                f"shape {x.shape}")
    shape.insert(axis % (len(shape) + 1), 1)
    return reshape(x, tuple(shape))


def squeeze(x, axis=None):
    """Drop axes of length 1 (all of them, or those in ``axis``, each of which must have
    length 1)."""
    axis_argument("squeeze", x, axis, none=True)
    shape = x.shape
    if axis is None:
        axes = {i for i, n in enumerate(shape) if n == 1}
    else:
        axes = set()
        for a in ([axis] if isinstance(axis, int | np.integer) else list(axis)):
            if not -len(shape) <= a < len(shape):
                raise errors.ShapeError(f"squeeze: axis {a} is out of range for an input of "
                                        f"shape {shape}")
            if shape[a] != 1:
                raise errors.ShapeError(f"squeeze: axis {a} of {shape} has length "
                                        f"{shape[a]}, not 1")
            axes.add(a % len(shape))
    return reshape(x, tuple(n for i, n in enumerate(shape) if i not in axes))


# --- composites of registered ops, under Chainer's names (their backward is the ops') ----------

def tensordot(a, b, axes=2):
    """The sum of products of ``a`` and ``b`` over ``axes`` (an int: the last ``axes`` of
    ``a`` with the first of ``b``; or a pair of axis sequences), as ``numpy.tensordot``."""
    if isinstance(axes, int):
        a_sum = list(range(a.ndim - axes, a.ndim))
        b_sum = list(range(axes))
    else:
        a_sum, b_sum = ([ax] if isinstance(ax, int) else list(ax) for ax in axes)
    a_sum = [ax % a.ndim for ax in a_sum]
    b_sum = [ax % b.ndim for ax in b_sum]
    if len(a_sum) != len(b_sum) or any(a.shape[i] != b.shape[j]
                                       for i, j in zip(a_sum, b_sum, strict=True)):
        raise ValueError(f"tensordot: axes {a_sum} of {a.shape} and {b_sum} of {b.shape} do "
                         "not pair up")
    a_free = [i for i in range(a.ndim) if i not in a_sum]
    b_free = [j for j in range(b.ndim) if j not in b_sum]
    size = int(np.prod([a.shape[i] for i in a_sum], dtype=np.int64))
    a2 = reshape(transpose(a, a_free + a_sum), (-1, size))
    b2 = reshape(transpose(b, b_sum + b_free), (size, -1))
    return reshape(matmul(a2, b2), tuple(a.shape[i] for i in a_free)
                   + tuple(b.shape[j] for j in b_free))


def normalize(x, eps: float = 1e-5, axis=1):
    """``x`` divided by its L2 norm over ``axis`` plus ``eps`` (Chainer's L2 normalization).

    The gradient is continuous at a zero vector (``gy / eps`` there, as Chainer's): the norm's
    square root is taken only where the sum of squares is nonzero, so the undefined derivative
    of the norm at zero never enters.
    """
    squares = sum(square(x), axis=axis, keepdims=True)
    nonzero = squares.array > 0
    if nonzero.all():
        norm = sqrt(squares)
    else:
        ones = np.ones(squares.shape, squares.dtype)
        norm = where(nonzero, sqrt(where(nonzero, squares, ones)), ones * 0)
    return x / broadcast_to(norm + eps, x.shape)


def repeat(x, repeats, axis=None):
    """Each element repeated ``repeats`` times along ``axis`` (flattened first when ``axis``
    is None), as ``numpy.repeat``."""
    _int_tuple("repeat", "repeats", repeats, bools=True)
    if axis is not None and (isinstance(axis, bool) or not isinstance(axis, int | np.integer)):
        raise errors.ArgumentTypeError(f"repeat: axis must be an int or None, got {axis!r}")
    _variable_or_array("repeat", x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis %= x.ndim
    counts = np.broadcast_to(np.asarray(repeats, np.int64), (x.shape[axis],))
    index = np.repeat(np.arange(x.shape[axis]), counts)
    return get_item(x, (slice(None),) * axis + (index,))


def tile(x, reps):
    """``x`` repeated ``reps`` times along each axis, as ``numpy.tile``."""
    _int_tuple("tile", "reps", reps, bools=False)
    _variable_or_array("tile", x)
    reps = (reps,) if isinstance(reps, int | np.integer) else tuple(reps)
    if len(reps) > x.ndim:
        x = reshape(x, (1,) * (len(reps) - x.ndim) + tuple(x.shape))
    reps = (1,) * (x.ndim - len(reps)) + reps
    for axis, r in enumerate(reps):
        if r != 1:
            index = np.tile(np.arange(x.shape[axis]), r)
            x = get_item(x, (slice(None),) * axis + (index,))
    return as_variable(x)


def _int_tuple(name: str, what: str, value, bools: bool) -> None:
    """``value`` is a non-negative int or a tuple of them (Chainer's checks of ``repeats`` and
    ``reps``; numpy takes bools as counts, so ``repeat`` does too)."""
    items = value if isinstance(value, tuple) else (value,)
    for v in items:
        if not isinstance(v, int | np.integer) or (isinstance(v, bool) and not bools):
            raise errors.ArgumentTypeError(f"{name}: {what} must be an int or a tuple of ints, "
                                           f"got {value!r}")
        if v < 0:
            raise errors.ArgumentValueError(f"{name}: {what} must be zero or larger, got "
                                            f"{value!r}")


def _variable_or_array(name: str, x) -> None:
    if not isinstance(x, Variable | np.ndarray):
        raise errors.ArgumentTypeError(f"{name}: x must be a Variable or a numpy array, got "
                                       f"{type(x).__name__}")


def logsumexp(x, axis=None):
    """``log(sum(exp(x)))`` over ``axis``, computed after subtracting the maximum."""
    top = np.max(np.asarray(getattr(x, "array", x)), axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0).astype(x.dtype)
    total = sum(exp(x - top), axis=axis, keepdims=True)
    out = log(total) + top
    return reshape(out, np.squeeze(top, axis=axis).shape if axis is not None else ())


def absolute_error(x0, x1):
    """``|x0 - x1|``, element-wise."""
    return absolute(x0 - x1)


def squared_error(x0, x1):
    """``(x0 - x1) ** 2``, element-wise."""
    return square(x0 - x1)


def squared_difference(x1, x2):
    """``(x1 - x2) ** 2``, element-wise (Chainer's other name for ``squared_error``)."""
    return square(x1 - x2)
