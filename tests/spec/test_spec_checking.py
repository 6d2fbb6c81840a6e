"""check_spec: every shipped spec passes; a wrong backward fails at the parameters behind it;
sampling is repeatable; a spec without a loss is a typed error."""

from pathlib import Path

import numpy as np
import pytest
from continuous_inputs import continuous_arrays

from graphcore import FunctionNode, register_op, spec
from graphcore.registry import _ops
from graphcore.spec.checking import check_spec
from graphcore.spec.training import NoLossError

SPECS = sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.yaml"))

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


@pytest.fixture
def bad_square():
    """An op whose backward forgets the factor 2 of d(x*x)/dx; unregistered afterwards."""

    class BadSquare(FunctionNode):
        name = "test_checking_bad_square"
        arity = 1

        def forward(self, inputs):
            self.retain_inputs((0,))
            return inputs[0] * inputs[0],

        def backward(self, indexes, grad_outputs):
            x, = self.get_retained_inputs()
            return grad_outputs[0] * x,

    register_op(BadSquare)
    yield BadSquare.name
    _ops.pop(BadSquare.name, None)


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_every_shipped_spec_passes(path, tmp_path):
    s = spec.load_spec_file(path)
    overrides = {}
    for key, values in continuous_arrays(path.stem).items():  # data whose ties have no derivative
        np.save(tmp_path / f"{key}.npy", values)
        overrides[key] = str(tmp_path / f"{key}.npy")
    report = check_spec(s, input_overrides=overrides)
    assert report.ok, report.to_dict()
    _, model = spec.run(s)
    assert [c.name for c in report.params] == [n.lstrip("/") for n, _ in model.namedparams()]
    for c in report.params:
        assert c.checked == min(c.size, 64) and c.max_rel_error <= report.rtol


def test_a_wrong_backward_fails_the_parameters_behind_it(bad_square):
    report = check_spec(spec.load_spec_text(BROKEN_SPEC))
    assert not report.ok
    by_name = {c.name: c for c in report.params}
    assert report.failures() == ["l1/W", "l1/b"]
    assert by_name["l1/W"].max_rel_error == pytest.approx(0.5, abs=1e-3)  # half the gradient
    assert by_name["l2/W"].ok and by_name["l2/b"].ok
    document = report.to_dict()
    assert document["ok"] is False and document["params"]["l1/W"]["ok"] is False


def test_large_parameters_are_sampled_repeatably():
    s = spec.load_spec_file(Path(SPECS[0]).parent / "residual_mlp.yaml")
    first, again = check_spec(s), check_spec(s)
    assert [c.to_dict() for c in first.params] == [c.to_dict() for c in again.params]
    block = next(c for c in first.params if c.name == "block1/W")
    assert block.size == 256 and block.checked == 64
    assert all(c.checked == min(c.size, 8) for c in check_spec(s, max_elements=8).params)


def test_float64_does_not_leak_into_the_spec_or_later_runs():
    s = spec.load_spec_file(Path(SPECS[0]).parent / "seed_static.yaml")
    check_spec(s)
    result, model = spec.run(s)
    assert all(p.dtype == np.float32 for p in model.params())


def test_a_spec_without_a_loss_is_a_typed_error():
    s = spec.load_spec_text("graphtool: 1\ninputs: {x: {zeros: [2, 3]}}\ngraph: [relu]\n")
    with pytest.raises(NoLossError, match="nothing to differentiate"):
        check_spec(s)
