"""Export a spec (with its model's parameters) to ONNX: the library side of `graphtool
export`. Predicates on params are resolved when the spec is traced; predicates on live values
and sequence inputs are refused with their position (not yet mapped to ONNX If/Loop)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from graphcore.config import using_config
from graphcore.function_node import _creation_log
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

    def traced_at(values: dict):
        where: dict[int, str] = {}
        by_node: dict[int, str] = {}

        def hook(predicate, loc, scope, outcome) -> None:
            live = [r.name for r in predicate.name_refs()
                    if isinstance(scope[r.name], Variable)]
            if live:
                raise ExportError(f"{loc}: '{predicate}' reads live values "
                                  f"({', '.join(live)}); exporting it as ONNX If/Loop is not "
                                  "implemented")

        class Run(interpreter._Run):
            def op(self, step, suffix):
                created = _creation_log[-1]
                start = len(created)
                result = super().op(step, suffix)
                for fnode in created[start:]:
                    by_node.setdefault(id(fnode), str(step.loc))
                return result

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
                traced = trace(None, values, params, name=spec.name, grads=False, call=call)
        finally:
            interpreter.PREDICATE_HOOKS.remove(hook)
        for node_id, fnode in traced.instances.items():
            if id(fnode) in by_node:
                where[node_id] = by_node[id(fnode)]
        return traced, where

    return to_model(traced_at, {k: np.asarray(v) for k, v in inputs.items()}, name=spec.name,
                    opset=opset, metadata={"spec": spec.name})
