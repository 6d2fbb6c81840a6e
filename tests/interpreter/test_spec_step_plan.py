"""The interpreter's per-spec plan (graphcore.interpreter.plan): resolved once, and numpy's
global generator saved and restored only by runs that can draw from it."""

import numpy as np
import pytest

from graphcore.errors import SpecError
from graphcore.interpreter.forward import ForwardPass
from graphcore.interpreter.plan import plan_of
from graphcore.spec import build_model, load_spec_text, make_inputs, run_spec

HEAD = "graphtool: 1\nseed: 3\ninputs:\n  x: {random: normal, shape: [3, 4]}\n"
DETERMINISTIC = HEAD + """graph:
  - {op: linear, out_size: 5, in_size: 4, name: l1}
  - relu
  - {op: linear, out_size: 2, in_size: 5, name: l2}
loss: sum
"""
LAZY = DETERMINISTIC.replace("in_size: 4, ", "").replace("in_size: 5, ", "")
DROPOUT = HEAD + "graph:\n  - {op: dropout, ratio: 0.5}\nloss: sum\n"


@pytest.fixture
def state_reads(monkeypatch):
    """How many times a run read numpy's global generator state (to restore it later)."""
    calls = []
    real = np.random.get_state

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(np.random, "get_state", counting)
    return calls


def _ready(text):
    spec = load_spec_text(text, "t.yaml")
    model = build_model(spec)
    return spec, model, make_inputs(spec.inputs, spec.seed, spec.folder)


def test_the_plan_is_made_once_per_spec():
    spec, model, inputs = _ready(DETERMINISTIC)
    first = plan_of(spec)
    run_spec(spec, model, inputs)
    assert plan_of(spec) is first
    assert not first.draws_randomness


def test_a_deterministic_run_leaves_the_global_generator_alone(state_reads):
    spec, model, inputs = _ready(DETERMINISTIC)
    state_reads.clear()
    np.random.seed(11)
    expected = np.random.random()
    np.random.seed(11)
    result = run_spec(spec, model, inputs)
    assert np.random.random() == expected
    assert state_reads == []
    assert result.loss is not None


def test_a_dropout_run_is_seeded_and_restores_the_generator(state_reads):
    spec, model, inputs = _ready(DROPOUT)
    assert plan_of(spec).draws_randomness
    np.random.seed(11)
    expected = np.random.random()
    np.random.seed(11)
    first = run_spec(spec, model, inputs, backward=False).loss
    assert np.random.random() == expected
    assert state_reads  # the caller's state was saved
    assert run_spec(spec, model, inputs, backward=False).loss == first  # same masks


def test_lazily_sized_weights_are_still_drawn_reproducibly():
    runs = []
    for _ in range(2):
        spec, model, inputs = _ready(LAZY)
        np.random.seed(len(runs))  # a different caller state each time must not matter
        runs.append(run_spec(spec, model, inputs).loss)
        assert model.initialized()
    assert runs[0] == runs[1]


def test_a_run_silences_float_warnings_only_while_it_runs():
    spec = load_spec_text(HEAD + "graph:\n  - log\n  - {op: mul, from: [_, _]}\n",
                          "t.yaml")  # log of negative numbers: NaN, reported as values
    model = build_model(spec)
    inputs = make_inputs(spec.inputs, spec.seed, spec.folder)
    with np.errstate(all="raise"):
        result = run_spec(spec, model, inputs)
        assert np.isnan(result.outputs["_"].array).any()
        with pytest.raises(FloatingPointError):
            np.log(np.float32(-1.0))


def test_a_layer_input_over_the_size_limit_is_refused_at_its_step():
    """The size limit of a linear layer is settled per run from its input's size: a larger
    input than the spec declared is refused before numpy allocates, at the layer's line."""
    spec = load_spec_text(DETERMINISTIC, "t.yaml", max_elements=100)
    model = build_model(spec)
    run_spec(spec, model, {"x": np.ones((3, 4), np.float32)})  # 15 elements: fine
    with pytest.raises(SpecError) as caught:
        run_spec(spec, model, {"x": np.ones((30, 4), np.float32)})  # 150 > 100
    assert "t.yaml:6:5" in str(caught.value)
    assert "over the limit of 100" in str(caught.value)


def test_a_pass_reports_each_live_predicate_to_its_own_hook_only():
    """``on_predicate`` (static mode's guards) belongs to one pass: another pass running at
    the same time, without a hook, reports nothing to it."""
    spec = load_spec_text(HEAD + """graph:
  - while: "sum(_) < 100.0"
    max_iters: 3
    body: [{op: add, from: [_, x]}]
  - if: "sum(_) > 0.0"
    then: [relu]
    else: [tanh]
""", "t.yaml")
    model = build_model(spec)
    inputs = {"x": np.ones((3, 4), np.float32)}
    seen = []
    hooked = ForwardPass(spec, model, inputs, [], on_predicate=lambda *call: seen.append(call))
    ForwardPass(spec, model, inputs, []).forward()
    assert seen == []
    hooked.forward()
    # the while's test before each trip and after the last (3 trips), then the if's
    assert [(str(p), outcome) for p, _, _, outcome in seen] == \
        [("sum(_) < 100.0", True)] * 3 + [("sum(_) < 100.0", True), ("sum(_) > 0.0", True)]
    assert [str(loc) for _, loc, _, _ in seen] == \
        [str(spec.graph[0].predicate_loc)] * 4 + [str(spec.graph[1].predicate_loc)]
