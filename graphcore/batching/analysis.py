"""Which specs batch, and whether their sequences may be padded: decided once per spec.

``analysis_of(spec)`` (cached on the spec, as the interpreter's ``plan`` is) walks the steps
and keeps

- ``blockers``: why the spec cannot run its examples as batches ("<file:line:col>: layer
  'batch_normalization' normalizes with statistics over ..."): every op or layer without a
  batching rule (``batch_rules``), and dropout-like randomness in training;
- ``pad_reason``: why its variable-length sequences cannot be padded into one batch (None:
  they can). Padding is sound when every sequence input is read only as the ``sequence`` of a
  top-level ``for_each`` whose body has no live control flow, and nothing after the loop reads
  a value the loop made besides its carries (the collected stack is reported, cut to each
  example's length, but no later step may read it): the carries stop changing once an
  example's sequence ends (``where(t < length, new, old)``), so they hold what the example's
  own run would.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphcore.batching.rules import RANDOM_REASON, Unbatchable, rule_for
from graphcore.interpreter.plan import plan_of
from graphcore.language.syntax import (
    PREVIOUS,
    ForEachStep,
    IfStep,
    OpStep,
    Spec,
    Step,
    WhileStep,
    walk_steps,
)

_CACHE_KEY = "_graphcore_batch_analysis"


@dataclass(frozen=True)
class BatchAnalysis:
    blockers: tuple[str, ...]  # located reasons the spec runs one example at a time
    random_reason: str | None  # draws randomness: batches only in evaluation mode
    pad_reason: str | None  # why sequences cannot be padded (None: they can)
    pad_loops: frozenset[str]  # the sequence inputs a padded for_each walks


def analysis_of(spec: Spec) -> BatchAnalysis:
    found = spec.__dict__.get(_CACHE_KEY)
    if found is None:
        found = _analyse(spec)
        spec.__dict__[_CACHE_KEY] = found
    return found


def _analyse(spec: Spec) -> BatchAnalysis:
    steps = spec.graph + ([spec.loss] if spec.loss is not None else [])
    blockers = []
    for step in walk_steps(steps):
        if isinstance(step, OpStep):
            rule = rule_for(step.op, step.layer)
            if isinstance(rule, Unbatchable):
                kind = "layer" if step.layer else "op"
                blockers.append(f"{step.loc}: {kind} '{step.op}' {rule.reason}")
    random = RANDOM_REASON if plan_of(spec).draws_randomness else None
    pad_reason, loops = _padding(spec)
    return BatchAnalysis(tuple(blockers), random, pad_reason, frozenset(loops))


def reads(step: Step) -> set[str]:
    """Every name a step (and its bodies) reads, over-approximated."""
    names: set[str] = set()
    for s in walk_steps([step]):
        if isinstance(s, OpStep):
            names.update(s.inputs)
        elif isinstance(s, (IfStep, WhileStep)):
            if not (isinstance(s, IfStep) and s.resolved is not None):
                names.update(ref.name for ref in s.predicate.name_refs())
        elif isinstance(s, ForEachStep):
            names.add(s.sequence)
            names.update(c.value for c in s.carry if c.value)
    return names


def _writes(steps: list[Step]) -> set[str]:
    names = {PREVIOUS}
    for s in walk_steps(steps):
        if isinstance(s, OpStep) and s.to:
            names.add(s.to)
        elif isinstance(s, ForEachStep):
            names.add(s.item)
            names.update(c.name for c in s.carry)
            if s.to:
                names.add(s.to)
    return names


def _live_control(steps: list[Step]) -> bool:
    for s in walk_steps(steps):
        if isinstance(s, WhileStep | ForEachStep) or isinstance(s, IfStep) and s.resolved is None:
            return True
    return False


def _scan(steps: list[Step], sequences: set[str], live: set[str]) -> tuple[str | None, set]:
    """Walk ``steps`` in order: the first name read while it still holds a padded value (or
    None), and the names still holding one afterwards (over-approximated)."""
    for step in steps:
        bad = sequences | live
        if isinstance(step, OpStep):
            hit = [n for n in step.inputs if n in bad]
            if hit:
                return hit[0], live
            live = live - {PREVIOUS} - ({step.to} if step.to else set())
            continue
        head: set[str] = set()
        if isinstance(step, (IfStep, WhileStep)) and not (
                isinstance(step, IfStep) and step.resolved is not None):
            head = {ref.name for ref in step.predicate.name_refs()}
        if isinstance(step, ForEachStep):
            head = {step.sequence} | {c.value for c in step.carry if c.value}
        if head & bad:
            return sorted(head & bad)[0], live
        bodies = [step.then, step.otherwise] if isinstance(step, IfStep) else \
            [step.body, step.body]  # a loop body twice: what one trip leaves, the next reads
        after = set()
        for body in bodies:
            found, left = _scan(body, sequences, live if isinstance(step, IfStep) else after
                                or live)
            if found is not None:
                return found, live
            after |= left
        live = after | (live if not isinstance(step, IfStep) else set())
    return None, live


def _padding(spec: Spec) -> tuple[str | None, set[str]]:
    sequences = {n for n, i in spec.inputs.items() if i.sequence}
    if not sequences:
        return "the spec has no sequence inputs (lengths, or a data file's sequences)", set()
    loops: set[str] = set()
    top = spec.graph + ([spec.loss] if spec.loss is not None else [])
    live = {PREVIOUS} if next(iter(spec.inputs)) in sequences else set()
    stacked: set[str] = set()  # collected stacks: outputs cut to each example's length
    for step in top:
        if isinstance(step, ForEachStep) and step.sequence in sequences:
            carries = {c.name for c in step.carry}
            if _live_control(step.body):
                return f"{step.loc}: the for_each body has live control flow, which padded " \
                    "steps would decide on padding", set()
            body_reads = reads(ForEachStep(step.sequence, step.loc, step.item, step.body,
                                           step.carry))
            if (body_reads - {step.sequence, PREVIOUS, step.item} - carries) & (sequences | live):
                return f"{step.loc}: the for_each body reads another sequence", set()
            if step.sequence in loops:
                return f"{step.loc}: a sequence is walked twice", set()
            loops.add(step.sequence)
            made = _writes(step.body) | {PREVIOUS, step.item} | ({step.to} if step.to else set())
            live = (live | made) - carries
            if step.collect and step.to:
                stacked.add(step.to)
            continue
        found, live = _scan([step], sequences, live)
        if found is not None:
            what = "a sequence input" if found in sequences or not loops else \
                "a value a padded loop made"
            return f"{getattr(step, 'loc', spec.loc)}: reads '{found}', {what}", set()
    last = spec.graph[-1] if spec.graph else None
    if isinstance(last, ForEachStep) and last.sequence in loops and last.collect:
        stacked.add(PREVIOUS)
    wrong = sorted((set(spec.outputs) & live) - stacked)
    if wrong:
        return f"output '{wrong[0]}' is a value its padded loop made past each example's end", \
            set()
    if loops != sequences:
        missing = sorted(sequences - loops)[0]
        return f"sequence input '{missing}' is not walked by a for_each", set()
    return None, loops
