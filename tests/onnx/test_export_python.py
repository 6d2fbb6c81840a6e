"""graphcore.onnx.export(model, args, path): onnx-chainer's call shape, for traced Python
models; and the command's bad cases: one line each, the documented exit code, no file."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import invoke

import graphcore.functions as F
import graphcore.links as L
from graphcore.links import Chain

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

from graphcore.onnx import ExportError, export  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class MLP(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(4, 8)
            self.l2 = L.Linear(8, 3)

    def __call__(self, x):
        return F.softmax(self.l2(F.tanh(self.l1(x))))


def test_python_model_exports_with_symbolic_batch(tmp_path):
    model = MLP()
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    path = tmp_path / "mlp.onnx"
    proto = export(model, x, str(path))
    assert path.read_bytes() == proto.SerializeToString()
    onnx.checker.check_model(proto, full_check=True)
    assert {i.name for i in proto.graph.initializer} >= {"l1/W", "l1/b", "l2/W", "l2/b"}
    session = ort.InferenceSession(str(path))
    assert session.get_inputs()[0].shape[0] == "batch"
    for n in (5, 1, 9):
        xs = np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)
        (got,) = session.run(None, {"input_0": xs})
        np.testing.assert_allclose(got, model(xs).array, rtol=1e-5, atol=1e-6)


def test_python_export_into_a_missing_folder_writes_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        export(MLP(), np.zeros((2, 4), np.float32), str(tmp_path / "missing" / "m.onnx"))
    assert list(tmp_path.iterdir()) == []


def test_python_export_replaces_a_model_whole(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(b"old")
    export(MLP(), np.zeros((2, 4), np.float32), str(path))
    onnx.checker.check_model(onnx.load(str(path)))
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]


def test_names_count_must_match():
    with pytest.raises(ExportError, match="input_names has 2 names for 1 inputs"):
        export(MLP(), np.zeros((2, 4), np.float32), input_names=["a", "b"])


def test_an_input_traced_as_a_constant_is_refused():
    def model(x, keep):
        return x * keep.array  # numpy on the input's values: no node, a constant in the trace

    x, keep = np.ones((2, 3), np.float32), np.array([[1, 0, 1], [0, 1, 1]], np.float32)
    with pytest.raises(ExportError, match="input 'keep' reaches the outputs only through values "
                       "traced as constants"):
        export(model, (x, keep), input_names=["x", "keep"])


def _one_line_error(result, code, *parts, at=None):
    """One error line with ``parts``; ``at``: it starts ``{at}: error: `` (file:line:col)."""
    assert result.exit_code == code, result.output
    lines = result.output.strip().splitlines()
    start = "error: " if at is None else f"{at}: error: "
    assert lines[0].startswith(start) and all(p in lines[0] for p in parts), result.output
    assert "Traceback" not in result.output


def test_plugin_op_without_mapping_names_op_and_position(tmp_path):
    out = tmp_path / "m.onnx"
    result = invoke("export", ROOT / "examples/swish.yaml", "--plugin",
                    ROOT / "examples/swish_ops.py", "-o", out)
    _one_line_error(result, 1, "op 'swish'", "no ONNX mapping",
                    at=f"{ROOT / 'examples/swish.yaml'}:9:5")
    assert list(tmp_path.iterdir()) == []


def test_opset_too_old_names_op_and_minimum(tmp_path):
    spec = tmp_path / "norm.yaml"
    spec.write_text("graphtool: 1\nname: norm\nkind: static\ninputs:\n"
                    "  x: {random: normal, shape: [3, 4]}\ngraph:\n"
                    "  - {op: layer_normalization, name: ln}\noutputs: [_]\n")
    out = tmp_path / "m.onnx"
    result = invoke("export", spec, "--opset", 16, "-o", out)
    _one_line_error(result, 1, "op 'layer_normalization'", "opset 17", at=f"{spec}:7:5")
    assert not out.exists()
    assert invoke("export", spec, "--opset", 17, "-o", out).exit_code == 0
    assert out.exists()


def test_output_that_cannot_be_created_exits_73(tmp_path):
    (tmp_path / "afile").write_text("")
    result = invoke("export", ROOT / "specs/seed_static.yaml", "-o", tmp_path / "afile/m.onnx")
    _one_line_error(result, 73, "cannot create output")


def test_missing_folder_is_created(tmp_path):
    out = tmp_path / "new/folder/m.onnx"  # as every graphtool writer does
    assert invoke("export", ROOT / "specs/seed_static.yaml", "-o", out, "-q").exit_code == 0
    onnx.checker.check_model(onnx.load(str(out)))


def test_without_onnx_exit_69_with_the_install_hint(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx raises ImportError
    result = invoke("export", ROOT / "specs/seed_static.yaml", "-o", tmp_path / "m.onnx")
    assert result.exit_code == 69, result.output
    assert "pip install -e '.[onnx]'" in result.output
    assert list(tmp_path.iterdir()) == []


def test_default_output_is_under_out_dir(tmp_path):
    result = invoke("export", ROOT / "specs/seed_static.yaml", "--out-dir", tmp_path / "outs")
    assert result.exit_code == 0, result.output
    model = tmp_path / "outs/seed_static/model.onnx"
    assert f"wrote {model}" in result.output
    onnx.checker.check_model(onnx.load(str(model)))
