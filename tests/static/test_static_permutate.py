"""Static mode's ``permutate`` kernels: the indices are a compiled input, so each replay reads
that call's permutation; values and gradients equal define-by-run's over calls whose
permutations differ, with no fallback to the op's own code."""

from __future__ import annotations

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
from graphcore.static.ir import Node
from graphcore.static.kernels import permutate as permutate_kernels
from graphcore.variable import Parameter, Variable

SHAPE = (3, 5, 4)


def _generic(plan) -> list[str]:
    return [name for s, (_, name) in zip(plan.forward_steps + plan.backward_steps,
                                        plan.forward_tags + plan.backward_tags, strict=True)
            if getattr(s, "generic", False)]


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("inv", [False, True])
def test_replays_read_each_calls_permutation(axis, inv):
    rng = np.random.default_rng(abs(axis) * 2 + inv)
    a = Parameter(rng.standard_normal(SHAPE), name="a")
    b = Parameter(rng.standard_normal(SHAPE), name="b")
    params = {"a": a, "b": b}

    def fn(x, indices, w):
        # b multiplies the reordered values: its gradient sees the forward's order, a's the
        # backward's; the weights w keep the sum from forgetting the order
        y = F.permutate(F.tanh(a * x), indices, axis=axis, inv=inv) * b
        return F.sum(y * w)

    step = graphcore.compile(fn, params=params)
    n = SHAPE[axis]
    orders = [rng.permutation(n), rng.permutation(n)[::-1].copy()]
    assert not np.array_equal(orders[0], orders[1])
    for order in orders:
        args = (rng.standard_normal(SHAPE), order.astype(np.int32), rng.standard_normal(SHAPE))
        for p in params.values():
            p.cleargrad()
        got = step(*args)
        got.backward()
        got_grads = {k: p.grad.copy() for k, p in params.items()}
        for p in params.values():
            p.cleargrad()
        want = fn(*[Variable(x, requires_grad=False) for x in args])
        want.backward()
        np.testing.assert_allclose(got.array, want.array, rtol=1e-12)
        for k, p in params.items():
            np.testing.assert_allclose(got_grads[k], p.grad, rtol=1e-12, err_msg=k)
    assert step.stats.misses == 1 and step.stats.hits == 1  # one plan, replayed
    assert "permutate" not in _generic(step.last.plan)


def test_kernels_bind_the_index_buffer_not_a_copy():
    x = np.arange(12.0).reshape(3, 4)
    indices = np.array([2, 0, 1])
    out = np.empty_like(x)
    for inv in (False, True):
        node = Node(0, "permutate", (1, 2), {"axis": 0, "inv": inv}, (3, 4), "float64", None)
        steps = permutate_kernels.permutate(node, [x, indices], out, None)
        for order in ([2, 0, 1], [1, 2, 0]):
            indices[:] = order  # the buffer filled anew, as a replay fills it
            for s in steps if isinstance(steps, list) else [steps]:
                s()
            np.testing.assert_array_equal(
                out, F.permutate(x, np.array(order), inv=inv).array)


def test_a_shape_the_kernel_does_not_cover_falls_back():
    node = Node(0, "permutate", (1, 2), {"axis": 0, "inv": False}, (3,), "float64", None)
    x = np.zeros(3)
    assert permutate_kernels.permutate(node, [x, np.zeros((1, 3), np.int64)], x.copy(),
                                       None) is None
    assert permutate_kernels.permutate(node, [x, np.zeros(3, np.uint8)], x.copy(),
                                       None) is None
