"""The interpreter's per-spec plan (graphcore.interpreter.plan): resolved once, and numpy's
global generator saved and restored only by runs that can draw from it."""

import numpy as np
import pytest

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


# --- the lean loop (plain op steps run from the plan's programs) ------------------------------
LEAN_KINDS = HEAD + """graph:
  - {op: linear, out_size: 6, name: l1}
  - {op: split_axis, indices_or_sections: 2, axis: 1, to: halves}
  - {op: add, from: ["halves[0]", "halves[1]"]}
  - {op: leaky_relu, slope: 0.1}
  - repeat: 2
    unroll: true
    body:
      - {op: linear, out_size: 3, name: r}
      - tanh
  - {op: dropout, ratio: 0.0}
  - {op: linear, out_size: 2, name: l2, to: y}
loss: {op: sum, from: y}
outputs: [y, _]
"""


STRAIGHT = HEAD + """graph:
  - {op: linear, out_size: 6, name: l1}
  - {op: split_axis, indices_or_sections: 2, axis: 1, to: halves}
  - {op: add, from: ["halves[0]", "halves[1]"], to: y}
  - {op: dropout, ratio: 0.0}
  - tanh
loss: {op: sum, from: y}
outputs: [y, _]
"""
ONE_OP = HEAD + "graph: [tanh]\nloss: sum\noutputs: [_, x]\n"


@pytest.mark.parametrize("text", [LEAN_KINDS, STRAIGHT, ONE_OP],
                         ids=["control flow", "op steps only", "one op"])
def test_the_lean_loop_and_the_general_path_agree(text):
    """Every kind of step (a layer, an op with attributes, a value of several arrays and its
    parts, an unrolled loop body's own layers, dropout, the loss) gives the same values and
    gradients through the lean loop (run_spec) as through the general path (a recording run);
    a graph of op steps only runs with its loss in one pass, ``_`` still the graph's last."""
    from graphcore.interpreter.forward import ForwardPass

    spec, model, inputs = _ready(text)
    assert (plan_of(spec).straight is not None) == (text is not LEAN_KINDS)
    lean = run_spec(spec, model, inputs)
    lean_grads = {name: p.grad.copy() for name, p in model.namedparams()}
    model.cleargrads()
    run = ForwardPass(spec, model, inputs, [])
    assert run.programs is None  # a recording run takes the general path
    outputs, loss = run.forward()
    loss.backward()
    assert lean.loss == pytest.approx(float(loss.array))
    assert lean.outputs.keys() == outputs.keys()
    for name in outputs:
        np.testing.assert_array_equal(np.asarray(getattr(lean.outputs[name], "array",
                                                         lean.outputs[name])),
                                      np.asarray(getattr(outputs[name], "array",
                                                         outputs[name])))
    for name, p in model.namedparams():
        np.testing.assert_array_equal(lean_grads[name], p.grad)
    # l1, r_0, r_1, l2 (control flow) or l1 (op steps only): each W and b got its gradient
    assert len(lean_grads) == {LEAN_KINDS: 8, STRAIGHT: 2, ONE_OP: 0}[text]


def test_the_program_sends_steps_it_cannot_settle_to_the_general_path():
    spec, _, _ = _ready(LEAN_KINDS)
    plan = plan_of(spec)
    lean = [ins.source is not None for ins in plan.programs[id(spec.graph)]]
    # linear, split_axis, add (two inputs), leaky_relu, repeat, dropout, linear
    assert lean == [True, True, False, True, False, False, True]
    body = spec.graph[4].body
    assert [ins.layer for ins in plan.programs[id(body)]] == ["r", None]
    assert [ins.source for ins in plan.programs[id(plan.loss_steps)]] == ["y"]


def test_the_lean_loop_refuses_a_layer_input_over_the_size_limit_at_its_step():
    """The size limit of a linear layer is settled per run from its input's size: a larger
    input than the spec declared is refused before numpy allocates, at the layer's line."""
    from graphcore.errors import SpecError

    spec = load_spec_text(DETERMINISTIC, "t.yaml", max_elements=100)
    model = build_model(spec)
    run_spec(spec, model, {"x": np.ones((3, 4), np.float32)})  # 15 elements: fine
    with pytest.raises(SpecError) as caught:
        run_spec(spec, model, {"x": np.ones((30, 4), np.float32)})  # 150 > 100
    assert "t.yaml:6:5" in str(caught.value)
    assert "over the limit of 100" in str(caught.value)
