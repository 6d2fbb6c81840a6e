"""What the interpreter resolves once per spec instead of once per step per run.

``plan_of(spec)`` walks a validated spec once and keeps, per op step, the op class (or that
the step is a layer), its arity, and whether its result can outgrow its inputs (so the size
check runs only where it can refuse something); and, for the whole spec, whether running it
draws from numpy's global generator (``dropout``, a recurrent or attention layer with
dropout, a plugin op). Each list of steps (the graph, a branch, a loop body, the loss) also
gets a *program*: per step, what the interpreter's lean loop needs to run a plain op step
without its general checks (``Instruction``), or ``None`` fields for steps that take the
general path. The plan is cached on the ``Spec`` object: a spec is not changed after
loading (``dataclasses.replace`` makes a new one, which gets its own plan).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from graphcore.language.layers import LAYERS
from graphcore.language.syntax import (
    ForEachStep,
    IfStep,
    OpStep,
    RepeatStep,
    Spec,
    Step,
    WhileStep,
    walk_steps,
)
from graphcore.registry import get_op

# Built-in op modules whose ops draw random numbers; a plugin op (any other module) may too.
_RANDOM_MODULES = ("graphcore.ops.noise", "graphcore.ops.probabilistic",
                   "graphcore.ops.sampled_losses")
# Registry ops whose result can be larger than every input even with one input value
# (a tuple value counts as several inputs); elementwise ops grow only by broadcasting two.
_GROWING_OPS = frozenset({"concat", "stack", "matmul", "linear", "embed_id"})
_GROWING_LAYERS = frozenset({"linear", "embed_id"})  # sizes.oversized plans only these
_CACHE_KEY = "_graphcore_step_plan"
NEVER = 1 << 30


@dataclass(frozen=True, slots=True)
class OpPlan:
    """One op step, resolved: ``op_class`` is None for a layer (its link is the model's)."""

    op_class: type | None
    arity: int | None
    # The size check (sizes.oversized) looks at the step when it has at least this many input
    # arrays: 0 for ops that can outgrow one input, 2 for elementwise ops (they grow only by
    # broadcasting), NEVER for layers whose results oversized cannot plan.
    check_sizes_from: int
    # For a linear or embed_id layer: every array it allocates (result, lazily made weight) has
    # at most (input elements) x out_size elements, so under that bound no check is needed.
    growth: int | None = None
    only_input: str | None = None  # the input's name, for a step with one whole input


class Instruction(NamedTuple):
    """One step of a program. ``source`` is None for a step that takes the general path
    (control flow, several inputs, a part of a value, dropout, a size check that needs every
    input); otherwise the step is one op on one whole input, run by the lean loop."""

    step: Step
    source: str | None = None  # the input's name
    layer: str | None = None  # the layer scope (the suffix of a loop body is added)
    op_class: type | None = None
    attrs: dict[str, Any] | None = None
    to: str | None = None
    # The input may hold at most this many elements (a larger one takes the general path,
    # which refuses it); None: the step cannot outgrow its one input.
    size_limit: int | None = None


@dataclass(frozen=True, slots=True)
class SpecPlan:
    ops: dict[int, OpPlan]  # by id() of the OpStep, which the Spec keeps alive
    draws_randomness: bool
    batch_dims: bool  # some input names its leading axis (the path records its size)
    # Per list of steps, by id() of the list (the Spec keeps it alive): its program.
    programs: dict[int, tuple[Instruction, ...]]
    loss_steps: list[Step]  # [spec.loss] (or empty): the loss step as a list with a program
    first_input: str | None  # ``_`` starts as this input
    # The graph and the loss as one list with a program, for a spec with a loss whose graph
    # is op steps only (no control flow): one pass of the lean loop runs it all.
    straight: list[Step] | None


def plan_of(spec: Spec) -> SpecPlan:
    """The spec's plan, made on first use and cached on the spec."""
    plan = spec.__dict__.get(_CACHE_KEY)
    if plan is None:
        plan = _make_plan(spec)
        spec.__dict__[_CACHE_KEY] = plan
    return plan


def _make_plan(spec: Spec) -> SpecPlan:
    ops: dict[int, OpPlan] = {}
    random = False
    steps = spec.graph + ([spec.loss] if spec.loss is not None else [])
    for step in walk_steps(steps):
        if not isinstance(step, OpStep):
            continue
        only = step.inputs[0] if len(step.inputs) == 1 and not step.parts else None
        if step.layer:
            layer = LAYERS[step.op]
            grows = step.op in _GROWING_LAYERS
            ops[id(step)] = OpPlan(None, layer.arity, 0 if grows else NEVER,
                                   step.attrs["out_size"] if grows else None, only)
            random = random or bool(step.attrs.get("dropout", 0.0))
        else:
            cls = get_op(step.op)
            module = cls.__module__
            ops[id(step)] = OpPlan(cls, cls.arity, 0 if step.op in _GROWING_OPS else 2, None,
                                   only)
            random = random or module in _RANDOM_MODULES or not module.startswith(
                "graphcore.ops.")
    loss_steps = [spec.loss] if spec.loss is not None else []
    straight = [*spec.graph, spec.loss] if spec.loss is not None and all(
        isinstance(step, OpStep) for step in spec.graph) else None
    lists = [spec.graph, loss_steps, *_step_lists(spec.graph)] + ([straight] if straight else [])
    # keyed by id(): every list here lives as long as the spec (or this plan) does
    programs = {id(steps): tuple(_instruction(step, ops, spec.max_elements) for step in steps)
                for steps in lists}
    return SpecPlan(ops, random, any(i.batch_dim is not None for i in spec.inputs.values()),
                    programs, loss_steps, next(iter(spec.inputs), None), straight)


def _step_lists(steps: list[Step]):
    """Every branch and loop body under ``steps``."""
    for step in walk_steps(steps):
        if isinstance(step, IfStep):
            yield step.then
            yield step.otherwise
        elif isinstance(step, RepeatStep | WhileStep | ForEachStep):
            yield step.body


def _instruction(step: Step, ops: dict[int, OpPlan], max_elements: int) -> Instruction:
    """The lean loop's form of ``step``, where it has one (see ``Instruction``)."""
    plan = ops.get(id(step))
    if plan is None or plan.only_input is None or plan.arity not in (None, 1) \
            or step.op == "dropout":  # dropout is the identity in evaluation mode
        return Instruction(step)
    if plan.check_sizes_from == 0:
        if plan.growth is None:
            return Instruction(step)
        limit = max_elements // plan.growth  # size * growth > max_elements, in integers
    else:
        limit = None  # elementwise with one input, or a layer oversized cannot plan
    return Instruction(step, plan.only_input, step.name if plan.op_class is None else None,
                       plan.op_class, step.attrs, step.to, limit)
