"""Probability distributions (Chainer's ``chainer.distributions``): ``Normal``, ``Bernoulli``
and ``Independent``, with ``kl_divergence``, ``cross_entropy`` and ``register_kl``.

A distribution's parameters are Variables (arrays are taken as constants), and everything it
computes is built from graphcore's functions, so ``log_prob``, ``entropy``, the moments,
``kl_divergence`` and ``Normal.sample`` (reparameterized: ``loc + scale * eps``) are
differentiable to any order. ``sample(shape)`` has shape ``shape + batch_shape +
event_shape``. Chainer's other distributions (Beta, Categorical, Dirichlet, Gamma, ...) are
not here: ``chainer.distributions`` names them in an AttributeError.

>>> q = Independent(Normal(mu, log_scale=ln_sigma))      # a VAE's posterior
>>> z = q.sample(1)
>>> kl = kl_divergence(q, Independent(Normal(np.zeros(3), scale=np.ones(3))))
"""

from graphcore.distributions.bernoulli import Bernoulli
from graphcore.distributions.distribution import (
    Distribution,
    cross_entropy,
    kl_divergence,
    register_kl,
)
from graphcore.distributions.independent import Independent
from graphcore.distributions.normal import Normal

__all__ = ["Bernoulli", "Distribution", "Independent", "Normal", "cross_entropy",
           "kl_divergence", "register_kl"]
