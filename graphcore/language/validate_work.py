"""Bounding the work a spec asks for (a mixin of the spec loader).

Loops multiply: a ``repeat`` of 100,000 inside another runs its body 10^10 times, and unrolled
repeats multiply the layer scopes they create. After the steps are read, one walk multiplies
trip counts through the nesting (``repeat`` counts, ``while`` ``max_iters``, ``for_each`` over
an input of known length, and the examples of sequence inputs) and refuses a spec whose op
steps per run, or layer scopes after unrolling, exceed the limits. Each refusal points at the
innermost loop that crosses the limit, with the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphcore.language.syntax import (
    ForEachStep,
    IfStep,
    InputSpec,
    OpStep,
    RepeatStep,
    Step,
    WhileStep,
    walk_steps,
)
from graphcore.language.validation import MAX_OP_RUNS, MAX_TRIPS, MAX_UNROLLED_LAYERS


@dataclass
class _Tally:
    """What a list of steps costs: op steps run (trips of enclosing loops multiplied in) and
    layer scopes created (unrolled trips multiplied in); whether a limit was already reported
    inside it (so the enclosing loops do not repeat the same refusal)."""

    runs: int = 0
    scopes: int = 0
    runs_reported: bool = False
    scopes_reported: bool = False


class WorkReader:
    """``check_work``; needs the loader's ``error``."""

    def check_work(self, steps: list[Step], inputs: dict[str, InputSpec]) -> bool:
        """Refuse work over the limits; True when the spec is within them."""
        examples = max((len(s.lengths) for s in inputs.values() if s.lengths), default=1)
        rebound = _rebound_names(steps)
        lengths = {name: _axis0(spec) for name, spec in inputs.items() if name not in rebound}
        trips = [f"{examples:,} examples"] if examples > 1 else []
        tally = self._tally(steps, examples, 1, trips, lengths)
        if tally.runs > MAX_OP_RUNS and not tally.runs_reported:
            loc = self.root.key_loc("graph") if "graph" in self.root else self.root.loc
            self.error(loc, f"the graph would run {tally.runs:,} op steps"
                       + (f" ({examples:,} examples)" if examples > 1 else "")
                       + f", over the limit of {MAX_OP_RUNS:,} per run")
            tally.runs_reported = True
        return not (tally.runs_reported or tally.scopes_reported)

    def _tally(self, steps: list[Step], mult: int, unrolled: int, trips: list[str],
               lengths: dict[str, int | None]) -> _Tally:
        total = _Tally()
        for step in steps:
            if isinstance(step, OpStep):
                total.runs += mult
                total.scopes += unrolled if step.layer else 0
                continue
            if isinstance(step, IfStep):
                then = self._tally(step.then, mult, unrolled, trips, lengths)
                other = self._tally(step.otherwise, mult, unrolled, trips, lengths)
                part = _Tally(max(then.runs, other.runs), then.scopes + other.scopes,
                              then.runs_reported or other.runs_reported,
                              then.scopes_reported or other.scopes_reported)
            else:
                part = self._loop(step, mult, unrolled, trips, lengths)
            total.runs += part.runs
            total.scopes += part.scopes
            total.runs_reported |= part.runs_reported
            total.scopes_reported |= part.scopes_reported
        return total

    def _loop(self, step: RepeatStep | WhileStep | ForEachStep, mult: int, unrolled: int,
              trips: list[str], lengths: dict[str, int | None]) -> _Tally:
        if isinstance(step, RepeatStep):
            kind, count = "repeat", step.count
        elif isinstance(step, WhileStep):
            kind, count = "while", step.max_iters
        else:
            kind, count = "for_each", lengths.get(step.sequence) or 1
            if count > MAX_TRIPS:
                self.error(step.loc, f"for_each over '{step.sequence}' would make {count:,} "
                           f"trips (its axis 0), over the limit of {MAX_TRIPS:,}")
                return _Tally(runs_reported=True)
        unroll = isinstance(step, RepeatStep) and step.unroll
        inner_trips = [*trips, f"{count:,}"]
        part = self._tally(step.body, mult * count, unrolled * count if unroll else unrolled,
                           inner_trips, lengths)
        nested = " x ".join(inner_trips)
        if part.runs > MAX_OP_RUNS and not part.runs_reported:
            self.error(step.loc, f"this {kind} would run {part.runs:,} op steps (trips: "
                       f"{nested}), over the limit of {MAX_OP_RUNS:,} per run")
            part.runs_reported = True
        if part.scopes > MAX_UNROLLED_LAYERS and not part.scopes_reported:
            self.error(step.loc, f"unrolling this repeat would make {part.scopes:,} layer "
                       f"scopes (trips: {nested}), over the limit of {MAX_UNROLLED_LAYERS:,}")
            part.scopes_reported = True
        return part


def _axis0(spec: InputSpec) -> int | None:
    """The length ``for_each`` iterates over an input: axis 0, or the longest example."""
    if not spec.shape:
        return None
    if spec.shape[0] is None:
        return max(spec.lengths) if spec.lengths else None
    return spec.shape[0]


def _rebound_names(steps: list[Step]) -> set[str]:
    """Names a step binds (an input rebound by ``to:`` no longer has the input's length)."""
    names: set[str] = set()
    for step in walk_steps(steps):
        if isinstance(step, OpStep | ForEachStep) and step.to:
            names.add(step.to)
        if isinstance(step, ForEachStep):
            names.add(step.item)
            names.update(c.name for c in step.carry)
    return names

