"""Cumulative sums and products along an axis (``axis=None``: over the flattened input), as
``numpy.cumsum`` / ``numpy.cumprod``.

cumprod's gradient divides by nothing, so zeros in the input are exact: for ``y = cumprod(x)``,
``gx[i] = y[i-1] * s[i]`` with ``s[i] = gy[i] + x[i+1] * s[i+1]``, a reversed first-order
linear recurrence computed by the ``cumprodsum`` op, whose own gradient is the same recurrence.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.attributes import Attr
from graphcore.function_node import FunctionNode
from graphcore.ops.array import concat
from graphcore.ops.checks import is_float
from graphcore.registry import register_op
from graphcore.variable import Variable

_AXIS = {"axis": Attr((int, type(None)), None, doc="the axis; null = the flattened input")}


def _check_axis(label: str, axis, ndim: int) -> None:
    if axis is not None and not -ndim <= axis < ndim:
        raise errors.ShapeError(f"{label}: axis {axis} is out of range for an input of {ndim} "
                                "dimensions")


def _flip(x, axis: int):
    """``x`` reversed along ``axis`` (an array or a Variable)."""
    return x[(slice(None),) * axis + (slice(None, None, -1),)]


def _split_at(x, index: int, axis: int):
    """``x[..., :index, ...]`` and ``x[..., index:, ...]`` along ``axis``."""
    lead = (slice(None),) * axis
    return x[lead + (slice(None, index),)], x[lead + (slice(index, None),)]


class _Cumulative(FunctionNode):
    __slots__ = ("axis",)
    arity = 1
    attributes = _AXIS

    def shape_rule(self, inputs):
        x, = inputs
        if self.axis is None:
            return shapes.TensorType((shapes.product(x.shape),), x.dtype),
        shapes.normalize_axis(self, inputs, self.axis, x.ndim)
        return x,

    def __init__(self, axis=None) -> None:
        self.axis = axis

    def _checked(self, x: np.ndarray) -> None:
        if x.dtype.kind != "f":
            is_float(self.label, x)
        _check_axis(self.label, self.axis, x.ndim)


@register_op
class Cumsum(_Cumulative):
    """Cumulative sum along ``axis``."""

    __slots__ = ()
    name = "cumsum"
    label = "Cumsum"

    def forward(self, inputs):
        x, = inputs
        self._checked(x)
        return np.cumsum(x, axis=self.axis),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        shape = self.inputs[0].shape
        axis = 0 if self.axis is None else self.axis % len(shape)
        gx = _flip(_cumsum(_flip(gy, axis), axis), axis)
        return (g.reshape(gx, shape) if self.axis is None else gx),


@register_op
class Cumprod(_Cumulative):
    """Cumulative product along ``axis`` (exact gradients where inputs are zero)."""

    __slots__ = ()
    name = "cumprod"
    label = "Cumprod"
    _out_keep = (0,)

    def forward(self, inputs):
        x, = inputs
        self._checked(x)
        return np.cumprod(x, axis=self.axis),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        x, = self.get_retained_inputs()
        y, = self.get_retained_outputs()
        shape = x.shape
        if self.axis is None:
            axis = 0
            x = g.reshape(x, (int(np.prod(shape, dtype=np.int64)),))
        else:
            axis = self.axis % len(shape)
        if y.shape[axis] <= 1:
            return (g.reshape(gy, shape) if self.axis is None else gy),
        _, x_rest = _split_at(x, 1, axis)
        s = _flip(cumprodsum(_flip(x_rest, axis), _flip(gy, axis), axis), axis)
        y_before, _ = _split_at(y, -1, axis)
        ones = np.ones(y_before.shape[:axis] + (1,) + y_before.shape[axis + 1:], y.dtype)
        if isinstance(y_before, Variable):
            exclusive = concat([ones, y_before], axis=axis)
        else:
            exclusive = np.concatenate([ones, y_before], axis=axis)
        gx = s * exclusive
        return (g.reshape(gx, shape) if self.axis is None else gx),


@register_op
class Cumprodsum(FunctionNode):
    """``z[0] = a[0]``, ``z[i] = a[i] + m[i-1] * z[i-1]`` along ``axis``: the recurrence of
    cumprod's gradient (``m`` is one shorter than ``a`` along ``axis``)."""

    __slots__ = ("axis",)
    name = "cumprodsum"
    label = "Cumprodsum"
    arity = 2
    attributes = {"axis": Attr(int, required=True, doc="the axis of the recurrence")}
    _out_keep = (0,)

    def shape_rule(self, inputs):
        m, a = inputs
        axis = shapes.normalize_axis(self, inputs, self.axis, a.ndim)
        if m.ndim != a.ndim or any(shapes.conflict(p, q) for i, (p, q) in enumerate(
                zip(m.shape, a.shape, strict=True)) if i != axis):
            shapes.fail(self, inputs, "m must have a's shape off the axis")
        return a,

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, inputs):
        m, a = inputs
        axis = self.axis
        lead = (slice(None),) * axis
        z = np.empty_like(a)
        total = a[lead + (0,)].copy()
        z[lead + (0,)] = total
        for i in range(1, a.shape[axis]):
            total *= m[lead + (i - 1,)]
            total += a[lead + (i,)]
            z[lead + (i,)] = total
        return z,

    def backward(self, indexes, grad_outputs):
        gz, = grad_outputs
        m = self.get_retained_inputs()[0]
        z, = self.get_retained_outputs()
        axis = self.axis
        # a[i] reaches z[j >= i] through m[i] ... m[j-1]: the same recurrence, reversed.
        ga = _flip(cumprodsum(_flip(m, axis), _flip(gz, axis), axis), axis)
        _, ga_after = _split_at(ga, 1, axis)
        z_before, _ = _split_at(z, -1, axis)
        gm = ga_after * z_before if 0 in indexes else None
        return gm, ga


def cumsum(x, axis=None):
    """Cumulative sum along ``axis`` (None: of the flattened input)."""
    return Cumsum(axis).apply((x,))[0]


def _cumsum(x, axis: int):
    """cumsum on an array (numpy) or a Variable (the op, recorded)."""
    return Cumsum(axis).apply((x,))[0] if isinstance(x, Variable) else np.cumsum(x, axis=axis)


def cumprod(x, axis=None):
    """Cumulative product along ``axis`` (None: of the flattened input)."""
    return Cumprod(axis).apply((x,))[0]


def cumprodsum(m, a, axis: int):
    """The ``cumprodsum`` recurrence on arrays (numpy) or Variables (the op, recorded)."""
    if isinstance(m, Variable) or isinstance(a, Variable):
        return Cumprodsum(axis).apply((m, a))[0]
    return Cumprodsum(axis).forward((m, a))[0]
