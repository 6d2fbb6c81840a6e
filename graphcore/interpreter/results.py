"""What a spec run gives back: ``RunResult`` and its ``PathEntry`` records (each decision the
run made: an ``if`` branch, a loop's trip count, a sequence length, with the step's place)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphcore.interpreter.lazy_fields import lazy_fields
from graphcore.language.yaml_source import Loc
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
