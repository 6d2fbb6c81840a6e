"""Export a spec (with its model's parameters) to ONNX: the library side of `graphtool
export`. Predicates on params are resolved when the spec is traced; one live ``if`` per run
becomes an ONNX If (``control``); a live ``while``, a live predicate evaluated more than once
per run and sequence inputs are refused with their position (ONNX Loop is not mapped yet)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from graphcore.config import using_config
from graphcore.function_node import _creation_log
from graphcore.onnx.control import if_model
from graphcore.onnx.errors import ExportError
from graphcore.onnx.export import to_model
from graphcore.spec import interpreter
from graphcore.spec.interpreter import SpecModel
from graphcore.spec.model import Spec
from graphcore.static.trace import trace
from graphcore.variable import Variable


def export_spec(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], *,
                opset: int | None = None, seed: int | None = None):
    """The ``onnx.ModelProto`` of ``spec``'s outputs (its loss is left out).

    Traced under the random state ``run_spec`` uses for ``seed`` (default: the spec's), so
    lazily created weights are the ones ``graphtool run`` makes."""
    seed = spec.seed if seed is None else seed
    for name, value in inputs.items():
        if isinstance(value, list):
            loc = spec.inputs[name].loc
            raise ExportError(f"{loc}: input '{name}' is a list of sequences (for_each); "
                              "exporting it as an ONNX Loop is not implemented")
    params = {n.lstrip("/"): p for n, p in model.namedparams()}
    forward_only = replace(spec, loss=None)  # the loss is training's, not the model's

    def traced_at(values: dict, force: bool | None = None, live: list | None = None):
        """Trace one run; ``force`` decides the live ``if`` predicate (the one allowed);
        ``live`` collects the live predicate evaluations (guard records)."""
        where: dict[int, str] = {}
        by_node: dict[int, str] = {}
        records: list = [] if live is None else live

        def hook(predicate, loc, scope, outcome) -> None:
            names = [r.name for r in predicate.name_refs()
                     if isinstance(scope[r.name], Variable)]
            if not names:
                return
            if live is None:
                raise ExportError(f"{loc}: '{predicate}' reads live values "
                                  f"({', '.join(names)}); it is exported as ONNX If only in "
                                  "an `if` evaluated once per run")
            records.append({"predicate": predicate, "expect": outcome, "at": str(loc),
                            "values": {r.name: scope[r.name] for r in predicate.name_refs()}})

        class Run(interpreter._Run):
            def op(self, step, suffix):
                created = _creation_log[-1]
                start = len(created)
                result = super().op(step, suffix)
                for fnode in created[start:]:
                    by_node.setdefault(id(fnode), str(step.loc))
                return result

            def while_(self, step, suffix):
                before = len(records)
                super().while_(step, suffix)
                if len(records) > before:
                    raise ExportError(f"{step.loc}: a `while` on live values "
                                      f"('{step.predicate}'); exporting it as ONNX Loop is not "
                                      "implemented")

            def predicate(self, predicate, loc):
                before = len(records)
                outcome = super().predicate(predicate, loc)
                if len(records) > before and force is not None:
                    return force
                return outcome

        def call(variables):
            outputs, _ = Run(forward_only, model, dict(variables), []).forward()
            result = {}
            for name, value in outputs.items():
                if isinstance(value, tuple):
                    raise ExportError(f"output '{name}' holds several arrays; ONNX outputs "
                                      "are single arrays")
                result[name] = value if isinstance(value, Variable) else \
                    Variable(np.asarray(value), requires_grad=False)
            return result

        interpreter.PREDICATE_HOOKS.append(hook)
        try:
            with using_config("train", False), interpreter.seeded(seed + 1):
                traced = trace(None, values, params, name=spec.name, grads=False, call=call,
                               guards=lambda: records)
        finally:
            interpreter.PREDICATE_HOOKS.remove(hook)
        for node_id, fnode in traced.instances.items():
            if id(fnode) in by_node:
                where[node_id] = by_node[id(fnode)]
        return traced, where

    arrays = {k: np.asarray(v) for k, v in inputs.items()}
    live: list = []
    traced_at(arrays, live=live)
    if live:
        return if_model(spec, traced_at, arrays, opset)
    return to_model(traced_at, arrays, name=spec.name, opset=opset, metadata={"spec": spec.name})
