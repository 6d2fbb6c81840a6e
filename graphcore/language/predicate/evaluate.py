"""Evaluating a predicate tree over live values (numbers, strings, numpy arrays, Variables)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping

import numpy as np

from graphcore.language.predicate.nodes import (
    Arithmetic,
    Boolean,
    Call,
    Compare,
    Logical,
    Name,
    Negate,
    Node,
    Not,
    Number,
    PredicateError,
    String,
    Value,
)
from graphcore.registry import suggestion as _did_you_mean

# ------------------------------------------------------------------------------- evaluation

def _describe(value: Value) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, str):
        return "a string"
    return "a boolean" if isinstance(value, bool) else "a number"


def _normalize(value: object) -> Value:
    """0-d arrays and numpy scalars become Python scalars; other arrays stay arrays."""
    if isinstance(value, np.ndarray) and value.ndim == 0 or isinstance(value, np.generic):
        return value.item()
    return value  # type: ignore[return-value]


def numeric(value: Value) -> int | float | np.ndarray:
    """Booleans count as 0 and 1 in arithmetic (numpy refuses ``-`` on booleans)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, np.ndarray) and value.dtype == np.bool_:
        return value.astype(np.int64)
    return value  # type: ignore[return-value]


def _from_environment(raw: object, node: Name) -> Value:
    if hasattr(raw, "array") and not isinstance(raw, np.ndarray):
        raw = raw.array  # a graphcore Variable
        if raw is None:
            raise PredicateError(f"'{node.name}' has no value", node.column, node.length)
    if isinstance(raw, (bool, np.bool_)):
        return bool(raw)
    if isinstance(raw, (int, float, str)):
        return raw
    array = raw
    if isinstance(raw, (list, tuple)):
        try:
            array = np.asarray(raw)
        except ValueError:
            pass
    if isinstance(array, (np.ndarray, np.generic)) and array.dtype.kind in "biuf":
        return _normalize(array)
    kind = f"an array of dtype {array.dtype}" if isinstance(array, np.ndarray) \
        else f"a {type(raw).__name__}"
    raise PredicateError(f"'{node.name}' holds {kind}, which a predicate cannot use",
                         node.column, node.length)


def lookup(node: Name, env: Mapping[str, object]) -> Value:
    name = node.name
    if name in env:
        return _from_environment(env[name], node)
    head, _, rest = name.partition(".")
    group = env.get(head) if rest else None
    if isinstance(group, Mapping) and rest in group:
        return _from_environment(group[rest], node)
    candidates = [key for key in env if isinstance(key, str)]
    for key in ("params", "loop"):
        if isinstance(env.get(key), Mapping):
            candidates += [f"{key}.{field}" for field in env[key] if isinstance(field, str)]
    raise PredicateError(f"undefined name '{name}'", node.column, node.length,
                         _did_you_mean(name, candidates))


_PYTHON_ARITHMETIC: dict[str, Callable[[object, object], object]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "%": operator.mod}
NUMPY_ARITHMETIC: dict[str, Callable[[object, object], object]] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "%": np.mod}
COMPARISONS: dict[str, Callable[[object, object], object]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge}


def _combine_arrays(op: str, function: Callable[[object, object], object], left: object,
                    right: object, column: int) -> Value:
    """numpy semantics (broadcasting, inf/nan on division by zero, no warnings)."""
    shapes = (np.shape(left), np.shape(right))
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise PredicateError(f"'{op}' cannot combine shapes {shapes[0]} and {shapes[1]}",
                             column, len(op)) from None
    try:
        with np.errstate(all="ignore"):
            return _normalize(function(left, right))
    except (OverflowError, TypeError, ValueError) as err:
        raise PredicateError(f"'{op}' failed: {err}", column, len(op)) from None


def arithmetic(op: str, left: Value, right: Value, column: int) -> Value:
    if isinstance(left, str) or isinstance(right, str):
        raise PredicateError(f"'{op}' needs numbers, got {_describe(left)} and "
                             f"{_describe(right)}", column, 1)
    a, b = numeric(left), numeric(right)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return _combine_arrays(op, NUMPY_ARITHMETIC[op], a, b, column)
    if op in "/%" and b == 0:
        what = "division" if op == "/" else "modulo"
        raise PredicateError(f"{what} by zero", column, 1)
    try:
        return _PYTHON_ARITHMETIC[op](a, b)  # type: ignore[return-value]
    except OverflowError:
        raise PredicateError(f"'{op}' gives a number too large", column, 1) from None


def compare_values(op: str, left: Value, right: Value, column: int) -> Value:
    if isinstance(left, str) != isinstance(right, str):
        raise PredicateError(f"cannot compare {_describe(left)} with {_describe(right)}",
                             column, len(op))
    if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
        return _combine_arrays(op, COMPARISONS[op], left, right, column)
    return COMPARISONS[op](left, right)  # type: ignore[return-value]


def truth(value: Value, what: str, column: int, length: int) -> bool:
    if isinstance(value, str):
        raise PredicateError(f"{what} needs a boolean or a number, got a string", column,
                             length)
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise PredicateError(f"{what} needs one value, got an array of shape "
                                 f"{value.shape}", column, length)
        value = value.reshape(()).item()
    if isinstance(value, float) and math.isnan(value):
        raise PredicateError(f"{what} got NaN, which is neither true nor false", column,
                             length)
    return bool(value)


def call_function(node: Call, value: Value) -> Value:
    name, column, length = node.function, node.column, len(node.function)
    if isinstance(value, str):
        raise PredicateError(f"'{name}' needs a number or an array, got a string", column,
                             length)
    value = numeric(value)
    if name == "abs":
        return abs(value) if not isinstance(value, np.ndarray) else np.abs(value)
    try:
        array = np.asarray(value)
        if array.dtype.kind == "O":  # a Python int beyond int64
            array = np.asarray(float(value))  # type: ignore[arg-type]
    except OverflowError:
        raise PredicateError(f"'{name}' got a number too large", column, length) from None
    if name == "size":
        return int(array.size)
    if name == "dim":
        return int(array.ndim)
    if name == "len":
        if array.ndim == 0:
            raise PredicateError("'len' needs an array, got a scalar", column, length,
                                 "size counts all elements")
        return int(array.shape[0])
    if array.size == 0 and name in ("mean", "std", "min", "max"):
        raise PredicateError(f"'{name}' of an empty array", column, length)
    with np.errstate(all="ignore"):
        if name == "norm":
            return _normalize(np.linalg.norm(array.reshape(-1)))
        reduce = {"mean": np.mean, "sum": np.sum, "min": np.min, "max": np.max,
                  "std": np.std}[name]
        return _normalize(reduce(array))


def evaluate_node(node: Node, env: Mapping[str, object]) -> Value:
    match node:
        case Number(value=value) | String(value=value) | Boolean(value=value):
            return value
        case Name():
            return lookup(node, env)
        case Call(argument=argument):
            return call_function(node, evaluate_node(argument, env))
        case Negate(operand=operand):
            value = evaluate_node(operand, env)
            if isinstance(value, str):
                raise PredicateError("'-' needs a number, got a string", node.column, 1)
            value = numeric(value)
            return np.negative(value) if isinstance(value, np.ndarray) else -value
        case Not(operand=operand):
            return not truth(evaluate_node(operand, env), "'not'", node.column, 3)
        case Compare(op=op, left=left, right=right):
            return compare_values(op, evaluate_node(left, env), evaluate_node(right, env),
                                  node.op_column)
        case Arithmetic(first=first, steps=steps):
            value = evaluate_node(first, env)
            for step in steps:
                value = arithmetic(step.op, value, evaluate_node(step.operand, env), step.column)
            return value
        case Logical(op=op, operands=operands, op_columns=columns):
            stop_on = op == "or"  # 'or' stops at the first true operand, 'and' at a false one
            for index, operand in enumerate(operands):
                column = columns[max(index - 1, 0)]
                if truth(evaluate_node(operand, env), f"'{op}'", column, len(op)) == stop_on:
                    return stop_on
            return not stop_on
    raise TypeError(f"not a predicate node: {node!r}")


