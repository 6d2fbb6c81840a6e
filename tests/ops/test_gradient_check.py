"""Every registered op against finite differences, and ``gradient_check`` itself.

- registry-driven: every built-in op must have cases in ``tests/op_cases.py``; each case is
  gradient-checked in float64 along a random direction (first order), and second order for
  ops declaring ``higher_order = True``;
- the checker can fail: deliberately wrong backwards (a formula, one input of two, a small
  factor, a parameter, a second order) are caught, with a message naming the culprit;
- user ops written Chainer's way (``retain_inputs``, ``get_retained_inputs``, ``F`` functions
  in backward) pass first and second order checks.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from op_cases import CASES, OpCase

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import FunctionNode, Variable, errors
from graphcore.gradient_check import (
    NondifferentiableError,
    check_backward,
    check_double_backward,
    numerical_grad,
)

# float64 finite differences: truncation error ~eps**2, rounding ~1e-16 / eps.
TIGHT = {"eps": 1e-6, "atol": 1e-7, "rtol": 1e-6, "dtype": np.float64}
# ... and each sample point checked for kinks, so an input drawn too close to one fails loudly.
STRICT = {**TIGHT, "detect_nondifferentiable": True}

BUILTIN_OPS = sorted(name for name, cls in graphcore.all_ops().items()
                     if cls.__module__.startswith("graphcore."))
ALL_CASE_PARAMS = [pytest.param(name, case, id=f"{name}-{case.label or i}")
                   for name in BUILTIN_OPS for i, case in enumerate(CASES.get(name, ()))]
# Evaluations such as accuracy declare ``differentiable = False``: checked to record nothing.
CASE_PARAMS = [p for p in ALL_CASE_PARAMS
               if getattr(graphcore.get_op(p.values[0]), "differentiable", True)]
NO_GRADIENT_PARAMS = [p for p in ALL_CASE_PARAMS if p not in CASE_PARAMS]
HIGHER_ORDER_PARAMS = [p for p in CASE_PARAMS if graphcore.get_op(p.values[0]).higher_order]


@pytest.fixture(autouse=True)
def _seeded_directions():
    np.random.seed(0)  # check_backward draws its direction from numpy's global generator


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _op_function(name: str, case: OpCase):
    """``OpClass(**attrs).apply(inputs)`` as a function of Variables (one node per call)."""
    op = graphcore.get_op(name)

    def apply(*inputs):
        outputs = op(**case.attrs).apply(inputs)
        return outputs if len(outputs) > 1 else outputs[0]

    apply.__qualname__ = f"{op.__name__}[{case.label or 'default'}]"
    return apply


def _random_like(arrays, rng) -> tuple[np.ndarray, ...]:
    return tuple(rng.standard_normal(np.shape(a)).astype(a.dtype) for a in arrays)


def _prepare(name: str, case: OpCase):
    rng = _rng(name, case.label)
    inputs = case.draw(rng)
    func = _op_function(name, case)
    outputs = [y.array for y in graphcore.get_op(name)(**case.attrs).apply(inputs)]
    return func, inputs, _random_like(outputs, rng), rng


# --- (a) every op has data, every case passes -----------------------------------------------

@pytest.mark.parametrize("name", BUILTIN_OPS)
def test_every_registered_op_has_gradient_check_cases(name):
    assert CASES.get(name), (
        f"op {name!r} is registered but has no gradient-check case; add one to "
        "tests/op_cases.py (inputs with a valid value domain, attributes)")


def test_cases_name_only_registered_ops():
    assert sorted(set(CASES) - set(BUILTIN_OPS)) == []


@pytest.mark.parametrize("name, case", CASE_PARAMS)
def test_op_backward_matches_finite_differences(name, case):
    func, inputs, y_grad, _ = _prepare(name, case)
    check_backward(func, inputs, y_grad, **{**STRICT, **case.options})


@pytest.mark.parametrize("name, case", NO_GRADIENT_PARAMS)
def test_op_without_gradient_records_no_node(name, case):
    inputs = case.draw(_rng(name, case.label))
    xs = [Variable(x, requires_grad=x.dtype.kind == "f") for x in inputs]
    y, = graphcore.get_op(name)(**case.attrs).apply(xs)
    assert y.creator is None and not y.requires_grad
    assert not graphcore.get_op(name).higher_order


# --- (b) second order -----------------------------------------------------------------------

@pytest.mark.parametrize("name, case", HIGHER_ORDER_PARAMS)
def test_op_double_backward_matches_finite_differences(name, case):
    func, inputs, y_grad, rng = _prepare(name, case)
    x_grad_grad = _random_like([x for x in inputs if x.dtype.kind == "f"], rng)
    check_double_backward(func, inputs, y_grad, x_grad_grad, **{**STRICT, **case.options})


@pytest.mark.parametrize("name, case", HIGHER_ORDER_PARAMS)
def test_op_recorded_backward_equals_array_backward(name, case):
    """The double-backprop walk runs backward on Variables; its first-order values must be
    those of the array walk (check_double_backward only differentiates them)."""
    func, inputs, y_grad, _ = _prepare(name, case)
    xs = [Variable(x, requires_grad=x.dtype.kind == "f") for x in inputs]
    ys = func(*xs)
    ys = ys if isinstance(ys, tuple) else (ys,)
    plain = graphcore.grad(list(ys), xs, list(y_grad))
    recorded = graphcore.grad(list(ys), xs, list(y_grad), enable_double_backprop=True)
    for x, a, b in zip(xs, plain, recorded, strict=True):
        if not x.requires_grad:
            assert a is None and b is None
            continue
        assert a.dtype == b.dtype == x.dtype
        np.testing.assert_allclose(b.array, a.array, rtol=1e-12, atol=1e-14)


# --- check_backward's own contract ----------------------------------------------------------

def test_loss_output_takes_y_grad_none():
    x = np.random.standard_normal((4, 3))
    t = np.array([0, 2, 1, 2])
    check_backward(F.softmax_cross_entropy, (x, t), None, **TIGHT)


def test_y_grad_none_needs_a_one_element_output():
    with pytest.raises(errors.ShapeError, match="y_grad may be None"):
        check_backward(F.relu, np.ones((2, 2)), None)


def test_y_grad_must_match_the_outputs():
    with pytest.raises(errors.ShapeError, match="2 output gradients for 1 outputs"):
        check_backward(F.exp, np.ones(3), (np.ones(3), np.ones(3)))
    with pytest.raises(errors.ShapeError, match=r"shape \(2,\)"):
        check_backward(F.exp, np.ones(3), np.ones(2))


def test_integer_input_must_be_flagged():
    with pytest.raises(errors.DTypeError, match="no_grads"):
        check_backward(F.embed_id, (np.array([0, 1]), np.ones((2, 3))), np.ones((2, 3)),
                       no_grads=(False, False))


def test_float32_link_params_checked_in_float64_and_restored():
    link = L.Linear(3, 2)
    x = np.random.standard_normal((4, 3)).astype(np.float32)
    gy = np.random.standard_normal((4, 2)).astype(np.float32)
    W, b = link.W.array, link.b.array
    check_backward(link, x, gy, params=(link.W, link.b), dtype=np.float64, eps=1e-3,
                   atol=1e-4, rtol=1e-3)
    assert link.W.array is W and link.b.array is b
    assert link.W.grad is None  # graphcore.grad never touches .grad


def test_numerical_grad_of_a_product():
    x = np.array([1.0, 2.0, 3.0])
    w = np.array([0.5, -1.0])

    def f():
        return x * x, x[:2] * w

    gys = (np.ones(3), np.array([2.0, 1.0]))
    gx, gw = numerical_grad(f, (x, w), gys, eps=1e-6)
    np.testing.assert_allclose(gx, 2 * x + np.array([1.0, -1.0, 0.0]), rtol=1e-8)
    np.testing.assert_allclose(gw, np.array([2.0, 2.0]), rtol=1e-8)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])  # restored


def test_detect_nondifferentiable_finds_a_kink():
    x = np.array([0.0, 0.7])
    with pytest.raises(NondifferentiableError, match="non-differentiable point"):
        check_backward(F.relu, x, np.ones(2), detect_nondifferentiable=True, **TIGHT)
    with pytest.raises(NondifferentiableError, match="non-finite"):
        check_backward(F.log, np.array([1e-7, 1.0]), np.ones(2), detect_nondifferentiable=True,
                       eps=1e-6, dtype=np.float64)


def test_detect_nondifferentiable_tolerates_rounding_of_a_flat_output():
    """An output that moves by a few units in the last place over the samples is rounded to a
    staircase; that is not a kink (a convolution's GEMM gives such elements along a random
    direction)."""
    x = np.array([0.3])

    def f():
        return 3.7 + 1e-9 * x

    gx, = numerical_grad(f, (x,), (np.ones(1),), eps=1e-6, detect_nondifferentiable=True,
                         diff_rtol=1e-6)
    np.testing.assert_allclose(gx, [1e-9], atol=2e-9)  # rounding / eps dominates the slope


# --- (c) the check fails for wrong backwards ------------------------------------------------

class _WrongCube(FunctionNode):
    """``x ** 3`` whose backward claims ``2 x`` (the derivative of x ** 2)."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        return inputs[0] ** 3,

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * 2 * x,


class _MulWrongSecond(FunctionNode):
    """``a * b`` whose gradient for ``b`` is ``gy * b`` instead of ``gy * a``."""

    def forward(self, inputs):
        a, b = inputs
        return a * b,

    def backward(self, indexes, grad_outputs):
        a, b = self.get_retained_inputs()
        gy, = grad_outputs
        return gy * b, gy * b


class _SlightlyOffExp(FunctionNode):
    """``exp(x)`` whose gradient is 0.1 % too large."""

    def forward(self, inputs):
        self.retain_outputs((0,))
        return np.exp(inputs[0]),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] * y * 1.001,


class _SplitIgnoringSecond(FunctionNode):
    """Two outputs (first half, second half) whose backward forgets the second's gradient."""

    def forward(self, inputs):
        x, = inputs
        return x[:2].copy(), x[2:].copy()

    def backward(self, indexes, grad_outputs):
        g0, _ = grad_outputs
        return np.concatenate([g0, np.zeros(3)]),


class _ScaleWrongW(FunctionNode):
    """``x * w`` (``w`` a parameter) whose gradient for ``w`` has the wrong sign."""

    def forward(self, inputs):
        x, w = inputs
        return x * w,

    def backward(self, indexes, grad_outputs):
        x, w = self.get_retained_inputs()
        gy, = grad_outputs
        return gy * w, -F.sum_to(gy * x, w.shape)


class _SquareFrozenSecond(FunctionNode):
    """``x ** 2`` whose backward reads ``x`` as a constant array: right first order, but its
    gradient does not depend on ``x`` when differentiated again (second order lost)."""

    def forward(self, inputs):
        return inputs[0] ** 2,

    def backward(self, indexes, grad_outputs):
        x = self.inputs[0].array  # a constant even during double backprop
        return grad_outputs[0] * (2 * x),


class _ReturnsGradForLabels(FunctionNode):
    """``x * c`` where ``c`` is declared non-differentiable, yet backward returns its grad."""

    def forward(self, inputs):
        x, c = inputs
        return x * c,

    def backward(self, indexes, grad_outputs):
        x, c = self.get_retained_inputs()
        gy, = grad_outputs
        return gy * c, gy * x


def _apply(op_class):
    def func(*xs):
        outputs = op_class().apply(xs)
        return outputs if len(outputs) > 1 else outputs[0]

    func.__qualname__ = op_class.__name__
    return func


def test_wrong_derivative_fails_with_both_values_and_the_function():
    x = np.random.standard_normal((3, 4))
    with pytest.raises(errors.GradientCheckError) as info:
        check_backward(_apply(_WrongCube), x, np.random.standard_normal((3, 4)), **TIGHT)
    message = str(info.value)
    assert "_WrongCube" in message
    assert "numeric" in message and "backward" in message
    assert "inputs[0]" in message and "<-- disagrees" in message


def test_wrong_gradient_of_one_input_fails_and_is_named():
    a, b = np.random.standard_normal((2, 3, 4))
    with pytest.raises(errors.GradientCheckError) as info:
        check_backward(_apply(_MulWrongSecond), (a, b), np.random.standard_normal((3, 4)),
                       **TIGHT)
    lines = str(info.value).splitlines()
    assert any(line.strip().startswith("inputs[1]:") and "disagrees" in line for line in lines)
    assert not any(line.strip().startswith("inputs[0]:") and "disagrees" in line
                   for line in lines)
    # only the first input checked: its gradient is right, so the check passes
    check_backward(_apply(_MulWrongSecond), (a, b.astype(np.int64)), np.ones((3, 4)), **TIGHT)


def test_gradient_off_by_a_tenth_of_a_percent_fails():
    x = np.random.standard_normal(5)
    with pytest.raises(errors.GradientCheckError):
        check_backward(_apply(_SlightlyOffExp), x, np.random.standard_normal(5), **TIGHT)


def test_forgotten_output_gradient_fails():
    x = np.random.standard_normal(5)
    gys = (np.random.standard_normal(2), np.random.standard_normal(3))
    with pytest.raises(errors.GradientCheckError):
        check_backward(_apply(_SplitIgnoringSecond), x, gys, **TIGHT)
    # with no gradient flowing into the second output, the same backward is right
    check_backward(_apply(_SplitIgnoringSecond), x, (gys[0], None), **TIGHT)


def test_wrong_parameter_gradient_fails():
    w = graphcore.Parameter(np.random.standard_normal(4))
    x = np.random.standard_normal((3, 4))

    def scale(x):
        return _ScaleWrongW().apply((x, w))[0]

    with pytest.raises(errors.GradientCheckError, match=r"params\[0\].*disagrees"):
        check_backward(scale, x, np.random.standard_normal((3, 4)), params=(w,), **TIGHT)
    # without params, only the (correct) input gradient is checked
    check_backward(scale, x, np.random.standard_normal((3, 4)), **TIGHT)


def test_lost_second_order_fails_double_backward_only():
    x = np.random.standard_normal(4)
    gy, ggx = np.random.standard_normal((2, 4))
    check_backward(_apply(_SquareFrozenSecond), x, gy, **TIGHT)
    with pytest.raises(errors.GradientCheckError, match="check_double_backward failed"):
        check_double_backward(_apply(_SquareFrozenSecond), x, gy, ggx, **TIGHT)


def test_gradient_for_a_no_grads_input_fails():
    x, c = np.random.standard_normal((2, 3))
    with pytest.raises(errors.GradientCheckError, match="no_grads"):
        check_backward(_apply(_ReturnsGradForLabels), (x, c), np.ones(3),
                       no_grads=(False, True), **TIGHT)


# --- (d) user-defined ops written Chainer's way ---------------------------------------------

class Softsign(FunctionNode):
    """``x / (1 + |x|)``; backward in F functions, so it differentiates again."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        x, = inputs
        return x / (1 + np.abs(x)),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        gy, = grad_outputs
        return gy / F.square(1 + F.absolute(x)),


class WeightedSquare(FunctionNode):
    """``w * x ** 2`` with ``w`` broadcast over rows."""

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, w = inputs
        return w * x * x,

    def backward(self, indexes, grad_outputs):
        x, w = self.get_retained_inputs()
        gy, = grad_outputs
        gx = gy * 2 * w * x if 0 in indexes else None
        gw = F.sum_to(gy * F.square(x), w.shape) if 1 in indexes else None
        return gx, gw


class LogSumExp(FunctionNode):
    """``log(sum(exp(x), axis=1))``, with its output retained for backward."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        x, = inputs
        m = x.max(axis=1, keepdims=True)
        return (np.log(np.exp(x - m).sum(axis=1, keepdims=True)) + m)[:, 0],

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        y, = self.get_retained_outputs()
        gy, = grad_outputs
        column = (x.shape[0], 1)
        return F.reshape(gy, column) * F.exp(x - F.reshape(y, column)),


@pytest.mark.parametrize("op_class, shapes, x_draw", [
    (Softsign, [(3, 4)], lambda rng, s: rng.uniform(0.1, 1.0, s) * rng.choice([-1, 1], s)),
    (WeightedSquare, [(3, 4), (4,)], lambda rng, s: rng.standard_normal(s)),
    (LogSumExp, [(3, 5)], lambda rng, s: rng.standard_normal(s)),
], ids=["softsign", "weighted-square", "logsumexp"])
def test_user_function_node_passes_first_and_second_order(op_class, shapes, x_draw):
    rng = _rng(op_class.__name__)
    xs = tuple(x_draw(rng, s) for s in shapes)

    def func(*inputs):
        return op_class().apply(inputs)[0]

    y = func(*xs)
    gy = rng.standard_normal(y.shape)
    ggxs = tuple(rng.standard_normal(s) for s in shapes)
    check_backward(func, xs, gy, detect_nondifferentiable=True, **TIGHT)
    check_double_backward(func, xs, gy, ggxs, **TIGHT)
