"""Validating a spec's steps: ops and layers, attributes, names in scope, control flow and
predicates (a mixin of the spec loader)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from graphcore.function_node import Attr
from graphcore.language.layers import LAYERS
from graphcore.language.syntax import PREVIOUS, OpStep, Step
from graphcore.language.validate_control import ControlFlowReader
from graphcore.language.validation import (
    INVALID,
    NAME_PATTERN,
    PART_PATTERN,
    RESERVED,
    STEP_KINDS,
    Scope,
    boolean_word_hint,
    describe_types,
    did_you_mean,
    items_of,
    model_attribute,
)
from graphcore.language.yaml_source import LMap, Loc, LScalar, LSeq
from graphcore.registry import all_ops


class StepsReader(ControlFlowReader):
    """``read_steps`` and everything a step can hold; needs the loader's small readers."""

    def check_value_name(self, name: str, loc: Loc) -> bool:
        if name in RESERVED or not NAME_PATTERN.match(name):
            self.error(loc, f"'{name}' cannot name a value: use a letter followed by letters, "
                       "digits or '_' (and not params, loop, true, false, and, or, not)")
            return False
        return True

    def read_steps(self, node: Any, scope: Scope, where: str) -> tuple[list[Step], Scope]:
        if not isinstance(node, LSeq):
            self.error(node.loc, f"{where} must be a list of steps", _not_a_list_hint(node))
            return [], scope
        if len(node) == 0:
            self.error(node.loc, f"{where} has no steps")
        steps = []
        for item in node:
            step, scope = self.read_step(item, scope)
            if step is not None:
                steps.append(step)
        return steps, scope

    def read_step(self, node: Any, scope: Scope) -> tuple[Step | None, Scope]:
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
                hint = _no_kind_hint(node)
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

    def read_op_mapping(self, node: Any, scope: Scope, where: str):
        if isinstance(node, LScalar) and isinstance(node.value, str):
            return self.read_op(node.value, node.loc, None, scope)
        if not isinstance(node, LMap) or "op" not in node:
            self.error(node.loc, f"{where} must be a mapping with 'op'")
            return None, scope
        op = self.value(node["op"])
        if not isinstance(op, str):
            self.error(node["op"].loc, f"op must be an op name, got {self.show(node['op'])}")
            return None, scope
        return self.read_op(op, node["op"].loc, node, scope)

    def read_op(self, op: str, op_loc: Loc, node: LMap | None, scope: Scope):
        loc = node.loc if node is not None else op_loc
        layer = LAYERS.get(op)
        op_class = all_ops().get(op) if layer is None else None
        if layer is None and op_class is None:
            self.error(op_loc, f"unknown op '{op}'",
                       did_you_mean(op, list(LAYERS) + list(all_ops())))
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
                               did_you_mean(key, known) or
                               (f"its attributes: {', '.join(sorted(declared))}"
                                if declared else f"'{op}' takes no attributes"))
                    continue
                value = self.read_attr(op, key, declared[key], node[key])
                if value is not INVALID:
                    step.attrs[key] = value
            if "name" in node:
                if layer is None:
                    self.error(node.key_loc("name"), f"'name' scopes parameters; op '{op}' has "
                               "none")
                else:
                    name = self.value(node["name"])
                    if isinstance(name, str) and self.check_value_name(name, node["name"].loc):
                        if model_attribute(name):
                            self.error(node["name"].loc, f"'{name}' cannot name a layer: the "
                                       "model has an attribute of that name",
                                       "choose another name")
                        else:
                            step.name = name
            if "from" in node:
                step.inputs, step.parts = self.read_from(node["from"], scope)
        for key, attr in declared.items():
            if attr.required and key not in step.attrs and not (
                    node is not None and key in node):
                self.error(loc, f"op '{op}' needs attribute '{key}' ({attr.doc})")
        self.check_arity(op, arity, step, loc, bare=node is None)
        self.check_sizes(op, step, loc)
        if step.layer and step.name:
            self.check_shared(step)
        for name in step.inputs:
            if name not in scope.names:
                if name == PREVIOUS:
                    self.error(loc, "no previous value ('_'): the spec has no inputs")
                else:
                    self.error(loc, f"no value named '{name}' here", scope.missing_hint(name))
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
        if value is INVALID:
            return INVALID
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
                       f"{describe_types(types)}, got {self.show(node)}",
                       boolean_word_hint(node) if bool in types else None)
            return INVALID
        if attr.items is int and isinstance(value, list) and not all(
                type(v) is int for v in value):
            self.error(node.loc, f"attribute '{key}' of '{op}' must be a list of integers, "
                       f"got {value}")
            return INVALID
        if attr.check is not None:
            try:
                attr.check(value)
            except (TypeError, ValueError) as e:
                self.error(node.loc, f"attribute '{key}' of '{op}' {e}")
                return INVALID
        if attr.choices is not None and value not in attr.choices:
            self.error(node.loc, f"attribute '{key}' of '{op}' must be one of "
                       f"{', '.join(map(str, attr.choices))}, got {self.show(node)}",
                       did_you_mean(str(value), map(str, attr.choices)))
            return INVALID
        if isinstance(value, float) and not math.isfinite(value) and (
                math.isnan(value) or attr.low is not None or attr.high is not None):
            # NaN passes every comparison below, so it is refused by name; so is an infinity
            # where the attribute has a range (a finite quantity such as a ratio or an epsilon)
            ranged = attr.low is not None or attr.high is not None
            self.error(node.loc, f"attribute '{key}' of '{op}' must be a "
                       f"{'finite number' + _range_words(attr) if ranged else 'number, not NaN'}"
                       f", got {self.show(node)}")
            return INVALID
        if isinstance(value, list) and (attr.low is not None or attr.high is not None):
            # a size per axis (ksize: [5, 3]): each element obeys the attribute's range
            for element in value:
                if not isinstance(element, int | float) or isinstance(element, bool):
                    self.error(node.loc, f"attribute '{key}' of '{op}' must hold numbers, got "
                               f"{self.show(node)}")
                    return INVALID
                if (attr.low is not None and element < attr.low) or (
                        attr.high is not None and element > attr.high):
                    bound = (f"at least {attr.low}" if attr.low is not None
                             and element < attr.low else f"at most {attr.high}")
                    self.error(node.loc, f"each element of attribute '{key}' of '{op}' must "
                               f"be {bound}, got {element}")
                    return INVALID
        if isinstance(value, int | float) and not isinstance(value, bool):
            if attr.low is not None and value < attr.low:
                self.error(node.loc, f"attribute '{key}' of '{op}' must be at least "
                           f"{attr.low}, got {value}")
                return INVALID
            if attr.high is not None and value > attr.high:
                self.error(node.loc, f"attribute '{key}' of '{op}' must be at most "
                           f"{attr.high}, got {value}")
                return INVALID
        return value

    def read_from(self, node: Any, scope: Scope) -> tuple[tuple[str, ...],
                                                          tuple[int | None, ...]]:
        """The names a step reads and, for ``name[i]`` items, the part each one takes."""
        value = self.value(node)
        items = items_of(node, value)
        names = value if isinstance(value, list) else [value]
        out, parts = [], []
        for item, name in zip(items, names, strict=False):
            if not isinstance(name, str):
                self.error(item.loc, f"from names values, got {self.show(item)}")
                continue
            part = None
            indexed = PART_PATTERN.match(name)
            if indexed:
                name, part = indexed.group(1), int(indexed.group(2))
            elif "[" in name or "]" in name:
                self.error(item.loc, f"'{name}' is not a value name or a part of one",
                           "take one part of a value of several arrays with name[index], "
                           "e.g. parts[1]")
                continue
            if name not in scope.names:
                self.error(item.loc, f"no value named '{name}' here",
                           scope.missing_hint(name))
                continue
            out.append(name)
            parts.append(part)
        if not out and not names:
            self.error(node.loc, "from needs at least one value name")
        if not out:
            return (PREVIOUS,), ()
        return tuple(out), (tuple(parts) if any(p is not None for p in parts) else ())

    def check_arity(self, op: str, arity: int | None, step: OpStep, loc: Loc,
                    bare: bool = False) -> None:
        n = len(step.inputs)
        if arity is not None and n != arity:
            named = ", ".join("ab"[i] if i < 2 else f"v{i}" for i in range(arity))
            hint = None
            if bare and n < arity:  # `- add` / `loss: softmax_cross_entropy`: no from: yet
                hint = f"write it as a mapping to name them: {{op: {op}, from: [{named}]}}"
            self.error(loc, f"op '{op}' takes {arity} input{'s' * (arity != 1)}, got {n}"
                       + ("" if n > 1 or hint else " (name them with from: [a, b])"), hint)

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

    def read_bool(self, node: Any, what: str) -> bool:
        if node is None:
            return False
        value = self.value(node)
        if not isinstance(value, bool):
            self.error(node.loc, f"{what} must be true or false, got {self.show(node)}",
                       boolean_word_hint(node))
            return False
        return value

    def check_keys(self, node: LMap, kind: str, allowed: Sequence[str]) -> None:
        for key in node:
            if key not in allowed:
                self.error(node.key_loc(key), f"'{key}' does not belong in a {kind} step",
                           did_you_mean(key, allowed))

    def errors_in(self, loc: Loc) -> bool:
        return any(e.line == loc.line and e.file == loc.file for e in self.errors)


def _range_words(attr: Attr) -> str:
    if attr.low is not None and attr.high is not None:
        return f" from {attr.low} to {attr.high}"
    if attr.low is not None:
        return f" of at least {attr.low}"
    if attr.high is not None:
        return f" of at most {attr.high}"
    return ""


def _not_a_list_hint(node: Any) -> str | None:
    """Why a value that should be a list of steps is not one, when the text shows it."""
    if isinstance(node, LMap):
        return "write each step on its own line, starting with '- ': '- relu' or '- {op: " \
               "linear, out_size: 4}'"
    if isinstance(node, LScalar) and isinstance(node.value, str) \
            and node.value.startswith("-") and not node.value.startswith("- "):
        return "a list item needs a space after '-': '- " + node.value[1:].split()[0] + "'"
    return None


def _no_kind_hint(node: LMap) -> str | None:
    """Why a step mapping names no kind: a key written without its space (``{op:relu}``), an
    op name used as the key (``- linear: {out_size: 3}``), or a misspelt kind."""
    for key in node:
        if node.key_trap(key) is not None:
            return node.key_trap(key)
    for key in node:
        if key in LAYERS or key in all_ops():
            return (f"write the op's name under op: and its attributes beside it: "
                    f"{{op: {key}, ...}}")
    return next((did_you_mean(k, STEP_KINDS) for k in node if did_you_mean(k, STEP_KINDS)),
                None)
