"""graphcore.distributions: values against their closed forms, gradients against finite
differences (float64), KL divergences against Monte Carlo estimates, shapes of samples."""

import math

import numpy as np
import pytest

import graphcore
from graphcore import distributions as D
from graphcore import functions as F
from graphcore.gradient_check import check_backward, check_double_backward

RNG = np.random.default_rng(0)
LOC, LOG_SCALE = RNG.standard_normal((3, 4)), RNG.uniform(-0.5, 0.5, (3, 4))
X = RNG.standard_normal((3, 4))


def test_normal_log_prob_entropy_and_moments():
    d = D.Normal(LOC, log_scale=LOG_SCALE)
    scale = np.exp(LOG_SCALE)
    expected = -np.log(scale) - 0.5 * np.log(2 * np.pi) - 0.5 * ((X - LOC) / scale) ** 2
    np.testing.assert_allclose(d.log_prob(X).array, expected)
    np.testing.assert_allclose(d.prob(X).array, np.exp(expected))
    np.testing.assert_allclose(d.entropy.array, 0.5 * np.log(2 * np.pi * np.e * scale ** 2))
    np.testing.assert_allclose(d.variance.array, scale ** 2)
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert D.Normal(LOC, scale=scale).log_prob(X).array == pytest.approx(expected)
    with pytest.raises(TypeError, match="exactly one of scale and log_scale"):
        D.Normal(LOC)


def test_normal_samples_are_reparameterized():
    loc = graphcore.Variable(LOC.copy())
    log_scale = graphcore.Variable(LOG_SCALE.copy())
    z = D.Normal(loc, log_scale=log_scale).sample(5)
    assert z.shape == (5, 3, 4)
    F.sum(z).backward()
    np.testing.assert_allclose(loc.grad, np.full((3, 4), 5.0))
    assert np.abs(log_scale.grad).sum() > 0
    assert D.Normal(LOC, scale=np.ones((3, 4))).sample((2, 6)).shape == (2, 6, 3, 4)
    big = D.Normal(np.zeros(1), scale=np.full(1, 2.0)).sample(20000).array
    assert big.mean() == pytest.approx(0.0, abs=0.05) and big.std() == pytest.approx(2, rel=0.03)


def test_normal_gradients_match_finite_differences():
    def log_prob(loc, log_scale, x):
        return D.Normal(loc, log_scale=log_scale).log_prob(x)

    gy = RNG.standard_normal((3, 4))
    check_backward(log_prob, (LOC, LOG_SCALE, X), gy)
    check_double_backward(log_prob, (LOC, LOG_SCALE, X), gy,
                          tuple(RNG.standard_normal((3, 4)) for _ in range(3)))


def test_bernoulli_log_prob_and_binary_check():
    logit = RNG.standard_normal(5)
    p = 1 / (1 + np.exp(-logit))
    x = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    d = D.Bernoulli(logit=logit)
    np.testing.assert_allclose(d.log_prob(x).array, np.log(np.where(x == 1, p, 1 - p)))
    np.testing.assert_allclose(D.Bernoulli(p=p).log_prob(x).array, d.log_prob(x).array)
    np.testing.assert_allclose(d.entropy.array, -p * np.log(p) - (1 - p) * np.log(1 - p))
    checked = D.Bernoulli(logit=logit, binary_check=True).log_prob(x + [0, 0, 0, 0.5, 0])
    assert checked.array[3] == -np.inf and np.isfinite(checked.array[[0, 1, 2, 4]]).all()
    samples = d.sample(4000).array
    assert set(np.unique(samples)) <= {0.0, 1.0}
    np.testing.assert_allclose(samples.mean(axis=0), p, atol=0.04)
    check_backward(lambda lg: D.Bernoulli(logit=lg).log_prob(x), (logit,),
                   RNG.standard_normal(5))


def _mc_kl(p, q, n=200000):
    z = p.sample(n)
    return (p.log_prob(z) - q.log_prob(z)).array.mean(axis=0)


def test_kl_divergences_match_monte_carlo():
    np.random.seed(1)
    p = D.Normal(np.array([0.3, -1.0]), scale=np.array([0.8, 1.5]))
    q = D.Normal(np.array([0.0, 0.5]), scale=np.array([1.0, 0.7]))
    np.testing.assert_allclose(D.kl_divergence(p, q).array, _mc_kl(p, q), rtol=0.03)
    bp, bq = D.Bernoulli(p=np.array([0.2, 0.7])), D.Bernoulli(p=np.array([0.5, 0.4]))
    exact = (bp.p.array * np.log(bp.p.array / bq.p.array)
             + (1 - bp.p.array) * np.log((1 - bp.p.array) / (1 - bq.p.array)))
    np.testing.assert_allclose(D.kl_divergence(bp, bq).array, exact)
    np.testing.assert_allclose(D.cross_entropy(p, q).array,
                               p.entropy.array + D.kl_divergence(p, q).array)
    with pytest.raises(NotImplementedError, match="no KL divergence is registered for Normal "
                       "and Bernoulli"):
        D.kl_divergence(p, bq)


def test_independent_sums_over_its_event_axes():
    base = D.Normal(LOC, log_scale=LOG_SCALE)
    d = D.Independent(base)
    assert d.batch_shape == (3,) and d.event_shape == (4,)
    np.testing.assert_allclose(d.log_prob(X).array, base.log_prob(X).array.sum(axis=1))
    q = D.Independent(D.Normal(np.zeros((3, 4)), scale=np.ones((3, 4))))
    np.testing.assert_allclose(D.kl_divergence(d, q).array,
                               D.kl_divergence(base, q.distribution).array.sum(axis=1))
    assert D.Independent(base, reinterpreted_batch_ndims=2).event_shape == (3, 4)
    assert d.sample(2).shape == (2, 3, 4)
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims must be in 0..2"):
        D.Independent(base, 3)


def test_a_vae_elbo_trains_through_the_distributions():
    np.random.seed(0)
    import graphcore.links as L

    enc_mu, enc_ls, dec = L.Linear(6, 2), L.Linear(6, 2), L.Linear(2, 6)
    model = graphcore.Chain(enc_mu=enc_mu, enc_ls=enc_ls, dec=dec)
    opt = graphcore.optimizers.Adam(alpha=0.02).setup(model)
    x = (np.random.rand(32, 6) > 0.5).astype(np.float32)
    prior = D.Independent(D.Normal(np.zeros(2, np.float32), scale=np.ones(2, np.float32)), 1)

    def loss():
        q = D.Independent(D.Normal(enc_mu(x), log_scale=enc_ls(x)))
        z = q.sample(1)[0]
        p_x = D.Independent(D.Bernoulli(logit=dec(z)))
        return -F.mean(p_x.log_prob(x)) + F.mean(D.kl_divergence(q, prior))

    first = float(loss().array)
    for _ in range(60):
        opt.update(loss)
    assert float(loss().array) < first
    assert math.isfinite(first)
