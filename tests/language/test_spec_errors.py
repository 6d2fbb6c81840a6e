"""Spec errors, one test per kind: each asserts the exact ``file:line:col``, the message and the
hint (DESIGN sections 4 and 8). Load-time problems are ``SpecError``s collected into one
``SpecErrors``; failures while running a valid spec are located ``SpecRuntimeError``s.

The spec texts below spell out their lines; ``HEAD`` is always lines 1-4, so the first graph
step is line 6 when ``graph:`` is line 5.
"""

import numpy as np
import pytest

from graphcore.errors import SpecError, SpecErrors, SpecRuntimeError
from graphcore.language.syntax import IfStep, OpStep, RepeatStep
from graphcore.spec import load_spec_text, run

FILE = "model.yaml"
HEAD = """\
graphtool: 1
inputs:
  x: {random: normal, shape: [3, 4]}
  t: {random: randint, low: 0, high: 4, shape: [3]}
"""


def errors_of(text: str, **options) -> list[SpecError]:
    with pytest.raises(SpecErrors) as info:
        load_spec_text(text, file=FILE, **options)
    return info.value.errors


def the_error(text: str, **options) -> SpecError:
    """The one error of ``text`` (fails listing all of them when there are several)."""
    errors = errors_of(text, **options)
    assert len(errors) == 1, [e.headline() for e in errors]
    return errors[0]


def at(error: SpecError | SpecRuntimeError) -> str:
    return f"{error.file}:{error.line}:{error.col}"


def runtime_error(text: str) -> SpecRuntimeError:
    spec = load_spec_text(text, file=FILE)
    with pytest.raises(SpecRuntimeError) as info:
        run(spec)
    return info.value


# ---------------------------------------------------------------- top level

def test_unknown_top_level_key_with_did_you_mean():
    e = the_error(HEAD + "grpah: [relu]\ngraph: [relu]\n")
    assert at(e) == "model.yaml:5:1"
    assert e.message == "unknown top-level key 'grpah'"
    assert e.hint == "did you mean 'graph'?"
    assert e.length == 5


def test_unknown_top_level_key_without_a_close_match_has_no_hint():
    e = the_error(HEAD + "graph: [relu]\nzzzz: 1\n")
    assert (at(e), e.message, e.hint) == ("model.yaml:6:1", "unknown top-level key 'zzzz'",
                                          None)


def test_missing_version():
    e = the_error(HEAD[len("graphtool: 1\n"):] + "graph: [relu]\n")
    assert at(e) == "model.yaml:1:1"
    assert e.message == "missing 'graphtool: 1' (the spec format version)"


@pytest.mark.parametrize(("written", "shown"), [
    ("2", "2"), ("'1'", "'1'"), ("1.0", "1.0"), ("true", "true"), ("yes", "yes")])
def test_wrong_version(written, shown):
    """Regression for true, yes and 1.0: they equal 1 in Python and were accepted."""
    e = the_error(f"graphtool: {written}\n" + HEAD.split("\n", 1)[1] + "graph: [relu]\n")
    assert at(e) == "model.yaml:1:12"
    assert e.message == (f"unsupported spec format version {shown}; this graphtool reads "
                         "version 1")


def test_bad_kind_with_did_you_mean():
    e = the_error(HEAD + "kind: statik\ngraph: [relu]\n")
    assert at(e) == "model.yaml:5:7"
    assert e.message == "kind must be one of static, dynamic, got 'statik'"
    assert e.hint == "did you mean 'static'?"


# ---------------------------------------------------------------- ops and attributes

def test_unknown_op_did_you_mean_over_ops():
    e = the_error(HEAD + "graph:\n  - relu\n  - sigmod\n")
    assert at(e) == "model.yaml:7:5"
    assert (e.message, e.hint) == ("unknown op 'sigmod'", "did you mean 'sigmoid'?")


def test_unknown_op_did_you_mean_over_layers():
    e = the_error(HEAD + "graph:\n  - {op: batch_normalisation}\n")
    assert at(e) == "model.yaml:6:10"
    assert e.message == "unknown op 'batch_normalisation'"
    assert e.hint == "did you mean 'batch_normalization'?"
    e = the_error(HEAD + "graph:\n  - {op: lineer, out_size: 3}\n")
    assert (at(e), e.hint) == ("model.yaml:6:10", "did you mean 'linear'?")


def test_unknown_attribute_with_did_you_mean():
    errors = errors_of(HEAD + "graph:\n  - {op: scale, bye: 2.0}\n")
    assert [(at(e), e.message, e.hint) for e in errors] == [
        ("model.yaml:6:5", "op 'scale' needs attribute 'by' (the factor)", None),
        ("model.yaml:6:17", "op 'scale' has no attribute 'bye'", "did you mean 'by'?"),
    ]


def test_unknown_attribute_of_an_op_without_attributes():
    e = the_error(HEAD + "graph:\n  - {op: relu, slope: 0.2}\n")
    assert at(e) == "model.yaml:6:16"
    assert (e.message, e.hint) == ("op 'relu' has no attribute 'slope'",
                                   "'relu' takes no attributes")


def test_missing_required_attribute():
    e = the_error(HEAD + "graph:\n  - {op: linear, name: l1}\n")
    assert at(e) == "model.yaml:6:5"
    assert e.message == "op 'linear' needs attribute 'out_size' (output features)"
    e = the_error(HEAD + "graph:\n  - relu\n  - scale\n")
    assert (at(e), e.message) == ("model.yaml:7:5", "op 'scale' needs attribute 'by' (the "
                                                    "factor)")


def test_wrong_attribute_type_1e_minus_3_is_text_with_hint():
    e = the_error(HEAD + "graph:\n  - {op: scale, by: 1e-3}\n")
    assert at(e) == "model.yaml:6:21"
    assert e.message == "attribute 'by' of 'scale' must be a number, got '1e-3'"
    assert e.hint == "YAML 1.1 reads 1e-3 as text, not a number; write 1.0e-3"
    assert e.length == 4


def test_wrong_attribute_type_without_a_trap_has_no_hint():
    e = the_error(HEAD + "graph:\n  - {op: scale, by: twice}\n")
    assert (at(e), e.hint) == ("model.yaml:6:21", None)
    assert e.message == "attribute 'by' of 'scale' must be a number, got 'twice'"


def test_yes_and_on_are_booleans_where_a_boolean_is_wanted():
    spec = load_spec_text(HEAD + "graph:\n  - repeat: 2\n    unroll: yes\n    body:\n"
                          "      - {op: linear, out_size: 4, nobias: on}\n", file=FILE)
    repeat = spec.graph[0]
    assert isinstance(repeat, RepeatStep) and repeat.unroll is True
    assert repeat.body[0].attrs == {"out_size": 4, "nobias": True}


def test_no_is_a_boolean_where_text_is_wanted_with_hint():
    e = the_error(HEAD + "graph:\n  - {op: softmax_cross_entropy, from: [x, t], reduce: no}\n")
    assert at(e) == "model.yaml:6:55"
    assert e.message == "attribute 'reduce' of 'softmax_cross_entropy' must be text, got no"
    assert e.hint == ("YAML 1.1 reads no as the boolean false; quote it ('no') if you meant "
                      "text, or write false")


def test_on_is_a_boolean_where_an_integer_is_wanted_with_hint():
    e = the_error(HEAD + "graph:\n  - repeat: on\n    body: [relu]\n")
    assert at(e) == "model.yaml:6:13"
    assert e.message == "repeat must be an integer, got on"
    assert e.hint.startswith("YAML 1.1 reads on as the boolean true")


def test_quoted_yes_is_text_where_a_boolean_is_wanted():
    errors = errors_of(HEAD + "graph:\n  - repeat: 2\n    unroll: 'yes'\n    body:\n"
                       "      - {op: linear, out_size: 4, nobias: \"on\"}\n")
    assert [(at(e), e.message, e.hint) for e in errors] == [
        ("model.yaml:7:13", "unroll must be true or false, got 'yes'", None),
        ("model.yaml:9:43", "attribute 'nobias' of 'linear' must be true or false, got 'on'",
         None),
    ]


def test_leading_zero_that_is_not_octal_is_text_with_hint():
    e = the_error(HEAD + "graph:\n  - {op: linear, out_size: 08}\n")
    assert at(e) == "model.yaml:6:28"
    assert e.message == "attribute 'out_size' of 'linear' must be an integer, got '08'"
    assert e.hint == ("08 is read as text (a leading zero means octal in YAML 1.1, and it is "
                      "not a valid octal number); write 8 for the number")


def test_octal_integer_in_a_shape_gets_the_octal_hint():
    e = the_error("graphtool: 1\ninputs:\n  x: {zeros: [3, 09]}\ngraph: [relu]\n")
    assert at(e) == "model.yaml:3:18"
    assert e.message == "input 'x': sizes must be positive integers, got '09'"
    assert e.hint.startswith("09 is read as text (a leading zero means octal")


@pytest.mark.parametrize(("step", "col", "message"), [
    ("{op: linear, out_size: 0}", 28, "attribute 'out_size' of 'linear' must be at least 1, "
                                      "got 0"),
    ("{op: dropout, ratio: 1.5}", 26, "attribute 'ratio' of 'dropout' must be at most 1.0, "
                                      "got 1.5"),
    ("{op: leaky_relu, slope: -0.5}", 29, "attribute 'slope' of 'leaky_relu' must be at least "
                                          "0.0, got -0.5"),
])
def test_out_of_range_attribute(step, col, message):
    e = the_error(HEAD + f"graph:\n  - {step}\n")
    assert (at(e), e.message) == (f"model.yaml:6:{col}", message)


def test_attribute_outside_its_choices_with_did_you_mean():
    e = the_error(HEAD + "graph:\n  - {op: softmax_cross_entropy, from: [x, t], reduce: mena}\n")
    assert at(e) == "model.yaml:6:55"
    assert e.message == ("attribute 'reduce' of 'softmax_cross_entropy' must be one of mean, "
                         "no, got 'mena'")
    assert e.hint == "did you mean 'mean'?"


def test_wrong_arity():
    errors = errors_of(HEAD + "graph:\n  - {op: add}\n  - {op: relu, from: [x, t]}\n")
    assert [(at(e), e.message, e.hint) for e in errors] == [
        ("model.yaml:6:5", "op 'add' takes 2 inputs, got 1 (name them with from: [a, b])", None),
        ("model.yaml:7:5", "op 'relu' takes 1 input, got 2", None),
    ]


@pytest.mark.parametrize(("text", "where", "op"), [
    (HEAD + "graph:\n  - add\n", "model.yaml:6:5", "add"),
    (HEAD + "graph:\n  - {op: linear, out_size: 4}\nloss: softmax_cross_entropy\n",
     "model.yaml:7:7", "softmax_cross_entropy"),
])
def test_a_bare_op_name_that_needs_two_inputs_is_shown_as_a_mapping(text, where, op):
    """Regression: `loss: softmax_cross_entropy` was told to add `from:`, which a bare name
    cannot have; the hint now writes the mapping out."""
    e = the_error(text)
    assert (at(e), e.message, e.hint) == (
        where, f"op '{op}' takes 2 inputs, got 1",
        f"write it as a mapping to name them: {{op: {op}, from: [a, b]}}")


# ---------------------------------------------------------------- names and scopes

def test_unknown_value_name_in_from_with_did_you_mean():
    e = the_error(HEAD + "graph:\n  - {op: relu, to: hidden}\n  - {op: tanh, from: hiden}\n")
    assert at(e) == "model.yaml:7:22"
    assert (e.message, e.hint) == ("no value named 'hiden' here", "did you mean 'hidden'?")
    e = the_error(HEAD + "graph:\n  - {op: relu, from: y}\n")
    assert (at(e), e.message, e.hint) == ("model.yaml:6:22", "no value named 'y' here", None)


def test_a_name_bound_in_one_branch_of_an_if_is_not_visible_after_it():
    text = HEAD + """\
graph:
  - if: mean(x) > 0
    then: [{op: relu, to: a}, {op: tanh, to: both}]
    else: [{op: tanh, to: b}, {op: relu, to: both}]
  - {op: add, from: [both, both]}
  - {op: relu, from: a}
"""
    e = the_error(text)
    assert at(e) == "model.yaml:10:22"
    assert e.message == "no value named 'a' here"
    assert e.hint == ("'a' is bound in only one branch of the if at line 6; bind it in both "
                      "branches to use it after the if")
    # and the name bound in both branches is visible: only 'a' is reported


def test_a_name_bound_in_a_while_body_is_not_visible_after_it():
    text = HEAD + """\
graph:
  - while: norm(_) > 1
    max_iters: 3
    body: [{op: scale, by: 0.5, to: small}]
  - {op: relu, from: small}
"""
    e = the_error(text)
    assert (at(e), e.message) == ("model.yaml:9:22", "no value named 'small' here")


def test_undefined_param_with_did_you_mean():
    e = the_error(HEAD + "params: {hidden: 4}\ngraph:\n  - {op: linear, out_size: $params.hiden}\n")
    assert at(e) == "model.yaml:7:28"
    assert e.message == "unknown parameter 'hiden' in '$params.hiden'"
    assert e.hint == "did you mean 'hidden'?"
    assert e.length == len("$params.hiden")


def test_quoted_dollar_params_is_text_not_a_reference():
    e = the_error(HEAD + "params: {hidden: 4}\ngraph:\n"
                  "  - {op: linear, out_size: '$params.hidden'}\n")
    assert at(e) == "model.yaml:7:28"
    assert e.message == "attribute 'out_size' of 'linear' must be an integer, got '$params.hidden'"


SET_SPEC = HEAD + """\
params: {hidden: 4, act: tanh}
graph:
  - {op: linear, out_size: $params.hidden}
"""


def test_set_override_applies():
    spec = load_spec_text(SET_SPEC, file=FILE, overrides=["params.hidden=7", "params.act=relu"])
    assert spec.params == {"hidden": 7, "act": "relu"}
    assert spec.graph[0].attrs["out_size"] == 7


def test_set_override_of_an_unknown_param_with_did_you_mean():
    e = the_error(SET_SPEC, overrides=["params.hidden=3", "params.hiden=3"])
    assert at(e) == "--set:2:1"
    assert e.message == "--set params.hiden: the spec has no parameter 'hiden'"
    assert e.hint == "did you mean 'hidden'?"


def test_malformed_set_overrides():
    errors = errors_of(SET_SPEC, overrides=["hidden=3", "params.hidden", "params.=3",
                                            "params.hidden={a: 1}"])
    assert [(at(e), e.message) for e in errors] == [
        ("--set:1:1", "--set expects params.NAME=VALUE, got 'hidden=3'"),
        ("--set:2:1", "--set expects params.NAME=VALUE, got 'params.hidden'"),
        ("--set:3:1", "--set expects params.NAME=VALUE, got 'params.=3'"),
        ("--set:4:15", "--set params.hidden: a value must be a scalar or a list"),
    ]


def test_set_override_of_a_wrong_type_is_reported_where_the_param_is_used():
    e = the_error(SET_SPEC, overrides=["params.hidden=1e-3"])
    assert at(e) == "model.yaml:7:28"
    assert e.message == ("attribute 'out_size' of 'linear' must be an integer, got 0.001 "
                         "(from --set params.hidden=1e-3)")


def test_duplicate_key():
    e = the_error(HEAD + "graph: [relu]\nseed: 1\ngraph: [tanh]\n")
    assert at(e) == "model.yaml:7:1"
    assert e.message == "duplicate key 'graph' (first at line 5)"
    e = the_error(HEAD + "graph:\n  - {op: scale, by: 2.0, by: 3.0}\n")
    assert (at(e), e.message) == ("model.yaml:6:26", "duplicate key 'by' (first at line 6)")


def test_value_names_that_cannot_name_a_value():
    errors = errors_of(HEAD + "graph:\n  - {op: relu, to: loop}\n  - {op: relu, to: 2x}\n")
    assert [at(e) for e in errors] == ["model.yaml:6:20", "model.yaml:7:20"]
    rule = ("cannot name a value: use a letter followed by letters, digits or '_' (and not "
            "params, loop, true, false, and, or, not)")
    assert [e.message for e in errors] == [f"'loop' {rule}", f"'2x' {rule}"]


# ---------------------------------------------------------------- predicates

def test_predicate_syntax_error_maps_to_the_file_column():
    e = the_error(HEAD + "graph:\n  - if: mean(x) > > 0\n    then: [relu]\n")
    assert at(e) == "model.yaml:6:19"
    assert e.message == "expected a value, got '>'"
    assert e.source_line == "  - if: mean(x) > > 0"


@pytest.mark.parametrize("quote", ["'", '"'])
def test_predicate_syntax_error_in_a_quoted_predicate(quote):
    e = the_error(HEAD + f"graph:\n  - while: {quote}norm(_) >> 1{quote}\n    max_iters: 3\n"
                  "    body: [relu]\n")
    # "  - while: " is 11 characters, the quote is column 12, the predicate starts at 13
    assert at(e) == "model.yaml:6:22"
    assert e.message == "expected a value, got '>'"


def test_predicate_syntax_error_in_a_block_predicate():
    """Regression: a block scalar (`if: >`) starts on the next line; the error was reported
    past the end of the `if: >` line."""
    e = the_error(HEAD + "graph:\n  - if: >\n      mean(x) > > 1\n    then: [relu]\n")
    assert at(e) == "model.yaml:7:17"
    assert e.source_line == "      mean(x) > > 1"


def test_unknown_function_in_a_predicate_with_did_you_mean():
    e = the_error(HEAD + "graph:\n  - if: meen(x) > 0\n    then: [relu]\n")
    assert at(e) == "model.yaml:6:9"
    assert (e.message, e.hint) == ("unknown function 'meen'", "did you mean 'mean'?")
    assert e.length == 4


def test_unknown_name_in_a_predicate_with_did_you_mean():
    e = the_error(HEAD + "graph:\n  - {op: relu, to: hidden}\n  - if: norm(hiden) > 0\n"
                  "    then: [relu]\n")
    assert at(e) == "model.yaml:7:14"
    assert (e.message, e.hint) == ("no value named 'hiden' here", "did you mean 'hidden'?")


def test_unknown_param_in_a_predicate_with_did_you_mean():
    e = the_error(HEAD + "params: {act: tanh}\ngraph:\n  - if: params.akt == 'tanh'\n"
                  "    then: [tanh]\n")
    assert at(e) == "model.yaml:7:9"
    assert (e.message, e.hint) == ("unknown parameter 'params.akt'", "did you mean 'act'?")


def test_loop_index_outside_a_loop():
    e = the_error(HEAD + "graph:\n  - if: loop.i > 0\n    then: [relu]\n")
    assert at(e) == "model.yaml:6:9"
    assert e.message == "'loop.i' is only defined inside repeat, while and for_each bodies"
    assert e.length == len("loop.i")


def test_loop_t_outside_a_for_each():
    e = the_error(HEAD + "graph:\n  - repeat: 2\n    body:\n      - if: loop.t > 0\n"
                  "        then: [relu]\n")
    assert (at(e), e.message) == ("model.yaml:8:13", "'loop.t' is only defined inside a "
                                                     "for_each body")


def test_loop_index_inside_a_loop_is_fine():
    spec = load_spec_text(HEAD + "graph:\n  - repeat: 2\n    body:\n      - if: loop.i > 0\n"
                          "        then: [relu]\n", file=FILE)
    assert isinstance(spec.graph[0].body[0], IfStep)


def test_static_spec_with_a_predicate_over_live_data():
    text = HEAD + "kind: static\nparams: {p: true}\ngraph:\n  - if: params.p and mean(x) > 0\n" \
                  "    then: [relu]\n"
    e = the_error(text)
    # "  - if: " is 8 characters; "params.p and mean(" 18 more: x is column 27
    assert at(e) == "model.yaml:8:27"
    assert e.message == ("a static spec cannot branch on live data ('x'); branch on params, or "
                         "make the spec kind: dynamic")
    assert e.length == 1


def test_static_spec_with_a_params_predicate_is_resolved_at_load():
    spec = load_spec_text(HEAD + "kind: static\nparams: {p: false}\ngraph:\n  - if: params.p\n"
                          "    then: [relu]\n    else: [tanh]\n", file=FILE)
    assert spec.graph[0].resolved is False


def test_static_while_over_live_data():
    e = the_error(HEAD + "kind: static\ngraph:\n  - while: norm(_) > 1\n    max_iters: 3\n"
                  "    body: [relu]\n")
    assert at(e) == "model.yaml:7:17"
    assert "static spec cannot branch on live data ('_')" in e.message


def test_while_without_max_iters():
    e = the_error(HEAD + "graph:\n  - while: norm(_) > 1\n    body: [relu]\n")
    assert at(e) == "model.yaml:6:5"
    assert e.message == "while needs 'max_iters' (an upper bound on the trip count)"


def test_layer_shared_by_name_with_different_attributes():
    text = HEAD + """\
graph:
  - {op: linear, out_size: 4, name: l}
  - relu
  - {op: linear, out_size: 5, name: l}
"""
    e = the_error(text)
    assert at(e) == "model.yaml:8:5"
    assert e.message == ("layer 'l' is shared with the step at line 6, so it must be the same "
                         "op with the same attributes")


def test_layer_shared_by_name_with_the_same_attributes_is_fine():
    spec = load_spec_text(HEAD + "graph:\n  - {op: linear, out_size: 4, name: l}\n  - relu\n"
                          "  - {op: linear, out_size: 4, name: l}\n", file=FILE)
    assert [s.name for s in spec.graph if isinstance(s, OpStep) and s.layer] == ["l", "l"]


@pytest.mark.parametrize("name", ["layer", "cleargrads", "children", "spec", "name"])
def test_layer_name_that_is_an_attribute_of_the_model(name):
    """Regression: `name: layer` replaced SpecModel.layer by the link, and the run crashed with
    an AttributeError; such names are refused at load."""
    e = the_error(HEAD + f"graph:\n  - {{op: linear, out_size: 2, name: {name}}}\n")
    assert at(e) == "model.yaml:6:37"
    assert e.message == (f"'{name}' cannot name a layer: the model has an attribute of that "
                         "name")


# ---------------------------------------------------------------- inputs

def one_input(entry: str) -> str:
    return f"graphtool: 1\ninputs:\n  x: {entry}\ngraph: [relu]\n"


@pytest.mark.parametrize(("entry", "what"), [("{shape: [3]}", "no source"),
                                             ("{zeros: [3], ones: [3]}", "2 sources")])
def test_input_without_exactly_one_source(entry, what):
    e = the_error(one_input(entry))  # one error: the graph's '_' is still the input
    assert at(e) == "model.yaml:3:6"
    assert e.message == (f"input 'x' has {what}; give exactly one of random, zeros, ones, "
                         "file, stdin")


@pytest.mark.parametrize(("entry", "col", "shown"), [
    ("{random: normal, shape: [3, -1]}", 34, "-1"),
    ("{random: normal, shape: [3, 0]}", 34, "0"),
    ("{zeros: [2, 2.5]}", 18, "2.5"),
    ("{ones: [true, 2]}", 14, "true"),
    ("{random: normal, shape: [3, null]}", 34, "null"),
])
def test_bad_shape_entries(entry, col, shown):
    e = the_error(one_input(entry))
    assert at(e) == f"model.yaml:3:{col}"
    assert e.message == f"input 'x': sizes must be positive integers, got {shown}"


def test_shape_that_is_not_a_list():
    e = the_error(one_input("{ones: three}"))
    assert (at(e), e.message) == ("model.yaml:3:13", "input 'x': shape must be a list of "
                                                     "sizes, got 'three'")


def test_random_input_without_shape():
    e = the_error(one_input("{random: normal}"))
    assert (at(e), e.message) == ("model.yaml:3:6", "input 'x' needs a 'shape' (a list of "
                                                    "sizes)")


def test_null_shape_without_lengths():
    e = the_error(one_input("{random: normal, shape: [null, 4]}"))
    assert at(e) == "model.yaml:3:6"
    assert e.message == "input 'x': a null length in shape needs 'lengths'"


def test_lengths_without_a_null_shape():
    e = the_error(one_input("{random: normal, shape: [3, 4], lengths: [2, 3]}"))
    assert at(e) == "model.yaml:3:47"
    assert e.message == ("input 'x': lengths need shape [null, ...] (the null axis is the "
                         "sequence length)")


def test_randint_without_high():
    e = the_error(one_input("{random: randint, low: 0, shape: [3]}"))
    assert (at(e), e.message) == ("model.yaml:3:6", "input 'x': randint needs 'high' "
                                                    "(exclusive)")


def test_random_option_of_the_wrong_distribution():
    e = the_error(one_input("{random: normal, low: 0.0, shape: [3]}"))
    assert at(e) == "model.yaml:3:23"
    assert e.message == ("input 'x': 'low' applies to uniform and randint, not normal (use "
                         "mean and std)")


def test_unknown_random_distribution_with_did_you_mean():
    e = the_error(one_input("{random: unifrom, shape: [3]}"))
    assert at(e) == "model.yaml:3:15"
    assert e.message == "random must be one of normal, uniform, randint, got 'unifrom'"
    assert e.hint == "did you mean 'uniform'?"


def test_file_with_a_bad_suffix():
    e = the_error(one_input("{file: data.txt}"))
    assert at(e) == "model.yaml:3:13"
    assert e.message == "input 'x': file must be .npy, .npz or .csv, got '.txt'"


def test_npz_file_without_key():
    e = the_error(one_input("{file: data.npz}"))
    assert at(e) == "model.yaml:3:6"
    assert e.message == "input 'x': an .npz file needs 'key' (the array's name inside it)"


def test_key_for_a_file_that_is_not_npz():
    e = the_error(one_input("{file: data.npy, key: x}"))
    assert (at(e), e.message) == ("model.yaml:3:23", "'key' applies to .npz files only")


def test_option_that_does_not_apply_to_the_source_with_did_you_mean():
    e = the_error(one_input("{zeros: [3], dtyp: float64}"))
    assert at(e) == "model.yaml:3:19"
    assert e.message == "input 'x': 'dtyp' does not apply to a zeros input"
    assert e.hint == "did you mean 'dtype'?"


@pytest.mark.parametrize(("entry", "elements"), [
    ("{random: normal, shape: [1000, 1000]}", "1,000,000"),
    ("{zeros: [101, 100]}", "10,100"),
    ("{random: normal, shape: [null, 100], lengths: [5, 200]}", "20,000"),
    ("{ones: [99999999999999999999, 4]}", "399,999,999,999,999,999,996"),  # no int64 overflow
])
def test_tensor_over_the_size_limit_is_refused_at_load(entry, elements):
    e = the_error(one_input(entry), max_elements=10_000)
    assert at(e) == "model.yaml:3:6"
    assert e.message == f"input 'x' would have {elements} elements, over the limit of 10,000"


def test_default_size_limit_refuses_an_absurd_input():
    e = the_error(one_input("{random: normal, shape: [100000, 100000]}"))
    assert e.message.startswith("input 'x' would have 10,000,000,000 elements")


def test_carry_over_the_size_limit_is_refused_at_load():
    text = HEAD + """\
graph:
  - for_each: x
    as: row
    carry: {h: {zeros: [1000, 1000]}}
    body: [relu]
"""
    e = the_error(text, max_elements=10_000)
    assert at(e) == "model.yaml:8:16"
    assert e.message == "carry 'h' would have 1,000,000 elements, over the limit of 10,000"


@pytest.mark.parametrize(("step", "elements"), [
    ("{op: linear, out_size: 20000}", "20,000"),
    ("{op: linear, in_size: 200, out_size: 100}", "20,000"),
    ("{op: embed_id, in_size: 1000, out_size: 1000}", "1,000,000"),
    ("{op: linear, out_size: 99999999999999999999}", "99,999,999,999,999,999,999"),
])
def test_layer_over_the_size_limit_is_refused_at_load(step, elements):
    """Regression: a huge out_size reached numpy's allocator (ValueError) when the model was
    built."""
    e = the_error(HEAD + f"graph:\n  - {step}\n", max_elements=10_000)
    assert at(e) == "model.yaml:6:5"
    assert e.message.endswith(f"would have a parameter of {elements} elements, over the "
                              "limit of 10,000")


@pytest.mark.parametrize(("step", "elements", "shape"), [
    ("{op: scatter_add, index: [[0]], shape: [1000000000]}", "1,000,000,000", "[1000000000]"),
    ("{op: broadcast_to, shape: [100000, 100000]}", "10,000,000,000", "[100000, 100000]"),
    ("{op: reshape, shape: [-1, 100000000]}", "100,000,000", "[-1, 100000000]"),
])
def test_op_shape_over_the_size_limit_is_refused_at_load(step, elements, shape):
    """Regression: scatter_add allocated its shape at run time, whatever the limit."""
    e = the_error(HEAD + f"graph:\n  - {step}\n")
    assert at(e) == "model.yaml:6:5"
    assert e.message.endswith(f"would make {elements} elements (shape {shape}), over the "
                              "limit of 50,000,000")


# ---------------------------------------------------------------- all at once, rendering

MANY_ERRORS = """\
graphtool: 1
kind: statik
inputs:
  x: {random: normal, shape: [3, 4]}
graph:
  - {op: lineer, out_size: 3}
  - {op: scale, by: 1e-3}
  - {op: relu, from: y}
outputs: [z]
extra: 1
"""


def test_several_errors_are_all_reported_in_file_order():
    with pytest.raises(SpecErrors) as info:
        load_spec_text(MANY_ERRORS, file=FILE)
    errors = info.value.errors
    assert [(at(e), e.message) for e in errors] == [
        ("model.yaml:2:7", "kind must be one of static, dynamic, got 'statik'"),
        ("model.yaml:6:10", "unknown op 'lineer'"),
        ("model.yaml:7:21", "attribute 'by' of 'scale' must be a number, got '1e-3'"),
        ("model.yaml:8:22", "no value named 'y' here"),
        ("model.yaml:9:11", "outputs: no value named 'z' at the end of the graph"),
        ("model.yaml:10:1", "unknown top-level key 'extra'"),
    ]
    assert str(info.value).splitlines() == [e.headline() for e in errors]
    assert str(info.value).splitlines()[1] == (
        "model.yaml:6:10: error: unknown op 'lineer' (did you mean 'linear'?)")


def test_render_shows_the_source_line_and_a_caret_under_the_column():
    with pytest.raises(SpecErrors) as info:
        load_spec_text(MANY_ERRORS, file=FILE)
    lines = info.value.render().splitlines()
    assert lines[3:6] == [
        "model.yaml:6:10: error: unknown op 'lineer' (did you mean 'linear'?)",
        "      - {op: lineer, out_size: 3}",
        "             ^~~~~~",
    ]
    # the caret sits under the column: 4 spaces of indent, then col - 1 more
    assert lines[5].index("^") == 4 + 10 - 1
    assert lines[:3] == [
        "model.yaml:2:7: error: kind must be one of static, dynamic, got 'statik' (did you "
        "mean 'static'?)",
        "    kind: statik",
        "          ^~~~~~",
    ]


def test_override_errors_render_without_a_source_line():
    with pytest.raises(SpecErrors) as info:
        load_spec_text(SET_SPEC, file=FILE, overrides=["nope"])
    assert info.value.render() == "--set:1:1: error: --set expects params.NAME=VALUE, got 'nope'"


# ---------------------------------------------------------------- runtime errors

def test_shape_mismatch_points_at_the_failing_step():
    """Found by shape inference at load: both inputs named with their shapes."""
    e = the_error(HEAD + "graph:\n  - {op: linear, out_size: 5, to: h}\n"
                      "  - {op: add, from: [h, x]}\n")
    assert at(e) == "model.yaml:7:5"
    assert e.message.startswith("add: ")
    assert e.message == ("add: shapes (3, 5), (3, 4) do not broadcast (h is (3, 5) float32, "
                         "x is (3, 4) float32)")
    assert e.render().splitlines()[1:] == ["      - {op: add, from: [h, x]}",
                                           "        ^~~~~~~~~~~~~~~~~~~~~~~"]


def test_shape_mismatch_inside_a_loop_body_points_at_the_body_step():
    e = the_error(HEAD + "graph:\n  - repeat: 2\n    body:\n      - {op: add, from: [_, t]}\n")
    assert at(e) == "model.yaml:8:9"
    assert e.message.startswith("add: ") and e.message.endswith("(in the repeat at 6:5)")


def test_for_each_carry_that_changes_shape_points_at_the_carry():
    text = HEAD + """\
graph:
  - for_each: x
    as: row
    carry: {h: {zeros: [4]}}
    body:
      - {op: concat, from: [row, h], axis: 0}
      - {op: relu, to: h}
"""
    e = the_error(text)
    assert at(e) == "model.yaml:8:13"
    assert e.message == "carry 'h' must keep its shape (4,), but the body makes it (8,)"


def test_a_shape_only_the_data_says_is_checked_when_it_runs(tmp_path):
    """An input whose shape only its file says is unknown at load: the step is checked
    when it runs, located as before."""
    np.save(tmp_path / "x.npy", np.ones((3, 4), np.float32))
    text = ("graphtool: 1\ninputs:\n  x: {file: x.npy}\ngraph:\n"
            "  - {op: linear, out_size: 5, to: h}\n  - {op: add, from: [h, x]}\n")
    spec = load_spec_text(text, file=FILE, folder=str(tmp_path))
    with pytest.raises(SpecRuntimeError) as info:
        run(spec)
    assert at(info.value) == "model.yaml:6:5"
    assert info.value.message.startswith("add: ")


def test_nan_in_the_loss_names_the_first_step_that_produced_it():
    text = """\
graphtool: 1
inputs:
  x: {random: uniform, low: -2.0, high: -1.0, shape: [3]}
graph:
  - tanh
  - log
  - exp
loss: {op: sum}
"""
    spec = load_spec_text(text, file=FILE)
    # The engine's log is numpy's: log of negatives warns (an error under pytest's
    # filterwarnings), so the run is wrapped; the interpreter itself finds the NaN.
    with np.errstate(all="ignore"), pytest.raises(SpecRuntimeError) as info:
        run(spec)
    e = info.value
    assert at(e) == "model.yaml:6:5"
    assert e.message == "log produced NaN or Inf, which reached the loss"


def test_inf_in_the_loss_names_the_step():
    text = """\
graphtool: 1
inputs:
  x: {ones: [3]}
graph:
  - {op: scale, by: 1000.0}
  - exp
  - relu
loss: {op: sum}
"""
    spec = load_spec_text(text, file=FILE)
    with np.errstate(all="ignore"), pytest.raises(SpecRuntimeError) as info:
        run(spec)
    assert at(info.value) == "model.yaml:6:5"
    assert info.value.message == "exp produced NaN or Inf, which reached the loss"


def test_while_with_on_limit_error_hitting_max_iters():
    text = """\
graphtool: 1
inputs:
  x: {ones: [3]}
graph:
  - while: norm(_) > 0
    max_iters: 3
    on_limit: error
    body: [relu]
"""
    e = runtime_error(text)
    assert at(e) == "model.yaml:5:5"
    assert e.message == "while loop reached max_iters (3) and 'norm(_) > 0' still holds"


def test_while_with_on_limit_stop_just_stops():
    text = "graphtool: 1\ninputs:\n  x: {ones: [3]}\ngraph:\n  - while: norm(_) > 0\n" \
           "    max_iters: 3\n    body: [relu]\n"
    result, _ = run(load_spec_text(text, file=FILE))
    assert result.path[-1].detail == {"trips": 3, "limit_reached": True}


def test_loss_that_is_not_scalar():
    e = runtime_error(HEAD + "graph:\n  - relu\nloss: {op: scale, by: 2.0}\n")
    assert at(e) == "model.yaml:7:7"
    assert e.message == "the loss must be one value, got an array of shape (3, 4)"


def test_loss_of_one_element_with_several_axes_is_fine():
    """Regression: a loss of shape (1, 1) passed the one-value check, then float() of it
    raised TypeError (numpy >= 2.4)."""
    spec = load_spec_text("graphtool: 1\ninputs:\n  x: {ones: [1, 1]}\ngraph:\n"
                          "  - {op: linear, out_size: 1}\nloss: {op: stack}\n", file=FILE)
    result, _ = run(spec)
    assert isinstance(result.loss, float)


def test_layer_applied_to_a_scalar_is_a_located_error():
    """Regression: linear on a 0-d value raised a bare IndexError from inside the link."""
    e = the_error(HEAD + "graph:\n  - sum\n  - {op: linear, out_size: 2}\n")
    assert at(e) == "model.yaml:7:5"
    assert e.message.startswith("linear: ")


def test_a_value_of_several_arrays_into_a_one_input_op_is_a_located_error():
    """Regression: split_axis's pair went into scale as two inputs; backward then failed
    with a bare IndexError inside the engine."""
    e = the_error(HEAD + "graph:\n  - {op: split_axis, indices_or_sections: 2, axis: 1}\n"
                      "  - {op: scale, by: 0.5}\nloss: {op: sum}\n")
    assert at(e) == "model.yaml:7:5"
    assert e.message.startswith("scale: takes 1 input, got 2")


def test_op_that_cannot_allocate_is_a_located_error():
    """Regression: a lazily sized layer too large for memory raised a bare MemoryError.
    Each size is under the limit; the weight (40,000,000 x 1,000,000) is not, so the step is
    refused before numpy is asked for it."""
    text = ("graphtool: 1\ninputs:\n  x: {ones: [1]}\ngraph:\n"
            "  - {op: broadcast_to, shape: [1, 1000000]}\n  - {op: linear, out_size: 40000000}\n")
    spec = load_spec_text(text, file=FILE)
    with pytest.raises(SpecError) as info:
        run(spec)
    assert at(info.value) == "model.yaml:6:5"
    assert info.value.message.startswith("linear: its weight W would have 40,000,000,000,000 "
                                         "elements (shape (40000000, 1000000)), over the limit")


def test_get_item_out_of_range_is_a_located_error():
    e = the_error(HEAD + "graph:\n  - relu\n  - {op: get_item, index: 7}\n")
    assert at(e) == "model.yaml:7:5"
    assert e.message.startswith("get_item: ")


@pytest.mark.parametrize(("field", "written", "col", "message"), [
    ("to", "[1]", 9, "to must be a value name, got a list"),
    ("to", "{a: 1}", 9, "to must be a value name, got a mapping"),
    ("as", "{b: 2}", 9, "as must be a value name, got a mapping"),
])
def test_for_each_names_that_are_not_names(field, written, col, message):
    """Regression (found by the fuzz test): a list or mapping as a for_each's `to` reached
    the work limits' bookkeeping and crashed it (exit 70); a mapping as `as` was dropped
    without an error."""
    fields = {"as": "row", "to": "rows", field: written}
    text = HEAD + f"""\
graph:
  - for_each: x
    as: {fields['as']}
    body: [relu]
    collect: _
    to: {fields['to']}
"""
    e = the_error(text)
    line = 7 if field == "as" else 10
    assert (at(e), e.message) == (f"model.yaml:{line}:{col}", message)


def test_an_op_step_to_that_is_not_a_name():
    e = the_error(HEAD + "graph:\n  - {op: relu, to: {a: 1}}\n")
    assert (at(e), e.message) == ("model.yaml:6:20", "to must be a value name")


def test_a_carry_shape_cannot_name_its_leading_axis():
    """Regression (found by the fuzz test): `zeros: [abs, 12]` read `abs` as a named batch
    dimension, which a carry cannot have, and the size check then crashed on it (exit 70)."""
    text = HEAD + """\
graph:
  - for_each: x
    as: row
    carry: {h: {zeros: [abs, 12]}}
    body: [relu]
"""
    e = the_error(text)
    assert (at(e), e.message) == ("model.yaml:8:25",
                                  "carry 'h': sizes must be positive integers, got 'abs'")


# ---------------------------------------------------------------- first-contact mistakes

@pytest.mark.parametrize(("graph", "where", "line"), [
    ("graph:\n  - relu\n    - tanh\n", "model.yaml:6:5", 7),
    ("graph:\n  - relu\n   - tanh\n  - sigmoid\n", "model.yaml:6:5", 7),
    ("graph:\n  - if: mean(x) > 0\n    then:\n      - relu\n        - tanh\n",
     "model.yaml:8:9", 9),
])
def test_an_over_indented_list_item_folded_into_the_one_above_says_so(graph, where, line):
    """Regression: YAML folds `- relu` / `    - tanh` into the text 'relu - tanh', which was
    reported as an unknown op with no word about the indentation."""
    e = the_error(HEAD + graph)
    assert (at(e), e.message) == (where, "unknown op 'relu - tanh'")
    assert e.hint == (f"this reads as one text 'relu - tanh' because '- tanh' on line {line} "
                      f"is indented more than '- relu' on line {line - 1}; put list items at "
                      "the same indentation")


TRAP = "YAML 1.1 reads 1e-2 as text, not a number; write 1.0e-2"


@pytest.mark.parametrize(("text", "where", "message"), [
    # optimizer hyperparameters and train settings
    (HEAD + "graph: [relu]\ntrain: {optimizer: {name: adam, alpha: 1e-2}}\n",
     "model.yaml:6:40", "alpha must be a non-negative number, got '1e-2'"),
    (HEAD + "graph: [relu]\ntrain: {lr: 1e-2}\n", "model.yaml:6:13",
     "lr must be a positive number, got '1e-2'"),
    (HEAD + "graph: [relu]\ntrain: {epochs: 1e-2}\n", "model.yaml:6:17",
     "epochs must be an integer, got '1e-2'"),
    # op attributes, and a param that an attribute reads
    (HEAD + "graph:\n  - {op: leaky_relu, slope: 1e-2}\n", "model.yaml:6:29",
     "attribute 'slope' of 'leaky_relu' must be a number, got '1e-2'"),
    (HEAD + "params: {slope: 1e-2}\ngraph:\n  - {op: leaky_relu, slope: $params.slope}\n",
     "model.yaml:7:29", "attribute 'slope' of 'leaky_relu' must be a number, got '1e-2' "
                        "(from params.slope)"),
    (HEAD + "graph:\n  - {op: max_pooling_2d, ksize: [2, 1e-2]}\n", "model.yaml:6:33",
     "attribute 'ksize' of 'max_pooling_2d' must hold numbers, got a list"),
    # inputs, control flow
    ("graphtool: 1\ninputs:\n  x: {random: uniform, low: 1e-2, shape: [3]}\ngraph: [relu]\n",
     "model.yaml:3:29", "low must be a number, got '1e-2'"),
    (HEAD + "graph:\n  - repeat: 1e-2\n    body: [relu]\n", "model.yaml:6:13",
     "repeat must be an integer, got '1e-2'"),
    (HEAD + "graph: [relu]\ndata: {file: d.csv, y: {column: a}}\nvalidation: 1e-2\n",
     "model.yaml:7:13", "validation must be a fraction in (0, 1) or {file: PATH}, got '1e-2'"),
])
def test_the_yaml_1_1_number_hint_applies_wherever_a_number_is_expected(text, where, message):
    """Regression: the hint that `1e-2` is text in YAML 1.1 was given by a few checks only;
    an optimizer's `alpha: 1e-2` got none. One mechanism (the loader's `error`) now adds a
    value's trap hint to any error about it."""
    e = the_error(text)
    assert (at(e), e.message, e.hint) == (where, message, TRAP)


@pytest.mark.parametrize(("train", "where", "message", "hint"), [
    ("{metrics: [accuracy, acc]}", "model.yaml:6:29",
     "unknown metric 'acc'; choose from accuracy, mse, mae, precision, recall, "
     "f1, auc, r2, confusion", "did you mean 'accuracy'?"),
    ("{optimizer: SGD}", "model.yaml:6:20", "unknown optimizer 'SGD'; choose from sgd, "
     "momentum, momentum_sgd, nesterov, adagrad, rmsprop, adadelta, adam",
     "did you mean 'sgd'?"),
    ("{metrics: [accuracy], early_stopping: {metric: val_acc}}", "model.yaml:6:55",
     "early_stopping metric 'val_acc' is not reported; choose from loss, accuracy, "
     "validation_loss, validation_accuracy", "did you mean 'validation_accuracy'?"),
    ("{early_stopping: {mode: Max}}", "model.yaml:6:32",
     "mode must be one of auto, min, max, got 'Max'", "did you mean 'max'?"),
    ("{optimizer: {name: momentum, momentun: 0.9}}", "model.yaml:6:37",
     "optimizer momentum has no hyperparameter 'momentun' (it takes lr, momentum)",
     "did you mean 'momentum'?"),
    ("{learning_rate: 0.1}", "model.yaml:6:9", "train: unknown key 'learning_rate'",
     "did you mean 'lr'?"),
    ("{batch: 8}", "model.yaml:6:9", "train: unknown key 'batch'",
     "did you mean 'batch_size'?"),
])
def test_closed_sets_of_names_in_train_get_did_you_mean(train, where, message, hint):
    """Regression: `metrics: [acc]`, `SGD` and `val_acc` got no suggestion (abbreviations and
    other cases were not matched), and the metric error pointed at the whole list."""
    e = the_error(HEAD + f"graph: [relu]\ntrain: {train}\n")
    assert (at(e), e.message, e.hint) == (where, message, hint)


@pytest.mark.parametrize(("column", "where", "message", "hint"), [
    ("{column: a, dtype: in32}", "model.yaml:8:25",
     "dtype must be one of float16, float32, float64, int32, int64, bool, got 'in32'",
     "did you mean 'int32'?"),
    ("[a, b]", "model.yaml:8:6", "data input 'y' must be a mapping such as {column: label} "
     "or {key: images}", "write y: {columns: [a, b]}"),
    ("label", "model.yaml:8:6", "data input 'y' must be a mapping such as {column: label} "
     "or {key: images}", "write y: {column: label}"),
    ("{columns: a}", "model.yaml:8:16", "columns must be a list of column names",
     "for one column write column: a"),
])
def test_data_column_mistakes_get_a_hint(column, where, message, hint):
    e = the_error(HEAD + f"graph: [relu]\ndata:\n  file: d.csv\n  y: {column}\n")
    assert (at(e), e.message, e.hint) == (where, message, hint)


def test_validation_given_as_a_percentage_gets_the_fraction():
    e = the_error(HEAD + "graph: [relu]\ndata: {file: d.csv, y: {column: a}}\n"
                  "validation: 20%\n")
    assert (at(e), e.hint) == ("model.yaml:7:13", "write 0.2 for 20%")


@pytest.mark.parametrize(("graph", "where", "message", "hint"), [
    ("graph:\n  relu: {}\n", "model.yaml:6:3", "graph must be a list of steps",
     "write each step on its own line, starting with '- ': '- relu' or '- {op: linear, "
     "out_size: 4}'"),
    ("graph:\n  -relu\n  -tanh\n", "model.yaml:6:3", "graph must be a list of steps",
     "a list item needs a space after '-': '- relu'"),
    ("graph:\n  - {op:relu}\n", "model.yaml:6:5",
     "a step needs exactly one of op, if, repeat, while, for_each (found none)",
     "YAML reads 'op:relu' as one text: a key needs a space after its ':' (op: relu)"),
    ("graph:\n  - linear: {out_size: 3}\n", "model.yaml:6:5",
     "a step needs exactly one of op, if, repeat, while, for_each (found none)",
     "write the op's name under op: and its attributes beside it: {op: linear, ...}"),
])
def test_a_graph_written_the_wrong_way_says_how_to_write_it(graph, where, message, hint):
    e = the_error(HEAD + graph)
    assert (at(e), e.message, e.hint) == (where, message, hint)


def test_a_step_key_left_at_the_top_level_names_its_step():
    """Regression: `then:` at column 1 under `- if:` was only an unknown top-level key."""
    errors = errors_of(HEAD + "graph:\n  - if: mean(x) > 0\nthen: [relu]\n")
    assert [(at(e), e.message, e.hint) for e in errors] == [
        ("model.yaml:6:5", "if needs 'then' (a list of steps)", None),
        ("model.yaml:7:1", "unknown top-level key 'then'",
         "'then' belongs to the if step on line 6: indent it 4 spaces, like 'if:'"),
    ]


def test_y_gets_its_hint_only_where_a_boolean_is_wanted():
    """`y` is text to PyYAML, what was meant where text is wanted; where a boolean is
    wanted, the hint says YAML 1.1 defines it as one."""
    e = the_error(HEAD + "graph:\n  - {op: relu, from: y}\n")
    assert (e.message, e.hint) == ("no value named 'y' here", None)
    e = the_error(HEAD + "graph:\n  - repeat: 2\n    unroll: y\n    body: [relu]\n")
    assert e.message == "unroll must be true or false, got 'y'"
    assert e.hint.startswith("y is read as text here, but YAML 1.1 defines it as a boolean")
