"""The exported ops where Chainer's conventions and ONNX's differ, beyond the gradient-check
cases of ``op_cases`` (the registry-driven test runs those): every index kind of ``get_item``,
split points that do not tile the axis, max-pooling windows that start in the padding,
deconvolution ``outsize`` on both sides of the default, LRN with an even window, loss divisors.
Each one-op model is compared with ONNX Runtime at the traced batch and, when the export kept
the batch symbolic, at another batch size."""

from __future__ import annotations

import numpy as np
import pytest

from graphcore.registry import get_op

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

from graphcore.onnx import export  # noqa: E402

_rng = np.random.default_rng(7)


def _normal(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def _distinct(*shape):
    return (_rng.permutation(int(np.prod(shape))).reshape(shape) * 0.1).astype(np.float32)


_X = _normal(5, 6, 4)
_MASK = np.array([True, False, True, False, True, False])

CASES = [
    ("get_item", {"index": (slice(None, None, -1),)}, (_X,)),
    ("get_item", {"index": (slice(None), slice(4, 0, -2))}, (_X,)),
    ("get_item", {"index": (slice(-10, None, -1),)}, (_X,)),
    ("get_item", {"index": (slice(1, -1), None, 2)}, (_X,)),
    ("get_item", {"index": (None, Ellipsis, 1)}, (_X,)),
    ("get_item", {"index": (slice(None), -1)}, (_X,)),
    ("get_item", {"index": (slice(3, 1),)}, (_X,)),
    ("get_item", {"index": (slice(2, 100),)}, (_X,)),
    ("get_item", {"index": (slice(None), [0, 5, -1])}, (_X,)),
    ("get_item", {"index": (slice(None), slice(1, 3), [1, 2])}, (_X,)),
    ("get_item", {"index": (slice(None), _MASK)}, (_X,)),
    ("get_item", {"index": ([0, 1], slice(None), [1, 2])}, (_X,)),
    ("get_item", {"index": (0, [1, 2])}, (_X,)),
    ("get_item", {"index": (slice(None), 0, [1, 3])}, (_X,)),
    ("split_axis", {"indices_or_sections": [3, 1], "axis": 1}, (_X,)),
    ("split_axis", {"indices_or_sections": [2, 9], "axis": 1}, (_X,)),
    ("split_axis", {"indices_or_sections": [-2], "axis": -1}, (_X,)),
    ("split_axis", {"indices_or_sections": 3, "axis": 1}, (_normal(4, 6),)),
    ("split_axis", {"indices_or_sections": 2}, (_normal(4, 3),)),  # the batch axis: fixed
    ("max_pooling_2d", {"ksize": 2, "stride": 2, "pad": 1}, (_distinct(1, 2, 5, 5),)),
    ("max_pooling_2d", {"ksize": 2, "stride": (3, 2), "pad": 1}, (_distinct(2, 2, 5, 6),)),
    ("max_pooling_2d", {"ksize": 3, "stride": 3, "pad": 2}, (_distinct(1, 1, 4, 7),)),
    ("max_pooling_1d", {"ksize": 2, "stride": 2, "pad": 1}, (_distinct(1, 2, 5),)),
    ("max_pooling_1d", {"ksize": 3, "stride": 2, "cover_all": False}, (_distinct(2, 2, 8),)),
    ("average_pooling_1d", {"ksize": 3, "stride": 3}, (_normal(2, 2, 8),)),
    ("convolution_1d", {"stride": 3, "cover_all": True, "pad": 1},
     (_normal(3, 3, 8), _normal(4, 3, 2))),
    ("deconvolution_2d", {"stride": 3, "pad": 1, "outsize": (6, 7)},
     (_normal(1, 2, 3, 3), _normal(2, 3, 2, 3))),
    ("deconvolution_1d", {"stride": 3, "pad": 1, "outsize": 5},
     (_normal(1, 2, 3), _normal(2, 3, 3))),
    ("deconvolution_1d", {"stride": 2, "outsize": 8, "dilate": 2},
     (_normal(3, 2, 3), _normal(2, 3, 2), _normal(3))),
    ("local_response_normalization", {"n": 4, "k": 1.5, "alpha": 0.3, "beta": 0.6},
     (_normal(2, 7, 3, 2),)),
    ("local_response_normalization", {"n": 3, "k": 1.0, "alpha": 0.3}, (_normal(2, 5),)),
    ("local_response_normalization", {"n": 3}, (_normal(2, 5, 2, 2, 3),)),
    ("softmax_cross_entropy", {"normalize": False},
     (_normal(4, 3), np.array([0, 1, -1, 2], np.int32))),
    ("softmax_cross_entropy", {}, (_normal(4, 3), np.array([0, 1, -1, 2], np.int64))),
    ("softmax_cross_entropy", {}, (_normal(2, 3), np.array([-1, -1], np.int32))),
    ("softmax_cross_entropy", {"class_weight": [1, 2, 3], "ignore_label": 1},
     (_normal(4, 3), np.array([0, 1, 1, 2], np.int32))),
    ("sigmoid_cross_entropy", {"normalize": False},
     (_normal(4, 3), np.array([[0, 1, -1]] * 4, np.int32))),
    ("sigmoid_cross_entropy", {"reduce": "no"},
     (_normal(4, 3) * 30, np.array([[0, 1, -1]] * 4, np.int32))),
    ("lstm", {}, (_normal(3, 2), _normal(3, 8))),
    ("where", {}, (_normal(3, 1) > 0, _normal(3, 4), _normal(4))),
    ("transpose_sequence", {}, (_normal(3, 2), _normal(3, 2), _normal(1, 2))),
    ("transpose_sequence", {}, (_normal(1, 2),)),
]


def _apply(name, attrs, arrays):
    return [y.array for y in get_op(name)(**attrs).apply(arrays)]


def _run(session, names, outputs, arrays):
    feed = dict(zip(names, arrays, strict=True))
    return session.run(outputs, {i.name: feed[i.name] for i in session.get_inputs()})


def _grown(arrays):
    """The arrays with a batch of ``2n + 1`` where ``n`` is the first one's batch."""
    n = arrays[0].shape[0] if arrays[0].ndim else None
    return [np.concatenate([a, a, a[:1]]) if a.ndim and a.shape[0] == n else a
            for a in arrays]


def _compare(gots, wants, label):
    for got, want in zip(gots, wants, strict=True):
        assert got.shape == want.shape and got.dtype == want.dtype, label
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=label)


@pytest.mark.parametrize(("name", "attrs", "arrays"), CASES,
                         ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)])
def test_edge_case_matches_onnx_runtime(name, attrs, arrays):
    wants = _apply(name, attrs, arrays)
    names = [f"x{i}" for i in range(len(arrays))]
    outputs = [f"y{i}" for i in range(len(wants))]

    def model(*xs):
        ys = get_op(name)(**attrs).apply(xs)
        return tuple(ys) if len(ys) > 1 else ys[0]

    proto = export(model, tuple(arrays), input_names=names, output_names=outputs)
    onnx.checker.check_model(proto, full_check=True)
    session = ort.InferenceSession(proto.SerializeToString())
    _compare(_run(session, names, outputs, arrays), wants, f"{name} {attrs}")
    if {p.key: p.value for p in proto.metadata_props}["batch"] == "symbolic":
        other = _grown(list(arrays))
        _compare(_run(session, names, outputs, other), _apply(name, attrs, other),
                 f"{name} {attrs} at another batch size")


def test_split_on_the_batch_axis_exports_fixed_dims():
    x = _normal(4, 3)
    proto = export(lambda v: get_op("split_axis")(2).apply((v,)), (x,),
                   output_names=["a", "b"])
    assert {p.key: p.value for p in proto.metadata_props}["batch"] == "fixed"


def test_a_declared_op_in_a_spec_names_itself_its_place_and_the_reason(tmp_path):
    """One located line, ``file:line:col: error: ...``, as every refusal of a spec reads."""
    from typer.testing import CliRunner

    from cli.app import app

    spec = tmp_path / "grad.yaml"
    spec.write_text("graphtool: 1\nname: grad\nkind: static\ninputs:\n"
                    "  x: {random: normal, shape: [3, 4]}\ngraph:\n"
                    "  - {op: sum_to, shape: [4]}\noutputs: [_]\n")
    out = tmp_path / "m.onnx"
    result = CliRunner().invoke(app, ["export", str(spec), "-o", str(out)])
    assert result.exit_code == 1, result.output
    first = result.output.strip().splitlines()[0]
    assert first.startswith(f"{spec}:7:5: error: op 'sum_to' cannot be exported to ONNX: "), \
        result.output
    assert "a gradient op" in first and len(result.output.strip().splitlines()) == 1
    assert not out.exists() and "Traceback" not in result.output
