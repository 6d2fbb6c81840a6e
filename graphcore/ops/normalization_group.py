"""Group normalization (Chainer's ``F.group_normalization``, Wu and He, 2018): the channels of
each sample are split into ``groups``; each group is normalized by its own mean and variance,
then every channel is scaled by ``gamma`` and shifted by ``beta``. A composite of registered
ops, so its gradients (second order too) are theirs; float16 computes in float32.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore.ops.array import reshape
from graphcore.ops.math import sqrt
from graphcore.ops.normalization_batch import as_dtype, compute_dtype
from graphcore.ops.reduction import mean


def group_normalization(x, groups: int, gamma, beta, eps: float = 1e-5):
    """Normalize ``x`` of shape ``(N, C, ...)`` over each of ``groups`` groups of ``C //
    groups`` channels (and every axis after the channels), then ``* gamma + beta`` per channel
    (``gamma``, ``beta``: ``(C,)``)."""
    label = "group_normalization"
    if not isinstance(groups, int | np.integer) or isinstance(groups, bool):
        raise errors.ArgumentTypeError(f"{label}: groups must be an int, got "
                                       f"{type(groups).__name__}")
    if x.dtype.kind != "f" or gamma.dtype.kind != "f":
        raise errors.DTypeError(f"{label}: x and gamma must be floating point, got {x.dtype} "
                                f"and {gamma.dtype}")
    if x.ndim < 2 or gamma.ndim != 1 or gamma.shape != (x.shape[1],) \
            or beta.shape != gamma.shape:
        raise errors.ShapeError(f"{label}: expected x (N, C, ...) with gamma and beta of shape "
                                f"(C,), got x {x.shape}, gamma {gamma.shape}, beta {beta.shape}")
    if beta.dtype != gamma.dtype:
        raise errors.DTypeError(f"{label}: beta must have gamma's dtype {gamma.dtype}, got "
                                f"{beta.dtype}")
    batch, channels = x.shape[:2]
    if groups < 1 or channels % groups:
        raise errors.ArgumentValueError(f"{label}: the number of channels {channels} is not "
                                        f"divisible by groups {groups}")
    dtype = compute_dtype(x.dtype, gamma.dtype)
    grouped = reshape(as_dtype(x, dtype), (batch, groups, -1))
    centered = grouped - mean(grouped, axis=2, keepdims=True)
    var = mean(centered * centered, axis=2, keepdims=True)
    x_hat = reshape(centered / sqrt(var + eps), (batch, channels, -1))
    y = x_hat * reshape(as_dtype(gamma, dtype), (channels, 1)) \
        + reshape(as_dtype(beta, dtype), (channels, 1))
    return as_dtype(reshape(y, x.shape), x.dtype)
