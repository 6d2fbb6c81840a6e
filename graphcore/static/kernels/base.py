"""What every kernel family shares: the ``Context`` of a plan's kernels, the step types, and
the helpers that build steps (``chain``, ``scratch``, ``elementwise_step``, ``activation_steps``,
``rows``, ``view_as``).

A kernel builder gets the node, its input arrays (fixed buffers, bound once), its output
buffer and a ``Context``, and returns a zero-argument step (a ``functools.partial`` of a numpy
call where one call suffices), several (``Steps``), or ``None`` when it has no kernel for that
case (the op's own code runs then: ``kernels.generic_forward``/``generic_vjp``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from graphcore import errors

Step = Callable[[], Any]


class Context:
    """What kernels share: per-forward-node state (saved values, op objects for fallbacks)."""

    def __init__(self, instances: dict[int, Any], first_replay: bool = False) -> None:
        self.instances = instances
        # the replay right after tracing: random ops reuse what the traced run drew
        self.first_replay = first_replay
        self.state: dict[int, dict[str, Any]] = {}
        self.holders: dict[int, list] = {}

    def holder(self, node_id: int) -> list:
        return self.holders.setdefault(node_id, [None])


def activation_steps(name: str | None, out: np.ndarray) -> list[Step]:
    if name is None:
        return []
    if name == "relu":
        return [partial(np.maximum, out, 0, out=out)]
    if name == "tanh":
        return [partial(np.tanh, out, out=out)]
    if name == "sigmoid":
        return [partial(np.multiply, out, 0.5, out=out), partial(np.tanh, out, out=out),
                partial(np.multiply, out, 0.5, out=out), partial(np.add, out, 0.5, out=out)]
    raise errors.TraceError(f"linear_act: unknown activation {name!r}")


class Steps(list):
    """Several steps that run in order; the plan splices them into its flat step list."""


def chain(steps: list) -> Step | Steps:
    flat = Steps()
    for step in steps:
        if isinstance(step, Steps):
            flat.extend(step)
        else:
            flat.append(step)
    return flat[0] if len(flat) == 1 else flat


def scratch(out: np.ndarray):
    def make(dtype=bool) -> np.ndarray:
        return np.empty(out.shape, dtype)

    return make


_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
           "pow": np.power, "maximum": np.maximum, "minimum": np.minimum}
_UNARY = {"tanh": np.tanh, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
          "square": np.square, "abs": np.abs, "neg": np.negative}
# op -> (ufunc, whether the scalar is the first operand)
_SCALAR = {"add_scalar": (np.add, False), "scale": (np.multiply, False),
           "rsub_scalar": (np.subtract, True), "rdiv_scalar": (np.divide, True),
           "pow_scalar": (np.power, False)}


def _scalar_value(attrs: dict) -> float:
    return attrs.get("value", attrs.get("by", attrs.get("exponent")))


def elementwise_step(op: str, attrs: dict, args: list, out: np.ndarray,
                     scratch: Callable[[], np.ndarray]) -> Step | None:
    """One elementwise op ``op(*args)`` into ``out``; None if no dedicated kernel."""
    if op in _UFUNCS:
        return partial(_UFUNCS[op], args[0], args[1], out=out)
    if op in _UNARY:
        return partial(_UNARY[op], args[0], out=out)
    if op == "relu":
        return partial(np.maximum, args[0], 0, out=out)
    if op == "sigmoid":
        return chain([partial(np.multiply, args[0], 0.5, out=out), partial(np.tanh, out, out=out),
                       partial(np.multiply, out, 0.5, out=out), partial(np.add, out, 0.5, out=out)])
    if op in _SCALAR:
        fn, reflected = _SCALAR[op]
        value = _scalar_value(attrs)
        return partial(fn, value, args[0], out=out) if reflected else \
            partial(fn, args[0], value, out=out)
    if op.startswith("vjp:"):
        gy, y = args
        kind = op[4:]
        if kind == "relu":
            mask = scratch()
            return chain([partial(np.greater, y, 0, out=mask),
                           partial(np.multiply, gy, mask, out=out)])
        if kind == "tanh":
            tmp = scratch(dtype=out.dtype)
            return chain([partial(np.multiply, y, y, out=tmp),
                           partial(np.subtract, 1, tmp, out=tmp),
                           partial(np.multiply, gy, tmp, out=out)])
        if kind == "sigmoid":
            tmp = scratch(dtype=out.dtype)
            return chain([partial(np.subtract, 1, y, out=tmp),
                           partial(np.multiply, tmp, y, out=tmp),
                           partial(np.multiply, gy, tmp, out=out)])
        if kind == "exp":
            return partial(np.multiply, gy, y, out=out)
    return None


def rows(a: np.ndarray) -> np.ndarray | None:
    """``a`` as a 2-D ``(rows, last axis)`` view, bound once; None when that reshape would copy
    (a strided view's, which the kernel then reshapes at each replay: a copy made here would
    never see the buffer's new values)."""
    if a.ndim == 2:
        return a
    return view_as(a, (-1, a.shape[-1]))


def view_as(a: np.ndarray, shape: tuple) -> np.ndarray | None:
    """``a.reshape(shape)`` when it is a view of ``a`` (always, for a contiguous ``a``)."""
    view = a.reshape(shape)
    return view if view.size == 0 or np.shares_memory(view, a) else None
