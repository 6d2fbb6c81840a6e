"""NaN and Inf in what the commands report: strict RFC 8259 JSON (null plus a `nonfinite`
list), `inf`/`nan` in the tables, one warning line naming the first op that made one, and no
raw numpy RuntimeWarning on stderr."""

import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import invoke

from cli import output

# A finite loss whose gradient overflows: exp(exp(exp(1.5 + small))) is 2.6e38 in float32,
# its derivative is that times 88 times 4.5.
GRADIENT_OVERFLOW = """\
graphtool: 1
name: gradient_overflow
seed: 0
inputs:
  x: {ones: [1, 1]}
graph:
  - {op: linear, out_size: 1, name: l1}
  - {op: scale, by: 0.0001}
  - {op: add_scalar, value: 1.5}
  - exp
  - exp
  - exp
loss: {op: sum}
"""
# No loss: the outputs themselves overflow.
OUTPUT_OVERFLOW = """\
graphtool: 1
name: output_overflow
seed: 0
inputs:
  x: {random: normal, shape: [2, 3]}
graph:
  - {op: linear, out_size: 2, name: l1}
  - exp
  - exp
  - exp
"""
# Gradients of 1e20 are finite; the squares in their norm are not, in float32.
LARGE_GRADIENTS = """\
graphtool: 1
name: large_gradients
seed: 0
inputs:
  x: {ones: [2, 3]}
graph:
  - {op: linear, out_size: 2, name: l1}
  - {op: scale, by: 1.0e+20}
loss: {op: sum}
"""
# An empty batch reaches batch normalization: numpy warns "Mean of empty slice".
EMPTY_BATCH = """\
graphtool: 1
name: empty_batch
seed: 0
inputs:
  x: {random: normal, shape: [2, 4]}
graph:
  - {op: get_item, index: []}
  - {op: linear, out_size: 3, name: l1}
  - {op: batch_normalization, name: bn}
outputs: [_]
"""
LINEAR_ONLY = """\
graphtool: 1
name: linear_only
seed: 0
inputs:
  x: {random: normal, shape: [3, 4]}
graph:
  - {op: linear, out_size: 2, name: l1}
  - {op: scale, by: 100.0}
"""


def strict_json(text: str):
    """Parse as RFC 8259 does: NaN, Infinity and -Infinity are not JSON."""
    def refuse(name):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def spec_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def assert_no_raw_warnings(stderr: str) -> None:
    assert "RuntimeWarning" not in stderr and "Traceback" not in stderr
    assert "site-packages" not in stderr and not any(line.startswith(" ") for line in
                                             stderr.splitlines()), stderr


# --- JSON -----------------------------------------------------------------------------------
def test_to_json_writes_nan_and_inf_as_null_and_lists_them():
    text = output.to_json({"b": [1.0, np.float32("nan")], "a": {"x/y": -math.inf},
                           "c": np.array([np.inf, 2.0]), "d": 3})
    doc = strict_json(text)
    assert doc["a"] == {"x/y": None} and doc["b"] == [1.0, None] and doc["c"] == [None, 2.0]
    assert doc["nonfinite"] == [{"path": ["a", "x/y"], "value": "-inf"},
                                {"path": ["b", 1], "value": "nan"},
                                {"path": ["c", 0], "value": "inf"}]
    assert "nonfinite" not in strict_json(output.to_json({"a": 1.5}))


def test_run_json_with_an_overflowing_gradient_is_valid_json(tmp_path):
    spec = spec_file(tmp_path, GRADIENT_OVERFLOW)
    result = invoke("run", spec, "--json", "--out-dir", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    doc = strict_json(result.stdout)
    assert doc["grads"] == {"l1/W": None, "l1/b": None}
    assert doc["nonfinite"] == [{"path": ["grads", "l1/W"], "value": "inf"},
                                {"path": ["grads", "l1/b"], "value": "inf"}]
    assert math.isfinite(doc["loss"])
    saved = strict_json((tmp_path / "out" / "gradient_overflow" / "run.json").read_text())
    assert saved["nonfinite"] == doc["nonfinite"]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert warnings == ["warning: NaN or Inf in the results; the first: backward of Exp "
                        "produced NaN or Inf in the gradient of input 0"]
    assert_no_raw_warnings(result.stderr)


def test_run_table_shows_inf_and_names_the_first_op(tmp_path):
    spec = spec_file(tmp_path, OUTPUT_OVERFLOW)
    result = invoke("run", spec, "--out-dir", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("_ "))
    assert row.split()[4:] == ["inf", "nan", row.split()[6], "inf"]  # mean, std, min, max
    assert "warning: NaN or Inf in the results; the first: Exp produced NaN or Inf in output 0 " \
           "from finite inputs (2, 2)" in result.stderr
    assert_no_raw_warnings(result.stderr)


def test_a_finite_1e38_input_is_no_internal_error(tmp_path):
    spec = spec_file(tmp_path, LINEAR_ONLY)
    buffer = io.BytesIO()
    np.save(buffer, np.full((3, 4), 1e38, np.float32))
    result = invoke("run", spec, "--input", "x=-", "--json", "--out-dir", tmp_path / "out",
                    input=buffer.getvalue())
    assert result.exit_code == 0, result.stderr
    doc = strict_json(result.stdout)
    assert {tuple(e["path"]) for e in doc["nonfinite"]} >= {("outputs", "_", "mean")}
    assert "the first: _ * 100.0 produced NaN or Inf" in result.stderr
    assert_no_raw_warnings(result.stderr)


@pytest.mark.parametrize("command", [("check",), ("bench", "--repeat", "1", "--warmup", "0",
                                                  "--out-dir", "{tmp}/out")])
def test_other_json_commands_take_the_overflowing_spec(command, tmp_path):
    spec = spec_file(tmp_path, GRADIENT_OVERFLOW)
    result = invoke(*(a.format(tmp=tmp_path) for a in command), spec, "--json")
    assert result.exit_code in (0, 1), result.stderr  # a failed check is 1, never 70
    strict_json(result.stdout)
    assert_no_raw_warnings(result.stderr)


# --- numpy's warnings -----------------------------------------------------------------------
def test_gradient_norms_of_large_finite_gradients_are_finite_and_quiet(tmp_path):
    spec = spec_file(tmp_path, LARGE_GRADIENTS)
    result = invoke("run", spec, "--json", "--out-dir", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    doc = strict_json(result.stdout)
    assert doc["grads"]["l1/W"] == pytest.approx(np.sqrt(6) * 2e20, rel=1e-6)
    assert "nonfinite" not in doc and result.stderr.startswith("wrote ")


def test_numpy_warnings_become_one_line_naming_the_op(tmp_path):
    spec = spec_file(tmp_path, EMPTY_BATCH)
    result = invoke("run", spec, "--out-dir", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    assert_no_raw_warnings(result.stderr)
    assert "warning: Mean forward: Mean of empty slice" in result.stderr.splitlines()
    lines = result.stderr.splitlines()
    assert len(lines) == len(set(lines))  # each said once


def test_an_input_holding_inf_is_named_as_the_source(tmp_path):
    spec = spec_file(tmp_path, LINEAR_ONLY)
    array = np.ones((3, 4), np.float32)
    array[0, 0] = np.inf
    buffer = io.BytesIO()
    np.save(buffer, array)
    result = invoke("run", spec, "--input", "x=-", "--json", "--out-dir", tmp_path / "out",
                    input=buffer.getvalue())
    assert result.exit_code == 0, result.stderr
    strict_json(result.stdout)
    assert "warning: NaN or Inf in the results; the first: input 'x' holds NaN or Inf" \
        in result.stderr.splitlines()
