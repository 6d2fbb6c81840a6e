"""Checks of the arguments of ``graphcore.compile`` / ``@static_graph`` and of a compiled call.

Each raises ``ArgumentTypeError``/``ArgumentValueError`` naming the API. A compiled call's
inputs are checked when a plan is traced (a cache miss), never on replay.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphcore.errors import ArgumentTypeError, ArgumentValueError
from graphcore.links.link import Link


def check_compile_arguments(api: str, target: Any, params: Any, passes: Any, cache_size: Any,
                            name: Any) -> None:
    if api == "compile" and not callable(target):
        raise ArgumentTypeError(f"compile: target must be a Chain or a function, got "
                                f"{type(target).__name__}")
    if api == "static_graph" and target is not None and not callable(target):
        raise ArgumentTypeError(f"static_graph decorates a method, got {type(target).__name__}")
    if params is not None and not isinstance(params, Link | dict):
        raise ArgumentTypeError(f"{api}: params must be a Link or a dict of Parameters, got "
                                f"{type(params).__name__}")
    if passes is not None and (not isinstance(passes, list | tuple) or not all(
            isinstance(p, str) for p in passes)):
        raise ArgumentTypeError(f"{api}: passes must be a list of pass names (e.g. "
                                f"['-fuse_linear']), got {passes!r}"[:200])
    if isinstance(cache_size, bool) or not isinstance(cache_size, int):
        raise ArgumentTypeError(f"{api}: cache_size must be an int, got "
                                f"{type(cache_size).__name__}")
    if cache_size < 1:
        raise ArgumentValueError(f"{api}: cache_size must be at least 1, got {cache_size}")
    if name is not None and not isinstance(name, str):
        raise ArgumentTypeError(f"{api}: name must be a str, got {type(name).__name__}")


def check_call_inputs(name: str, inputs: dict[str, np.ndarray]) -> None:
    """A compiled function's inputs (``x0``, ``x1``, ... and keywords) hold numbers."""
    for key, a in inputs.items():
        if a.dtype.kind not in "biuf":
            where = f"argument {key[1:]}" if key[1:].isdigit() else f"argument {key!r}"
            raise ArgumentTypeError(f"{name} (compiled): {where} must be a numeric array or "
                                    f"Variable, got dtype {a.dtype}")
