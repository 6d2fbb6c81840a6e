"""A trained model round-trips through the real CLI: ``graphtool train --save p.npz``, then
``graphtool export --params p.npz``; ONNX Runtime's predictions equal ``graphtool predict``'s
on the same rows (rows other than the traced ones, at another batch size)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.app import app

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

# 1-d convolution, LRN, both 1-d poolings and a 1-d deconvolution, trained on 48 rows
CONV1D_SPEC = """\
graphtool: 1
name: conv1d_round_trip
seed: 0
data:
  file: rows.npz
  x: {key: x, dtype: float32, shape: [batch, 64]}
  t: {key: t}
validation: 0.25
train:
  epochs: 3
  batch_size: 8
  optimizer: {name: adam, alpha: 0.01}
graph:
  - {op: reshape, from: x, shape: [-1, 4, 16]}
  - {op: convolution_1d, out_channels: 6, ksize: 3, pad: 1, name: c1}
  - {op: local_response_normalization, n: 3, k: 1.0, alpha: 0.1}
  - {op: max_pooling_1d, ksize: 3, stride: 2, pad: 1}
  - {op: deconvolution_1d, out_channels: 4, ksize: 2, stride: 2, name: d1}
  - tanh
  - {op: average_pooling_1d, ksize: 2}
  - {op: linear, out_size: 3, n_batch_axes: 1, name: out, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
outputs: [logits]
"""


def _cli(*args) -> None:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output


def _round_trip(tmp_path: Path, spec: Path, rows: np.ndarray, *train_args) -> None:
    params, model, x, preds = (tmp_path / n for n in ("p.npz", "m.onnx", "x.npy", "y.npz"))
    outputs = tmp_path / "outputs"
    _cli("train", spec, *train_args, "--save", params, "--out-dir", outputs, "-q")
    _cli("export", spec, "--params", params, "-o", model, "-q")
    np.save(x, rows)
    _cli("predict", spec, "--params", params, "--input", f"x={x}", "-o", preds,
         "--out-dir", outputs, "-q")
    with np.load(preds) as saved:
        want = saved["logits"]
    session = ort.InferenceSession(str(model))
    assert session.get_inputs()[0].shape[0] == "batch"
    (got,) = session.run(["logits"], {"x": rows})
    assert got.shape == want.shape == (len(rows), want.shape[1])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # the trained parameters, not the initial ones, made both
    _cli("export", spec, "-o", tmp_path / "untrained.onnx", "-q")
    (untrained,) = ort.InferenceSession(str(tmp_path / "untrained.onnx")).run(
        ["logits"], {"x": rows})
    assert not np.allclose(untrained, want, rtol=1e-3, atol=1e-3)


def test_digits_mlp_predictions_equal_onnx_runtime(tmp_path):
    with np.load(ROOT / "specs/data/digits.npz") as data:
        rows = data["images"][-37:].astype(np.float32)
    _round_trip(tmp_path, ROOT / "specs/digits_mlp.yaml", rows, "--epochs", "2")


def test_conv1d_spec_predictions_equal_onnx_runtime(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((48, 64)).astype(np.float32)
    t = (x[:, :3].argmax(axis=1)).astype(np.int32)
    np.savez(tmp_path / "rows.npz", x=x, t=t)
    spec = tmp_path / "conv1d.yaml"
    spec.write_text(CONV1D_SPEC)
    rows = rng.standard_normal((13, 64)).astype(np.float32)
    _round_trip(tmp_path, spec, rows)
