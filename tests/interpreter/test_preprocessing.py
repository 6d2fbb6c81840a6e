"""The state a spec fits on its training rows: class order as scikit-learn's LabelEncoder,
scalers' statistics (ddof 0, zero spread scaled by 1), and the same normalization on arrays
and on Variables (what static plans and ONNX exports trace)."""

from __future__ import annotations

import numpy as np
import pytest

from graphcore.errors import SpecError, SpecRuntimeError
from graphcore.interpreter.preprocessing import (
    encode_rows,
    fit_state,
    normalized,
    prepare_inputs,
    sorted_classes,
)
from graphcore.spec import build_model, load_spec_text
from graphcore.variable import Variable

SPEC = """graphtool: 1
data:
  file: rows.csv
  x: {columns: [a, b], normalize: %s}
  t: {column: label}
graph:
  - {op: linear, out_size: 3, from: x}
loss: {op: softmax_cross_entropy, from: [_, t]}
outputs: [_]
"""


def _spec(method: str = "standard"):
    return load_spec_text(SPEC % method)


@pytest.mark.parametrize("names, order", [
    (["b", "a", "c", "a"], ["a", "b", "c"]),          # code points
    (["10", "9", "2.5", "9"], ["2.5", "9", "10"]),   # every name a number: by value
    (["10", "x", "9"], ["10", "9", "x"]),            # not all numbers: code points
    (["Zebra", "apple"], ["Zebra", "apple"]),        # upper case first, as numpy sorts
])
def test_classes_are_sorted_as_label_encoder_sorts_them(names, order):
    assert sorted_classes(np.array(names)).tolist() == order


def test_standard_and_minmax_statistics():
    x = np.array([[1.0, 5.0], [3.0, 5.0], [8.0, 5.0]], np.float32)
    rows = {"x": x, "t": np.array(["a", "b", "a"])}
    standard = fit_state(_spec("standard"), rows)
    np.testing.assert_allclose(standard["x"]["shift"], [4.0, 5.0])
    np.testing.assert_allclose(standard["x"]["scale"], [np.std([1, 3, 8]), 1.0], rtol=1e-6)
    assert standard["x"]["shift"].dtype == np.float32
    minmax = fit_state(_spec("minmax"), rows)
    np.testing.assert_allclose(minmax["x"]["shift"], [1.0, 5.0])
    np.testing.assert_allclose(minmax["x"]["scale"], [7.0, 1.0])
    assert standard["t"]["classes"].tolist() == ["a", "b"]


def test_normalized_is_the_same_on_arrays_and_on_variables():
    spec = _spec()
    model = build_model(spec)
    x = np.random.default_rng(0).normal(3, 2, (6, 2)).astype(np.float32)
    prepared = prepare_inputs(spec, model, {"x": x, "t": np.array(list("abcabc"))})
    assert prepared["t"].tolist() == [0, 1, 2, 0, 1, 2] and prepared["t"].dtype == np.int32
    on_arrays = normalized(spec, model, {"x": x})["x"]
    on_variables = normalized(spec, model, {"x": Variable(x)})["x"]
    assert isinstance(on_variables, Variable)
    np.testing.assert_array_equal(on_arrays, on_variables.array)
    np.testing.assert_allclose(on_arrays.mean(axis=0), 0, atol=1e-6)


def test_a_model_without_statistics_is_never_run_unnormalized():
    spec = _spec()
    with pytest.raises(SpecRuntimeError, match="normalize needs statistics"):
        normalized(spec, build_model(spec), {"x": np.zeros((2, 2), np.float32)})


def test_an_unknown_class_without_a_file_names_the_data_row():
    spec = _spec()
    state = {"t": {"classes": np.array(["a", "b"])}}
    with pytest.raises(SpecError, match=r"class 'c' is not one of the 2 classes .*data row 3"):
        encode_rows(spec, state, {"t": np.array(["a", "b", "c"])})
