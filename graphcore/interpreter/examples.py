"""How many examples a call's inputs hold and each example's share of them: a call with
sequence inputs (a list of arrays per input, one per example) runs once per example
(``has_sequences``, ``example_count``), and a per-row input gives each example its own row
(``per_row_inputs``, ``example_rows``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.inputs.stacked import StackedExamples
from graphcore.language.syntax import Spec
from graphcore.language.yaml_source import error_at


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
        out[name] = _rows_of(spec, name, value, n)
    return out


_ROWS_KEY = "_graphcore_example_rows"


def _rows_of(spec: Spec, name: str, value: Any, n: int) -> list:
    """``value``'s rows, one per example: the same list for the same array called again (so
    batching sees the same per-example lists, as its whole-call replay needs), else new."""
    if not isinstance(value, np.ndarray):
        return [value[i] for i in range(n)]
    memo = spec.__dict__.setdefault(_ROWS_KEY, {})
    seen = memo.get(name)
    if seen is not None and seen[0] is value and seen[1] == (value.shape, value.dtype):
        return seen[2]
    rows = StackedExamples(value)
    memo[name] = (value, (value.shape, value.dtype), rows)
    return rows


def sequence_names(spec: Spec, inputs: Mapping[str, Any]) -> list[str]:
    """The per-example inputs of a call that are sequences (not per-row inputs' rows)."""
    return [k for k, v in inputs.items()
            if isinstance(v, list) and (k not in spec.inputs or spec.inputs[k].sequence)]
