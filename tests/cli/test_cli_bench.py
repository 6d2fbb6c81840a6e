"""`graphtool bench` through Typer's CliRunner: the JSON document, batch sizes, CSV, the
per-op profile, artifacts, several specs, and the usage/spec errors with their exit codes."""

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
FAST = ("--repeat", "3", "--warmup", "1", "--modes", "dynamic")  # the default is both modes
runner = CliRunner()


def invoke(*args, input=None):
    return runner.invoke(app, ["bench", *(str(a) for a in args)], input=input)


def bench_json(*args):
    result = invoke(*args, *FAST, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_json_results_carry_sane_times(tmp_path):
    doc = bench_json(SPECS / "seed_static.yaml", "--out-dir", tmp_path)
    assert doc["schema_version"] == 1 and doc["specs"] == ["seed_static"] and doc["seed"] == 0
    r, = doc["results"]
    assert {"spec", "mode", "batch", "median_ms", "forward_median_ms", "backward_median_ms",
            "min_ms", "max_ms", "iqr_ms", "compile_ms", "speedup", "peak_memory_bytes"} <= set(r)
    assert (r["spec"], r["mode"], r["batch"], r["repeat"]) == ("seed_static", "dynamic", 3, 3)
    assert r["forward_median_ms"] > 0 and r["backward_median_ms"] > 0
    assert r["min_ms"] <= r["median_ms"] <= r["max_ms"]
    # medians of a sum are not sums of medians, but they agree closely
    assert r["forward_median_ms"] + r["backward_median_ms"] == pytest.approx(
        r["median_ms"], rel=0.5)
    assert r["compile_ms"] is None and r["speedup"] == 1.0 and r["profile"] is None
    assert r["peak_memory_bytes"] > 0


def test_batch_sizes_give_one_result_each(tmp_path):
    doc = bench_json(SPECS / "seed_static.yaml", "--batch", "1,8", "--out-dir", tmp_path)
    assert [r["batch"] for r in doc["results"]] == [1, 8]
    assert doc["batches"] == [1, 8]
    small, large = doc["results"]
    assert large["peak_memory_bytes"] > small["peak_memory_bytes"]


def test_csv_has_a_header_and_a_row_per_result(tmp_path):
    result = invoke(SPECS / "seed_static.yaml", *FAST, "--batch", "2,4", "--format", "csv",
                    "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["batch"] for row in rows] == ["2", "4"]
    assert rows[0]["compile_ms"] == "" and float(rows[0]["median_ms"]) > 0
    assert (tmp_path / "seed_static" / "bench.csv").read_text() == result.stdout


def test_profile_counts_match_the_model(tmp_path):
    doc = bench_json(SPECS / "seed_static.yaml", "--profile", "--out-dir", tmp_path)
    profile = doc["results"][0]["profile"]
    ops = {row["op"]: row for row in profile["ops"]}
    n = profile["iterations"]
    assert n == 3
    assert ops["LinearFunction"]["calls"] == 2 * n  # l1 and l2
    assert ops["ReLU"]["calls"] == n and ops["ReLU"]["backward_calls"] == n
    assert sum(row["share"] for row in profile["ops"]) == pytest.approx(1.0, abs=1e-3)


def test_profile_table_in_the_human_output(tmp_path):
    result = invoke(SPECS / "seed_static.yaml", *FAST, "--profile", "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "LinearFunction" in result.stdout and "ReLU" in result.stdout
    assert "median" in result.stdout and "\x1b[" not in result.stdout


def test_artifacts_are_written_and_their_paths_printed(tmp_path):
    result = invoke(SPECS / "seed_static.yaml", *FAST, "--profile", "--out-dir", tmp_path)
    folder = tmp_path / "seed_static"
    for name in ("bench.json", "bench.csv", "bench.txt"):
        assert (folder / name).is_file()
        assert f"wrote {folder / name}" in result.stderr
    saved = json.loads((folder / "bench.json").read_text())
    assert saved["results"][0]["profile"]["ops"]
    text = (folder / "bench.txt").read_text()
    assert "median" in text and "LinearFunction" in text and "\x1b[" not in text
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no temporary files


def test_several_specs_at_once(tmp_path):
    doc = bench_json(SPECS / "seed_static.yaml", SPECS / "rnn_sequences.yaml",
                     "--out-dir", tmp_path)
    assert doc["specs"] == ["seed_static", "rnn_sequences"]
    assert [(r["spec"], r["batch"]) for r in doc["results"]] == [("seed_static", 3),
                                                                 ("rnn_sequences", None)]
    assert doc["results"][1]["examples"] == 3
    for name in doc["specs"]:
        saved = json.loads((tmp_path / name / "bench.json").read_text())
        assert [r["spec"] for r in saved["results"]] == [name]


def test_batch_on_sequence_or_file_inputs_is_a_usage_error(tmp_path):
    for spec, name in (("rnn_sequences", "'s'"), ("csv_classifier", "'x'")):
        result = invoke(SPECS / f"{spec}.yaml", *FAST, "--batch", "4", "--out-dir", tmp_path)
        assert result.exit_code == 2, result.stderr
        assert f"input {name}" in result.stderr and "Traceback" not in result.stderr


def test_among_several_specs_one_that_cannot_take_batch_is_skipped_with_a_warning(tmp_path):
    # the README's `graphtool bench specs/*.yaml --batch 1,32 --profile`
    result = invoke(SPECS / "seed_static.yaml", SPECS / "rnn_sequences.yaml",
                    SPECS / "csv_classifier.yaml", *FAST, "--batch", "1,4", "--json", "-q",
                    "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["specs"] == ["seed_static"] and doc["batches"] == [1, 4]
    warnings = result.stderr.splitlines()
    assert len(warnings) == 2
    assert warnings[0].startswith("warning: skipped: cannot set a batch size for spec "
                                  "'rnn_sequences': input 's'")
    assert "'csv_classifier': input 'x' is read from data/points.csv" in warnings[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["seed_static"]


def test_when_no_spec_can_take_batch_it_is_a_usage_error(tmp_path):
    result = invoke(SPECS / "rnn_sequences.yaml", SPECS / "csv_classifier.yaml", *FAST,
                    "--batch", "4", "--out-dir", tmp_path / "none")
    assert result.exit_code == 2 and not (tmp_path / "none").exists()
    assert "input 's'" in result.stderr


def test_both_modes_side_by_side_by_default(tmp_path):
    result = invoke(SPECS / "seed_static.yaml", "--repeat", "2", "--warmup", "0", "--json",
                    "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["modes"] == ["dynamic", "static"]
    dynamic, static = doc["results"]
    assert (dynamic["mode"], static["mode"]) == ("dynamic", "static")
    assert dynamic["speedup"] == 1.0 and static["speedup"] > 0 and static["compile_ms"] > 0
    table = invoke(SPECS / "seed_static.yaml", "--repeat", "2", "--warmup", "0",
                   "--out-dir", tmp_path)
    assert " static " in table.stdout and "speedup" in table.stdout


@pytest.mark.parametrize("args", [("--modes", "jit"), ("--modes", "dynamic,warp"),
                                  ("--batch", "0"), ("--batch", "1,x"),
                                  ("--json", "--format", "csv"), ("--repeat", "0")])
def test_bad_options_are_usage_errors(tmp_path, args):
    result = invoke(SPECS / "seed_static.yaml", "--out-dir", tmp_path, *args)
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


def test_unknown_mode_names_the_mode(tmp_path):
    result = invoke(SPECS / "seed_static.yaml", "--modes", "jit", "--out-dir", tmp_path)
    assert result.exit_code == 2 and "unknown mode 'jit'" in result.stderr


def test_a_bad_spec_is_a_data_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("graphtool: 1\nname: bad\ngraph:\n  - {op: no_such_op}\n")
    result = invoke(bad, *FAST, "--out-dir", tmp_path)
    assert result.exit_code == 65
    assert "bad.yaml:4" in result.stderr and "Traceback" not in result.stderr
    assert invoke(tmp_path / "missing.yaml", "--out-dir", tmp_path).exit_code == 66


def test_a_spec_from_stdin(tmp_path):
    text = (SPECS / "seed_static.yaml").read_text()
    result = runner.invoke(app, ["bench", "-", *FAST, "--json", "--out-dir", str(tmp_path)],
                           input=text)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["results"][0]["spec"] == "seed_static"
