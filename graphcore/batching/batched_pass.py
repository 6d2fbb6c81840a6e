"""One forward pass over a group of examples at once (the batched counterpart of ``ForwardPass``).

Every per-example value carries a leading example axis; shared values (parameters, inputs
without ``lengths``/``examples``, constants) do not, and ``bat`` remembers which is which. Ops
and layers run through their rule (``batch_rules``). A live predicate is evaluated for every
example (``batch_predicate``): when the examples disagree the run stops with ``Split`` (the
batcher reruns each side as its own group), so a run that finishes took one path, recorded
once for all its examples. ``for_each`` walks axis 1 of a batched sequence; with a padding
mask (``pad-mask:<input>``) each carry keeps its value once an example's sequence has ended.
Anything a rule cannot express raises ``Fallback``: the call then runs one example at a time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from graphcore import errors
from graphcore import functions as F
from graphcore.batching.outcomes import Fallback, Split
from graphcore.batching.predicates import evaluator
from graphcore.batching.rules import NotBatchable, Unbatchable, apply_rule, rule_for
from graphcore.batching.split import can_partition, partitioned_if
from graphcore.config import config
from graphcore.interpreter.forward import OP_ERRORS, ForwardPass
from graphcore.interpreter.predicate_scope import PredicateScope
from graphcore.interpreter.results import PathEntry
from graphcore.interpreter.sizes import oversized
from graphcore.language import predicate as pred
from graphcore.language.syntax import PREVIOUS, IfStep, OpStep
from graphcore.variable import Variable

MASK = "pad-mask:"  # env name prefix of a padded input's mask (B, T): True on real steps
_FAILURES = (*OP_ERRORS, errors.SpecRuntimeError, pred.PredicateError)


def _first(value: Any) -> Any:
    """The first example of a batched value, as an array view (only its shape is read)."""
    array = value.array if isinstance(value, Variable) else value
    return array[0] if isinstance(array, np.ndarray) and array.ndim else array


class BatchedPredicate:
    """A predicate over a batch, as static mode's guards evaluate it: the examples' common
    outcome, or ``Split`` when they disagree."""

    def __init__(self, predicate: pred.Predicate, batched: set[str], batch: int) -> None:
        self.predicate, self.batched, self.batch = predicate, batched, batch
        self._evaluate = evaluator(predicate, batched)  # once: guards evaluate every replay

    def name_refs(self):
        return self.predicate.name_refs()

    def outcomes(self, env: Mapping[str, object]) -> np.ndarray:
        """Each example's outcome (a predicate error: the per-example run locates it)."""
        try:
            return self._evaluate(env, self.batch)
        except pred.PredicateError as e:
            raise Fallback(str(e)) from None

    def evaluate_bool(self, env: Mapping[str, object]) -> bool:
        found = self.outcomes(env)
        if not (found == found[0]).all():
            raise Split(found)
        return bool(found[0])

    def __str__(self) -> str:
        return str(self.predicate)


class BatchedIfPredicate(BatchedPredicate):
    """The guard of an ``if`` all of whose examples agreed when traced, where a batch that
    disagrees runs partitioned (``batch_split``): such a batch is another path, so
    ``evaluate_bool`` answers None (neither outcome) and the guard misses, letting a plan
    with a partition (or a new trace) take it."""

    def evaluate_bool(self, env: Mapping[str, object]) -> bool | None:
        found = self.outcomes(env)
        if not (found == found[0]).all():
            return None
        return bool(found[0])


_DEFAULTS: dict[type, dict[str, Any]] = {}


def _defaults(cls: type) -> dict[str, Any]:
    found = _DEFAULTS.get(cls)
    if found is None:
        found = {k: a.default for k, a in (getattr(cls, "attributes", None) or {}).items()}
        _DEFAULTS[cls] = found
    return found


class BatchRun(ForwardPass):
    """One forward pass over ``batch`` examples; ``batched`` names the inputs with the
    example axis. It changes ``ForwardPass``'s override points only: each value's example-axis
    flag (``bat``), ops through their batch rules, ``Fallback`` for what the per-example run
    reports, padded ``for_each`` loops, predicates over every example at once."""

    def __init__(self, spec, model, inputs: Mapping[str, Any], batched: set[str], batch: int,
                 path: list[PathEntry], *, on_predicate=None) -> None:
        super().__init__(spec, model, inputs, path, record=False, on_predicate=on_predicate)
        self.batch = batch
        self.bat: dict[str, bool] = {name: name in batched for name in inputs}
        if spec.inputs:
            self.bat[PREVIOUS] = next(iter(spec.inputs)) in batched
        self.flags: list[bool] = []  # the example-axis flag of each argument of the op running
        self.last_flags: list[bool] = []
        self.final_flag = False
        # id of a collected stack walked with a padding mask -> (the stack, its input)
        self.padded: dict[int, tuple[Any, str]] = {}
        self.partitions: list[Variable] = []  # each partitioned if's row order (batch_split)

    def finish(self, last):
        self.final_flag = self.bat.get(PREVIOUS, False)
        loss = None
        if self.spec.loss is not None:
            loss = self.op(self.spec.loss, "")
            if not isinstance(loss, Variable) or not self.bat[PREVIOUS] \
                    or loss.size != self.batch:
                raise Fallback("the loss is not one value per example")
            if loss.shape != (self.batch,):
                loss = F.reshape(loss, (self.batch,))
            if not np.isfinite(loss.array).all():
                raise Fallback("a loss is NaN or Inf")  # the per-example run locates it
        outputs = {name: (last if name == PREVIOUS else self.env[name])
                   for name in self.spec.outputs}
        return outputs, loss

    def flag(self, name: str) -> bool:
        return self.final_flag if name == PREVIOUS else self.bat.get(name, False)

    # --- the override points ----------------------------------------------------------------
    def op_inputs(self, step: OpStep, plan) -> list[Any]:
        env, bat = self.env, self.bat
        args: list[Any] = []
        flags: list[bool] = []
        for i, name in enumerate(step.inputs):
            value = env[name]
            part = step.parts[i] if step.parts else None
            if part is not None:
                value = self.part(step, name, value, part)
            if isinstance(value, tuple):
                args.extend(value)
                flags.extend([bat.get(name, False)] * len(value))
            else:
                args.append(value)
                flags.append(bat.get(name, False))
        self.flags = flags
        return args

    def check_size(self, step: OpStep, plan, layer, args: list[Any]) -> None:
        """The per-example size check, on the first example (the per-example run says
        where)."""
        example = [_first(a) if f else a for a, f in zip(args, self.flags, strict=True)]
        if (plan.growth is None or getattr(example[0], "size", 0) * plan.growth
                > self.spec.max_elements) and oversized(
                    step.op, layer, example, self.spec.max_elements) is not None:
            raise Fallback("over the size limit")

    def call(self, step: OpStep, plan, layer, args: list[Any]) -> Any:
        """Without a batched argument, the op itself; else its batch rule. What the rule
        cannot express, and what the op refuses, is a ``Fallback``."""
        flags = self.flags
        try:
            if layer is not None:
                attrs = {}
                if step.op == "linear" and step.attrs.get("n_batch_axes") is not None:
                    attrs = {"n_batch_axes": step.attrs["n_batch_axes"]}

                def call(a, kw, layer=layer):
                    return layer(*a, **kw)
            else:
                attrs = step.attrs

                def call(a, kw, cls=plan.op_class, name=step.op):
                    if name == "dropout" and not config.train:
                        return a[0]  # evaluation mode: the identity, as F.dropout is
                    outs = (cls(**kw) if kw else cls()).apply(a)
                    return outs[0] if len(outs) == 1 else tuple(outs)
            if not any(flags):
                return call(args, attrs)
            rule = rule_for(step.op, step.layer)
            if isinstance(rule, Unbatchable):
                raise Fallback(rule.reason)
            defaults = _defaults(plan.op_class) if plan.op_class is not None else {}
            return apply_rule(rule, step.op, call, args, flags, self.batch, attrs, defaults)
        except NotBatchable as e:
            raise Fallback(str(e)) from None
        except _FAILURES as e:
            raise Fallback(str(e)) from None

    def bind(self, step: OpStep, result: Any, args: list[Any]) -> None:
        env, bat = self.env, self.bat
        batched = any(self.flags)
        env[PREVIOUS] = result
        bat[PREVIOUS] = batched
        if step.to:
            env[step.to] = result
            bat[step.to] = batched
        self.last_args = args
        self.last_flags = self.flags

    def failure(self, loc, message: str) -> Exception:
        return Fallback(message)  # the per-example run locates it

    def refuse(self, loc, message: str) -> Exception:
        return Fallback(message)  # the per-example run locates it

    def batched(self, name: str) -> bool:
        return self.bat.get(name, False)

    def mark(self, name: str, flag: bool) -> None:
        self.bat[name] = flag

    def padding_mask(self, sequence: str) -> Any:
        return self.env.get(MASK + sequence)

    def keep_ended(self, mask, t: int, new, new_flag: bool, old, old_flag: bool):
        """``new`` where the example's sequence is still running at step ``t``, else ``old``."""
        rank = np.ndim(new) - new_flag
        valid = F.get_item(mask, (slice(None), t) + (None,) * rank)  # (B, 1, ...)
        if old_flag and not new_flag:
            new = F.broadcast_to(new, np.shape(old))
        return F.where(valid, new, old)

    def stack(self, collected: list[Any], flags: list[bool], padded: str | None):
        """Time on axis 1 when any step's value is batched (the shared ones broadcast)."""
        if any(flags):
            items = [v if f else F.broadcast_to(v, (self.batch,) + tuple(v.shape))
                     for v, f in zip(collected, flags, strict=True)]
            stacked = F.stack(items, axis=1)
        else:
            stacked = F.stack(collected, axis=0)
        if padded is not None:
            self.padded[id(stacked)] = (stacked, padded)
        return stacked, any(flags)

    # --- control flow over every example at once ------------------------------------------
    def if_(self, step: IfStep, suffix: str) -> None:
        """A live ``if`` on per-example values: every example's outcome; when they differ,
        both branches run on their rows in this pass (``batch_split``) where they can."""
        if step.resolved is not None or not can_partition(step):
            return super().if_(step, suffix)
        batched = {ref.name for ref in step.predicate.name_refs() if self.bat.get(ref.name)}
        if not batched:
            return super().if_(step, suffix)
        scope = PredicateScope(self.env, self.spec.params, self.loops)
        wrapped = BatchedIfPredicate(step.predicate, batched, self.batch)
        found = wrapped.outcomes(scope)
        if found.all() or not found.any():
            taken = bool(found[0])
            if self.on_predicate is not None:  # static mode's tracer: a guard
                self.on_predicate(wrapped, step.predicate_loc, scope, taken)
            self.branch(step, taken, suffix)
        else:
            partitioned_if(self, step, suffix, scope, batched, found)
        return None

    def predicate(self, predicate: pred.Predicate, loc) -> bool:
        batched = {ref.name for ref in predicate.name_refs() if self.bat.get(ref.name)}
        if not batched:
            return super().predicate(predicate, loc)
        scope = PredicateScope(self.env, self.spec.params, self.loops)
        wrapped = BatchedPredicate(predicate, batched, self.batch)
        outcome = wrapped.evaluate_bool(scope)  # raises Split when the examples disagree
        if self.on_predicate is not None:  # static mode's tracer turns these into guards
            self.on_predicate(wrapped, loc, scope, outcome)
        return outcome
