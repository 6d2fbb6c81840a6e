"""Elementwise math beyond the basics, under Chainer's names and labels: trigonometric
(sin, cos, tan, arcsin, arccos, arctan, arctan2), hyperbolic (sinh, cosh, arctanh), expm1,
log1p, log2, log10, the error function family (erf, erfc, ndtr) and fmod; and floor, ceil,
fix and sign, which Chainer computes without a graph (their gradient is zero almost
everywhere).

Each backward is written with these ops themselves (``_call`` runs numpy on arrays and the op on
Variables), so every order of gradient is exact.  erf, erfc and ndtr use SciPy when it is
installed and Python's ``math.erf``/``math.erfc`` element by element otherwise, as Chainer does.
"""

from __future__ import annotations

import math

import numpy as np

from graphcore import generic as g
from graphcore import shapes
from graphcore.function_node import FunctionNode
from graphcore.ops.checks import broadcastable, is_float, same_dtype
from graphcore.ops.math import as_array, exp
from graphcore.registry import register_op
from graphcore.variable import Variable, constant

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_ONE_OVER_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class _UnaryMath(FunctionNode):
    """``y = compute(x)`` elementwise on a floating-point ``x``."""

    __slots__ = ()
    elementwise = True
    arity = 1
    shape_rule = shapes.float_like_first
    compute = None  # numpy function, set by each subclass

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            is_float(self.label, x)
        return as_array(type(self).compute(x), x.dtype),

    @classmethod
    def call(cls, x):
        """The op on a Variable (recorded), numpy on an array (for a first-order backward)."""
        if isinstance(x, Variable):
            return cls().apply((x,))[0]
        return as_array(cls.compute(x), x.dtype)


@register_op
class Sin(_UnaryMath):
    """``sin(x)``."""

    __slots__ = ()
    name = "sin"
    label = "sin"
    compute = staticmethod(np.sin)

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * Cos.call(x),


@register_op
class Cos(_UnaryMath):
    """``cos(x)``."""

    __slots__ = ()
    name = "cos"
    label = "cos"
    compute = staticmethod(np.cos)

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * -Sin.call(x),


@register_op
class Tan(_UnaryMath):
    """``tan(x)``; its derivative ``1 + tan(x) ** 2`` reuses the output."""

    __slots__ = ()
    name = "tan"
    label = "tan"
    compute = staticmethod(np.tan)
    _out_keep = (0,)

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] * (y * y + 1),


@register_op
class Arcsin(_UnaryMath):
    """``arcsin(x)`` on ``[-1, 1]``."""

    __slots__ = ()
    name = "arcsin"
    label = "arcsin"
    compute = staticmethod(np.arcsin)

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * (-(x * x) + 1) ** -0.5,


@register_op
class Arccos(_UnaryMath):
    """``arccos(x)`` on ``[-1, 1]``."""

    __slots__ = ()
    name = "arccos"
    label = "arccos"
    compute = staticmethod(np.arccos)

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * -((-(x * x) + 1) ** -0.5),


@register_op
class Arctan(_UnaryMath):
    """``arctan(x)``."""

    __slots__ = ()
    name = "arctan"
    label = "arctan"
    compute = staticmethod(np.arctan)

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] / (x * x + 1),


@register_op
class Sinh(_UnaryMath):
    """``sinh(x)``."""

    __slots__ = ()
    name = "sinh"
    label = "sinh"
    compute = staticmethod(np.sinh)

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * Cosh.call(x),


@register_op
class Cosh(_UnaryMath):
    """``cosh(x)``."""

    __slots__ = ()
    name = "cosh"
    label = "cosh"
    compute = staticmethod(np.cosh)

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * Sinh.call(x),


@register_op
class Arctanh(_UnaryMath):
    """``arctanh(x)`` on ``(-1, 1)``."""

    __slots__ = ()
    name = "arctanh"
    label = "arctanh"
    compute = staticmethod(np.arctanh)

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] / (-(x * x) + 1),


@register_op
class Expm1(_UnaryMath):
    """``exp(x) - 1``, accurate near zero; its derivative ``exp(x)`` is ``y + 1``."""

    __slots__ = ()
    name = "expm1"
    label = "expm1"
    compute = staticmethod(np.expm1)
    _out_keep = (0,)

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] * (y + 1),


@register_op
class Log1p(_UnaryMath):
    """``log(1 + x)``, accurate near zero."""

    __slots__ = ()
    name = "log1p"
    label = "log1p"
    compute = staticmethod(np.log1p)

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] / (x + 1),


@register_op
class Log2(_UnaryMath):
    """Base-2 logarithm."""

    __slots__ = ()
    name = "log2"
    label = "log2"
    compute = staticmethod(np.log2)

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] / (x * math.log(2.0)),


@register_op
class Log10(_UnaryMath):
    """Base-10 logarithm."""

    __slots__ = ()
    name = "log10"
    label = "log10"
    compute = staticmethod(np.log10)

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] / (x * math.log(10.0)),


def _scipy_or(name: str, fallback):
    """SciPy's ``special.<name>`` when SciPy is installed, else ``fallback`` (looked up once)."""
    cache = {}

    def compute(x):
        fn = cache.get("fn")
        if fn is None:
            try:
                from scipy import special  # noqa: PLC0415  (optional dependency)

                fn = getattr(special, name)
            except ImportError:
                fn = fallback
            cache["fn"] = fn
        return fn(x)

    return compute


def _gaussian(x):
    """``exp(-x ** 2)`` on an array or a Variable."""
    if isinstance(x, Variable):
        return exp(-(x * x))
    return np.exp(-(x * x))


@register_op
class Erf(_UnaryMath):
    """The error function ``2 / sqrt(pi) * integral_0^x exp(-t ** 2) dt``."""

    __slots__ = ()
    name = "erf"
    label = "erf"
    compute = staticmethod(_scipy_or("erf", np.vectorize(math.erf, otypes=[np.float64])))

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * (_gaussian(x) * _TWO_OVER_SQRT_PI),


@register_op
class Erfc(_UnaryMath):
    """The complementary error function ``1 - erf(x)``, accurate where erf is near 1."""

    __slots__ = ()
    name = "erfc"
    label = "erfc"
    compute = staticmethod(_scipy_or("erfc", np.vectorize(math.erfc, otypes=[np.float64])))

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * (_gaussian(x) * -_TWO_OVER_SQRT_PI),


def _ndtr_by_erfc(x):
    return 0.5 * Erfc.compute(np.asarray(x, np.float64) * -math.sqrt(0.5))


@register_op
class Ndtr(_UnaryMath):
    """The standard normal cumulative distribution function ``(1 + erf(x / sqrt(2))) / 2``."""

    __slots__ = ()
    name = "ndtr"
    label = "ndtr"
    compute = staticmethod(_scipy_or("ndtr", _ndtr_by_erfc))

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * (_gaussian(x * math.sqrt(0.5)) * _ONE_OVER_SQRT_2PI),


@register_op
class Arctan2(FunctionNode):
    """``arctan2(x1, x2)``: the angle of the point ``(x2, x1)``, in ``(-pi, pi]``."""

    __slots__ = ()
    name = "arctan2"
    label = "arctan2"
    elementwise = True
    arity = 2
    shape_rule = shapes.broadcasting

    def forward(self, inputs):
        x1, x2 = inputs
        if x1.dtype != x2.dtype or x1.dtype.kind != "f":
            self.check_inputs(inputs)
        return as_array(np.arctan2(x1, x2), x1.dtype),

    def check_inputs(self, inputs):
        is_float(self.label, inputs[0])
        same_dtype(self.label, *inputs)
        broadcastable(self.label, *inputs)

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        x1, x2 = self.get_retained_inputs()
        scale = gy / (x1 * x1 + x2 * x2)
        g1 = g.sum_to(scale * x2, x1.shape) if 0 in indexes else None
        g2 = g.sum_to(scale * -x1, x2.shape) if 1 in indexes else None
        return g1, g2


@register_op
class Fmod(FunctionNode):
    """``fmod(x, divisor)``: the remainder with the sign of ``x`` (C's ``fmod``)."""

    __slots__ = ()
    name = "fmod"
    label = "fmod"
    elementwise = True
    arity = 2
    shape_rule = shapes.broadcasting

    def forward(self, inputs):
        x, divisor = inputs
        if x.dtype != divisor.dtype or x.dtype.kind != "f":
            self.check_inputs(inputs)
        return as_array(np.fmod(x, divisor), x.dtype),

    def check_inputs(self, inputs):
        is_float(self.label, inputs[0])
        same_dtype(self.label, *inputs)
        broadcastable(self.label, *inputs)

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        x, divisor = (v._array for v in self.inputs)
        # fmod(x, d) = x - fix(x / d) * d, where fix(x / d) is locally constant.
        quotient = np.fix(x / divisor)
        gx = g.sum_to(gy, x.shape) if 0 in indexes else None
        gd = g.sum_to(g.scale_by(gy, -quotient), divisor.shape) if 1 in indexes else None
        return gx, gd


def _unary(cls):
    def apply(x):
        return cls().apply((x,))[0]

    apply.__name__ = apply.__qualname__ = cls.name
    apply.__doc__ = cls.__doc__
    return apply


sin = _unary(Sin)
cos = _unary(Cos)
tan = _unary(Tan)
arcsin = _unary(Arcsin)
arccos = _unary(Arccos)
arctan = _unary(Arctan)
sinh = _unary(Sinh)
cosh = _unary(Cosh)
arctanh = _unary(Arctanh)
expm1 = _unary(Expm1)
log1p = _unary(Log1p)
log2 = _unary(Log2)
log10 = _unary(Log10)
erf = _unary(Erf)
erfc = _unary(Erfc)
ndtr = _unary(Ndtr)


def arctan2(x1, x2):
    """Elementwise ``arctan(x1 / x2)`` in the quadrant of ``(x2, x1)``."""
    return Arctan2().apply((x1, x2))[0]


def fmod(x, divisor):
    """Elementwise remainder of ``x / divisor`` with the sign of ``x``."""
    return Fmod().apply((x, divisor))[0]


# --- piecewise-constant functions: values only, no graph (as Chainer) -----------------------

def _values(x) -> np.ndarray:
    return x._array if isinstance(x, Variable) else np.asarray(x)


def floor(x):
    """The largest integer not above each element, in ``x``'s dtype (no gradient)."""
    a = _values(x)
    return constant(as_array(np.floor(a), a.dtype))


def ceil(x):
    """The smallest integer not below each element, in ``x``'s dtype (no gradient)."""
    a = _values(x)
    return constant(as_array(np.ceil(a), a.dtype))


def fix(x):
    """Each element rounded towards zero, in ``x``'s dtype (no gradient)."""
    a = _values(x)
    return constant(as_array(np.fix(a), a.dtype))


def sign(x):
    """-1, 0 or 1 by the sign of each element (no gradient)."""
    a = _values(x)
    return constant(np.asarray(np.sign(a)))
