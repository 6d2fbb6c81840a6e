"""Batch normalization (Chainer's ``F.batch_normalization``, ``F.fixed_batch_normalization``,
``F.batch_renormalization``, ``F.fixed_batch_renormalization``) as composites of registered
ops, so first and second order gradients come from those ops.

The statistics are taken over ``axis`` (default: axis 0 and every axis after gamma's, so a
``gamma`` of shape ``(C,)`` normalizes ``(N, C, H, W)`` per channel). ``gamma`` and ``beta``
have the shape of the remaining axes of ``x``, in order. The arithmetic runs in the dtype
that ``x`` and ``gamma`` promote to, float16 in float32 (as Chainer); the output has ``x``'s
dtype.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from graphcore import errors
from graphcore.ops.array import cast, reshape
from graphcore.ops.math import sqrt
from graphcore.ops.reduction import mean
from graphcore.variable import Variable


def statistics_axes(label: str, x_ndim: int, gamma_ndim: int, axis) -> tuple[int, ...]:
    """The axes of ``x`` the statistics are taken over: ``axis`` as a sorted tuple, or by
    default axis 0 and every axis after the ``gamma_ndim`` that follow it."""
    if axis is None:
        return (0,) + tuple(range(gamma_ndim + 1, x_ndim))
    if isinstance(axis, int | np.integer):
        axis = (int(axis),)
    elif not isinstance(axis, Sequence) or not all(isinstance(a, int | np.integer)
                                                   for a in axis):
        raise errors.ArgumentTypeError(f"{label}: axis must be an int, a tuple of ints or "
                                       f"None, got {axis!r}")
    axes = tuple(int(a) for a in axis)
    if any(not -x_ndim <= a < x_ndim for a in axes):
        raise errors.ShapeError(f"{label}: axis {axes} out of range for an input of "
                                f"{x_ndim} dimensions")
    axes = tuple(a % x_ndim for a in axes)
    if any(a >= b for a, b in zip(axes, axes[1:], strict=False)):
        raise errors.ArgumentValueError(f"{label}: numbers in axis must be sorted in ascending "
                                        f"order, got {axes}")
    return axes


def _array(a):
    return a.array if isinstance(a, Variable) else np.asarray(a)


def _check_params(label: str, x, axes, params: dict) -> tuple[int, ...]:
    """Check that ``x`` is floating point and every named parameter has the shape of ``x``'s
    axes outside ``axes`` and the first one's dtype; return that broadcastable shape."""
    if x.dtype.kind != "f":
        raise errors.DTypeError(f"{label}: x must be floating point, got {x.dtype}")
    key_shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    first_dtype = None
    for name, p in params.items():
        if p.shape != key_shape:
            raise errors.ShapeError(
                f"{label}: {name} must have the shape {key_shape} of x's axes outside "
                f"{axes} (x {x.shape}), got {p.shape}")
        if p.dtype.kind != "f":
            raise errors.DTypeError(f"{label}: {name} must be floating point, got {p.dtype}")
        if first_dtype is None:
            first_dtype = p.dtype
        elif p.dtype != first_dtype:
            raise errors.DTypeError(f"{label}: {name} must have gamma's dtype {first_dtype}, "
                                    f"got {p.dtype}")
    return tuple(1 if i in axes else n for i, n in enumerate(x.shape))


def compute_dtype(x_dtype, gamma_dtype) -> np.dtype:
    """The dtype batch normalization computes in: the promotion of both, float16 as float32."""
    dtype = np.promote_types(x_dtype, gamma_dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def as_dtype(v, dtype):
    """``v`` in ``dtype`` (a Cast only when it differs)."""
    return v if v.dtype == dtype else cast(v, dtype)


def _warn_single_values(label: str, x, axes) -> None:
    if all(x.shape[i] == 1 for i in axes):
        what = ("a batch with no more than one sample" if 0 in axes else
                "a batch with single dimensions along all axes the statistics are taken over")
        warnings.warn(f"{label} received {what}; the output is always zero for such a batch "
                      "(evaluation run with config.train True, or a last batch of one sample?)",
                      UserWarning, stacklevel=3)


def _update_running(running, value: np.ndarray, decay: float, label: str, name: str) -> None:
    """Move ``running`` (an array updated in place) towards ``value`` by ``1 - decay``."""
    if running is None:
        return
    target = running.array if isinstance(running, Variable) else running
    if not isinstance(target, np.ndarray) or target.shape != value.shape:
        raise errors.ShapeError(f"{label}: {name} must be an array of shape {value.shape}, "
                                f"got {getattr(target, 'shape', type(target).__name__)}")
    target *= decay
    target += (1 - decay) * value


def _batch_statistics(label, x, gamma, beta, eps, axis):
    axes = statistics_axes(label, x.ndim, gamma.ndim, axis)
    shape = _check_params(label, x, axes, {"gamma": gamma, "beta": beta})
    _warn_single_values(label, x, axes)
    dtype = compute_dtype(x.dtype, gamma.dtype)
    xc = as_dtype(x, dtype)
    mu = mean(xc, axis=axes, keepdims=True)
    centered = xc - mu
    var = mean(centered * centered, axis=axes, keepdims=True)
    std = sqrt(var + eps)
    return axes, shape, dtype, centered, mu, var, std


def batch_normalization(x, gamma, beta, *, eps: float = 2e-5, running_mean=None,
                        running_var=None, decay: float = 0.9, axis=None):
    """Normalize ``x`` by its batch mean and variance over ``axis``, then scale by ``gamma``
    and shift by ``beta``.

    ``running_mean`` and ``running_var`` (arrays, optional) are updated in place:
    ``running = decay * running + (1 - decay) * statistic``, with the variance made unbiased
    (``* m / (m - 1)`` for ``m`` values per statistic).
    """
    label = "batch_normalization"
    axes, shape, dtype, centered, mu, var, std = _batch_statistics(label, x, gamma, beta, eps,
                                                                    axis)
    y = centered / std * reshape(as_dtype(gamma, dtype), shape) \
        + reshape(as_dtype(beta, dtype), shape)
    if running_mean is not None or running_var is not None:
        m = x.size // max(_array(mu).size, 1)
        _update_running(running_mean, _array(mu).reshape(gamma.shape), decay, label,
                        "running_mean")
        _update_running(running_var, _array(var).reshape(gamma.shape) * (m / max(m - 1, 1)),
                        decay, label, "running_var")
    return as_dtype(y, x.dtype)


def fixed_batch_normalization(x, gamma, beta, mean, var, eps: float = 2e-5, axis=None):
    """Batch normalization with given statistics (inference); differentiable in all five
    inputs."""
    label = "fixed_batch_normalization"
    axes = statistics_axes(label, x.ndim, gamma.ndim, axis)
    shape = _check_params(label, x, axes, {"gamma": gamma, "beta": beta, "mean": mean,
                                           "var": var})
    dtype = compute_dtype(x.dtype, gamma.dtype)

    def expand(p):
        return reshape(as_dtype(p, dtype), shape)

    y = (as_dtype(x, dtype) - expand(mean)) / sqrt(expand(var) + eps) * expand(gamma) + expand(beta)
    return as_dtype(y, x.dtype)


def batch_renormalization(x, gamma, beta, rmax: float, dmax: float, eps: float = 2e-5,
                          running_mean=None, running_var=None, decay: float = 0.9,
                          update_statistics: bool = False):
    """Batch renormalization (Ioffe, 2017): batch normalization corrected towards the running
    statistics by ``r = clip(std / running_std, 1/rmax, rmax)`` and
    ``d = clip((mean - running_mean) / running_std, -dmax, dmax)``, both held constant in
    the gradient. ``running_mean`` and ``running_var`` are required; they are updated in place
    only with ``update_statistics=True``.
    """
    label = "batch_renormalization"
    if running_mean is None or running_var is None:
        raise errors.ArgumentTypeError(f"{label}: running_mean and running_var are required")
    axes, shape, dtype, centered, mu, var, std = _batch_statistics(label, x, gamma, beta, eps,
                                                                    None)
    running_mean_a = _array(running_mean)
    running_var_a = _array(running_var)
    running_std = np.sqrt(running_var_a.astype(dtype) + eps).reshape(shape)
    r = np.clip(_array(std) / running_std, 1.0 / rmax, rmax).astype(dtype)
    d = np.clip((_array(mu) - running_mean_a.astype(dtype).reshape(shape)) / running_std,
                -dmax, dmax).astype(dtype)
    x_hat = centered / std * r + d
    y = x_hat * reshape(as_dtype(gamma, dtype), shape) + reshape(as_dtype(beta, dtype), shape)
    if update_statistics:
        m = x.size // max(_array(mu).size, 1)
        _update_running(running_mean, _array(mu).reshape(gamma.shape), decay, label,
                        "running_mean")
        _update_running(running_var, _array(var).reshape(gamma.shape) * (m / max(m - 1, 1)),
                        decay, label, "running_var")
    return as_dtype(y, x.dtype)


def fixed_batch_renormalization(x, gamma, beta, mean, var, eps: float = 2e-5):
    """Deprecated in Chainer (a DeprecationWarning says so): ``fixed_batch_normalization``."""
    warnings.warn("fixed_batch_renormalization is deprecated; use fixed_batch_normalization "
                  "instead", DeprecationWarning, stacklevel=2)
    return fixed_batch_normalization(x, gamma, beta, mean, var, eps)
