"""Chainer's covariance penalties: ``decov`` (the off-diagonal covariance of one batch of
features) and ``cross_covariance`` (the covariance between two). Composites of registered ops
(``mean``, ``matmul``, ``sum``), so gradients, double backprop and export come from those.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore.ops.array import broadcast_to
from graphcore.ops.linalg import matmul
from graphcore.ops.reduction import mean
from graphcore.ops.reduction import sum as _sum
from graphcore.variable import as_variable

__all__ = ["cross_covariance", "decov"]

_REDUCES = ("half_squared_sum", "no")


def _matrix(name: str, what: str, x):
    x = as_variable(x)
    if x.ndim != 2 or x.dtype.kind != "f":
        raise errors.ShapeError(f"{name}: {what} must be a float (N, M) matrix, got "
                                f"{x.shape} {x.dtype}")
    return x


def _check_reduce(name: str, reduce: str) -> None:
    if reduce not in _REDUCES:
        raise ValueError(f"{name}: reduce must be 'half_squared_sum' or 'no', got {reduce!r}")


def _centered(x):
    return x - broadcast_to(mean(x, axis=0, keepdims=True), x.shape)


def _reduced(covariance, reduce: str):
    if reduce == "no":
        return covariance
    return _sum(covariance * covariance) * 0.5


def cross_covariance(y, z, reduce: str = "half_squared_sum"):
    """The ``(M, K)`` covariance of the columns of ``y`` (N, M) with those of ``z`` (N, K)
    over the batch (divided by N), or (``reduce='half_squared_sum'``) half its squared
    Frobenius norm."""
    _check_reduce("cross_covariance", reduce)
    y, z = _matrix("cross_covariance", "y", y), _matrix("cross_covariance", "z", z)
    if y.dtype != z.dtype or y.shape[0] != z.shape[0]:
        raise errors.ShapeError(f"cross_covariance: y and z need one batch size and dtype, got "
                                f"{y.shape} {y.dtype} and {z.shape} {z.dtype}")
    covariance = matmul(_centered(y), _centered(z), transa=True) * (1.0 / y.shape[0])
    return _reduced(covariance, reduce)


def decov(h, reduce: str = "half_squared_sum"):
    """DeCov (Cogswell et al., 2016): the covariance of the columns of ``h`` (N, M) over the
    batch with its diagonal zeroed, ``(M, M)``, or (``reduce='half_squared_sum'``) half its
    squared Frobenius norm."""
    _check_reduce("decov", reduce)
    h = _matrix("decov", "h", h)
    centered = _centered(h)
    off_diagonal = 1 - np.eye(h.shape[1], dtype=h.dtype)
    covariance = matmul(centered, centered, transa=True) * (off_diagonal / h.shape[0])
    return _reduced(covariance, reduce)
