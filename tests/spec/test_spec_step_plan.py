"""The interpreter's per-spec plan (graphcore.spec.step_plan): resolved once, and numpy's
global generator saved and restored only by runs that can draw from it."""

import numpy as np
import pytest

from graphcore.spec import build_model, load_spec_text, make_inputs, run_spec
from graphcore.spec.step_plan import plan_of

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
