"""`graphtool check`: every shipped spec passes on its own data in both modes (exit 0, a row per
parameter); a kink is named with its step and checked nearby (exit 0); a plugin op with a wrong
backward fails (exit 1), also where its input sits at a relu's kink; a bad spec exits 65 and a
missing one 66.

The shipped specs' checks are the session's (``shipped_specs``), shared with the product
matrix."""

import json
from pathlib import Path

import pytest
from cli_helpers import invoke
from shipped_specs import SHIPPED, plugin_args

from graphcore import spec

ROOT = Path(__file__).resolve().parents[2]

BAD_TRIPLE = '''
import graphcore


@graphcore.register_op
class BadTriple(graphcore.FunctionNode):
    """3 x, whose backward says 2."""
    name = "test_cli_bad_triple"
    arity = 1

    def forward(self, inputs):
        return inputs[0] * 3,

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0] * 2,
'''

# Every input of the relu is exactly 0 (zero inputs, zero-initialized biases): its kink.
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


def check(*args):
    return invoke("check", *args)


def rows_of(stdout):
    """The table's rows by parameter: its cells split on runs of spaces."""
    lines = stdout.splitlines()[2:]
    return {line.split()[0]: line.split("  ")[-1].strip() for line in lines
            if line and not line.split()[0].endswith(":")}


@pytest.fixture
def kink_spec(tmp_path):
    """``kink_spec(op)``: the path of AT_A_KINK with OP in place, and the bad-triple plugin."""
    (tmp_path / "bad_ops.py").write_text(BAD_TRIPLE)

    def make(op):
        path = tmp_path / f"{op}.yaml"
        path.write_text(AT_A_KINK.replace("OP", op))
        return path, ["--plugin", tmp_path / "bad_ops.py"]
    return make


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_spec_passes_in_both_modes(path, shipped):
    dynamic, static = shipped.check(path, "dynamic"), shipped.check(path, "static")
    assert dynamic.exit_code == 0, dynamic.stdout + dynamic.stderr
    assert static.exit_code == 0, static.stdout + static.stderr
    docs = json.loads(dynamic.stdout), json.loads(static.stdout)
    assert [d["mode"] for d in docs] == ["dynamic", "static"]
    assert docs[1]["loss"] == pytest.approx(docs[0]["loss"], rel=1e-9)
    for doc in docs:
        assert doc["ok"] is True
        assert {p["verdict"] for p in doc["params"].values()} <= {"passed", "passed_nearby"}
    if plugin_args(path):  # the plugin's op is registered only inside the command
        names = list(docs[0]["params"])
    else:
        _, model = spec.run(spec.load_spec_file(path))
        names = [name.lstrip("/") for name, _ in model.namedparams()]
    assert list(docs[0]["params"]) == sorted(names) == list(docs[1]["params"])
    assert dynamic.stderr.startswith(f"gradient check passed: {len(names)} parameter(s)")


def test_the_table_has_a_row_per_parameter():
    result = check(ROOT / "specs" / "seed_static.yaml")
    assert result.exit_code == 0, result.stderr
    _, model = spec.run(spec.load_spec_file(ROOT / "specs" / "seed_static.yaml"))
    names = [name.lstrip("/") for name, _ in model.namedparams()]
    assert rows_of(result.stdout) == dict.fromkeys(names, "ok")
    assert result.stderr == f"gradient check passed: {len(names)} parameter(s)\n"


def test_digits_cnn_names_the_kink_and_passes(tmp_path):
    result = check(ROOT / "specs" / "digits_cnn.yaml")
    assert result.exit_code == 0, result.stderr
    assert rows_of(result.stdout)["conv1/b"] == "ok nearby"
    assert "rows 16 of 1797" in result.stdout.splitlines()[0]
    assert ("conv1/b: no derivative at the spec's point: relu at "
            f"{ROOT / 'specs' / 'digits_cnn.yaml'}:20:5, ") in result.stdout
    assert "checked at a nearby point instead (every parameter moved by 0.1% of its " \
           "scale): passed" in result.stdout
    assert result.stderr == ("gradient check passed: 8 parameter(s), 1 of them at a nearby "
                             "point (the loss has no derivative at the spec's own: conv1/b)\n")


def test_json_document():
    result = check(ROOT / "specs" / "residual_mlp.yaml", "--json", "--seed", "3")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (doc["schema_version"], doc["spec"], doc["seed"], doc["mode"], doc["ok"]) == (
        1, "residual_mlp", 3, "dynamic", True)
    block = doc["params"]["block1/W"]
    assert block["shape"] == [16, 16] and block["verdict"] == "passed"
    assert block["kinks"] == [] and block["nearby_scale"] is None
    assert block["backward"] == pytest.approx(block["numeric"], rel=doc["rtol"])
    assert all(p["rel_error"] <= doc["rtol"] for p in doc["params"].values())
    assert doc["verdicts"]["passed"] == len(doc["params"]) and doc["rows"] is None


def test_a_wrong_backward_exits_1_also_at_a_kink(kink_spec):
    path, plugin = kink_spec("test_cli_bad_triple")
    result = check(path, *plugin)
    assert result.exit_code == 1
    assert rows_of(result.stdout) == {"l1/W": "ok", "l1/b": "FAIL", "l2/W": "ok", "l2/b": "ok"}
    assert f"l1/b: no derivative at the spec's point: relu at {path}:7:5, 20 elements at " \
           "its kink; checked at a nearby point instead" in result.stdout
    assert result.stdout.rstrip().endswith(": FAILED")
    assert result.stderr.startswith("error: gradient check failed for 1 parameter(s): l1/b\n")
    doc = json.loads(check(path, *plugin, "--json", "-q", "--mode", "static").stdout)
    assert doc["ok"] is False and doc["params"]["l1/b"]["verdict"] == "failed"


def test_a_kink_alone_exits_0(kink_spec):
    path, _ = kink_spec("tanh")
    result = check(path)
    assert result.exit_code == 0, result.stderr
    assert rows_of(result.stdout)["l1/b"] == "ok nearby"
    doc = json.loads(check(path, "--json").stdout)
    assert doc["params"]["l1/b"]["verdict"] == "passed_nearby"
    assert doc["params"]["l1/b"]["kinks"] == [
        {"op": "relu", "step": "relu", "at": f"{path}:7:5", "elements": 20}]


def test_batch_size_picks_the_rows(tmp_path):
    result = check(ROOT / "specs" / "digits_mlp.yaml", "--batch-size", "4", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["rows"] == {"checked": 4, "of": 1797}
    bad = check(ROOT / "specs" / "digits_mlp.yaml", "--batch-size", "0")
    assert bad.exit_code == 2


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
