"""Convolutional specs through the command line: specs/lenet.yaml runs and draws (its gradient
check is test_cli_check's, one per shipped spec and mode);
shape and option mistakes in convolution and pooling steps are located one-line errors."""

import json
from pathlib import Path

from cli_helpers import invoke

ROOT = Path(__file__).resolve().parents[2]
LENET = ROOT / "specs" / "lenet.yaml"


def test_lenet_runs_and_draws(tmp_path, shipped):
    result = shipped.run(LENET).result
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["outputs"]["logits"]["shape"] == [4, 10]
    viz = invoke("viz", LENET, "--format", "dot", "--out-dir", tmp_path)
    assert viz.exit_code == 0, viz.stderr
    dot = (tmp_path / "lenet" / "graph.dot").read_text()
    for label in ("Convolution2DFunction", "MaxPooling2D", "conv1/W: (20, 1, 5, 5)",
                  "conv2/W: (50, 20, 5, 5)", "fc1/W: (500, 800)", "Reshape"):
        assert label in dot, label


def test_ops_lists_the_convolutional_ops_and_layers():
    result = invoke("ops")
    assert result.exit_code == 0
    for name in ("convolution_2d", "convolution_1d", "deconvolution_2d", "max_pooling_2d",
                 "average_pooling_2d", "max_pooling_1d", "average_pooling_1d",
                 "local_response_normalization", "accuracy"):
        assert name in result.stdout, name


SPEC = """\
graphtool: 1
name: conv_errors
inputs:
  x: {{random: normal, shape: [2, 3, 8, 8]}}
graph:
{steps}
loss: {{op: sum}}
"""


def _run(tmp_path, steps):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(steps=steps))
    return invoke("run", path, "--out-dir", tmp_path), path


def test_a_window_larger_than_the_input_is_a_located_error_at_load(tmp_path):
    result, path = _run(tmp_path, "  - {op: convolution_2d, out_channels: 4, ksize: 3, "
                        "name: c1}\n  - {op: max_pooling_2d, ksize: 9, cover_all: false}")
    assert result.exit_code == 65
    assert f"{path}:7:5: error: max_pooling_2d: the window (9, 9)" in result.stderr
    assert "Traceback" not in result.stderr


def test_channels_that_do_not_match_the_filters_are_located(tmp_path):
    result, path = _run(tmp_path, "  - {op: convolution_2d, out_channels: 4, ksize: 3, "
                        "in_channels: 2, name: c1}")
    assert result.exit_code == 65
    assert f"{path}:6:5: error: convolution_2d: axis 1 is 3, but in_channels is 2" in \
        result.stderr


def test_bad_option_values_are_spec_errors(tmp_path):
    result, path = _run(tmp_path, "  - {op: convolution_2d, out_channels: 4, ksize: [3, 0], "
                        "name: c1}")
    assert result.exit_code == 65
    assert f"{path}:6:" in result.stderr
    assert "each element of attribute 'ksize' of 'convolution_2d' must be at least 1" in \
        result.stderr
    result, path = _run(tmp_path, "  - {op: max_pooling_2d, ksize: 2, pad: [1, -1]}")
    assert result.exit_code == 65
    assert "each element of attribute 'pad' of 'max_pooling_2d' must be at least 0" in \
        result.stderr


def test_a_size_with_the_wrong_number_of_axes_is_located(tmp_path):
    result, path = _run(tmp_path, "  - {op: convolution_2d, out_channels: 4, ksize: [3, 3, 3],"
                        " name: c1}")
    assert result.exit_code == 65
    assert f"{path}:6:5: error: convolution_2d: ksize must be an integer or 2 integers" in \
        result.stderr
    result, path = _run(tmp_path, "  - {op: max_pooling_2d, ksize: [2, 2, 2]}")
    assert f"{path}:6:5: error: max_pooling_2d: MaxPooling2D: ksize must be an integer or 2 " \
        "integers" in result.stderr
