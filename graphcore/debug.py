"""Debug mode (``using_config('debug', True)``): find the first op that makes NaN or Inf, and
remember where each op was created so errors in backward can point back at the forward code.
"""

from __future__ import annotations

import traceback

import numpy as np

from graphcore import errors


def creation_stack() -> str:
    """The user's call stack at op creation, without graphcore's own frames."""
    frames = [f for f in traceback.extract_stack()[:-1] if "/graphcore/" not in f.filename]
    return "".join(traceback.format_list(frames[-6:]))


def _non_finite(arrays) -> int | None:
    for i, a in enumerate(arrays):
        if a is not None and a.dtype.kind in "fc" and not np.isfinite(a).all():
            return i
    return None


def check_forward(node, inputs, outputs) -> None:
    i = _non_finite(outputs)
    if i is not None and _non_finite(inputs) is None:
        shapes = ", ".join(str(x.shape) for x in inputs)
        raise errors.NonFiniteError(
            f"{node.label} produced NaN or Inf in output {i} from finite inputs {shapes}\n"
            f"created at:\n{creation_stack()}")


def check_backward(node, grads) -> None:
    arrays = [g._array if hasattr(g, "_array") else g for g in grads]
    i = _non_finite(arrays)
    if i is not None:
        stack = getattr(node, "stack", None) or "(unknown)"
        raise errors.NonFiniteError(
            f"backward of {node.label} produced NaN or Inf in the gradient of input {i}\n"
            f"forward op created at:\n{stack}")
