"""The predicate language of specs (``graphcore/language/predicate/``).

- parsing: precedence, canonical text, flat chains, names and functions read;
- evaluation: scalars, numpy arrays, Variables, params given flat or nested, short-circuit;
- every error with its exact column (and length where it matters): tokens, grammar,
  non-chained comparisons, dotted names, unknown functions and names (did-you-mean), limits,
  types, division by zero, non-scalar results; the mapping to a ``SpecError`` file position;
- properties (hypothesis): any text or token soup gives a Predicate or a PredicateError, never
  another exception; canonical text round-trips; random number expressions agree with a tiny
  independent evaluator written below.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import re
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from graphcore import Variable
from graphcore.errors import SpecError
from graphcore.language import predicate as predicate_module
from graphcore.language.predicate import (
    MAX_DEPTH,
    MAX_LENGTH,
    Arithmetic,
    Compare,
    Logical,
    Name,
    Negate,
    Not,
    Number,
    Predicate,
    PredicateError,
    parse_predicate,
    to_spec_error,
)

ENV = {
    "x": np.array([1.0, -2.0, 3.0]),
    "m": np.arange(6.0).reshape(2, 3),
    "one": np.array([0.5]),
    "e": np.zeros(0),
    "mask": np.array([True, False, True, True]),
    "n": 2,
    "f": 0.25,
    "flag": True,
    "act": "tanh",
    "params.hidden": 5,
    "params.act": "relu",
    "loop.i": 3,
}


def error_of(text: str, env: dict | None = None) -> PredicateError:
    with pytest.raises(PredicateError) as info:
        predicate = parse_predicate(text)
        if env is not None:
            predicate.evaluate_bool(env)
    return info.value


# ---------------------------------------------------------------------------------- parsing

@pytest.mark.parametrize("text, canonical", [
    ("1", "1"),
    ("  42  ", "42"),
    ("1e-3", "0.001"),
    ("2.5E+2", "250.0"),
    (".5", "0.5"),
    ("0", "0"),
    ("0.25", "0.25"),
    ("true", "true"),
    ("false", "false"),
    ('"tanh"', "'tanh'"),
    ("'it\\'s'", "'it\\'s'"),
    ('"a\\\\b"', "'a\\\\b'"),
    ('"say \\"hi\\""', "'say \"hi\"'"),
    ("x", "x"),
    ("_", "_"),
    ("params.hidden", "params.hidden"),
    ("loop.i+loop.t", "loop.i + loop.t"),
    ("1+2*3", "1 + 2 * 3"),
    ("(1+2)*3", "(1 + 2) * 3"),
    ("1-(2-3)", "1 - (2 - 3)"),
    ("(1-2)-3", "1 - 2 - 3"),
    ("-x*2", "-x * 2"),
    ("-(x*2)", "-(x * 2)"),
    ("- -x", "--x"),
    ("2 - -3", "2 - -3"),
    ("a % b / c", "a % b / c"),
    ("not a == b", "not a == b"),
    ("(not a) == b", "(not a) == b"),
    ("not not a", "not not a"),
    ("a or b and c", "a or b and c"),
    ("(a or b) and c", "(a or b) and c"),
    ("not (a or b)", "not (a or b)"),
    ("a and (b and c)", "a and (b and c)"),
    ("(a < b) < c", "(a < b) < c"),
    ("mean( x )>0", "mean(x) > 0"),
    ("norm(_) > 1.0", "norm(_) > 1.0"),
    ("abs(-x)", "abs(-x)"),
    ("sum((x))", "sum(x)"),
    ("params.act=='tanh' or size(x)>=3", "params.act == 'tanh' or size(x) >= 3"),
    ("a\t<=\nb", "a <= b"),
])
def test_canonical_text(text, canonical):
    predicate = parse_predicate(text)
    assert str(predicate) == canonical
    assert predicate.text == text
    assert parse_predicate(canonical) == predicate


def test_precedence_builds_the_expected_tree():
    root = parse_predicate("not a + b * -c < 2 or d").root
    assert isinstance(root, Logical) and root.op == "or"
    inner = root.operands[0]
    assert isinstance(inner, Not) and isinstance(inner.operand, Compare)
    add = inner.operand.left
    assert isinstance(add, Arithmetic) and [s.op for s in add.steps] == ["+"]
    product = add.steps[0].operand
    assert isinstance(product, Arithmetic) and isinstance(product.steps[0].operand, Negate)


def test_same_level_chains_are_flat_and_keep_their_columns():
    root = parse_predicate("a + b - c + d").root
    assert isinstance(root, Arithmetic)
    assert [(s.op, s.column) for s in root.steps] == [("+", 3), ("-", 7), ("+", 11)]
    assert root.depth == 1
    logical = parse_predicate("a and b and c").root
    assert isinstance(logical, Logical) and len(logical.operands) == 3
    assert logical.op_columns == (3, 9)


def test_nodes_record_their_span_and_are_small_immutable_values():
    root = parse_predicate("  mean(x + 1) > 0").root
    assert (root.column, root.length, root.op_column) == (3, 15, 15)
    call = root.left
    assert (call.column, call.length) == (3, 11)
    assert isinstance(root.right, Number) and root.right.column == 17
    with pytest.raises(dataclasses.FrozenInstanceError):
        root.op = "<"
    assert not hasattr(root, "__dict__")
    assert Name("x", column=1) == Name("x", column=9)  # positions do not take part in equality


def test_predicates_compare_by_tree_and_show_their_text():
    assert parse_predicate("(a)+(b)") == parse_predicate("a + b")
    assert parse_predicate("a + b") != parse_predicate("b + a")
    assert hash(parse_predicate("a+b")) == hash(parse_predicate("a + b"))
    assert repr(parse_predicate("a+b")) == "Predicate('a+b')"


def test_names_functions_and_uses_only():
    predicate = parse_predicate("mean(x) > params.k and loop.i < len(_) or params.act == 'a'")
    assert predicate.names() == {"x", "params.k", "loop.i", "_", "params.act"}
    assert predicate.functions() == {"mean", "len"}
    assert not predicate.uses_only("params")
    assert predicate.uses_only(["params", "loop", "x", "_"])
    only_params = parse_predicate("params.apply_relu and params.k > 2")
    assert only_params.uses_only("params") and only_params.uses_only(("params.",))
    assert not parse_predicate("params_x").uses_only("params")
    assert parse_predicate("1 < 2").uses_only(())


# ------------------------------------------------------------------------------- evaluation

@pytest.mark.parametrize("text, expected", [
    ("1 + 2 * 3", 7),
    ("7 / 2", 3.5),
    ("7 % 3", 1),
    ("-7 % 3", 2),  # the sign of the divisor, as in Python and numpy
    ("2 - 3 - 4", -5),
    ("1e-3 * 1000", 1.0),
    ("true + true", 2),
    ("-flag", -1),
    ("mean(x)", 2 / 3),
    ("sum(x)", 2.0),
    ("min(x)", -2.0),
    ("max(m)", 5.0),
    ("std(x)", float(np.std([1.0, -2.0, 3.0]))),
    ("norm(x)", math.sqrt(14.0)),
    ("sum(abs(x))", 6.0),
    ("abs(-n)", 2),
    ("size(m)", 6),
    ("len(m)", 2),
    ("dim(m)", 2),
    ("dim(n)", 0),
    ("size(n)", 1),
    ("sum(mask)", 3),
    ("mean(mask)", 0.75),
    ("sum(x > 0)", 2),
    ("sum(m * 2 - 1)", 24.0),
    ("mean(x) > 0", True),
    ("n == 2.0", True),
    ("act == 'tanh'", True),
    ("act != \"tanh\"", False),
    ("'abc' < 'abd'", True),
    ("params.hidden * 2", 10),
    ("params.act == 'relu' and loop.i >= 3", True),
    ("one", 0.5),
    ("one * 4 + 1", 3.0),
    ("one / 0", math.inf),  # numpy semantics for arrays
    ("sum(e)", 0.0),
    ("norm(e)", 0.0),
    ("len(e)", 0),
    ("not n", False),
    ("not 0.0", True),
    ("1 < 2 and 2 < 3", True),
    ("(1 < 2) < 2", True),
    ("f * 4 == 1", True),
])
def test_evaluate(text, expected):
    value = parse_predicate(text).evaluate(ENV)
    assert value == pytest.approx(expected)
    assert type(value) is type(expected)


def test_evaluate_bool_gives_python_bools():
    assert parse_predicate("n").evaluate_bool(ENV) is True
    assert parse_predicate("0.0").evaluate_bool(ENV) is False
    assert parse_predicate("one").evaluate_bool(ENV) is True
    assert parse_predicate("sum(e)").evaluate_bool(ENV) is False
    assert parse_predicate("np_bool").evaluate_bool({"np_bool": np.bool_(True)}) is True


def test_and_or_short_circuit():
    assert parse_predicate("false and undefined > 0").evaluate_bool({}) is False
    assert parse_predicate("true or 1 / 0").evaluate_bool({}) is True
    assert parse_predicate("n > 5 and size(x) < 1 / 0").evaluate_bool(ENV) is False
    with pytest.raises(PredicateError):
        parse_predicate("true and undefined").evaluate_bool({})


def test_values_from_variables_numpy_scalars_and_lists():
    env = {"h": Variable(np.array([3.0, 4.0])), "s": np.float32(2.5), "l": [1, 2, 3]}
    assert parse_predicate("norm(h) == 5").evaluate(env) is True
    assert parse_predicate("s * 2").evaluate(env) == 5.0
    assert parse_predicate("sum(l)").evaluate(env) == 6


def test_params_and_loop_may_be_nested_mappings():
    env = {"params": {"act": "tanh", "k": 3}, "loop": {"i": 2, "t": 0}}
    assert parse_predicate("params.act == 'tanh' and params.k + loop.i == 5").evaluate(env)
    err = error_of("params.kk > 0", env)
    assert (err.column, err.length, err.hint) == (1, 9, "did you mean 'params.k'?")


def test_array_arithmetic_is_numpy_and_silent():
    env = {"z": np.array([0.0, 1.0]), "i": np.array([3, 4])}
    assert parse_predicate("sum(z / 0 > 1)").evaluate(env) == 1  # nan, inf: no warning
    assert parse_predicate("sum(i % 0)").evaluate(env) == 0
    assert parse_predicate("max(-mask)").evaluate(ENV) == 0  # booleans count as 0 and 1


# ----------------------------------------------------------------------------------- errors

@pytest.mark.parametrize("text, column, length, message, hint", [
    # tokens
    ("x > 010", 5, 3, "leading zero", "write 10"),
    ("00.5", 1, 4, "leading zero", "write 0.5"),
    ("1. + x", 1, 2, "expected a digit after '.'", "write 1.0"),
    ("x + 1e", 5, 2, "no exponent digits", "1e-3"),
    ("1e+ 3", 1, 3, "no exponent digits", None),
    ("1_000", 1, 5, "invalid number '1_000'", "separators"),
    ("a + 1.2.3", 5, 5, "invalid number '1.2.3'", None),
    ("2x", 1, 2, "invalid number '2x'", None),
    ("1e999 > x", 1, 5, "too large", None),
    ("act == 'tanh", 8, 5, "unterminated string", None),
    ("'a\\nb'", 3, 2, "unsupported escape '\\n'", "only escapes"),
    ("'a\\", 1, 3, "unterminated string", None),
    ("x = 1", 3, 1, "unexpected character '='", "'=='"),
    ("!x", 1, 1, "unexpected character '!'", "'not'"),
    ("a && b", 3, 2, "unexpected '&&'", "'and'"),
    ("a || b", 3, 2, "unexpected '||'", "'or'"),
    ("a ** 2", 3, 2, "unexpected '**'", "power"),
    ("a // 2", 3, 2, "unexpected '//'", None),
    ("x[0]", 2, 1, "unexpected character '['", "indexing"),
    ("x @ y", 3, 1, "unexpected character '@'", None),
    ("x ≥ 1", 3, 1, "unexpected character '≥'", None),
    ("True", 1, 4, "unknown name 'True'", "write 'true'"),
    # dotted names
    ("x.shape > 1", 2, 6, "attribute access is not allowed: 'x.shape'", "params.NAME"),
    ("1 + params.a.b", 13, 2, "attribute access is not allowed: 'params.a.b'", None),
    ("mean(x).y", 8, 1, "unexpected character '.'", None),
    ("params > 1", 1, 6, "'params' must be followed by a field", None),
    ("loop", 1, 4, "'loop' must be followed by a field: loop.i or loop.t", None),
    ("params. k", 8, 1, "expected a name after 'params.'", None),
    ("params.1", 8, 1, "expected a name after 'params.'", None),
    ("loop.k < 3", 6, 1, "unknown loop variable 'loop.k'", None),
    ("loop.idx < 3", 6, 3, "unknown loop variable 'loop.idx'", "did you mean 'loop.i'?"),
    # grammar
    ("", 1, 1, "empty predicate", None),
    ("   ", 1, 3, "empty predicate", None),
    ("1 +", 4, 1, "unexpected end of predicate", None),
    ("1 +   ", 4, 1, "unexpected end of predicate", None),
    ("and x", 1, 3, "expected a value, got 'and'", None),
    ("x * * y", 5, 1, "expected a value, got '*'", None),
    ("+x", 1, 1, "expected a value, got '+'", None),
    ("1 2", 3, 1, "unexpected '2' after a complete expression", None),
    ("(1 + 2", 1, 1, "'(' is never closed", None),
    ("mean(x", 5, 1, "'(' is never closed", None),
    ("(1 2)", 4, 1, "expected ')', got '2'", None),
    ("1 + 2)", 6, 1, "unmatched ')'", None),
    ("()", 2, 1, "expected a value, got ')'", None),
    ("a < b < c", 7, 1, "comparisons cannot be chained", "and"),
    ("a == b != c", 8, 2, "comparisons cannot be chained", None),
    ("not a <= b >= c", 12, 2, "comparisons cannot be chained", None),
    ("x and a < b < c", 13, 1, "comparisons cannot be chained", None),
    ("a == not b", 6, 3, "'not' cannot appear here", "(not"),
    ("-not a", 2, 3, "'not' cannot appear here", None),
    # functions
    ("maen(x) > 0", 1, 4, "unknown function 'maen'", "did you mean 'mean'?"),
    ("x > nrom(x)", 5, 4, "unknown function 'nrom'", "did you mean 'norm'?"),
    ("foo(x)", 1, 3, "unknown function 'foo'", "functions: mean, sum"),
    ("params.f(1)", 1, 8, "unknown function 'params.f'", None),
    ("min(a, b) > 0", 1, 9, "'min' takes exactly one argument, got 2", None),
    ("1 + mean()", 5, 6, "'mean' takes exactly one argument, got 0", None),
    ("mean(x,)", 8, 1, "expected a value, got ')'", None),
])
def test_parse_errors_are_located(text, column, length, message, hint):
    err = error_of(text)
    assert (err.column, err.length) == (column, length), err
    assert message in err.message
    if hint is not None:
        assert err.hint is not None and hint in err.hint
    assert str(err).startswith(f"column {column}: ")


@pytest.mark.parametrize("text, column, length, message, hint", [
    ("xx > 0", 1, 2, "undefined name 'xx'", "did you mean 'x'?"),
    ("mean(x) > treshold", 11, 8, "undefined name 'treshold'", None),
    ("params.hiden > 1", 1, 12, "undefined name 'params.hiden'", "did you mean 'params.hidden'?"),
    ("loop.t > 1", 1, 6, "undefined name 'loop.t'", "did you mean 'loop.i'?"),
    ("act + 1", 5, 1, "'+' needs numbers, got a string and a number", None),
    ("n * act", 3, 1, "'*' needs numbers, got a number and a string", None),
    ("x == act", 3, 2, "cannot compare an array of shape (3,) with a string", None),
    ("'a' < 1", 5, 1, "cannot compare a string with a number", None),
    ("-act", 1, 1, "'-' needs a number, got a string", None),
    ("n > 0 and not act", 11, 3, "'not' needs a boolean or a number, got a string", None),
    ("act or n", 5, 2, "'or' needs a boolean or a number, got a string", None),
    ("n > 0 and x", 7, 3, "'and' needs one value, got an array of shape (3,)", None),
    ("1 + mean(act)", 5, 4, "'mean' needs a number or an array, got a string", None),
    ("n / 0", 3, 1, "division by zero", None),
    ("f % 0.0 > 1", 3, 1, "modulo by zero", None),
    ("1 + sum(x) / (n - 2)", 12, 1, "division by zero", None),
    ("sum(x + e)", 7, 1, "cannot combine shapes (3,) and (0,)", None),
    ("sum(x) > 0 and sum(m == mask)", 22, 2, "cannot combine shapes (2, 3) and (4,)", None),
    ("len(n)", 1, 3, "'len' needs an array, got a scalar", "size"),
    ("min(e) > 0", 1, 3, "'min' of an empty array", None),
    ("mean(e)", 1, 4, "'mean' of an empty array", None),
    ("x > 0", 1, 5, "predicate must give one value, got an array of shape (3,)", None),
    ("abs(m)", 1, 6, "predicate must give one value, got an array of shape (2, 3)", None),
    ("act", 1, 3, "predicate must give a boolean or a number, got a string", None),
    ("one / 0 - one / 0", 1, 17, "NaN", None),
    ("huge * 1.5", 6, 1, "too large", None),
    ("none_value", 1, 10, "'none_value' holds a NoneType", None),
    ("words", 1, 5, "holds an array of dtype <U1", None),
    ("freed", 1, 5, "'freed' has no value", None),
])
def test_evaluation_errors_are_located(text, column, length, message, hint):
    env = {**ENV, "huge": 10**400, "none_value": None, "words": np.array(["a"]),
           "freed": Variable(None)}
    err = error_of(text, env)
    assert (err.column, err.length) == (column, length), err
    assert message in err.message, err
    if hint is not None:
        assert err.hint is not None and hint in err.hint


def test_undefined_name_without_close_match_has_no_hint():
    err = error_of("zzzzzz > 1", ENV)
    assert err.hint is None and err.column == 1


def test_errors_are_graphcore_value_errors():
    err = error_of("1 +")
    from graphcore.errors import GraphcoreError
    assert isinstance(err, GraphcoreError) and isinstance(err, ValueError)


def test_non_string_input_is_a_type_error():
    with pytest.raises(TypeError):
        parse_predicate(True)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------- limits

def test_length_limit():
    longest = "1" + " + 1" * ((MAX_LENGTH - 1) // 4)
    assert len(longest) <= MAX_LENGTH
    assert parse_predicate(longest).evaluate({}) == (MAX_LENGTH - 1) // 4 + 1
    err = error_of("x" * (MAX_LENGTH + 7))
    assert (err.column, err.length) == (MAX_LENGTH + 1, 7)
    assert "too long" in err.message


@pytest.mark.parametrize("make", [
    lambda k: "(" * k + "1" + ")" * k,
    lambda k: "-" * k + "1",
    lambda k: "not " * k + "true",
    lambda k: "abs(" * k + "1" + ")" * k,
    lambda k: "1" + " + (1" * k + ")" * k,  # tree depth: each '+' opens a new level
    lambda k: "1" + " < (1" * k + ")" * k,
])
def test_depth_limit(make):
    parse_predicate(make(MAX_DEPTH))
    err = error_of(make(MAX_DEPTH + 1))
    assert "nested too deeply" in err.message


def test_depth_error_points_at_the_first_level_too_many():
    err = error_of("(" * 40 + "1" + ")" * 40)
    assert err.column == MAX_DEPTH + 1
    err = error_of("-" * 40 + "x")
    assert err.column == MAX_DEPTH + 1


def test_long_flat_chains_are_not_deep():
    text = " and ".join(["x > 0"] * 40)
    assert len(text) < MAX_LENGTH
    predicate = parse_predicate(text)
    assert predicate.root.depth == 2
    assert predicate.evaluate_bool({"x": 1}) is True


@pytest.mark.parametrize("text", [
    "(" * MAX_LENGTH, ")" * MAX_LENGTH, "-" * MAX_LENGTH, "not " * (MAX_LENGTH // 4),
    "mean(" * (MAX_LENGTH // 5), "'" * MAX_LENGTH, "1." * (MAX_LENGTH // 2),
    "x." * (MAX_LENGTH // 2), "\\" * MAX_LENGTH, "a<" * (MAX_LENGTH // 2),
    ",(" * (MAX_LENGTH // 2), "9" * (MAX_LENGTH - 4) + "*1.0", "9" * (MAX_LENGTH - 2) + "/3",
])
def test_pathological_inputs_give_predicate_errors(text):
    with pytest.raises(PredicateError):
        parse_predicate(text).evaluate({})


# ----------------------------------------------------------------------- mapping to the spec

def test_to_spec_error_maps_the_column_into_the_file():
    source_line = "  - if: mean(x) > treshold"
    start = source_line.index("mean") + 1
    err = error_of("mean(x) > treshold", {"x": np.ones(2), "threshold": 0.5})
    spec_error = to_spec_error(err, "model.yaml", 12, start, source_line)
    assert isinstance(spec_error, SpecError)
    assert (spec_error.file, spec_error.line, spec_error.col) == ("model.yaml", 12, 19)
    assert spec_error.length == len("treshold")
    assert spec_error.hint == "did you mean 'threshold'?"
    assert spec_error.headline() == ("model.yaml:12:19: error: undefined name 'treshold' "
                                     "(did you mean 'threshold'?)")
    caret_line = spec_error.render().splitlines()[-1]
    assert caret_line == "    " + " " * 18 + "^~~~~~~~"
    assert source_line[spec_error.col - 1:][:spec_error.length] == "treshold"


def test_to_spec_error_from_a_parse_error():
    err = error_of("a < b < c")
    spec_error = to_spec_error(err, "s.yaml", 3, 11, None)
    assert (spec_error.line, spec_error.col, spec_error.length) == (3, 17, 1)


# ------------------------------------------------------------------------------- the module

def test_module_evaluates_nothing_and_looks_up_no_attributes():
    source = Path(predicate_module.__file__).read_text()
    forbidden = re.compile(r"(?<![\w.])(eval|exec|compile|getattr|setattr|__import__)\(|"
                           r"import ast|from ast|importlib")
    assert forbidden.search(source) is None


# ------------------------------------------------------------------------------- properties

FAST = settings(max_examples=150, deadline=timedelta(milliseconds=500), database=None)

TOKENS = [
    "0", "1", "7", "2.5", "1e-3", ".5", "010", "1.", "1e", "'a'", '"b"', "'", '"', "x", "y",
    "_", "s", "params.k", "params.s", "params", "loop.i", "loop.t", "loop.q", "loop", "x.y",
    "true", "false", "True", "and", "or", "not", "+", "-", "*", "/", "%", "==", "!=", "<",
    "<=", ">", ">=", "=", "!", "**", "(", ")", "(", ")", ",", ".", "\\", "[", "mean", "sum",
    "min", "max", "std", "norm", "abs", "size", "len", "dim", "maen", "é",
]
TOKEN_ENV = {
    "x": np.array([1.0, -2.0, 3.0]), "y": 2, "_": np.array([0.5]), "s": "tanh",
    "params": {"k": 3, "s": "relu"}, "loop.i": 1, "loop.t": 0,
}


def check_error(err: PredicateError, text: str) -> None:
    assert 1 <= err.column <= len(text) + 1
    assert err.length >= 1
    assert err.message


@FAST
@given(st.one_of(st.text(max_size=60),
                 st.text(alphabet="01234567899.eE+-*/%<>=!()'\"\\ xyzandornt_.,", max_size=60)))
def test_any_text_parses_or_gives_a_predicate_error(text):
    try:
        predicate = parse_predicate(text)
    except PredicateError as err:
        check_error(err, text)
        return
    assert parse_predicate(str(predicate)) == predicate


@FAST
@given(st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(["", " "])), max_size=30))
def test_token_soup_parses_and_evaluates_or_gives_a_predicate_error(pieces):
    text = "".join(token + space for token, space in pieces)
    try:
        predicate = parse_predicate(text)
    except PredicateError as err:
        check_error(err, text)
        return
    canonical = str(predicate)
    again = parse_predicate(canonical)
    assert again == predicate and str(again) == canonical
    try:
        value = predicate.evaluate(TOKEN_ENV)
    except PredicateError as err:
        check_error(err, text)
        return
    assert isinstance(value, (bool, int, float, str))


# A tiny independent evaluator over tuples; the generated text is fully parenthesized, so it
# tests the parser's grammar and the evaluator's semantics, while the canonical round trip
# tests minimal parenthesization.

class Undefined(Exception):
    """The reference says the expression has no value (division by zero, NaN as a truth)."""


LITERALS = [("0", 0), ("1", 1), ("2", 2), ("3", 3), ("9", 9), ("0.5", 0.5), ("1e-3", 0.001),
            ("2.5e2", 250.0), (".25", 0.25), ("0.1", 0.1), ("true", True), ("false", False)]
ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul,
              "/": operator.truediv, "%": operator.mod}
COMPARISONS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
               ">": operator.gt, ">=": operator.ge}
SCALAR_FUNCTIONS = ["mean", "sum", "min", "max", "std", "norm", "abs", "size", "dim"]


def as_number(value):
    return int(value) if isinstance(value, bool) else value


def truth(value):
    if isinstance(value, float) and math.isnan(value):
        raise Undefined
    return bool(value)


def reference(tree):
    kind = tree[0]
    if kind == "literal":
        return tree[2]
    if kind == "neg":
        return -as_number(reference(tree[1]))
    if kind == "not":
        return not truth(reference(tree[1]))
    if kind == "call":
        value = as_number(reference(tree[2]))
        return {"mean": float(value), "sum": value, "min": value, "max": value, "std": 0.0,
                "norm": math.sqrt(float(value) * float(value)), "abs": abs(value),
                "size": 1, "dim": 0}[tree[1]]
    op, left = tree[1], reference(tree[2])
    if kind == "logic":
        if truth(left) == (op == "or"):
            return op == "or"
        return truth(reference(tree[3]))
    right = reference(tree[3])
    if kind == "compare":
        return COMPARISONS[op](left, right)
    a, b = as_number(left), as_number(right)
    if op in "/%" and b == 0:
        raise Undefined
    return ARITHMETIC[op](a, b)


def render(tree):
    kind = tree[0]
    if kind == "literal":
        return tree[1]
    if kind == "neg":
        return f"(-{render(tree[1])})"
    if kind == "not":
        return f"(not {render(tree[1])})"
    if kind == "call":
        return f"{tree[1]}( {render(tree[2])} )"
    return f"({render(tree[2])} {tree[1]} {render(tree[3])})"


def depth(tree):
    children = [part for part in tree if isinstance(part, tuple)]
    return 1 + max((depth(child) for child in children), default=0)


def extend(inner):
    return st.one_of(
        st.tuples(st.just("neg"), inner),
        st.tuples(st.just("not"), inner),
        st.tuples(st.just("call"), st.sampled_from(SCALAR_FUNCTIONS), inner),
        st.tuples(st.just("arith"), st.sampled_from(sorted(ARITHMETIC)), inner, inner),
        st.tuples(st.just("compare"), st.sampled_from(sorted(COMPARISONS)), inner, inner),
        st.tuples(st.just("logic"), st.sampled_from(["and", "or"]), inner, inner),
    )


EXPRESSIONS = st.recursive(
    st.sampled_from(LITERALS).map(lambda literal: ("literal", *literal)), extend,
    max_leaves=12)


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


@FAST
@given(EXPRESSIONS)
def test_number_expressions_agree_with_a_reference_evaluator(tree):
    assume(depth(tree) <= 12)
    text = render(tree)
    assume(len(text) <= MAX_LENGTH)
    predicate = parse_predicate(text)
    try:
        expected = reference(tree)
    except Undefined:
        with pytest.raises(PredicateError):
            predicate.evaluate({})
        return
    assert same(predicate.evaluate({}), expected), text
    canonical = parse_predicate(str(predicate))
    assert canonical == predicate
    assert same(canonical.evaluate({}), expected), str(predicate)


def test_predicate_is_a_dataclass_with_slots():
    assert dataclasses.is_dataclass(Predicate)
    assert not hasattr(parse_predicate("1"), "__dict__")
