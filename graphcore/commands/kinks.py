"""Where a spec's loss has no derivative, and which op puts it there.

``graphtool check`` compares backward with finite differences of the loss along a direction.
At a point where the loss is not differentiable (relu or abs at 0, a tie in max, max pooling,
maximum or minimum, clip at a bound, ...) finite differences measure no derivative, so a
disagreement there says nothing about backward. Two things tell such a point:

- ``Slopes``: from five samples ``f(k * eps)``, ``k = -2..2``, the one-sided derivatives (left
  and right), and the central ones over ``eps`` and ``2 eps``. Where ``f`` is smooth they agree
  to ``O(eps**2)`` plus rounding; across a kink the left and right ones differ by the jump in
  slope, and a kink inside the samples (not at 0) makes the central ones disagree with them.
- ``locate_kinks``: the same five samples run again with every op's inputs and outputs
  recorded; an op whose output bends while all its inputs move smoothly is where the loss
  loses its derivative. It names the op and its step in the spec (a ``Kink``), or the ``if``
  or ``while`` whose branch the samples change.

>>> s = slopes(np.array([f(k * eps) for k in SAMPLES]), eps)
>>> s.smooth(tolerance)                      # the derivative is defined here
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphcore.interpreter.examples import example_count
from graphcore.interpreter.forward import ForwardPass
from graphcore.interpreter.parameters import SpecModel, seeded
from graphcore.interpreter.results import PathEntry
from graphcore.language.syntax import Spec
from graphcore.language.yaml_source import Loc
from graphcore.variable import Variable

SAMPLES = (-2, -1, 0, 1, 2)  # where f is sampled, in steps of eps
# Rounding of one sample, in units in the last place of the largest sample: a smooth function
# whose estimates differ by less than this much rounding is not called a kink.
_ROUNDING_ULPS = 64
# An intermediate value bends when its slopes disagree by this fraction of the slope.
_BEND_RTOL = 1e-3


@dataclass(frozen=True)
class Slopes:
    """Derivative estimates from five samples (scalars, or arrays elementwise)."""

    numeric: Any  # the five-point central difference, accurate to O(eps**4)
    spread: Any  # max - min of the left, right, and the two central estimates
    rounding: Any  # what rounding of the samples alone can make of ``spread``
    finite: Any  # every sample finite
    changes_finiteness: Any  # some samples finite, others not (a NaN/Inf boundary)

    def smooth(self, tolerance: Any) -> Any:
        """True where the derivative is defined to within ``tolerance``."""
        return ~self.changes_finiteness & (~self.finite | (self.spread <= tolerance
                                                            + self.rounding))


def slopes(samples: np.ndarray, eps: float) -> Slopes:
    """``Slopes`` of ``samples``: shape ``(5, ...)``, taken at ``SAMPLES * eps``."""
    samples = np.asarray(samples, np.float64)
    with np.errstate(all="ignore"):
        m2, m1, c, p1, p2 = samples
        left = (3 * c - 4 * m1 + m2) / (2 * eps)
        right = (-3 * c + 4 * p1 - p2) / (2 * eps)
        near = (p1 - m1) / (2 * eps)
        wide = (p2 - m2) / (4 * eps)
        estimates = np.stack([left, right, near, wide])
        spread = estimates.max(axis=0) - estimates.min(axis=0)
        numeric = (m2 - 8 * m1 + 8 * p1 - p2) / (12 * eps)
        rounding = (_ROUNDING_ULPS * np.finfo(np.float64).eps
                    * np.abs(samples).max(axis=0) / eps)
    isfinite = np.isfinite(samples)
    return Slopes(numeric, spread, rounding, isfinite.all(axis=0),
                  isfinite.any(axis=0) & ~isfinite.all(axis=0))


@dataclass(frozen=True)
class Kink:
    """Where the loss has no derivative: an op (its registry name) at a spec step whose
    input sits at the op's kink, with how many elements of its output bend; or a branch
    (``op`` "if"/"while"/...) that the points around the checked one take differently."""

    op: str
    step: str | None  # the step's op as the spec writes it (a layer's, for ops inside one)
    loc: Loc | None
    elements: int

    def describe(self) -> str:
        if self.loc is None:
            return "the path taken changes within eps"
        where = f" at {self.loc}"
        if self.elements == 0:
            return f"the {self.op} step{where} takes another path within eps"
        inside = f" inside {self.step}" if self.step is not None and self.step != self.op else ""
        plural = "s" * (self.elements != 1)
        return f"{self.op}{inside}{where}, {self.elements} element{plural} at its kink"

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "step": self.step,
                "at": None if self.loc is None else str(self.loc), "elements": self.elements}


@dataclass
class _Recording:
    """One forward pass of every example: the path taken and, per op node in a fixed order,
    (its op name, its step, its float input arrays, its float output arrays)."""

    path: list[tuple]
    nodes: list[tuple[str, Any, list[np.ndarray], list[np.ndarray]]]


def record(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], seed: int) -> _Recording:
    """Run the spec's loss as ``loss_function`` does (per example, the dropout masks of
    ``seed + 1``), keeping every op's inputs and outputs."""
    n = example_count(spec, inputs)
    path: list[PathEntry] = []
    nodes: list[tuple[str, Any, list[np.ndarray], list[np.ndarray]]] = []
    with seeded(seed + 1):
        for i in range(n):
            example = {k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()}
            run = ForwardPass(spec, model, example, path)
            _, loss = run.forward()
            steps = run.op_steps()
            for node in _nodes(loss):
                outputs = [ref() for ref in node.outputs]
                nodes.append((getattr(node, "name", None) or node.label, steps.get(id(node)),
                              [_floats(v) for v in node.inputs],
                              [None if v is None else _floats(v) for v in outputs]))
    return _Recording([(e.kind, e.loc, repr(e.detail)) for e in path], nodes)


def _floats(v: Variable) -> np.ndarray | None:
    a = v.array
    return np.array(a, np.float64) if a is not None and a.dtype.kind == "f" else None


def _nodes(loss: Variable | None) -> list:
    """The function nodes behind ``loss``, inputs before the nodes that use them, in an
    order fixed by the graph's structure (so the same path gives the same order)."""
    if loss is None or loss.creator is None:
        return []
    order, seen = [], set()
    stack: list[tuple[Any, bool]] = [(loss.creator, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for v in reversed(node.inputs):
            if v.creator is not None and id(v.creator) not in seen:
                stack.append((v.creator, False))
    return order


def locate_kinks(sample: Callable[[int], _Recording]) -> list[Kink]:
    """The kinks the loss meets around a point: ``sample(k)`` records the spec at
    ``point + k * eps * direction`` for each ``k`` of ``SAMPLES``."""
    recordings = [sample(k) for k in SAMPLES]
    first = recordings[0]
    for r in recordings[1:]:
        if r.path != first.path:
            return [_branch(first.path, r.path)]
        if [n[0] for n in r.nodes] != [n[0] for n in first.nodes]:
            return [Kink("branch", None, None, 0)]
    found: dict[tuple, int] = {}
    for i, (op, step, inputs, outputs) in enumerate(first.nodes):
        if not all(_smooth(recordings, i, 2, j) for j, x in enumerate(inputs) if x is not None):
            continue  # bends downstream of another op's kink
        bends = sum(_bends(recordings, i, 3, j) for j, y in enumerate(outputs) if y is not None)
        if bends:
            key = (op, None if step is None else step.op, None if step is None else step.loc)
            found[key] = found.get(key, 0) + bends
    kinks = [Kink(op, step_op, loc, count) for (op, step_op, loc), count in found.items()]
    return sorted(kinks, key=lambda k: (k.loc is None, k.loc.line if k.loc else 0,
                                        k.loc.col if k.loc else 0, k.op))


def _branch(a: list[tuple], b: list[tuple]) -> Kink:
    for (kind, loc, data), other in zip(a, b, strict=False):
        if (kind, loc, data) != other:
            return Kink(kind, kind, loc, 0)
    return Kink("branch", None, None, 0)


def _stack(recordings: list[_Recording], node: int, field: int, j: int) -> np.ndarray | None:
    arrays = [r.nodes[node][field][j] for r in recordings]
    if any(a is None for a in arrays) or len({a.shape for a in arrays}) != 1:
        return None
    return np.stack([a.reshape(-1) for a in arrays])


def _slopes_of(recordings, node, field, j) -> Slopes | None:
    # In steps of one sample: spread, slope and rounding all scale alike with eps.
    stack = _stack(recordings, node, field, j)
    return None if stack is None else slopes(stack, 1.0)


def _bending(s: Slopes) -> np.ndarray:
    with np.errstate(all="ignore"):
        size = np.abs(s.numeric)
    return ~s.smooth(_BEND_RTOL * np.where(np.isfinite(size), size, 0.0))


def _smooth(recordings, node, field, j) -> bool:
    s = _slopes_of(recordings, node, field, j)
    return s is None or not _bending(s).any()


def _bends(recordings, node, field, j) -> int:
    s = _slopes_of(recordings, node, field, j)
    return 0 if s is None else int(_bending(s).sum())
