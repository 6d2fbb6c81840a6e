"""`--plugin FILE` loads a user's op module explicitly; a spec alone never imports anything."""

import json

import pytest
from typer.testing import CliRunner

from cli.app import app
from graphcore import registry

runner = CliRunner()

PLUGIN = '''
import graphcore


@graphcore.register_op
class Cube(graphcore.FunctionNode):
    """x ** 3, elementwise."""
    name = "cube_test_plugin"
    elementwise = True
    arity = 1

    def forward(self, inputs):
        return inputs[0] ** 3,

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return 3 * x * x * grad_outputs[0],
'''

SPEC = """graphtool: 1
inputs:
  x: {random: normal, shape: [2, 3]}
graph:
  - {op: linear, out_size: 2, name: l1}
  - cube_test_plugin
loss: {op: sum}
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "ops.py").write_text(PLUGIN)
    (tmp_path / "spec.yaml").write_text(SPEC)
    yield tmp_path
    registry._ops.pop("cube_test_plugin", None)


def test_a_spec_using_a_plugin_op_needs_the_plugin(files):
    without = runner.invoke(app, ["run", str(files / "spec.yaml"), "--out-dir", str(files)])
    assert without.exit_code == 65 and "unknown op 'cube_test_plugin'" in without.stderr
    result = runner.invoke(app, ["run", str(files / "spec.yaml"), "--plugin",
                                 str(files / "ops.py"), "--json", "--out-dir", str(files)])
    assert result.exit_code == 0, result.stderr
    assert set(json.loads(result.stdout)["grads"]) == {"l1/W", "l1/b"}
    check = runner.invoke(app, ["check", str(files / "spec.yaml"), "--plugin",
                                str(files / "ops.py")])
    assert check.exit_code == 0, check.stderr


def test_a_missing_or_failing_plugin(files):
    missing = runner.invoke(app, ["run", str(files / "spec.yaml"), "--plugin",
                                  str(files / "nope.py")])
    assert missing.exit_code == 66
    assert "--plugin" in missing.stderr and "not found" in missing.stderr
    (files / "bad.py").write_text("raise ValueError('broken on purpose')\n")
    bad = runner.invoke(app, ["run", str(files / "spec.yaml"), "--plugin", str(files / "bad.py")])
    assert bad.exit_code == 1
    assert "failed while loading: ValueError: broken on purpose" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_the_example_plugin_op_has_exact_first_and_second_order_gradients():
    import importlib.util
    from pathlib import Path

    import numpy as np

    from graphcore.gradient_check import check_backward, check_double_backward

    path = Path(__file__).resolve().parents[2] / "examples" / "swish_ops.py"
    spec = importlib.util.spec_from_file_location("swish_ops_example", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        rng = np.random.default_rng(0)
        x, gy, ggx = (rng.standard_normal((3, 4)) for _ in range(3))
        check_backward(module.swish, x, gy, dtype=np.float64)
        check_double_backward(module.swish, x, gy, ggx, dtype=np.float64)
    finally:
        registry._ops.pop("swish", None)
