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

import numpy as np

from graphcore.errors import ArgumentTypeError, ArgumentValueError
from graphcore.spec.inputs import input_rng, make_inputs
from graphcore.spec.interpreter import (
    PathEntry,
    RunResult,
    SpecModel,
    build_model,
    loss_function,
    run_spec,
)
from graphcore.spec.layers import LAYERS
from graphcore.spec.loader import DEFAULT_MAX_ELEMENTS, load_spec_file, load_spec_text
from graphcore.spec.model import Spec
from graphcore.variable import Variable

__all__ = [
    "DEFAULT_MAX_ELEMENTS", "LAYERS", "PathEntry", "RunResult", "Spec", "SpecModel",
    "build_model", "input_rng", "load_spec_file", "load_spec_text", "loss_function",
    "make_inputs", "run", "run_spec",
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
    _check_run_arguments(spec, seed, model, inputs)
    seed = spec.seed if seed is None else seed
    if model is None:
        model = build_model(spec, seed)
    if inputs is None:
        inputs = make_inputs(spec.inputs, seed, spec.folder, input_overrides, stdin)
    return run_spec(spec, model, inputs, backward=backward, seed=seed), model


def _check_run_arguments(spec: Any, seed: Any, model: Any, inputs: Any) -> None:
    if not isinstance(spec, Spec):
        raise ArgumentTypeError(f"graphcore.spec.run: spec must be a loaded Spec (from "
                                f"load_spec_file or load_spec_text), got {type(spec).__name__}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
        raise ArgumentTypeError(f"graphcore.spec.run: seed must be an int or None, got "
                                f"{type(seed).__name__}")
    if model is not None and not isinstance(model, SpecModel):
        raise ArgumentTypeError(f"graphcore.spec.run: model must be a SpecModel (from "
                                f"build_model) or None, got {type(model).__name__}")
    if inputs is None:
        return
    if not isinstance(inputs, Mapping):
        raise ArgumentTypeError(f"graphcore.spec.run: inputs must map input names to arrays, "
                                f"got {type(inputs).__name__}")
    for name in spec.inputs:
        if name not in inputs:
            raise ArgumentValueError(f"graphcore.spec.run: inputs lacks the spec's input "
                                     f"'{name}'")
    for name, value in inputs.items():
        declared = spec.inputs.get(name)
        if declared is None:
            raise ArgumentValueError(f"graphcore.spec.run: inputs has '{name}', which the spec "
                                     f"does not declare (its inputs: {', '.join(spec.inputs)})")
        examples = value if declared.lengths is not None and isinstance(value, list) else [value]
        for v in examples:
            if not isinstance(v, np.ndarray | Variable):
                raise ArgumentTypeError(
                    f"graphcore.spec.run: input '{name}' must be a numpy array"
                    + (" or a list of arrays (one per example)" if declared.lengths else "")
                    + f", got {type(v).__name__}")
            if v.dtype.kind not in "biuf":
                raise ArgumentTypeError(f"graphcore.spec.run: input '{name}' must hold numbers, "
                                        f"got dtype {v.dtype}")
