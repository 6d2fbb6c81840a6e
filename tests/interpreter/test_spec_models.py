"""Every shipped spec runs forward and backward and its parameter gradients pass a numerical
check; the seed specs compute exactly what the seed's Python examples compute."""

from pathlib import Path

import numpy as np
import pytest
from continuous_inputs import continuous_arrays

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import Chain, Variable, spec
from graphcore.gradient_check import check_backward
from graphcore.interpreter.parameters import SpecModel, seeded
from graphcore.language.validation import MODEL_ATTRIBUTES

SPECS = sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.yaml"))


def test_the_specs_folder_has_the_promised_models():
    names = {p.stem for p in SPECS}
    assert {"seed_static", "seed_dynamic", "residual_mlp", "rnn_sequences", "adaptive_depth",
            "param_depth", "csv_classifier"} <= names
    for path in SPECS:
        assert path.read_text().startswith("# "), f"{path.name} needs a comment header"


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_spec_runs_forward_and_backward(path):
    s = spec.load_spec_file(path)
    result, model = spec.run(s)
    assert result.loss is not None and np.isfinite(result.loss)
    assert result.outputs and result.timing_ms["total"] > 0
    used = [p for p in model.params() if p.array is not None]
    for name, p in model.namedparams():
        if p.grad is not None:
            assert p.grad.shape == p.shape, name
    if used:
        assert any(p.grad is not None and np.abs(p.grad).sum() > 0 for p in used)


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_spec_parameter_gradients_pass_a_numerical_check(path):
    s = spec.load_spec_file(path)
    _, model = spec.run(s)  # initializes lazily sized parameters
    params = [p for p in model.params() if p.array is not None]
    for p in params:
        p.array = p.array.astype(np.float64)
    inputs = spec.prepare_inputs(s, model, spec.make_inputs(s.inputs, s.seed, s.folder))
    inputs.update(continuous_arrays(path.stem))  # data whose ties have no derivative
    inputs = {k: _float64(v) for k, v in inputs.items()}

    def loss():  # the same dropout masks at every evaluation (graphtool check does this too)
        with seeded(s.seed):
            return spec.loss_function(s, model, inputs)

    check_backward(loss, (), None, params=params, eps=1e-6, atol=1e-6, rtol=1e-5)


def _float64(value):
    if isinstance(value, list):
        return [_float64(v) for v in value]
    return value.astype(np.float64) if value.dtype.kind == "f" else value


# --- the seed's Python examples, as the seed wrote them (chainer -> graphcore) -----------------
class StaticGraphModel(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(None, 5)
            self.l2 = L.Linear(5, 2)

    def forward(self, x):
        h = F.relu(self.l1(x))
        return self.l2(h)


def dynamic_graph_example(x, apply_relu):
    h = F.relu(x) if apply_relu else F.sigmoid(x)
    return F.sum(h) if x.array.mean() > 0 else F.prod(h)


def test_seed_static_spec_equals_the_python_model():
    s = spec.load_spec_file(Path(__file__).resolve().parents[2] / "specs" / "seed_static.yaml")
    inputs = spec.make_inputs(s.inputs, s.seed, s.folder)
    result, model = spec.run(s, inputs=inputs)
    python = StaticGraphModel()
    python(inputs["x"])
    python.l1.copyparams(model.l1)
    python.l2.copyparams(model.l2)
    python.cleargrads()
    y = python(inputs["x"])
    F.sum(y).backward()
    np.testing.assert_array_equal(result.outputs["y"].array, y.array)
    for name, p in python.namedparams():
        np.testing.assert_allclose(dict(model.namedparams())[name].grad, p.grad, rtol=1e-6)


@pytest.mark.parametrize("apply_relu", [True, False])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_seed_dynamic_spec_equals_the_python_function(apply_relu, sign):
    s = spec.load_spec_file(Path(__file__).resolve().parents[2] / "specs" / "seed_dynamic.yaml",
                            overrides=[f"params.apply_relu={str(apply_relu).lower()}"])
    x_data = (np.abs(np.random.default_rng(3).standard_normal(5)) * sign + 0.1 * sign)
    x_data = x_data.astype(np.float32)
    x_spec = Variable(x_data.copy())
    result, _ = spec.run(s, inputs={"x": x_spec})
    x_py = Variable(x_data.copy())
    y = dynamic_graph_example(x_py, apply_relu)
    y.backward()
    np.testing.assert_allclose(result.outputs["_"].array, y.array, rtol=1e-6)
    np.testing.assert_allclose(x_spec.grad, x_py.grad, rtol=1e-6)
    branches = [e.detail["branch"] for e in result.path]
    assert branches == ["then" if apply_relu else "else", "then" if sign > 0 else "else"]


def test_graphcore_spec_is_reachable_from_the_package():
    assert graphcore.spec.load_spec_file is spec.load_spec_file


def test_every_attribute_of_the_model_is_a_name_no_layer_scope_may_take():
    """A layer scope becomes an attribute of ``SpecModel``; the language refuses the names
    that would replace one (``MODEL_ATTRIBUTES``), so that list must cover every attribute."""
    assert set(dir(SpecModel)) <= MODEL_ATTRIBUTES
    assert {"spec", "name", "layer", "initialized", "params", "cleargrads"} <= MODEL_ATTRIBUTES
