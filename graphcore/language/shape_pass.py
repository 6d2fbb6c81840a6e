"""Shape and dtype inference over a whole spec, every branch and loop body, no array computed.

``infer_types(spec)`` walks the validated steps with ``TensorType``s (``graphcore.shapes``)
instead of arrays: each op step through its op's ``shape_rule``, each layer through its
``layers.Layer.shape_rule``. The loader runs it on every spec (so a mismatch anywhere is a
located ``SpecError`` before anything runs); ``check`` and ``viz --program`` read what it
found (``SpecTypes``).

- Inputs: the declared shape and dtype; a named leading axis (``shape: [batch, 4]``) stays
  the symbol ``batch``. A spec with sequence inputs runs once per example: each sequence is
  ``(length, ...)`` and each per-row input one of its rows. A data input's shape or dtype that
  only its file says is unknown at load (``check`` passes the real ones as ``inputs``).
- ``if``: both branches are checked (a branch chosen at load by ``params`` only: that one; the
  other is inferred as far as it goes, for drawings). Where they make different shapes for a
  value, it holds both (a ``Choice``); a later step that takes both is fine (``sum``), one that
  cannot is an error located at the ``if``, naming both branches' shapes.
- ``repeat``/``while``/``for_each``: the body is checked trip by trip until its values stop
  changing (usually after one or two trips), so a body that does not keep the shapes its next
  trip reads fails at that trip; after a ``while`` (or a ``for_each``) a value is what it was
  before the loop or after a trip. A ``for_each`` body sees the item's shape (the sequence
  without its axis 0), each carry must keep its shape, and ``collect`` stacks one.
- A layer's lazy sizes (``linear`` without ``in_size``) come from its first use; a shared scope
  must get the same sizes at every use.
- An op without a shape rule (a plugin op) makes an unknown value, said once per op in
  ``SpecTypes.unknown_ops``; what follows from unknown values is unknown, checked at run time.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcore import errors, shapes
from graphcore.config import config
from graphcore.errors import SpecError, SpecErrors
from graphcore.language.layers import LAYERS
from graphcore.language.located import error_at
from graphcore.language.syntax import (
    PREVIOUS,
    ForEachStep,
    IfStep,
    InputSpec,
    OpStep,
    RepeatStep,
    Spec,
    Step,
    WhileStep,
)
from graphcore.language.yaml_source import Loc
from graphcore.registry import get_op
from graphcore.shapes import UNKNOWN, TensorType, show_shape

LENGTH = "length"  # the symbol of a sequence example's length
MAX_TRIPS_CHECKED = 8  # a body whose shapes still change after this many trips: unknown
MAX_COMBINATIONS = 64  # a step over more combinations of branch outcomes: unknown
_RULE_ERRORS = (errors.ShapeError, errors.DTypeError)
TYPES_KEY = "_graphcore_types"


class _Refused(Exception):
    """An op's constructor refused the step's attributes (reported at the step)."""


@dataclass(frozen=True)
class Choice:
    """A value that differs by the path taken: ``options[i]`` after ``labels[i]`` (``then``,
    ``else``; ``before the loop``, ``after a trip``) of the step at ``origin``."""

    options: tuple[Any, ...]
    labels: tuple[str, ...]
    origin: Loc
    kind: str  # if | while | for_each
    name: str  # the value's name

    def __str__(self) -> str:
        return " or ".join(f"{show_value(o)} ({label})"
                           for o, label in zip(self.options, self.labels, strict=True))


# What a name holds: a TensorType, a tuple of them (a value of several arrays), a Choice,
# or None (unknown).
ValueType = Any


def show_value(value: ValueType) -> str:
    """``(batch, 4) float32``; several arrays in brackets; an unknown ``?``."""
    if value is None:
        return "?"
    if isinstance(value, tuple):
        return "[" + ", ".join(show_value(v) for v in value) + "]"
    return str(value)


@dataclass
class StepTypes:
    """What one op step takes and makes; ``where`` says the branch or loop it is in."""

    step: OpStep
    inputs: tuple[ValueType, ...]
    output: ValueType
    where: str
    dead: bool = False  # in a branch that params rule out at load


@dataclass
class SpecTypes:
    """The result of ``infer_types``: each input's type, each op step's (by ``id``, and in
    file order), the ops without a shape rule and the final values."""

    inputs: dict[str, ValueType]
    steps: dict[int, StepTypes] = field(default_factory=dict)
    order: list[OpStep] = field(default_factory=list)
    unknown_ops: dict[str, Loc] = field(default_factory=dict)  # op -> its first step
    values: dict[str, ValueType] = field(default_factory=dict)  # after the graph
    per_example: bool = False

    def of(self, step: OpStep) -> StepTypes | None:
        return self.steps.get(id(step))


def input_types(spec: Spec) -> dict[str, ValueType]:
    """Each input's type as the spec declares it (see the module doc)."""
    per_example = any(inp.sequence for inp in spec.inputs.values())
    return {name: _declared(inp, per_example) for name, inp in spec.inputs.items()}


def types_of_arrays(spec: Spec, arrays: Mapping[str, Any]) -> dict[str, ValueType]:
    """Input types from real input arrays (a list of arrays per sequence input): symbolic
    leading axes where the spec names them, as ``input_types``."""
    per_example = any(inp.sequence for inp in spec.inputs.values())
    out = {}
    for name, value in arrays.items():
        inp = spec.inputs.get(name)
        if isinstance(value, list):
            first = np.asarray(value[0]) if value else None
            if first is None or not first.ndim:
                out[name] = None if first is None else TensorType((), first.dtype)
                continue
            lengths = {np.shape(v)[0] if np.ndim(v) else None for v in value}
            length = first.shape[0] if len(lengths) == 1 and (
                inp is None or inp.lengths is not None) else LENGTH
            out[name] = TensorType((length,) + first.shape[1:], first.dtype)
            continue
        array = np.asarray(value)
        shape: tuple = array.shape
        if inp is not None and inp.batch_dim is not None and shape:
            if per_example and not inp.whole_batch:
                shape = shape[1:]
            else:
                shape = (inp.batch_dim,) + shape[1:]
        out[name] = TensorType(shape, array.dtype)
    return out


def _declared(inp: InputSpec, per_example: bool) -> ValueType:
    dtype: np.dtype | None = None if inp.keep_file_dtype else np.dtype(inp.dtype)
    column = inp.column
    if column is not None and not inp.dtype_given:
        # a data file's values: CSV floats are float32, labels and codes become int32; an
        # .npz array keeps an integer dtype
        dtype = (np.dtype(np.int32) if column.takes_text else
                 np.dtype(np.float32) if column.columns or column.column else None)
    if inp.sequence:
        if inp.shape is None:
            return None
        # examples of one length (``examples: N``) have it; else each its own
        length = (inp.lengths[0] if inp.lengths and len(set(inp.lengths)) == 1 else LENGTH)
        return TensorType((length,) + tuple(_dim(d) for d in inp.shape[1:]), dtype)
    shape = inp.shape
    if shape is None and column is not None:
        if column.columns:
            shape = (None, len(column.columns))
        elif column.column:
            shape = (None,)
    if shape is None:
        return None
    if column is not None and column.columns and tuple(shape[1:]) != (len(column.columns),):
        return None  # the data reader refuses it, naming the file's shape
    dims = tuple(_dim(d) for d in shape)
    if inp.batch_dim is not None and dims:
        if per_example and not inp.whole_batch:
            dims = dims[1:]
        else:
            dims = (inp.batch_dim,) + dims[1:]
    return TensorType(dims, dtype)


def _dim(d: Any) -> shapes.Dim:
    return d if isinstance(d, int) else UNKNOWN


def spec_types(spec: Spec) -> SpecTypes:
    """The spec's types from its declared inputs: inferred by the loader, or on first use for a
    spec made by ``dataclasses.replace``; cached on the spec, which is not changed after."""
    types = spec.__dict__.get(TYPES_KEY)
    if types is None:
        types = spec.__dict__[TYPES_KEY] = infer_types(spec)
    return types


def infer_types(spec: Spec, inputs: Mapping[str, ValueType] | None = None) -> SpecTypes:
    """Every op step's input and output types; raises ``SpecErrors`` with every mismatch."""
    given = input_types(spec) if inputs is None else dict(inputs)
    walk = _Walk(spec, given)
    walk.run()
    if walk.errors:
        raise SpecErrors(walk.errors)
    return walk.types


class _Walk:
    def __init__(self, spec: Spec, inputs: dict[str, ValueType]) -> None:
        self.spec = spec
        self.types = SpecTypes(dict(inputs),
                               per_example=any(i.sequence for i in spec.inputs.values()))
        self.env: dict[str, ValueType] = dict(inputs)
        if spec.inputs:
            self.env[PREVIOUS] = inputs.get(next(iter(spec.inputs)))
        self.errors: list[SpecError] = []
        self.reported: set[tuple[int, int, str]] = set()
        self.where: list[str] = []  # the enclosing branches and loops, outermost first
        self.dead = 0  # > 0: inside a branch params rule out (errors there are not raised)
        self.scopes: dict[str, tuple[dict[str, shapes.Shape], Loc]] = {}
        self.ops: dict[int, Any] = {}  # id(step) -> the op instance its rule reads
        self.carries_reported: set[int] = set()
        self.arg_names: list[str] = []  # the names of the op step's inputs being checked

    def run(self) -> None:
        self.steps(self.spec.graph, "")
        self.types.values = dict(self.env)
        if self.spec.loss is not None:
            self.op(self.spec.loss, "")

    # --- errors -----------------------------------------------------------------------------
    def error(self, loc: Loc, message: str, hint: str | None = None) -> None:
        if self.dead:
            return
        key = (loc.line, loc.col, message)
        if key not in self.reported:
            self.reported.add(key)
            self.errors.append(error_at(loc, message, hint))

    def context(self) -> str:
        return (" (" + "; ".join(reversed(self.where)) + ")") if self.where else ""

    # --- steps ------------------------------------------------------------------------------
    def steps(self, steps: list[Step], suffix: str) -> None:
        for step in steps:
            if isinstance(step, OpStep):
                self.op(step, suffix)
            elif isinstance(step, IfStep):
                self.if_(step, suffix)
            elif isinstance(step, RepeatStep):
                self.repeat(step, suffix)
            elif isinstance(step, WhileStep):
                self.while_(step, suffix)
            else:
                self.for_each(step, suffix)

    def op(self, step: OpStep, suffix: str) -> None:
        args: list[ValueType] = []
        names: list[str] = []
        for i, name in enumerate(step.inputs):
            value = self.env.get(name)
            part = step.parts[i] if step.parts else None
            if part is not None:
                value = self.part(step, name, value, part)
                name = f"{name}[{part}]"
            if isinstance(value, tuple):
                args.extend(value)
                names.extend(f"{name}[{k}]" for k in range(len(value)))
            else:
                args.append(value)
                names.append(name)
        self.arg_names = names
        output = self.apply(step, suffix, tuple(args))
        self.record(step, tuple(args), output)
        self.env[PREVIOUS] = output
        if step.to:
            self.env[step.to] = output

    def part(self, step: OpStep, name: str, value: ValueType, index: int) -> ValueType:
        if isinstance(value, Choice):
            return Choice(tuple(self.part(step, name, o, index) for o in value.options),
                          value.labels, value.origin, value.kind, value.name)
        if value is None:
            return None
        if not isinstance(value, tuple):
            self.error(step.loc, f"{step.op}: '{name}[{index}]' takes a part of a value of "
                       f"several arrays, but '{name}' is one array of shape "
                       f"{show_shape(value.shape)}"
                       + self.context())
            return None
        if not -len(value) <= index < len(value):
            self.error(step.loc, f"{step.op}: '{name}[{index}]' is out of range: '{name}' "
                       f"has {len(value)} parts" + self.context())
            return None
        return value[index]

    def record(self, step: OpStep, args: tuple, output: ValueType) -> None:
        types = self.types
        before = types.steps.get(id(step))
        if before is None:
            types.order.append(step)
            types.steps[id(step)] = StepTypes(step, args, output, "; ".join(self.where),
                                              dead=self.dead > 0)
        elif before.output != output and not self.dead:
            # a later trip of a loop body made something else: the step makes either
            before.output = _either(before.output, output, step.loc, "trip", PREVIOUS)
            before.inputs = tuple(_either(a, b, step.loc, "trip", PREVIOUS)
                                  for a, b in zip(before.inputs, args, strict=False))

    def apply(self, step: OpStep, suffix: str, args: tuple) -> ValueType:
        """The step's output type over every combination of its inputs' branch outcomes."""
        choices = [a for a in args if isinstance(a, Choice)]
        if not choices:
            return self.apply_one(step, suffix, args)[0]
        count = 1
        for c in choices:
            count *= len(c.options)
        if count > MAX_COMBINATIONS:
            return None
        outcomes, failures = [], []
        scopes, sized = dict(self.scopes), {}
        for combination in itertools.product(*(
                c.options if isinstance(c, Choice) else (c,) for c in args)):
            self.scopes = dict(scopes)  # each path sizes a lazy layer on its own
            result, problem = self.apply_one(step, suffix, combination, report=False)
            (failures if problem is not None else outcomes).append((combination, result,
                                                                     problem))
            if problem is None and step.layer:
                sized[_label_of(choices[0], combination)] = self.scopes.get(
                    (step.name or step.op) + suffix, ({}, step.loc))[0]
        self.scopes = scopes
        if failures and not outcomes:  # wrong on every path: the step's own error
            first = choices[0]
            self.where.append(f"on every path out of the {first.kind} at "
                              f"{first.origin.line}:{first.origin.col}")
            self.apply_one(step, suffix, failures[0][0])
            self.where.pop()
            return None
        if not failures and len({repr(p) for p in sized.values()}) > 1:
            failures.append((None, None, "its parameters would take a different shape on "
                             "each path (" + ", ".join(
                                 f"{_phrase(label)}: " + ", ".join(
                                     f"{k} {show_shape(v)}" for k, v in params.items())
                                 for label, params in sized.items()) + ")"))
        if failures:
            _, _, problem = failures[0]
            blamed = choices[0]
            options = " and ".join(f"{show_value(o)} {_phrase(label)}"
                                   for o, label in zip(blamed.options, blamed.labels,
                                                       strict=True))
            self.error(blamed.origin, f"'{blamed.name}' is {options}, and {step.op} at "
                       f"{step.loc.line}:{step.loc.col} cannot take both: {problem}",
                       f"make the paths out of this {blamed.kind} agree on the shape of "
                       f"'{blamed.name}', or give each path's value its own name")
            return None
        if step.layer and outcomes:  # the scope as the paths (all alike) size it
            self.apply_one(step, suffix, outcomes[0][0], report=False)
        first = choices[0]
        options: list[ValueType] = []
        labels: list[str] = []
        for combination, result, _ in outcomes:
            if result not in options:
                options.append(result)
                labels.append(_label_of(first, combination))
        if len(options) == 1:
            return options[0]
        return Choice(tuple(options), tuple(labels), first.origin, first.kind,
                      step.to or PREVIOUS)

    def apply_one(self, step: OpStep, suffix: str, args: tuple, report: bool = True
                  ) -> tuple[ValueType, str | None]:
        """(output, None), or (None, the problem) when the step cannot take ``args``
        (reported at the step when ``report``)."""
        if any(a is None for a in args):
            return None, None
        try:
            if step.layer:
                outputs = self.layer(step, suffix, args)
            else:
                op = self.ops.get(id(step))
                if op is None:
                    cls = get_op(step.op)
                    if not shapes.has_rule(cls):
                        self.types.unknown_ops.setdefault(step.op, step.loc)
                        return None, None
                    try:
                        op = cls(**step.attrs) if step.attrs else cls()
                    except (ValueError, TypeError) as e:  # attributes the op refuses
                        raise _Refused(str(e)) from e
                    self.ops[id(step)] = op
                outputs = shapes.infer(op, args)
        except (*_RULE_ERRORS, _Refused) as e:
            problem = getattr(e, "problem", None) or str(e)
            if report:
                given = ", ".join(f"{n} is {show_value(a)}"
                                  for n, a in zip(self.arg_names, args, strict=False))
                self.error(step.loc, _message(step, problem) + (f" ({given})" if given else "")
                           + self.context())
            return None, problem
        if outputs is None:
            return None, None
        return (outputs[0] if len(outputs) == 1 else tuple(outputs)), None

    def layer(self, step: OpStep, suffix: str, args: tuple) -> tuple:
        rule = LAYERS[step.op].shape_rule
        arity = LAYERS[step.op].arity
        if arity is not None and len(args) != arity:
            raise shapes.ShapeInferenceError(step.op, f"takes {arity} input"
                                             f"{'s' * (arity != 1)}, got {len(args)}",
                                             tuple(a.shape for a in args))
        outputs, params = rule(step.op, step.attrs, args)
        scope = (step.name or step.op) + suffix
        first = self.scopes.get(scope)
        if first is None:
            self.scopes[scope] = (params, step.loc)
            return outputs
        sized, at = first
        for key, shape in params.items():
            before = sized.get(key)
            if before is not None and (len(before) != len(shape) or any(
                    shapes.conflict(a, b) for a, b in zip(before, shape, strict=True))):
                raise shapes.ShapeInferenceError(
                    step.op, f"layer '{scope}' was sized by its use at {at.line}:{at.col} "
                    f"({key} {show_shape(before)}), but this input needs {key} "
                    f"{show_shape(shape)}", tuple(a.shape for a in args))
        return outputs

    # --- control flow -----------------------------------------------------------------------
    def if_(self, step: IfStep, suffix: str) -> None:
        at = f"{step.loc.line}:{step.loc.col}"
        start = dict(self.env)
        ends = []
        for label, body in (("then", step.then), ("else", step.otherwise)):
            self.env = dict(start)
            dead = step.resolved is not None and step.resolved != (label == "then")
            self.where.append(f"in the {label} branch of the if at {at}")
            self.dead += dead
            self.steps(body, suffix)
            self.dead -= dead
            self.where.pop()
            if not dead:
                ends.append((label, self.env))
        if len(ends) == 1:
            self.env = ends[0][1]
            return
        (_, then), (_, otherwise) = ends
        self.env = {}
        for name in then.keys() | otherwise.keys():
            a, b = then.get(name), otherwise.get(name)
            if a == b or name not in otherwise:
                self.env[name] = a
            elif name not in then:
                self.env[name] = b
            else:  # unknown on one path: unknown
                self.env[name] = None if a is None or b is None else Choice(
                    (a, b), ("then", "else"), step.loc, "if", name)

    def repeat(self, step: RepeatStep, suffix: str) -> None:
        at = f"{step.loc.line}:{step.loc.col}"
        for trip in range(step.count):
            if trip >= MAX_TRIPS_CHECKED and not step.unroll:
                self.forget_changing(step.body)
                break
            before = dict(self.env)
            self.where.append(f"trip {trip + 1} of the repeat at {at}" if trip else
                              f"in the repeat at {at}")
            self.steps(step.body, f"{suffix}_{trip}" if step.unroll else suffix)
            self.where.pop()
            if self.env == before and not step.unroll:
                break  # every later trip makes the same

    def while_(self, step: WhileStep, suffix: str) -> None:
        self.loop(step, step.body, suffix, f"the while at {step.loc.line}:{step.loc.col}",
                  step.max_iters, "while")

    def loop(self, step: Step, body: list[Step], suffix: str, what: str, trips: int | None,
             kind: str) -> None:
        """A body run an unknown number of times (``trips``: at most): every value after it
        is what it was before or after one of the trips."""
        seen = [dict(self.env)]
        limit = MAX_TRIPS_CHECKED if trips is None else min(trips, MAX_TRIPS_CHECKED)
        for trip in range(limit):
            self.where.append(f"trip {trip + 1} of {what}" if trip else f"in {what}")
            self.steps(body, suffix)
            self.where.pop()
            if any(self.env == s for s in seen):
                break
            seen.append(dict(self.env))
        else:
            if trips is None or trips > limit:
                self.forget_changing(body)
        merged: dict[str, ValueType] = {}
        names = set().union(*seen)
        for name in names:
            options, labels = [], []
            for i, env in enumerate(seen):
                if name in env and env[name] not in options:
                    options.append(env[name])
                    labels.append("before the loop" if i == 0 else f"after trip {i}")
            merged[name] = options[0] if len(options) == 1 else None if None in options \
                else Choice(
                tuple(options), tuple(labels), step.loc, kind, name)
        self.env = merged

    def forget_changing(self, body: list[Step]) -> None:
        """After the checked trips, the values a body still changes are unknown."""
        before = dict(self.env)
        self.dead += 1
        self.steps(body, "")
        self.dead -= 1
        for name, value in self.env.items():
            if before.get(name) != value:
                before[name] = None
        self.env = before

    def for_each(self, step: ForEachStep, suffix: str) -> None:
        env = self.env
        at = f"{step.loc.line}:{step.loc.col}"
        seq = env.get(step.sequence)
        item: ValueType = None
        if isinstance(seq, TensorType):
            if seq.ndim < 1:
                self.error(step.loc, f"for_each needs a value with a time axis, "
                           f"'{step.sequence}' is {show_value(seq)}" + self.context())
            else:
                item = TensorType(seq.shape[1:], seq.dtype)
        dtype = (seq.dtype if isinstance(seq, TensorType) and seq.dtype is not None
                 and seq.dtype.kind == "f" else np.dtype(config.dtype))
        carried = {}
        for carry in step.carry:
            value = (env.get(carry.value) if carry.fill == "value"
                     else TensorType(carry.shape, dtype))
            env[carry.name] = carried[carry.name] = value
        start = dict(env)
        seen = [start]
        collected: list[ValueType] = []
        what = f"the for_each at {at}"
        trips = seq.shape[0] if isinstance(seq, TensorType) and seq.ndim else None
        limit = min(trips, MAX_TRIPS_CHECKED) if isinstance(trips, int) else MAX_TRIPS_CHECKED
        for trip in range(limit):
            env = self.env
            env[step.item] = env[PREVIOUS] = item
            self.where.append(f"trip {trip + 1} of {what}" if trip else f"in the body of {what}")
            self.steps(step.body, suffix)
            self.where.pop()
            env = self.env
            for carry in step.carry:
                self.check_carry(carry, carried[carry.name], env.get(carry.name), trip)
            if step.collect and env.get(step.collect) not in collected:
                collected.append(env.get(step.collect))
            if any(env == s for s in seen[1:]):
                break
            seen.append(dict(env))
        if step.collect:
            stacked = self.stacked(step, collected, trips)
            self.env[PREVIOUS] = stacked
            if step.to:
                self.env[step.to] = stacked

    def check_carry(self, carry: Any, start: ValueType, now: ValueType, trip: int) -> None:
        if id(carry) in self.carries_reported:
            return
        if not isinstance(start, TensorType) or not isinstance(now, TensorType):
            if isinstance(start, TensorType) and isinstance(now, Choice | tuple):
                self.carries_reported.add(id(carry))
                self.error(carry.loc, f"carry '{carry.name}' must keep its shape "
                           f"{show_shape(start.shape)}, but the body makes it {now}"
                           + self.context())
            return
        if start.ndim != now.ndim or any(shapes.conflict(a, b) for a, b in
                                         zip(start.shape, now.shape, strict=False)):
            self.carries_reported.add(id(carry))
            self.error(carry.loc, f"carry '{carry.name}' must keep its shape "
                       f"{show_shape(start.shape)}, but "
                       + (f"trip {trip + 1} of the body" if trip else "the body")
                       + f" makes it {show_shape(now.shape)}" + self.context())

    def stacked(self, step: ForEachStep, collected: list[ValueType], trips: Any) -> ValueType:
        if len(collected) != 1 or not isinstance(collected[0], TensorType):
            if len(collected) > 1 and all(isinstance(c, TensorType) for c in collected):
                self.error(step.loc, f"collect '{step.collect}' is stacked over the trips, but "
                           f"the trips make it of different shapes: "
                           f"{', '.join(show_value(c) for c in collected)}" + self.context())
            return None
        t = collected[0]
        length = trips if trips is not None else UNKNOWN
        return TensorType((length,) + t.shape, t.dtype)


def _phrase(label: str) -> str:
    """``after then``, ``before the loop``, ``after trip 1``."""
    return f"after {label}" if label in ("then", "else") else label


def _label_of(choice: Choice, combination: tuple) -> str:
    for option, label in zip(choice.options, choice.labels, strict=True):
        if option in combination:
            return label
    return choice.labels[0]


def _either(a: ValueType, b: ValueType, loc: Loc, kind: str, name: str) -> ValueType:
    if a == b:
        return a
    if a is None or b is None:  # unknown on one path: unknown
        return None
    options = tuple(a.options) if isinstance(a, Choice) else (a,)
    if b in options:
        return a
    labels = tuple(a.labels) if isinstance(a, Choice) else ("trip 1",)
    return Choice(options + (b,), labels + (f"trip {len(options) + 1}",), loc, kind, name)


def _message(step: OpStep, problem: str) -> str:
    """``linear: ...`` once: a rule's message already starts with the op's name."""
    return problem if problem.startswith(f"{step.op}:") else f"{step.op}: {problem}"
