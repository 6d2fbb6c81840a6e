"""A live predicate evaluated for every example of a batch at once.

``outcomes(predicate, scope, batched, batch)`` gives one boolean per example: names in
``batched`` hold values with a leading example axis, the others are shared. Functions reduce
over each example's own axes (``mean(x)`` is one number per example) and arithmetic aligns the
examples' shapes as one example's evaluation would. A case the vectorised form does not cover
(strings, a possible division by zero, a value of more than one element, NaN) is evaluated one
example at a time with the ordinary evaluator, so errors are exactly the per-example ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from graphcore.language import predicate as pred
from graphcore.language.predicate.evaluate import (
    COMPARISONS,
    NUMPY_ARITHMETIC,
    arithmetic,
    call_function,
    compare_values,
    evaluate_node,
    lookup,
    numeric,
    truth,
)
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
    String,
)


class _Scalarwise(Exception):
    """Fall back to one evaluation per example."""


def outcomes(predicate: pred.Predicate, scope: Mapping[str, object], batched: set[str],
             batch: int) -> np.ndarray:
    """One outcome per example (a bool array of length ``batch``)."""
    return evaluator(predicate, batched)(scope, batch)


def evaluator(predicate: pred.Predicate, batched: set[str]):
    """``outcomes`` for ``predicate`` with ``batched`` names, as a function ``(scope, batch)``
    whose tree walk is done once (guards and partitions evaluate at every replay)."""
    key = (predicate, frozenset(batched))
    found = _COMPILED.get(key)
    if found is None:
        if len(_COMPILED) >= 256:
            _COMPILED.clear()
        found = _COMPILED[key] = _evaluator(predicate, key[1])
    return found


_COMPILED: dict[tuple, object] = {}


def _evaluator(predicate: pred.Predicate, batched: frozenset[str]):
    run = _compile(predicate.root, batched)

    def evaluate(scope: Mapping[str, object], batch: int) -> np.ndarray:
        try:
            value, is_batched = run(scope, batch)
            return _truths(value, is_batched, batch)
        except (_Scalarwise, pred.PredicateError, TypeError, ValueError, OverflowError):
            return _one_by_one(predicate, scope, batched, batch)

    return evaluate


def _one_by_one(predicate: pred.Predicate, scope: Mapping[str, object], batched: set[str],
                batch: int) -> np.ndarray:
    names = {ref.name for ref in predicate.name_refs()}
    values = {name: scope[name] for name in names if name in scope}
    result = np.empty(batch, dtype=bool)
    for i in range(batch):
        env = {k: (_array(v)[i] if k in batched else v) for k, v in values.items()}
        result[i] = predicate.evaluate_bool(env)
    return result


def _array(value: object) -> np.ndarray:
    return value.array if hasattr(value, "array") and not isinstance(value, np.ndarray) \
        else np.asarray(value)


def _truths(value, is_batched: bool, batch: int) -> np.ndarray:
    if not is_batched:
        return np.full(batch, truth(value, "predicate", 1, 1))
    if type(value) is np.ndarray and value.shape == (batch,):
        array = value
    elif isinstance(value, str) or np.size(value) != batch:
        raise _Scalarwise
    else:
        array = np.asarray(value).reshape(batch)
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise _Scalarwise
    return array.astype(bool, copy=False)


def _align(a, a_batched: bool, b, b_batched: bool):
    """Give the batched operands one rank, so each example broadcasts as it would alone."""
    if a_batched and not b_batched and type(a) is np.ndarray and a.ndim == 1 \
            and not isinstance(b, np.ndarray):
        return a, b  # one number per example against a number: already aligned
    ra = (a.ndim if isinstance(a, np.ndarray) else np.ndim(a)) - a_batched
    rb = (b.ndim if isinstance(b, np.ndarray) else np.ndim(b)) - b_batched
    rank = max(ra, rb)

    def lift(x, is_batched, r):
        if not is_batched or r >= rank:
            return x
        x = np.asarray(x)
        return x.reshape((x.shape[0],) + (1,) * (rank - r) + x.shape[1:])

    return lift(a, a_batched, ra), lift(b, b_batched, rb)


def _compile(node: Node, batched: frozenset[str]):
    if isinstance(node, Number | String | Boolean):
        constant = (node.value, False)
        return lambda env, batch: constant
    if not _reads(node, batched):
        return lambda env, batch: (evaluate_node(node, env), False)  # shared: the ordinary way
    match node:
        case Name(name=name):
            def run(env, batch):
                value = env[name] if name in env else None
                if type(value) is not np.ndarray or value.dtype.kind not in "biuf":
                    value = lookup(node, env)  # a Variable, or an error to report
                if not isinstance(value, np.ndarray) or value.shape[:1] != (batch,):
                    raise _Scalarwise
                return value, True
        case Call(function=function, argument=argument):
            inner = _compile(argument, batched)

            def run(env, batch):
                value, is_batched = inner(env, batch)
                if not is_batched:
                    return call_function(node, value), False
                return _batched_call(function, numeric(value), batch)
        case Negate(operand=operand):
            inner = _compile(operand, batched)

            def run(env, batch):
                value, is_batched = inner(env, batch)
                if not is_batched or isinstance(value, str):
                    raise _Scalarwise
                return np.negative(numeric(value)), True
        case Not(operand=operand):
            inner = _compile(operand, batched)

            def run(env, batch):
                return ~_truths(*inner(env, batch), batch), True
        case Compare(op=op, left=left, right=right):
            first, second, compare = _compile(left, batched), _compile(right, batched), \
                COMPARISONS[op]

            def run(env, batch):
                a, fa = first(env, batch)
                b, fb = second(env, batch)
                if not (fa or fb):  # e.g. dim(x) == 1: one value for every example
                    return compare_values(op, a, b, node.op_column), False
                if isinstance(a, str) or isinstance(b, str):
                    raise _Scalarwise
                a, b = _align(a, fa, b, fb)
                return compare(a, b), True
        case Arithmetic(first=first, steps=steps):
            head = _compile(first, batched)
            rest = [(step.op, step.column, _compile(step.operand, batched)) for step in steps]

            def run(env, batch):
                value, is_batched = head(env, batch)
                for op, column, operand in rest:
                    other, other_batched = operand(env, batch)
                    if not (is_batched or other_batched):
                        value = arithmetic(op, value, other, column)
                        continue
                    if isinstance(value, str) or isinstance(other, str):
                        raise _Scalarwise
                    if op in "/%" and np.any(np.asarray(numeric(other)) == 0):
                        raise _Scalarwise  # one example may divide by zero: its own error
                    a, b = _align(numeric(value), is_batched, numeric(other), other_batched)
                    with np.errstate(all="ignore"):
                        value = NUMPY_ARITHMETIC[op](a, b)
                    is_batched = True
                return value, is_batched
        case Logical(op=op, operands=operands):
            parts = [_compile(o, batched) for o in operands]
            combine = np.logical_or.reduce if op == "or" else np.logical_and.reduce

            def run(env, batch):
                return combine([_truths(*part(env, batch), batch) for part in parts]), True
        case _:
            def run(env, batch):
                raise _Scalarwise
    return run


def _reads(node: Node, batched: set[str]) -> bool:
    match node:
        case Name(name=name):
            return name in batched
        case Call(argument=argument) | Negate(operand=argument) | Not(operand=argument):
            return _reads(argument, batched)
        case Compare(left=left, right=right):
            return _reads(left, batched) or _reads(right, batched)
        case Arithmetic(first=first, steps=steps):
            return _reads(first, batched) or any(_reads(s.operand, batched) for s in steps)
        case Logical(operands=operands):
            return any(_reads(o, batched) for o in operands)
    return False


def _batched_call(name: str, value: np.ndarray, batch: int):
    if name == "abs":
        return np.abs(value), True
    per = value.shape[1:]
    if name == "size":
        return int(np.prod(per, dtype=np.int64)), False
    if name == "dim":
        return len(per), False
    if name == "len":
        if not per:
            raise _Scalarwise
        return int(per[0]), False
    if value.size == 0:
        raise _Scalarwise
    axes = _AXES[value.ndim] if value.ndim < len(_AXES) else tuple(range(1, value.ndim))
    with np.errstate(all="ignore"):
        if name == "norm":
            flat = value.reshape(batch, -1)
            return np.sqrt(np.einsum("ij,ij->i", flat, flat)) if flat.dtype.kind == "f" \
                else np.linalg.norm(flat, axis=1), True
        if name == "mean" and value.dtype.kind == "f" and value.dtype.itemsize >= 4:
            # np.mean's own steps (a sum, then a division in place) without its wrapper
            total = np.add.reduce(value, axis=axes)
            return np.true_divide(total, np.intp(math.prod(per)), out=total), True
        return _REDUCTIONS[name](value, axis=axes), True


_AXES = [tuple(range(1, ndim)) for ndim in range(8)]  # every axis but the examples'
_REDUCTIONS = {"mean": np.mean, "sum": np.sum, "min": np.min, "max": np.max, "std": np.std}
