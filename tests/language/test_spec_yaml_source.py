"""graphcore.language.yaml_source: YAML text -> located values, safely (DESIGN sections 4 and 8)."""


import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from time_limits import time_limit

from graphcore.errors import SpecError, SpecErrors
from graphcore.language import yaml_source
from graphcore.language.yaml_source import (
    MAX_BYTES,
    MAX_DEPTH,
    LMap,
    Loc,
    LScalar,
    LSeq,
    SourceText,
    error_at,
    load_yaml,
    load_yaml_file,
    trap_hint,
)

SAMPLE = """\
graphtool: 1
name: seed_static
params: {hidden: 5, apply_relu: true}
inputs:
  x: {random: uniform, shape: [3, 4]}
  t: {random: randint, low: 0, high: 2, shape: [3]}
graph:
  - {op: linear, out_size: $params.hidden, name: l1}
  - relu
  - {op: linear, out_size: 2, name: l2, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
outputs: [logits]   # values to report
note: "a quoted
  value"
"""


def errors_of(text: str) -> list[tuple[int, int, str]]:
    with pytest.raises(SpecErrors) as info:
        load_yaml(text, "m.yaml")
    return [(e.line, e.col, e.message) for e in info.value.errors]


def only_error(text: str) -> SpecError:
    with pytest.raises(SpecErrors) as info:
        load_yaml(text, "m.yaml")
    assert len(info.value.errors) == 1, info.value.render()
    return info.value.errors[0]


# ---------------------------------------------------------------- locations and values

def test_sample_loads_like_safe_load_in_file_order():
    spec = load_yaml(SAMPLE, "m.yaml")
    assert isinstance(spec, LMap)
    assert spec.to_python() == yaml.safe_load(SAMPLE)
    assert list(spec) == ["graphtool", "name", "params", "inputs", "graph", "loss", "outputs",
                          "note"]
    assert spec.get("missing") is None
    assert "graph" in spec and len(spec) == 8


def test_key_and_value_locations():
    spec = load_yaml(SAMPLE, "m.yaml")
    assert spec.loc == Loc("m.yaml", 1, 1, 1)
    assert spec.key_loc("graphtool") == Loc("m.yaml", 1, 1, 9)
    assert spec["graphtool"].loc == Loc("m.yaml", 1, 12, 1)
    assert spec.key_loc("name") == Loc("m.yaml", 2, 1, 4)
    assert spec["name"].loc == Loc("m.yaml", 2, 7, 11)
    params = spec["params"]
    assert params.loc == Loc("m.yaml", 3, 9, len("{hidden: 5, apply_relu: true}"))
    assert params.key_loc("apply_relu") == Loc("m.yaml", 3, 21, 10)
    assert params["apply_relu"].loc == Loc("m.yaml", 3, 33, 4)
    inputs = spec["inputs"]
    assert inputs.loc == Loc("m.yaml", 5, 3, 1)  # a block mapping starts at its first key
    assert inputs["t"].key_loc("high") == Loc("m.yaml", 6, 32, 4)
    assert inputs["t"]["high"].loc == Loc("m.yaml", 6, 38, 1)
    with pytest.raises(KeyError):
        spec.key_loc("missing")


def test_sequence_item_locations():
    spec = load_yaml(SAMPLE, "m.yaml")
    graph = spec["graph"]
    assert isinstance(graph, LSeq) and len(graph) == 3
    assert graph.loc == Loc("m.yaml", 8, 3, 1)
    first, third = SAMPLE.splitlines()[7][4:], SAMPLE.splitlines()[9][4:]
    assert [item.loc for item in graph] == [Loc("m.yaml", 8, 5, len(first)),
                                            Loc("m.yaml", 9, 5, 4),
                                            Loc("m.yaml", 10, 5, len(third))]
    assert graph[0]["out_size"].loc == Loc("m.yaml", 8, 28, 14)
    shape = spec["inputs"]["x"]["shape"]
    assert shape.loc == Loc("m.yaml", 5, 31, 6)
    assert [item.loc.col for item in shape] == [32, 35]
    assert shape.to_python() == [3, 4]


def test_scalar_raw_style_and_resolution():
    spec = load_yaml(SAMPLE, "m.yaml")
    note = spec["note"]
    assert (note.value, note.raw, note.style) == ("a quoted value", '"a quoted\n  value"', "quoted")
    assert note.loc == Loc("m.yaml", 13, 7, len('"a quoted'))
    hidden = spec["graph"][0]["out_size"]
    assert (hidden.value, hidden.raw, hidden.style, hidden.trap) == (
        "$params.hidden", "$params.hidden", "plain", None)
    values = load_yaml("a: 0.5\nb: ~\nc: null\nd: -3\ne: 0x1F\nf: .inf\ng: '3'\nh: |\n  text\n"
                       "i: 2024-01-02\nj:\n")
    assert values.to_python() == {"a": 0.5, "b": None, "c": None, "d": -3, "e": 31,
                                  "f": float("inf"), "g": "3", "h": "text\n",
                                  "i": "2024-01-02", "j": None}
    assert values["h"].style == "block"
    assert values["g"].style == "quoted"


def test_error_at_fills_the_source_line():
    spec = load_yaml(SAMPLE, "m.yaml")
    error = error_at(spec["params"]["hidden"].loc, "hidden must be even", hint="try 4")
    assert (error.file, error.line, error.col, error.length) == ("m.yaml", 3, 18, 1)
    assert error.source_line == "params: {hidden: 5, apply_relu: true}"
    assert error.render().splitlines() == [
        "m.yaml:3:18: error: hidden must be even (try 4)",
        "    params: {hidden: 5, apply_relu: true}",
        "                     ^",
    ]
    assert SourceText("a\r\nb\rc", "f").line(3) == "c"
    assert Loc("f", 2, 3).error("x").source_line is None  # a loc without source still works
    assert str(spec.key_loc("loss")) == "m.yaml:11:1"


# ---------------------------------------------------------------- rejections

def test_duplicate_keys_are_all_reported_at_the_second_key():
    text = "a: 1\nb:\n  x: 1\n  x: 2\na: 3\nc: {k: 1, k: 2}\n"
    assert errors_of(text) == [
        (4, 3, "duplicate key 'x' (first at line 3)"),
        (5, 1, "duplicate key 'a' (first at line 1)"),
        (6, 11, "duplicate key 'k' (first at line 6)"),
    ]


def test_non_string_keys():
    text = "1: a\non: b\n? [x]\n: c\nnull: d\n"
    assert errors_of(text) == [
        (1, 1, "a key must be text, got the integer 1"),
        (2, 1, "a key must be text, got the boolean true"),
        (3, 3, "a key must be text, got a list"),
        (5, 1, "a key must be text, got null"),
    ]
    assert only_error("on: b\n").hint.startswith("YAML 1.1 reads on as the boolean true")
    assert only_error("1: a\n").hint == "quote it ('1') if you meant it as a name"


def test_anchors_aliases_and_merge_keys():
    text = "base: &b {x: 1}\nother: *b\nthird:\n  <<: {y: 2}\n"
    assert errors_of(text) == [
        (1, 7, "anchors (&b) are not allowed in a spec"),
        (2, 8, "aliases (*b) are not allowed in a spec"),
        (4, 3, "merge keys (<<) are not allowed in a spec"),
    ]
    assert only_error("a: *nowhere\n").length == len("*nowhere")


def test_tags_are_refused():
    text = "a: !!python/object/apply:os.getcwd []\nb: !local x\nc: !!set {x: null}\nd: ! x\n"
    assert errors_of(text) == [
        (1, 4, "the tag !!python/object/apply:os.getcwd is not allowed in a spec"),
        (2, 4, "the tag !local is not allowed in a spec"),
        (3, 4, "the tag !!set is not allowed in a spec"),
        (4, 4, "the tag ! is not allowed in a spec"),
    ]
    assert only_error("a: !local x\n").length == len("!local")


def test_core_scalar_tags_are_allowed_and_checked():
    spec = load_yaml("a: !!str yes\nb: !!int '7'\nc: !!float 1\n")
    assert spec.to_python() == {"a": "yes", "b": 7, "c": 1.0}
    assert spec["a"].trap is None  # tagged, so not a trap
    assert errors_of("a: !!int x\nb: !!bool maybe\nc: !!float\n") == [
        (1, 4, "cannot read 'x' as !!int"), (2, 4, "cannot read 'maybe' as !!bool"),
        (3, 4, "cannot read '' as !!float")]


def test_python_tags_never_construct_anything(monkeypatch):
    def constructed(*args, **kwargs):
        raise AssertionError("a YAML constructor ran")

    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_object", constructed)
    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_document", constructed)
    for name in ("find_python_name", "find_python_module", "make_python_instance"):
        monkeypatch.setattr(yaml.constructor.FullConstructor, name, constructed)
    text = ("a: !!python/object/apply:builtins.exit [3]\n"
            "b: !!python/name:builtins.exec ''\n"
            "c: !!python/object:builtins.object {x: 1}\n")
    assert [line for line, _, _ in errors_of(text)] == [1, 2, 3]
    assert load_yaml(SAMPLE).to_python()["graphtool"] == 1  # the normal path constructs nothing


def test_multiple_documents():
    assert errors_of("a: 1\n---\nb: 2\n") == [
        (2, 1, "a spec is one YAML document, but another starts here")]


def test_syntax_error_is_reported_alone_at_its_problem_mark():
    error = only_error("a: 1\na: 2\nb: c: d\n")  # the duplicate key is not reported
    assert (error.line, error.col) == (3, 5)
    assert error.message == "invalid YAML: ': ' inside an unquoted value"
    assert error.source_line == "b: c: d"
    error = only_error("a: [1, 2\n")
    assert (error.line, error.col) == (1, 4)  # at the bracket that is never closed
    assert error.message == "invalid YAML: this '[' is never closed"
    tab = only_error("a:\n\tb: 1\n")
    assert (tab.line, tab.col) == (2, 1)
    assert "tabs" in tab.hint


def test_forbidden_character_is_located():
    error = only_error("a: 1\nb: x\x07y\n")
    assert (error.line, error.col) == (2, 5)
    assert error.message == "the spec contains the character U+0007, which YAML does not allow"


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "---\n...\n"])
def test_empty_spec(text):
    assert errors_of(text) == [(1, 1, "the spec is empty")]


@pytest.mark.parametrize(("text", "got"), [
    ("- a\n- b\n", "a list"), ("just text\n", "the text 'just text'"), ("~\n", "null"),
    ("\n\n3\n", "the integer 3"),
])
def test_top_level_must_be_a_mapping(text, got):
    error = only_error(text)
    assert error.message == ("the top level of a spec must be a mapping (key: value lines), "
                             f"got {got}")
    assert error.line == text.count("\n", 0, len(text) - len(text.lstrip("\n"))) + 1


# ---------------------------------------------------------------- YAML mistakes in plain words

STEP = "graph:\n  - if: mean(x) > 0\n"  # lines 1-2; the if's keys are at 4 spaces

# (text, line, col, message, hint): the mistakes a person makes, each as one located error in
# words instead of PyYAML's tokens ("expected <block end>, but found '?'")
BAD_YAML = [
    # a key of a list item at the list's '- ' column, at no key's column, or deeper than a
    # line that has its value
    (STEP + "  then: [relu]\n", 3, 3,
     "invalid YAML: 'then:' lines up with the '- ' on line 2, so it is outside that list item",
     "indent it 4 spaces, like 'if:' on line 2"),
    ("graph:\n  - repeat: 2\n  body: [relu]\n", 3, 3,
     "invalid YAML: 'body:' lines up with the '- ' on line 2, so it is outside that list item",
     "indent it 4 spaces, like 'repeat:' on line 2"),
    ("graph:\n  - name: a\n  op: linear\n", 3, 3,
     "invalid YAML: 'op:' lines up with the '- ' on line 2, so it is outside that list item",
     "indent it 4 spaces, like 'name:' on line 2"),
    (STEP + "    then:\n      - relu\n  else: [tanh]\n", 5, 3,
     "invalid YAML: 'else:' lines up with the '- ' on line 2, so it is outside that list item",
     "indent it 4 spaces, like 'then:' on line 3"),
    (STEP + "    then:\n      - relu\n   else: [tanh]\n", 5, 4,
     "invalid YAML: 'else:' is indented 3 spaces, which lines up with no key above it",
     "indent it 4 spaces, like 'then:' on line 3"),
    (STEP + "    then: [relu]\n      else: [tanh]\n", 4, 7,
     "invalid YAML: 'else:' is indented 6 spaces, which lines up with no key above it",
     "indent it 4 spaces, like 'then:' on line 3"),
    (STEP + "      then: [relu]\n", 3, 7,
     "invalid YAML: 'then:' is indented more than 'if:' on line 2, so it reads as the rest of "
     "that line's value ('mean(x) > 0 then')", "indent it 4 spaces, like 'if:'"),
    ("graph:\n  - repeat: 2\n      body: [relu]\n", 3, 7,
     "invalid YAML: 'body:' is indented more than 'repeat:' on line 2, so it reads as the rest "
     "of that line's value ('2 body')", "indent it 4 spaces, like 'repeat:'"),
    # list items at a column no list above has
    ("graph:\n  - {op: relu}\n      - tanh\n", 3, 7,
     "invalid YAML: '- tanh' is indented 6 spaces, which lines up with no list above it",
     "indent it 2 spaces, like '- {op: relu}' on line 2"),
    ("graph:\n  - relu\n - tanh\n", 3, 2,
     "invalid YAML: '- tanh' is indented 1 space, which lines up with no list above it",
     "indent it 2 spaces, like '- relu' on line 2"),
    # a missing space, a line that is neither a key nor an item
    ("graph:\n  - if:mean(x) > 0\n    then: [relu]\n", 2, 5,
     "invalid YAML: 'if:' needs a space after the ':', so 'if:mean(x) > 0' is one text and "
     "line 3 is read as part of it", "write 'if: mean(x) > 0'"),
    ("graph:\n  - relu\n  -tanh\n", 3, 3,
     "invalid YAML: '-tanh' needs a space after '-' to be a list item", "write '- tanh'"),
    ("graph:\n  - relu\n  tanh\n", 3, 3,
     "invalid YAML: 'tanh' is neither a key ('name: value') nor a list item ('- value')",
     "write '- tanh', like '- relu' on line 2"),
    # a tab
    ("graph:\n\t- relu\n", 2, 1, "invalid YAML: a tab where YAML expects spaces",
     "replace it with spaces; YAML does not allow tabs for indentation"),
    # brackets and quotes never closed, closed by the other kind, a missing comma
    ("graph: [relu, tanh\nloss: {op: sum}\n", 1, 8, "invalid YAML: this '[' is never closed",
     "close it with ']'; YAML read on to line 2 looking for it"),
    ("graph:\n  - {op: linear, out_size: 3\n  - relu\n", 2, 5,
     "invalid YAML: this '{' is never closed",
     "close it with '}'; YAML read on to the end of the file looking for it"),
    ("graph:\n  - {op: linear, out_size: 3, name: l1,\n  - relu\n", 2, 5,
     "invalid YAML: this '{' is never closed",
     "close it with '}'; YAML read on to line 3 looking for it"),
    ("graph:\n  - {op: relu]\n", 2, 14,
     "invalid YAML: the '{' at line 2 column 5 is closed by ']'", "close a '{' with '}'"),
    ("graph:\n  - {op: linear out_size: 3}\n", 2, 25,
     "invalid YAML: expected ',' or '}' before this ':'",
     "put ', ' before 'out_size' (entries inside '{}' are separated by commas); quote a value "
     "that contains ': '"),
    (STEP[:-len("mean(x) > 0\n")] + "'mean(x) > 0\n    then: [relu]\n", 2, 9,
     "invalid YAML: the quote (') here is never closed", "end the text with '"),
    # ': ' inside an unquoted value, text after a quoted value or a closing bracket
    ("graph:\n  - if: mean(x): 0\n    then: [relu]\n", 2, 16,
     "invalid YAML: ': ' inside an unquoted value", "quote the value: if: 'mean(x): 0'"),
    ("graph:\n  - if: 'x' == params.a\n    then: [relu]\n", 2, 13,
     "invalid YAML: text after the closing quote (a quoted value ends at its quote)",
     "put the whole value in quotes: \"'x' == params.a\""),
    ("graph:\n  - {op: relu}}\n", 2, 15, "invalid YAML: an extra '}'",
     "remove it, or check the brackets on this line"),
    ("graph:\n  - {op: scale, by: 2}x\n", 2, 23, "invalid YAML: text after the closing '}'",
     "remove it, or move it inside the brackets"),
]


@pytest.mark.parametrize(("text", "line", "col", "message", "hint"), BAD_YAML)
def test_yaml_mistakes_are_told_in_words_where_they_are(text, line, col, message, hint):
    error = only_error(text)
    assert (error.line, error.col, error.message, error.hint) == (line, col, message, hint)
    assert "<" not in error.message and "'?'" not in error.message  # no PyYAML token names


def test_an_unrecognised_syntax_error_keeps_pyyaml_words_made_readable():
    error = only_error("graph:\n  - relu\nouputs: [_]\n  - tanh\n")
    assert (error.line, error.col) == (4, 3)
    assert error.message == ("invalid YAML: expected the end of a block, but found a new list "
                             "(in the mapping that starts at line 1)")
    assert error.hint == "check the indentation of this line"


# ---------------------------------------------------------------- YAML 1.1 traps

@pytest.mark.parametrize(("text", "value", "hint"), [
    ("1e-3", "1e-3", "YAML 1.1 reads 1e-3 as text, not a number; write 1.0e-3"),
    ("1E5", "1E5", "YAML 1.1 reads 1E5 as text, not a number; write 1.0e+5"),
    ("1.5e3", "1.5e3", "YAML 1.1 reads 1.5e3 as text, not a number; write 1.5e+3"),
    ("off", False, "YAML 1.1 reads off as the boolean false; quote it ('off') if you meant "
                   "text, or write false"),
    ("YES", True, "YAML 1.1 reads YES as the boolean true; quote it ('YES') if you meant "
                  "text, or write true"),
    ("010", 8, "YAML 1.1 reads 010 as the octal number 8; write 10 for the decimal number, "
               "or quote it if you meant text"),
    ("1_000", 1000, "YAML 1.1 reads 1_000 as 1000, ignoring '_', but YAML 1.2 reads it as "
                    "text; write 1000"),
    ("1:30", 90, "YAML 1.1 reads 1:30 as the base-60 number 90; quote it ('1:30') if you "
                 "meant text"),
])
def test_traps(text, value, hint):
    scalar = load_yaml(f"k: {text}\n")["k"]
    assert scalar.value == value and type(scalar.value) is type(value)
    assert scalar.trap == hint
    assert trap_hint(scalar) == hint
    assert trap_hint(text) == hint


@pytest.mark.parametrize("text", ["y", "N", "oN", "09", "nan", "-inf"])
def test_text_that_other_readers_take_otherwise_has_a_hint(text):
    scalar = load_yaml(f"k: {text}\n")["k"]
    assert scalar.value == text
    assert scalar.trap is not None


@pytest.mark.parametrize("text", ["0.001", "1.0e-3", "true", "false", "0", "10", "abc", "0x1F",
                                  "'yes'", '"1e-3"', "!!str on", "relu"])
def test_no_trap(text):
    assert load_yaml(f"k: {text}\n")["k"].trap is None


def test_trap_on_a_key_still_loads_when_text():
    spec = load_yaml("1e-3: a\n")
    assert list(spec) == ["1e-3"]


# ---------------------------------------------------------------- bounded work

def test_too_large_is_refused_before_parsing():
    text = "a: 1\n" * (MAX_BYTES // 5 + 1)
    error = only_error(text)
    assert (error.line, error.col) == (1, 1)
    assert error.message.startswith("the spec is too large")


def test_nesting_limit():
    ok = "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    assert load_yaml(ok).to_python()["a"] is not None
    deep = "a: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n"
    error = only_error(deep)  # the top-level mapping is the first level
    assert (error.line, error.col) == (1, 4 + MAX_DEPTH - 1)
    assert error.message == f"the spec nests deeper than {MAX_DEPTH} levels"


def test_very_deep_input_is_refused_without_recursion_error():
    assert only_error("[" * 200_000).message.startswith("the spec nests deeper")
    block = "".join(" " * i + f"k{i}:\n" for i in range(200))
    assert (only_error(block).line) == MAX_DEPTH + 1


# ---------------------------------------------------------------- files

def test_load_yaml_file(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_bytes(b"\xef\xbb\xbfgraphtool: 1\nname: caf\xc3\xa9\n")  # a BOM is dropped
    spec = load_yaml_file(path)
    assert spec.to_python() == {"graphtool": 1, "name": "café"}
    assert spec.key_loc("graphtool") == Loc(str(path), 1, 1, 9)


def test_load_yaml_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_yaml_file(tmp_path / "missing.yaml")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(SpecErrors) as info:
        load_yaml_file(latin)
    (error,) = info.value.errors
    assert (error.file, error.line, error.col) == (str(latin), 1, 1)
    assert error.message == "the spec is not UTF-8 text (byte 0xe9 at offset 9)"
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" * (MAX_BYTES // 5 + 1))
    with pytest.raises(SpecErrors, match="too large"):
        load_yaml_file(big)


# ---------------------------------------------------------------- robustness property

ALPHABET = list(":-[]{},#&*!|>'\"%@`?~= \t\n\r\\") + ["x", "1", "e", "é", "\x00", "\ufeff"]
TOKENS = ["!!int ", "!!float ", "!!bool ", "!!str ", "!!python/object:os.system ", "!x ", "&a ",
          "*a", "<<: ", "---\n", "...\n", "? ", "- ", "%YAML 1.1\n", "|\n", "1e-3", "yes"]
MUTATIONS = st.one_of(
    st.tuples(st.sampled_from(["delete_char", "duplicate_char", "delete_line",
                               "duplicate_line", "indent_line"]), st.integers(0, 2000)),
    st.tuples(st.just("insert_char"), st.integers(0, 2000),
              st.sampled_from(ALPHABET) | st.sampled_from(TOKENS)),
    st.tuples(st.sampled_from(["swap_lines", "swap_tokens"]), st.integers(0, 2000),
              st.integers(0, 2000)),
)


def mutate(text: str, mutations: list[tuple]) -> str:
    for kind, *args in mutations:
        position = args[0] % (len(text) + 1)
        lines = text.split("\n")
        line = args[0] % len(lines)
        if kind == "delete_char":
            text = text[:position] + text[position + 1:]
        elif kind == "duplicate_char":
            text = text[:position] + text[position:position + 1] + text[position:]
        elif kind == "insert_char":
            text = text[:position] + args[1] + text[position:]
        elif kind in ("delete_line", "duplicate_line", "indent_line"):
            replacement = {"delete_line": [], "duplicate_line": [lines[line]] * 2,
                           "indent_line": ["  " + lines[line]]}[kind]
            text = "\n".join(lines[:line] + replacement + lines[line + 1:])
        elif kind == "swap_lines":
            other = args[1] % len(lines)
            lines[line], lines[other] = lines[other], lines[line]
            text = "\n".join(lines)
        else:  # swap_tokens
            tokens = text.split(" ")
            i, j = args[0] % len(tokens), args[1] % len(tokens)
            tokens[i], tokens[j] = tokens[j], tokens[i]
            text = " ".join(tokens)
    return text


@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(MUTATIONS, min_size=1, max_size=6))
def test_mutated_specs_only_ever_raise_spec_errors(mutations):
    text = mutate(SAMPLE, mutations)
    with time_limit(5.0):
        try:
            result = load_yaml(text, "m.yaml")
        except SpecErrors as errors:
            assert errors.errors
            for error in errors.errors:
                assert isinstance(error, SpecError) and error.file == "m.yaml"
                assert error.line >= 1 and error.col >= 1
                error.render()
        else:
            assert isinstance(result, LMap)
            result.to_python()


def test_public_names():
    assert {"LMap", "LSeq", "LScalar", "Loc", "SourceText", "load_yaml", "load_yaml_file",
            "error_at", "trap_hint"} <= set(dir(yaml_source))
    assert isinstance(load_yaml("a: b\n")["a"], LScalar)
