"""Static mode in the library functions the CLI calls: run_report, train_spec, bench_spec and
draw_stages take ``mode="static"`` / ``passes`` and report what static mode did."""

import io
from pathlib import Path

import numpy as np
import pytest

from graphcore import spec as gspec
from graphcore.commands.bench import BenchOptionError, bench_spec
from graphcore.commands.run import run_report
from graphcore.commands.train.settings import TrainingOptionError
from graphcore.commands.train.steps import train_spec
from graphcore.commands.viz.draw import draw_spec, draw_stages
from graphcore.language.loader import load_spec_file

SPECS = Path(__file__).resolve().parents[2] / "specs"


def load(name):
    return gspec.load_spec_file(SPECS / f"{name}.yaml")


def test_run_report_static_matches_dynamic_and_keeps_the_ir():
    dynamic = run_report(load("residual_mlp"))
    static = run_report(load("residual_mlp"), mode="static", passes=["-fuse"])
    assert dynamic.ir_texts() == {} and dynamic.static_summary() is None
    assert static.result.loss == pytest.approx(dynamic.result.loss, rel=1e-6)
    for key, value in dynamic.arrays().items():
        np.testing.assert_allclose(static.arrays()[key], value, rtol=1e-5, atol=1e-6)
    texts = static.ir_texts()
    assert texts["ir"] == static.static.last.trace.graph.text()
    assert texts["optimized"] == static.static.last.plan.graph.text()
    assert "fuse_elementwise" not in [p["name"] for p in static.to_dict()["static"]["passes"]]
    with pytest.raises(ValueError, match="unknown pass 'nope'"):
        run_report(load("residual_mlp"), mode="static", passes=["nope"])
    with pytest.raises(ValueError, match="unknown mode"):
        run_report(load("residual_mlp"), mode="jit")


def test_train_spec_static_replays_one_plan_and_follows_dynamic():
    s = load("rnn_sequences")  # sequences: each length has its own plan
    dynamic = train_spec(s, steps=6, batch_size=2, optimizer="momentum", lr=0.05)
    static = train_spec(s, steps=6, batch_size=2, optimizer="momentum", lr=0.05,
                        mode="static")
    assert static.losses == pytest.approx(dynamic.losses, rel=1e-4, abs=1e-5)
    assert static.final_loss == pytest.approx(dynamic.final_loss, rel=1e-4, abs=1e-5)
    assert static.cache.hits > 0 and static.to_dict()["static"]["cache"]["hits"] > 0
    assert static.to_dict()["mode"] == "static" and "static" not in dynamic.to_dict()
    with pytest.raises(TrainingOptionError, match="unknown mode"):
        train_spec(s, steps=1, mode="jit")


def test_bench_spec_static_measures_compile_apart():
    dynamic, static = bench_spec(load("param_depth"), modes=("dynamic", "static"), repeat=2,
                                 warmup=0)
    assert static.compile_ms > 0 and dynamic.compile_ms is None
    assert (static.cache_hits, static.cache_misses) == (2, 1)  # the timed calls; the compile
    assert static.speedup == pytest.approx(dynamic.median_ms / static.median_ms, rel=0.01)
    assert static.to_dict()["passes"][0] == {"name": "dce", "nodes_removed": 0,
                                             "bytes_saved": 0}
    with pytest.raises(BenchOptionError, match="unknown pass"):
        bench_spec(load("param_depth"), modes=("static",), passes=["-x"])


def test_draw_stages_reads_stdin_once_for_every_stage():
    text = (SPECS / "seed_dynamic.yaml").read_text()
    s = gspec.load_spec_text(text.replace("x: {random: normal, shape: [5]}",
                                          "x: {stdin: csv, shape: [5]}"), "d.yaml")
    if s.inputs["x"].source != "stdin":
        pytest.skip("seed_dynamic's input changed; this test rewrites it to read stdin")
    csv = b"1,2,3,4,5\n"
    drawings = draw_stages(s, ("executed", "ir", "optimized"), stdin=io.BytesIO(csv))
    assert list(drawings) == ["executed", "ir", "optimized"]
    assert drawings["executed"].dot == draw_spec(s, stdin=io.BytesIO(csv)).dot
    assert drawings["ir"].text.startswith("graph ") and drawings["executed"].text is None
    assert "guard mean(x) > 0 is True" in drawings["optimized"].dot
    with pytest.raises(ValueError, match="unknown stage"):
        draw_stages(s, ("bytecode",))


def test_ir_nodes_know_the_spec_step_they_were_traced_from():
    """The traced IR's nodes (and each vjp, through the node it differentiates) carry their
    op step's ``line:col``; after the passes a fused node carries none (it is no one step)."""
    spec = load_spec_file(str(SPECS / "seed_static.yaml"))
    drawings = draw_stages(spec, ["ir", "optimized"])
    ir, optimized = drawings["ir"], drawings["optimized"]
    l1, relu, l2, loss = "12:5", "13:5", "14:5", "15:7"
    by_op = {}
    for line in ir.text.splitlines()[1:-2]:
        ident, rest = line.strip().split(" = ", 1)
        by_op.setdefault(rest.split("(")[0].split(" ")[0], []).append(f"n{ident[1:]}")
    assert [ir.locations[n] for n in by_op["linear"]] == [l1, l2]
    assert [ir.locations[n] for n in by_op["relu"]] == [relu]
    assert [ir.locations[n] for n in by_op["sum[axis=None,"]] == [loss]
    assert sorted(ir.locations[n] for n in by_op["vjp[index=1,"]) == [l1, l2]
    assert not any(n in ir.locations for n in by_op["param"] + by_op["input"])
    assert "linear_act[activation=relu]" in optimized.text
    fused = next(f"n{line.split(' = ')[0].strip()[1:]}" for line in optimized.text.splitlines()
                 if "linear_act" in line)
    assert fused not in optimized.locations
    assert optimized.locations.items() <= ir.locations.items()
