"""Every registered op is either exported (each of its gradient-check cases as a one-op model,
compared with ONNX Runtime) or declared not exportable with a reason."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases import CASES

from graphcore.registry import all_ops, get_op

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

from graphcore.onnx import CONVERTERS, NOT_EXPORTABLE, export  # noqa: E402


def _built_in() -> list[str]:
    """The registry's own ops (plugins other tests load are the exporter's error case)."""
    return sorted(n for n in all_ops() if get_op(n).__module__.startswith("graphcore."))


EXPORTED = [n for n in _built_in() if n in CONVERTERS]


def test_every_op_is_exported_or_declared_not_exportable():
    for name in _built_in():
        assert (name in CONVERTERS) != (name in NOT_EXPORTABLE), name
        if name in NOT_EXPORTABLE:
            assert NOT_EXPORTABLE[name].strip(), f"{name}: give the reason"
    assert not set(NOT_EXPORTABLE) - set(_built_in()), "declared for an op not registered"


def _float32(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) if a.dtype == np.float64 else a


@pytest.mark.parametrize("name", EXPORTED)
def test_one_op_model_matches_onnx_runtime(name):
    cases = CASES[name]
    rng = np.random.default_rng(0)
    for case in cases:
        arrays = [_float32(a) for a in case.draw(rng)]
        attrs = {k: _float32(v) if isinstance(v, np.ndarray) else v
                 for k, v in case.attrs.items()}
        wants = [y.array for y in get_op(name)(**attrs).apply(arrays)]

        def model(*xs, attrs=attrs):
            ys = get_op(name)(**attrs).apply(xs)
            return tuple(ys) if len(ys) > 1 else ys[0]

        names = [f"x{i}" for i in range(len(arrays))]
        outputs = [f"y{i}" for i in range(len(wants))]
        proto = export(model, tuple(arrays), input_names=names, output_names=outputs)
        onnx.checker.check_model(proto, full_check=True)
        session = ort.InferenceSession(proto.SerializeToString())
        feed = {i.name: dict(zip(names, arrays, strict=True))[i.name]
                for i in session.get_inputs()}
        gots = session.run(outputs, feed)
        # exported models are for inference: dropout is the identity there (F.dropout's
        # evaluation mode), whatever mask a training step would draw
        if name == "dropout":
            wants = [arrays[0]]
        for k, (got, want) in enumerate(zip(gots, wants, strict=True)):
            assert got.shape == want.shape, (name, case.label, k)
            assert got.dtype == want.dtype, (name, case.label, k)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} {case.label} output {k}")
