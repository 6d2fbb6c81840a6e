"""A batched call's per-example results are built on first read, and examples made as one
array's rows batch without being stacked again: both invisible to callers.

Results read lazily are plain lists and dicts, the same as built up front; inputs given as
``StackedExamples`` give exactly (bit for bit) what the same rows as a plain list give; the
stacked array is used only while the list still holds its rows unchanged.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from graphcore.config import using_config
from graphcore.inputs.stacked import StackedExamples, stacked_rows
from graphcore.interpreter.results import PathEntry, RunResult
from graphcore.spec import build_model, load_spec_text, make_inputs, run_spec
from graphcore.spec_static.runner import StaticSpecRunner

BRANCH = """
graphtool: 1
name: branch
seed: 0
inputs:
  x: {random: normal, shape: [5], examples: 16}
  s: {random: normal, shape: [3, 2], examples: 16}
graph:
  - {op: linear, out_size: 6, name: embed}
  - if: mean(_) > 0
    then: [tanh, {op: linear, out_size: 3, name: up, to: y}]
    else: [relu, {op: linear, out_size: 3, name: down, to: y}]
  - {op: sum, from: s, axis: 0, to: pooled}
  - {op: sum, from: y}
loss: {op: square}
outputs: [y, pooled]
"""


def _run(spec, inputs, static):
    with using_config("dtype", np.float64):
        model = build_model(spec)
        if static:
            runner = StaticSpecRunner(spec, model, loss_inputs=True)
            for _ in range(2):  # the first call sizes lazy parameters, the second traces
                runner.run(inputs)
            result = runner.run(inputs)
        else:
            run_spec(spec, model, inputs)
            result = run_spec(spec, model, inputs)
        grads = {name: np.array(p.grad) for name, p in model.namedparams()}
    return result, grads


def _float64(inputs, stacked):
    out = {}
    for name, rows in inputs.items():
        rows = np.stack(rows).astype(np.float64)
        out[name] = StackedExamples(rows) if stacked else list(rows.copy())
    return out


def _arrays(value):
    if isinstance(value, tuple):
        return [np.asarray(getattr(v, "array", v)) for v in value]
    return [np.asarray(getattr(value, "array", value))]


@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
def test_stacked_examples_batch_exactly_as_plain_lists(static):
    spec = load_spec_text(BRANCH, "branch.yaml")
    made = make_inputs(spec.inputs, 0)
    assert all(type(v) is StackedExamples for v in made.values())
    plain, plain_grads = _run(spec, _float64(made, stacked=False), static)
    inputs = _float64(made, stacked=True)
    assert all(stacked_rows(v) is v.stacked for v in inputs.values())
    stacked, stacked_grads = _run(spec, inputs, static)
    assert stacked.batching["applied"] and stacked.batching["partitions"] == 1
    assert stacked.loss == plain.loss
    for name, g in plain_grads.items():
        np.testing.assert_array_equal(stacked_grads[name], g, err_msg=name)
    for got, want in zip(stacked.example_outputs, plain.example_outputs, strict=True):
        assert got.keys() == want.keys()
        for name in want:
            for a, b in zip(_arrays(got[name]), _arrays(want[name]), strict=True):
                np.testing.assert_array_equal(a, b, err_msg=name)
    assert [e.to_dict() for e in stacked.path] == [e.to_dict() for e in plain.path]
    assert len(stacked.loss_inputs) == len(plain.loss_inputs) == 16
    for got, want in zip(stacked.loss_inputs, plain.loss_inputs, strict=True):
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(_arrays(a)[0], _arrays(b)[0])


@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
def test_results_read_lazily_as_plain_lists(static):
    spec = load_spec_text(BRANCH, "branch.yaml")
    result, _ = _run(spec, _float64(make_inputs(spec.inputs, 0), stacked=True), static)
    assert "path" not in result.__dict__  # nothing built before a read
    assert "outputs" not in result.__dict__
    assert type(result.path) is list and all(type(e) is PathEntry for e in result.path)
    assert [e.kind for e in result.path].count("example") == 16
    assert type(result.example_outputs) is list and len(result.example_outputs) == 16
    assert result.outputs is result.example_outputs[-1]
    assert type(result.loss_inputs) is list
    assert result.path is result.path  # built once
    assert result == result and "PathEntry" not in repr(result)  # the views are not values
    result.path = []  # an assignment replaces the view
    assert result.path == []


def test_a_result_without_views_reads_empty_lists_of_its_own():
    first = RunResult(loss=None, timing_ms={})
    second = RunResult(loss=None, timing_ms={})
    first.path.append(PathEntry("example", None, {"index": 0}))
    assert second.path == [] and first.example_outputs == [] and first.loss_inputs == []
    assert first.outputs == {} and first.outputs is not second.outputs
    assert first != second  # results compare by identity


def test_stacked_rows_only_while_the_list_holds_its_rows_unchanged():
    rows = StackedExamples(np.arange(12.0).reshape(4, 3))
    assert stacked_rows(rows) is rows.stacked
    rows[1][0] = 99.0  # written in place: the stacked array is the rows' memory
    assert stacked_rows(rows)[1, 0] == 99.0
    assert stacked_rows([np.zeros(3)] * 4) is None  # a plain list

    edits = [lambda r: r.append(np.zeros(3)), lambda r: r.reverse(),
             lambda r: r.__setitem__(2, np.zeros(3)), lambda r: r.pop(),
             lambda r: setattr(r[0], "shape", (3, 1)),
             lambda r: setattr(r[3], "dtype", np.int64),  # same item size, same shape
             lambda r: r.__setitem__(1, r[1].copy()),  # equal values, another array
             lambda r: r.__setitem__(1, list(r[1])), lambda r: r.__setitem__(0, None),
             lambda r: r.__setitem__(0, np.zeros((0, 3)))]
    for edit in edits:
        edited = StackedExamples(np.arange(12.0).reshape(4, 3))
        edit(edited)
        assert stacked_rows(edited) is None
    # rows of one element: an equal copy compares equal, so identity is checked one by one
    ones = StackedExamples(np.arange(4.0).reshape(4, 1))
    assert stacked_rows(ones) is ones.stacked
    ones[2] = ones[2].copy()
    assert stacked_rows(ones) is None
    # a row's shape changed in place keeping its size, for rows of one, two, three axes
    # (and two with an empty first): every change is seen, whatever is read to see it
    for shape, new in (((4, 6), (2, 3)), ((4, 2, 6), (6, 2)), ((4, 2, 6), (2, 3, 2)),
                       ((4, 2, 3, 4), (2, 4, 3)), ((4, 0, 3), (0, 5))):
        edited = StackedExamples(np.zeros(shape))
        assert stacked_rows(edited) is edited.stacked
        edited[2].shape = new
        assert stacked_rows(edited) is None, (shape, new)

    for copied in (copy.copy(rows), copy.deepcopy(rows), pickle.loads(pickle.dumps(rows))):
        assert type(copied) is list and stacked_rows(copied) is None
        np.testing.assert_array_equal(np.stack(copied), rows.stacked)


def test_examples_of_several_lengths_stay_a_plain_list():
    spec = load_spec_text(BRANCH.replace("shape: [3, 2], examples: 16",
                                         "shape: [null, 2], lengths: [3, 4]")
                          .replace("shape: [5], examples: 16",
                                   "shape: [null, 5], lengths: [1, 1]"), "ragged.yaml")
    made = make_inputs(spec.inputs, 0)
    assert type(made["s"]) is list and type(made["x"]) is StackedExamples
