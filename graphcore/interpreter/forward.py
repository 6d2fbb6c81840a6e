"""One forward pass of a spec over live Variables: ``ForwardPass`` walks the steps, records the path
(each ``if`` branch, each loop's trip count, with the step's position) and reports failures at
the failing step. ``interpreter`` drives it (``calls``); batching, static tracing, drawings
and ONNX export subclass or reuse it. Plain op steps run through the plan's programs
(``step_plan``) in a lean loop; everything else takes the general path.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from graphcore import errors
from graphcore import functions as F
from graphcore.config import config
from graphcore.interpreter.parameters import SpecModel
from graphcore.interpreter.plan import SpecPlan, plan_of
from graphcore.interpreter.predicate_scope import PredicateScope
from graphcore.interpreter.results import PathEntry
from graphcore.interpreter.sizes import oversized
from graphcore.language import predicate as pred
from graphcore.language.syntax import (
    PREVIOUS,
    ForEachStep,
    IfStep,
    OpStep,
    RepeatStep,
    Spec,
    Step,
    WhileStep,
)
from graphcore.language.validation import MAX_TRIPS
from graphcore.language.yaml_source import Loc, error_at
from graphcore.plugins import PluginError
from graphcore.variable import Variable

# Called as hook(predicate, loc, scope, outcome) after every live predicate evaluation.
PREDICATE_HOOKS: list = []
# What an op may raise on bad inputs: reported as a located error at its step.
_OP_ERRORS = (errors.ShapeError, errors.DTypeError, ValueError, TypeError, IndexError,
              MemoryError, PluginError)



class ForwardPass:
    """One forward pass over one example."""

    __slots__ = ("spec", "model", "plan", "plans", "record", "programs", "env", "path", "loops",
                 "enclosing", "produced", "last_args", "__dict__")  # subclasses add more

    def __init__(self, spec: Spec, model: SpecModel, inputs: Mapping[str, Any],
                 path: list[PathEntry], record: bool = True, plan: SpecPlan | None = None
                 ) -> None:
        self.spec = spec
        self.model = model
        self.plan = plan = plan_of(spec) if plan is None else plan
        self.plans = plan.ops
        # record: keep each op's inputs and enclosing loops too (drawings group with them)
        self.record = record
        # The lean loop (``steps``) runs plain op steps without the general checks; only this
        # class's own ``op`` is bypassed that way (subclasses override it) and only when
        # nothing is recorded.
        self.programs = plan.programs if not record and type(self) is ForwardPass else None
        self.env: dict[str, Any] = dict(inputs)
        if plan.first_input is not None:
            self.env[PREVIOUS] = inputs[plan.first_input]
        self.path = path
        self.loops: list[dict[str, int]] = []
        # The loop bodies being run, outermost first: (loop step, iteration index).
        self.enclosing: list[tuple[Step, int]] = []
        # Per op run: (step, result, its inputs, a copy of ``enclosing``), or (step, result)
        # without ``record``. It names the first step making NaN/Inf, and drawings
        # (spec.drawing) group loop bodies with it.
        self.produced: list[tuple] = []
        self.last_args: Any = ()  # the inputs of the last op run

    def op_locations(self) -> dict[int, str]:
        """Each function node this (recording) run made, by ``id``: the ``"line:col"`` of the
        op step that made it (a layer's step owns every node between its inputs and its
        result). Drawings link nodes, and static IR nodes traced from them, to spec lines."""
        return {key: f"{step.loc.line}:{step.loc.col}" for key, step in self.op_steps().items()}

    def op_steps(self) -> dict[int, OpStep]:
        """Each function node this (recording) run made, by ``id``: the op step that made it
        (``op_locations``' steps themselves, for messages that name the op and its place)."""
        steps: dict[int, OpStep] = {}
        for step, result, args, *_ in self.produced:
            stop = {id(a) for a in args}
            stack = [v for v in (result if isinstance(result, tuple) else (result,))
                     if isinstance(v, Variable)]
            while stack:
                v = stack.pop()
                node = v.creator
                if id(v) in stop or node is None or id(node) in steps:
                    continue
                steps[id(node)] = step
                stack.extend(node.inputs)
        return steps

    def forward(self) -> tuple[dict[str, Any], Variable | None]:
        with np.errstate(all="ignore"):  # non-finite values are reported as located errors
            return self.forward_unguarded()

    def forward_unguarded(self) -> tuple[dict[str, Any], Variable | None]:
        """``forward`` for a caller that has already silenced numpy's floating warnings."""
        straight = self.plan.straight if self.programs is not None else None
        if straight is not None:  # op steps only: the graph and the loss in one lean pass
            first = self.env.get(PREVIOUS)
            self.steps(straight, "")
            # every op step adds one entry to ``produced``: the one before the loss's is the
            # graph's last value
            last = self.produced[-2][1] if len(straight) > 1 else first
            return self._outputs(last), self._checked_loss(self.env[PREVIOUS])
        self.steps(self.spec.graph, "")
        last = self.env.get(PREVIOUS)
        loss = None
        if self.spec.loss is not None:
            if self.programs is None:
                loss = self.op(self.spec.loss, "")
            else:
                self.steps(self.plan.loss_steps, "")
                loss = self.env[PREVIOUS]
            loss = self._checked_loss(loss)
        return self._outputs(last), loss

    def _checked_loss(self, loss: Any) -> Variable:
        if not isinstance(loss, Variable) or loss._array.size != 1:
            shape = getattr(loss, "shape", None)
            raise self.failure(self.spec.loss.loc, f"the loss must be one value, got an "
                               f"array of shape {shape}")
        if not math.isfinite(loss._array.item()):
            raise self.nonfinite_loss()
        return loss

    def _outputs(self, last: Any) -> dict[str, Any]:
        """The spec's outputs; ``_`` is the graph's last value, before the loss step."""
        env = self.env
        outputs = {}
        for name in self.spec.outputs:
            outputs[name] = last if name == PREVIOUS else env[name]
        return outputs

    # --- steps ------------------------------------------------------------------------------
    def steps(self, steps: list[Step], suffix: str) -> None:
        program = self.programs.get(id(steps)) if self.programs is not None else None
        if program is None:
            for step in steps:
                self.step(step, suffix)
            return
        # The lean loop: what ``op`` does for a step of one op on one whole input, without
        # its general checks (each was settled when the program was made). A step it cannot
        # settle here (a tuple value, an input over the size limit) goes through ``op``.
        env, model, produced = self.env, self.model, self.produced
        args = None  # the last step's inputs, when the lean loop ran it
        for step, source, layer, op_class, attrs, to, limit in program:
            if source is None:
                self.step(step, suffix)
                args = None
                continue
            value = env[source]
            if type(value) is tuple or limit is not None and (
                    value._array.size if type(value) is Variable
                    else getattr(value, "size", 0)) > limit:
                self.op(step, suffix)
                args = None
                continue
            args = [value]
            try:
                if layer is not None:
                    result = getattr(model, layer + suffix if suffix else layer)(value)
                else:
                    outs = (op_class(**attrs) if attrs else op_class()).apply(args)
                    result = outs[0] if len(outs) == 1 else tuple(outs)
            except _OP_ERRORS as e:
                raise self.failure(step.loc, f"{step.op}: {e}") from e
            env[PREVIOUS] = result
            if to:
                env[to] = result
            produced.append((step, result))
        if args is not None:
            self.last_args = args  # the loss is the last op: its inputs feed the metrics

    def step(self, step: Step, suffix: str) -> None:
        if type(step) is OpStep:
            self.op(step, suffix)
        elif isinstance(step, IfStep):
            self.if_(step, suffix)
        elif isinstance(step, RepeatStep):
            self.repeat(step, suffix)
        elif isinstance(step, WhileStep):
            self.while_(step, suffix)
        else:
            self.for_each(step, suffix)

    def op(self, step: OpStep, suffix: str) -> Any:
        env = self.env
        plan = self.plans[id(step)]
        if plan.only_input is not None:  # the common case, kept short
            value = env[plan.only_input]
            args = list(value) if type(value) is tuple else [value]
        else:
            args = []
            for i, name in enumerate(step.inputs):
                value = env[name]
                part = step.parts[i] if step.parts else None
                if part is not None:
                    value = self.part(step, name, value, part)
                args.extend(value if isinstance(value, tuple) else (value,))
        arity = plan.arity
        if arity is not None and len(args) != arity:  # a tuple value (split_axis) counts many
            raise self.failure(step.loc, f"{step.op}: takes {arity} input"
                               f"{'s' * (arity != 1)}, got {len(args)} (a value of several "
                               "arrays, such as split_axis makes, is one input per array)")
        layer = (getattr(self.model, step.name + suffix if suffix else step.name)
                 if plan.op_class is None else None)
        if len(args) >= plan.check_sizes_from and (
                plan.growth is None or getattr(args[0], "size", 0) * plan.growth
                > self.spec.max_elements):
            problem = oversized(step.op, layer, args, self.spec.max_elements)
            if problem is not None:  # refused before numpy allocates it
                raise error_at(step.loc, problem)
        try:
            if layer is not None:
                result = layer(*args)
            elif step.op == "dropout" and not config.train:
                result = args[0]  # evaluation mode: the identity, as F.dropout is
            else:
                attrs = step.attrs
                outs = (plan.op_class(**attrs) if attrs else plan.op_class()).apply(args)
                result = outs[0] if len(outs) == 1 else tuple(outs)
        except _OP_ERRORS as e:
            raise self.failure(step.loc, f"{step.op}: {e}") from e
        env[PREVIOUS] = result
        if step.to:
            env[step.to] = result
        self.last_args = args  # the loss is the last op: its inputs feed the metrics
        if self.record:
            self.produced.append((step, result, tuple(args), tuple(self.enclosing)))
        else:
            self.produced.append((step, result))
        return result

    def part(self, step: OpStep, name: str, value: Any, index: int) -> Any:
        """``name[index]``: one part of a value of several arrays, or a located error."""
        if not isinstance(value, tuple):
            raise self.failure(step.loc, f"{step.op}: '{name}[{index}]' takes a part of a value "
                               f"of several arrays, but '{name}' is one array of shape "
                               f"{getattr(value, 'shape', None)}")
        if not -len(value) <= index < len(value):
            raise self.failure(step.loc, f"{step.op}: '{name}[{index}]' is out of range: "
                               f"'{name}' has {len(value)} parts")
        return value[index]

    def if_(self, step: IfStep, suffix: str) -> None:
        taken = step.resolved
        if taken is None:
            taken = self.predicate(step.predicate, step.predicate_loc)
        self.branch(step, taken, suffix)

    def branch(self, step: IfStep, taken: bool, suffix: str) -> None:
        """Record the branch an ``if`` took and run it."""
        self.path.append(PathEntry("if", step.loc, {
            "branch": "then" if taken else "else", "predicate": str(step.predicate),
            "at_load": step.resolved is not None}))
        self.steps(step.then if taken else step.otherwise, suffix)

    def repeat(self, step: RepeatStep, suffix: str) -> None:
        self.path.append(PathEntry("repeat", step.loc, {"trips": step.count}))
        for i in range(step.count):
            self.loops.append(self.loop_scope(i))
            with self.inside(step, i):
                self.steps(step.body, f"{suffix}_{i}" if step.unroll else suffix)
            self.loops.pop()

    def while_(self, step: WhileStep, suffix: str) -> None:
        trips = 0
        limited = False
        while True:
            self.loops.append(self.loop_scope(trips))
            holds = self.predicate(step.predicate, step.predicate_loc)
            if not holds:
                self.loops.pop()
                break
            if trips == step.max_iters:
                self.loops.pop()
                limited = True
                if step.on_limit == "error":
                    raise self.failure(step.loc, f"while loop reached max_iters "
                                       f"({step.max_iters}) and '{step.predicate}' still holds")
                break
            with self.inside(step, trips):
                self.steps(step.body, suffix)
            self.loops.pop()
            trips += 1
        self.path.append(PathEntry("while", step.loc, {
            "trips": trips, "limit_reached": limited}))

    def for_each(self, step: ForEachStep, suffix: str) -> None:
        seq = self.env[step.sequence]
        if getattr(seq, "ndim", 0) < 1:
            raise self.failure(step.loc, f"for_each needs a value with a time axis, "
                               f"'{step.sequence}' has shape {getattr(seq, 'shape', None)}")
        length = seq.shape[0]
        if length > MAX_TRIPS:  # a computed value: its length was not known at load
            raise error_at(step.loc, f"for_each over '{step.sequence}' would make {length:,} "
                           f"trips (its axis 0), over the limit of {MAX_TRIPS:,}")
        dtype = seq.dtype if seq.dtype.kind == "f" else config.dtype
        shapes = {}
        for carry in step.carry:
            if carry.fill == "value":
                value = self.env[carry.value]
            else:
                value = (np.zeros if carry.fill == "zeros" else np.ones)(carry.shape, dtype)
            self.env[carry.name] = value
            shapes[carry.name] = value.shape
        collected = []
        for t in range(length):
            self.loops.append({"i": t, "t": t})
            self.env[step.item] = seq[t]
            self.env[PREVIOUS] = self.env[step.item]
            with self.inside(step, t):
                self.steps(step.body, suffix)
            for carry in step.carry:
                now = getattr(self.env[carry.name], "shape", None)
                if now != shapes[carry.name]:
                    raise self.failure(carry.loc, f"carry '{carry.name}' must keep its shape "
                                       f"{shapes[carry.name]}, but step {t} made it {now}")
            if step.collect:
                collected.append(self.env[step.collect])
            self.loops.pop()
        self.path.append(PathEntry("for_each", step.loc, {"length": length}))
        if step.collect and collected:
            stacked = F.stack(collected, axis=0)
            self.env[PREVIOUS] = stacked
            if step.to:
                self.env[step.to] = stacked

    # --- helpers ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def inside(self, loop: Step, index: int) -> Iterator[None]:
        """Run a block as iteration ``index`` of ``loop`` (recorded with each op it runs)."""
        self.enclosing.append((loop, index))
        try:
            yield
        finally:
            self.enclosing.pop()

    def loop_scope(self, i: int) -> dict[str, int]:
        """``loop.i`` of a new iteration; ``loop.t`` stays the enclosing for_each's step."""
        outer = self.loops[-1] if self.loops else {}
        return {"i": i, "t": outer["t"]} if "t" in outer else {"i": i}

    def predicate(self, predicate: pred.Predicate, loc: Loc) -> bool:
        scope = PredicateScope(self.env, self.spec.params, self.loops)
        try:
            outcome = predicate.evaluate_bool(scope)
        except pred.PredicateError as e:
            at = Loc(loc.file, loc.line, loc.col + e.column - 1, e.length, loc.source)
            raise self.failure(at, e.message) from e
        for hook in PREDICATE_HOOKS:  # static mode's tracer turns these into guards
            hook(predicate, loc, scope, outcome)
        return outcome

    def failure(self, loc: Loc, message: str) -> errors.SpecRuntimeError:
        line = loc.source.line(loc.line) if loc.source is not None else None
        return errors.SpecRuntimeError(message, loc.file, loc.line, loc.col, line, loc.length)

    def nonfinite_loss(self) -> errors.SpecRuntimeError:
        for step, value, *_ in self.produced:
            values = value if isinstance(value, tuple) else (value,)
            for v in values:
                array = v.array if isinstance(v, Variable) else np.asarray(v)
                if array.dtype.kind == "f" and not np.isfinite(array).all():
                    return self.failure(step.loc, f"{step.op} produced NaN or Inf, which "
                                        "reached the loss")
        return self.failure(self.spec.loss.loc, "the loss is NaN or Inf")
