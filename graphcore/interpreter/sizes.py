"""What an op step is about to allocate, from its inputs' shapes, before it runs.

Most sizes are checked at load (inputs, ``shape`` attributes, layers with every size given);
a few are known only once the inputs arrive: a lazily sized ``linear``'s weight (its input
size is the input's last axis), and results larger than any input (``matmul``, ``concat`` and
``stack``, broadcasting binary ops, ``embed_id``). ``oversized`` names the first of those over
the element limit, so the interpreter refuses the step before numpy allocates anything.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def _shape(value: Any) -> tuple[int, ...] | None:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def _show(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def oversized(op: str, layer: Any, args: Sequence[Any], limit: int) -> str | None:
    """What about this step is over ``limit`` elements, as a message; None when nothing is.

    ``layer`` is the step's link (None for a registry op); ``args`` its input values.
    """
    shapes = [_shape(a) for a in args]
    if any(s is None for s in shapes):
        return None
    if op in ("concat", "stack") and layer is None:  # the inputs together, whatever the axis
        size = sum(math.prod(s) for s in shapes)
        if size > limit:
            return (f"{op}: the result would have {size:,} elements (its {len(shapes)} inputs "
                    f"together), over the limit of {limit:,}")
        return None
    for what, shape in _planned(op, layer, shapes):
        size = math.prod(shape)
        if size > limit:
            return (f"{op}: {what} would have {size:,} elements (shape {_show(shape)}), over "
                    f"the limit of {limit:,}")
    return None


def _planned(op: str, layer: Any, shapes: list[tuple[int, ...]]):
    """``(what, shape)`` of the arrays the step would allocate that can exceed its inputs."""
    if layer is not None:
        weight = getattr(layer, "W", None)
        if op == "linear" and shapes and shapes[0]:
            x = shapes[0]
            out = layer.out_size
            if weight is not None and weight.array is None:
                yield "its weight W", (out, x[-1])
            yield "the result", (*x[:-1], out)
        elif op == "embed_id" and weight is not None and weight.array is not None:
            yield "the result", (*shapes[0], weight.array.shape[-1])
        return
    if op == "matmul" and len(shapes) == 2 and all(len(s) >= 1 for s in shapes):
        a, b = shapes
        rows = a[-2:-1] if len(a) >= 2 else ()
        cols = b[-1:] if len(b) >= 2 else ()
        batch = _broadcast(a[:-2], b[:-2])
        if batch is not None:
            yield "the result", (*batch, *rows, *cols)
    elif op == "linear" and len(shapes) >= 2 and shapes[0] and shapes[1]:
        yield "the result", (*shapes[0][:-1], shapes[1][0])
    elif op == "embed_id" and len(shapes) == 2 and shapes[1]:
        yield "the result", (*shapes[0], shapes[1][-1])
    elif op == "permutate":  # x reordered: its shape, never x broadcast with the indices
        return
    elif len(shapes) >= 2:  # elementwise: the inputs broadcast against each other
        shape = _broadcast(*shapes)
        if shape is not None:
            yield "the result", shape


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:  # the op itself reports shapes that do not fit
        return None
