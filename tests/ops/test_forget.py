"""F.forget: the same values and gradients as calling the function, without its graph."""

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore.gradient_check import check_backward


def test_forget_gives_the_gradients_of_the_function_into_inputs_and_parameters():
    rng = np.random.default_rng(0)
    link = L.Linear(4, 3)
    x = rng.standard_normal((5, 4)).astype(np.float32)

    def f(v):
        return F.tanh(link(v)) * 2, F.sum(link(v))

    grads = []
    for use_forget in (False, True):
        link.cleargrads()
        v = graphcore.Variable(x.copy())
        a, b = F.forget(f, v) if use_forget else f(v)
        (F.sum(a * a) + b).backward()
        grads.append((v.grad.copy(), link.W.grad.copy(), link.b.grad.copy()))
    for plain, forgotten in zip(*grads, strict=True):
        np.testing.assert_allclose(forgotten, plain, rtol=1e-6)


def test_forget_records_one_node_and_checks_numerically():
    x, y = np.random.default_rng(1).standard_normal((2, 3, 4))
    z = F.forget(lambda a, b: a * b + a, graphcore.Variable(x), graphcore.Variable(y))
    assert z.creator.label == "Forget"
    assert z.creator.inputs[0].creator is None  # the product's graph was not kept
    check_backward(lambda a, b: F.forget(lambda p, q: p * q + F.exp(q), a, b), (x, y),
                   np.ones((3, 4)))


def test_forget_refuses_what_chainer_refuses():
    v = graphcore.Variable(np.zeros(1))
    with pytest.raises(TypeError, match="callable"):
        F.forget(1)
    with pytest.raises(RuntimeError, match="got int"):
        F.forget(lambda: 1)
    with pytest.raises(RuntimeError, match="12th element .* int"):
        F.forget(lambda: (v,) * 11 + (1,))
    y = F.forget(lambda a: a * 2, v)
    y.grad = np.ones(1)
    with pytest.raises(RuntimeError, match="double backpropagation"):
        y.backward(enable_double_backprop=True)
