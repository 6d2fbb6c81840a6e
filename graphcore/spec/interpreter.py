"""The define-by-run interpreter: walk a ``Spec``'s steps over live Variables.

``build_model(spec)`` creates one link per layer scope (so parameters exist, named
``/<scope>/W``, before the first run); ``run_spec(spec, model, inputs)`` runs forward (and
backward when the spec has a loss) and reports outputs, loss, the path taken and timings.
Control flow is ordinary Python over live values, so every run records a fresh graph of
exactly the path it took; that path (each ``if`` branch, each loop's trip count, each
sequence length, with the step's position) is recorded for reports and static-mode guards.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from graphcore import errors
from graphcore import functions as F
from graphcore.config import config
from graphcore.plugins import PluginError
from graphcore.spec import predicate as pred
from graphcore.spec.arguments import check_inputs, check_model, check_spec
from graphcore.spec.float_errors import ignoring_float_errors
from graphcore.spec.model import (
    PREVIOUS,
    ForEachStep,
    IfStep,
    OpStep,
    RepeatStep,
    Spec,
    Step,
    WhileStep,
)
from graphcore.spec.predicate_scope import PredicateScope as _PredicateScope
from graphcore.spec.sizes import oversized
from graphcore.spec.spec_model import (  # noqa: F401  (re-exported: the interpreter's API)
    PathEntry,
    RunResult,
    SpecModel,
    build_model,
    seeded,
)
from graphcore.spec.spec_model import example_count as _example_count
from graphcore.spec.spec_model import has_sequences as _has_sequences
from graphcore.spec.step_plan import plan_of
from graphcore.spec.validation import MAX_TRIPS
from graphcore.spec.yaml_source import Loc, error_at
from graphcore.variable import Variable

# Called as hook(predicate, loc, scope, outcome) after every live predicate evaluation.
PREDICATE_HOOKS: list = []


def run_spec(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], *,
             backward: bool = True, seed: int | None = None,
             batching: str = "auto") -> RunResult:
    """Run ``spec`` forward on ``inputs`` (arrays, or lists of arrays for sequence inputs) and,
    when it has a loss and ``backward`` is set, backward; gradients land in ``model``'s
    parameters (cleared first). Failures raise ``SpecRuntimeError`` at the failing step.
    Per-example runs are batched (``batching``: auto, pad or off; ``spec.batching``)."""
    check_spec("run_spec", spec)
    check_model("run_spec", model)
    check_inputs("run_spec", spec, inputs)
    if _has_sequences(inputs):
        from graphcore.spec import batching as batcher
        return batcher.run(spec, model, inputs, backward, seed, batching, _run_examples)
    return _run_one(spec, model, inputs, backward, seed)


def _run_one(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], backward: bool,
             seed: int | None) -> RunResult:
    """``run_spec`` without sequence inputs: one pass and nothing kept per example (the
    common case, kept lean: beside the ops it is most of a small spec's ``bench`` time)."""
    model.cleargrads()
    path: list[PathEntry] = bound_dims(spec, inputs) if plan_of(spec).batch_dims else []
    run = _Run(spec, model, inputs, path, record=False)
    with ignoring_float_errors():
        start = time.perf_counter()
        # Saving and restoring numpy's global generator costs more than a small model's
        # whole run, so it is done only when the forward pass can draw from it.
        if plan_of(spec).draws_randomness or not model.initialized():
            with seeded((spec.seed if seed is None else seed) + 1):
                outputs, loss = run.forward_unguarded()
        else:
            outputs, loss = run.forward_unguarded()
        forward_s = time.perf_counter() - start
        backward_s = 0.0
        if loss is not None and backward and loss.creator is not None:
            start = time.perf_counter()
            loss.backward()
            backward_s = time.perf_counter() - start
    timing = {"forward": forward_s * 1e3, "backward": backward_s * 1e3,
              "total": (forward_s + backward_s) * 1e3}
    return RunResult(outputs=outputs, loss=None if loss is None else float(loss.array.item()),
                     path=path, timing_ms=timing, examples=1, example_outputs=[outputs],
                     loss_variable=loss, loss_inputs=[] if loss is None else [run.last_args])


def _run_examples(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], backward: bool,
                  seed: int | None) -> RunResult:
    """``run_spec`` one example at a time."""
    sequences = _has_sequences(inputs)
    n = _example_count(spec, inputs) if sequences else 1
    model.cleargrads()
    path: list[PathEntry] = bound_dims(spec, inputs)
    per_example: list[dict[str, Any]] = []
    total_loss = 0.0
    loss_var = None
    loss_args: list[tuple[Any, ...]] = []
    forward_s = backward_s = 0.0
    # Saving and restoring numpy's global generator costs more than a small model's whole
    # run, so it is done only when the run can draw from it.
    random = plan_of(spec).draws_randomness or not model.initialized()
    with (seeded((spec.seed if seed is None else seed) + 1) if random
          else contextlib.nullcontext()), ignoring_float_errors():
        for i in range(n):
            if sequences:
                example = {k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()}
                lengths = {k: len(v[i]) for k, v in inputs.items() if isinstance(v, list)}
                where = spec.inputs[next(iter(lengths))].loc if lengths else spec.loc
                path.append(PathEntry("example", where, {"index": i, "lengths": lengths}))
            else:
                example = inputs
            start = time.perf_counter()
            run = _Run(spec, model, example, path, record=False)
            outputs, loss = run.forward_unguarded()
            forward_s += time.perf_counter() - start
            per_example.append(outputs)
            if loss is not None:
                loss_args.append(run.last_args)  # the loss op's inputs (metrics read them)
                total_loss += float(loss.array.item()) / n  # size 1, any ndim
                loss_var = loss
                if backward and loss.creator is not None:
                    start = time.perf_counter()
                    (loss * (1.0 / n) if n > 1 else loss).backward()
                    backward_s += time.perf_counter() - start
    timing = {"forward": forward_s * 1e3, "backward": backward_s * 1e3,
              "total": (forward_s + backward_s) * 1e3}
    return RunResult(outputs=per_example[-1], loss=total_loss if spec.loss else None,
                     path=path, timing_ms=timing, examples=n, example_outputs=per_example,
                     loss_variable=loss_var, loss_inputs=loss_args)


def bound_dims(spec: Spec, inputs: Mapping[str, Any]) -> list[PathEntry]:
    """A ``batch`` path entry per named leading axis (``shape: [batch, 2]``): the size the
    run bound it to, at the first input naming it."""
    entries, seen = [], set()
    for name, inp in spec.inputs.items():
        dim = inp.batch_dim
        if dim is None or dim in seen or name not in inputs:
            continue
        seen.add(dim)
        value = inputs[name]
        size = len(value) if isinstance(value, list) else int(np.shape(value)[0])
        entries.append(PathEntry("batch", inp.loc, {"dim": dim, "size": size}))
    return entries


def loss_function(spec: Spec, model: SpecModel, inputs: Mapping[str, Any]) -> Variable:
    """The spec's loss as one Variable (the mean over examples for sequence inputs), with its
    whole graph: what gradient checks differentiate. Records no path and runs no backward."""
    check_spec("loss_function", spec)
    check_model("loss_function", model)
    check_inputs("loss_function", spec, inputs)
    if spec.loss is None:
        raise errors.SpecRuntimeError("the spec has no loss to differentiate", spec.file,
                                      spec.loc.line if spec.loc else 0,
                                      spec.loc.col if spec.loc else 0)
    n = _example_count(spec, inputs)
    total = None
    for i in range(n):
        example = {k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()}
        _, loss = _Run(spec, model, example, []).forward()
        total = loss if total is None else total + loss
    return total * (1.0 / n) if n > 1 else total


class _Run:
    """One forward pass over one example."""

    def __init__(self, spec: Spec, model: SpecModel, inputs: Mapping[str, Any],
                 path: list[PathEntry], record: bool = True) -> None:
        self.spec = spec
        self.model = model
        self.plans = plan_of(spec).ops
        # record: keep each op's inputs and enclosing loops too (drawings group with them)
        self.record = record
        self.env: dict[str, Any] = dict(inputs)
        if spec.inputs:
            self.env[PREVIOUS] = self.env[next(iter(spec.inputs))]
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
        steps: dict[int, str] = {}
        for step, result, args, *_ in self.produced:
            stop = {id(a) for a in args}
            stack = [v for v in (result if isinstance(result, tuple) else (result,))
                     if isinstance(v, Variable)]
            while stack:
                v = stack.pop()
                node = v.creator
                if id(v) in stop or node is None or id(node) in steps:
                    continue
                steps[id(node)] = f"{step.loc.line}:{step.loc.col}"
                stack.extend(node.inputs)
        return steps

    def forward(self) -> tuple[dict[str, Any], Variable | None]:
        with np.errstate(all="ignore"):  # non-finite values are reported as located errors
            return self.forward_unguarded()

    def forward_unguarded(self) -> tuple[dict[str, Any], Variable | None]:
        """``forward`` for a caller that has already silenced numpy's floating warnings."""
        self.steps(self.spec.graph, "")
        return self._finish(self.env.get(PREVIOUS))

    def _finish(self, last: Any) -> tuple[dict[str, Any], Variable | None]:
        loss = None
        if self.spec.loss is not None:
            loss = self.op(self.spec.loss, "")
            if not isinstance(loss, Variable) or loss.size != 1:
                shape = getattr(loss, "shape", None)
                raise self.failure(self.spec.loss.loc, f"the loss must be one value, got an "
                                   f"array of shape {shape}")
            if not math.isfinite(loss.array.item()):
                raise self.nonfinite_loss()
        # `_` in outputs is the graph's last value, before the loss step
        outputs = {name: (last if name == PREVIOUS else self.env[name])
                   for name in self.spec.outputs}
        return outputs, loss

    # --- steps ------------------------------------------------------------------------------
    def steps(self, steps: list[Step], suffix: str) -> None:
        op = self.op
        for step in steps:
            if type(step) is OpStep:
                op(step, suffix)
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
        except (errors.ShapeError, errors.DTypeError, ValueError, TypeError, IndexError,
                MemoryError, PluginError) as e:
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
        scope = _PredicateScope(self.env, self.spec.params, self.loops)
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
