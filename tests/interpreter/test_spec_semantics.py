"""Spec semantics pinned down after review: default outputs, loop variables in nested loops,
list params for whole lists, `--set` numbers, unrolled scope names, while limits."""

import numpy as np
import pytest

from graphcore import spec
from graphcore.errors import SpecErrors


def run(text, **kw):
    loaded = spec.load_spec_text(text, "t.yaml", **kw)
    return spec.run(loaded)[0], loaded


HEAD = "graphtool: 1\ninputs:\n  x: {random: normal, shape: [3, 4]}\n"


def test_the_default_output_is_the_graphs_last_value_not_the_loss():
    result, _ = run(HEAD + "graph:\n  - {op: linear, out_size: 2}\nloss: {op: sum}\n")
    assert result.outputs["_"].shape == (3, 2)
    assert result.loss == pytest.approx(float(result.outputs["_"].array.sum()), rel=1e-5)


def test_loop_i_in_a_while_predicate_counts_trips():
    result, _ = run(HEAD + "graph:\n  - while: loop.i < 3\n    max_iters: 10\n"
                    "    body: [{op: scale, by: 2.0}]\n")
    assert result.path[0].detail == {"trips": 3, "limit_reached": False}
    np.testing.assert_allclose(result.outputs["_"].array,
                               spec.make_inputs(spec.load_spec_text(HEAD + "graph: [relu]\n")
                                                .inputs, 0)["x"] * 8, rtol=1e-6)


def test_loop_t_reaches_loops_nested_in_a_for_each():
    text = HEAD + """graph:
  - for_each: x
    as: row
    body:
      - repeat: 2
        body:
          - if: loop.t == 1
            then: [{op: scale, by: 10.0}]
            else: [{op: scale, by: 1.0}]
    collect: _
    to: rows
"""
    result, _ = run(text)
    branches = [e.detail["branch"] for e in result.path if e.kind == "if"]
    assert branches == ["else", "else", "then", "then", "else", "else"]


def test_a_list_param_stands_for_a_whole_list():
    text = ("graphtool: 1\nparams: {shape: [2, 5]}\ninputs:\n"
            "  x: {random: normal, shape: $params.shape}\ngraph: [relu]\n")
    result, loaded = run(text)
    assert loaded.inputs["x"].shape == (2, 5) and result.outputs["_"].shape == (2, 5)


def test_set_reads_exponent_numbers_as_numbers():
    text = "graphtool: 1\nparams: {lr: 0.1}\ninputs:\n  x: {zeros: [2]}\ngraph: [relu]\n"
    loaded = spec.load_spec_text(text, overrides=["params.lr=1e-3"])
    assert loaded.params["lr"] == 0.001


def test_a_layer_named_like_an_unrolled_scope_is_refused():
    text = HEAD + """graph:
  - repeat: 2
    unroll: true
    body: [{op: linear, out_size: 4, name: block}]
  - {op: linear, out_size: 7, name: block_1}
"""
    with pytest.raises(SpecErrors, match=r"t.yaml:8:5: error: layer name 'block_1' is also"):
        spec.load_spec_text(text, "t.yaml")


def test_limit_reached_only_when_the_predicate_still_holds():
    stops_exactly = HEAD + ("graph:\n  - while: loop.i < 3\n    max_iters: 3\n"
                            "    body: [relu]\n")
    assert run(stops_exactly)[0].path[0].detail == {"trips": 3, "limit_reached": False}
    cut_short = stops_exactly.replace("loop.i < 3", "loop.i < 9")
    assert run(cut_short)[0].path[0].detail == {"trips": 3, "limit_reached": True}


def test_huge_repeats_are_refused_at_load():
    with pytest.raises(SpecErrors, match="over the limit of 100,000 trips"):
        spec.load_spec_text(HEAD + "graph:\n  - repeat: 1000000\n    body: [relu]\n")
