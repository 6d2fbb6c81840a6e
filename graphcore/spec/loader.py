"""Spec loading and validation: located YAML -> a ``Spec``, or every error at once.

``load_spec_file(path)`` / ``load_spec_text(text)`` read the YAML (``yaml_source``), apply
``--set params.k=v`` overrides, substitute ``$params.NAME`` values, then check each section
against the op registry and the layer table, tracking which value names are in scope at every
step. Problems are collected as located ``SpecError``s and raised together as ``SpecErrors``;
nothing is allocated or run for a bad spec.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from graphcore.errors import SpecError, SpecErrors
from graphcore.function_node import Attr
from graphcore.registry import all_ops
from graphcore.spec import predicate as pred
from graphcore.spec.layers import LAYERS
from graphcore.spec.model import (
    PREVIOUS,
    CarrySpec,
    ForEachStep,
    IfStep,
    InputSpec,
    OpStep,
    RepeatStep,
    Spec,
    Step,
    WhileStep,
    walk_steps,
)
from graphcore.spec.yaml_source import (
    LMap,
    Loc,
    LScalar,
    LSeq,
    error_at,
    load_yaml,
    load_yaml_file,
)

FORMAT_VERSION = 1
DEFAULT_MAX_ELEMENTS = 50_000_000  # per tensor; refused before anything is allocated
TOP_KEYS = ("graphtool", "name", "kind", "seed", "params", "inputs", "graph", "loss", "outputs")
STEP_KINDS = ("op", "if", "repeat", "while", "for_each")
SOURCES = ("random", "zeros", "ones", "file", "stdin")
RESERVED = {"params", "loop", "true", "false", "and", "or", "not", PREVIOUS}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_PARAM_REF = "$params."
_FLOAT_12 = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")  # 1e-3: YAML 1.1 text
MAX_REPEAT = 100_000  # trips of one repeat
MAX_UNROLLED_LAYERS = 10_000  # layer scopes an unrolled repeat may create


def load_spec_file(path: str | os.PathLike[str], overrides: Sequence[str] = (),
                   max_elements: int = DEFAULT_MAX_ELEMENTS) -> Spec:
    """Load and validate the spec at ``path`` (FileNotFoundError if it does not exist)."""
    path = Path(path)
    root = load_yaml_file(path)
    return _Loader(root, str(path), str(path.parent), max_elements).load(overrides, path.stem)


def load_spec_text(text: str, file: str = "<spec>", folder: str = ".",
                   overrides: Sequence[str] = (), max_elements: int = DEFAULT_MAX_ELEMENTS,
                   default_name: str = "spec") -> Spec:
    """Load and validate spec ``text``; ``file`` names it in errors, ``folder`` anchors paths."""
    root = load_yaml(text, file)
    return _Loader(root, file, folder, max_elements).load(overrides, default_name)


class _Scope:
    """Value names bound at a point of the graph, each with where it was bound."""

    def __init__(self, names: dict[str, Loc | None], loops: tuple[str, ...] = ()) -> None:
        self.names = dict(names)
        self.loops = loops  # kinds of the enclosing loops, innermost last

    def copy(self) -> _Scope:
        return _Scope(self.names, self.loops)


class _Loader:
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

    # --- entry ------------------------------------------------------------------------------
    def load(self, overrides: Sequence[str], default_name: str) -> Spec:
        root = self.root
        for key in root:
            if key not in TOP_KEYS:
                self.error(root.key_loc(key), f"unknown top-level key '{key}'",
                           _did_you_mean(key, TOP_KEYS))
        self.check_version()
        self.params = self.read_params(root.get("params"))
        self.apply_overrides(overrides)
        name = self.read_name(default_name)
        self.kind = self.read_choice(root.get("kind"), "kind", ("static", "dynamic"), "dynamic")
        seed = self.read_int(root.get("seed"), "seed", 0, low=0)
        inputs = self.read_inputs(root.get("inputs"))
        # Every declared input is in scope, a bad one too (already reported): no cascade.
        scope = _Scope(self.input_locs)
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
        self.name_layers(graph + ([loss] if loss else []))
        if self.errors:
            raise SpecErrors(self.errors)
        return Spec(name=name, kind=self.kind, seed=seed, params=self.params, inputs=inputs,
                    graph=graph, loss=loss, outputs=outputs, file=self.file,
                    folder=self.folder, source=root.loc.source, loc=root.loc)

    # --- small readers ----------------------------------------------------------------------
    def error(self, loc: Loc, message: str, hint: str | None = None) -> None:
        self.errors.append(error_at(loc, message, hint))

    def value(self, node: Any) -> Any:
        """The Python value of ``node`` with ``$params.NAME`` scalars substituted."""
        if isinstance(node, LScalar):
            v = node.value
            if isinstance(v, str) and v.startswith(_PARAM_REF) and node.style == "plain":
                key = v[len(_PARAM_REF):]
                if key not in self.params:
                    self.error(node.loc, f"unknown parameter '{key}' in '{v}'",
                               _did_you_mean(key, self.params))
                    return _Invalid
                return self.params[key]
            return v
        if isinstance(node, LSeq):
            return [self.value(item) for item in node]
        if isinstance(node, LMap):
            return {k: self.value(node[k]) for k in node}
        return node

    def check_version(self) -> None:
        node = self.root.get("graphtool")
        if node is None:
            self.error(self.root.loc, "missing 'graphtool: 1' (the spec format version)")
        elif (not isinstance(node, LScalar) or type(node.value) is not int  # not true, 1.0
              or node.value != FORMAT_VERSION):
            self.error(node.loc, f"unsupported spec format version "
                       f"{_show(node)}; this graphtool reads version {FORMAT_VERSION}")

    def read_name(self, default: str) -> str:
        node = self.root.get("name")
        if node is None:
            return re.sub(r"[^A-Za-z0-9_.-]", "_", default) or "spec"
        value = self.value(node)
        if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", value):
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
                       f"{_show(node)}", _did_you_mean(str(value), choices))
            return default
        return value

    def read_int(self, node: Any, what: str, default: int, low: int | None = None) -> int:
        if node is None:
            return default
        value = self.value(node)
        if value is _Invalid:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(node.loc, f"{what} must be an integer, got {_show(node)}", _trap(node))
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
            if not _NAME.match(key):
                self.error(node.key_loc(key), f"parameter name '{key}' must start with a "
                           "letter and contain only letters, digits and '_'")
            value = node[key]
            if isinstance(value, LMap):
                self.error(value.loc, f"parameter '{key}' must be a scalar or a list")
                continue
            params[key] = value.to_python()
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
                    hint=_did_you_mean(name, self.params)))
                continue
            try:
                value = yaml.safe_load(raw) if raw.strip() else ""
            except yaml.YAMLError:
                value = raw
            if isinstance(value, str) and _FLOAT_12.match(raw.strip()):
                value = float(raw)  # `--set params.lr=1e-3` means the number, as people expect
            if isinstance(value, dict):
                self.errors.append(SpecError(f"--set {key}: a value must be a scalar or a "
                                             "list", "--set", i + 1, len(key) + 2))
                continue
            self.params[name] = value

    # --- inputs -----------------------------------------------------------------------------
    def read_inputs(self, node: Any) -> dict[str, InputSpec]:
        if node is None:
            return {}
        if not isinstance(node, LMap):
            self.error(node.loc, "inputs must be a mapping of names to sources")
            return {}
        inputs = {}
        for name in node:
            self.check_value_name(name, node.key_loc(name))
            self.input_locs[name] = node[name].loc
            spec = self.read_input(name, node[name])
            if spec is not None:
                inputs[name] = spec
        return inputs

    def read_input(self, name: str, node: Any) -> InputSpec | None:
        if not isinstance(node, LMap):
            self.error(node.loc, f"input '{name}' must be a mapping such as "
                       "{random: normal, shape: [3, 4]}")
            return None
        sources = [k for k in node if k in SOURCES]
        if len(sources) != 1:
            what = "no source" if not sources else f"{len(sources)} sources"
            self.error(node.loc, f"input '{name}' has {what}; give exactly one of "
                       f"{', '.join(SOURCES)}")
            return None
        source = sources[0]
        allowed = _INPUT_KEYS[source]
        for key in node:
            if key != source and key not in allowed:
                self.error(node.key_loc(key), f"input '{name}': '{key}' does not apply to a "
                           f"{source} input", _did_you_mean(key, allowed))
        spec = InputSpec(name=name, source=source, loc=node.loc)
        src = node[source]
        if source in ("zeros", "ones"):
            spec.shape = self.read_shape(src, f"input '{name}'")
        elif source == "random":
            spec.distribution = self.read_choice(src, "random", ("normal", "uniform", "randint"),
                                                 "normal")
            spec.shape = self.read_shape(node.get("shape"), f"input '{name}'", node.loc)
            self.read_random_options(spec, node)
        elif source == "file":
            path = self.value(src)
            if not isinstance(path, str) or not path:
                self.error(src.loc, f"input '{name}': file must be a path")
            else:
                spec.path = path
                self.read_file_options(spec, node)
        else:
            spec.format = self.read_choice(src, "stdin", ("npy", "csv"), "npy")
        if "dtype" in node:
            spec.dtype = self.read_dtype(node["dtype"])
        elif spec.distribution == "randint":
            spec.dtype = "int32"
        if spec.distribution in ("normal", "uniform") and not spec.dtype.startswith("float"):
            self.error(node["dtype"].loc, f"input '{name}': random {spec.distribution} values "
                       f"cannot be {spec.dtype}", "use random: randint for integers")
        if "lengths" in node:
            spec.lengths = self.read_lengths(node["lengths"], spec)
        elif spec.shape and None in spec.shape:
            self.error(node.loc, f"input '{name}': a null length in shape needs 'lengths'")
        self.check_size(spec)
        return spec

    def read_random_options(self, spec: InputSpec, node: LMap) -> None:
        numbers = {}
        for key in ("low", "high", "mean", "std"):
            if key in node:
                value = self.value(node[key])
                if isinstance(value, bool) or not isinstance(value, int | float):
                    self.error(node[key].loc, f"{key} must be a number, got {_show(node[key])}",
                               _trap(node[key]))
                else:
                    numbers[key] = value
        dist = spec.distribution
        if dist == "randint" and "high" not in numbers:
            self.error(node.loc, f"input '{spec.name}': randint needs 'high' (exclusive)")
        low = numbers.get("low", 0)
        high = numbers.get("high", 1 if dist != "randint" else low + 1)
        if dist in ("uniform", "randint") and high <= low:
            self.error(node.loc, f"input '{spec.name}': high ({high}) must be greater than low "
                       f"({low})")
        for key in ("mean", "std"):
            if key in numbers and dist != "normal":
                self.error(node.key_loc(key), f"input '{spec.name}': '{key}' applies to "
                           "random: normal only")
        for key in ("low", "high"):
            if key in numbers and dist == "normal":
                self.error(node.key_loc(key), f"input '{spec.name}': '{key}' applies to "
                           "uniform and randint, not normal (use mean and std)")
        if numbers.get("std", 1.0) < 0:
            self.error(node["std"].loc, "std must not be negative")
        spec.low, spec.high = low, high
        spec.mean, spec.std = numbers.get("mean", 0.0), numbers.get("std", 1.0)

    def read_file_options(self, spec: InputSpec, node: LMap) -> None:
        suffix = Path(spec.path).suffix.lower()
        if suffix not in (".npy", ".npz", ".csv"):
            self.error(node["file"].loc, f"input '{spec.name}': file must be .npy, .npz or "
                       f".csv, got '{suffix or spec.path}'")
        if suffix == ".npz":
            key = self.value(node["key"]) if "key" in node else None
            if not isinstance(key, str):
                self.error(node.loc, f"input '{spec.name}': an .npz file needs 'key' (the "
                           "array's name inside it)")
            spec.key = key
        elif "key" in node:
            self.error(node.key_loc("key"), "'key' applies to .npz files only")
        if "delimiter" in node:
            value = self.value(node["delimiter"])
            if not isinstance(value, str) or len(value) != 1:
                self.error(node["delimiter"].loc, "delimiter must be one character")
            else:
                spec.delimiter = value
        if "skip_header" in node:
            spec.skip_header = self.read_int(node["skip_header"], "skip_header", 0, low=0)
        if "shape" in node:
            spec.shape = self.read_shape(node["shape"], f"input '{spec.name}'")

    def read_shape(self, node: Any, what: str, parent: Loc | None = None,
                   allow_null_first: bool = True) -> tuple[int | None, ...] | None:
        if node is None:
            self.error(parent, f"{what} needs a 'shape' (a list of sizes)")
            return None
        value = self.value(node)
        if isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, list):
            self.error(node.loc, f"{what}: shape must be a list of sizes, got {_show(node)}")
            return None
        shape: list[int | None] = []
        items = _items(node, value)
        for i, (item, size) in enumerate(zip(items, value, strict=False)):
            if size is None and i == 0 and allow_null_first:
                shape.append(None)
            elif isinstance(size, bool) or not isinstance(size, int) or size < 1:
                self.error(item.loc, f"{what}: sizes must be positive integers, got "
                           f"{_show(item)}", _trap(item))
                return None
            else:
                shape.append(size)
        return tuple(shape)

    def read_dtype(self, node: Any) -> str:
        value = self.value(node)
        allowed = ("float16", "float32", "float64", "int32", "int64", "bool")
        if value not in allowed:
            self.error(node.loc, f"dtype must be one of {', '.join(allowed)}, got {_show(node)}",
                       _did_you_mean(str(value), allowed))
            return "float32"
        return value

    def read_lengths(self, node: Any, spec: InputSpec) -> tuple[int, ...] | None:
        value = self.value(node)
        if (not isinstance(value, list) or not value
                or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value)):
            self.error(node.loc, "lengths must be a non-empty list of positive integers")
            return None
        if not spec.shape or spec.shape[0] is not None:
            self.error(node.loc, f"input '{spec.name}': lengths need shape [null, ...] (the "
                       "null axis is the sequence length)")
        return tuple(value)

    def check_size(self, spec: InputSpec) -> None:
        if not spec.shape:
            return
        rest = math.prod(n for n in spec.shape if n is not None)  # no int64 overflow
        longest = max(spec.lengths or (1,)) if spec.shape[0] is None else 1
        if rest * longest > self.max_elements:
            self.error(spec.loc, f"input '{spec.name}' would have {rest * longest:,} elements, "
                       f"over the limit of {self.max_elements:,}")

    # --- steps ------------------------------------------------------------------------------
    def check_value_name(self, name: str, loc: Loc) -> bool:
        if name in RESERVED or not _NAME.match(name):
            self.error(loc, f"'{name}' cannot name a value: use a letter followed by letters, "
                       "digits or '_' (and not params, loop, true, false, and, or, not)")
            return False
        return True

    def read_steps(self, node: Any, scope: _Scope, where: str) -> tuple[list[Step], _Scope]:
        if not isinstance(node, LSeq):
            self.error(node.loc, f"{where} must be a list of steps")
            return [], scope
        if len(node) == 0:
            self.error(node.loc, f"{where} has no steps")
        steps = []
        for item in node:
            step, scope = self.read_step(item, scope)
            if step is not None:
                steps.append(step)
        return steps, scope

    def read_step(self, node: Any, scope: _Scope) -> tuple[Step | None, _Scope]:
        if isinstance(node, LScalar) and isinstance(node.value, str):
            return self.read_op(node.value, node.loc, None, scope)
        if not isinstance(node, LMap):
            self.error(node.loc, "a step is an op name or a mapping with one of "
                       f"{', '.join(STEP_KINDS)}")
            return None, scope
        kinds = [k for k in node if k in STEP_KINDS]
        if len(kinds) != 1:
            what = "none" if not kinds else ", ".join(kinds)
            hint = None
            if not kinds:
                hint = next((_did_you_mean(k, STEP_KINDS) for k in node
                             if _did_you_mean(k, STEP_KINDS)), None)
            self.error(node.loc, f"a step needs exactly one of {', '.join(STEP_KINDS)} "
                       f"(found {what})", hint)
            return None, scope
        kind = kinds[0]
        if kind == "op":
            return self.read_op_mapping(node, scope, "step")
        if kind == "if":
            return self.read_if(node, scope)
        if kind == "repeat":
            return self.read_repeat(node, scope)
        if kind == "while":
            return self.read_while(node, scope)
        return self.read_for_each(node, scope)

    def read_op_mapping(self, node: Any, scope: _Scope, where: str):
        if isinstance(node, LScalar) and isinstance(node.value, str):
            return self.read_op(node.value, node.loc, None, scope)
        if not isinstance(node, LMap) or "op" not in node:
            self.error(node.loc, f"{where} must be a mapping with 'op'")
            return None, scope
        op = self.value(node["op"])
        if not isinstance(op, str):
            self.error(node["op"].loc, f"op must be an op name, got {_show(node['op'])}")
            return None, scope
        return self.read_op(op, node["op"].loc, node, scope)

    def read_op(self, op: str, op_loc: Loc, node: LMap | None, scope: _Scope):
        loc = node.loc if node is not None else op_loc
        layer = LAYERS.get(op)
        op_class = all_ops().get(op) if layer is None else None
        if layer is None and op_class is None:
            self.error(op_loc, f"unknown op '{op}'",
                       _did_you_mean(op, list(LAYERS) + list(all_ops())))
            return None, scope
        declared = layer.attributes if layer else op_class.attributes
        arity = layer.arity if layer else op_class.arity
        step = OpStep(op=op, loc=loc, layer=layer is not None)
        if node is not None:
            for key in node:
                if key in ("op", "from", "to", "name"):
                    continue
                if key not in declared:
                    known = sorted(declared) + ["from", "to"] + (["name"] if layer else [])
                    self.error(node.key_loc(key), f"op '{op}' has no attribute '{key}'",
                               _did_you_mean(key, known) or
                               (f"its attributes: {', '.join(sorted(declared))}"
                                if declared else f"'{op}' takes no attributes"))
                    continue
                value = self.read_attr(op, key, declared[key], node[key])
                if value is not _Invalid:
                    step.attrs[key] = value
            if "name" in node:
                if layer is None:
                    self.error(node.key_loc("name"), f"'name' scopes parameters; op '{op}' has "
                               "none")
                else:
                    name = self.value(node["name"])
                    if isinstance(name, str) and self.check_value_name(name, node["name"].loc):
                        if _model_attribute(name):
                            self.error(node["name"].loc, f"'{name}' cannot name a layer: the "
                                       "model has an attribute of that name",
                                       "choose another name")
                        else:
                            step.name = name
            if "from" in node:
                step.inputs = self.read_from(node["from"], scope)
        for key, attr in declared.items():
            if attr.required and key not in step.attrs and not (
                    node is not None and key in node):
                self.error(loc, f"op '{op}' needs attribute '{key}' ({attr.doc})")
        self.check_arity(op, arity, step, loc)
        self.check_sizes(op, step, loc)
        if step.layer and step.name:
            self.check_shared(step)
        for name in step.inputs:
            if name not in scope.names:
                self.error(loc, f"no value named '{name}' here" if name != PREVIOUS else
                           "no previous value ('_'): the spec has no inputs")
        scope = scope.copy()
        scope.names[PREVIOUS] = loc
        if node is not None and "to" in node:
            to = self.value(node["to"])
            if isinstance(to, str) and self.check_value_name(to, node["to"].loc):
                step.to = to
                scope.names[to] = node["to"].loc
            elif not isinstance(to, str):
                self.error(node["to"].loc, "to must be a value name")
        return step, scope

    def read_attr(self, op: str, key: str, attr: Attr, node: Any) -> Any:
        value = self.value(node)
        if value is _Invalid:
            return _Invalid
        types = attr.type if isinstance(attr.type, tuple) else (attr.type,)
        if object in types:
            return value
        ok = False
        if value is None:
            ok = type(None) in types
        elif isinstance(value, bool):
            ok = bool in types
        elif isinstance(value, int):
            ok = int in types or float in types
            if ok and int not in types:
                value = float(value)
        elif isinstance(value, float):
            ok = float in types
        elif isinstance(value, str):
            ok = str in types
        elif isinstance(value, list):
            ok = list in types or tuple in types
        if not ok:
            self.error(node.loc, f"attribute '{key}' of '{op}' must be "
                       f"{_describe_types(types)}, got {_show(node)}", _trap(node))
            return _Invalid
        if attr.choices is not None and value not in attr.choices:
            self.error(node.loc, f"attribute '{key}' of '{op}' must be one of "
                       f"{', '.join(map(str, attr.choices))}, got {_show(node)}",
                       _did_you_mean(str(value), map(str, attr.choices)))
            return _Invalid
        if isinstance(value, int | float) and not isinstance(value, bool):
            if attr.low is not None and value < attr.low:
                self.error(node.loc, f"attribute '{key}' of '{op}' must be at least "
                           f"{attr.low}, got {value}")
                return _Invalid
            if attr.high is not None and value > attr.high:
                self.error(node.loc, f"attribute '{key}' of '{op}' must be at most "
                           f"{attr.high}, got {value}")
                return _Invalid
        return value

    def read_from(self, node: Any, scope: _Scope) -> tuple[str, ...]:
        value = self.value(node)
        items = _items(node, value)
        names = value if isinstance(value, list) else [value]
        out = []
        for item, name in zip(items, names, strict=False):
            if not isinstance(name, str):
                self.error(item.loc, f"from names values, got {_show(item)}")
                continue
            if name not in scope.names:
                self.error(item.loc, f"no value named '{name}' here",
                           _did_you_mean(name, [n for n in scope.names if n != PREVIOUS]))
                continue
            out.append(name)
        if not out and not names:
            self.error(node.loc, "from needs at least one value name")
        return tuple(out) if out else (PREVIOUS,)

    def check_arity(self, op: str, arity: int | None, step: OpStep, loc: Loc) -> None:
        n = len(step.inputs)
        if arity is not None and n != arity:
            self.error(loc, f"op '{op}' takes {arity} input{'s' * (arity != 1)}, got {n}"
                       + ("" if n > 1 else " (name them with from: [a, b])"))

    def check_sizes(self, op: str, step: OpStep, loc: Loc) -> None:
        """Refuse a layer whose known sizes, or an op whose ``shape``, exceed the size limit."""
        sizes = [v for k, v in step.attrs.items() if step.layer and k.endswith("size")
                 and isinstance(v, int) and not isinstance(v, bool)]
        if sizes and math.prod(sizes) > self.max_elements:
            self.error(loc, f"layer '{op}' would have a parameter of {math.prod(sizes):,} "
                       f"elements, over the limit of {self.max_elements:,}")
        shape = step.attrs.get("shape")
        if (isinstance(shape, list) and all(type(n) is int for n in shape)
                and math.prod(abs(n) for n in shape) > self.max_elements):
            self.error(loc, f"op '{op}' would make {math.prod(abs(n) for n in shape):,} "
                       f"elements (shape {shape}), over the limit of {self.max_elements:,}")

    def check_shared(self, step: OpStep) -> None:
        first = self.layer_steps.get(step.name)
        if first is None:
            self.layer_steps[step.name] = step
        elif first.op != step.op or first.attrs != step.attrs:
            self.error(step.loc, f"layer '{step.name}' is shared with the step at line "
                       f"{first.loc.line}, so it must be the same op with the same "
                       "attributes")

    def read_predicate(self, node: Any, scope: _Scope, what: str):
        raw = node.value if isinstance(node, LScalar) else None
        if isinstance(raw, bool):
            raw = "true" if raw else "false"
        elif isinstance(raw, int | float):
            raw = repr(raw)
        if not isinstance(raw, str):
            self.error(node.loc, f"{what} must be a predicate such as 'mean(x) > 0'")
            return None, node.loc
        line, start = node.loc.line, node.loc.col + (
            1 if isinstance(node, LScalar) and node.style == "quoted" else 0)
        if isinstance(node, LScalar) and node.style == "block" and node.loc.source is not None:
            # `if: >` / `if: |`: the text starts on the next line, after its indentation
            line += 1
            text = node.loc.source.line(line) or ""
            start = len(text) - len(text.lstrip()) + 1
        ploc = Loc(node.loc.file, line, start, max(len(raw), 1), node.loc.source)
        try:
            predicate = pred.parse_predicate(raw)
        except pred.PredicateError as e:
            self.errors.append(pred.to_spec_error(e, ploc.file, ploc.line, ploc.col,
                                                  _line(ploc)))
            return None, ploc
        live = []
        for ref in predicate.name_refs():
            at = Loc(ploc.file, ploc.line, ploc.col + ref.column - 1, ref.length, ploc.source)
            name = ref.name
            if name.startswith("params."):
                if name[len("params."):] not in self.params:
                    self.error(at, f"unknown parameter '{name}'",
                               _did_you_mean(name[7:], self.params))
            elif name.startswith("loop."):
                if not scope.loops:
                    self.error(at, f"'{name}' is only defined inside repeat, while and "
                               "for_each bodies")
                elif name == "loop.t" and "for_each" not in scope.loops:
                    self.error(at, "'loop.t' is only defined inside a for_each body")
            else:
                live.append((name, at))
                if name not in scope.names:
                    self.error(at, f"no value named '{name}' here",
                               _did_you_mean(name, [n for n in scope.names if n != PREVIOUS]))
        if self.kind == "static" and live:
            self.error(live[0][1], f"a static spec cannot branch on live data ('{live[0][0]}');"
                       " branch on params, or make the spec kind: dynamic")
        return predicate, ploc

    def read_if(self, node: LMap, scope: _Scope):
        self.check_keys(node, "if", ("if", "then", "else"))
        predicate, ploc = self.read_predicate(node["if"], scope, "if")
        if "then" not in node:
            self.error(node.loc, "if needs 'then' (a list of steps)")
        then, then_scope = (self.read_steps(node["then"], scope.copy(), "then")
                            if "then" in node else ([], scope))
        otherwise, else_scope = (self.read_steps(node["else"], scope.copy(), "else")
                                 if "else" in node else ([], scope.copy()))
        after = _Scope({n: loc for n, loc in then_scope.names.items()
                        if n in else_scope.names}, scope.loops)
        if predicate is None:
            return None, after
        step = IfStep(predicate, node.loc, ploc, then, otherwise)
        if predicate.uses_only("params") and not self.errors_in(ploc):
            try:
                step.resolved = predicate.evaluate_bool(
                    {f"params.{k}": v for k, v in self.params.items()})
            except pred.PredicateError as e:
                self.errors.append(pred.to_spec_error(e, ploc.file, ploc.line, ploc.col,
                                                      _line(ploc)))
        return step, after

    def read_repeat(self, node: LMap, scope: _Scope):
        self.check_keys(node, "repeat", ("repeat", "body", "unroll"))
        count = self.read_int(node["repeat"], "repeat", 1, low=0)
        if count > MAX_REPEAT:
            self.error(node["repeat"].loc, f"repeat {count:,} is over the limit of "
                       f"{MAX_REPEAT:,} trips")
            count = 1
        unroll = self.read_bool(node.get("unroll"), "unroll")
        body, after = self.read_body(node, scope, "repeat")
        layers = sum(1 for s in walk_steps(body) if isinstance(s, OpStep) and s.layer)
        if unroll and layers and count * layers > MAX_UNROLLED_LAYERS:
            self.error(node.loc, f"unrolling {count:,} repeats of {layers} layers would make "
                       f"{count * layers:,} layers, over the limit of {MAX_UNROLLED_LAYERS:,}")
        if count == 0:  # the body never runs: nothing it binds is visible
            after = _Scope(scope.names, scope.loops)
        return RepeatStep(count, node.loc, body, unroll), after

    def read_while(self, node: LMap, scope: _Scope):
        self.check_keys(node, "while", ("while", "body", "max_iters", "on_limit"))
        # the predicate runs inside the loop: loop.i there is the trip about to start
        own = _Scope(scope.names, scope.loops + ("while",))
        predicate, ploc = self.read_predicate(node["while"], own, "while")
        if "max_iters" not in node:
            self.error(node.loc, "while needs 'max_iters' (an upper bound on the trip count)")
        max_iters = self.read_int(node.get("max_iters"), "max_iters", 1, low=1)
        on_limit = self.read_choice(node.get("on_limit"), "on_limit", ("stop", "error"), "stop")
        body, _ = self.read_body(node, scope, "while")
        after = _Scope(scope.names, scope.loops)  # the body may run zero times
        after.names[PREVIOUS] = node.loc
        if predicate is None:
            return None, after
        return WhileStep(predicate, node.loc, ploc, max_iters, body, on_limit), after

    def read_for_each(self, node: LMap, scope: _Scope):
        self.check_keys(node, "for_each", ("for_each", "as", "carry", "body", "collect", "to"))
        seq = self.value(node["for_each"])
        if not isinstance(seq, str) or seq not in scope.names:
            self.error(node["for_each"].loc, f"for_each needs the name of a value to iterate "
                       f"over, got {_show(node['for_each'])}",
                       _did_you_mean(str(seq), [n for n in scope.names if n != PREVIOUS]))
            seq = PREVIOUS
        item = self.value(node["as"]) if "as" in node else None
        if not isinstance(item, str) or not self.check_value_name(item, node.get("as", node).loc):
            if item is None:
                self.error(node.loc, "for_each needs 'as' (the name of each step's slice)")
            item = "item"
        inner = scope.copy()
        inner.names[item] = node.loc
        inner.names[PREVIOUS] = node.loc
        carries = self.read_carry(node.get("carry"), scope)
        for c in carries:
            inner.names[c.name] = c.loc
        body, body_scope = self.read_body(node, inner, "for_each")
        collect = self.value(node["collect"]) if "collect" in node else None
        if collect is not None and (not isinstance(collect, str)
                                    or collect not in body_scope.names):
            self.error(node["collect"].loc, f"collect names a value bound in the body, got "
                       f"{_show(node['collect'])}")
        to = self.value(node["to"]) if "to" in node else None
        after = scope.copy()
        for c in carries:
            after.names[c.name] = c.loc
        after.names[PREVIOUS] = node.loc
        if to is not None:
            if collect is None:
                self.error(node["to"].loc, "to needs collect (it names the stacked values)")
            elif isinstance(to, str) and self.check_value_name(to, node["to"].loc):
                after.names[to] = node["to"].loc
        return ForEachStep(seq, node.loc, item, body, carries, collect, to), after

    def read_carry(self, node: Any, scope: _Scope) -> list[CarrySpec]:
        if node is None:
            return []
        if not isinstance(node, LMap):
            self.error(node.loc, "carry must map names to initial values such as {zeros: [32]}")
            return []
        carries = []
        for name in node:
            if not self.check_value_name(name, node.key_loc(name)):
                continue
            init = node[name]
            if isinstance(init, LScalar) and isinstance(init.value, str):
                if init.value not in scope.names:
                    self.error(init.loc, f"no value named '{init.value}' to start carry "
                               f"'{name}' from")
                carries.append(CarrySpec(name, node.key_loc(name), "value", (), init.value))
            elif isinstance(init, LMap) and len(init) == 1 and next(iter(init)) in ("zeros",
                                                                                   "ones"):
                fill = next(iter(init))
                shape = self.read_shape(init[fill], f"carry '{name}'", allow_null_first=False)
                spec = CarrySpec(name, node.key_loc(name), fill, tuple(shape or ()))
                if shape and math.prod(shape) > self.max_elements:
                    self.error(init.loc, f"carry '{name}' would have {math.prod(shape):,} "
                               f"elements, over the limit of {self.max_elements:,}")
                carries.append(spec)
            else:
                self.error(init.loc, f"carry '{name}' starts from {{zeros: SHAPE}}, "
                           "{ones: SHAPE} or the name of a value")
        return carries

    def read_body(self, node: LMap, scope: _Scope, kind: str) -> tuple[list[Step], _Scope]:
        if "body" not in node:
            self.error(node.loc, f"{kind} needs 'body' (a list of steps)")
            return [], scope
        inner = _Scope(scope.names, scope.loops + (kind,))
        body, after = self.read_steps(node["body"], inner, "body")
        return body, _Scope(after.names, scope.loops)

    def read_bool(self, node: Any, what: str) -> bool:
        if node is None:
            return False
        value = self.value(node)
        if not isinstance(value, bool):
            self.error(node.loc, f"{what} must be true or false, got {_show(node)}")
            return False
        return value

    def check_keys(self, node: LMap, kind: str, allowed: Sequence[str]) -> None:
        for key in node:
            if key not in allowed:
                self.error(node.key_loc(key), f"'{key}' does not belong in a {kind} step",
                           _did_you_mean(key, allowed))

    def errors_in(self, loc: Loc) -> bool:
        return any(e.line == loc.line and e.file == loc.file for e in self.errors)

    # --- outputs and names ------------------------------------------------------------------
    def read_outputs(self, node: Any, scope: _Scope) -> list[str]:
        if node is None:
            return [PREVIOUS]
        value = self.value(node)
        items = _items(node, value)
        names = value if isinstance(value, list) else [value]
        out = []
        for item, name in zip(items, names, strict=False):
            if not isinstance(name, str) or name not in scope.names:
                self.error(item.loc, f"outputs: no value named {_show(item)} at the end of the "
                           "graph", _did_you_mean(str(name), [n for n in scope.names
                                                              if n != PREVIOUS]))
            else:
                out.append(name)
        return out

    def name_layers(self, steps: list[Step]) -> None:
        """Give every unnamed layer a stable scope name: ``<op>_<k>`` in file order."""
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


_INPUT_KEYS = {
    "random": ("shape", "low", "high", "mean", "std", "dtype", "lengths"),
    "zeros": ("dtype", "lengths"),
    "ones": ("dtype", "lengths"),
    "file": ("key", "delimiter", "skip_header", "dtype", "shape"),
    "stdin": ("dtype", "shape"),
}


class _InvalidType:
    """Marks a value that was already reported as an error."""

    def __repr__(self) -> str:
        return "<invalid>"


_Invalid = _InvalidType()


def _model_attribute(name: str) -> bool:
    """Whether a layer scope ``name`` would clash with an attribute of the model (each scope
    becomes an attribute of ``SpecModel``: ``name: layer`` would replace its method)."""
    from graphcore.spec.interpreter import SpecModel  # lazily: the interpreter is above us

    return hasattr(SpecModel, name) or name in ("spec", "name")


def _items(node: Any, value: Any) -> list:
    """The located items behind ``value``: a list written out, or one ``$params.NAME`` scalar
    standing for a whole list (each item then points at that scalar)."""
    if isinstance(node, LSeq):
        return list(node)
    return [node] * len(value) if isinstance(value, list) else [node]


def _did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    import difflib

    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def _show(node: Any) -> str:
    if isinstance(node, LScalar):
        return repr(node.value) if isinstance(node.value, str) else str(node.raw or node.value)
    if isinstance(node, LSeq):
        return "a list"
    if isinstance(node, LMap):
        return "a mapping"
    return repr(node)


def _trap(node: Any) -> str | None:
    return node.trap if isinstance(node, LScalar) else None


def _line(loc: Loc) -> str | None:
    return loc.source.line(loc.line) if loc.source is not None else None


def _describe_types(types: tuple[type, ...]) -> str:
    names = {int: "an integer", float: "a number", bool: "true or false", str: "text",
             list: "a list", tuple: "a list", type(None): "null"}
    words = []
    for t in types:
        word = names.get(t, t.__name__)
        if word not in words:
            words.append(word)
    if "an integer" in words and "a number" in words:
        words.remove("an integer")
    return " or ".join(words)
