"""What static-mode tracing freezes — one test each, instead of pages of caveats.

A compiled function is traced once per input signature (shapes, dtypes, train flag, whether
gradients are wanted) and replayed afterwards. So:

1. Python values read while tracing are constants of the plan: a global scale factor changed
   later is not seen.
2. Branches on Python values or on data (``if x.array.mean() > 0``) take the traced branch on
   every replay. (Specs are different: their predicates become guards, see the spec tests.)
3. Output arrays are the plan's buffers, reused by a later call once nothing needs them for
   backward (a call awaiting backward keeps its own buffers): copy what you keep.
4. Parameter gradients accumulate as in define-by-run, but a ``.grad`` array kept after
   ``cleargrads()`` is the plan's buffer, which the next ``backward()`` reuses.
5. Parameters frozen (``requires_grad=False``) in an inference plan are folded in as
   constants: a later in-place change is not seen until the signature changes.
6. Not a footgun: updates made in place (optimizers) and arrays replaced by new ones are seen;
   random ops (dropout) draw anew on every replay.
"""

import numpy as np

import graphcore
import graphcore.functions as F
import graphcore.links as L

SCALE = 2.0


def test_python_constants_are_frozen_at_trace_time():
    global SCALE
    step = graphcore.compile(lambda x: x * SCALE)
    x = np.ones(3, np.float32)
    assert step(x).array.tolist() == [2.0, 2.0, 2.0]
    SCALE = 5.0
    try:
        assert step(x).array.tolist() == [2.0, 2.0, 2.0]  # still the traced 2.0
    finally:
        SCALE = 2.0


def test_branches_on_data_take_the_traced_branch():
    def fn(x):  # the seed's dynamic example, second decision
        return F.sum(x) if x.array.mean() > 0 else F.prod(x)

    step = graphcore.compile(fn)
    assert float(step(np.array([1.0, 2.0], np.float32)).array) == 3.0
    negative = np.array([-1.0, -2.0], np.float32)
    assert float(step(negative).array) == -3.0  # sum again; define-by-run would give prod = 2
    assert float(fn(graphcore.Variable(negative)).array) == 2.0


def test_output_buffers_are_reused_across_calls():
    step = graphcore.compile(lambda x: x * 2.0)
    first = step(np.ones(2, np.float32))
    kept = first.array.copy()
    step(np.full(2, 10.0, np.float32))
    assert first.array.tolist() == [20.0, 20.0]  # overwritten by the second call
    assert kept.tolist() == [2.0, 2.0]


def test_a_gradient_kept_after_cleargrads_is_reused():
    layer = L.Linear(2, 1)
    step = graphcore.compile(lambda x: F.sum(layer(x)), params=layer)
    x = np.ones((1, 2), np.float32)
    step(x).backward()
    step(x).backward()  # accumulated, as define-by-run does
    np.testing.assert_allclose(layer.W.grad, np.full((1, 2), 2.0))
    layer.cleargrads()
    step(x).backward()
    kept = layer.W.grad
    layer.cleargrads()
    step(2 * x).backward()
    assert kept is layer.W.grad  # the same buffer, now holding the new gradient
    np.testing.assert_allclose(kept, np.full((1, 2), 2.0))


def test_frozen_parameters_are_folded_into_inference_plans():
    layer = L.Linear(2, 1)
    layer.disable_update()
    step = graphcore.compile(layer)
    x = np.ones((1, 2), np.float32)
    with graphcore.no_backprop_mode():
        before = step(x).array.item()
        layer.W.array[...] += 1.0  # in place, on a frozen parameter
        assert step(x).array.item() == before  # the plan holds the folded value
    with graphcore.using_config("train", False):  # another signature: traced anew
        assert abs(step(x).array.item() - (before + 2.0)) < 1e-5


def test_not_frozen_in_place_updates_replacements_and_randomness():
    layer = L.Linear(2, 1)
    step = graphcore.compile(layer)
    x = np.ones((1, 2), np.float32)
    y0 = step(x).array.item()
    layer.W.array[...] += 1.0
    assert abs(step(x).array.item() - (y0 + 2.0)) < 1e-5
    layer.W.array = np.zeros((1, 2), np.float32)  # a new array: the plan is lowered again
    assert step(x).array.item() == layer.b.array[0].item()
    drop = graphcore.compile(lambda x: F.dropout(x, 0.5))
    a = drop(np.ones(1000, np.float32)).array.copy()
    b = drop(np.ones(1000, np.float32)).array
    assert not np.array_equal(a, b)
