"""Static mode's ``where`` kernels and basic ``get_item`` views: a compiled replay equals
define-by-run (values and gradients, NaN included) over calls whose inputs change, with no
op fallback where a kernel applies and no step for a slice that is a view."""

from __future__ import annotations

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
from graphcore.static.ir import Node
from graphcore.static.kernels import mask as mask_kernels
from graphcore.variable import Parameter, Variable


def _check(fn, params, make_args, calls=3, rtol=0.0):
    step = graphcore.compile(fn, params=params)
    for call in range(calls):
        args = make_args(call)
        for p in params.values():
            p.cleargrad()
        got = step(*args)
        got.backward()
        got_grads = {k: p.grad.copy() for k, p in params.items()}
        for p in params.values():
            p.cleargrad()
        want = fn(*[Variable(a, requires_grad=False) for a in args])
        want.backward()
        np.testing.assert_allclose(got.array, want.array, rtol=rtol)
        for k, p in params.items():
            np.testing.assert_allclose(got_grads[k], p.grad, rtol=rtol, err_msg=k)
    return step.last.plan


def _generic(plan):
    return [name for s, (_, name) in zip(plan.forward_steps + plan.backward_steps,
                                        plan.forward_tags + plan.backward_tags, strict=True)
            if getattr(s, "generic", False)]


@pytest.mark.parametrize("cond_shape", [(4, 1), (4, 3), (3,)])
def test_where_with_a_broadcast_condition(cond_shape):
    rng = np.random.default_rng(0)
    a = Parameter(rng.standard_normal((4, 3)), name="a")
    b = Parameter(rng.standard_normal((4, 3)), name="b")

    def fn(c, x):
        return F.sum(F.where(c, F.tanh(a * x), b * x) * x)

    plan = _check(fn, {"a": a, "b": b},
                  lambda i: (rng.random(cond_shape) < 0.5, rng.standard_normal((4, 3))))
    assert "where" not in _generic(plan)


def test_where_gradients_keep_nan_as_the_op_does():
    a = Parameter(np.ones((2, 2)), name="a")
    b = Parameter(np.ones((2, 2)), name="b")

    def fn(c, x):
        return F.sum(F.where(c, a, b) * x)  # x holds NaN: gy * mask keeps it, a select would not

    c = np.array([[True, False], [False, True]])
    x = np.array([[np.nan, 1.0], [np.inf, 2.0]])
    with np.errstate(invalid="ignore"):
        plan = _check(fn, {"a": a, "b": b}, lambda i: (c, x), calls=2)
    assert "where" not in _generic(plan)


def test_where_with_a_broadcast_value_falls_back_and_is_right():
    rng = np.random.default_rng(1)
    a = Parameter(rng.standard_normal((4, 3)), name="a")
    b = Parameter(rng.standard_normal(3), name="b")  # broadcast: its gradient sums over rows

    def fn(c, x):
        return F.sum(F.where(c, a, b) * x)

    plan = _check(fn, {"a": a, "b": b},
                  lambda i: (rng.random((4, 3)) < 0.5, rng.standard_normal((4, 3))))
    assert _generic(plan).count("where") == 1  # b's gradient: the op's own backward


def test_where_kernel_declines_mixed_dtypes():
    node = Node(3, "where", (0, 1, 2), {}, (2,), "float64")
    c = np.array([True, False])
    assert mask_kernels.where(node, [c, np.ones(2, np.float32), np.ones(2)], np.empty(2),
                               None) is None


def test_basic_slices_are_views_and_follow_new_inputs():
    rng = np.random.default_rng(2)
    W = Parameter(rng.standard_normal((5, 3)), name="W")

    def fn(xs):
        # a strided 2-D view, a 3-D strided view into a linear (flattened at each replay for
        # its weight gradient), a view with a new axis, and an advanced index (a copy)
        total = F.sum(F.linear(F.get_item(xs, (slice(None), 1)), W))
        total = total + F.sum(F.linear(F.get_item(xs, (slice(None), slice(None, None, -1))), W,
                                       n_batch_axes=2))
        total = total + F.sum(F.get_item(xs, (Ellipsis, None, 0)) * 2.0)
        return total + F.sum(F.get_item(xs, (np.array([0, 0, 1]),)))

    plan = _check(fn, {"W": W}, lambda i: (rng.standard_normal((2, 4, 3)),), rtol=1e-12)
    slices = [n for n in plan.graph.nodes if n.op == "get_item"]
    stepped = {i for i, _ in plan.forward_tags}
    assert len(slices) == 4
    assert [n.id in stepped for n in slices] == [False, False, False, True]
