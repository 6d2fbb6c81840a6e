"""`--mode static` through the CLI: `run` reports what define-by-run reports (plus a `static`
section) and writes ir.txt / ir.optimized.txt; `--passes` switches passes off (a bad name is
exit 2); `train` replays one plan and follows dynamic training; `bench` reports compile time,
speedup, cache and passes; `viz --stage` draws the IR before and after the passes."""

import csv
import io
import json
from pathlib import Path

import pytest
from cli_helpers import invoke

from graphcore.commands.viz.draw import find_renderer

SPECS = sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.yaml"))
SPEC = {p.stem: p for p in SPECS}


def ok(*args):
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    return result


def run_json(path, tmp_path, *args):
    return json.loads(ok("run", path, "--json", "--out-dir", tmp_path, *args).stdout)


# --- run --------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_run_static_reports_what_dynamic_reports(path, shipped):
    first, second = shipped.run(path, "dynamic"), shipped.run(path, "static")  # read-only
    assert first.result.exit_code == 0, first.result.stderr
    assert second.result.exit_code == 0, second.result.stderr
    result = second.result
    dynamic, static = json.loads(first.result.stdout), json.loads(result.stdout)
    assert set(static) == set(dynamic) | {"static"}
    assert static["mode"] == "static" and dynamic["mode"] == "dynamic"
    for key in ("schema_version", "spec", "seed", "path", "examples"):
        assert static[key] == dynamic[key], key
    assert static["loss"] == pytest.approx(dynamic["loss"], rel=1e-5, abs=1e-5)
    assert static["outputs"].keys() == dynamic["outputs"].keys()
    for name, want in dynamic["outputs"].items():
        got = static["outputs"][name]
        assert (got["shape"], got["dtype"]) == (want["shape"], want["dtype"])
        for k in ("mean", "std", "min", "max"):
            assert got[k] == pytest.approx(want[k], rel=1e-4, abs=1e-5), (name, k)
    assert static["grads"].keys() == dynamic["grads"].keys()
    for name, norm in dynamic["grads"].items():
        assert static["grads"][name] == pytest.approx(norm, rel=1e-4, abs=1e-4), name
    assert static["timing_ms"]["compile"] > 0 and "compile" not in dynamic["timing_ms"]
    section = static["static"]
    assert section["cache"]["misses"] >= 1 and set(section["cache"]) == {
        "hits", "misses", "evictions", "plans"}
    assert [p["name"] for p in section["passes"]] == [
        "dce", "cse", "fold", "fuse_linear", "fuse_concat_linear", "mask_grads",
        "fuse_elementwise", "plan_memory"]
    assert all(set(p) == {"name", "nodes_removed", "bytes_saved", "notes"}
               for p in section["passes"])
    folder = second.out_dir / static["spec"]
    ir, optimized = folder / "ir.txt", folder / "ir.optimized.txt"
    assert result.stderr.splitlines()[-4:] == [f"wrote {folder / 'run.json'}", f"wrote {ir}",
                                               f"wrote {optimized}", f"wrote {second.arrays}"]
    assert ir.read_text().startswith(f"graph {static['spec']} {{\n")
    assert len(optimized.read_text().splitlines()) <= len(ir.read_text().splitlines())
    assert section["nodes"] == {"traced": len(ir.read_text().splitlines()) - 3,
                                "optimized": len(optimized.read_text().splitlines()) - 3}
    assert not (first.out_dir / static["spec"] / "ir.txt").exists()


def test_static_json_is_byte_identical_apart_from_timing(tmp_path):
    def without_timing():
        doc = run_json(SPEC["residual_mlp"], tmp_path, "--mode", "static")
        doc.pop("timing_ms")
        return json.dumps(doc, sort_keys=True)

    assert without_timing() == without_timing()


def test_human_output_has_a_static_line(tmp_path):
    result = ok("run", SPEC["seed_static"], "--mode", "static", "--out-dir", tmp_path)
    lines = result.stdout.splitlines()
    assert lines[0] == "seed_static  mode static  seed 0  loss 0.0233953"
    assert lines[-1].startswith("static  compile ")
    assert "cache 0 hits 1 misses  IR 17 -> 16 nodes  passes: fuse_linear -1 nodes -60 B" \
        in lines[-1]


def optimized_ir(tmp_path, spec, *args):
    ok("run", SPEC[spec], "--mode", "static", "-q", "--out-dir", tmp_path, *args)
    return (tmp_path / spec / "ir.optimized.txt").read_text()


def test_passes_switch_passes_off(tmp_path):
    default = optimized_ir(tmp_path, "rnn_sequences")
    assert "= fused[" in default and "linear_act" in default
    no_fuse = optimized_ir(tmp_path, "rnn_sequences", "--passes", "-fuse")
    assert "= fused[" not in no_fuse and "linear_act" in no_fuse
    neither = optimized_ir(tmp_path, "rnn_sequences", "--passes=-fuse,-fuse_linear")
    assert "= fused[" not in neither and "linear_act" not in neither
    only = optimized_ir(tmp_path, "seed_static", "--passes", "dce")
    assert only == (tmp_path / "seed_static" / "ir.txt").read_text()
    doc = run_json(SPEC["seed_static"], tmp_path, "--mode", "static", "--passes", "dce,cse")
    assert [p["name"] for p in doc["static"]["passes"]] == ["dce", "cse"]


@pytest.mark.parametrize("command", [
    ("run", "--mode", "static"), ("train", "--mode", "static", "--steps", "1"),
    ("bench", "--modes", "dynamic,static"), ("viz", "--stage", "ir")])
def test_an_unknown_pass_is_a_usage_error(command, tmp_path):
    name, *options = command
    result = invoke(name, SPEC["seed_static"], *options, "--passes", "-fuse,-bogus",
                    "--out-dir", tmp_path)
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith("error: --passes: unknown pass 'bogus'; passes: dce, cse, ")
    assert result.stdout == "" and not any(tmp_path.iterdir())


@pytest.mark.parametrize("command", [("run",), ("train",), ("bench", "--modes", "dynamic"),
                                     ("viz",)])
def test_passes_without_static_mode_is_a_usage_error(command, tmp_path):
    result = invoke(*command, SPEC["seed_static"], "--passes", "-fuse", "--out-dir", tmp_path)
    assert result.exit_code == 2 and "--passes applies to" in result.stderr


def test_check_static_fails_a_plan_with_a_wrong_backward(monkeypatch):
    from functools import partial

    import numpy as np

    from graphcore.static import kernels
    from graphcore.static.kernels import dense
    from graphcore.static.kernels.base import chain

    original = dense.vjp_linear

    def doubled(node, fwd, fwd_ins, fwd_out, gys, out, ctx):  # twice a weight's gradient
        step = original(node, fwd, fwd_ins, fwd_out, gys, out, ctx)
        if node.attrs["index"] != 1:
            return step
        return chain([step, partial(np.multiply, out, 2.0, out=out)])

    # the table's entry (a plain linear's vjp) and what linear_act's vjp calls
    monkeypatch.setitem(kernels.VJP, "linear", doubled)
    monkeypatch.setattr(dense, "vjp_linear", doubled)
    assert invoke("check", SPEC["seed_static"]).exit_code == 0  # define-by-run is right
    result = invoke("check", SPEC["seed_static"], "--mode", "static")
    assert result.exit_code == 1
    assert "gradient check failed for 2 parameter(s): l1/W, l2/W" in result.stderr
    assert "FAIL" in result.stdout


def test_check_static_takes_passes_and_passes_need_static_mode():
    doc = json.loads(ok("check", SPEC["residual_mlp"], "--mode", "static", "--passes",
                        "-fuse_linear,-fuse", "--json").stdout)
    assert doc["ok"] is True
    result = invoke("check", SPEC["seed_static"], "--passes", "-fuse")
    assert result.exit_code == 2 and "--passes applies to" in result.stderr


# --- train ------------------------------------------------------------------------------------
def train_json(tmp_path, *args):
    return json.loads(ok("train", SPEC["residual_mlp"], "--json", "--out-dir", tmp_path,
                         "--optimizer", "adam", "--lr", "0.01", *args).stdout)


@pytest.mark.parametrize("batch", [[], ["--batch-size", "4"]], ids=["all", "batch4"])
def test_train_static_lowers_the_loss_and_follows_dynamic(batch, tmp_path):
    static = train_json(tmp_path, "--steps", 12, "--mode", "static", *batch)
    dynamic = train_json(tmp_path, "--steps", 12, *batch)
    assert static["mode"] == "static" and dynamic["mode"] == "dynamic"
    assert set(static) == set(dynamic) | {"static"}
    assert static["losses"][-1] < static["losses"][0]
    assert static["final_loss"] < static["losses"][0]
    assert static["losses"][:5] == pytest.approx(dynamic["losses"][:5], rel=1e-4, abs=1e-4)
    assert static["final_loss"] == pytest.approx(dynamic["final_loss"], rel=1e-3, abs=1e-3)
    cache = static["static"]["cache"]
    # one plan for the training steps (replayed from step 2), one for the final evaluation
    assert (cache["hits"], cache["misses"]) == (11, 2) and cache["compile_ms"] > 0


def test_train_human_output_names_the_mode_and_the_cache(tmp_path):
    result = ok("train", SPEC["residual_mlp"], "--steps", 3, "--mode", "static",
                "--out-dir", tmp_path)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("residual_mlp  mode static  seed 0  adam")
    assert lines[-1].startswith("static  compile ") and "cache 2 hits 2 misses" in lines[-1]


# --- bench ------------------------------------------------------------------------------------
BENCH = ("--modes", "dynamic,static", "--repeat", "3", "--warmup", "1")


def test_bench_reports_compile_speedup_cache_and_passes(tmp_path):
    result = ok("bench", SPEC["residual_mlp"], SPEC["seed_dynamic"], *BENCH, "--json",
                "--out-dir", tmp_path)
    doc = json.loads(result.stdout)
    assert doc["modes"] == ["dynamic", "static"]
    results = {(r["spec"], r["mode"]): r for r in doc["results"]}
    assert len(results) == 4
    for spec in ("residual_mlp", "seed_dynamic"):
        dynamic, static = results[spec, "dynamic"], results[spec, "static"]
        assert dynamic["compile_ms"] is None and dynamic["speedup"] == 1.0
        assert (dynamic["cache_hits"], dynamic["cache_misses"], dynamic["passes"]) == (
            None, None, None)
        assert static["compile_ms"] > 0 and static["median_ms"] > 0
        assert static["speedup"] == pytest.approx(dynamic["median_ms"] / static["median_ms"],
                                                  rel=0.01)
        assert static["peak_memory_bytes"] > 0 and dynamic["peak_memory_bytes"] > 0
        # compiled before the warm-up; the warm-up and timed iterations replay
        assert (static["cache_hits"], static["cache_misses"]) == (4, 1)
        assert [p["name"] for p in static["passes"]] == [
            "dce", "cse", "fold", "fuse_linear", "fuse_concat_linear", "mask_grads",
            "fuse_elementwise", "plan_memory"]
        assert all(set(p) == {"name", "nodes_removed", "bytes_saved"} for p in static["passes"])
    fuse_linear = results["residual_mlp", "static"]["passes"][3]
    assert fuse_linear["nodes_removed"] > 0 and fuse_linear["bytes_saved"] > 0
    rows = list(csv.DictReader(io.StringIO(
        (tmp_path / "residual_mlp" / "bench.csv").read_text())))
    assert [(r["mode"], r["cache_hits"], r["cache_misses"]) for r in rows] == [
        ("dynamic", "", ""), ("static", "4", "1")]
    assert float(rows[1]["compile_ms"]) > 0
    text = (tmp_path / "residual_mlp" / "bench.txt").read_text()
    assert "compile" in text and "4 hit / 1 miss" in text and "static passes" in text
    assert "fuse_linear" in text


def test_bench_passes_reach_static_mode(tmp_path):
    doc = json.loads(ok("bench", SPEC["seed_static"], *BENCH, "--passes", "-fuse_linear",
                        "--json", "--out-dir", tmp_path).stdout)
    static = doc["results"][1]
    assert [p["name"] for p in static["passes"]] == [
        "dce", "cse", "fold", "fuse_concat_linear", "mask_grads", "fuse_elementwise",
        "plan_memory"]


# --- viz --------------------------------------------------------------------------------------
def test_viz_stage_all_writes_every_drawing_and_ir_text(tmp_path):
    result = ok("viz", SPEC["adaptive_depth"], "--stage", "all", "--format", "dot",
                "--out-dir", tmp_path)
    folder = tmp_path / "adaptive_depth"
    names = ["graph.dot", "ir.dot", "ir.txt", "ir.optimized.dot", "ir.optimized.txt"]
    assert result.stderr.splitlines() == [f"wrote {folder / n}" for n in names]
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)
    assert (folder / "graph.dot").read_text().startswith("digraph graphname{")
    for stage in ("ir", "ir.optimized"):
        dot = (folder / f"{stage}.dot").read_text()
        assert dot.startswith('digraph "ir adaptive_depth" {') and 'shape="diamond"' in dot
    assert "linear_act" in (folder / "ir.optimized.dot").read_text()
    assert "linear_act" not in (folder / "ir.dot").read_text()
    run_dir = tmp_path / "run"
    ok("run", SPEC["adaptive_depth"], "--mode", "static", "-q", "--out-dir", run_dir)
    for name in ("ir.txt", "ir.optimized.txt"):  # the same plan as `run --mode static`
        assert (folder / name).read_text() == (run_dir / "adaptive_depth" / name).read_text()


def test_viz_stage_ir_to_stdout_prints_the_ir_dot(tmp_path):
    result = ok("viz", SPEC["seed_static"], "--stage", "ir", "-o", "-", "--out-dir", tmp_path)
    assert result.stdout.startswith('digraph "ir seed_static" {\nrankdir=TB;\n')
    assert 'label="relu : f32[3,5]"' in result.stdout and result.stdout.endswith("}\n")
    assert not (tmp_path / "seed_static").exists()
    again = ok("viz", SPEC["seed_static"], "--stage", "ir", "--format", "dot",
               "--out-dir", tmp_path)
    assert (tmp_path / "seed_static" / "ir.dot").read_text() == result.stdout  # deterministic
    assert again.stdout == ""
    optimized = ok("viz", SPEC["seed_static"], "--stage", "optimized", "-o", "-").stdout
    assert 'label="linear_act[activation=relu] : f32[3,5]"' in optimized
    no_fusion = ok("viz", SPEC["seed_static"], "--stage", "optimized", "--passes",
                   "-fuse_linear", "-o", "-").stdout
    assert "linear_act" not in no_fusion


def test_viz_stage_all_cannot_go_to_one_output(tmp_path):
    result = invoke("viz", SPEC["seed_static"], "--stage", "all", "-o", "-")
    assert result.exit_code == 2 and result.stdout == ""


def test_viz_default_stage_is_the_executed_graph(tmp_path):
    default = ok("viz", SPEC["seed_static"], "-o", "-").stdout
    assert default == ok("viz", SPEC["seed_static"], "--stage", "executed", "-o", "-").stdout
    assert default.startswith("digraph graphname{")


@pytest.mark.skipif(find_renderer() is None, reason="no Graphviz renderer installed")
def test_viz_stage_all_renders_pngs(tmp_path):
    ok("viz", SPEC["seed_dynamic"], "--stage", "all", "--out-dir", tmp_path)
    for name in ("graph.png", "ir.png", "ir.optimized.png"):
        assert (tmp_path / "seed_dynamic" / name).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_bench_profile_in_static_mode_times_the_plan_steps(tmp_path):
    result = ok("bench", SPEC["residual_mlp"], "--modes", "static", "--repeat", "3",
                "--warmup", "1", "--profile", "--json", "--out-dir", tmp_path)
    profile = json.loads(result.stdout)["results"][0]["profile"]
    rows = {r["op"]: r for r in profile["ops"]}
    assert profile["total_ms"] > 0
    assert rows["softmax_cross_entropy"]["calls"] == 3
    assert rows["softmax_cross_entropy"]["backward_calls"] == 3
    assert rows["linear"]["backward_ms"] > 0 and rows["relu"]["backward_calls"] > 0
    assert all(r["total_ms"] > 0 for r in rows.values())
