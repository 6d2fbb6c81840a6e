"""`graphtool run` and `graphtool ops` through Typer's CliRunner: exit codes, stdout JSON,
stderr messages, files written."""

import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import invoke

from graphcore import serializers

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"


def run_json(*args):
    result = invoke("run", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_run_json_has_the_documented_keys(tmp_path):
    doc = run_json(SPECS / "seed_static.yaml", "--out-dir", tmp_path)
    assert {"schema_version", "spec", "seed", "mode", "loss", "outputs", "grads", "path",
            "timing_ms"} <= set(doc)
    assert doc["spec"] == "seed_static" and doc["seed"] == 0 and doc["mode"] == "dynamic"
    assert doc["outputs"]["y"]["shape"] == [3, 2]
    assert set(doc["grads"]) == {"l1/W", "l1/b", "l2/W", "l2/b"}
    assert json.loads((tmp_path / "seed_static" / "run.json").read_text())["loss"] == doc["loss"]


def test_run_json_is_byte_identical_apart_from_timing(tmp_path):
    def without_timing():
        result = invoke("run", SPECS / "rnn_sequences.yaml", "--json", "--out-dir", tmp_path)
        doc = json.loads(result.stdout)
        doc.pop("timing_ms")
        return json.dumps(doc, sort_keys=True)

    assert without_timing() == without_timing()


def test_run_reports_the_path_and_follows_set_and_seed(tmp_path):
    doc = run_json(SPECS / "seed_dynamic.yaml", "--set", "params.apply_relu=false",
                   "--out-dir", tmp_path)
    assert doc["path"][0]["branch"] == "else" and doc["path"][0]["at"].endswith(":12:5")
    seeds = {run_json(SPECS / "adaptive_depth.yaml", "--seed", s, "--out-dir", tmp_path)["loss"]
             for s in (1, 2)}
    assert len(seeds) == 2


def test_run_saves_arrays_and_loads_params(tmp_path):
    arrays = tmp_path / "a.npz"
    doc = run_json(SPECS / "seed_static.yaml", "-o", arrays, "--out-dir", tmp_path)
    with np.load(arrays, allow_pickle=False) as z:
        assert {"y", "loss", "grad/l1/W", "grad/l2/b"} <= set(z.files)
        assert float(z["loss"]) == pytest.approx(doc["loss"])
    # parameters saved from one model and loaded into a run give that model's output
    from graphcore import spec as gspec

    s = gspec.load_spec_file(SPECS / "seed_static.yaml")
    _, model = gspec.run(s, seed=5)
    serializers.save_npz(tmp_path / "p.npz", model)
    loaded = run_json(SPECS / "seed_static.yaml", "--params", tmp_path / "p.npz",
                      "--out-dir", tmp_path)
    expected = gspec.run(s, model=model)[0].loss
    assert loaded["loss"] == pytest.approx(expected, rel=1e-6)


def test_run_human_output_goes_to_stdout_and_messages_to_stderr(tmp_path):
    result = invoke("run", SPECS / "residual_mlp.yaml", "--out-dir", tmp_path)
    assert result.exit_code == 0
    assert "residual_mlp" in result.stdout and "logits" in result.stdout
    assert "\x1b[" not in result.stdout  # no colour when not a terminal
    assert f"wrote {tmp_path / 'residual_mlp' / 'run.json'}" in result.stderr
    quiet = invoke("run", SPECS / "residual_mlp.yaml", "--out-dir", tmp_path, "-q")
    assert quiet.stderr == ""


def test_spec_from_stdin(tmp_path):
    text = (SPECS / "seed_static.yaml").read_text()
    result = invoke("run", "-", "--json", "--out-dir", tmp_path, input=text)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["spec"] == "seed_static"


def test_input_from_a_file_and_from_stdin(tmp_path):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    np.save(tmp_path / "x.npy", x)
    a = run_json(SPECS / "seed_static.yaml", "--input", f"x={tmp_path / 'x.npy'}",
                 "--out-dir", tmp_path)
    csv = "\n".join(",".join(str(v) for v in row) for row in x)
    result = invoke("run", SPECS / "seed_static.yaml", "--input", "x=-", "--json",
                    "--out-dir", tmp_path, input=csv)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["loss"] == pytest.approx(a["loss"], rel=1e-6)


def test_a_bad_spec_prints_every_error_and_exits_65(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("graphtool: 1\ninputs:\n  x: {random: normal, shape: [2, 3]}\ngraph:\n"
                   "  - {op: lienar, out_size: 3}\n  - {op: relu, slope: 2}\n")
    result = invoke("run", bad, "--out-dir", tmp_path)
    assert result.exit_code == 65
    assert f"{bad}:5:10: error: unknown op 'lienar'" in result.stderr
    assert f"{bad}:6:16: error: op 'relu' has no attribute 'slope'" in result.stderr
    assert "^" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == "" and not (tmp_path / "bad").exists()


def test_exit_codes_for_missing_files_usage_and_runtime_errors(tmp_path):
    assert invoke("run", tmp_path / "missing.yaml").exit_code == 66
    assert invoke("run", SPECS / "seed_static.yaml", "--input", "x=/nonexistent.npy",
                  "--out-dir", tmp_path).exit_code == 66
    assert invoke("run", SPECS / "seed_static.yaml", "--input", "x").exit_code == 2
    assert invoke("run", SPECS / "seed_static.yaml", "--mode", "warp").exit_code == 2
    bad_shape = tmp_path / "shape.yaml"
    bad_shape.write_text("graphtool: 1\ninputs:\n  x: {random: normal, shape: [2, 3]}\n"
                         "  y: {random: normal, shape: [4]}\ngraph:\n"
                         "  - {op: add, from: [x, y]}\n")
    result = invoke("run", bad_shape, "--out-dir", tmp_path)
    assert result.exit_code == 65  # found by shape inference, before anything runs
    assert f"{bad_shape}:6:5: error: add:" in result.stderr
    np.save(tmp_path / "y.npy", np.ones(4, np.float32))  # a shape only the file says
    data_shape = tmp_path / "data_shape.yaml"
    data_shape.write_text("graphtool: 1\ninputs:\n  x: {random: normal, shape: [2, 3]}\n"
                          f"  y: {{file: {tmp_path / 'y.npy'}}}\ngraph:\n"
                          "  - {op: add, from: [x, y]}\n")
    result = invoke("run", data_shape, "--out-dir", tmp_path)
    assert result.exit_code == 1  # found when the step runs
    assert "data_shape.yaml:6:5: error: add:" in result.stderr


def test_debug_shows_a_traceback(tmp_path):
    result = invoke("--debug", "run", tmp_path / "missing.yaml")
    assert result.exit_code == 66 and "Traceback" in result.stderr


def test_ops_lists_ops_and_layers():
    result = invoke("ops", "--json")
    assert result.exit_code == 0
    entries = {e["name"]: e for e in json.loads(result.stdout)["ops"]}
    assert entries["linear"]["kind"] == "layer"
    assert {a["name"] for a in entries["linear"]["attributes"]} == {"out_size", "in_size",
                                                                     "nobias", "n_batch_axes"}
    assert entries["relu"]["kind"] == "op" and entries["relu"]["elementwise"]
    assert "scale" in entries and "prod_others" in entries
    human = invoke("ops")
    assert human.exit_code == 0 and "softmax_cross_entropy" in human.stdout


@pytest.mark.parametrize(("raised", "code", "text"), [
    (RuntimeError("a bug"), 70, "internal error: RuntimeError: a bug\nre-run with --debug"),
    (KeyboardInterrupt(), 130, "interrupted"),
])
def test_internal_errors_and_interrupts_have_their_exit_codes(monkeypatch, tmp_path, raised,
                                                             code, text):
    import cli.commands.run as run_command

    def boom(*args, **kwargs):
        raise raised

    monkeypatch.setattr(run_command, "run_report", boom)
    result = invoke("run", SPECS / "seed_static.yaml", "--out-dir", tmp_path)
    assert result.exit_code == code
    assert text in result.stderr and "Traceback" not in result.stderr
