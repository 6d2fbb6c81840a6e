"""Initializers: Chainer 7.8.1's set, arguments and statistics."""

import numpy as np
import pytest

from graphcore import initializers as I


@pytest.mark.parametrize("make", [
    lambda rng: I.Normal(0.1, rng=rng), lambda rng: I.LeCunNormal(rng=rng),
    lambda rng: I.GlorotNormal(rng=rng), lambda rng: I.HeNormal(rng=rng),
    lambda rng: I.Uniform(0.1, rng=rng), lambda rng: I.LeCunUniform(rng=rng),
    lambda rng: I.GlorotUniform(rng=rng), lambda rng: I.HeUniform(rng=rng),
    lambda rng: I.Orthogonal(rng=rng),
])
def test_an_rng_makes_the_draw_reproducible_and_leaves_the_global_generator_alone(make):
    np.random.seed(0)
    expected_global = np.random.rand()
    np.random.seed(0)
    a, b = np.empty((20, 30), np.float32), np.empty((20, 30), np.float32)
    make(np.random.RandomState(7))(a)
    make(np.random.RandomState(7))(b)
    np.testing.assert_array_equal(a, b)
    assert np.random.rand() == expected_global


@pytest.mark.parametrize(("cls", "fan_factor"), [
    (I.LeCunNormal, lambda fi, fo: 1 / fi), (I.GlorotNormal, lambda fi, fo: 2 / (fi + fo)),
    (I.HeNormal, lambda fi, fo: 2 / fi),
    (lambda **kw: I.HeNormal(fan_option="fan_out", **kw), lambda fi, fo: 2 / fo),
])
def test_normal_initializers_have_their_std(cls, fan_factor):
    w = np.empty((400, 50, 3, 3))  # fan_in 450, fan_out 3600
    cls(rng=np.random.RandomState(0))(w)
    assert w.std() == pytest.approx(np.sqrt(fan_factor(450, 3600)), rel=0.02)


@pytest.mark.parametrize(("cls", "bound"), [
    (I.LeCunUniform, np.sqrt(3 / 450)), (I.GlorotUniform, np.sqrt(6 / (450 + 3600))),
    (I.HeUniform, np.sqrt(6 / 450)),
])
def test_uniform_initializers_have_their_bounds(cls, bound):
    w = np.empty((400, 50, 3, 3))
    cls(rng=np.random.RandomState(0))(w)
    assert np.abs(w).max() <= bound
    assert np.abs(w).max() > 0.99 * bound


@pytest.mark.parametrize("shape", [(3, 7), (7, 3), (4, 2, 3)])
def test_orthogonal_rows_or_columns_are_orthonormal_times_scale(shape):
    w = np.empty(shape)
    I.Orthogonal(scale=2.0)(w)
    flat = w.reshape(shape[0], -1)
    gram = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(gram, 4.0 * np.eye(len(gram)), atol=1e-10)


def test_orthogonal_modes_refuse_shapes_they_cannot_make():
    with pytest.raises(ValueError, match="embedding"):
        I.Orthogonal(mode="embedding")(np.empty((3, 7)))
    with pytest.raises(ValueError, match="projection"):
        I.Orthogonal(mode="projection")(np.empty((7, 3)))
    with pytest.raises(ValueError, match="mode"):
        I.Orthogonal(mode="nope")


def test_constants_identity_and_nan():
    a = np.empty((2, 3), np.float32)
    I.Constant(np.array([1.0, 2.0, 3.0]))(a)
    np.testing.assert_array_equal(a, [[1, 2, 3], [1, 2, 3]])
    I.NaN()(a)
    assert np.isnan(a).all()
    b = np.empty((3, 3))
    I.Identity(scale=0.5)(b)
    np.testing.assert_array_equal(b, 0.5 * np.eye(3))
    with pytest.raises(ValueError, match="square"):
        I.Identity()(np.empty((2, 3)))


def test_an_initializer_with_a_dtype_refuses_another_dtype():
    with pytest.raises(TypeError, match="float64"):
        I.Normal(dtype=np.float64)(np.empty(3, np.float32))
    with pytest.raises(ValueError, match="dtype mismatch"):
        I.generate_array(I.Zero(np.float32), (2,), np, dtype=np.float64)
    assert I.generate_array(I.Zero(np.float32), (2,), np).dtype == np.float32


def test_upsampling_filter_is_the_bilinear_kernel():
    w = np.empty((2, 2, 4, 4))
    I.UpsamplingDeconvFilter()(w)
    kernel = np.array([0.25, 0.75, 0.75, 0.25])
    np.testing.assert_allclose(w[0, 0], np.outer(kernel, kernel))
    np.testing.assert_array_equal(w[0, 1], 0)
    d = np.empty((2, 1, 3, 3))
    I.DownsamplingConvFilter()(d)
    assert d[1, 0].sum() == pytest.approx(1.0)


def test_initializer_like_values():
    for ok in (None, 0.5, np.zeros(3), I.Zero(), lambda a: None):
        I.check_is_initializer_like(ok)
    for bad in ("zeros", object()):
        with pytest.raises(TypeError, match="wrong type"):
            I.check_is_initializer_like(bad)
    assert isinstance(I.get_initializer(None), I.LeCunNormal)
    assert isinstance(I.get_initializer(2.0), I.Constant)
    assert I._get_initializer is I.get_initializer  # Chainer's private names, which its code uses
    assert I._check_is_initializer_like is I.check_is_initializer_like
