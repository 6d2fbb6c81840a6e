"""A parameter read at many steps (an RNN's weights) gets its gradient summed as the terms
arrive, so a plan holds one running sum, not every step's term (W7's plan: 124 MB -> 22 MB)."""

import numpy as np

import graphcore
import graphcore.functions as F
import graphcore.links as L


def _unrolled(steps: int, size: int = 400):
    lin = L.Linear(size, size)  # W: 640 KB in float32, over the fusion pass's span limit

    def loss(h):
        for _ in range(steps):
            h = F.tanh(lin(h))
        return F.sum(h)

    return lin, graphcore.compile(loss, params=lin)


def test_plan_memory_does_not_grow_with_one_weight_term_per_step():
    x = np.random.default_rng(0).standard_normal((2, 400)).astype(np.float32)
    sizes = {}
    for steps in (4, 16):
        lin, step = _unrolled(steps)
        out = step(x)
        out.backward()
        sizes[steps] = step.last.plan.allocated_bytes
    w_bytes = 400 * 400 * 4
    # 12 more steps add activations (2 x 400 each) but no weight-sized buffer
    assert sizes[16] - sizes[4] < w_bytes, sizes


def test_summed_gradients_equal_define_by_run():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 400)).astype(np.float32)
    lin, step = _unrolled(6)
    step(x).backward()
    static = lin.W.grad.copy()
    lin.cleargrads()
    h = x
    for _ in range(6):
        h = F.tanh(lin(h))
    F.sum(h).backward()
    np.testing.assert_allclose(static, lin.W.grad, rtol=1e-4, atol=1e-6)


def test_lstm_is_one_node_as_chainer_draws_it():
    c, h = F.lstm(np.zeros((2, 3), np.float32),
                  graphcore.Variable(np.ones((2, 12), np.float32)))
    assert h.creator.label == "LSTM" and c.creator is h.creator
    assert h.creator.inputs[1].creator is None  # nothing recorded between x and the cell
