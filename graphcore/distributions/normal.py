"""The normal distribution."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from graphcore import functions as F
from graphcore.distributions.distribution import Distribution, as_parameter, register_kl
from graphcore.errors import ArgumentTypeError
from graphcore.variable import Variable

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Normal(Distribution):
    """``N(loc, scale**2)`` elementwise; give ``scale`` or ``log_scale`` (not both)."""

    def __init__(self, loc: Any, scale: Any = None, **kwargs: Any) -> None:
        log_scale = kwargs.pop("log_scale", None)
        if kwargs:
            raise TypeError(f"Normal() got unexpected keyword argument(s) {', '.join(kwargs)}")
        if (scale is None) == (log_scale is None):
            raise ArgumentTypeError("Normal: give exactly one of scale and log_scale")
        self.loc = as_parameter(loc)
        if scale is not None:
            self.scale = as_parameter(scale)
            self.log_scale = F.log(self.scale)
        else:
            self.log_scale = as_parameter(log_scale)
            self.scale = F.exp(self.log_scale)

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.loc.shape

    @property
    def event_shape(self) -> tuple[int, ...]:
        return ()

    @property
    def params(self) -> dict[str, Variable]:
        return {"loc": self.loc, "scale": self.scale}

    @property
    def support(self) -> str:
        return "real"

    def log_prob(self, x: Any) -> Variable:
        z = (x - self.loc) / self.scale
        return -self.log_scale - _LOG_SQRT_2PI - 0.5 * z * z

    def cdf(self, x: Any) -> Variable:
        return 0.5 * (1.0 + _erf((x - self.loc) / (self.scale * math.sqrt(2.0))))

    def survival_function(self, x: Any) -> Variable:
        return 1.0 - self.cdf(x)

    @property
    def entropy(self) -> Variable:
        return self.log_scale + (0.5 + _LOG_SQRT_2PI)

    @property
    def mean(self) -> Variable:
        return self.loc

    @property
    def mode(self) -> Variable:
        return self.loc

    @property
    def variance(self) -> Variable:
        return self.scale * self.scale

    @property
    def stddev(self) -> Variable:
        return self.scale

    def sample_n(self, n: int) -> Variable:
        shape = (n, *self.loc.shape)
        eps = np.random.standard_normal(shape).astype(self.loc.dtype)
        return F.broadcast_to(self.loc, shape) + F.broadcast_to(self.scale, shape) * eps


def _erf(x: Variable) -> Variable:
    """erf, for the CDF: graphcore's F.erf where it exists."""
    erf = getattr(F, "erf", None)
    if erf is None:
        raise NotImplementedError("Normal.cdf needs F.erf, which graphcore does not define")
    return erf(x)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Variable:
    diff = p.loc - q.loc
    return (q.log_scale - p.log_scale
            + (p.variance + diff * diff) / (2.0 * q.variance) - 0.5)
