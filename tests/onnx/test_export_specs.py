"""Every spec in specs/ either exports (onnx.checker passes; ONNX Runtime's outputs equal
graphtool's on several inputs and on another batch size) or is refused with its reason."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.app import app
from graphcore.spec import build_model, load_spec_file, make_inputs, prepare_inputs, run_spec

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

from onnx_helpers import (  # noqa: E402
    assert_equal,
    assert_runs_equal,
    graphtool_outputs,
    onnx_outputs,
    ort_session,
)

from graphcore.onnx import DEFAULT_OPSET, ExportError, export_spec  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted((ROOT / "specs").glob("*.yaml"))
# Specs the exporter refuses, each with what the message says (never a silently wrong model).
REFUSED: dict[str, str] = {}
# Specs whose exported batch axis stays fixed, with why; every other spec without sequence
# inputs gets the symbolic dim `batch` and is run at another batch size below.
FIXED_BATCH: dict[str, str] = {}  # spec name -> why its batch size is baked into the model
# The tolerance (rtol 1e-5, atol 1e-6) holds for every spec but lenet: its logits sum
# 500- and 800-term float32 dot products after two convolutions, and ONNX Runtime adds them in
# another order (seen: 1.3e-6 absolute on a logit of 0.0195, outputs of magnitude ~1.5).
ATOL = {"lenet": 3e-6}
runner = CliRunner()


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_spec_exports_and_matches_onnx_runtime(path):
    spec = load_spec_file(path)
    model = build_model(spec)
    inputs = prepare_inputs(spec, model, make_inputs(spec.inputs, spec.seed, spec.folder))
    if spec.name in REFUSED:
        with pytest.raises(ExportError, match=None) as info:
            export_spec(spec, model, inputs)
        assert REFUSED[spec.name] in str(info.value)
        assert "\n" not in str(info.value)
        return
    proto = export_spec(spec, model, inputs)
    onnx.checker.check_model(proto, full_check=True)
    meta = {p.key: p.value for p in proto.metadata_props}
    assert meta["spec"] == spec.name and meta["opset"] == str(DEFAULT_OPSET)
    assert meta["graphtool_version"]
    session = ort_session(proto)
    atol = ATOL.get(spec.name, 1e-6)
    for seed in (spec.seed, 1, 2):  # several inputs (the spec's file inputs stay as they are)
        rows = prepare_inputs(spec, model, make_inputs(spec.inputs, seed, spec.folder))
        assert_runs_equal(session, spec, model, rows, atol)
    sequences = [k for k, v in inputs.items() if isinstance(v, list)]
    if sequences:  # one example per call, of any length
        assert meta["length"] == "symbolic" and meta["batch"].startswith("one example")
        assert all(i.shape[0] == "length" for i in session.get_inputs() if i.name in sequences)
        return
    assert (meta["batch"] == "symbolic") == (spec.name not in FIXED_BATCH)
    if spec.name not in FIXED_BATCH:
        first = session.get_inputs()[0]
        assert first.shape[0] == "batch"
        read = {i.name for i in session.get_inputs()}
        bigger = {k: np.concatenate([v, v[::-1], v[:1]]) if k in read else v
                  for k, v in inputs.items()}
        forward_only = replace(spec, loss=None)  # labels keep the spec's batch size
        want = graphtool_outputs(forward_only, model, bigger)
        if spec.name != "seed_dynamic":  # sums its vector to one value
            assert next(iter(want.values())).shape[0] == 2 * len(inputs[first.name]) + 1
        assert_equal(onnx_outputs(session, bigger), want, atol)


def test_initializers_follow_the_spec_and_the_cli_matches_graphtool_run(tmp_path):
    out = tmp_path / "seed_static.onnx"
    result = runner.invoke(app, ["export", str(ROOT / "specs/seed_static.yaml"), "-o", str(out),
                                 "-q"])
    assert result.exit_code == 0, result.output
    proto = onnx.load(str(out))
    assert {i.name for i in proto.graph.initializer} >= {"l1/W", "l1/b", "l2/W", "l2/b"}
    assert [i.name for i in proto.graph.input] == ["x"]
    assert [o.name for o in proto.graph.output] == ["y"]
    arrays = tmp_path / "run.npz"
    result = runner.invoke(app, ["run", str(ROOT / "specs/seed_static.yaml"), "-o", str(arrays),
                                 "--out-dir", str(tmp_path / "outputs"), "-q"])
    assert result.exit_code == 0, result.output
    with np.load(arrays) as saved:  # closed at once (an open one warns when collected)
        key = next(k for k in saved.files if k.endswith("y"))
        want = saved[key]
    spec = load_spec_file(ROOT / "specs/seed_static.yaml")
    inputs = make_inputs(spec.inputs, spec.seed, spec.folder)
    got = onnx_outputs(ort_session(proto), inputs)
    np.testing.assert_allclose(got["y"], want, rtol=1e-5, atol=1e-6)


def test_trained_model_round_trips(tmp_path):
    """train --save p.npz, export --params p.npz: ONNX Runtime = graphtool run --params."""
    spec_file = str(ROOT / "specs/residual_mlp.yaml")
    params, model_file = tmp_path / "p.npz", tmp_path / "m.onnx"
    result = runner.invoke(app, ["train", spec_file, "--steps", "5", "--save", str(params),
                                 "--out-dir", str(tmp_path / "outputs"), "-q"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["export", spec_file, "--params", str(params), "-o",
                                 str(model_file), "-q"])
    assert result.exit_code == 0, result.output
    arrays = tmp_path / "run.npz"
    result = runner.invoke(app, ["run", spec_file, "--params", str(params), "-o", str(arrays),
                                 "--out-dir", str(tmp_path / "outputs"), "-q"])
    assert result.exit_code == 0, result.output
    spec = load_spec_file(spec_file)
    inputs = make_inputs(spec.inputs, spec.seed, spec.folder)
    got = onnx_outputs(ort_session(onnx.load(str(model_file))), inputs)
    untrained = onnx_outputs(ort_session(export_spec(spec, build_model(spec), inputs)), inputs)
    with np.load(arrays) as saved:
        want = saved["logits"]
    np.testing.assert_allclose(got["logits"], want, rtol=1e-5, atol=1e-6)
    assert not np.allclose(untrained["logits"], want)  # the parameters were the trained ones


def test_readme_lists_exactly_the_exportable_ops():
    """The README's line is the table's: exportable ops, then the ones declared not."""
    from graphcore.onnx import CONVERTERS, NOT_EXPORTABLE

    exportable = ", ".join(f"`{n}`" for n in sorted(CONVERTERS))
    declared = ", ".join(f"`{n}`" for n in sorted(NOT_EXPORTABLE))
    want = (f"Exportable ops: {exportable}; not exportable, each with its reason in "
            f"`graphcore/onnx/mapping/`: {declared}.")
    lines = (ROOT / "README.md").read_text().splitlines()
    got = next((line for line in lines if line.startswith("Exportable ops: ")), None)
    assert got == want, f"README.md: replace the 'Exportable ops: ' line with\n{want}"


def test_attention_mask_is_an_input_of_the_exported_model():
    spec = load_spec_file(ROOT / "specs/transformer_block.yaml")
    model = build_model(spec)
    inputs = make_inputs(spec.inputs, spec.seed, spec.folder)
    session = ort_session(export_spec(spec, model, inputs))
    assert {i.name for i in session.get_inputs()} == {"x", "tokens"}
    for tokens in (np.ones_like(inputs["tokens"]), inputs["tokens"][::-1].copy()):
        other = dict(inputs, tokens=tokens)
        assert_equal(onnx_outputs(session, other), graphtool_outputs(spec, model, other))


@pytest.mark.parametrize("apply_relu", ["true", "false"])
def test_live_if_exports_both_branches(apply_relu):
    """seed_dynamic: `if: mean(x) > 0` (live) becomes an ONNX If; `if: params.apply_relu` is
    resolved at export. Inputs with a positive and a negative mean take each branch."""
    from graphcore.spec import load_spec_text

    text = (ROOT / "specs/seed_dynamic.yaml").read_text()
    spec = load_spec_text(text, str(ROOT / "specs/seed_dynamic.yaml"), str(ROOT / "specs"),
                          overrides=[f"params.apply_relu={apply_relu}"])
    model = build_model(spec)
    inputs = make_inputs(spec.inputs, spec.seed, spec.folder)
    proto = export_spec(spec, model, inputs)
    onnx.checker.check_model(proto, full_check=True)
    assert [n.op_type for n in proto.graph.node].count("If") == 1
    assert {"Sigmoid" if apply_relu == "false" else "Relu"} <= {
        n.op_type for n in proto.graph.node}
    session = ort_session(proto)
    taken = set()
    for seed in range(6):
        x = np.random.default_rng(seed).standard_normal(5).astype(np.float32)
        for sign in (1, -1):
            drawn = {"x": sign * x}
            path = run_spec(spec, model, drawn, backward=False).path
            taken.add(next(p.detail["branch"] for p in path if p.kind == "if"
                           and not p.detail["at_load"]))
            assert_equal(onnx_outputs(session, drawn), graphtool_outputs(spec, model, drawn))
    assert taken == {"then", "else"}
