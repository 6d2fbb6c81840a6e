"""The numpy floors of benchmarks/engine.py compute graphcore's gradients (no timing here)."""

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "engine.py"


def _load_engine():
    name = "graphtool_benchmarks_engine"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


engine = _load_engine()

# W7 at full size takes seconds per run; these sizes keep its code paths (two windows, the
# state carried between them) and make the check fast.
SMALL = {"W7": {"n_vocab": 50, "n_embed": 8, "n_hidden": 12, "bptt": 5, "batch": 3}}


def _build(key, seed=0):
    return engine.WORKLOADS[key](seed, **SMALL.get(key, {}))


@pytest.mark.parametrize("key", sorted(engine.WORKLOADS))
@pytest.mark.parametrize("seed", [0, 1])
def test_floor_gradients_match_graphcore(key, seed):
    wl = _build(key, seed)
    assert engine.compare_gradients(wl) == []


@pytest.mark.parametrize("key", sorted(engine.WORKLOADS))
def test_floor_grads_are_float32_and_fresh(key):
    wl = _build(key)
    unit = wl.units[-1]
    _, first = wl.floor_step(unit)
    copies = [g.copy() for g in first]
    _, second = wl.floor_step(unit)
    for g, c, s, p in zip(first, copies, second, wl.gc_params, strict=True):
        assert g.dtype == np.float32 and g.shape == p.array.shape
        assert s is not g and not np.shares_memory(s, g)
        np.testing.assert_array_equal(g, c)  # the second call did not overwrite the first


def test_cross_check_catches_a_wrong_floor():
    wl = engine.build_w3()
    honest = wl.floor_step

    def off_by_a_bit(unit):
        loss, grads = honest(unit)
        grads = list(grads)
        grads[4] = grads[4] * np.float32(1.01)
        return loss, grads

    wl.floor_step = off_by_a_bit
    problems = engine.compare_gradients(wl)
    assert len(problems) == 1 and "param 4" in problems[0]


def test_cross_check_catches_a_skipped_bias_step():
    wl = engine.build_w5(lengths=(3, 4))
    honest = wl.floor_step

    def dropped(xs):
        loss, grads = honest(xs)
        return loss, grads[:3] + [np.zeros_like(grads[3])]

    wl.floor_step = dropped
    assert engine.compare_gradients(wl)


def test_import_leaves_thread_settings_alone(monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    spec = importlib.util.spec_from_file_location("graphtool_benchmarks_engine_again", _PATH)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    assert "OPENBLAS_NUM_THREADS" not in os.environ


def test_w7_state_is_carried_between_windows():
    """The second window starts from the first's final state on both sides (truncated BPTT):
    a floor that restarted from zeros is caught."""
    wl = engine.build_w7(n_vocab=30, n_embed=6, n_hidden=5, bptt=4, batch=3)
    honest = wl.floor_step

    def restarting(unit):
        first, xs, ts = unit
        return honest((True, xs, ts))

    wl.floor_step = restarting
    problems = engine.compare_gradients(wl)
    assert problems and all("unit 1" in p for p in problems)
