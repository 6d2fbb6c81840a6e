"""Chainer's losses for variational auto-encoders and its reparameterized Gaussian sample.

Composites of registered ops (as they are in Chainer, except ``gaussian``, which Chainer
registers as one node): their gradients, double backprop and static mode come from the ops.
Randomness comes from numpy's global generator, as ``dropout``'s does.
"""

from __future__ import annotations

import math

import numpy as np

from graphcore.ops.activation import softplus
from graphcore.ops.math import exp
from graphcore.ops.reduction import sum as _sum
from graphcore.variable import as_variable

__all__ = ["bernoulli_nll", "gaussian", "gaussian_kl_divergence", "gaussian_nll"]


def _reduce(loss, reduce: str, name: str):
    if reduce == "sum":
        return _sum(loss)
    if reduce == "mean":
        return _sum(loss) * (1.0 / max(loss.size, 1))
    if reduce == "no":
        return loss
    raise ValueError(f"{name}: reduce must be 'sum', 'mean' or 'no', got {reduce!r}")


def gaussian(mean, ln_var, eps: np.ndarray | None = None, return_eps: bool = False):
    """A sample ``mean + exp(ln_var / 2) * eps`` with ``eps ~ N(0, 1)`` (drawn unless given),
    differentiable in ``mean`` and ``ln_var``; ``return_eps=True`` also returns ``eps``."""
    mean, ln_var = as_variable(mean), as_variable(ln_var)
    if eps is None:
        eps = np.random.standard_normal(mean.shape).astype(mean.dtype)
    z = mean + exp(ln_var * 0.5) * eps
    return (z, eps) if return_eps else z


def gaussian_kl_divergence(mean, ln_var, reduce: str = "sum"):
    """KL divergence of ``N(mean, exp(ln_var))`` from ``N(0, 1)``, elementwise, then summed
    (``reduce='sum'``, the default), averaged (``'mean'``) or not (``'no'``)."""
    mean, ln_var = as_variable(mean), as_variable(ln_var)
    loss = (mean * mean + exp(ln_var) - ln_var - 1.0) * 0.5
    return _reduce(loss, reduce, "gaussian_kl_divergence")


def bernoulli_nll(x, y, reduce: str = "sum"):
    """Negative log-likelihood of ``x`` under Bernoulli distributions with logits ``y``:
    ``softplus(y) - x * y``, summed (default), averaged (``reduce='mean'``) or elementwise
    (``'no'``)."""
    y = as_variable(y)
    loss = softplus(y) - x * y
    return _reduce(loss, reduce, "bernoulli_nll")


def gaussian_nll(x, mean, ln_var, reduce: str = "sum"):
    """Negative log-likelihood of ``x`` under ``N(mean, exp(ln_var))``, elementwise terms
    ``(log(2 pi) + ln_var + (x - mean)^2 exp(-ln_var)) / 2``, summed (default), averaged
    (``'mean'``) or not (``'no'``)."""
    mean, ln_var = as_variable(mean), as_variable(ln_var)
    diff = x - mean
    loss = (ln_var + diff * diff * exp(-ln_var) + math.log(2 * math.pi)) * 0.5
    return _reduce(loss, reduce, "gaussian_nll")
