"""Validating control-flow steps (if, repeat, while, for_each) and their predicates (a mixin
of the spec loader; the step readers it calls live in ``validate_steps``)."""

from __future__ import annotations

import math
from typing import Any

from graphcore.language import predicate as pred
from graphcore.language.syntax import (
    PREVIOUS,
    CarrySpec,
    ForEachStep,
    IfStep,
    RepeatStep,
    Step,
    WhileStep,
)
from graphcore.language.validation import MAX_TRIPS, Scope, did_you_mean, source_line
from graphcore.language.yaml_source import LMap, Loc, LScalar


class ControlFlowReader:
    """``read_if``/``read_repeat``/``read_while``/``read_for_each`` and predicate checks."""

    def read_predicate(self, node: Any, scope: Scope, what: str):
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
                                                  source_line(ploc)))
            return None, ploc
        live = []
        for ref in predicate.name_refs():
            at = Loc(ploc.file, ploc.line, ploc.col + ref.column - 1, ref.length, ploc.source)
            name = ref.name
            if name.startswith("params."):
                if name[len("params."):] not in self.params:
                    self.error(at, f"unknown parameter '{name}'",
                               did_you_mean(name[7:], self.params))
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
                               scope.missing_hint(name))
        if self.kind == "static" and live:
            self.error(live[0][1], f"a static spec cannot branch on live data ('{live[0][0]}');"
                       " branch on params, or make the spec kind: dynamic")
        return predicate, ploc

    def read_if(self, node: LMap, scope: Scope):
        self.check_keys(node, "if", ("if", "then", "else"))
        predicate, ploc = self.read_predicate(node["if"], scope, "if")
        if "then" not in node:
            self.error(node.loc, "if needs 'then' (a list of steps)")
        then, then_scope = (self.read_steps(node["then"], scope.copy(), "then")
                            if "then" in node else ([], scope))
        otherwise, else_scope = (self.read_steps(node["else"], scope.copy(), "else")
                                 if "else" in node else ([], scope.copy()))
        after = Scope({n: loc for n, loc in then_scope.names.items()
                        if n in else_scope.names}, scope.loops)
        after.partial = {**then_scope.partial, **else_scope.partial}
        for name in set(then_scope.names) ^ set(else_scope.names):
            if name != PREVIOUS:
                after.partial[name] = node.loc.line
        if predicate is None:
            return None, after
        step = IfStep(predicate, node.loc, ploc, then, otherwise)
        if predicate.uses_only("params") and not self.errors_in(ploc):
            try:
                step.resolved = predicate.evaluate_bool(
                    {f"params.{k}": v for k, v in self.params.items()})
            except pred.PredicateError as e:
                self.errors.append(pred.to_spec_error(e, ploc.file, ploc.line, ploc.col,
                                                      source_line(ploc)))
        return step, after

    def read_repeat(self, node: LMap, scope: Scope):
        self.check_keys(node, "repeat", ("repeat", "body", "unroll"))
        count = self.read_int(node["repeat"], "repeat", 1, low=0)
        if count > MAX_TRIPS:
            self.error(node["repeat"].loc, f"repeat {count:,} is over the limit of "
                       f"{MAX_TRIPS:,} trips")
            count = 1
        unroll = self.read_bool(node.get("unroll"), "unroll")
        body, after = self.read_body(node, scope, "repeat")
        # the layer scopes it unrolls, and the work of nested loops: validate_work
        if count == 0:  # the body never runs: nothing it binds is visible
            after = Scope(scope.names, scope.loops)
        return RepeatStep(count, node.loc, body, unroll), after

    def read_while(self, node: LMap, scope: Scope):
        self.check_keys(node, "while", ("while", "body", "max_iters", "on_limit"))
        # the predicate runs inside the loop: loop.i there is the trip about to start
        own = Scope(scope.names, scope.loops + ("while",))
        predicate, ploc = self.read_predicate(node["while"], own, "while")
        if "max_iters" not in node:
            self.error(node.loc, "while needs 'max_iters' (an upper bound on the trip count)")
        max_iters = self.read_int(node.get("max_iters"), "max_iters", 1, low=1)
        if max_iters > MAX_TRIPS:
            self.error(node["max_iters"].loc, f"max_iters {max_iters:,} is over the limit of "
                       f"{MAX_TRIPS:,} trips")
            max_iters = 1
        on_limit = self.read_choice(node.get("on_limit"), "on_limit", ("stop", "error"), "stop")
        body, _ = self.read_body(node, scope, "while")
        after = Scope(scope.names, scope.loops)  # the body may run zero times
        after.names[PREVIOUS] = node.loc
        if predicate is None:
            return None, after
        return WhileStep(predicate, node.loc, ploc, max_iters, body, on_limit), after

    def read_for_each(self, node: LMap, scope: Scope):
        self.check_keys(node, "for_each", ("for_each", "as", "carry", "body", "collect", "to"))
        seq = self.value(node["for_each"])
        if not isinstance(seq, str) or seq not in scope.names:
            self.error(node["for_each"].loc, f"for_each needs the name of a value to iterate "
                       f"over, got {self.show(node['for_each'])}",
                       did_you_mean(str(seq), [n for n in scope.names if n != PREVIOUS]))
            seq = PREVIOUS
        item = self.value(node["as"]) if "as" in node else None
        if not isinstance(item, str) or not self.check_value_name(item, node.get("as", node).loc):
            if item is None:
                self.error(node.loc, "for_each needs 'as' (the name of each step's slice)")
            elif not isinstance(item, str):
                self.error(node["as"].loc, f"as must be a value name, got {self.show(node['as'])}")
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
                       f"{self.show(node['collect'])}")
            collect = None
        to = self.value(node["to"]) if "to" in node else None
        after = scope.copy()
        for c in carries:
            after.names[c.name] = c.loc
        after.names[PREVIOUS] = node.loc
        if to is not None:
            if not isinstance(to, str):
                self.error(node["to"].loc, f"to must be a value name, got {self.show(node['to'])}")
                to = None
            elif "collect" not in node:
                self.error(node["to"].loc, "to needs collect (it names the stacked values)")
            elif self.check_value_name(to, node["to"].loc):
                after.names[to] = node["to"].loc
        return ForEachStep(seq, node.loc, item, body, carries, collect, to), after

    def read_carry(self, node: Any, scope: Scope) -> list[CarrySpec]:
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

    def read_body(self, node: LMap, scope: Scope, kind: str) -> tuple[list[Step], Scope]:
        if "body" not in node:
            self.error(node.loc, f"{kind} needs 'body' (a list of steps)")
            return [], scope
        inner = Scope(scope.names, scope.loops + (kind,))
        body, after = self.read_steps(node["body"], inner, "body")
        return body, Scope(after.names, scope.loops)
