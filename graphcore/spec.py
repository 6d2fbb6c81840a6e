"""YAML model specs (DESIGN section 4): load with locations, validate, build, run.

>>> from graphcore import spec
>>> s = spec.load_spec_file("specs/seed_dynamic.yaml", overrides=["params.apply_relu=false"])
>>> result, model = spec.run(s)
>>> result.loss, [p.to_dict() for p in result.path]

Layers: ``yaml_source`` (YAML -> located values) -> ``loader`` (validation, every error at
once) -> ``model`` (the ``Spec`` dataclasses) -> ``inputs`` (arrays for the inputs) ->
``interpreter`` (define-by-run execution, the path taken).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, BinaryIO

from graphcore.batching.run import run_spec
from graphcore.inputs.make import input_rng, make_inputs
from graphcore.interpreter.arguments import check_inputs, check_seed, check_spec
from graphcore.interpreter.calls import loss_function
from graphcore.interpreter.parameters import SpecModel, build_model, check_model
from graphcore.interpreter.preprocessing import prepare_inputs
from graphcore.interpreter.results import PathEntry, RunResult
from graphcore.language.layers import LAYERS
from graphcore.language.loader import DEFAULT_MAX_ELEMENTS, load_spec_file, load_spec_text
from graphcore.language.syntax import Spec

__all__ = [
    "DEFAULT_MAX_ELEMENTS", "LAYERS", "PathEntry", "RunResult", "Spec", "SpecModel",
    "build_model", "input_rng", "load_spec_file", "load_spec_text", "loss_function",
    "make_inputs", "prepare_inputs", "run", "run_spec",
]


def run(spec: Spec, *, seed: int | None = None, model: SpecModel | None = None,
        input_overrides: Mapping[str, str] | None = None, stdin: BinaryIO | None = None,
        inputs: Mapping[str, Any] | None = None, backward: bool = True,
        ) -> tuple[RunResult, SpecModel]:
    """Build the model (unless given), make the inputs (unless given) and run once.

    ``inputs`` maps every input the spec declares to a numpy array (a list of arrays for a
    sequence input, one per example); wrong arguments raise ``ArgumentTypeError`` or
    ``ArgumentValueError`` naming ``run`` and the argument.
    """
    check_spec("graphcore.spec.run", spec)
    check_seed("graphcore.spec.run", seed)
    if model is not None:
        check_model("graphcore.spec.run", model)
    if inputs is not None:
        check_inputs("graphcore.spec.run", spec, inputs)
    seed = spec.seed if seed is None else seed
    if model is None:
        model = build_model(spec, seed)
    if inputs is None:
        inputs = make_inputs(spec.inputs, seed, spec.folder, input_overrides, stdin)
    inputs = prepare_inputs(spec, model, inputs)
    return run_spec(spec, model, inputs, backward=backward, seed=seed), model

