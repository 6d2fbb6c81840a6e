"""Property tests of the spec pipeline against hostile and broken input (DESIGN section 8).

(a) Mutated shipped specs either load or raise ``SpecErrors`` -- nothing else, never a hang,
    and nothing in them is ever executed (payloads would touch a marker file).
(b) Random predicate text in ``if:`` / ``while:`` steps of a valid spec: ``SpecErrors`` or a
    Spec; a Spec that loads runs or fails with a located ``SpecRuntimeError``.
(c) Mutated specs that still load build and run, or fail with a spec error, a located runtime
    error, ``FileNotFoundError`` or another ``GraphcoreError`` -- never a bare TypeError,
    KeyError, AttributeError or IndexError from our code.
"""

import contextlib
import os
import re
import subprocess
import tempfile
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from time_limits import time_limit

from graphcore.errors import GraphcoreError, SpecError, SpecErrors, SpecRuntimeError
from graphcore.language.syntax import ForEachStep, IfStep, RepeatStep, WhileStep
from graphcore.registry import all_ops
from graphcore.spec import LAYERS, Spec, load_spec_text, run

SPEC_DIR = Path(__file__).resolve().parents[2] / "specs"
MAX_ELEMENTS = 2_000  # keeps every tensor of a mutated spec small
# Shipped specs whose inputs exceed MAX_ELEMENTS are fuzzed at a smaller size, same structure.
SHRUNK = {"lenet.yaml": ("[$params.batch, 1, 28, 28]", "[$params.batch, 1, 16, 16]")}
SPECS = {path.name: path.read_text(encoding="utf-8").replace(*SHRUNK.get(path.name, ("", "")))
         for path in sorted(SPEC_DIR.glob("*.yaml"))}
MAX_TRIPS = 100  # mutated specs whose loops run steps more often are loaded, not run

# A file that exists only if something in a spec got executed.
# One name per test run (the payloads are in the test ids, which pytest-xdist's workers must
# collect alike: its run id, else this process's id).
RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID", str(os.getpid()))[:12]
MARKER = Path(tempfile.gettempdir()) / f"graphtool_fuzz_pwned_{RUN}"
PAYLOADS = [
    f'!!python/object/apply:os.system ["touch {MARKER}"]',
    f"!!python/object/apply:subprocess.check_call [[touch, {MARKER}]]",
    f"!!python/object/new:os.system [touch {MARKER}]",
    "!!python/name:os.system",
    f"{{op: !!python/object/apply:os.system ['touch {MARKER}']}}",
    f"\"__import__('os').system('touch {MARKER}')\"",
    f"__import__('os').system('touch {MARKER}')",
    f"eval(\"open('{MARKER}', 'w')\")",
    f"mean(x).__class__.__init__.__globals__['os'].system('touch {MARKER}')",
    "&a [*a, *a, *a]",
    "<<: {op: relu}",
]
VOCAB = sorted(all_ops()) + sorted(LAYERS) + [
    # numbers and YAML 1.1 traps
    "0", "1", "-1", "2", "3", "0.5", "-0.0", "1e-3", "1.0e-3", "010", "08", "0x1F", "1_000",
    "1:30", "99999999999999999999", "1e400", ".nan", ".inf", "-.inf", "yes", "no", "on", "off",
    "null", "~", "true", "false", "''", '""',
    # params, names, predicates
    "$params.x", "$params.depth", "$params.hidden", "$params.width", "$params.", "x", "h", "_",
    "t", "s", "x_t", "hs", "logits", "loop", "params", "layer", "mean(x) > 0", "loop.i < 2",
    "loop.t", "params.act == 'tanh'", "norm(_) > 1.0", "size(_) > 1e9", "not", "(((",
    # keys and structure
    "op", "from", "to", "name", "if", "then", "else", "repeat", "while", "max_iters",
    "on_limit", "for_each", "as", "carry", "body", "collect", "unroll", "shape", "axis",
    "lengths", "random", "zeros", "ones", "file", "stdin", "key", "dtype", "graphtool",
    # YAML syntax
    ":", ": ", "- ", "-", "{", "}", "[", "]", ",", "'", '"', "#", "|", ">", "? ", "---", "...",
    "&a", "*a", "!!str", "!!int", "!!float", "!!bool", "!!binary", "!custom", "%YAML 1.1",
    "[1, 2]", "[null, 3]", "{}", "[]", "{a: 1}", "\t", "\\", "\x00", "\u2028", "é",
] + PAYLOADS
STEPS = [
    "relu", "sum", "add", "stack", "split_axis", "batch_normalization",
    "{op: get_item, index: 7}", "{op: get_item, index: {a: 1}}", "{op: get_item, index: [0, 1]}",
    "{op: get_item, index: x}", "{op: cast, dtype: int32}", "{op: cast, dtype: nope}",
    "{op: split_axis, indices_or_sections: 2, axis: 1}", "{op: split_axis, indices_or_sections: 0}",
    "{op: transpose, axes: [5]}", "{op: scatter_add, index: [[0]], shape: [1000000000]}",
    "{op: embed_id, in_size: 5, out_size: 3}", "{op: reshape, shape: [-1]}",
    "{op: broadcast_to, shape: [100000, 100000]}", "{op: sum_to, shape: [2]}",
    "{op: dropout, ratio: 1.0}", "{op: sum, axis: 7}", "{op: max, axis: [0, 0]}",
    "{op: concat, axis: 9}", "{op: stack, from: [x, x], axis: 3}", "{op: where, from: [x, x, x]}",
    "{op: matmul, from: [x, x]}", "{op: softmax_cross_entropy, from: [x, x]}",
    "{op: mean_squared_error, from: [x, _]}", "{op: clip, x_min: 1, x_max: 0}",
    "{op: linear, out_size: 3, in_size: 2}", "{op: linear, out_size: 2, name: layer}",
    "{op: rpow_scalar, base: -1}", "{op: log_softmax, axis: 4}", "{op: pow, from: [x, x]}",
    "{if: mean(_) > 0, then: [relu], else: [tanh]}", "{repeat: 2, body: [tanh]}",
    "{while: norm(_) > 1, max_iters: 3, body: [{op: scale, by: 0.5}]}",
    "{for_each: _, as: row, body: [relu], collect: row, to: rows}",
] + PAYLOADS
TOKEN = re.compile(r"\$?[A-Za-z_][A-Za-z0-9_.]*|-?[0-9][0-9._eE+-]*|\S")
STEP_PARENTS = re.compile(r"^(graph|\s*body|\s*then|\s*else):\s*$")

INDEX = st.integers(0, 10_000)
TEXT_MUTATIONS = st.one_of(
    st.tuples(st.sampled_from(["delete_char", "duplicate_char", "delete_line",
                               "duplicate_line", "indent_line", "dedent_line"]), INDEX),
    st.tuples(st.just("insert"), INDEX, st.sampled_from(VOCAB)),
    st.tuples(st.sampled_from(["swap_lines", "swap_tokens"]), INDEX, INDEX),
)
VALUE_MUTATIONS = st.one_of(  # keep the YAML structure more often: more specs still load
    st.tuples(st.just("replace_token"), INDEX, st.sampled_from(VOCAB)),
    st.tuples(st.just("insert_step"), INDEX, st.sampled_from(STEPS)),
    st.tuples(st.sampled_from(["delete_line", "duplicate_line"]), INDEX),
    st.tuples(st.just("swap_tokens"), INDEX, INDEX),
)
MUTATIONS = st.one_of(TEXT_MUTATIONS, VALUE_MUTATIONS)


def mutate(text: str, mutations: list[tuple]) -> str:
    for kind, where, *rest in mutations:
        lines = text.split("\n")
        line = where % len(lines)
        position = where % (len(text) + 1)
        tokens = list(TOKEN.finditer(text))
        if kind == "delete_char":
            text = text[:position] + text[position + 1:]
        elif kind == "duplicate_char":
            text = text[:position] + text[position:position + 1] + text[position:]
        elif kind == "insert":
            text = text[:position] + rest[0] + text[position:]
        elif kind in ("delete_line", "duplicate_line", "indent_line", "dedent_line"):
            replacement = {"delete_line": [], "duplicate_line": [lines[line]] * 2,
                           "indent_line": ["  " + lines[line]],
                           "dedent_line": [lines[line][2:]]}[kind]
            text = "\n".join(lines[:line] + replacement + lines[line + 1:])
        elif kind == "swap_lines":
            other = rest[0] % len(lines)
            lines[line], lines[other] = lines[other], lines[line]
            text = "\n".join(lines)
        elif kind == "replace_token" and tokens:
            token = tokens[where % len(tokens)]
            text = text[:token.start()] + rest[0] + text[token.end():]
        elif kind == "swap_tokens" and tokens:
            first, second = sorted((tokens[where % len(tokens)], tokens[rest[0] % len(tokens)]),
                                   key=lambda m: m.start())
            if first.end() <= second.start():
                text = (text[:first.start()] + second.group() + text[first.end():second.start()]
                        + first.group() + text[second.end():])
        elif kind == "insert_step":
            parents = [i for i, text_line in enumerate(lines) if STEP_PARENTS.match(text_line)]
            if parents:
                i = parents[where % len(parents)]
                indent = len(lines[i]) - len(lines[i].lstrip()) + 2
                lines.insert(i + 1, " " * indent + "- " + rest[0])
                text = "\n".join(lines)
    return text


@contextlib.contextmanager
def nothing_executes():
    """Fail if a spec makes anything run a shell or a program, or leaves the marker file."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"a spec tried to run {args!r}")

    with mock.patch.object(os, "system", refuse), mock.patch.object(os, "popen", refuse), \
            mock.patch.object(subprocess, "Popen", refuse):
        yield
    assert not MARKER.exists(), "a spec payload was executed"


def check_errors(errors: SpecErrors, file: str) -> None:
    assert errors.errors
    for error in errors.errors:
        assert isinstance(error, SpecError)
        assert error.file in (file, "--set")
        assert error.line >= 1 and error.col >= 1
        error.render()


def load(text: str, file: str) -> Spec | None:
    """The spec, or None when it has errors (which must be well-formed SpecErrors)."""
    with time_limit(10.0), nothing_executes():
        try:
            spec = load_spec_text(text, file=file, folder=str(SPEC_DIR),
                                  max_elements=MAX_ELEMENTS)
        except SpecErrors as errors:
            check_errors(errors, file)
            return None
    assert isinstance(spec, Spec)
    return spec


def trips(spec: Spec, steps: list, outer: int = 1) -> int:
    """The most times any step of ``steps`` can run (nested loop counts multiply)."""
    most = outer
    for step in steps:
        if isinstance(step, IfStep):
            most = max(most, trips(spec, step.then, outer), trips(spec, step.otherwise, outer))
        elif isinstance(step, RepeatStep | WhileStep | ForEachStep):
            if isinstance(step, RepeatStep):
                count = step.count
            elif isinstance(step, WhileStep):
                count = step.max_iters
            else:  # a sequence is at most as long as an input is big
                count = MAX_ELEMENTS
                source = spec.inputs.get(step.sequence)
                if source is not None and source.lengths:
                    count = max(source.lengths)
                elif source is not None and source.shape and source.shape[0]:
                    count = source.shape[0]
            most = max(most, trips(spec, step.body, outer * count))
    return most


def runnable(spec: Spec) -> bool:
    """Whether a loaded spec is cheap and self-contained enough to run here."""
    if any(i.source in ("file", "stdin") for i in spec.inputs.values()):
        return False
    return trips(spec, spec.graph) <= MAX_TRIPS


def run_quietly(spec: Spec) -> str:
    """Run ``spec``; only spec and graphcore errors may come out. Returns what happened."""
    with time_limit(20.0), nothing_executes(), np.errstate(all="ignore"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numeric warnings (log of -1, ...)
        try:
            result, _ = run(spec)
        except SpecRuntimeError as error:
            assert error.file == spec.file and error.line >= 1 and error.col >= 1
            error.render()
            return "runtime error"
        except (SpecErrors, FileNotFoundError, GraphcoreError) as error:
            return type(error).__name__
        assert result.loss is None or isinstance(result.loss, float)
        return "ran"


def teardown_module():
    MARKER.unlink(missing_ok=True)


# ---------------------------------------------------------------- (a) load only

@settings(max_examples=200, deadline=2000, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(SPECS)), st.lists(MUTATIONS, min_size=1, max_size=5))
def test_mutated_specs_load_or_raise_spec_errors(name, mutations):
    event("loads" if load(mutate(SPECS[name], mutations), name) else "spec errors")


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("payload", PAYLOADS)
def test_payloads_in_every_shipped_spec_are_refused_without_side_effects(name, payload):
    text = SPECS[name]
    first_step = re.search(r"^graph:\n  - ", text, re.M).end()
    for variant in (text[:first_step] + payload + "\n  - " + text[first_step:],  # as a step
                    text.replace("seed: 0", "seed: " + payload, 1)):  # as a value
        with pytest.raises(SpecErrors):
            load_spec_text(variant, file=name, folder=str(SPEC_DIR))
    assert not MARKER.exists()


def test_the_shipped_specs_load_unmutated():
    for name, text in SPECS.items():
        assert load(text, name) is not None


# ---------------------------------------------------------------- (b) predicates

PREDICATE_PIECES = [
    "x", "_", "h", "row", "nope", "params.width", "params.act", "params.nope", "params.",
    "loop.i", "loop.t", "loop.x", "loop", "0", "1", "2.5", "1e3", "1e999", "007", ".5", "5.",
    "'tanh'", '"tanh"', "'", '"', "true", "false", "True", "None", "and", "or", "not",
    "mean", "sum", "min", "max", "std", "norm", "abs", "size", "len", "dim", "meen", "exp",
    "(", ")", ",", "+", "-", "*", "/", "%", "**", "//", "==", "!=", "<", "<=", ">", ">=", "=",
    "!", "&&", "||", "[", "]", ".", ":", "#", "{", "}", " ", "  ", "\t", "\\", "é", "\u00a0",
    "__import__('os')", "x.__class__", "lambda: 0", "x if x else x", "eval", "exec",
]
ATOMS = st.sampled_from(["x", "_", "h", "row", "params.width", "params.act", "loop.i", "loop.t",
                         "0", "1", "-1", "0.5", "1e9", "'tanh'", "true", "false", "nope"])
FUNCTIONS = st.sampled_from(["mean", "sum", "min", "max", "std", "norm", "abs", "size", "len",
                             "dim"])
OPERATORS = st.sampled_from(["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and",
                             "or"])
GRAMMAR = st.recursive(ATOMS, lambda inner: st.one_of(
    st.tuples(FUNCTIONS, inner).map(lambda t: f"{t[0]}({t[1]})"),
    st.tuples(inner, OPERATORS, inner).map(" ".join),
    inner.map(lambda e: f"({e})"),
    inner.map(lambda e: f"not {e}"),
    inner.map(lambda e: f"-{e}"),
), max_leaves=8)
PREDICATES = st.one_of(
    GRAMMAR,
    st.lists(st.sampled_from(PREDICATE_PIECES), min_size=1, max_size=12).map(" ".join),
    st.lists(st.sampled_from(PREDICATE_PIECES), min_size=1, max_size=12).map("".join),
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40),
)
PREDICATE_SPECS = {
    "if": """\
graphtool: 1
kind: dynamic
params: {{width: 4, act: tanh}}
inputs:
  x: {{random: normal, shape: [3, 4]}}
graph:
  - if: {predicate}
    then: [relu]
    else: [tanh]
loss: {{op: sum}}
""",
    "while": """\
graphtool: 1
params: {{width: 4, act: tanh}}
inputs:
  x: {{random: normal, shape: [3, 4]}}
graph:
  - repeat: 2
    body:
      - while: {predicate}
        max_iters: 3
        body: [{{op: scale, by: 0.5}}]
loss: {{op: sum}}
""",
    "for_each": """\
graphtool: 1
params: {{width: 4, act: tanh}}
inputs:
  x: {{random: normal, shape: [3, 4]}}
graph:
  - for_each: x
    as: row
    carry: {{h: {{zeros: [4]}}}}
    body:
      - if: {predicate}
        then: [{{op: add, from: [row, h], to: h}}]
        else: [{{op: sub, from: [row, h], to: h}}]
    collect: h
    to: hs
loss: {{op: sum, from: hs}}
""",
}


def quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in escaped) + '"'


@settings(max_examples=200, deadline=2000, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(PREDICATE_SPECS)), PREDICATES, st.booleans())
def test_random_predicates_give_spec_errors_or_a_spec_that_runs(where, predicate, quote):
    text = PREDICATE_SPECS[where].format(predicate=quoted(predicate) if quote else predicate)
    spec = load(text, "p.yaml")
    event("loads" if spec else "spec errors")
    if spec is not None:
        event(run_quietly(spec))


def test_predicate_payloads_are_refused():
    for payload in ("__import__('os').system('true')", "x.__class__", "eval('1')",
                    "(lambda: 0)()", "open('/etc/passwd')", "exec('1')"):
        with pytest.raises(SpecErrors):
            load_spec_text(PREDICATE_SPECS["if"].format(predicate=quoted(payload)))


# ---------------------------------------------------------------- (c) build and run

@settings(max_examples=150, deadline=5000, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.sampled_from(sorted(SPECS)), st.lists(VALUE_MUTATIONS, min_size=1, max_size=3))
def test_mutated_specs_that_load_run_or_fail_with_spec_errors(name, mutations):
    spec = load(mutate(SPECS[name], mutations), name)
    event("spec errors" if spec is None else "loads, runnable" if runnable(spec) else "loads")
    if spec is not None and runnable(spec):
        event(run_quietly(spec))


# Crashes found by the fuzzer (fixed in the loader or interpreter), replayed exactly:
# (spec, text, replacement, what must happen now).
REGRESSIONS = {
    "shape over int64 (was OverflowError at load)": (
        "seed_static.yaml", "shape: [3, 4]", "shape: [99999999999999999999, 4]", "load error"),
    "layer over the size limit (was ValueError building the model)": (
        "rnn_sequences.yaml", "out_size: $params.hidden", "out_size: 99999999999999999999",
        "load error"),
    "layer named like a model method (was AttributeError running)": (
        "residual_mlp.yaml", "name: block1", "name: layer", "load error"),
    "op shape over the size limit (was MemoryError in a layer after it)": (
        "residual_mlp.yaml", "  - {op: linear, out_size: $params.width, name: inp, to: h}",
        "  - {op: scatter_add, index: [[0]], shape: [1000000000]}\n"
        "  - {op: linear, out_size: $params.width, name: inp, to: h}", "load error"),
    "loss of shape (1, 1, 1) (was TypeError from float())": (
        "rnn_sequences.yaml", "loss: {op: sum}", "loss: {op: stack}", "runs"),
    "linear on a scalar (was IndexError in the link)": (
        "param_depth.yaml", "then: [tanh]", "then: [sum]", "load error"),
    "split_axis's pair into a one-input op (was IndexError in backward)": (
        "adaptive_depth.yaml", "- {op: linear, out_size: 6, name: shrink}",
        "- {op: split_axis, indices_or_sections: 2}\n      - {op: scale, by: 0.5}\n"
        "      - {op: linear, out_size: 6, name: shrink}", "load error"),
}


@pytest.mark.parametrize("case", sorted(REGRESSIONS))
def test_fuzzer_regressions(case):
    name, old, new, outcome = REGRESSIONS[case]
    assert old in SPECS[name]
    text = SPECS[name].replace(old, new, 1)
    if outcome == "load error":
        with pytest.raises(SpecErrors):
            load_spec_text(text, file=name, folder=str(SPEC_DIR))
        return
    spec = load_spec_text(text, file=name, folder=str(SPEC_DIR))
    if outcome == "runtime error":
        with pytest.raises(SpecRuntimeError) as info:
            run(spec)
        assert info.value.file == name and info.value.line > 1
    else:
        result, _ = run(spec)
        assert isinstance(result.loss, float)


def test_size_limit_is_what_keeps_mutated_specs_small():
    """The fuzz cases load with MAX_ELEMENTS; a tensor over it is refused before allocation."""
    text = SPECS["seed_static.yaml"].replace("shape: [3, 4]", "shape: [3, 1000]")
    assert load(text, "seed_static.yaml") is None
    assert isinstance(load_spec_text(text), Spec)  # fine under the default limit


def test_long_loops_are_loaded_but_not_run_here():
    spec = load(SPECS["param_depth.yaml"].replace("depth: 3", "depth: 5000"), "p.yaml")
    assert spec is not None and not runnable(spec)
    assert load(SPECS["param_depth.yaml"].replace("depth: 3", "depth: 100000"), "p.yaml") is None
    runs_here = {name for name, text in SPECS.items() if runnable(load(text, name))}
    reads_files = {name for name, text in SPECS.items() if "{file: " in text}
    assert "csv_classifier.yaml" in reads_files
    # a for_each over a data file's sequences (values + offsets) has trip counts the loader
    # cannot know: the lengths are in the file
    data_sequences = {name for name, text in SPECS.items()
                      if any(i.source == "data" and i.sequence
                             for i in load(text, name).inputs.values())}
    assert data_sequences == {"waves_rnn.yaml"}
    assert runs_here == set(SPECS) - reads_files - data_sequences
