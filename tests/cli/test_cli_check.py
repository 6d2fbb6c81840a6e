"""`graphtool check`: every shipped spec passes (exit 0, a row per parameter); an op with a
wrong backward fails (exit 1); a bad spec exits 65 and a missing one 66."""

import json
from pathlib import Path

import pytest
from continuous_inputs import continuous_inputs
from typer.testing import CliRunner

from cli.app import app
from graphcore import FunctionNode, register_op, spec
from graphcore.registry import _ops

SPECS = sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.yaml"))
runner = CliRunner()

BROKEN_SPEC = """\
graphtool: 1
name: broken
inputs:
  x: {random: normal, shape: [4, 3]}
graph:
  - {op: linear, out_size: 5, name: l1}
  - test_cli_bad_square
  - {op: linear, out_size: 2, name: l2}
loss: {op: sum}
"""


def check(*args):
    return runner.invoke(app, ["check", *map(str, args)])


@pytest.fixture
def broken_spec(tmp_path):
    """A spec using an op whose backward forgets the 2 of d(x*x)/dx; unregistered after."""

    class BadSquare(FunctionNode):
        name = "test_cli_bad_square"
        arity = 1

        def forward(self, inputs):
            self.retain_inputs((0,))
            return inputs[0] * inputs[0],

        def backward(self, indexes, grad_outputs):
            x, = self.get_retained_inputs()
            return grad_outputs[0] * x,

    register_op(BadSquare)
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN_SPEC)
    yield path
    _ops.pop(BadSquare.name, None)


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_every_shipped_spec_passes(path, tmp_path):
    result = check(path, *continuous_inputs(path.stem, tmp_path))
    assert result.exit_code == 0, result.stderr
    _, model = spec.run(spec.load_spec_file(path))
    names = [name.lstrip("/") for name, _ in model.namedparams()]
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[2:]}
    if names:
        assert list(rows) == names
        assert all(row[-1] == "ok" for row in rows.values())
    else:
        assert "no parameters to check" in result.stdout
    assert result.stderr == f"gradient check passed: {len(names)} parameter(s)\n"


def test_json_document():
    result = check(SPECS[0].parent / "residual_mlp.yaml", "--json", "--seed", "3")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (doc["schema_version"], doc["spec"], doc["seed"], doc["mode"], doc["ok"]) == (
        1, "residual_mlp", 3, "dynamic", True)
    assert doc["params"]["block1/W"]["checked"] == 64
    assert doc["params"]["block1/W"]["shape"] == [16, 16]
    assert all(p["max_rel_error"] <= doc["rtol"] for p in doc["params"].values())


def test_a_wrong_backward_exits_1(broken_spec):
    result = check(broken_spec)
    assert result.exit_code == 1
    rows = {line.split()[0]: line.split()[-1] for line in result.stdout.splitlines()[2:]}
    assert rows == {"l1/W": "FAIL", "l1/b": "FAIL", "l2/W": "ok", "l2/b": "ok"}
    assert result.stderr.startswith("error: gradient check failed for 2 parameter(s): "
                                     "l1/W, l1/b\n")
    result = check(broken_spec, "--json", "-q")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and doc["params"]["l1/W"]["ok"] is False


def test_a_bad_spec_exits_65(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("graphtool: 1\ninputs: {x: {zeros: [2, 3]}}\ngraph: [rellu]\n"
                    "loss: {op: sum}\n")
    result = check(path)
    assert result.exit_code == 65
    assert result.stdout == ""
    assert f"{path}:3:9: error:" in result.stderr and "did you mean 'relu'" in result.stderr


def test_a_missing_spec_exits_66(tmp_path):
    result = check(tmp_path / "missing.yaml")
    assert result.exit_code == 66 and result.stdout == ""
    assert "missing.yaml" in result.stderr and "Traceback" not in result.stderr


def test_a_spec_without_a_loss_exits_1(tmp_path):
    path = tmp_path / "no_loss.yaml"
    path.write_text("graphtool: 1\ninputs: {x: {zeros: [2, 3]}}\ngraph: [relu]\n")
    result = check(path)
    assert result.exit_code == 1 and result.stdout == ""
    assert "has no loss, so there is nothing to differentiate" in result.stderr
