"""A spec predicate on live values as ONNX nodes: a boolean scalar, computed as the predicate
language does (reductions of arrays, then float64 arithmetic and comparisons). numpy reduces a
float32 array in float32 and ONNX here in float64: a value within rounding of the threshold
may decide the other way."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from graphcore.language.predicate.nodes import (
    Arithmetic,
    Boolean,
    Call,
    Compare,
    Logical,
    Name,
    Negate,
    Not,
    Number,
)
from graphcore.onnx.errors import ExportError

_REDUCE = {"mean": "ReduceMean", "sum": "ReduceSum", "min": "ReduceMin", "max": "ReduceMax"}
_COMPARE = {"==": "Equal", "<": "Less", "<=": "LessOrEqual", ">": "Greater",
            ">=": "GreaterOrEqual"}
_ARITHMETIC = {"+": "Add", "-": "Sub", "*": "Mul", "/": "Div"}


def emit_predicate(e, predicate, values: Mapping[str, str], constants: Mapping[str, object]):
    """ONNX name of the predicate's boolean result; ``values``: live names -> ONNX names,
    ``constants``: the other names it reads (params, loop counters) -> their values."""
    result = _emit(e, predicate.root, values, constants, predicate)
    return e.op("Cast", [result], to=9)  # BOOL


def _f64(e, value) -> str:
    return e.const(np.asarray(value, np.float64))


def _emit(e, node, values, constants, predicate) -> str:
    if isinstance(node, Number | Boolean):
        return _f64(e, float(node.value))
    if isinstance(node, Name):
        if node.name in values:
            return values[node.name]  # an array: only a reduction or a size-1 value compares
        value = constants.get(node.name)
        if isinstance(value, bool | int | float | np.number):
            return _f64(e, float(value))
        raise ExportError(f"predicate '{predicate}': '{node.name}' is not a number")
    if isinstance(node, Call) and isinstance(node.argument, Name) \
            and node.argument.name in values:
        x = e.op("Cast", [values[node.argument.name]], to=11)  # DOUBLE
        flat = e.op("Reshape", [x, e.const(np.asarray([-1], np.int64))])
        if node.function in _REDUCE:
            return e.op(_REDUCE[node.function], [flat], keepdims=0)
        if node.function == "norm":
            return e.op("ReduceL2", [flat], keepdims=0)
        if node.function == "abs":
            return e.op("Abs", [x])
    if isinstance(node, Negate):
        return e.op("Neg", [_emit(e, node.operand, values, constants, predicate)])
    if isinstance(node, Not):
        inner = e.op("Cast", [_emit(e, node.operand, values, constants, predicate)], to=9)
        return e.op("Cast", [e.op("Not", [inner])], to=11)
    if isinstance(node, Compare) and node.op in _COMPARE | {"!=": None}:
        left = _emit(e, node.left, values, constants, predicate)
        right = _emit(e, node.right, values, constants, predicate)
        left, right = (e.op("Cast", [v], to=11) for v in (left, right))
        if node.op == "!=":
            out = e.op("Not", [e.op("Equal", [left, right])])
        else:
            out = e.op(_COMPARE[node.op], [left, right])
        return e.op("Cast", [out], to=11)
    if isinstance(node, Arithmetic) and all(s.op in _ARITHMETIC for s in node.steps):
        acc = e.op("Cast", [_emit(e, node.first, values, constants, predicate)], to=11)
        for step in node.steps:
            operand = e.op("Cast", [_emit(e, step.operand, values, constants, predicate)], to=11)
            acc = e.op(_ARITHMETIC[step.op], [acc, operand])
        return acc
    if isinstance(node, Logical):
        parts = [e.op("Cast", [_emit(e, p, values, constants, predicate)], to=9)
                 for p in node.operands]
        acc = parts[0]
        for part in parts[1:]:
            acc = e.op("And" if node.op == "and" else "Or", [acc, part])
        return e.op("Cast", [acc], to=11)
    raise ExportError(f"predicate '{predicate}': this form is not mapped to ONNX yet")
