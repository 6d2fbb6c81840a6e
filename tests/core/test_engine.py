"""Contracts of the define-by-run engine: recording, backward order, accumulation, freeing,
higher-order gradients, configuration switches and errors that name the op."""

import gc
import weakref

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import Variable, errors
from graphcore.function_node import recording
from graphcore.static.call_node import StaticCall


def var(*shape, seed=0, dtype=np.float64):
    return Variable(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def test_gradient_accumulates_when_a_value_is_used_twice():
    x = var(3)
    y = F.sum(x * x + x)
    y.backward()
    np.testing.assert_allclose(x.grad, 2 * x.array + 1)


def test_backward_accumulates_into_existing_grad_until_cleared():
    x = var(3)
    F.sum(x * 2.0).backward()
    F.sum(x * 3.0).backward()
    np.testing.assert_allclose(x.grad, np.full(3, 5.0))
    x.cleargrad()
    assert x.grad is None


def test_diamond_graph_runs_each_node_once_in_rank_order():
    x = var(4)
    a = F.exp(x)
    b = a * 3.0
    c = a + b
    d = F.sum(c * a)
    d.backward()
    ea = np.exp(x.array)
    # d = sum(a*a + 3a*a) = sum(4 a^2), dd/dx = 8 a * a
    np.testing.assert_allclose(x.grad, 8 * ea * ea, rtol=1e-12)


def test_deep_chain_backward_does_not_recurse():
    x = var(2)
    h = x
    for _ in range(5000):
        h = h * 1.0
    F.sum(h).backward()
    np.testing.assert_allclose(x.grad, np.ones(2))


def test_graph_is_freed_when_the_last_output_reference_goes():
    x = var(3, 3)
    h = F.relu(x)
    node = weakref.ref(h.creator)
    y = F.sum(h)
    del h
    assert node() is not None  # kept alive through y's graph
    del y
    gc.disable()
    try:
        assert node() is None  # plain reference counting frees it, no collector needed
    finally:
        gc.enable()


def test_backward_releases_saved_values_and_a_second_backward_explains():
    x = var(3)
    y = F.sum(F.sigmoid(x))
    y.backward()
    assert y.creator.inputs[0].creator._ys is None
    with pytest.raises(errors.GraphError, match="Sigmoid.*retain_grad"):
        y.backward()


def test_retain_grad_keeps_intermediate_grads_and_the_graph():
    x = var(3)
    h = F.sigmoid(x)
    y = F.sum(h * 2.0)
    y.backward(retain_grad=True)
    np.testing.assert_allclose(h.grad, np.full(3, 2.0))
    y.backward(retain_grad=True)  # allowed: values were kept
    s = 1 / (1 + np.exp(-x.array))
    np.testing.assert_allclose(x.grad, 2 * 2 * s * (1 - s))


def test_intermediate_grads_are_not_kept_by_default():
    x = var(3)
    h = x * 2.0
    F.sum(h).backward()
    assert h.grad is None and x.grad is not None


def test_unchain_backward_cuts_the_graph():
    x = var(3)
    h = F.tanh(x)
    y = F.sum(h)
    h.unchain_backward()
    assert h.creator is None
    y.backward()
    assert x.grad is None
    np.testing.assert_allclose(h.grad, np.ones(3))


def test_data_inputs_and_frozen_parameters_get_no_gradient():
    model = L.Linear(4, 3)
    model.b.requires_grad = False
    x = np.ones((2, 4), np.float32)
    F.sum(model(x)).backward()
    assert model.W.grad is not None
    assert model.b.grad is None
    frozen = Variable(np.ones(3), requires_grad=False)
    y = F.sum(frozen * 2.0)
    assert y.creator is None  # nothing needs a gradient, nothing is recorded


def test_no_backprop_mode_records_nothing():
    x = var(3)
    with graphcore.no_backprop_mode():
        y = F.relu(x)
    assert y.creator is None and not y.requires_grad
    assert F.relu(x).creator is not None


def test_using_config_train_switches_dropout_off_and_restores():
    x = Variable(np.ones((100, 10), np.float32))
    with graphcore.using_config("train", False):
        assert np.array_equal(F.dropout(x).array, x.array)
    assert graphcore.config.train is True
    y = F.dropout(x, 0.5).array
    assert (y == 0).any() and np.allclose(y[y != 0], 2.0)


def test_leaf_gradients_are_writable_and_not_aliased():
    a, b = var(3), var(3, seed=1)
    F.sum(a + b).backward()
    a.grad[...] = 7.0
    np.testing.assert_allclose(b.grad, np.ones(3))
    c = var(2, 3)
    F.sum(F.sum(c, axis=1)).backward()
    assert c.grad.flags.writeable


def test_grad_returns_gradients_without_touching_dot_grad():
    x = var(3)
    h = x * 3.0
    y = F.sum(h * h)
    gx, gh = graphcore.grad([y], [x, h])
    np.testing.assert_allclose(gh.array, 2 * h.array)
    np.testing.assert_allclose(gx.array, 18 * x.array)
    assert x.grad is None and h.grad is None
    unused = var(3)
    assert graphcore.grad([y], [unused])[0] is None


def test_second_and_third_order_gradients():
    x = Variable(np.array([0.5, -1.0, 2.0]))
    y = F.sum(x ** 4.0)
    g1, = graphcore.grad([y], [x], enable_double_backprop=True)
    g2, = graphcore.grad([F.sum(g1)], [x], enable_double_backprop=True)
    g3, = graphcore.grad([F.sum(g2)], [x])
    np.testing.assert_allclose(g1.array, 4 * x.array ** 3)
    np.testing.assert_allclose(g2.array, 12 * x.array ** 2)
    np.testing.assert_allclose(g3.array, 24 * x.array)


def test_backward_with_double_backprop_gives_grad_var_with_a_graph():
    x = var(3)
    y = F.sum(F.tanh(x))
    y.backward(enable_double_backprop=True)
    gx = x.grad_var
    assert gx.creator is not None
    x.cleargrad()
    F.sum(gx).backward()
    t = np.tanh(x.array)
    np.testing.assert_allclose(x.grad, -2 * t * (1 - t * t))


def test_non_scalar_backward_needs_an_explicit_grad():
    y = F.relu(var(3))
    with pytest.raises(errors.GraphError, match="needs y.grad"):
        y.backward()
    y.grad = np.ones(3)
    y.backward()


def test_linear_of_mixed_dtypes_computes_in_their_result_type_as_chainer():
    W = Variable(np.full((5, 4), 1 / 3, np.float32))
    x = Variable(np.ones((3, 4)))
    y = F.linear(x, W)  # Chainer: x's dtype out, gradients in each input's dtype
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.array, 4 * np.float64(np.float32(1 / 3)))
    F.sum(y).backward()
    assert x.grad.dtype == np.float64 and W.grad.dtype == np.float32
    with pytest.raises(errors.DTypeError, match="MatMul.*int64"):
        F.matmul(np.ones((2, 2), np.int64), np.ones((2, 2), np.float32))


def test_shape_errors_name_the_op_and_the_shapes():
    W = Variable(np.ones((5, 4), np.float32))
    with pytest.raises(errors.ShapeError, match=r"LinearFunction.*\(\.\.\., 4\).*\(3, 3\)"):
        F.linear(np.ones((3, 3), np.float32), W)
    with pytest.raises(errors.ShapeError, match=r"_ \+ _.*\(2, 3\).*\(4,\)"):
        var(2, 3) + var(4)
    with pytest.raises(errors.DTypeError, match="LinearFunction.*int64"):
        F.linear(np.ones((3, 4), np.int64), W)  # float dtypes mix (as numpy promotes them)
    with pytest.raises(errors.ShapeError, match="SoftmaxCrossEntropy.*labels of shape"):
        F.softmax_cross_entropy(var(3, 2), np.zeros(4, np.int32))


def test_debug_mode_names_the_first_op_that_makes_nan():
    x = Variable(np.array([1.0, -1.0]))
    with graphcore.using_config("debug", True), np.errstate(invalid="ignore"):
        h = x * 2.0
        with pytest.raises(errors.NonFiniteError, match="^Log produced NaN"):
            F.log(h)
    with np.errstate(invalid="ignore"):
        assert np.isnan(F.log(x).array[1])  # outside debug mode numpy's NaN passes through


class _Broken(graphcore.FunctionNode):
    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        raise KeyError("oops")


def test_an_exception_in_backward_names_its_forward_op():
    x = var(2)
    y = F.sum(_Broken().apply((x,))[0])
    with pytest.raises(errors.BackwardError, match=r"in backward of _Broken.*\(2,\).*oops"):
        y.backward()


def test_a_gradient_of_the_wrong_shape_is_reported():
    class WrongShape(graphcore.FunctionNode):
        def forward(self, inputs):
            return inputs[0].sum(keepdims=True),

        def backward(self, indexes, grad_outputs):
            return grad_outputs[0],

    x = var(3)
    with pytest.raises(errors.BackwardError, match="WrongShape.*gradient of shape"):
        F.sum(WrongShape().apply((x,))[0]).backward()


def test_user_function_node_in_chainer_style():
    class Cube(graphcore.FunctionNode):
        def forward(self, inputs):
            self.retain_inputs((0,))
            x, = inputs
            return x ** 3,

        def backward(self, indexes, grad_outputs):
            x, = self.get_retained_inputs()
            gy, = grad_outputs
            return 3 * x * x * gy,

    x = var(3)
    y, = Cube().apply((x,))
    assert y.creator.label == "Cube"
    g1, = graphcore.grad([F.sum(y)], [x], enable_double_backprop=True)
    g2, = graphcore.grad([F.sum(g1)], [x])
    np.testing.assert_allclose(g1.array, 3 * x.array ** 2)
    np.testing.assert_allclose(g2.array, 6 * x.array)


def test_variable_operators_and_numpy_interop():
    a = var(2, 3)
    b = np.full((2, 3), 2.0)
    for got, want in [
        (a + b, a.array + b), (b - a, b - a.array), (a * b, a.array * b),
        (b / (a * a + 1.0), b / (a.array ** 2 + 1)), (-a, -a.array), (2.0 ** a, 2.0 ** a.array),
        (a @ a.T, a.array @ a.array.T), (a[1, ::2], a.array[1, ::2]),
        (a.reshape(3, 2), a.array.reshape(3, 2)), (abs(a), np.abs(a.array)),
    ]:
        assert isinstance(got, Variable)
        np.testing.assert_allclose(got.array, want)
    with pytest.raises(TypeError, match="ambiguous"):
        bool(a)


def test_float32_stays_float32():
    x = var(3, 4, dtype=np.float32)
    for y in (x * 2.0, x + 1, 1.0 - x, x / 3.0, x ** 2, F.sigmoid(x), F.softmax(x),
              F.mean(x), F.softplus(x), F.log_softmax(x)):
        assert y.dtype == np.float32, y.creator.label
    F.sum(F.sigmoid(x) * 3.0).backward()
    assert x.grad.dtype == np.float32


def test_config_takes_user_keys_and_chainers_back_end_keys_as_chainer_does():
    config = graphcore.config
    config.my_flag = 1
    try:
        assert config.my_flag == 1
        with graphcore.using_config("my_flag", 2):
            assert config.my_flag == 2
        assert config.my_flag == 1
    finally:
        del config.my_flag
    with graphcore.using_config("use_cudnn", "never"):  # harmless on a CPU engine
        assert config.use_cudnn == "never"
    with graphcore.using_config("brand_new", True):
        assert config.brand_new is True
    assert not hasattr(config, "brand_new")  # a key the block added is gone after it
    with pytest.raises(AttributeError, match="no key 'never_set'"):
        config.never_set  # noqa: B018 - reading it is the test
    with pytest.raises(TypeError, match="identifier"):
        with graphcore.using_config(3, True):
            pass


def test_repeated_leaf_gradients_sum_in_place_without_touching_shared_arrays():
    """A parameter used at many steps sums its gradients into one array the walk allocated;
    a gradient array that another path (or the caller) still holds is never written to."""
    rng = np.random.default_rng(0)
    w = graphcore.Parameter(rng.standard_normal((3, 3)))
    h = graphcore.Variable(rng.standard_normal((3, 3)))
    y = F.sum(w + h) + F.sum((w + h) * 2) + F.sum(w * 3) + F.sum(w)
    y.backward()
    np.testing.assert_allclose(w.grad, np.full((3, 3), 7.0))
    np.testing.assert_allclose(h.grad, np.full((3, 3), 3.0))
    held = w.grad
    before = held.copy()
    y.backward()  # accumulates into a new array; the one the caller holds is unchanged
    np.testing.assert_array_equal(held, before)
    np.testing.assert_allclose(w.grad, np.full((3, 3), 14.0))


class _ReadsTheWalk(graphcore.FunctionNode):
    """Doubles its input; records which kind of walk ran each backward."""

    walks: list = []

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        self.walks.append(graphcore.config.double_backprop)
        return grad_outputs[0] * 2,


def test_double_backprop_is_set_by_the_walk_and_refused_to_users():
    _ReadsTheWalk.walks = []
    x = var(3)
    y, = _ReadsTheWalk().apply((x,))
    F.sum(y).backward()
    graphcore.grad([F.sum(_ReadsTheWalk().apply((x,))[0])], [x], enable_double_backprop=True)
    assert _ReadsTheWalk.walks == [False, True]
    assert graphcore.config.double_backprop is False  # restored after the walk
    with pytest.raises(errors.ArgumentValueError, match="double_backprop is set by the engine"):
        with graphcore.using_config("double_backprop", True):
            pass
    assert graphcore.config.double_backprop is False


def test_recording_blocks_see_their_own_nodes_and_hand_them_outwards():
    x = var(2)
    with recording() as outer:
        a = F.exp(x)
        with recording() as inner:
            b = F.tanh(a)
            with graphcore.no_backprop_mode():
                F.exp(a)  # recorded nowhere: no graph
            assert inner == [b.creator]
            assert outer == [a.creator]
        assert inner == [b.creator]
        assert outer == [a.creator, b.creator]
        c = a + b
    assert outer == [a.creator, b.creator, c.creator]  # creation order
    F.exp(x)  # outside every block: recorded nowhere
    assert len(outer) == 3


def test_only_nodes_that_lend_their_buffers_say_so():
    assert graphcore.FunctionNode.lends_buffers is False
    assert F.exp(var(2)).creator.lends_buffers is False
    assert StaticCall.lends_buffers is True
