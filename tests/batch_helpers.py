"""Helpers of the batching equality tests: float64 inputs, a run in either mode, and the
check that a batched result equals the one-example-at-a-time reference (loss, every gradient,
every example's outputs, the path), float64 rtol 1e-10."""

from __future__ import annotations

import numpy as np
import pytest

from graphcore.config import using_config
from graphcore.spec import build_model, run_spec
from graphcore.spec_static.runner import StaticSpecRunner

RTOL, ATOL = 1e-10, 1e-12


def float64_inputs(inputs):
    def cast(a):
        return a.astype(np.float64) if a.dtype.kind == "f" else a
    return {k: ([cast(a) for a in v] if isinstance(v, list) else cast(v))
            for k, v in inputs.items()}


def run_mode(spec, inputs, mode, static):
    with using_config("dtype", np.float64):
        model = build_model(spec)
        if static:
            runner = StaticSpecRunner(spec, model)
            for _ in range(2):  # the first call sizes lazy parameters, the second traces
                runner.run(inputs, batching=mode)
            result = runner.run(inputs, batching=mode)
        else:
            run_spec(spec, model, inputs, batching=mode)
            result = run_spec(spec, model, inputs, batching=mode)
        grads = {name: np.array(p.grad) for name, p in model.namedparams()
                 if p.grad is not None}
    return result, grads


def array_of(v):
    return np.asarray(getattr(v, "array", v))


def same_as_reference(result, grads, reference, reference_grads):
    assert result.loss == pytest.approx(reference.loss, rel=RTOL, abs=ATOL)
    assert grads.keys() == reference_grads.keys()
    for name, g in reference_grads.items():
        np.testing.assert_allclose(grads[name], g, rtol=RTOL, atol=ATOL, err_msg=name)
    assert len(result.example_outputs) == len(reference.example_outputs)
    for got, want in zip(result.example_outputs, reference.example_outputs, strict=True):
        assert got.keys() == want.keys()
        for name in want:
            np.testing.assert_allclose(array_of(got[name]), array_of(want[name]), rtol=RTOL,
                                       atol=ATOL, err_msg=name)
    assert [e.to_dict() for e in result.path] == [e.to_dict() for e in reference.path]
