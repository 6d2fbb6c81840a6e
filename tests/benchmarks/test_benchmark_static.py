"""benchmarks/static.py stays honest: its compiled steps give the floors' gradients."""

import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "static.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("benchmarks_static", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("key", ["W1", "W3", "W4", "W5", "W6", "W7"])
def test_static_steps_match_the_floor(bench, key):
    build = bench.engine.WORKLOADS[key]
    sizes = {"W5": {"lengths": (3, 7)},
             "W7": {"n_vocab": 50, "n_embed": 8, "n_hidden": 12, "bptt": 5, "batch": 3}}
    wl = build(**sizes.get(key, {}))
    step, compiled = bench.static_step(wl)
    assert bench.engine.compare_gradients(replace(wl, gc_step=step)) == []
    assert compiled.stats.misses >= 1


def test_training_step_allocations_are_measured(bench):
    wl = bench.engine.WORKLOADS["W1"]()
    step, _ = bench.static_step(wl)
    assert bench.step_allocations(wl, bench._with_update(wl, step)) < 100_000
