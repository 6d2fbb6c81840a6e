"""Elementwise arithmetic with numpy broadcasting: the functions Variable's operators call
(``ops.operators`` installs them).

Two arrays must share a dtype (a float64 constant never silently promotes a float32 model);
a Python or numpy scalar operand becomes an attribute of a ``*_scalar`` op and keeps the
Variable's dtype.  Gradients of broadcast operands are summed back by ``generic.sum_to``.
"""

from __future__ import annotations

import operator

import numpy as np

from graphcore import generic as g
from graphcore import shapes
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.checks import broadcastable, same_dtype
from graphcore.registry import register_op
from graphcore.variable import Variable


class _Binary(FunctionNode):
    """``compute(a, b)`` with numpy broadcasting; both arrays must share a dtype."""

    __slots__ = ()
    elementwise = True
    arity = 2
    shape_rule = shapes.broadcasting
    compute = None  # the numpy operator, set by each subclass

    def forward(self, inputs):
        a, b = inputs
        if a.dtype != b.dtype:
            self.check_inputs(inputs)
        y = self.compute(a, b)
        return (y if type(y) is np.ndarray else np.asarray(y)),  # 0-d inputs give a scalar

    def check_inputs(self, inputs):
        same_dtype(self.label, *inputs)
        broadcastable(self.label, *inputs)


@register_op
class Add(_Binary):
    """``a + b`` with broadcasting."""

    __slots__ = ()
    name = "add"
    label = "_ + _"

    compute = staticmethod(operator.add)

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        a, b = self.inputs
        return g.sum_to(gy, a.shape), g.sum_to(gy, b.shape)


@register_op
class Sub(_Binary):
    """``a - b`` with broadcasting."""

    __slots__ = ()
    name = "sub"
    label = "_ - _"

    compute = staticmethod(operator.sub)

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        a, b = self.inputs
        return g.sum_to(gy, a.shape), (g.sum_to(-gy, b.shape) if 1 in indexes else None)


@register_op
class Mul(_Binary):
    """``a * b`` with broadcasting."""

    __slots__ = ()
    name = "mul"
    label = "_ * _"

    compute = staticmethod(operator.mul)

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        a, b = self.get_retained_inputs()
        ga = g.sum_to(gy * b, a.shape) if 0 in indexes else None
        gb = g.sum_to(gy * a, b.shape) if 1 in indexes else None
        return ga, gb


@register_op
class Div(_Binary):
    """``a / b`` with broadcasting."""

    __slots__ = ()
    name = "div"
    label = "_ / _"

    compute = staticmethod(operator.truediv)

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        a, b = self.get_retained_inputs()
        ga = gy / b
        gb = g.sum_to(-ga * a / b, b.shape) if 1 in indexes else None
        return g.sum_to(ga, a.shape), gb


@register_op
class PowVarVar(_Binary):
    """``a ** b`` with broadcasting (``a`` positive where ``b`` needs a gradient)."""

    __slots__ = ()
    name = "pow"
    label = "_ ** _"

    compute = staticmethod(operator.pow)

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        a, b = self.get_retained_inputs()
        ga = g.sum_to(gy * b * a ** (b - 1), a.shape) if 0 in indexes else None
        gb = g.sum_to(gy * g.log(a) * a ** b, b.shape) if 1 in indexes else None
        return ga, gb


@register_op
class Neg(FunctionNode):
    """``-x``."""

    __slots__ = ()
    name = "neg"
    label = "__neg__"
    elementwise = True
    arity = 1
    shape_rule = shapes.same_as_first

    def forward(self, inputs):
        y = -inputs[0]
        return (y if type(y) is np.ndarray else np.asarray(y)),

    def backward(self, indexes, grad_outputs):
        return -grad_outputs[0],


class _Scalar(FunctionNode):
    """An elementwise op between a Variable and one Python number kept as an attribute."""

    __slots__ = ("value",)
    elementwise = True
    arity = 1
    shape_rule = shapes.same_as_first
    attributes = {"value": Attr((int, float), required=True, doc="the scalar operand")}

    def __init__(self, value: float) -> None:
        self.value = value

    @property
    def label(self) -> str:
        return self._template % _fmt(self.value)


@register_op
class AddConstant(_Scalar):
    """``x + value``."""

    __slots__ = ()
    name = "add_scalar"
    _template = "_ + %s"

    def forward(self, inputs):
        y = inputs[0] + self.value
        return (y if type(y) is np.ndarray else np.asarray(y)),

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0],


@register_op
class MulConstant(_Scalar):
    """``x * by`` (also ``x / c``, computed as ``x * (1 / c)`` as Chainer does)."""

    __slots__ = ()
    name = "scale"
    _template = "_ * %s"
    attributes = {"by": Attr((int, float), required=True, doc="the factor")}

    def __init__(self, by: float) -> None:
        self.value = by

    by = property(lambda self: self.value)

    def forward(self, inputs):
        y = inputs[0] * self.value
        return (y if type(y) is np.ndarray else np.asarray(y)),

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0] * self.value,


@register_op
class SubFromConstant(_Scalar):
    """``value - x``."""

    __slots__ = ()
    name = "rsub_scalar"
    _template = "%s - _"

    def forward(self, inputs):
        y = self.value - inputs[0]
        return (y if type(y) is np.ndarray else np.asarray(y)),

    def backward(self, indexes, grad_outputs):
        return -grad_outputs[0],


@register_op
class DivFromConstant(_Scalar):
    """``value / x``."""

    __slots__ = ()
    name = "rdiv_scalar"
    _template = "%s / _"

    def forward(self, inputs):
        y = self.value / inputs[0]
        return (y if type(y) is np.ndarray else np.asarray(y)),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * (-self.value) / (x * x),


@register_op
class PowVarConst(_Scalar):
    """``x ** exponent``."""

    __slots__ = ()
    name = "pow_scalar"
    _template = "_ ** %s"
    attributes = {"exponent": Attr((int, float), required=True, doc="the power")}

    def __init__(self, exponent: float) -> None:
        self.value = exponent

    exponent = property(lambda self: self.value)

    def forward(self, inputs):
        y = inputs[0] ** self.value
        return (y if type(y) is np.ndarray else np.asarray(y)),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        c = self.value
        if c == 2:
            return grad_outputs[0] * (x * 2),
        return grad_outputs[0] * (x ** (c - 1) * c),


@register_op
class PowConstVar(_Scalar):
    """``base ** x``."""

    __slots__ = ()
    name = "rpow_scalar"
    _template = "%s ** _"
    attributes = {"base": Attr((int, float), required=True, doc="the positive base")}
    _out_keep = (0,)

    def __init__(self, base: float) -> None:
        self.value = base

    base = property(lambda self: self.value)

    def forward(self, inputs):
        return np.asarray(self.value ** inputs[0], dtype=inputs[0].dtype),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] * y * float(np.log(self.value)),


def _fmt(value: float) -> str:
    """A constant as Chainer's labels show it: ``2``, ``2.0``, ``(-2.0)``."""
    return f"({value})" if value < 0 else str(value)


_SCALARS = (int, float, np.generic)


@register_op
class MultiAdd(FunctionNode):
    """``x0 + x1 + ...`` over any number of inputs, with broadcasting (``F.add(*xs)``)."""

    __slots__ = ()
    name = "multi_add"
    label = "MultiAdd"
    elementwise = True
    arity = None
    shape_rule = shapes.broadcasting

    def forward(self, inputs):
        if any(x.dtype != inputs[0].dtype for x in inputs):
            same_dtype(self.label, *inputs)
        y = inputs[0] + inputs[1] if len(inputs) > 1 else inputs[0].copy()
        for x in inputs[2:]:
            if x.shape == y.shape:
                y += x
            else:
                y = y + x
        return y,

    def check_inputs(self, inputs):
        same_dtype(self.label, *inputs)
        broadcastable(self.label, *inputs)

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        return tuple(g.sum_to(gy, self.inputs[i].shape) for i in indexes)


def add(*xs):
    """``x0 + x1 + ...`` (Chainer's ``F.add``): two operands as ``+`` does, more in one node."""
    if len(xs) == 2:
        return binary_add(*xs)
    if not xs:
        raise TypeError("F.add: needs at least one input")
    return MultiAdd().apply(xs)[0]


# A raw array beside a Variable is a constant of the Variable's dtype (Chainer's
# ``_preprocess_rhs``); two Variables of different dtypes stay an error.
def constants_like(a, b):
    if type(a) is np.ndarray and isinstance(b, Variable) and a.dtype != b.dtype:
        return a.astype(b.dtype), b
    if type(b) is np.ndarray and isinstance(a, Variable) and b.dtype != a.dtype:
        return a, b.astype(a.dtype)
    return a, b


def binary_add(a, b):
    """``a + b`` (either may be a Variable, an array or a scalar): Variable's ``+``."""
    if isinstance(b, _SCALARS):
        return AddConstant(_py(b)).apply((a,))[0]
    if isinstance(a, _SCALARS):
        return AddConstant(_py(a)).apply((b,))[0]
    if type(a) is np.ndarray or type(b) is np.ndarray:
        a, b = constants_like(a, b)
    return Add().apply((a, b))[0]


def sub(a, b):
    if isinstance(b, _SCALARS):
        return AddConstant(-_py(b)).apply((a,))[0]
    if isinstance(a, _SCALARS):
        return SubFromConstant(_py(a)).apply((b,))[0]
    if type(a) is np.ndarray or type(b) is np.ndarray:
        a, b = constants_like(a, b)
    return Sub().apply((a, b))[0]


def mul(a, b):
    if isinstance(b, _SCALARS):
        return MulConstant(_py(b)).apply((a,))[0]
    if isinstance(a, _SCALARS):
        return MulConstant(_py(a)).apply((b,))[0]
    if type(a) is np.ndarray or type(b) is np.ndarray:
        a, b = constants_like(a, b)
    return Mul().apply((a, b))[0]


def div(a, b):
    if isinstance(b, _SCALARS):
        return MulConstant(1.0 / _py(b)).apply((a,))[0]
    if isinstance(a, _SCALARS):
        return DivFromConstant(_py(a)).apply((b,))[0]
    if type(a) is np.ndarray or type(b) is np.ndarray:
        a, b = constants_like(a, b)
    return Div().apply((a, b))[0]


def pow(a, b):  # noqa: A001
    if isinstance(b, _SCALARS):
        return PowVarConst(_py(b)).apply((a,))[0]
    if isinstance(a, _SCALARS):
        return PowConstVar(_py(a)).apply((b,))[0]
    if type(a) is np.ndarray or type(b) is np.ndarray:
        a, b = constants_like(a, b)
    return PowVarVar().apply((a, b))[0]


def neg(x):
    return Neg().apply((x,))[0]


def _py(v):
    return v.item() if isinstance(v, np.generic) else v
