"""What the interpreter resolves once per spec instead of once per step per run.

``plan_of(spec)`` walks a validated spec once and keeps, per op step, the op class (or that
the step is a layer), its arity, and whether its result can outgrow its inputs (so the size
check runs only where it can refuse something); and, for the whole spec, whether running it
draws from numpy's global generator (``dropout``, a recurrent or attention layer with
dropout, a plugin op). The plan is cached on the ``Spec`` object: a spec is not changed after
loading (``dataclasses.replace`` makes a new one, which gets its own plan).
"""

from __future__ import annotations

from dataclasses import dataclass

from graphcore.language.layers import LAYERS
from graphcore.language.syntax import OpStep, Spec, walk_steps
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
    # The size check runs when the first input holds more elements than this: the spec's
    # limit // growth (size * growth > limit, in integers), or -1 (always) without a growth.
    size_bound: int = -1


@dataclass(frozen=True, slots=True)
class SpecPlan:
    ops: dict[int, OpPlan]  # by id() of the OpStep, which the Spec keeps alive
    draws_randomness: bool
    batch_dims: bool  # some input names its leading axis (the path records its size)
    first_input: str | None  # ``_`` starts as this input


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
            growth = step.attrs["out_size"] if grows else None
            ops[id(step)] = OpPlan(None, layer.arity, 0 if grows else NEVER, growth, only,
                                   spec.max_elements // growth if grows else -1)
            random = random or bool(step.attrs.get("dropout", 0.0))
        else:
            cls = get_op(step.op)
            module = cls.__module__
            ops[id(step)] = OpPlan(cls, cls.arity, 0 if step.op in _GROWING_OPS else 2, None,
                                   only)
            random = random or module in _RANDOM_MODULES or not module.startswith(
                "graphcore.ops.")
    return SpecPlan(ops, random, any(i.batch_dim is not None for i in spec.inputs.values()),
                    next(iter(spec.inputs), None))
