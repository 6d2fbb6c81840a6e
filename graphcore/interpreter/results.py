"""What a spec run gives back: ``RunResult`` and its ``PathEntry`` records (each decision the
run made: an ``if`` branch, a loop's trip count, a sequence length, with the step's place)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

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


class ExampleViews(Protocol):
    """A run's outputs and per-example views, made when a caller first reads them
    (``RunResult``)."""

    def outputs(self) -> dict[str, Any]: ...

    def path(self) -> list[PathEntry]: ...

    def example_outputs(self) -> list[dict[str, Any]]: ...

    def loss_inputs(self) -> list[tuple[Any, ...]]: ...


class EagerViews:
    """Views a run made as it went (one pass, or one example at a time)."""

    __slots__ = ("_outputs", "_path", "_example_outputs", "_loss_inputs")

    def __init__(self, outputs: dict[str, Any], path: list[PathEntry],
                 example_outputs: list[dict[str, Any]],
                 loss_inputs: list[tuple[Any, ...]]) -> None:
        self._outputs = outputs
        self._path, self._example_outputs, self._loss_inputs = path, example_outputs, loss_inputs

    def outputs(self) -> dict[str, Any]:
        return self._outputs

    def path(self) -> list[PathEntry]:
        return self._path

    def example_outputs(self) -> list[dict[str, Any]]:
        return self._example_outputs

    def loss_inputs(self) -> list[tuple[Any, ...]]:
        return self._loss_inputs


class _NoViews:
    """A result without outputs or per-example views: each reads as a new empty one."""

    __slots__ = ()

    def outputs(self) -> dict[str, Any]:
        return {}

    def path(self) -> list[PathEntry]:
        return []

    def example_outputs(self) -> list[dict[str, Any]]:
        return []

    def loss_inputs(self) -> list[tuple[Any, ...]]:
        return []


NO_VIEWS = _NoViews()


@dataclass(eq=False)
class RunResult:
    """What one run produced. With sequence inputs (``lengths``) the graph ran once per
    example: ``outputs`` then hold the last example's values and ``example_outputs`` all.

    ``outputs``, ``path``, ``example_outputs`` and ``loss_inputs`` (the arrays the loss step
    took, one tuple per example, which metrics compare) come from ``views`` on first read and
    are kept (a batched call knows them as a few group arrays: even the last example's outputs
    cost a tenth of a small batched replay, and most callers, timings and training steps,
    never read them); assigning one replaces it. Results compare by identity: per-example
    views are not values."""

    loss: float | None
    timing_ms: dict[str, float]
    examples: int = 1
    loss_variable: Variable | None = None
    batching: dict[str, Any] | None = None  # how examples were batched (spec.batching)
    views: ExampleViews = field(default=NO_VIEWS, repr=False)

    @cached_property
    def outputs(self) -> dict[str, Any]:
        return self.views.outputs()

    @cached_property
    def path(self) -> list[PathEntry]:
        return self.views.path()

    @cached_property
    def example_outputs(self) -> list[dict[str, Any]]:
        return self.views.example_outputs()

    @cached_property
    def loss_inputs(self) -> list[tuple[Any, ...]]:
        return self.views.loss_inputs()
