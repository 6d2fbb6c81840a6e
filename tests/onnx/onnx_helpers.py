"""Helpers the ONNX export tests share: run an exported model with ONNX Runtime, run the
spec with graphtool (evaluation mode), compare at the issue's tolerance."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort

from graphcore import using_config
from graphcore.spec import run_spec


def ort_session(proto):
    return ort.InferenceSession(proto.SerializeToString())


def onnx_outputs(session, inputs):
    feed = {i.name: np.asarray(inputs[i.name]) for i in session.get_inputs()}
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, feed), strict=True))


def run(spec, model, inputs):
    # an exported model is for inference: dropout is the identity, batch norm uses its
    # running statistics, as graphtool's evaluation mode does
    with using_config("train", False):
        return run_spec(spec, model, inputs, backward=False)


def graphtool_outputs(spec, model, inputs):
    return {k: np.asarray(v.array) for k, v in run(spec, model, inputs).outputs.items()}


def examples(inputs):
    """Sequence inputs (lists): one dict per example, as graphtool runs them."""
    count = next((len(v) for v in inputs.values() if isinstance(v, list)), None)
    if count is None:
        return [inputs]
    return [{k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()}
            for i in range(count)]


def assert_runs_equal(session, spec, model, inputs, atol=1e-6):
    """ONNX Runtime on each example = graphtool run on all of them (one graph per example)."""
    result = run(spec, model, inputs)
    for example, outputs in zip(examples(inputs), result.example_outputs, strict=True):
        want = {k: np.asarray(v.array) for k, v in outputs.items()}
        assert_equal(onnx_outputs(session, example), want, atol)
    return result


def assert_equal(got, want, atol=1e-6):
    assert set(got) == set(want)
    for key in want:
        assert got[key].dtype == np.float32
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=atol, err_msg=key)
