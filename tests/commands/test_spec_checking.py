"""check_spec: a wrong backward fails at the parameters behind it, also where its input sits at
another op's kink; a kink alone is named (op and step) and checked at a nearby point; a forward
without a derivative anywhere is not checked; the rows checked are a repeatable sample; a spec
without a loss is a typed error. (Every shipped spec passing in both modes: test_cli_check.)"""

from pathlib import Path

import numpy as np
import pytest

from graphcore import FunctionNode, register_op, spec
from graphcore.commands.check import FAILED, NOT_CHECKED, PASSED, PASSED_NEARBY, check_spec
from graphcore.commands.kinks import SAMPLES, slopes
from graphcore.commands.train.steps import NoLossError
from graphcore.registry import _ops

SPECS = Path(__file__).resolve().parents[2] / "specs"
MODES = ["dynamic", "static"]

BROKEN_SPEC = """\
graphtool: 1
name: broken
inputs:
  x: {random: normal, shape: [4, 3]}
graph:
  - {op: linear, out_size: 5, name: l1}
  - test_checking_bad_square
  - {op: linear, out_size: 2, name: l2}
loss: {op: sum}
"""

# x is all zeros and biases start at zero, so every input of the relu is exactly 0: its kink.
AT_A_KINK = """\
graphtool: 1
name: at_a_kink
inputs:
  x: {zeros: [4, 3]}
graph:
  - {op: linear, out_size: 5, name: l1}
  - relu
  - OP
  - {op: linear, out_size: 2, name: l2}
loss: {op: sum}
"""


class BadSquare(FunctionNode):
    """x * x, whose backward forgets the factor 2."""

    name = "test_checking_bad_square"
    arity = 1

    def forward(self, inputs):
        self.retain_inputs((0,))
        return inputs[0] * inputs[0],

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * x,


class BadTriple(FunctionNode):
    """3 x, whose backward says 2."""

    name = "test_checking_bad_triple"
    arity = 1

    def forward(self, inputs):
        return inputs[0] * 3,

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0] * 2,


class Jumpy(FunctionNode):
    """x plus steps finer than any eps: a forward with no derivative anywhere."""

    name = "test_checking_jumpy"
    arity = 1

    def forward(self, inputs):
        x, = inputs
        return x + 1e-3 * np.sign(np.sin(x * 1e9)),

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0],


@pytest.fixture
def ops():
    """The ops above, registered for one test."""
    for op in (BadSquare, BadTriple, Jumpy):
        register_op(op)
    yield
    for op in (BadSquare, BadTriple, Jumpy):
        _ops.pop(op.name, None)


def at_a_kink(op):
    return spec.load_spec_text(AT_A_KINK.replace("OP", op))


@pytest.mark.parametrize("mode", MODES)
def test_a_wrong_backward_fails_the_parameters_behind_it(ops, mode):
    report = check_spec(spec.load_spec_text(BROKEN_SPEC), mode=mode)
    assert not report.ok
    by_name = {c.name: c for c in report.params}
    assert report.failures() == ["l1/W", "l1/b"]
    assert by_name["l1/W"].verdict == FAILED and by_name["l1/W"].kinks == []
    assert by_name["l1/W"].rel_error == pytest.approx(0.5, abs=1e-6)  # half the gradient
    assert by_name["l2/W"].verdict == by_name["l2/b"].verdict == PASSED
    document = report.to_dict()
    assert document["ok"] is False and document["params"]["l1/W"]["verdict"] == "failed"
    assert document["verdicts"] == {"passed": 2, "failed": 2, "passed_nearby": 0,
                                    "not_checked": 0, "skipped": 0}


@pytest.mark.parametrize("mode", MODES)
def test_a_kink_is_named_and_checked_at_a_nearby_point(mode):
    report = check_spec(at_a_kink("tanh"), mode=mode)
    assert report.ok
    bias = next(c for c in report.params if c.name == "l1/b")
    assert bias.verdict == PASSED_NEARBY and bias.nearby_scale == 1e-3
    assert bias.rel_error <= report.rtol
    [kink] = bias.kinks
    assert (kink.op, kink.step, kink.loc.line, kink.loc.col, kink.elements) == (
        "relu", "relu", 7, 5, 20)  # all 4 x 5 inputs of the relu
    assert "relu at <spec>:7:5, 20 elements at its kink" == kink.describe()
    assert report.to_dict()["params"]["l1/b"]["kinks"] == [
        {"op": "relu", "step": "relu", "at": "<spec>:7:5", "elements": 20}]


@pytest.mark.parametrize("mode", MODES)
def test_a_wrong_backward_still_fails_where_its_input_sits_at_a_kink(ops, mode):
    report = check_spec(at_a_kink("test_checking_bad_triple"), mode=mode)
    assert report.failures() == ["l1/b"]
    bias = report.params[1]
    assert bias.verdict == FAILED and bias.nearby_scale == 1e-3  # judged at the nearby point
    assert [k.op for k in bias.kinks] == ["relu"]
    assert bias.rel_error == pytest.approx(1 / 3, abs=1e-6)  # 2 where the forward has 3


def test_a_forward_without_a_derivative_anywhere_is_not_checked(ops):
    report = check_spec(at_a_kink("test_checking_jumpy"))
    assert report.ok  # nothing says backward is wrong
    bias = report.params[1]
    assert bias.verdict == NOT_CHECKED and bias.nearby_scale is None
    assert [(k.op, k.loc.line) for k in bias.kinks] == [("relu", 7), ("test_checking_jumpy", 8)]


def test_a_predicate_at_its_boundary_names_the_branch():
    text = """\
graphtool: 1
inputs:
  x: {zeros: [2, 3]}
graph:
  - {op: linear, out_size: 4, name: l1}
  - if: mean(_) > 0
    then: [tanh]
    else: [sigmoid]
loss: {op: sum}
"""
    report = check_spec(spec.load_spec_text(text))
    bias = report.params[1]
    assert report.ok and bias.verdict == PASSED_NEARBY
    assert [(k.op, k.loc.line, k.elements) for k in bias.kinks] == [("if", 6, 0)]
    assert bias.kinks[0].describe() == "the if step at <spec>:6:5 takes another path within eps"


def test_digits_cnn_on_its_own_data_names_the_relu_of_its_zero_pixels():
    report = check_spec(spec.load_spec_file(SPECS / "digits_cnn.yaml"))
    assert report.ok and report.rows == (16, 1797)
    by_name = {c.name: c for c in report.params}
    bias = by_name["conv1/b"]
    assert bias.verdict == PASSED_NEARBY
    assert [(k.op, k.loc.line) for k in bias.kinks] == [("relu", 20)]
    assert by_name["conv1/W"].verdict == PASSED  # zero pixels do not move with the weights


def test_the_rows_checked_are_a_repeatable_sample():
    s = spec.load_spec_file(SPECS / "digits_mlp.yaml")
    first, again = check_spec(s, batch_size=5), check_spec(s, batch_size=5)
    assert first.rows == (5, 1797)
    assert first.to_dict() == again.to_dict()
    assert check_spec(s, batch_size=5, seed=1).loss != first.loss  # other rows
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        check_spec(s, batch_size=0)


def test_slopes_tell_a_kink_from_a_flat_cubic():
    eps = 1e-6
    t = np.array(SAMPLES) * eps
    smooth = slopes(np.stack([t ** 3, np.sin(t), np.exp(t)], axis=1), eps)
    assert smooth.smooth(1e-6).all()
    assert smooth.numeric == pytest.approx([0.0, 1.0, 1.0], abs=1e-9)
    kinked = slopes(np.stack([np.abs(t), np.maximum(t, 0), np.maximum(t - eps / 2, 0)],
                             axis=1), eps)
    assert not kinked.smooth(1e-3).any()  # at 0, and between the samples
    jump = slopes(np.array([1.0, 1.0, np.inf, 1.0, 1.0]), eps)
    assert not jump.smooth(1.0)


def test_float64_does_not_leak_into_the_spec_or_later_runs():
    s = spec.load_spec_file(SPECS / "seed_static.yaml")
    check_spec(s)
    result, model = spec.run(s)
    assert all(p.dtype == np.float32 for p in model.params())


def test_a_spec_without_a_loss_is_a_typed_error():
    s = spec.load_spec_text("graphtool: 1\ninputs: {x: {zeros: [2, 3]}}\ngraph: [relu]\n")
    with pytest.raises(NoLossError, match="nothing to differentiate"):
        check_spec(s)
