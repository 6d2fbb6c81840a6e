"""F.identity: its inputs through one node, gradients passed through at every order."""

import numpy as np

import graphcore
import graphcore.functions as F
from graphcore.gradient_check import check_backward, check_double_backward


def test_identity_returns_its_inputs_through_one_node():
    x = graphcore.Variable(np.arange(3.0))
    y = F.identity(x)
    assert y.creator.label == "Identity" and y.creator.inputs[0] is x
    np.testing.assert_array_equal(y.array, x.array)
    a, b = F.identity(x, x * 2)
    assert a.creator is b.creator
    check_backward(lambda u, v: F.identity(u, v), (np.ones(3), np.ones(2)),
                   (np.arange(3.0), np.ones(2)))
    check_double_backward(lambda u: F.identity(u) * F.identity(u), (np.arange(3.0),),
                          np.ones(3), np.ones(3))
