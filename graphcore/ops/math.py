"""Elementwise math: exp, log, sqrt, square, abs, maximum, minimum, clip, where (more in
``ops.elementwise``)."""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.checks import broadcastable, is_float, same_dtype
from graphcore.registry import register_op


def as_array(y, dtype) -> np.ndarray:
    """A ufunc's result as an ndarray (on a 0-d input numpy returns a scalar)."""
    if type(y) is np.ndarray and y.dtype == dtype:
        return y
    return np.asarray(y, dtype=dtype)


class _Unary(FunctionNode):
    __slots__ = ()
    elementwise = True
    arity = 1
    shape_rule = shapes.same_as_first


@register_op
class Exp(_Unary):
    """``e ** x``."""

    __slots__ = ()
    name = "exp"
    label = "Exp"
    _out_keep = (0,)

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            is_float(self.label, x)
        return as_array(np.exp(x), x.dtype),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] * y,


@register_op
class Log(_Unary):
    """Natural logarithm."""

    __slots__ = ()
    name = "log"
    label = "Log"

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            is_float(self.label, x)
        return as_array(np.log(x), x.dtype),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] / x,


@register_op
class Sqrt(_Unary):
    """Square root."""

    __slots__ = ()
    name = "sqrt"
    label = "Sqrt"
    _out_keep = (0,)

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            is_float(self.label, x)
        return as_array(np.sqrt(x), x.dtype),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] / (y * 2),


@register_op
class Square(_Unary):
    """``x * x``."""

    __slots__ = ()
    name = "square"
    label = "Square"

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            is_float(self.label, x)
        return as_array(np.square(x), x.dtype),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * (x * 2),


@register_op
class Absolute(_Unary):
    """``|x|`` (gradient ``sign(x)``, zero at zero)."""

    __slots__ = ()
    name = "abs"
    label = "|_|"

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            is_float("Absolute", x)  # the label is Chainer's symbol
        return as_array(np.abs(x), x.dtype),

    def backward(self, indexes, grad_outputs):
        return g.scale_by(grad_outputs[0], np.sign(self.inputs[0]._array)),


class _Extremum(FunctionNode):
    """Elementwise maximum/minimum; at ties the gradient goes to the first input."""

    __slots__ = ()
    elementwise = True
    arity = 2
    shape_rule = shapes.broadcasting

    def forward(self, inputs):
        a, b = inputs
        same_dtype(self.label, a, b)
        broadcastable(self.label, a, b)
        return as_array(self._np(a, b), a.dtype),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        a, b = (x._array for x in self.inputs)
        first = self._first(a, b)
        ga = g.sum_to(g.mask(gy, first), a.shape) if 0 in indexes else None
        gb = g.sum_to(g.mask(gy, ~first), b.shape) if 1 in indexes else None
        return ga, gb


@register_op
class Maximum(_Extremum):
    """Elementwise maximum of two arrays (broadcasting)."""

    __slots__ = ()
    name = "maximum"
    label = "Maximum"
    _np = staticmethod(np.maximum)

    @staticmethod
    def _first(a, b):
        return np.broadcast_to(a >= b, np.broadcast_shapes(a.shape, b.shape))


@register_op
class Minimum(_Extremum):
    """Elementwise minimum of two arrays (broadcasting)."""

    __slots__ = ()
    name = "minimum"
    label = "Minimum"
    _np = staticmethod(np.minimum)

    @staticmethod
    def _first(a, b):
        return np.broadcast_to(a <= b, np.broadcast_shapes(a.shape, b.shape))


@register_op
class Clip(_Unary):
    """Limit values to ``[x_min, x_max]`` (a bound of None: unbounded on that side); the
    gradient is zero where a value was clipped and one at the bounds themselves."""

    __slots__ = ("x_min", "x_max")
    name = "clip"
    label = "Clip"
    attributes = {"x_min": Attr((int, float, type(None)), None, doc="lower bound; null = none"),
                  "x_max": Attr((int, float, type(None)), None, doc="upper bound; null = none")}

    def __init__(self, x_min: float | None = None, x_max: float | None = None) -> None:
        if x_min is None and x_max is None:
            raise errors.ArgumentValueError("Clip: set x_min, x_max or both")
        if x_min is not None and x_max is not None and x_min >= x_max:
            raise errors.ArgumentValueError(
                f"Clip: x_min {x_min} must be less than x_max {x_max}")
        self.x_min = x_min
        self.x_max = x_max

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            is_float(self.label, x)
        return as_array(np.clip(x, self.x_min, self.x_max), x.dtype),

    def backward(self, indexes, grad_outputs):
        x = self.inputs[0]._array
        if self.x_min is None:
            inside = x <= self.x_max
        elif self.x_max is None:
            inside = x >= self.x_min
        else:
            inside = (x >= self.x_min) & (x <= self.x_max)
        return g.mask(grad_outputs[0], inside),


@register_op
class Where(FunctionNode):
    """``x`` where the boolean ``condition`` holds, else ``y`` (condition gets no gradient)."""

    __slots__ = ()
    name = "where"
    label = "Where"
    elementwise = True
    arity = 3

    def shape_rule(self, inputs):
        condition = inputs[0]
        if condition.dtype is not None and condition.dtype != np.bool_:
            shapes.fail_dtype(self, inputs, f"condition must be boolean, got {condition.dtype}")
        shape = shapes.broadcast(self, inputs, [t.shape for t in inputs])
        return shapes.TensorType(shape, shapes.same_dtype(self, inputs, inputs[1:])),

    def forward(self, inputs):
        c, x, y = inputs
        if c.dtype != np.bool_:
            raise errors.DTypeError(f"Where: condition must be boolean, got {c.dtype}")
        same_dtype(self.label, x, y)
        try:
            shape = np.broadcast_shapes(c.shape, x.shape, y.shape)
        except ValueError:
            raise errors.ShapeError(f"Where: shapes {c.shape}, {x.shape}, {y.shape} cannot be "
                                    "broadcast together") from None
        return np.where(c, x, y).reshape(shape),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        c, x, y = (v._array for v in self.inputs)
        cond = np.broadcast_to(c, gy.shape)
        gx = g.sum_to(g.mask(gy, cond), x.shape) if 1 in indexes else None
        gz = g.sum_to(g.mask(gy, ~cond), y.shape) if 2 in indexes else None
        return None, gx, gz


def exp(x):
    return Exp().apply((x,))[0]


def log(x):
    return Log().apply((x,))[0]


def sqrt(x):
    return Sqrt().apply((x,))[0]


def square(x):
    return Square().apply((x,))[0]


def absolute(x):
    return Absolute().apply((x,))[0]


def maximum(a, b):
    return Maximum().apply((a, b))[0]


def minimum(a, b):
    return Minimum().apply((a, b))[0]


def clip(x, x_min: float | None, x_max: float | None):
    return Clip(_number(x_min), _number(x_max)).apply((x,))[0]


def _number(bound):
    """A numpy scalar bound as the Python number it holds (an op attribute is plain data)."""
    return bound.item() if isinstance(bound, np.generic) else bound


def where(condition, x, y):
    return Where().apply((condition, x, y))[0]
