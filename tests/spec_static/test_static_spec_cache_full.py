"""A static spec with more paths than its plan cache holds: the paths that do not fit run
define-by-run (same results, path and gradients) instead of evicting and re-tracing a plan
on nearly every call, which made static mode slower than define-by-run."""

import dataclasses

import numpy as np

from graphcore.spec import build_model, load_spec_file, make_inputs, run_spec
from graphcore.spec_static.runner import StaticSpecRunner

LENGTHS = (5, 3, 7, 4, 6, 2, 8, 5, 3)  # 7 distinct lengths, 7 paths


def _spec():
    spec = load_spec_file("specs/rnn_sequences.yaml")
    inputs = dict(spec.inputs)
    inputs["s"] = dataclasses.replace(inputs["s"], lengths=LENGTHS)
    return dataclasses.replace(spec, inputs=inputs)


def test_paths_beyond_the_cache_run_define_by_run_with_equal_results():
    spec = _spec()
    inputs = make_inputs(spec.inputs, spec.seed, spec.folder)
    dynamic_model = build_model(spec)
    expected = run_spec(spec, dynamic_model, inputs, batching="off")  # one example at a time
    static_model = build_model(spec)
    runner = StaticSpecRunner(spec, static_model, cache_size=3)
    for _ in range(3):
        got = runner.run(inputs, batching="off")
        assert got.loss == np.float64(got.loss)
        np.testing.assert_allclose(got.loss, expected.loss, rtol=1e-5)
        assert [e.to_dict() for e in got.path] == [e.to_dict() for e in expected.path]
        for mine, theirs in zip(got.example_outputs, expected.example_outputs, strict=True):
            np.testing.assert_allclose(np.asarray(mine["hs"]), theirs["hs"].array, rtol=1e-5,
                                       atol=1e-6)
        for (name, p), (_, q) in zip(sorted(static_model.namedparams()),
                                     sorted(dynamic_model.namedparams()), strict=True):
            np.testing.assert_allclose(p.grad, q.grad, rtol=1e-4, atol=1e-6, err_msg=name)
    assert runner.stats.evictions == 0
    assert runner.stats.misses == 3 + 3 * 4  # 3 paths traced once; 4 never fit, every call
    assert runner.uncached == 3 * 4
