"""A static call that repeats the last one's single whole group replays its cached plan at
once (``spec_batching._WholeCall``): each result equals the general path's, and a call where
anything the shortcut relies on changed (the rows, the list, the split, the flags, the
parameters) takes the general path and is right too."""

from __future__ import annotations

import numpy as np
import pytest
from batch_helpers import same_as_reference

from graphcore.config import using_config
from graphcore.inputs.stacked import StackedExamples
from graphcore.spec import build_model, load_spec_text, make_inputs, run_spec
from graphcore.spec_static import groups as spec_batching
from graphcore.spec_static.runner import StaticSpecRunner

SPEC = """
graphtool: 1
name: whole
seed: 0
inputs:
  x: {random: normal, shape: [5], examples: 12}
graph:
  - {op: linear, out_size: 6, name: embed}
  - if: mean(_) > 0
    then: [tanh, {op: linear, out_size: 2, name: up, to: y}]
    else: [relu, {op: linear, out_size: 2, name: down, to: y}]
loss: {op: sum, from: y}
outputs: [y]
"""


@pytest.fixture
def ready():
    spec = load_spec_text(SPEC, "whole.yaml")
    with using_config("dtype", np.float64):
        model = build_model(spec)
        rows = np.stack(make_inputs(spec.inputs, 0)["x"]).astype(np.float64)
        inputs = {"x": StackedExamples(rows)}
        runner = StaticSpecRunner(spec, model, loss_inputs=True)
        for _ in range(2):  # sizes lazy parameters, then traces
            runner.run(inputs)
        yield spec, model, runner, inputs


def _grads(model):
    return {name: np.array(p.grad) for name, p in model.namedparams() if p.grad is not None}


def _reference(spec, model, inputs):
    """One example at a time, define-by-run, on the same parameters."""
    with using_config("dtype", np.float64):
        twin = build_model(spec)
        run_spec(spec, twin, {"x": [np.array(r) for r in inputs["x"]]}, batching="off")
        for (_, p), (_, q) in zip(twin.namedparams(), model.namedparams(), strict=True):
            p.array = q.array.copy()
        result = run_spec(spec, twin, {"x": [np.array(r) for r in inputs["x"]]},
                          batching="off")
        return result, _grads(twin)


def _call(runner, inputs, **kwargs):
    hits = runner.stats.hits
    with using_config("dtype", np.float64):
        result = runner.run(inputs, **kwargs)
    return result, runner.stats.hits - hits


def _shortcut_taken(runner):
    return spec_batching._WHOLE_KEY in runner.__dict__


def test_a_repeated_call_replays_at_once_and_equals_the_reference(ready):
    spec, model, runner, inputs = ready
    assert _shortcut_taken(runner)
    result, hits = _call(runner, inputs)
    assert hits == 1
    same_as_reference(result, _grads(model), *_reference(spec, model, inputs))
    assert result.batching["applied"] and result.batching["partitions"] == 1
    assert result.batching["groups"] == 1 and result.batching["group_sizes"] == [12]
    assert len(result.loss_inputs) == 12


def test_rows_written_in_place_are_read_by_the_shortcut(ready):
    spec, model, runner, inputs = ready
    inputs["x"][3][:] = -inputs["x"][3]  # the stacked array's memory: same split size?
    inputs["x"][4][:] = -inputs["x"][4]
    result, _ = _call(runner, inputs)
    same_as_reference(result, _grads(model), *_reference(spec, model, inputs))


@pytest.mark.parametrize("change", ["replace a row", "flip one example", "no backward",
                                    "new parameter array", "a plain list"])
def test_any_change_takes_the_general_path_and_stays_right(ready, change):
    spec, model, runner, inputs = ready
    x = inputs["x"]
    kwargs = {}
    if change == "replace a row":
        x[2] = x[2] * 3.0
    elif change == "flip one example":  # the split changes size: the partition guard misses
        first = int(np.flatnonzero(x.stacked.mean(axis=1) > 0)[0])
        x[first][:] = -x[first] - 1.0
    elif change == "no backward":
        kwargs["backward"] = False
    elif change == "new parameter array":
        model.embed.W.array = model.embed.W.array * 0.5
    else:
        inputs = {"x": [np.array(r) for r in x]}
    result, _ = _call(runner, inputs, **kwargs)
    reference, reference_grads = _reference(spec, model, inputs)
    if change == "no backward":
        assert result.loss == pytest.approx(reference.loss, rel=1e-10)
        assert all(p.grad is None for p in model.params())
    else:
        same_as_reference(result, _grads(model), reference, reference_grads)
