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
from graphcore.interpreter.forward import PREDICATE_HOOKS, ForwardPass
from graphcore.interpreter.predicate_scope import PredicateScope
from graphcore.interpreter.results import PathEntry
from graphcore.interpreter.sizes import oversized
from graphcore.language import predicate as pred
from graphcore.language.syntax import PREVIOUS, ForEachStep, IfStep, OpStep
from graphcore.language.validation import MAX_TRIPS
from graphcore.plugins import PluginError
from graphcore.variable import Variable

MASK = "pad-mask:"  # env name prefix of a padded input's mask (B, T): True on real steps
_FAILURES = (errors.ShapeError, errors.DTypeError, ValueError, TypeError, IndexError,
             MemoryError, PluginError, errors.SpecRuntimeError, pred.PredicateError)


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
    example axis."""

    def __init__(self, spec, model, inputs: Mapping[str, Any], batched: set[str], batch: int,
                 path: list[PathEntry]) -> None:
        super().__init__(spec, model, inputs, path, record=False)
        self.batch = batch
        self.bat: dict[str, bool] = {name: name in batched for name in inputs}
        if spec.inputs:
            self.bat[PREVIOUS] = next(iter(spec.inputs)) in batched
        self.last_flags: list[bool] = []
        self.final_flag = False
        # id of a collected stack walked with a padding mask -> (the stack, its input)
        self.padded: dict[int, tuple[Any, str]] = {}
        self.partitions: list[Variable] = []  # each partitioned if's row order (batch_split)

    def forward_unguarded(self):
        self.steps(self.spec.graph, "")
        self.final_flag = self.bat.get(PREVIOUS, False)
        return self._finish(self.env.get(PREVIOUS))

    def _finish(self, last):
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

    # --- steps ------------------------------------------------------------------------------
    def op(self, step: OpStep, suffix: str) -> Any:
        env, bat = self.env, self.bat
        plan = self.plans[id(step)]
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
        if plan.arity is not None and len(args) != plan.arity:
            raise Fallback("arity")  # the per-example run reports it
        layer = getattr(self.model, step.name + suffix) if step.layer else None
        batched = any(flags)
        if len(args) >= plan.check_sizes_from:  # the per-example size check, on one example
            example = [_first(a) if f else a for a, f in zip(args, flags, strict=True)]
            if (plan.growth is None or getattr(example[0], "size", 0) * plan.growth
                    > self.spec.max_elements) and oversized(
                        step.op, layer, example, self.spec.max_elements) is not None:
                raise Fallback("over the size limit")  # the per-example run says where
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
            if not batched:
                result = call(args, attrs)
            else:
                rule = rule_for(step.op, step.layer)
                if isinstance(rule, Unbatchable):
                    raise Fallback(rule.reason)
                defaults = _defaults(plan.op_class) if plan.op_class is not None else {}
                result = apply_rule(rule, step.op, call, args, flags, self.batch, attrs,
                                    defaults)
        except NotBatchable as e:
            raise Fallback(str(e)) from None
        except _FAILURES as e:
            raise Fallback(str(e)) from None
        env[PREVIOUS] = result
        bat[PREVIOUS] = batched
        if step.to:
            env[step.to] = result
            bat[step.to] = batched
        self.last_args = args
        self.last_flags = flags
        return result

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
            for hook in PREDICATE_HOOKS:  # static mode's tracer: a guard
                hook(wrapped, step.predicate_loc, scope, taken)
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
        for hook in PREDICATE_HOOKS:  # static mode's tracer turns these into guards
            hook(wrapped, loc, scope, outcome)
        return outcome

    def for_each(self, step: ForEachStep, suffix: str) -> None:
        env, bat = self.env, self.bat
        seq = env[step.sequence]
        along = 1 if bat.get(step.sequence) else 0
        if getattr(seq, "ndim", 0) < 1 + along:
            raise Fallback("for_each over a value without a time axis")
        length = seq.shape[along]
        if length > MAX_TRIPS:
            raise Fallback("too many trips")
        mask = env.get(MASK + step.sequence) if along else None
        dtype = seq.dtype if seq.dtype.kind == "f" else config.dtype
        shapes = {}
        for carry in step.carry:
            if carry.fill == "value":
                value, flag = env[carry.value], bat.get(carry.value, False)
            else:
                value = (np.zeros if carry.fill == "zeros" else np.ones)(carry.shape, dtype)
                flag = False
            env[carry.name], bat[carry.name] = value, flag
            shapes[carry.name] = value.shape[1:] if flag else value.shape
        collected, collected_flags = [], []
        for t in range(length):
            self.loops.append({"i": t, "t": t})
            before = {c.name: (env[c.name], bat[c.name]) for c in step.carry}
            env[step.item] = seq[:, t] if along else seq[t]
            bat[step.item] = bat[PREVIOUS] = bool(along)
            env[PREVIOUS] = env[step.item]
            with self.inside(step, t):
                self.steps(step.body, suffix)
            for carry in step.carry:
                value, flag = env[carry.name], bat.get(carry.name, False)
                shape = getattr(value, "shape", None)
                if shape is None or (shape[1:] if flag else shape) != shapes[carry.name]:
                    raise Fallback("a carry changed its shape")  # located per example
                if mask is not None:
                    env[carry.name] = self._keep_ended(mask, t, value, flag,
                                                       *before[carry.name])
                    bat[carry.name] = True
            if step.collect:
                collected.append(env[step.collect])
                collected_flags.append(bat.get(step.collect, False))
            self.loops.pop()
        detail = {"length": length} if mask is None else {"padded": step.sequence}
        self.path.append(PathEntry("for_each", step.loc, detail))
        if step.collect and collected:
            if any(collected_flags):
                items = [v if f else F.broadcast_to(v, (self.batch,) + tuple(v.shape))
                         for v, f in zip(collected, collected_flags, strict=True)]
                stacked = F.stack(items, axis=1)
            else:
                stacked = F.stack(collected, axis=0)
            flag = any(collected_flags)
            if mask is not None:
                self.padded[id(stacked)] = (stacked, step.sequence)
            env[PREVIOUS], bat[PREVIOUS] = stacked, flag
            if step.to:
                env[step.to], bat[step.to] = stacked, flag

    def _keep_ended(self, mask, t: int, new, new_flag: bool, old, old_flag: bool):
        """``new`` where the example's sequence is still running at step ``t``, else ``old``."""
        rank = np.ndim(new) - new_flag
        valid = F.get_item(mask, (slice(None), t) + (None,) * rank)  # (B, 1, ...)
        if old_flag and not new_flag:
            new = F.broadcast_to(new, np.shape(old))
        return F.where(valid, new, old)
