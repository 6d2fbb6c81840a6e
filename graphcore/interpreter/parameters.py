"""What a spec run works with and gives back: ``SpecModel`` (the spec's parameters, one link
per layer scope) and ``build_model``, ``RunResult`` and its ``PathEntry`` records, and
``seeded`` (numpy's global generator seeded for a block), and how many examples a call's inputs
hold (``has_sequences``, ``example_count``) and each example's row of a per-row input
(``example_rows``). ``interpreter`` re-exports them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.interpreter.arguments import check_seed, check_spec
from graphcore.interpreter.lazy_fields import lazy_fields
from graphcore.language.layers import LAYERS
from graphcore.language.syntax import IfStep, OpStep, RepeatStep, Spec, Step
from graphcore.language.yaml_source import Loc
from graphcore.links.link import Chain, Link
from graphcore.variable import Variable


@dataclass
class PathEntry:
    """One decision the run made: ``kind`` is if | repeat | while | for_each | example |
    batch (the size a named leading axis took)."""

    kind: str
    loc: Loc
    detail: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "at": str(self.loc), **self.detail}


@dataclass(init=False)
class RunResult:
    """What one run produced. With sequence inputs (``lengths``) the graph ran once per
    example: ``outputs`` then hold the last example's values and ``example_outputs`` all.
    A batched call fills ``outputs``, ``loss``, ``path``, ``example_outputs``, ``loss_inputs``
    and ``batching`` on first read (``lazy_fields``); they read as plain values all the same."""

    outputs: dict[str, Any]
    loss: float | None
    path: list[PathEntry]
    timing_ms: dict[str, float]
    examples: int = 1
    example_outputs: list[dict[str, Any]] = field(default_factory=list)
    loss_variable: Variable | None = None
    # The arrays the loss step took, one tuple per example (metrics compare them).
    loss_inputs: list[tuple[Any, ...]] = field(default_factory=list)
    batching: dict[str, Any] | None = None  # how examples were batched (spec.batching)

    def __init__(self, outputs: dict[str, Any], loss: float | None, path: list[PathEntry],
                 timing_ms: dict[str, float], examples: int = 1,
                 example_outputs: list[dict[str, Any]] | None = None,
                 loss_variable: Variable | None = None,
                 loss_inputs: list[tuple[Any, ...]] | None = None,
                 batching: dict[str, Any] | None = None) -> None:
        # Written into __dict__ at once: the generated __init__ went through the lazy fields'
        # setters one by one, a measurable share of a small spec's whole run.
        self.__dict__.update(
            outputs=outputs, loss=loss, path=path, timing_ms=timing_ms, examples=examples,
            example_outputs=[] if example_outputs is None else example_outputs,
            loss_variable=loss_variable, loss_inputs=[] if loss_inputs is None else loss_inputs,
            batching=batching)


lazy_fields(RunResult, "outputs", "loss", "path", "example_outputs", "loss_inputs", "batching")


class SpecModel(Chain):
    """The parameters of a spec: one child link per layer scope, in file order."""

    def __init__(self, spec: Spec) -> None:
        super().__init__()
        self.spec = spec
        with self.init_scope():
            made = set()  # a layer shared by several steps is made once
            for scope, step in _layer_scopes(spec):
                if scope not in made:
                    made.add(scope)
                    setattr(self, scope, _make_layer(step))

    def layer(self, scope: str) -> Link:
        return getattr(self, scope)

    def initialized(self) -> bool:
        """True once every parameter has its array (lazily sized ones get theirs, drawn from
        numpy's global generator, on the first run); remembered once true."""
        if not self.__dict__.get("_all_initialized", False):
            self.__dict__["_all_initialized"] = all(
                p.array is not None for p in self.params())
        return self.__dict__["_all_initialized"]


def _make_layer(step: OpStep) -> Link:
    """The link of a layer step; options its constructor refuses (a ``ksize`` with the wrong
    number of axes) are reported at the step."""
    try:
        return LAYERS[step.op].make(step.attrs)
    except (ValueError, TypeError, errors.ShapeError) as e:
        loc = step.loc
        line = loc.source.line(loc.line) if loc.source is not None else None
        raise errors.SpecRuntimeError(f"{step.op}: {e}", loc.file, loc.line, loc.col, line,
                                      loc.length) from e


def build_model(spec: Spec, seed: int | None = None) -> SpecModel:
    """Create the spec's parameters (eagerly where sizes are known), seeded by the spec."""
    check_spec("build_model", spec)
    check_seed("build_model", seed)
    with seeded(spec.seed if seed is None else seed):
        return SpecModel(spec)


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Seed numpy's global generator (initializers, dropout) for a block, then restore it."""
    state = np.random.get_state()
    np.random.seed(seed % 2**32)
    try:
        yield
    finally:
        np.random.set_state(state)



def _layer_scopes(spec: Spec) -> Iterator[tuple[str, OpStep]]:
    """Every layer scope name the spec can use, with its step (unrolled repeats expanded)."""

    def walk(steps: list[Step], suffix: str):
        for step in steps:
            if isinstance(step, OpStep):
                if step.layer:
                    yield step.name + suffix, step
            elif isinstance(step, IfStep):
                yield from walk(step.then, suffix)
                yield from walk(step.otherwise, suffix)
            elif isinstance(step, RepeatStep) and step.unroll:
                for i in range(step.count):
                    yield from walk(step.body, f"{suffix}_{i}")
            else:
                yield from walk(step.body, suffix)

    yield from walk(spec.graph + ([spec.loss] if spec.loss else []), "")


def has_sequences(inputs: Mapping[str, Any]) -> bool:
    return any(isinstance(v, list) for v in inputs.values())


def example_count(spec: Spec, inputs: Mapping[str, Any]) -> int:
    if not has_sequences(inputs):
        return 1
    counts = {k: len(v) for k, v in inputs.items() if isinstance(v, list)}
    if len(set(counts.values())) > 1:
        raise errors.SpecRuntimeError(
            f"sequence inputs disagree on the number of examples: {counts}", spec.file,
            spec.loc.line if spec.loc else 0, spec.loc.col if spec.loc else 0)
    return next(iter(counts.values()), 1)


def per_row_inputs(spec: Spec) -> list[str]:
    """Inputs fed one row per example: a named leading axis (data columns and keys, ``shape:
    [batch, ...]``) that is not a sequence and not declared ``whole_batch``. In a run once
    per example, each example gets its own row of them."""
    return [name for name, inp in spec.inputs.items()
            if inp.batch_dim is not None and not inp.sequence and not inp.whole_batch]


def example_rows(spec: Spec, inputs: Mapping[str, Any]) -> Mapping[str, Any]:
    """``inputs`` with each per-row input (``per_row_inputs``) given as its rows, one per
    example, when the call runs once per example (it has sequence inputs); otherwise
    ``inputs`` itself. A per-row input must have one row per example: anything else is a
    ``SpecError`` at the input (``whole_batch: true`` gives every example the whole array)."""
    if not has_sequences(inputs):
        return inputs
    names = [n for n in per_row_inputs(spec)
             if n in inputs and not isinstance(inputs[n], list)]
    if not names:
        return inputs
    from graphcore.inputs.stacked import StackedExamples
    from graphcore.language.yaml_source import error_at

    n = example_count(spec, inputs)
    out = dict(inputs)
    for name in names:
        value = inputs[name]
        shape = getattr(value, "shape", None)
        shape = np.shape(value) if shape is None else shape
        rows = shape[0] if len(shape) else None
        if rows != n:
            inp = spec.inputs[name]
            what = "a scalar" if rows is None else f"{rows} row{'s' * (rows != 1)}"
            raise error_at(inp.loc, f"input '{name}' has {what} along its leading axis "
                           f"'{inp.batch_dim}', but the graph runs once per example over {n} "
                           "examples, and each example takes its own row",
                           "give it one row per example, or write whole_batch: true to give "
                           "every example the whole array")
        out[name] = _rows_of(spec, name, value, n, StackedExamples)
    return out


_ROWS_KEY = "_graphcore_example_rows"


def _rows_of(spec: Spec, name: str, value: Any, n: int, stacked: type) -> list:
    """``value``'s rows, one per example: the same list for the same array called again (so
    batching sees the same per-example lists, as its whole-call replay needs), else new."""
    if not isinstance(value, np.ndarray):
        return [value[i] for i in range(n)]
    memo = spec.__dict__.setdefault(_ROWS_KEY, {})
    seen = memo.get(name)
    if seen is not None and seen[0] is value and seen[1] == (value.shape, value.dtype):
        return seen[2]
    rows = stacked(value)
    memo[name] = (value, (value.shape, value.dtype), rows)
    return rows


def sequence_names(spec: Spec, inputs: Mapping[str, Any]) -> list[str]:
    """The per-example inputs of a call that are sequences (not per-row inputs' rows)."""
    return [k for k, v in inputs.items()
            if isinstance(v, list) and (k not in spec.inputs or spec.inputs[k].sequence)]
