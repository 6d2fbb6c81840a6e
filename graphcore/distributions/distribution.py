"""The distribution base class and the KL-divergence registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphcore import functions as F
from graphcore.errors import ArgumentTypeError
from graphcore.variable import Variable

_KL: dict[tuple[type, type], Callable[[Any, Any], Variable]] = {}


class Distribution:
    """A distribution over arrays of ``event_shape``, one per element of ``batch_shape``.

    Subclasses define what they can compute; what they cannot raises NotImplementedError
    naming it. ``sample(sample_shape)`` calls ``sample_n`` and reshapes."""

    @property
    def batch_shape(self) -> tuple[int, ...]:
        raise NotImplementedError(f"{type(self).__name__}.batch_shape")

    @property
    def event_shape(self) -> tuple[int, ...]:
        raise NotImplementedError(f"{type(self).__name__}.event_shape")

    @property
    def xp(self) -> Any:
        return np

    def _missing(self, what: str) -> NotImplementedError:
        return NotImplementedError(f"{type(self).__name__} does not define {what}")

    def log_prob(self, x: Any) -> Variable:
        raise self._missing("log_prob")

    def prob(self, x: Any) -> Variable:
        return F.exp(self.log_prob(x))

    def cdf(self, x: Any) -> Variable:
        raise self._missing("cdf")

    def log_cdf(self, x: Any) -> Variable:
        raise self._missing("log_cdf")

    def icdf(self, x: Any) -> Variable:
        raise self._missing("icdf")

    def survival_function(self, x: Any) -> Variable:
        raise self._missing("survival_function")

    def log_survival_function(self, x: Any) -> Variable:
        raise self._missing("log_survival_function")

    def perplexity(self, x: Any) -> Variable:
        return F.exp(-self.log_prob(x))

    @property
    def entropy(self) -> Variable:
        raise self._missing("entropy")

    @property
    def mean(self) -> Variable:
        raise self._missing("mean")

    @property
    def mode(self) -> Variable:
        raise self._missing("mode")

    @property
    def variance(self) -> Variable:
        raise self._missing("variance")

    @property
    def stddev(self) -> Variable:
        return self.variance ** 0.5

    @property
    def covariance(self) -> Variable:
        raise self._missing("covariance")

    @property
    def params(self) -> dict[str, Variable]:
        raise self._missing("params")

    @property
    def support(self) -> str:
        raise self._missing("support")

    def sample_n(self, n: int) -> Variable:
        raise self._missing("sample_n")

    def sample(self, sample_shape: int | tuple[int, ...] = ()) -> Variable:
        """Samples of shape ``sample_shape + batch_shape + event_shape``."""
        final = self.batch_shape + self.event_shape
        if isinstance(sample_shape, int | np.integer):
            n, final = int(sample_shape), (int(sample_shape),) + final
        elif isinstance(sample_shape, tuple):
            n, final = int(np.prod(sample_shape, dtype=np.int64)), sample_shape + final
        else:
            raise ArgumentTypeError(f"{type(self).__name__}.sample: sample_shape must be an int "
                                    f"or a tuple of ints, got {type(sample_shape).__name__}")
        return self.sample_n(n).reshape(final)


def register_kl(first: type, second: type) -> Callable[[Callable], Callable]:
    """Decorate ``kl(p, q)`` as the KL divergence of a ``first`` from a ``second``."""

    def register(kl: Callable) -> Callable:
        _KL[first, second] = kl
        return kl

    return register


def kl_divergence(p: Distribution, q: Distribution) -> Variable:
    """``KL(p || q)``, batchwise, by the function registered for their two types."""
    kl = _KL.get((type(p), type(q)))
    if kl is None:
        raise NotImplementedError(f"no KL divergence is registered for {type(p).__name__} "
                                  f"and {type(q).__name__} (register_kl adds one)")
    return kl(p, q)


def cross_entropy(p: Distribution, q: Distribution) -> Variable:
    """``H(p, q) = H(p) + KL(p || q)``."""
    return p.entropy + kl_divergence(p, q)


def as_parameter(value: Any) -> Variable:
    """A distribution parameter as a Variable (an array is a constant)."""
    return value if isinstance(value, Variable) else Variable(np.asarray(value),
                                                              requires_grad=False)
