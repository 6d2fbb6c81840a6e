"""``F.forget(func, *xs)``: run ``func`` without keeping its graph, recompute it in backward.

Memory for time, as Chainer's ``F.forget``: the forward pass keeps only ``func``'s inputs; the
backward pass runs ``func`` again with the graph recorded and backpropagates through that,
into the inputs and into any parameter ``func`` uses (a Link's weights get their gradients
as without ``forget``). ``func`` returns a Variable or a tuple of Variables. The recomputed
forward must be the forward that ran (no randomness inside ``func``), and double backprop
through ``forget`` is refused, as in Chainer. ``Forget`` is not a registered op: it holds a
Python callable, which no spec can name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.config import config, force_backprop_mode, no_backprop_mode
from graphcore.function_node import FunctionNode
from graphcore.ops import reduction
from graphcore.variable import Variable


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _outputs(func: Callable, xs: tuple[Variable, ...]) -> tuple[Variable, ...]:
    outs = func(*xs)
    if isinstance(outs, Variable):
        return (outs,)
    if not isinstance(outs, tuple):
        raise RuntimeError(f"forget: func must return a Variable or a tuple of Variables, got "
                           f"{type(outs).__name__}")
    for i, out in enumerate(outs, start=1):
        if not isinstance(out, Variable):
            raise RuntimeError(f"forget: the {_ordinal(i)} element func returned is not a "
                               f"Variable but {type(out).__name__}")
    return outs


class Forget(FunctionNode):
    """``func``'s outputs, with its graph dropped after forward and rebuilt in backward."""

    label = "Forget"
    higher_order = False

    def __init__(self, func: Callable) -> None:
        if not callable(func):
            raise TypeError(f"forget: func must be callable, got {type(func).__name__}")
        self.func = func

    def _explain(self, arrays, cause):
        return cause  # an error inside func is the caller's, raised as func raised it

    def forward(self, inputs):
        self.retain_inputs(tuple(range(len(inputs))))
        with no_backprop_mode():
            outs = _outputs(self.func, tuple(Variable(x) for x in inputs))
        return tuple(out.array for out in outs)

    def backward(self, indexes, grad_outputs):
        if config.double_backprop:
            raise RuntimeError("double backpropagation through functions.forget is not allowed")
        again = tuple(Variable(np.array(x)) for x in self.get_retained_inputs())
        with force_backprop_mode():
            outs = _outputs(self.func, again)
            if len(outs) != len(grad_outputs):
                raise errors.GraphError(f"forget: func returned {len(outs)} outputs when "
                                        f"recomputed, {len(grad_outputs)} the first time")
            total = None
            for out, gy in zip(outs, grad_outputs, strict=True):
                if gy is None or out.creator is None:
                    continue
                term = reduction.sum(out * gy)
                total = term if total is None else total + term
        if total is not None:
            total.backward()  # into the inputs' copies and every parameter func used
        return tuple(again[i].grad for i in indexes)


def forget(func: Callable, *xs: Any) -> Any:
    """``func(*xs)``, recomputed in backward instead of kept (Chainer's ``F.forget``)."""
    xs = tuple(x if isinstance(x, Variable) else Variable(x) for x in xs)
    ys = Forget(func).apply(xs)
    return ys[0] if len(ys) == 1 else ys
