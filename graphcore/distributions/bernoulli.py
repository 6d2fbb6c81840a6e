"""The Bernoulli distribution."""

from __future__ import annotations

from typing import Any

import numpy as np

from graphcore import functions as F
from graphcore.distributions.distribution import Distribution, as_parameter, register_kl
from graphcore.errors import ArgumentTypeError
from graphcore.variable import Variable


class Bernoulli(Distribution):
    """1 with probability ``p`` (give ``p`` or ``logit``, not both). ``binary_check``: the
    log-probability of a value other than 0 or 1 is -inf (otherwise the formula extends to
    values in between, as a relaxed Bernoulli)."""

    def __init__(self, p: Any = None, logit: Any = None, binary_check: bool = False) -> None:
        if (p is None) == (logit is None):
            raise ArgumentTypeError("Bernoulli: give exactly one of p and logit")
        self.binary_check = binary_check
        if p is not None:
            self.p = as_parameter(p)
            self.logit = F.log(self.p) - F.log(1.0 - self.p)
        else:
            self.logit = as_parameter(logit)
            self.p = F.sigmoid(self.logit)

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.p.shape

    @property
    def event_shape(self) -> tuple[int, ...]:
        return ()

    @property
    def params(self) -> dict[str, Variable]:
        return {"logit": self.logit}

    @property
    def support(self) -> str:
        return "{0, 1}"

    def log_prob(self, x: Any) -> Variable:
        # x * logit - log(1 + exp(logit)): log p for x = 1, log(1 - p) for x = 0
        values = x.array if isinstance(x, Variable) else np.asarray(x)
        log_p = x * self.logit - F.softplus(self.logit)
        if self.binary_check:
            invalid = (values != 0) & (values != 1)
            if invalid.any():
                minus_inf = np.full(log_p.shape, -np.inf, log_p.dtype)
                log_p = F.where(np.broadcast_to(invalid, log_p.shape), minus_inf, log_p)
        return log_p

    def prob(self, x: Any) -> Variable:
        return F.exp(self.log_prob(x))

    @property
    def entropy(self) -> Variable:
        # -p log p - (1 - p) log(1 - p), with log p = logit - softplus(logit)
        return F.softplus(self.logit) - self.p * self.logit

    @property
    def mean(self) -> Variable:
        return self.p

    @property
    def variance(self) -> Variable:
        return self.p * (1.0 - self.p)

    def sample_n(self, n: int) -> Variable:
        draws = np.random.binomial(1, self.p.array, size=(n, *self.p.shape))
        return Variable(draws.astype(self.p.dtype), requires_grad=False)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Variable:
    return ((p.logit - q.logit) * p.p - F.softplus(p.logit) + F.softplus(q.logit))
