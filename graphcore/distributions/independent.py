"""Independent: the last batch axes of a distribution read as event axes."""

from __future__ import annotations

from typing import Any

from graphcore import functions as F
from graphcore.distributions.distribution import (
    Distribution,
    kl_divergence,
    register_kl,
)
from graphcore.errors import ArgumentValueError
from graphcore.variable import Variable


class Independent(Distribution):
    """``distribution`` with its last ``reinterpreted_batch_ndims`` batch axes (all but the
    first by default) taken as one event: log-probabilities, entropies and KL divergences
    are summed over them."""

    def __init__(self, distribution: Distribution,
                 reinterpreted_batch_ndims: int | None = None) -> None:
        self.distribution = distribution
        batch_ndim = len(distribution.batch_shape)
        n = max(batch_ndim - 1, 0) if reinterpreted_batch_ndims is None \
            else reinterpreted_batch_ndims
        if not 0 <= n <= batch_ndim:
            raise ArgumentValueError(f"Independent: reinterpreted_batch_ndims must be in 0.."
                                     f"{batch_ndim} for batch shape "
                                     f"{distribution.batch_shape}, got {n}")
        self.reinterpreted_batch_ndims = n

    @property
    def batch_shape(self) -> tuple[int, ...]:
        shape = self.distribution.batch_shape
        return shape[:len(shape) - self.reinterpreted_batch_ndims]

    @property
    def event_shape(self) -> tuple[int, ...]:
        shape = self.distribution.batch_shape
        return shape[len(shape) - self.reinterpreted_batch_ndims:] + \
            self.distribution.event_shape

    def _sum_event(self, value: Variable) -> Variable:
        n = self.reinterpreted_batch_ndims
        if n == 0:
            return value
        return F.sum(value, axis=tuple(range(value.ndim - n, value.ndim)))

    def log_prob(self, x: Any) -> Variable:
        return self._sum_event(self.distribution.log_prob(x))

    def prob(self, x: Any) -> Variable:
        return F.exp(self.log_prob(x))

    @property
    def entropy(self) -> Variable:
        return self._sum_event(self.distribution.entropy)

    @property
    def mean(self) -> Variable:
        return self.distribution.mean

    @property
    def mode(self) -> Variable:
        return self.distribution.mode

    @property
    def variance(self) -> Variable:
        return self.distribution.variance

    @property
    def stddev(self) -> Variable:
        return self.distribution.stddev

    @property
    def params(self) -> dict[str, Variable]:
        return self.distribution.params

    @property
    def support(self) -> str:
        return self.distribution.support

    def sample_n(self, n: int) -> Variable:
        return self.distribution.sample_n(n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Variable:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims or \
            p.event_shape != q.event_shape:
        raise ArgumentValueError(f"kl_divergence: the two Independent distributions' events "
                                 f"differ: {p.event_shape} and {q.event_shape}")
    return p._sum_event(kl_divergence(p.distribution, q.distribution))
