"""Static mode for specs: for every spec in specs/, replayed plans give the outputs, loss and
gradients define-by-run gives — over several calls, after optimizer updates, in training and
in inference, and with each pass switched off in turn. Live predicates become guards."""

from pathlib import Path

import numpy as np
import pytest

import graphcore
from graphcore import errors
from graphcore import spec as gspec
from graphcore.spec_static.runner import StaticSpecRunner
from graphcore.static.passes import PASS_NAMES

SPECS = sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.yaml"))


def grads_of(model):
    return {n: p.grad.copy() for n, p in model.namedparams() if p.grad is not None}


def outputs_of(result):
    return {k: np.array(v.array if hasattr(v, "array") else v) for k, v in result.outputs.items()}


def assert_close(a, b):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=2e-5, atol=1e-6, err_msg=k)


OFFS = [None] + [f"-{p}" for p in PASS_NAMES]
# Specs fed 1,797 rows: with every pass on, on all of them; with a pass off, on a slice of them
# (the plan is the same code for any number of rows: all of them would only take longer).
FULL_DATA = {"digits_cnn", "digits_mlp"}
SLICE = 32


def _cases():
    for path in SPECS:
        for off in OFFS if path.stem not in FULL_DATA else [None]:
            yield pytest.param(path, off, id=f"{path.stem}-{off}")


@pytest.mark.parametrize(("path", "off"), list(_cases()))
def test_static_equals_define_by_run(path, off):
    assert_static_equals_define_by_run(path, off)


@pytest.mark.parametrize("off", OFFS[1:])
@pytest.mark.parametrize("path", [p for p in SPECS if p.stem in FULL_DATA], ids=lambda p: p.stem)
def test_static_equals_define_by_run_on_a_slice_of_the_rows(path, off):
    assert_static_equals_define_by_run(path, off, rows=SLICE)


def assert_static_equals_define_by_run(path, off, rows=None):
    s = gspec.load_spec_file(path)
    model = gspec.build_model(s)
    inputs = gspec.prepare_inputs(s, model, gspec.make_inputs(s.inputs, s.seed, s.folder))
    if rows is not None:  # every input of these specs is per row
        inputs = {name: value[:rows] for name, value in inputs.items()}
    gspec.run_spec(s, model, inputs)  # sizes lazy parameters
    runner = StaticSpecRunner(s, model, passes=None if off is None else [off])
    optimizer = graphcore.optimizers.MomentumSGD(lr=0.05).setup(model)
    for _ in range(3):
        want = gspec.run_spec(s, model, inputs)
        want_grads, want_out = grads_of(model), outputs_of(want)
        got = runner.run(inputs)
        assert got.loss == pytest.approx(want.loss, rel=2e-5, abs=1e-6)
        assert_close(outputs_of(got), want_out)
        assert_close(grads_of(model), want_grads)
        assert [e.to_dict() for e in got.path] == [e.to_dict() for e in want.path]
        optimizer.update()
    with graphcore.using_config("train", False):
        want = gspec.run_spec(s, model, inputs, backward=False)
        got = runner.run(inputs, backward=False)
        assert_close(outputs_of(got), outputs_of(want))
    examples = max((len(i.lengths) for i in s.inputs.values() if i.lengths), default=1)
    if got.batching is not None and got.batching["applied"]:  # a plan per group of examples
        examples = got.batching["groups"]
    assert runner.stats.hits + runner.stats.misses == 4 * examples
    if s.kind == "static":  # one path: traced once for training, once for inference
        assert (runner.stats.hits, runner.stats.misses) == (2, 2)


def test_a_guard_miss_runs_the_other_path_and_caches_it():
    s = gspec.load_spec_file(SPECS[0].parent / "seed_dynamic.yaml")
    model = gspec.build_model(s)
    runner = StaticSpecRunner(s, model)
    positive = {"x": np.array([1.0, 2.0, 0.5, 0.1, 3.0], np.float32)}
    negative = {"x": -positive["x"]}
    outcomes = []
    for inputs in (positive, negative, positive, negative, negative):
        got = runner.run(inputs)
        want = gspec.run_spec(s, model, inputs)
        assert got.loss == pytest.approx(want.loss, rel=1e-6)
        outcomes.append(got.path[-1].detail["branch"])
    assert outcomes == ["then", "else", "then", "else", "else"]
    assert (runner.stats.misses, runner.stats.hits) == (2, 3)
    guards = [n for n in runner.last.plan.graph.nodes if n.op == "guard"]
    assert len(guards) == 1 and guards[0].attrs["at"].endswith("seed_dynamic.yaml:15:9")


def test_while_trip_counts_are_guarded():
    s = gspec.load_spec_file(SPECS[0].parent / "adaptive_depth.yaml")
    model = gspec.build_model(s)
    runner = StaticSpecRunner(s, model)
    trips = set()
    for scale in (0.1, 3.0, 30.0, 3.0, 0.1):
        inputs = {"x": np.full((4, 6), scale, np.float32)}
        got = runner.run(inputs)
        want = gspec.run_spec(s, model, inputs)
        assert got.loss == pytest.approx(want.loss, rel=1e-5, abs=1e-6)
        assert got.path[0].detail["trips"] == want.path[0].detail["trips"]
        trips.add(got.path[0].detail["trips"])
    assert len(trips) >= 2 and runner.stats.hits >= 2


def test_the_cache_is_bounded():
    s = gspec.load_spec_file(SPECS[0].parent / "seed_dynamic.yaml")
    model = gspec.build_model(s)
    runner = StaticSpecRunner(s, model, cache_size=1)
    for sign in (1, -1, 1, -1):
        runner.run({"x": np.full(5, sign, np.float32)})
    # the full cache keeps its plan (a hit on the third call); the path it cannot hold runs
    # define-by-run each time instead of evicting and re-tracing (tracing thrash)
    assert sum(len(v) for v in runner.cache.values()) == 1
    assert runner.stats.evictions == 0 and runner.stats.hits == 1
    assert runner.stats.misses == 3 and runner.uncached == 2


def test_a_static_spec_that_diverges_is_reported_at_the_step(tmp_path):
    text = (SPECS[0].parent / "seed_dynamic.yaml").read_text()
    s = gspec.load_spec_text(text.replace("kind: dynamic", "kind: dynamic"), "d.yaml")
    s.kind = "static"  # as if declared static: the loader would refuse the live predicate
    model = gspec.build_model(s)
    runner = StaticSpecRunner(s, model)
    runner.run({"x": np.ones(5, np.float32)})
    with pytest.raises(errors.TraceError, match=r"d.yaml:15:9: the static spec took another"):
        runner.run({"x": -np.ones(5, np.float32)})
