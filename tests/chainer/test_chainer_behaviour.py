"""Chainer behaviours the API reproduces, each checked against what Chainer's code does.

Chainer's source (chainer/functions/math/basic_math.py, average.py, matmul.py,
array/permutate.py) is the reference: a raw array beside a Variable is cast to the Variable's
dtype, ``F.add`` takes any number of inputs, ``F.matmul`` takes ``transa``/``transb``,
``F.mean``/``F.average`` take ``weights``, ``F.permutate`` checks its indices as Chainer's.
"""

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
from graphcore import Variable, errors
from graphcore.computational_graph import build_computational_graph
from graphcore.gradient_check import check_backward


def test_a_raw_array_beside_a_variable_takes_the_variables_dtype():
    x = Variable(np.ones((2, 3), np.float32))
    c = np.full((2, 3), 0.5)  # float64, as np.full makes it
    for y in (x * c, c * x, x + c, c + x, x - c, c - x, x / c, c / x, x ** c):
        assert y.dtype == np.float32
    np.testing.assert_allclose((x * c).array, 0.5)
    y = x * c
    y.grad = np.ones((2, 3), np.float32)
    y.backward()
    assert x.grad.dtype == np.float32
    with pytest.raises(errors.DTypeError):  # two Variables must still agree
        _ = x * Variable(c)


def test_add_takes_any_number_of_inputs_in_one_node():
    rng = np.random.default_rng(0)
    xs = [Variable(rng.standard_normal((2, 3))) for _ in range(4)]
    y = F.add(*xs)
    np.testing.assert_allclose(y.array, sum(x.array for x in xs))
    assert y.creator.label == "MultiAdd"
    assert F.add(xs[0], xs[1]).creator.label == "_ + _"  # two inputs: Chainer's Add node
    F.sum(y).backward()
    for x in xs:
        np.testing.assert_array_equal(x.grad, np.ones((2, 3)))
    dot = build_computational_graph([y]).dump()
    assert 'label="MultiAdd"' in dot
    with pytest.raises(TypeError, match="at least one"):
        F.add()


@pytest.mark.parametrize(("transa", "transb"), [(False, True), (True, False), (True, True)])
def test_matmul_transposes_its_operands_on_request(transa, transb):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 4, 3) if transa else (2, 3, 4))
    b = rng.standard_normal((2, 5, 4) if transb else (2, 4, 5))
    y = F.matmul(a, b, transa=transa, transb=transb)
    a_ = np.swapaxes(a, -1, -2) if transa else a
    b_ = np.swapaxes(b, -1, -2) if transb else b
    np.testing.assert_allclose(y.array, a_ @ b_)
    gy = rng.standard_normal((2, 3, 5))
    check_backward(lambda p, q: F.matmul(p, q, transa=transa, transb=transb), (a, b), gy,
                   dtype=np.float64)


def test_weighted_mean_is_chainers_average():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4))
    w_axis = rng.uniform(0.5, 2.0, 4)
    y = F.mean(x, axis=1, weights=w_axis)
    np.testing.assert_allclose(y.array, np.average(x, axis=1, weights=w_axis))
    w_all = rng.uniform(0.5, 2.0, (3, 4))
    np.testing.assert_allclose(F.average(x, weights=w_all).array,
                               np.average(x, weights=w_all))
    kept = F.mean(x, axis=0, weights=rng.uniform(0.5, 2.0, 3), keepdims=True)
    assert kept.shape == (1, 4)
    check_backward(lambda a, w: F.mean(a, axis=1, weights=w), (x, w_axis),
                   rng.standard_normal(3), dtype=np.float64)
    with pytest.raises(errors.ShapeError, match=r"weights must have shape \(4,\)"):
        F.mean(x, axis=1, weights=np.ones(3))
    with pytest.raises(errors.ShapeError, match="one axis"):
        F.mean(x, axis=(0, 1), weights=np.ones(4))
    assert F.mean(x).shape == ()  # no weights: the plain op as before
    assert graphcore.functions.average is F.mean


def _reference_softmax_cross_entropy(x, t, class_weight, ignore_label, normalize):
    """Chainer's definition, one position at a time."""
    n, c = x.shape[:2]
    positions = [(i,) + rest for i in range(n) for rest in np.ndindex(*x.shape[2:])]
    total, counted = 0.0, 0
    for pos in positions:
        label = t[pos]
        if label == ignore_label:
            continue
        scores = np.array([x[(pos[0], k) + pos[1:]] for k in range(c)])
        log_p = scores[label] - np.log(np.exp(scores - scores.max()).sum()) - scores.max()
        total -= (1.0 if class_weight is None else class_weight[label]) * log_p
        counted += 1
    return total / max(counted if normalize else n, 1)


@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 4), (2, 3, 2, 2)])
@pytest.mark.parametrize("class_weight", [None, [0.5, 2.0, 1.5]])
@pytest.mark.parametrize("normalize", [True, False])
def test_softmax_cross_entropy_equals_chainers_definition(shape, class_weight, normalize):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    t = rng.integers(0, 3, shape[:1] + shape[2:])
    t.flat[1] = -1  # one ignored position
    loss = F.softmax_cross_entropy(x, t, normalize=normalize,
                                   class_weight=None if class_weight is None
                                   else np.array(class_weight))
    expected = _reference_softmax_cross_entropy(x, t, class_weight, -1, normalize)
    np.testing.assert_allclose(float(loss.array), expected, rtol=1e-12)


def test_softmax_cross_entropy_refuses_mismatched_labels_and_weights():
    x = np.zeros((2, 3, 4))
    with pytest.raises(errors.ShapeError, match=r"expected labels of shape \(2, 4\)"):
        F.softmax_cross_entropy(x, np.zeros((2,), np.int32))
    with pytest.raises(errors.ShapeError, match="class_weight has 2 entries for 3 classes"):
        F.softmax_cross_entropy(x, np.zeros((2, 4), np.int32), class_weight=np.ones(2))


def test_variable_repr_and_str_are_chainers():
    x = Variable(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    assert repr(x) == "variable([[1., 2.],\n          [3., 4.]])"
    assert str(x) == "variable([[1. 2.]\n          [3. 4.]])"
    x.name = "x"
    assert repr(x) == "variable x([[1., 2.],\n            [3., 4.]])"
    assert repr(Variable(np.zeros((2, 0)))) == "variable([], shape=(2, 0))"
    assert repr(Variable(np.zeros((0,)))) == "variable([])"
    assert repr(Variable()) == "variable(None)"


@pytest.mark.parametrize("fn", [F.relu, F.leaky_relu, F.sigmoid, F.tanh, F.softplus, F.exp,
                                F.log, F.sqrt, F.square, F.absolute,
                                lambda x: F.clip(x, 0, 1)])
def test_float_only_ops_refuse_integer_arrays_naming_the_op(fn):
    x = np.array([1, -2, 3])
    with pytest.raises(errors.DTypeError, match=r"^\w+: expected a floating-point input, got "
                                                r"int64"):
        fn(x)


def test_scatter_add_has_chainers_signature_and_gradients():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 3))
    b = rng.standard_normal((3, 3))
    slices = np.array([0, 2, 0])  # repeated rows add up
    y = F.scatter_add(a, slices, b)
    expected = a.copy()
    np.add.at(expected, slices, b)
    np.testing.assert_allclose(y.array, expected)
    check_backward(lambda p, q: F.scatter_add(p, slices, q), (a, b),
                   rng.standard_normal((4, 3)), dtype=np.float64)
    row = F.scatter_add(a, (slice(None), 1), np.float64(2.0))  # b broadcasts to a[slices]
    np.testing.assert_allclose(row.array[:, 1], a[:, 1] + 2.0)


def test_permutate_gives_chainers_documented_results():
    """The examples of Chainer's ``F.permutate`` docstring (chainer/functions/array/
    permutate.py), then its checks: 1-D signed integer indices, one per element of the axis;
    whether they form a permutation only in debug mode, as Chainer."""
    x = np.arange(6).reshape((3, 2)).astype(np.float32)
    indices = np.array([2, 0, 1], np.int32)
    np.testing.assert_array_equal(F.permutate(x, indices).array, [[4, 5], [0, 1], [2, 3]])
    np.testing.assert_array_equal(F.permutate(x, indices, inv=True).array,
                                  [[2, 3], [4, 5], [0, 1]])
    for axis in (1, -1):
        np.testing.assert_array_equal(F.permutate(x, np.array([1, 0], np.int32), axis).array,
                                      [[1, 0], [3, 2], [5, 4]])
    for bad, kind, words in [(np.array([0.0, 1, 2]), errors.DTypeError, "signed integers"),
                             (np.array([0, 1], np.uint8), errors.DTypeError, "signed"),
                             (np.array([[0, 1, 2]]), errors.ShapeError, "1-D"),
                             (np.array([0, 1]), errors.ShapeError, "2 indices for axis 0")]:
        with pytest.raises(kind, match=words):
            F.permutate(x, bad)
    with pytest.raises(errors.ShapeError, match="axis 2 is out of range"):
        F.permutate(x, indices, axis=2)
    repeated = np.array([0, 1, 1])
    F.permutate(x, repeated)  # outside debug mode nothing looks for repeats (Chainer)
    with graphcore.using_config("debug", True):
        with pytest.raises(errors.ShapeError, match="indices repeat 1"):
            F.permutate(x, repeated)
        with pytest.raises(errors.ShapeError, match="index -1 is out of range"):
            F.permutate(x, np.array([-1, 0, 1]))
    with pytest.raises(errors.ShapeError, match="index 3 is out of range"):
        F.permutate(x, np.array([0, 3, 1]))  # numpy's IndexError, explained


class _UserOpRaising(graphcore.FunctionNode):
    def forward(self, inputs):
        raise KeyError("the user's own error")

    def backward(self, indexes, grad_outputs):
        return grad_outputs


def test_an_exception_in_a_users_forward_keeps_its_type():
    with pytest.raises(KeyError, match="the user's own error"):
        _UserOpRaising().apply((np.ones(3),))
    with pytest.raises(errors.ShapeError):  # a built-in op's numpy failure is explained
        F.matmul(np.ones((2, 3)), np.ones((4, 2)))
