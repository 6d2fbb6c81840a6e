"""Batched per-example runs equal one-example-at-a-time runs: outputs, loss, gradients, path.

Every spec in specs/ with per-example runs, and specs written here with per-example branches
and loops of different trip counts, run in float64 with batching off, auto and pad, define-by-
run and static; everything must agree to rtol 1e-10.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from batch_helpers import float64_inputs, run_mode, same_as_reference

from graphcore.batching.analysis import analysis_of
from graphcore.config import using_config
from graphcore.errors import ArgumentValueError, SpecError, SpecErrors
from graphcore.spec import build_model, load_spec_file, load_spec_text, make_inputs, run_spec
from graphcore.spec_static.runner import StaticSpecRunner

SPECS = Path(__file__).resolve().parents[2] / "specs"

BRANCH = """
graphtool: 1
name: branch
seed: 0
inputs:
  x: {random: normal, shape: [5], examples: 16}
graph:
  - {op: linear, out_size: 6, name: embed}
  - if: mean(_) > 0
    then: [tanh, {op: linear, out_size: 3, name: up}]
    else: [relu, {op: scale, by: 2.0}, {op: linear, out_size: 3, name: down}]
  - {op: sum, axis: 0, to: pooled}
loss: {op: square}
outputs: [pooled]
"""

WHILE = """
graphtool: 1
name: shrinking
seed: 0
inputs:
  x: {random: normal, std: 3.0, shape: [6], examples: 12}
  bias: {random: normal, shape: [6]}
graph:
  - {op: add, from: [x, bias]}
  - while: norm(_) > 1.2 and loop.i < 6
    max_iters: 8
    body:
      - {op: linear, out_size: 6, name: shrink}
      - tanh
      - {op: scale, by: 1.2}
  - {op: linear, out_size: 2, name: head, to: y}
  - {op: sum}
loss: {op: square}
outputs: [y]
"""

SEQUENCE_BRANCH = """
graphtool: 1
name: sequence_branch
seed: 0
inputs:
  s: {random: normal, shape: [null, 3], lengths: [4, 2, 5, 4, 7, 2, 5, 3]}
graph:
  - for_each: s
    as: x_t
    carry: {h: {zeros: [4]}}
    body:
      - {op: concat, from: [x_t, h], axis: 0}
      - {op: linear, out_size: 4, name: cell}
      - {op: tanh, to: h}
    collect: h
    to: hs
  - if: sum(h) > 0
    then: [{op: linear, from: h, out_size: 2, name: pos}]
    else: [{op: linear, from: h, out_size: 2, name: neg}, {op: scale, by: -1.0}]
  - {op: mean}
loss: {op: square}
outputs: [hs, h]
"""

RAGGED = """
graphtool: 1
name: ragged_pool
seed: 0
inputs:
  s: {random: normal, shape: [null, 3], lengths: [4, 2, 4, 5]}
  w: {random: normal, shape: [3, 2]}
graph:
  - {op: matmul, from: [s, w]}
  - {op: softmax, axis: 0}
  - {op: transpose}
  - {op: sum, axis: -1}
  - {op: reshape, shape: [1, 2]}
  - {op: linear, out_size: 2, name: out}
loss: {op: sum}
"""


def _specs():
    found = []
    for path in sorted(SPECS.glob("*.yaml")):
        spec = load_spec_file(str(path))
        if any(i.lengths is not None for i in spec.inputs.values()):
            found.append(pytest.param(spec, id=path.stem))
    found += [pytest.param(load_spec_text(t, f"{n}.yaml"), id=n) for n, t in (
        ("branch", BRANCH), ("while", WHILE), ("sequence_branch", SEQUENCE_BRANCH),
        ("ragged", RAGGED))]
    return found


@pytest.mark.parametrize("spec", _specs())
@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
def test_batched_equals_per_example(spec, static):
    inputs = float64_inputs(make_inputs(spec.inputs, 0))
    reference, reference_grads = run_mode(spec, inputs, "off", False)
    assert reference.batching["applied"] is False
    for mode in ("off", "auto", "pad"):
        result, grads = run_mode(spec, inputs, mode, static)
        assert result.batching["applied"] is (mode != "off"), result.batching
        same_as_reference(result, grads, reference, reference_grads)


def test_groups_split_on_per_example_branches_and_trip_counts():
    spec = load_spec_text(WHILE, "while.yaml")
    inputs = float64_inputs(make_inputs(spec.inputs, 0))
    result, _ = run_mode(spec, inputs, "auto", False)
    trips = [e.detail["trips"] for e in result.path if e.kind == "while"]
    assert len(trips) == 12 and len(set(trips)) > 1
    assert result.batching["groups"] == len(set(trips))
    assert result.batching["splits"] == len(set(trips)) - 1
    spec = load_spec_text(BRANCH, "branch.yaml")
    result, _ = run_mode(spec, float64_inputs(make_inputs(spec.inputs, 0)), "auto", False)
    branches = [e.detail["branch"] for e in result.path if e.kind == "if"]
    assert set(branches) == {"then", "else"}
    # both branches ran in the one group's pass, its rows partitioned (batch_split)
    assert result.batching["groups"] == 1 and result.batching["splits"] == 0
    assert result.batching["partitions"] == 1


def test_padding_follows_the_cost_model_and_the_mode():
    spec = load_spec_text(SEQUENCE_BRANCH, "s.yaml")
    inputs = float64_inputs(make_inputs(spec.inputs, 0))
    padded, _ = run_mode(spec, inputs, "pad", False)
    assert padded.batching["padding_waste"] > 0
    assert analysis_of(spec).pad_reason is None
    tagger = load_spec_file(str(SPECS / "lstm_tagger.yaml"))
    assert "reads '_', a sequence input" in analysis_of(tagger).pad_reason
    result, _ = run_mode(tagger, make_inputs(tagger.inputs, 0), "pad", False)
    assert result.batching["padding_waste"] == 0  # grouped by length instead


def test_specs_that_cannot_batch_say_why():
    text = ("graphtool: 1\ninputs:\n  x: {random: normal, shape: [4, 5], examples: 6}\n"
            "graph:\n  - {op: linear, out_size: 3, name: l1}\n"
            "  - {op: batch_normalization, name: bn}\nloss: {op: sum}\n")
    spec = load_spec_text(text, "bn.yaml")
    result, _ = run_mode(spec, float64_inputs(make_inputs(spec.inputs, 0)), "auto", False)
    assert result.batching["applied"] is False
    assert "bn.yaml:" in result.batching["reason"]
    assert "batch_normalization" in result.batching["reason"]


def test_batching_option_is_checked():
    spec = load_spec_text(BRANCH, "branch.yaml")
    model = build_model(spec)
    with pytest.raises(ArgumentValueError, match="batching must be one of"):
        run_spec(spec, model, make_inputs(spec.inputs, 0), batching="sometimes")


@pytest.mark.parametrize("bad, message", [
    ("examples: 0", "examples must be a positive integer"),
    ("examples: 3, lengths: [1, 2, 3]", "give lengths or examples, not both"),
])
def test_examples_input_option_errors_are_located(bad, message):
    text = f"graphtool: 1\ninputs:\n  x: {{random: normal, shape: [2], {bad}}}\ngraph: [relu]\n"
    with pytest.raises((SpecError, SpecErrors), match=message) as err:
        load_spec_text(text, "bad.yaml")
    assert "bad.yaml:3:" in str(err.value)


def test_examples_option_makes_a_list_of_examples():
    spec = load_spec_text(BRANCH, "branch.yaml")
    x = make_inputs(spec.inputs, 0)["x"]
    assert isinstance(x, list) and len(x) == 16 and all(a.shape == (5,) for a in x)


def test_groups_beyond_the_plan_cache_run_batched_define_by_run():
    spec = load_spec_text(WHILE, "while.yaml")
    inputs = float64_inputs(make_inputs(spec.inputs, 0))
    reference, reference_grads = run_mode(spec, inputs, "off", False)
    with using_config("dtype", np.float64):
        model = build_model(spec)
        runner = StaticSpecRunner(spec, model, cache_size=1)
        for _ in range(3):
            result = runner.run(inputs)
        grads = {name: np.array(p.grad) for name, p in model.namedparams()
                 if p.grad is not None}
    assert result.batching["applied"] and result.batching["groups"] > 1
    assert len(runner.cache) == 1
    same_as_reference(result, grads, reference, reference_grads)


OUTER = """graphtool: 1
inputs:
  s: {random: normal, shape: [null, 20], lengths: [3, 3, 3]}
graph:
  - {op: reshape, shape: [-1, 1], to: col}
  - {op: reshape, from: s, shape: [1, -1], to: row}
  - {op: matmul, from: [col, row]}
loss: {op: sum}
"""


@pytest.mark.parametrize("batching", ["off", "auto", "pad"])
def test_a_batched_step_over_the_size_limit_is_refused_where_it_is(batching):
    """The per-step size check holds in batched runs too (it was skipped there): the outer
    product of one example (60 x 60) is over the limit, refused before numpy allocates the
    group's, with the per-example run's located error."""
    spec = load_spec_text(OUTER, "outer.yaml", max_elements=3000)
    model = build_model(spec)
    with pytest.raises(SpecError) as info:
        run_spec(spec, model, make_inputs(spec.inputs, 0, "."), batching=batching)
    e = info.value
    assert (e.line, e.col) == (7, 5)
    assert "matmul: the result would have 3,600 elements (shape (60, 60)), over the limit " \
           "of 3,000" in e.message


@pytest.mark.parametrize("name", ["rnn_sequences", "lstm_tagger"])
def test_the_first_call_batches_and_sizes_lazy_parameters_as_per_example(name):
    """A fresh model's lazily sized layers get the initial values the per-example run gives
    them (the first example's forward sizes them, then every example runs batched)."""
    spec = load_spec_file(str(SPECS / f"{name}.yaml"))
    inputs = float64_inputs(make_inputs(spec.inputs, 0))
    firsts = {}
    for mode in ("off", "auto"):
        with using_config("dtype", np.float64):
            model = build_model(spec)
            assert not model.initialized()
            result = run_spec(spec, model, inputs, batching=mode)
            grads = {name: np.array(p.grad) for name, p in model.namedparams()}
            params = {name: np.array(p.array) for name, p in model.namedparams()}
        firsts[mode] = result, grads, params
        assert result.batching["applied"] is (mode == "auto"), result.batching
    (result, grads, params), (reference, reference_grads, reference_params) = \
        firsts["auto"], firsts["off"]
    for name, value in reference_params.items():
        np.testing.assert_array_equal(params[name], value, err_msg=name)
    same_as_reference(result, grads, reference, reference_grads)


PERMUTE = """graphtool: 1
name: permute
seed: 0
inputs:
  x: {random: normal, shape: [5, 3], examples: 8}
  w: {random: normal, shape: [5, 4]}
  order: ORDER
graph:
  - {op: linear, out_size: 4, name: embed}
  - {op: permutate, from: [_, order]}
  - {op: mul, from: [_, w]}
  - {op: permutate, from: [_, order], axis: -2, inv: true}
  - {op: tanh}
  - {op: sum, axis: 1, to: y}
  - {op: sum}
loss: {op: square}
outputs: [y]
"""


@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
def test_a_shared_permutation_batches_one_axis_to_the_right(tmp_path, static):
    """``permutate`` with a shared permutation (a file input) runs the examples as one batch
    (axis 0 of an example is axis 1 of the batch; a negative axis stays where it is) and gives
    each example's own results; per-example permutations run one example at a time."""
    np.save(tmp_path / "order.npy", np.array([3, 0, 4, 1, 2]))
    (tmp_path / "permute.yaml").write_text(PERMUTE.replace("ORDER", "{file: order.npy}"))
    spec = load_spec_file(str(tmp_path / "permute.yaml"))
    inputs = float64_inputs(make_inputs(spec.inputs, 0, spec.folder))
    reference, reference_grads = run_mode(spec, inputs, "off", False)
    for mode in ("auto", "pad"):
        result, grads = run_mode(spec, inputs, mode, static)
        assert result.batching["applied"], result.batching
        same_as_reference(result, grads, reference, reference_grads)
    own = PERMUTE.replace("ORDER", "{zeros: [5], dtype: int64, examples: 8}")
    spec = load_spec_text(own, "own.yaml")
    rng = np.random.default_rng(0)
    inputs = dict(inputs, order=[rng.permutation(5) for _ in range(8)])  # one per example
    reference, reference_grads = run_mode(spec, inputs, "off", False)
    result, grads = run_mode(spec, inputs, "auto", static)
    assert "the indices differ between examples" in result.batching["reason"]
    same_as_reference(result, grads, reference, reference_grads)
