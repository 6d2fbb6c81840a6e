"""A batched ``if`` whose examples disagree, run in the same pass: its rows partitioned.

Without this, a group whose examples disagree on a live ``if`` stops (``Split``) and each
side reruns as a group of its own, evaluating everything before the ``if`` again, and in
static mode replaying two plans, each guarding the predicate once more. Here the run goes on:
a ``RowPartition`` node evaluates the predicate for every example and gives the rows' order
(the ``then`` examples first), each branch runs on its rows (``permutate`` by that order, then
a slice: a view), and every value a branch changed is merged back into the examples' order
(the two sides concatenated, ``permutate`` inverted). All of it is ordinary differentiable
ops, so gradients flow through the merge to each side's parameters; in static mode the
partition is a plan step (``static/guards.py``) that computes the order at every replay.

It applies where the merge is sure to be exact: branch bodies with no live control flow of
their own (a loop or an ``if`` that could split again), and values the two sides leave with
the same shape and dtype per example; anything else splits the group as before. The path
records a ``RowSplit`` (which partition, how many rows took ``then``, each side's entries),
expanded into each example's own ``if`` entry when a caller reads the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from graphcore import functions as F
from graphcore.batching.analysis import reads
from graphcore.batching.outcomes import Fallback, Split
from graphcore.batching.predicates import evaluator
from graphcore.function_node import FunctionNode
from graphcore.interpreter.results import PathEntry
from graphcore.language import predicate as pred
from graphcore.language.syntax import PREVIOUS, ForEachStep, IfStep, WhileStep, walk_steps
from graphcore.variable import Variable

_MISSING = object()
_INFO_KEY = "_graphcore_partition"


class RowPartition(FunctionNode):
    """The rows of a batch in the order ``then`` examples first, ``else`` examples after (an
    integer array), from a live predicate's outcome per example. Not differentiable; not a
    registry op (a spec cannot name it): the IR op ``partition``, lowered by static mode to a
    step that also checks the split keeps the traced size."""

    name = "partition"
    label = "RowPartition"

    def __init__(self, predicate: pred.Predicate, names: list[str],
                 static_env: Mapping[str, Any], batched: set[str], batch: int, at: str,
                 outcome: np.ndarray) -> None:
        self.predicate, self.names, self.static_env = predicate, names, dict(static_env)
        self.batched, self.batch, self.at = batched, batch, at
        self.then_rows = int(np.count_nonzero(outcome))
        self._evaluate = evaluator(predicate, batched)
        self._env = dict(static_env)  # the names read, refilled at each evaluation
        self._known: np.ndarray | None = outcome  # the first forward's, evaluated already

    def op_attrs(self) -> dict[str, Any]:  # shown in IR text and drawings
        return {"predicate": str(self.predicate), "then": self.then_rows}

    def outcomes(self, arrays) -> np.ndarray:
        """Each example's outcome, the predicate reading ``arrays`` (in ``names``' order)."""
        env = self._env
        for name, array in zip(self.names, arrays, strict=True):
            env[name] = array
        try:
            return self._evaluate(env, self.batch)
        except pred.PredicateError as e:
            raise Fallback(str(e)) from None  # the per-example run locates it

    def forward(self, inputs):
        outcome, self._known = self._known, None
        if outcome is None:
            outcome = self.outcomes(inputs)
        return np.concatenate([np.flatnonzero(outcome), np.flatnonzero(~outcome)]),

    def backward(self, indexes, grad_outputs):
        return (None,) * len(self.inputs)


class RowSplit:
    """A partitioned ``if`` in a group's path: partition ``index`` of the run (its order is
    read back per call), ``then_rows`` rows took ``then``; each side's own entries."""

    __slots__ = ("loc", "predicate", "index", "then_rows", "sides")

    def __init__(self, loc, predicate: str, index: int, then_rows: int,
                 sides: tuple[list, list]) -> None:
        self.loc, self.predicate, self.index = loc, predicate, index
        self.then_rows, self.sides = then_rows, sides


def _inline_info(step: IfStep) -> tuple[bool, frozenset[str]]:
    """Whether ``step`` can run partitioned (its branches hold no live control flow), and
    the names its branches read; worked out once per step."""
    found = step.__dict__.get(_INFO_KEY)
    if found is None:
        found = step.__dict__[_INFO_KEY] = _work_out(step)
    return found


def _work_out(step: IfStep) -> tuple[bool, frozenset[str]]:
    bodies = step.then + step.otherwise
    for s in walk_steps(bodies):
        if isinstance(s, WhileStep | ForEachStep) or isinstance(s, IfStep) \
                and s.resolved is None:
            return False, frozenset()
    names: set[str] = {PREVIOUS}
    for s in bodies:
        names |= reads(s)
    return True, frozenset(names)


def can_partition(step: IfStep) -> bool:
    return _inline_info(step)[0]


def partitioned_if(run, step: IfStep, suffix: str, scope: Mapping[str, Any], batched: set[str],
                   outcome: np.ndarray) -> None:
    """Run ``step`` over ``run``'s batch, whose examples' ``outcome``s differ (``run``: a
    ``batch_run.BatchRun`` at the group's full batch)."""
    names, inputs, static = [], [], {}
    for ref in step.predicate.name_refs():
        name = ref.name
        if name in static or name in names:
            continue
        value = scope[name]
        if isinstance(value, Variable | np.ndarray) and not name.startswith(("params.",
                                                                             "loop.")):
            names.append(name)
            inputs.append(value)
        else:
            static[name] = value
    partition = RowPartition(step.predicate, names, static, batched, run.batch,
                             str(step.predicate_loc), outcome)
    order = partition.apply(inputs)[0]
    index = len(run.partitions)
    run.partitions.append(order)
    n, k = run.batch, partition.then_rows
    env, bat, path, padded = run.env, run.bat, run.path, len(run.padded)
    read = _inline_info(step)[1]
    permuted: dict[int, Any] = {}  # id of a batched value -> its rows in partition order
    sides = []
    for rows, body, size in ((slice(0, k), step.then, k), (slice(k, n), step.otherwise, n - k)):
        side_env, side_bat = dict(env), dict(bat)
        for name in read:
            value = env.get(name, _MISSING)
            if value is _MISSING or not bat.get(name):
                continue
            if isinstance(value, tuple):
                raise Split(outcome)
            ordered = permuted.get(id(value))
            if ordered is None:
                ordered = permuted[id(value)] = F.permutate(value, order)
            side_env[name] = F.get_item(ordered, rows)
        start = dict(side_env)
        side_path: list = []
        run.env, run.bat, run.batch, run.path = side_env, side_bat, size, side_path
        try:
            run.steps(body, suffix)
        finally:
            run.env, run.bat, run.batch, run.path = env, bat, n, path
        if len(run.padded) != padded:
            raise Split(outcome)
        sides.append((side_env, side_bat, start, side_path, size))
    _merge(env, bat, sides, order, outcome)
    path.append(RowSplit(step.loc, str(step.predicate), index, k,
                         (sides[0][3], sides[1][3])))


def _merge(env: dict, bat: dict, sides: list, order: Variable, outcome: np.ndarray) -> None:
    """Each value a branch changed, back in the examples' order in ``env``."""
    (env_a, bat_a, start_a, _, k), (env_b, bat_b, start_b, _, rest) = sides
    merged: dict[tuple[int, int], Any] = {}
    for name in set(env_a) | set(env_b):
        a, b = env_a.get(name, _MISSING), env_b.get(name, _MISSING)
        if a is start_a.get(name, _MISSING) and b is start_b.get(name, _MISSING):
            continue  # neither branch changed it
        if a is _MISSING or b is _MISSING:
            env.pop(name, None)  # bound in one branch only: the loader refuses reading it
            bat.pop(name, None)
            continue
        key = (id(a), id(b))
        value = merged.get(key)
        if value is None:
            rows_a = _rows(a, bat_a.get(name, False), k)
            rows_b = _rows(b, bat_b.get(name, False), rest)
            if rows_a is None or rows_b is None or rows_a.shape[1:] != rows_b.shape[1:] \
                    or rows_a.dtype != rows_b.dtype:
                raise Split(outcome)  # the sides' values differ in kind: groups of their own
            value = merged[key] = F.permutate(F.concat([rows_a, rows_b], axis=0), order,
                                              inv=True)
        env[name], bat[name] = value, True


def _rows(value: Any, batched: bool, size: int) -> Variable | None:
    """``value`` with ``size`` rows (a shared value broadcast), or None for a tuple."""
    if isinstance(value, tuple):
        return None
    if not isinstance(value, Variable):
        value = Variable(np.asarray(value), requires_grad=False)
    if batched:
        return value
    return F.broadcast_to(value, (size,) + tuple(value.shape))


def expand(entries: list, row: int, orders: list[np.ndarray],
           inverses: dict[int, np.ndarray]) -> list[PathEntry]:
    """The entries of one example (at ``row`` of the run), ``RowSplit``s resolved by the
    partitions' ``orders`` (``inverses``: each order's inverse, made once per group)."""
    if not any(isinstance(e, RowSplit) for e in entries):
        return entries
    out = []
    for e in entries:
        if not isinstance(e, RowSplit):
            out.append(e)
            continue
        inverse = inverses.get(e.index)
        if inverse is None:
            order = orders[e.index]
            inverse = inverses[e.index] = np.empty_like(order)
            inverse[order] = np.arange(len(order))
        then = bool(inverse[row] < e.then_rows)
        out.append(PathEntry("if", e.loc, {"branch": "then" if then else "else",
                                           "predicate": e.predicate, "at_load": False}))
        out.extend(e.sides[0 if then else 1])
    return out

