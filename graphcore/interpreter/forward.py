"""One forward pass of a spec over live Variables: ``ForwardPass`` walks the steps, records the
path (each ``if`` branch, each loop's trip count, with the step's position) and reports
failures at the failing step. ``calls`` drives it; batching (``BatchRun``), static tracing,
drawings and ONNX export (``ExportRun``) run it or subclass it.

Every op step runs through one ``op``: what it resolves once per spec (the op class, arity and
size bound: ``plan``) is read from the plan, and what a subclass does differently goes through
the override points below, never a copy of ``op`` or ``for_each``:

- ``op_inputs(step, plan)``: the step's arguments (``name[i]`` parts, tuples expanded);
- ``check_size(step, plan, layer, args)``: refuse a result over the size limit before numpy
  allocates it (called only when the plan says the step can outgrow its inputs);
- ``call(step, plan, layer, args)``: the layer or op itself;
- ``bind(step, result, args)``: ``_`` and ``to``, the loss's inputs, ``produced``;
- ``failure(loc, message)`` / ``refuse(loc, message)``: the located errors (runtime / limit);
- ``batched(name)`` / ``mark(name, flag)``: whether a value carries an example axis;
- ``padding_mask(name)``, ``keep_ended(...)``, ``stack(collected, flags, padded)``: a
  ``for_each`` over padded sequences and its collected values;
- ``if_``, ``while_``, ``repeat``, ``predicate(predicate, loc)``: control flow; every live
  predicate's outcome is passed to ``on_predicate(predicate, loc, scope, outcome)`` when given
  (static mode's tracer turns them into guards);
- ``forward_unguarded()`` / ``finish(last)``: the whole pass, and the loss and outputs.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from graphcore import errors
from graphcore import functions as F
from graphcore.config import config
from graphcore.interpreter.parameters import SpecModel
from graphcore.interpreter.plan import OpPlan, SpecPlan, plan_of
from graphcore.interpreter.predicate_scope import PredicateScope
from graphcore.interpreter.preprocessing import normalized
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

# What an op may raise on bad inputs: reported as a located error at its step.
OP_ERRORS = (errors.ShapeError, errors.DTypeError, ValueError, TypeError, IndexError,
             MemoryError, PluginError)
# Called as on_predicate(predicate, loc, scope, outcome) after a live predicate's evaluation.
PredicateHook = Callable[[Any, Loc, Mapping[str, Any], Any], None]


class ForwardPass:
    """One forward pass over one example (see the module doc for the override points)."""

    __slots__ = ("spec", "model", "plan", "plans", "record", "env", "path", "loops",
                 "enclosing", "produced", "last_args", "on_predicate", "__dict__")

    def __init__(self, spec: Spec, model: SpecModel, inputs: Mapping[str, Any],
                 path: list[PathEntry], *, record: bool = True, plan: SpecPlan | None = None,
                 on_predicate: PredicateHook | None = None) -> None:
        self.spec = spec
        self.model = model
        self.plan = plan = plan_of(spec) if plan is None else plan
        self.plans = plan.ops
        # record: keep each op's inputs and enclosing loops too (drawings group with them)
        self.record = record
        self.on_predicate = on_predicate
        # normalized inputs are read as (x - shift) / scale: ops, so plans and exports hold them
        self.env: dict[str, Any] = normalized(spec, model, inputs)
        if plan.first_input is not None:
            self.env[PREVIOUS] = self.env[plan.first_input]
        self.path = path
        self.loops: list[dict[str, int]] = []
        # The loop bodies being run, outermost first: (loop step, iteration index).
        self.enclosing: list[tuple[Step, int]] = []
        # Per op run: (step, result, its inputs, a copy of ``enclosing``), or (step, result)
        # without ``record``. It names the first step making NaN/Inf, and drawings
        # (commands.viz) group loop bodies with it.
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
        self.steps(self.spec.graph, "")
        return self.finish(self.env.get(PREVIOUS))

    def finish(self, last: Any) -> tuple[dict[str, Any], Variable | None]:
        """The spec's outputs (``_`` is ``last``, the graph's last value, before the loss
        step) and the loss, checked to be one finite value."""
        spec, env = self.spec, self.env
        loss = None
        if spec.loss is not None:
            loss = self.op(spec.loss, "")
            if not isinstance(loss, Variable) or loss._array.size != 1:
                shape = getattr(loss, "shape", None)
                raise self.failure(spec.loss.loc, f"the loss must be one value, got an "
                                   f"array of shape {shape}")
            if not math.isfinite(loss._array.item()):
                raise self.nonfinite_loss()
        outputs = {}
        for name in spec.outputs:
            outputs[name] = last if name == PREVIOUS else env[name]
        return outputs, loss

    # --- steps ------------------------------------------------------------------------------
    def steps(self, steps: list[Step], suffix: str) -> None:
        op, step = self.op, self.step
        for s in steps:
            if type(s) is OpStep:  # most steps: no dispatch
                op(s, suffix)
            else:
                step(s, suffix)

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
        """One op step; subclasses change it through the override points, not here."""
        plan = self.plans[id(step)]
        args = self.op_inputs(step, plan)
        n, arity = len(args), plan.arity
        if arity is not None and n != arity:  # a tuple value (split_axis) counts many
            raise self.failure(step.loc, f"{step.op}: takes {arity} input"
                               f"{'s' * (arity != 1)}, got {n} (a value of several "
                               "arrays, such as split_axis makes, is one input per array)")
        layer = (getattr(self.model, step.name + suffix if suffix else step.name)
                 if plan.op_class is None else None)
        if n >= plan.check_sizes_from:
            bound = plan.size_bound
            if bound < 0 or (first._array.size if type(first := args[0]) is Variable
                             else getattr(first, "size", 0)) > bound:
                self.check_size(step, plan, layer, args)
        try:
            result = self.call(step, plan, layer, args)
        except OP_ERRORS as e:
            raise self.failure(step.loc, f"{step.op}: {e}") from e
        self.bind(step, result, args)
        return result

    def op_inputs(self, step: OpStep, plan: OpPlan) -> list[Any]:
        """The step's arguments: its inputs' values, ``name[i]`` parts taken, a value of
        several arrays (a tuple) expanded into one argument per array."""
        env = self.env
        if plan.only_input is not None:  # the common case, kept short
            value = env[plan.only_input]
            return list(value) if type(value) is tuple else [value]
        args = []
        for i, name in enumerate(step.inputs):
            value = env[name]
            part = step.parts[i] if step.parts else None
            if part is not None:
                value = self.part(step, name, value, part)
            args.extend(value if isinstance(value, tuple) else (value,))
        return args

    def check_size(self, step: OpStep, plan: OpPlan, layer: Any, args: list[Any]) -> None:
        """Refuse, before numpy allocates it, a result over the spec's size limit (called
        for a step that can outgrow its inputs when its first input is over the plan's
        ``size_bound``)."""
        problem = oversized(step.op, layer, args, self.spec.max_elements)
        if problem is not None:
            raise self.refuse(step.loc, problem)

    def call(self, step: OpStep, plan: OpPlan, layer: Any, args: list[Any]) -> Any:
        """The step's layer or op on ``args``: one output as itself, several as a tuple."""
        if layer is not None:
            return layer(*args)
        if step.op == "dropout" and not config.train:
            return args[0]  # evaluation mode: the identity, as F.dropout is
        attrs = step.attrs
        outs = (plan.op_class(**attrs) if attrs else plan.op_class()).apply(args)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def bind(self, step: OpStep, result: Any, args: list[Any]) -> None:
        """``_`` (and ``to``) become the result; the loss's inputs feed the metrics."""
        env = self.env
        env[PREVIOUS] = result
        if step.to:
            env[step.to] = result
        self.last_args = args  # the loss is the last op: its inputs feed the metrics
        if self.record:
            self.produced.append((step, result, tuple(args), tuple(self.enclosing)))
        else:
            self.produced.append((step, result))

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
        env = self.env
        seq = env[step.sequence]
        along = 1 if self.batched(step.sequence) else 0  # a batched sequence: time is axis 1
        if getattr(seq, "ndim", 0) < 1 + along:
            raise self.failure(step.loc, f"for_each needs a value with a time axis, "
                               f"'{step.sequence}' has shape {getattr(seq, 'shape', None)}")
        length = seq.shape[along]
        if length > MAX_TRIPS:  # a computed value: its length was not known at load
            raise self.refuse(step.loc, f"for_each over '{step.sequence}' would make "
                              f"{length:,} trips (its axis {along}), over the limit of "
                              f"{MAX_TRIPS:,}")
        mask = self.padding_mask(step.sequence) if along else None
        dtype = seq.dtype if seq.dtype.kind == "f" else config.dtype
        shapes = {}  # each carry's shape, without the example axis
        for carry in step.carry:
            if carry.fill == "value":
                value, flag = env[carry.value], self.batched(carry.value)
            else:
                value = (np.zeros if carry.fill == "zeros" else np.ones)(carry.shape, dtype)
                flag = False
            env[carry.name] = value
            self.mark(carry.name, flag)
            shapes[carry.name] = value.shape[1:] if flag else value.shape
        collected, flags = [], []
        for t in range(length):
            self.loops.append({"i": t, "t": t})
            if mask is not None:
                before = {c.name: (env[c.name], self.batched(c.name)) for c in step.carry}
            env[step.item] = env[PREVIOUS] = seq[:, t] if along else seq[t]
            self.mark(step.item, bool(along))
            self.mark(PREVIOUS, bool(along))
            with self.inside(step, t):
                self.steps(step.body, suffix)
            for carry in step.carry:
                value, flag = env[carry.name], self.batched(carry.name)
                now = getattr(value, "shape", None)
                if now is not None and flag:
                    now = now[1:]
                if now != shapes[carry.name]:
                    raise self.failure(carry.loc, f"carry '{carry.name}' must keep its shape "
                                       f"{shapes[carry.name]}, but step {t} made it {now}")
                if mask is not None:  # an example whose sequence has ended keeps its carry
                    env[carry.name] = self.keep_ended(mask, t, value, flag, *before[carry.name])
                    self.mark(carry.name, True)
            if step.collect:
                collected.append(env[step.collect])
                flags.append(self.batched(step.collect))
            self.loops.pop()
        detail = {"length": length} if mask is None else {"padded": step.sequence}
        self.path.append(PathEntry("for_each", step.loc, detail))
        if step.collect and collected:
            stacked, flag = self.stack(collected, flags,
                                       step.sequence if mask is not None else None)
            env[PREVIOUS] = stacked
            self.mark(PREVIOUS, flag)
            if step.to:
                env[step.to] = stacked
                self.mark(step.to, flag)

    # --- what a batched pass changes (one example: no example axis, no padding) -----------
    def batched(self, name: str) -> bool:
        """Whether value ``name`` carries a leading example axis."""
        return False

    def mark(self, name: str, flag: bool) -> None:
        """Remember whether value ``name`` carries a leading example axis."""

    def padding_mask(self, sequence: str) -> Any:
        """The (examples, steps) mask of a padded sequence input (True on real steps)."""
        return None

    def keep_ended(self, mask: Any, t: int, new: Any, new_flag: bool, old: Any,
                   old_flag: bool) -> Any:
        """A carry after step ``t``: ``new`` where the example's sequence still runs."""
        return new

    def stack(self, collected: list[Any], flags: list[bool], padded: str | None
              ) -> tuple[Any, bool]:
        """A ``for_each``'s collected values as one (time-major) value, and its flag;
        ``padded``: the padded sequence input the loop walked."""
        return F.stack(collected, axis=0), False

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
        if self.on_predicate is not None:  # static mode's tracer turns these into guards
            self.on_predicate(predicate, loc, scope, outcome)
        return outcome

    def failure(self, loc: Loc, message: str) -> Exception:
        """The error to raise for a step that cannot run (located at ``loc``)."""
        line = loc.source.line(loc.line) if loc.source is not None else None
        return errors.SpecRuntimeError(message, loc.file, loc.line, loc.col, line, loc.length)

    def refuse(self, loc: Loc, message: str) -> Exception:
        """The error to raise for a step over a limit (a result too large, too many trips)."""
        return error_at(loc, message)

    def nonfinite_loss(self) -> errors.SpecRuntimeError:
        for step, value, *_ in self.produced:
            values = value if isinstance(value, tuple) else (value,)
            for v in values:
                array = v.array if isinstance(v, Variable) else np.asarray(v)
                if array.dtype.kind == "f" and not np.isfinite(array).all():
                    return self.failure(step.loc, f"{step.op} produced NaN or Inf, which "
                                        "reached the loss")
        return self.failure(self.spec.loss.loc, "the loss is NaN or Inf")
