"""Every op's shape rule against its real forward, and the rules' symbols and errors.

- registry-driven: for each built-in op with a ``shape_rule``, each of its cases in
  ``tests/op_cases.py`` runs forward and the rule's shapes and dtypes must equal the outputs';
  an op without a rule must be in ``WITHOUT_SHAPE_RULE`` (and an op in it must have none), so
  a new op cannot be registered without one unnoticed;
- symbolic dims (``batch``) propagate through the rules the shipped specs use;
- a mismatch is a ``ShapeInferenceError`` (a ``ShapeError``) naming the op and the shapes.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from op_cases import CASES

import graphcore
from graphcore import errors
from graphcore.shapes import (
    UNKNOWN,
    DTypeInferenceError,
    ShapeInferenceError,
    TensorType,
    has_rule,
    infer,
)

# Ops without a shape rule (their shapes are known only when they run), each with why.
WITHOUT_SHAPE_RULE = frozenset({
    "transpose_sequence",  # its number of outputs is the longest sequence's length
})

BUILTIN_OPS = sorted(name for name, cls in graphcore.all_ops().items()
                     if cls.__module__.startswith("graphcore."))
RULE_PARAMS = [pytest.param(name, case, id=f"{name}-{case.label or i}")
               for name in BUILTIN_OPS if has_rule(graphcore.get_op(name))
               for i, case in enumerate(CASES.get(name, ()))]


def _types(arrays) -> tuple[TensorType, ...]:
    return tuple(TensorType(np.shape(a), np.asarray(a).dtype) for a in arrays)


@pytest.mark.parametrize("name", BUILTIN_OPS)
def test_every_op_has_a_shape_rule_or_is_listed_without_one(name):
    listed = name in WITHOUT_SHAPE_RULE
    assert has_rule(graphcore.get_op(name)) != listed, (
        f"op {name!r} " + ("has a shape rule: remove it from WITHOUT_SHAPE_RULE" if listed else
                           "has no shape_rule: declare one beside its forward "
                           "(graphcore.shapes) or list it in WITHOUT_SHAPE_RULE"))


def test_the_list_names_only_registered_ops():
    assert sorted(WITHOUT_SHAPE_RULE - set(BUILTIN_OPS)) == []


@pytest.mark.parametrize("name, case", RULE_PARAMS)
def test_shape_rule_matches_the_real_forward(name, case):
    rng = np.random.default_rng(zlib.crc32(repr((name, case.label)).encode()))
    inputs = case.draw(rng)
    op = graphcore.get_op(name)(**case.attrs)
    inferred = infer(graphcore.get_op(name)(**case.attrs), _types(inputs))
    outputs = [y.array for y in op.apply(inputs)]
    assert [t.shape for t in inferred] == [y.shape for y in outputs]
    assert [t.dtype for t in inferred] == [y.dtype for y in outputs]


@pytest.mark.parametrize("name, case", RULE_PARAMS)
def test_shape_rule_matches_the_real_forward_in_float32(name, case):
    """The same in float32: a rule that hard-codes float64 (or promotes) fails here."""
    rng = np.random.default_rng(zlib.crc32(repr((name, case.label)).encode()))
    inputs = tuple(x.astype(np.float32) if x.dtype == np.float64 else x
                   for x in case.draw(rng))
    if name == "cast":
        inputs = tuple(x.astype(np.float64) for x in inputs)
    op = graphcore.get_op(name)(**case.attrs)
    inferred = infer(graphcore.get_op(name)(**case.attrs), _types(inputs))
    outputs = [y.array for y in op.apply(inputs)]
    assert [t.shape for t in inferred] == [y.shape for y in outputs]
    assert [t.dtype for t in inferred] == [y.dtype for y in outputs]


# --- symbols --------------------------------------------------------------------------------

@pytest.mark.parametrize("name, case", RULE_PARAMS)
def test_shape_rule_takes_a_symbolic_leading_dim(name, case):
    """The first input's first dim given as the symbol ``n``: the rule still infers, and each
    output dim is its real size, ``n`` where that is the size ``n`` stood for, or unknown."""
    rng = np.random.default_rng(zlib.crc32(repr((name, case.label)).encode()))
    inputs = case.draw(rng)
    types = _types(inputs)
    if not types or not types[0].shape:
        pytest.skip("the first input has no dims")
    n = types[0].shape[0]
    symbolic = (TensorType(("n",) + types[0].shape[1:], types[0].dtype),) + types[1:]
    inferred = infer(graphcore.get_op(name)(**case.attrs), symbolic)
    outputs = [y.array for y in graphcore.get_op(name)(**case.attrs).apply(inputs)]
    assert [len(t.shape) for t in inferred] == [y.ndim for y in outputs]
    for t, y in zip(inferred, outputs, strict=True):
        assert all(d == real or d is UNKNOWN or (d == "n" and real == n)
                   for d, real in zip(t.shape, y.shape, strict=True)), (t.shape, y.shape)


F32 = np.dtype(np.float32)


def _infer(name, *types, **attrs):
    return infer(graphcore.get_op(name)(**attrs), types)


def _t(*shape, dtype=F32):
    return TensorType(shape, dtype)


@pytest.mark.parametrize("name, inputs, attrs, shape", [
    ("linear", [("batch", 7), (3, 7), (3,)], {}, ("batch", 3)),
    ("linear", [("batch", "length", 7), (3, 7)], {}, ("batch", "length", 3)),
    ("relu", [("batch", 5)], {}, ("batch", 5)),
    ("add", [("batch", 5), (5,)], {}, ("batch", 5)),
    ("add", [("batch", 5), ("batch", 1)], {}, ("batch", 5)),
    ("add", [("batch", 5), ("other", 5)], {}, (UNKNOWN, 5)),
    ("mul", [("batch", 1), (1, 4)], {}, ("batch", 4)),
    ("reshape", [("batch", 4, 3)], {"shape": (-1, 12)}, ("batch", 12)),
    ("reshape", [("batch", 4, 3)], {"shape": (-1, 6)}, (UNKNOWN, 6)),
    ("reshape", [("batch", 4, 3)], {"shape": (-1,)}, (UNKNOWN,)),
    ("transpose", [("batch", "length", 4)], {}, (4, "length", "batch")),
    ("concat", [("batch", 2), ("batch", 3)], {}, ("batch", 5)),
    ("concat", [("batch", "a"), ("batch", 3)], {}, ("batch", UNKNOWN)),
    ("sum", [("batch", 3)], {"axis": 1}, ("batch",)),
    ("mean", [("batch", 3)], {}, ()),
    ("softmax", [("batch", 3)], {}, ("batch", 3)),
    ("convolution_2d", [("batch", 3, 28, 28), (8, 3, 5, 5), (8,)], {"pad": 2},
     ("batch", 8, 28, 28)),
    ("max_pooling_2d", [("batch", 8, 28, 28)], {"ksize": 2}, ("batch", 8, 14, 14)),
    ("embed_id", [("batch", "length"), (100, 16)], {}, ("batch", "length", 16)),
    ("get_item", [("batch", "length", 4)], {"index": (slice(None), -1)}, ("batch", 4)),
    ("get_item", [("batch", 5)], {"index": (Ellipsis, slice(1, 3))}, ("batch", 2)),
])
def test_symbolic_dims_propagate(name, inputs, attrs, shape):
    dtypes = {"embed_id": [np.dtype(np.int32), F32]}.get(name, [F32] * len(inputs))
    types = [TensorType(s, d) for s, d in zip(inputs, dtypes, strict=True)]
    out, = _infer(name, *types, **attrs)
    assert out.shape == shape


def test_softmax_cross_entropy_of_a_symbolic_batch():
    loss, = _infer("softmax_cross_entropy", _t("batch", 3), _t("batch", dtype=np.int32))
    assert loss == TensorType((), F32)
    per_row, = _infer("softmax_cross_entropy", _t("batch", 3), _t("batch", dtype=np.int32),
                      reduce="no")
    assert per_row.shape == ("batch",)


def test_lstm_keeps_a_symbolic_batch():
    c, h = _infer("lstm", _t("batch", 4), _t("batch", 16))
    assert c.shape == h.shape == ("batch", 4)


# --- mismatches -----------------------------------------------------------------------------

@pytest.mark.parametrize("name, inputs, attrs, words", [
    ("linear", [("batch", 5), (2, 7)], {}, ["linear", "(batch, 5)", "(2, 7)"]),
    ("linear", [("batch", 7), (2, 7), (3,)], {}, ["linear", "(3,)", "(2, 7)"]),
    ("add", [(3, 4), (5,)], {}, ["add", "(3, 4)", "(5,)"]),
    ("reshape", [(4, 3)], {"shape": (5, -1)}, ["reshape", "(4, 3)", "(5, -1)"]),
    ("reshape", [(4, 3)], {"shape": (5, 2)}, ["reshape", "(4, 3)"]),
    ("concat", [("batch", 2, 1), ("batch", 3, 2)], {}, ["concat", "(batch, 2, 1)",
                                                        "(batch, 3, 2)"]),
    ("sum", [("batch", 3)], {"axis": 2}, ["sum", "axis 2", "(batch, 3)"]),
    ("convolution_2d", [("batch", 3, 28, 28), (8, 1, 5, 5)], {},
     ["convolution_2d", "(batch, 3, 28, 28)", "(8, 1, 5, 5)"]),
    ("max_pooling_2d", [("batch", 28, 28)], {"ksize": 2}, ["max_pooling_2d", "(batch, 28, 28)"]),
    ("mean_squared_error", [("batch", 3), ("batch", 4)], {},
     ["mean_squared_error", "(batch, 3)", "(batch, 4)"]),
    ("transpose", [(2, 3)], {"axes": (0, 0)}, ["transpose", "(2, 3)"]),
])
def test_a_mismatch_names_the_op_and_the_shapes(name, inputs, attrs, words):
    with pytest.raises(ShapeInferenceError) as caught:
        _infer(name, *[_t(*s) for s in inputs], **attrs)
    assert isinstance(caught.value, errors.ShapeError)
    assert caught.value.op == name
    for word in words:
        assert word in str(caught.value)


def test_a_wrong_dtype_is_a_dtype_error():
    with pytest.raises(DTypeInferenceError) as caught:
        _infer("embed_id", _t("batch"), _t(10, 4))
    assert isinstance(caught.value, errors.DTypeError)
    assert "embed_id" in str(caught.value) and "float32" in str(caught.value)


def test_every_mismatch_found_by_a_rule_is_one_forward_finds():
    """A rule is not stricter than the op: what it refuses, forward refuses too."""
    x, W = np.zeros((4, 5), np.float32), np.zeros((2, 7), np.float32)
    with pytest.raises(ShapeInferenceError):
        _infer("linear", *_types([x, W]))
    with pytest.raises(errors.ShapeError):
        graphcore.get_op("linear")().apply((x, W))


def test_a_wrong_number_of_inputs_names_the_op():
    with pytest.raises(ShapeInferenceError, match="relu: takes 1 input, got 2"):
        _infer("relu", _t(3), _t(3))


def test_an_op_without_a_rule_is_unknown():
    assert infer(graphcore.get_op("transpose_sequence")(), (_t(3, 2), _t(2, 2))) is None
