"""Checks of the arguments of the spec API (``run``, ``build_model``, ``run_spec``, ...);
``check_model`` sits beside ``SpecModel`` (``parameters``), ``check_load_options`` beside the
loader.

Each raises ``ArgumentTypeError``/``ArgumentValueError`` naming the function and the argument,
so a wrong call fails where it is made rather than as an ``AttributeError`` deep inside.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

import numpy as np

from graphcore.errors import ArgumentTypeError, ArgumentValueError
from graphcore.language.syntax import Spec
from graphcore.variable import Variable


def check_spec(api: str, spec: Any) -> None:
    if not isinstance(spec, Spec):
        raise ArgumentTypeError(f"{api}: spec must be a loaded Spec (from load_spec_file or "
                                f"load_spec_text), got {type(spec).__name__}")


def check_seed(api: str, seed: Any) -> None:
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
        raise ArgumentTypeError(f"{api}: seed must be an int or None, got {type(seed).__name__}")


_DTYPE = operator.attrgetter("dtype")


def plain_inputs(spec: Spec, inputs: Any) -> bool:
    """``inputs`` is a dict of exactly the spec's inputs, each a numeric array: the common
    call, which ``check_inputs`` passes, told in one pass (on a small spec the three argument
    checks cost as much as an op)."""
    if type(inputs) is not dict or len(inputs) != len(spec.inputs):
        return False
    declared = spec.inputs
    for name, value in inputs.items():
        if name not in declared or type(value) is not np.ndarray \
                or value.dtype.kind not in "biuf":
            return False
    return True


def check_inputs(api: str, spec: Spec, inputs: Any) -> None:
    """``inputs`` maps exactly the spec's inputs to numeric arrays (lists of them, one per
    example, for sequence inputs)."""
    if plain_inputs(spec, inputs):
        return  # the common case
    if not isinstance(inputs, Mapping):
        raise ArgumentTypeError(f"{api}: inputs must map input names to arrays, got "
                                f"{type(inputs).__name__}")
    for name in spec.inputs:
        if name not in inputs:
            raise ArgumentValueError(f"{api}: inputs lacks the spec's input '{name}'")
    for name, value in inputs.items():
        declared = spec.inputs.get(name)
        if declared is None:
            raise ArgumentValueError(f"{api}: inputs has '{name}', which the spec does not "
                                     f"declare (its inputs: {', '.join(spec.inputs)})")
        examples = value if declared.sequence and isinstance(value, list) else [value]
        if set(map(type, examples)) == {np.ndarray} and all(
                dtype.kind in "biuf" for dtype in set(map(_DTYPE, examples))):
            continue  # the common case, without a Python loop over many examples
        for v in examples:
            if not isinstance(v, np.ndarray | Variable):
                raise ArgumentTypeError(
                    f"{api}: input '{name}' must be a numpy array"
                    + (" or a list of arrays (one per example)" if declared.sequence else "")
                    + f", got {type(v).__name__}")
            if v.dtype.kind not in "biuf":
                raise ArgumentTypeError(f"{api}: input '{name}' must hold numbers, got dtype "
                                        f"{v.dtype}")
