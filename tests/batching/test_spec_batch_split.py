"""A live ``if`` whose examples disagree runs both branches in one batched pass, its rows
partitioned (``spec/batch_split.py``), and everything equals one-example-at-a-time runs:
loss, every gradient, every example's outputs and path, define-by-run and static, float64
rtol 1e-10. Where the branches cannot merge (values of other shapes, live control flow inside
a branch) the group splits as before, with the same results."""

from __future__ import annotations

import numpy as np
import pytest
from batch_helpers import float64_inputs, run_mode, same_as_reference

from graphcore.config import using_config
from graphcore.inputs.make import StackedExamples
from graphcore.spec import build_model, load_spec_text, make_inputs, run_spec
from graphcore.spec_static.runner import StaticSpecRunner

IN_LOOP = """
graphtool: 1
name: split_in_loop
seed: 0
inputs:
  s: {random: normal, shape: [null, 3], lengths: [4, 2, 5, 4, 7, 2, 5, 3, 6, 6]}
graph:
  - for_each: s
    as: x_t
    carry: {h: {zeros: [4]}}
    body:
      - {op: concat, from: [x_t, h], axis: 0}
      - {op: linear, out_size: 4, name: cell}
      - if: sum(_) > 0
        then: [{op: tanh, to: h}]
        else: [{op: linear, out_size: 4, name: damp}, {op: sigmoid, to: h}]
    collect: h
    to: hs
  - {op: mean, from: h}
loss: {op: square}
outputs: [hs]
"""

REBIND = """
graphtool: 1
name: rebind
seed: 0
inputs:
  x: {random: normal, shape: [5], examples: 14}
  w: {random: normal, shape: [5]}
graph:
  - {op: linear, out_size: 5, name: embed, to: e}
  - if: max(e) > 0.5
    then: [{op: add, from: [e, w], to: w}, {op: linear, out_size: 3, name: up, to: tmp}]
    else: [{op: relu, from: e}, {op: linear, out_size: 3, name: down}]
  - {op: concat, from: [_, w], axis: 0}
  - {op: sum}
loss: {op: square}
outputs: [w, e]
"""

ONE_SIDED = """
graphtool: 1
name: one_sided
seed: 0
params: {t: 0.1}
inputs:
  x: {random: normal, shape: [4], examples: 9}
graph:
  - {op: linear, out_size: 4, name: l1}
  - if: mean(_) > params.t and norm(x) > 1.0
    then: [tanh, {op: scale, by: 3.0}]
  - {op: linear, out_size: 2, name: l2}
  - {op: sum}
loss: {op: square}
"""

OTHER_SHAPES = """
graphtool: 1
name: other_shapes
seed: 0
inputs:
  x: {random: normal, shape: [4], examples: 8}
graph:
  - if: mean(x) > 0
    then: [{op: linear, out_size: 3, name: a}]
    else: [{op: linear, out_size: 5, name: b}]
  - {op: sum}
loss: {op: square}
"""

NESTED = """
graphtool: 1
name: nested
seed: 0
inputs:
  x: {random: normal, shape: [4], examples: 16}
graph:
  - if: mean(x) > 0
    then:
      - if: max(x) > 1.0
        then: [tanh, {op: linear, out_size: 2, name: a}]
        else: [relu, {op: linear, out_size: 2, name: b}]
    else: [sigmoid, {op: linear, out_size: 2, name: c}]
  - {op: sum}
loss: {op: square}
"""

IN_WHILE = """
graphtool: 1
name: in_while
seed: 0
inputs:
  x: {random: normal, std: 3.0, shape: [6], examples: 14}
graph:
  - while: norm(_) > 1.5 and loop.i < 5
    max_iters: 8
    body:
      - {op: linear, out_size: 6, name: shrink}
      - if: max(_) > 0.5
        then: [tanh]
        else: [{op: scale, by: 0.5}]
  - {op: linear, out_size: 2, name: head}
  - {op: sum}
loss: {op: square}
"""

SPECS = {"in_loop": IN_LOOP, "rebind": REBIND, "one_sided": ONE_SIDED,
         "other_shapes": OTHER_SHAPES, "nested": NESTED, "in_while": IN_WHILE}


def _spec(name):
    return load_spec_text(SPECS[name], f"{name}.yaml")


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
def test_partitioned_ifs_equal_per_example_runs(name, static):
    spec = _spec(name)
    inputs = float64_inputs(make_inputs(spec.inputs, 0))
    reference, reference_grads = run_mode(spec, inputs, "off", False)
    branches = {e.detail["branch"] for e in reference.path if e.kind == "if"}
    assert branches == {"then", "else"}  # the examples disagree: the case under test
    for mode in ("auto", "pad"):
        result, grads = run_mode(spec, inputs, mode, static)
        assert result.batching["applied"], result.batching
        same_as_reference(result, grads, reference, reference_grads)


@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
def test_which_ifs_partition_and_which_split(static):
    def batching(name):
        spec = _spec(name)
        result, _ = run_mode(spec, float64_inputs(make_inputs(spec.inputs, 0)), "auto", static)
        return result.batching

    for name in ("rebind", "one_sided"):
        info = batching(name)
        assert (info["groups"], info["splits"], info["partitions"]) == (1, 0, 1), name
    assert batching("in_loop")["partitions"] > 1  # one per time step whose examples disagree
    assert batching("in_loop")["splits"] == 0
    # a while's trip counts split the group; inside each side's loop the if partitions
    info = batching("in_while")
    assert info["splits"] >= 1 and info["partitions"] >= 1
    # values of other shapes cannot be merged: the group splits, as without partitions
    info = batching("other_shapes")
    assert (info["groups"], info["splits"], info["partitions"]) == (2, 1, 0)
    # an if holding a live if splits; inside each side the inner if partitions
    info = batching("nested")
    assert info["splits"] == 1 and info["groups"] == 2 and info["partitions"] >= 1


def test_static_plans_follow_each_calls_split():
    """One plan per split size: a call whose examples split otherwise (or agree) misses the
    plan's partition or guard and takes, or traces, the plan for its own path."""
    spec = _spec("one_sided")
    rng = np.random.default_rng(1)

    def inputs_with(scale):
        rows = rng.normal(size=(9, 4)) * scale
        return {"x": StackedExamples(rows)}

    calls = [inputs_with(1.0), inputs_with(1.0), inputs_with(0.01)]  # the last: all else
    with using_config("dtype", np.float64):
        model = build_model(spec)
        runner = StaticSpecRunner(spec, model)
        for inputs in calls + calls[::-1] + calls:
            result = runner.run(inputs)
            grads = {n: np.array(p.grad) for n, p in model.namedparams() if p.grad is not None}
            reference = run_spec(spec, model, inputs, batching="off")
            reference_grads = {n: np.array(p.grad) for n, p in model.namedparams()
                               if p.grad is not None}
            same_as_reference(result, grads, reference, reference_grads)
            assert result.batching["splits"] == 0
    splits = [sum(e.detail["branch"] == "then" for e in run_spec(
        spec, model, inputs, batching="off").path if e.kind == "if") for inputs in calls]
    assert len(set(splits)) == 3  # three paths, each its own plan
    assert sum(len(v) for v in runner.cache.values()) == 3
    graph = next(v for vs in runner.cache.values() for v in vs
                 if any(n.op == "partition" for n in v.plan.graph.nodes)).plan.graph
    assert "permutate" in graph.text()
