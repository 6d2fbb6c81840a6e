"""Spec loading and validation: located YAML -> a ``Spec``, or every error at once.

``load_spec_file(path)`` / ``load_spec_text(text)`` read the YAML (``yaml_source``), apply
``--set params.k=v`` overrides, substitute ``$params.NAME`` values, then check each section
against the op registry and the layer table, tracking which value names are in scope at every
step. Problems are collected as located ``SpecError``s and raised together as ``SpecErrors``;
nothing is allocated or run for a bad spec.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from graphcore.errors import ArgumentTypeError, ArgumentValueError, SpecError, SpecErrors
from graphcore.language.shape_pass import TYPES_KEY, infer_types
from graphcore.language.syntax import (
    DEFAULT_MAX_ELEMENTS,
    PREVIOUS,
    ForEachStep,
    IfStep,
    OpStep,
    RepeatStep,
    Spec,
    Step,
    WhileStep,
    walk_steps,
)
from graphcore.language.validate_inputs import InputsReader
from graphcore.language.validate_steps import StepsReader
from graphcore.language.validate_work import WorkReader
from graphcore.language.validate_workflow import WorkflowReader
from graphcore.language.validation import (
    FLOAT_12,
    INVALID,
    NAME_PATTERN,
    PARAM_REF,
    STEP_KINDS,
    Scope,
    boolean_word_hint,
    did_you_mean,
    items_of,
    show,
)
from graphcore.language.yaml_scalars import MAX_INTEGER_DIGITS
from graphcore.language.yaml_source import (
    LMap,
    Loc,
    LScalar,
    LSeq,
    error_at,
    load_yaml,
    load_yaml_file,
)

FORMAT_VERSION = 1
SPEC_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"  # it names the outputs/<name>/ folder: never `..`
TOP_KEYS = ("graphtool", "name", "kind", "seed", "params", "inputs", "graph", "loss", "outputs",
            "data", "validation", "train", "test")
# keys of steps, which a mis-indented line can leave at the top level
STEP_KEYS = ("then", "else", "body", "max_iters", "on_limit", "as", "carry", "collect",
             "unroll", "op", "from", "to")


def check_load_options(api: str, overrides: Any, max_elements: Any) -> None:
    if isinstance(overrides, str) or not isinstance(overrides, list | tuple) or not all(
            isinstance(o, str) for o in overrides):
        raise ArgumentTypeError(f"{api}: overrides must be a list of 'params.NAME=VALUE' "
                                f"strings, got {overrides!r}"[:200])
    if isinstance(max_elements, bool) or not isinstance(max_elements, int):
        raise ArgumentTypeError(f"{api}: max_elements must be an int, got "
                                f"{type(max_elements).__name__}")
    if max_elements < 1:
        raise ArgumentValueError(f"{api}: max_elements must be at least 1, got {max_elements}")


def load_spec_file(path: str | os.PathLike[str], overrides: Sequence[str] = (),
                   max_elements: int = DEFAULT_MAX_ELEMENTS) -> Spec:
    """Load and validate the spec at ``path`` (FileNotFoundError if it does not exist)."""
    if not isinstance(path, str | os.PathLike):
        raise ArgumentTypeError(f"load_spec_file: path must be a str or os.PathLike, got "
                                f"{type(path).__name__}")
    check_load_options("load_spec_file", overrides, max_elements)
    path = Path(path)
    root = load_yaml_file(path)
    return _Loader(root, str(path), str(path.parent), max_elements).load(overrides, path.stem)


def load_spec_text(text: str, file: str = "<spec>", folder: str = ".",
                   overrides: Sequence[str] = (), max_elements: int = DEFAULT_MAX_ELEMENTS,
                   default_name: str = "spec") -> Spec:
    """Load and validate spec ``text``; ``file`` names it in errors, ``folder`` anchors paths."""
    if not isinstance(text, str):
        raise ArgumentTypeError(f"load_spec_text: text must be a str, got {type(text).__name__}")
    check_load_options("load_spec_text", overrides, max_elements)
    root = load_yaml(text, file)
    return _Loader(root, file, folder, max_elements).load(overrides, default_name)



class _Loader(InputsReader, StepsReader, WorkReader, WorkflowReader):
    def __init__(self, root: LMap, file: str, folder: str, max_elements: int) -> None:
        self.root = root
        self.file = file
        self.folder = folder
        self.max_elements = max_elements
        self.errors: list[SpecError] = []
        self.params: dict[str, Any] = {}
        self.kind = "dynamic"
        self.layer_steps: dict[str, OpStep] = {}
        self.input_locs: dict[str, Loc] = {}
        self.set_by: dict[str, str] = {}  # param name -> the --set text that gave its value
        self.data_inputs: dict[str, Any] = {}  # inputs the `data:` section feeds
        # position -> the trap hint of what is written there (see ``error``); a list's
        # position also holds its first item's, a $params reference its param's
        self.traps: dict[tuple[int, int], str] = {}
        self.param_traps: dict[str, str] = {}
        _collect_traps(root, self.traps)

    # --- entry ------------------------------------------------------------------------------
    def load(self, overrides: Sequence[str], default_name: str) -> Spec:
        root = self.root
        for key in root:
            if key not in TOP_KEYS:
                self.error(root.key_loc(key), f"unknown top-level key '{key}'",
                           self.stray_step_key_hint(key) or did_you_mean(key, TOP_KEYS))
        self.check_version()
        self.params = self.read_params(root.get("params"))
        self.apply_overrides(overrides)
        name = self.read_name(default_name)
        self.kind = self.read_choice(root.get("kind"), "kind", ("static", "dynamic"), "dynamic")
        seed = self.read_int(root.get("seed"), "seed", 0, low=0)
        inputs = self.read_inputs(root.get("inputs"))
        data = self.read_data(root.get("data"))
        for input_name, fed in self.data_inputs.items():
            if input_name in inputs:
                self.error(fed.loc, f"input '{input_name}' is declared in inputs and fed by "
                           "data; keep one")
            else:
                inputs[input_name] = fed
                self.input_locs[input_name] = fed.loc
        validation = self.read_validation(root.get("validation"))
        test = self.read_validation(root.get("test"), "test")
        train = self.read_train(root.get("train"))
        for key, part in (("validation", validation), ("test", test)):
            if part is not None and data is None:
                self.error(part.loc, f"{key} needs a `data:` section to split or match")
        # Every declared input is in scope, a bad one too (already reported): no cascade.
        scope = Scope(self.input_locs)
        if self.input_locs:
            scope.names[PREVIOUS] = next(iter(self.input_locs.values()))
        graph_node = root.get("graph")
        if graph_node is None:
            self.error(root.loc, "the spec has no 'graph' (a list of steps)")
            graph: list[Step] = []
        else:
            graph, scope = self.read_steps(graph_node, scope, "graph")
        loss = None
        if root.get("loss") is not None:
            loss, scope = self.read_op_mapping(root["loss"], scope, "loss")
        outputs = self.read_outputs(root.get("outputs"), scope)
        steps = graph + ([loss] if loss else [])
        within_limits = self.check_work(steps, inputs)
        self.name_layers(steps, check_scopes=within_limits)
        if self.errors:
            raise SpecErrors(self.errors)
        spec = Spec(name=name, kind=self.kind, seed=seed, params=self.params, inputs=inputs,
                    graph=graph, loss=loss, outputs=outputs, file=self.file,
                    folder=self.folder, source=root.loc.source, loc=root.loc,
                    max_elements=self.max_elements, data=data, validation=validation, test=test,
                    train=train)
        self.mark_labels(spec)
        if not self.errors:
            try:  # shapes and dtypes of every branch and loop body, before anything runs
                spec.__dict__[TYPES_KEY] = infer_types(spec)
            except SpecErrors as e:
                self.errors.extend(e.errors)
        if self.errors:
            raise SpecErrors(self.errors)
        return spec

    def stray_step_key_hint(self, key: str) -> str | None:
        """A top-level key that belongs to a step (``then:`` written at column 1 under
        ``- if:``): which step line it should be indented under."""
        if key not in STEP_KEYS:
            return None
        loc = self.root.key_loc(key)
        source = loc.source
        for number in range(loc.line - 1, 0, -1):
            text = (source.line(number) if source is not None else None) or ""
            step = re.match(r"(\s*)- ([a-z_]+):(?:\s|$)", text)
            if step is not None and step.group(2) in STEP_KINDS:
                column = len(step.group(1)) + 2
                return (f"'{key}' belongs to the {step.group(2)} step on line {number}: indent "
                        f"it {column} spaces, like '{step.group(2)}:'")
        return f"'{key}' is a key of a step; indent it under the step it belongs to"

    # --- small readers ----------------------------------------------------------------------
    def error(self, loc: Loc, message: str, hint: str | None = None) -> None:
        """Record a problem at ``loc``. Every error about a value YAML reads differently than
        people expect gets that value's trap hint (``1e-3`` is text, ``on`` is true, a folded
        ``- item``) here, in one place, whichever check refused it."""
        trap = self.traps.get((loc.line, loc.col)) if loc.file == self.file else None
        if trap is not None and trap != hint:
            hint = trap if hint is None else f"{trap}; {hint}"
        self.errors.append(error_at(loc, message, hint))

    def value(self, node: Any) -> Any:
        """The Python value of ``node`` with ``$params.NAME`` scalars substituted."""
        if isinstance(node, LScalar):
            v = node.value
            if isinstance(v, str) and v.startswith(PARAM_REF) and node.style == "plain":
                key = v[len(PARAM_REF):]
                if key not in self.params:
                    self.error(node.loc, f"unknown parameter '{key}' in '{v}'",
                               did_you_mean(key, self.params))
                    return INVALID
                if key in self.param_traps and key not in self.set_by:
                    self.traps.setdefault((node.loc.line, node.loc.col), self.param_traps[key])
                return self.params[key]
            return self.unambiguous(node)
        if isinstance(node, LSeq):
            return [self.value(item) for item in node]
        if isinstance(node, LMap):
            return {k: self.value(node[k]) for k in node}
        return node

    def show(self, node: Any) -> str:
        """``node`` as an error message shows it: a ``$params.NAME`` reference shows the value
        it stands for and where that came from (the spec's params, or a ``--set``)."""
        if (isinstance(node, LScalar) and node.style == "plain" and isinstance(node.value, str)
                and node.value.startswith(PARAM_REF)):
            key = node.value[len(PARAM_REF):]
            if key in self.params:
                origin = (f"from --set {self.set_by[key]}" if key in self.set_by
                          else f"from params.{key}")
                return f"{self.params[key]!r} ({origin})"
        return show(node)

    def unambiguous(self, node: LScalar) -> Any:
        """The scalar's value, unless it is a number YAML versions read differently (``010`` is
        8 in YAML 1.1 and 10 in 1.2; ``1:30`` is 90; ``1_000``): that is an error with a hint."""
        v = node.value
        if node.trap and isinstance(v, int | float) and not isinstance(v, bool):
            self.error(node.loc, f"ambiguous number {node.raw}", node.trap)
            return INVALID
        return v

    def check_version(self) -> None:
        node = self.root.get("graphtool")
        if node is None:
            self.error(self.root.loc, "missing 'graphtool: 1' (the spec format version)")
        elif (not isinstance(node, LScalar) or type(node.value) is not int  # not true, 1.0
              or node.value != FORMAT_VERSION):
            self.error(node.loc, f"unsupported spec format version "
                       f"{self.show(node)}; this graphtool reads version {FORMAT_VERSION}")

    def read_name(self, default: str) -> str:
        node = self.root.get("name")
        if node is None:  # the file's stem, made a name an explicit `name:` could be
            return re.sub(r"^[.-]|[^A-Za-z0-9_.-]", "_", default) or "spec"
        value = self.value(node)
        if not isinstance(value, str) or not re.fullmatch(SPEC_NAME, value):
            self.error(node.loc, "name must be letters, digits, '_', '.' or '-' (it names the "
                       "outputs/<name>/ folder)")
            return "spec"
        return value

    def read_choice(self, node: Any, what: str, choices: Sequence[str], default: str) -> str:
        if node is None:
            return default
        value = self.value(node)
        if value not in choices:
            self.error(node.loc, f"{what} must be one of {', '.join(choices)}, got "
                       f"{self.show(node)}", did_you_mean(str(value), choices))
            return default
        return value

    def read_int(self, node: Any, what: str, default: int, low: int | None = None) -> int:
        if node is None:
            return default
        value = self.value(node)
        if value is INVALID:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(node.loc, f"{what} must be an integer, got {self.show(node)}")
            return default
        if low is not None and value < low:
            self.error(node.loc, f"{what} must be at least {low}, got {value}")
            return default
        return value

    def read_params(self, node: Any) -> dict[str, Any]:
        if node is None:
            return {}
        if not isinstance(node, LMap):
            self.error(node.loc, "params must be a mapping of names to values")
            return {}
        params = {}
        for key in node:
            if not NAME_PATTERN.match(key):
                self.error(node.key_loc(key), f"parameter name '{key}' must start with a "
                           "letter and contain only letters, digits and '_'")
            value = node[key]
            if isinstance(value, LMap):
                self.error(value.loc, f"parameter '{key}' must be a scalar or a list")
                continue
            params[key] = (self.unambiguous(value) if isinstance(value, LScalar)
                           else value.to_python())
            traps: dict[tuple[int, int], str] = {}
            _collect_traps(value, traps)
            if traps:
                self.param_traps[key] = next(iter(traps.values()))
        return params

    def apply_overrides(self, overrides: Sequence[str]) -> None:
        for i, text in enumerate(overrides):
            key, sep, raw = text.partition("=")
            if not sep or not key.startswith("params.") or not key[len("params."):]:
                self.errors.append(SpecError(
                    f"--set expects params.NAME=VALUE, got {text!r}", "--set", i + 1, 1))
                continue
            name = key[len("params."):]
            if name not in self.params:
                self.errors.append(SpecError(
                    f"--set {key}: the spec has no parameter '{name}'", "--set", i + 1, 1,
                    hint=did_you_mean(name, self.params)))
                continue
            try:
                value = yaml.safe_load(raw) if raw.strip() else ""
            except yaml.YAMLError:
                value = raw
            except ValueError:  # an integer past Python's digit limit (4,300 digits)
                digits = sum(c.isdigit() for c in raw)
                self.errors.append(SpecError(
                    f"--set {key}: an integer of {digits:,} digits is too long to be read as a "
                    f"number (at most {MAX_INTEGER_DIGITS:,} digits)", "--set", i + 1,
                    len(key) + 2))
                continue
            if isinstance(value, str) and FLOAT_12.match(raw.strip()):
                value = float(raw)  # `--set params.lr=1e-3` means the number, as people expect
            if isinstance(value, dict):
                self.errors.append(SpecError(f"--set {key}: a value must be a scalar or a "
                                             "list", "--set", i + 1, len(key) + 2))
                continue
            self.params[name] = value
            self.set_by[name] = text


    # --- outputs and names ------------------------------------------------------------------
    def read_outputs(self, node: Any, scope: Scope) -> list[str]:
        if node is None:
            return [PREVIOUS]
        value = self.value(node)
        items = items_of(node, value)
        names = value if isinstance(value, list) else [value]
        out = []
        for item, name in zip(items, names, strict=False):
            if not isinstance(name, str) or name not in scope.names:
                self.error(item.loc, f"outputs: no value named {self.show(item)} at the end of the "
                           "graph", scope.missing_hint(str(name)))
            else:
                out.append(name)
        return out

    def name_layers(self, steps: list[Step], check_scopes: bool = True) -> None:
        """Give every unnamed layer a stable scope name: ``<op>_<k>`` in file order; then,
        unless the unrolled scopes are over the limit, check them for clashes."""
        used = {s.name for s in walk_steps(steps) if isinstance(s, OpStep) and s.name}
        counters: dict[str, int] = {}
        for step in walk_steps(steps):
            if isinstance(step, OpStep) and step.layer and step.name is None:
                k = counters.get(step.op, 0)
                while f"{step.op}_{k}" in used:
                    k += 1
                step.name = f"{step.op}_{k}"
                used.add(step.name)
                counters[step.op] = k + 1
        if check_scopes:
            self.check_unrolled_scopes(steps)

    def check_unrolled_scopes(self, steps: list[Step]) -> None:
        """An unrolled repeat names its layers ``<name>_<i>``; another layer with such a name
        would silently share its parameters, so that is refused."""
        plain = {s.name: s for s in walk_steps(steps) if isinstance(s, OpStep) and s.layer}
        stack: list[tuple[list[Step], str, RepeatStep | None]] = [(steps, "", None)]
        while stack:
            body, suffix, repeat = stack.pop()
            for step in body:
                if isinstance(step, OpStep) and step.layer and suffix:
                    other = plain.get(step.name + suffix)
                    if other is not None and other is not step:
                        self.error(other.loc, f"layer name '{other.name}' is also the scope of "
                                   f"iteration {suffix[1:]} of the unrolled repeat at line "
                                   f"{repeat.loc.line}", "choose another name")
                elif isinstance(step, IfStep):
                    stack.append((step.then + step.otherwise, suffix, repeat))
                elif isinstance(step, RepeatStep) and step.unroll:
                    stack.extend((step.body, f"{suffix}_{i}", step) for i in range(step.count))
                elif isinstance(step, RepeatStep | WhileStep | ForEachStep):
                    stack.append((step.body, suffix, repeat))


def _collect_traps(node: Any, traps: dict[tuple[int, int], str]) -> None:
    """Every trap hint in ``node``'s tree by position: scalars', keys', and for a list its
    first item's too (an error about the whole list is about its values). ``y``/``n`` are
    left to the checks that expect a boolean (``boolean_word_hint``)."""
    if isinstance(node, LScalar):
        if node.trap is not None and boolean_word_hint(node) is None:
            traps[(node.loc.line, node.loc.col)] = node.trap
    elif isinstance(node, LMap):
        for key in node:
            if node.key_trap(key) is not None:
                loc = node.key_loc(key)
                traps[(loc.line, loc.col)] = node.key_trap(key)
            _collect_traps(node[key], traps)
    elif isinstance(node, LSeq):
        before = len(traps)
        for item in node:
            _collect_traps(item, traps)
        if len(traps) > before:
            traps.setdefault((node.loc.line, node.loc.col), list(traps.values())[before])
