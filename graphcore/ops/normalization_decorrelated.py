"""Decorrelated batch normalization (Chainer's ``F.decorrelated_batch_normalization``, Huang
et al., 2018): ZCA whitening of each group of channels by the batch's mean and covariance,
and ``F.fixed_decorrelated_batch_normalization``, the same with given statistics.

Arrays are viewed as ``(groups, C, m)``: ``C = channels // groups`` and ``m`` the values per
channel (batch times spatial sizes). The training op differentiates through the covariance's
eigendecomposition (first order only, as Chainer); the fixed variant is a composite of
registered ops.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.array import reshape, transpose
from graphcore.ops.linalg import matmul
from graphcore.ops.normalization_batch import as_dtype
from graphcore.registry import register_op


def _check_groups(label: str, x, groups) -> None:
    if x.dtype.kind != "f":
        raise errors.DTypeError(f"{label}: x must be floating point, got {x.dtype}")
    if x.ndim < 2:
        raise errors.ShapeError(f"{label}: expected x (N, C, ...), got {x.shape}")
    if not isinstance(groups, int | np.integer) or isinstance(groups, bool) or groups < 1:
        raise errors.ArgumentTypeError(f"{label}: groups must be a positive int, got {groups!r}")
    if x.shape[1] % groups:
        raise errors.ShapeError(f"{label}: the number of channels {x.shape[1]} is not "
                                f"divisible by groups {groups}")


def _channel_axes(ndim: int) -> tuple[int, ...]:
    """``x.transpose`` axes that bring the channels first: ``(1, 0, 2, 3, ...)``."""
    return (1, 0) + tuple(range(2, ndim))


def _grouped(a: np.ndarray, groups: int) -> np.ndarray:
    """``(N, c, ...)`` -> ``(groups, c // groups, m)``."""
    return a.transpose(_channel_axes(a.ndim)).reshape(groups, a.shape[1] // groups, -1)


def _ungrouped(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The inverse of ``_grouped`` for an array of ``shape``."""
    return a.reshape((shape[1], shape[0]) + shape[2:]).transpose(_channel_axes(len(shape)))


def _diag(values: np.ndarray) -> np.ndarray:
    """Batched diagonal matrices ``(g, C, C)`` from ``(g, C)``."""
    return values[:, :, None] * np.eye(values.shape[1], dtype=values.dtype)


@register_op
class DecorrelatedBatchNormalization(FunctionNode):
    """ZCA-whiten each group of channels by the batch statistics: ``y = cov^(-1/2) (x -
    mean)`` with ``cov`` the group's covariance plus ``eps`` on its diagonal.

    ``running_mean`` ``(groups, C)`` and ``running_projection`` ``(groups, C, C)``, when
    given, are updated in place: ``decay * running + (1 - decay) * batch value``, the
    projection scaled by ``m / (m - 1)`` as Chainer does.
    """

    __slots__ = ("groups", "eps", "decay", "running_mean", "running_projection")
    name = "decorrelated_batch_normalization"
    label = "DecorrelatedBatchNormalization"
    arity = 1
    higher_order = False
    attributes = {"groups": Attr(int, 16, low=1, doc="channel groups whitened separately"),
                  "eps": Attr(float, 2e-5, low=0.0, doc="added to the covariance's diagonal"),
                  "decay": Attr(float, 0.9, low=0.0, high=1.0,
                                doc="decay of the running statistics")}

    def shape_rule(self, inputs):
        x, = inputs
        if x.ndim < 2:
            shapes.fail(self, inputs, "expected x with a channel axis (N, C, ...)")
        if isinstance(x.shape[1], int) and x.shape[1] % self.groups:
            shapes.fail(self, inputs, f"{x.shape[1]} channels do not split into {self.groups} "
                                      "groups")
        return shapes.float_like_first(self, inputs)

    def __init__(self, groups: int = 16, eps: float = 2e-5, decay: float = 0.9,
                 running_mean=None, running_projection=None) -> None:
        self.groups, self.eps, self.decay = groups, eps, decay
        self.running_mean = running_mean
        self.running_projection = running_projection

    def forward(self, inputs):
        x, = inputs
        _check_groups(self.label, x, self.groups)
        dtype = np.float32 if x.dtype == np.float16 else x.dtype  # eigh has no float16
        x_hat = _grouped(x, self.groups).astype(dtype, copy=False)
        channels, m = x_hat.shape[1:]
        mean = x_hat.mean(axis=2, keepdims=True)
        x_hat = x_hat - mean
        cov = x_hat @ x_hat.transpose(0, 2, 1) / dtype.type(m) \
            + dtype.type(self.eps) * np.eye(channels, dtype=dtype)
        eigvals, eigvectors = np.linalg.eigh(cov)
        pca = _diag(eigvals ** -0.5) @ eigvectors.transpose(0, 2, 1)
        y_hat_pca = pca @ x_hat
        y = _ungrouped(eigvectors @ y_hat_pca, x.shape).astype(x.dtype)
        self._saved = (eigvals, eigvectors, y_hat_pca)
        if self.running_mean is not None:
            self.running_mean *= self.decay
            self.running_mean += (1 - self.decay) * mean[:, :, 0]
        if self.running_projection is not None:
            adjust = m / max(m - 1.0, 1.0)  # Chainer's "unbiased" scaling of the projection
            self.running_projection *= self.decay
            self.running_projection += (1 - self.decay) * adjust * (eigvectors @ pca)
        return y,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        if not isinstance(gy, np.ndarray):
            raise errors.GraphError(f"{self.name}: its gradient is not differentiable (second "
                                    "order is not supported, as in Chainer)")
        eigvals, eigvectors, y_hat_pca = self._saved
        m = y_hat_pca.shape[2]
        gy_hat_pca = eigvectors.transpose(0, 2, 1) @ _grouped(gy, self.groups).astype(
            eigvals.dtype, copy=False)
        f = gy_hat_pca.mean(axis=2, keepdims=True)
        # 1 / (lambda_i - lambda_j), zero where the eigenvalues coincide
        k = eigvals[:, :, None] - eigvals[:, None, :]
        distinct = k != 0
        k[distinct] = 1.0 / k[distinct]
        sqrt_vals = eigvals ** 0.5
        f_c = gy_hat_pca @ y_hat_pca.transpose(0, 2, 1) / eigvals.dtype.type(m)
        diag_f = _diag(np.diagonal(f_c, axis1=1, axis2=2))
        mat = k.transpose(0, 2, 1) * (eigvals[:, :, None] * f_c.transpose(0, 2, 1)
                                      + sqrt_vals[:, :, None] * f_c * sqrt_vals[:, None, :])
        s = mat + mat.transpose(0, 2, 1)
        r = gy_hat_pca - f + (s - diag_f).transpose(0, 2, 1) @ y_hat_pca
        gx_hat = eigvectors @ (eigvals[:, :, None] ** -0.5 * r)
        return _ungrouped(gx_hat, gy.shape).astype(gy.dtype),


def decorrelated_batch_normalization(x, *, groups: int = 16, eps: float = 2e-5,
                                     running_mean=None, running_projection=None,
                                     decay: float = 0.9):
    """Chainer's ``F.decorrelated_batch_normalization``: ZCA whitening of each of ``groups``
    channel groups by the batch's statistics (running statistics updated in place)."""
    return DecorrelatedBatchNormalization(int(groups), float(eps), float(decay), running_mean,
                                          running_projection).apply((x,))[0]


def fixed_decorrelated_batch_normalization(x, mean, projection, groups: int = 16):
    """Chainer's ``F.fixed_decorrelated_batch_normalization``: ``projection @ (x - mean)`` per
    channel group, with ``mean`` ``(groups, C)`` and ``projection`` ``(groups, C, C)``."""
    label = "fixed_decorrelated_batch_normalization"
    _check_groups(label, x, groups)
    channels = x.shape[1] // groups
    if mean.shape != (groups, channels) or projection.shape != (groups, channels, channels):
        raise errors.ShapeError(
            f"{label}: expected mean {(groups, channels)} and projection "
            f"{(groups, channels, channels)} for x {x.shape} in {groups} groups, got "
            f"{mean.shape} and {projection.shape}")
    axes = _channel_axes(x.ndim)
    moved_shape = tuple(x.shape[a] for a in axes)
    x_hat = reshape(transpose(x, axes), (groups, channels, -1))
    y_hat = matmul(as_dtype(projection, x.dtype),
                   x_hat - reshape(as_dtype(mean, x.dtype), (groups, channels, 1)))
    return transpose(reshape(y_hat, moved_shape), axes)
