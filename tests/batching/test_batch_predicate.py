"""A live predicate evaluated for a whole batch at once (``spec/batch_predicate.py``, its tree
turned into closures once) gives every example the outcome the ordinary evaluator gives it
alone, or the same error: over functions, arithmetic, comparisons, logic, shared values,
params and loop names, batched values of several ranks, NaN, and division by zero."""

from __future__ import annotations

import numpy as np
import pytest

from graphcore.batching.predicates import outcomes
from graphcore.language.predicate import PredicateError, parse_predicate

PREDICATES = [
    "mean(x) > 0", "sum(x) <= 0.5", "max(x) > 1.0 and min(x) < -1.0", "norm(x) > 2.5",
    "std(x) < 0.9 or abs(mean(x)) > 0.3", "not mean(x) > 0", "-mean(x) >= 0.1",
    "mean(x) * 2 + 1 > s", "mean(x) - s / 2 > 0", "mean(x) > mean(s)", "size(x) > 3",
    "dim(x) == 1", "len(x) == 6", "mean(x) > params.t", "mean(x) % 0.5 > 0.25",
    "sum(x) / mean(s) > 0", "x > 0", "mean(abs(x)) > 0.8", "mean(x)", "max(x) - min(x)",
    "loop.i < 2 and mean(x) > 0", "mean(y) > 0", "mean(x) + mean(y) > 0",
    "mean(x) / (s - s) > 0",  # a division by zero: each example's own error
    "mean(x) > 0 or mean(x) / (s - s) > 0",  # the error only where 'or' reaches it
    "mean(x) > 9 and x > 0", "not (dim(x) == 1) or max(x) > 0",
]
SHARED = {"s": np.array([0.25, -0.5, 1.0]), "params.t": 0.2, "loop.i": 1}


def _env(batch_shape, seed, nan=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=batch_shape)
    if nan:
        x[1] = np.nan
    return {"x": x, "y": rng.normal(size=(batch_shape[0],)), **SHARED}


def _one_at_a_time(predicate, env, batch):
    found = []
    for i in range(batch):
        example = {k: (v[i] if k in ("x", "y") else v) for k, v in env.items()}
        try:
            found.append(predicate.evaluate_bool(example))
        except PredicateError as e:
            return e
    return np.array(found)


@pytest.mark.parametrize("text", PREDICATES)
@pytest.mark.parametrize("batch_shape", [(7, 6), (5, 1), (4, 2, 3), (6,)])
def test_batched_outcomes_equal_one_example_at_a_time(text, batch_shape):
    predicate = parse_predicate(text)
    for seed, nan in ((0, False), (1, False), (2, True)):
        env = _env(batch_shape, seed, nan)
        batch = batch_shape[0]
        want = _one_at_a_time(predicate, env, batch)
        if isinstance(want, PredicateError):
            with pytest.raises(PredicateError) as caught:
                outcomes(predicate, env, {"x", "y"}, batch)
            assert caught.value.message == want.message
            continue
        got = outcomes(predicate, env, {"x", "y"}, batch)
        assert got.dtype == np.bool_ and got.shape == (batch,)
        np.testing.assert_array_equal(got, want, err_msg=f"{text} {batch_shape} {seed}")


def test_a_compiled_predicate_is_reused():
    predicate = parse_predicate("mean(x) > 0")
    env = _env((8, 4), 0)
    first = outcomes(predicate, env, {"x"}, 8)
    env["x"] = -env["x"]
    np.testing.assert_array_equal(outcomes(predicate, env, {"x"}, 8), ~first)
