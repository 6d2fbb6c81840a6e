"""Static mode's ``linear`` kernels where the contraction has one term (an input of one
feature; the input gradient of a one-unit output, such as a readout): a broadcast product
instead of a matrix product, for inputs of every rank. Values and gradients equal
define-by-run's exactly (a product of one term rounds once either way)."""

from __future__ import annotations

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
from graphcore.ops.linalg import LinearFunction
from graphcore.variable import Parameter


@pytest.mark.parametrize("shape", [(1,), (6,), (4, 1), (4, 6), (2, 3, 1), (2, 3, 6)])
@pytest.mark.parametrize("out_size", [1, 3])
def test_one_term_contractions_equal_define_by_run(shape, out_size):
    rng = np.random.default_rng(len(shape) * 10 + shape[-1] + out_size)
    x = Parameter(rng.standard_normal(shape), name="x")
    W = Parameter(rng.standard_normal((out_size, shape[-1])), name="W")
    b = Parameter(rng.standard_normal(out_size), name="b")
    w = rng.standard_normal(shape[:-1] + (out_size,))
    params = {"x": x, "W": W, "b": b}

    def fn():
        # the op maps the last axis at every rank (F.linear flattens after the batch axes)
        return F.sum(F.tanh(LinearFunction().apply((x, W, b))[0]) * w)

    step = graphcore.compile(fn, params=params)
    for _ in range(2):  # the trace, then a replay of the plan
        for p in params.values():
            p.cleargrad()
        got = step()
        got.backward()
        got_grads = {k: p.grad.copy() for k, p in params.items()}
        for p in params.values():
            p.cleargrad()
        want = fn()
        want.backward()
        np.testing.assert_array_equal(got.array, want.array)
        for k, p in params.items():
            np.testing.assert_array_equal(got_grads[k], p.grad, err_msg=k)
    assert step.stats.hits == 1
