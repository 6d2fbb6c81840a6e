"""Activation functions. Each backward reuses the forward output where the derivative allows.

Chainer's other activations are compositions of registered ops, below the ops (``elu``,
``selu``, ``clipped_relu``, ``crelu``, ``prelu``, ``rrelu``, ``swish``, ``hard_sigmoid``,
``maxout``): differentiable twice through the ops they are made of.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.config import config
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.array import broadcast_to, concat, reshape
from graphcore.ops.checks import is_float
from graphcore.ops.math import clip, exp, minimum, where
from graphcore.ops.reduction import max as max_
from graphcore.registry import register_op
from graphcore.variable import as_variable


class _Unary(FunctionNode):
    __slots__ = ()
    elementwise = True
    arity = 1
    shape_rule = shapes.float_like_first

    def check_inputs(self, inputs):
        is_float(self.label, inputs[0])


@register_op
class ReLU(_Unary):
    """Rectified linear unit: ``max(x, 0)``."""

    __slots__ = ()
    name = "relu"
    label = "ReLU"
    _out_keep = (0,)

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            is_float(self.label, x)
        return np.maximum(x, 0, out=np.empty_like(x)),  # an array also for a 0-d x

    def backward(self, indexes, grad_outputs):
        y = self.output_array(0)
        return g.mask(grad_outputs[0], y > 0),


@register_op
class LeakyReLU(_Unary):
    """``x`` where positive, ``slope * x`` elsewhere."""

    __slots__ = ("slope",)
    name = "leaky_relu"
    label = "LeakyReLU"
    attributes = {"slope": Attr(float, 0.2, doc="gradient for negative inputs", low=0.0)}

    def __init__(self, slope: float = 0.2) -> None:
        self.slope = slope

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            is_float(self.label, x)
        return np.where(x > 0, x, x * self.slope).astype(x.dtype, copy=False),

    def backward(self, indexes, grad_outputs):
        x = self.inputs[0]._array
        factor = np.where(x > 0, 1.0, self.slope).astype(x.dtype)
        return g.scale_by(grad_outputs[0], factor),


@register_op
class Sigmoid(_Unary):
    """Logistic function ``1 / (1 + exp(-x))``, computed stably as ``tanh(x/2)/2 + 1/2``."""

    __slots__ = ()
    name = "sigmoid"
    label = "Sigmoid"
    _out_keep = (0,)

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            is_float(self.label, x)
        y = np.multiply(x, 0.5, out=np.empty_like(x))  # an array also for a 0-d x
        np.tanh(y, out=y)
        y *= 0.5
        y += 0.5
        return y,

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] * y * (1 - y),


@register_op
class Tanh(_Unary):
    """Hyperbolic tangent."""

    __slots__ = ()
    name = "tanh"
    label = "Tanh"
    _out_keep = (0,)

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            is_float(self.label, x)
        return np.tanh(x, out=np.empty_like(x)),  # an array also for a 0-d x

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] * (1 - y * y),


@register_op
class Softplus(_Unary):
    """``log(1 + exp(beta * x)) / beta``, computed without overflow."""

    __slots__ = ("beta",)
    name = "softplus"
    label = "Softplus"
    attributes = {"beta": Attr(float, 1.0, doc="sharpness", low=0.0)}

    def __init__(self, beta: float = 1.0) -> None:
        self.beta = beta

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            is_float(self.label, x)
        return (np.logaddexp(0, x * self.beta) / self.beta).astype(x.dtype, copy=False),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * g.sigmoid(x * self.beta),


def relu(x):
    """Rectified linear unit, ``max(x, 0)``."""
    return ReLU().apply((x,))[0]


def leaky_relu(x, slope: float = 0.2):
    return LeakyReLU(slope).apply((x,))[0]


def sigmoid(x):
    return Sigmoid().apply((x,))[0]


def tanh(x):
    return Tanh().apply((x,))[0]


def softplus(x, beta: float = 1.0):
    if isinstance(beta, np.ndarray) and beta.ndim == 0:  # Chainer takes a 0-d array too
        beta = beta.item()
    return Softplus(beta).apply((x,))[0]


# --- Chainer's other activations, composed of registered ops --------------------------------

def _data(x) -> np.ndarray:
    return x.array if hasattr(x, "array") else np.asarray(x)


def _float_input(name: str, x) -> np.ndarray:
    data = _data(x)
    if data.dtype.kind != "f":
        raise errors.DTypeError(f"{name}: expected a floating-point input, got {data.dtype}")
    return data


def elu(x, alpha: float = 1.0):
    """``x`` where non-negative, else ``alpha * (exp(x) - 1)``."""
    data = _float_input("elu", x)
    negative_part = exp(minimum(x, np.zeros((), data.dtype))) - 1
    return where(data >= 0, x, negative_part * alpha)


def selu(x, alpha: float = 1.6732632423543772848170429916717,
         scale: float = 1.0507009873554804934193349852946):
    """Scaled ELU: ``scale * elu(x, alpha)`` (the self-normalizing constants by default)."""
    return elu(x, alpha) * scale


def clipped_relu(x, z: float = 20.0):
    """``min(max(x, 0), z)``."""
    _float_input("clipped_relu", x)
    return clip(x, 0.0, float(z))


def relu6(x):
    """``min(max(x, 0), 6)``."""
    return clipped_relu(x, 6.0)


def hard_sigmoid(x):
    """Piecewise-linear sigmoid: ``clip(0.2 * x + 0.5, 0, 1)``."""
    _float_input("hard_sigmoid", x)
    return clip(as_variable(x) * 0.2 + 0.5, 0.0, 1.0)


def crelu(x, axis: int = 1):
    """Concatenated ReLU: ``relu(x)`` and ``relu(-x)`` joined along ``axis``."""
    ndim = _data(x).ndim
    if not -ndim <= axis < ndim:
        raise errors.ShapeError(f"crelu: axis {axis} is out of range for an input of {ndim} "
                                "dimensions")
    x = as_variable(x)
    return concat((relu(x), relu(-x)), axis)


def prelu(x, W):
    """Parametric ReLU: ``x`` where non-negative, else ``W * x``, with ``W`` of shape
    ``x.shape[1:1 + W.ndim]`` (broadcast over the batch axis and the trailing axes)."""
    data = _float_input("prelu", x)
    w = _data(W)
    if w.dtype != data.dtype or data.ndim < w.ndim + 1 or data.shape[1:1 + w.ndim] != w.shape:
        raise errors.ShapeError(f"prelu: W {w.shape} {w.dtype} must match x.shape[1:"
                                f"{1 + w.ndim}] of x {data.shape} {data.dtype}")
    slope = broadcast_to(reshape(W, _extended_shape(w, data)), data.shape)
    return where(data >= 0, x, x * slope)


def _extended_shape(w: np.ndarray, x: np.ndarray) -> tuple[int, ...]:
    return (1,) + w.shape + (1,) * (x.ndim - w.ndim - 1)


def rrelu(x, l: float = 1.0 / 8, u: float = 1.0 / 3, *, r=None,  # noqa: E741 (Chainer's)
          return_r: bool = False):
    """Randomized leaky ReLU: ``x`` where non-negative, else ``r * x`` with ``r`` drawn
    uniformly from ``[l, u)`` per element in training (or given), ``(l + u) / 2`` outside.
    ``return_r`` also returns ``r``."""
    if not 0.0 <= l < 1.0 or not 0.0 <= u < 1.0 or not l < u:
        raise errors.ArgumentValueError(f"rrelu: need 0 <= l < u < 1, got l={l}, u={u}")
    data = _float_input("rrelu", x)
    if config.train:
        if r is None:
            r = np.random.uniform(l, u, data.shape).astype(data.dtype, copy=False)
        elif r.dtype != data.dtype or r.shape != data.shape:
            raise errors.ShapeError(f"rrelu: r must have x's shape and dtype {data.shape} "
                                    f"{data.dtype}, got {r.shape} {r.dtype}")
    else:
        r = np.full(data.shape, (l + u) / 2, data.dtype)
    y = where(data >= 0, x, as_variable(x) * r)
    return (y, r) if return_r else y


def swish(x, beta):
    """``x * sigmoid(beta * x)``, ``beta`` of shape ``x.shape[1:1 + beta.ndim]``."""
    data = _float_input("swish", x)
    b = _data(beta)
    if b.dtype != data.dtype or data.ndim < b.ndim + 1 or data.shape[1:1 + b.ndim] != b.shape:
        raise errors.ShapeError(f"swish: beta {b.shape} {b.dtype} must match x.shape[1:"
                                f"{1 + b.ndim}] of x {data.shape} {data.dtype}")
    scale = broadcast_to(reshape(beta, _extended_shape(b, data)), data.shape)
    return x * sigmoid(scale * x)


def maxout(x, pool_size: int, axis: int = 1):
    """The maximum over groups of ``pool_size`` consecutive elements along ``axis``."""
    if pool_size <= 0:
        raise errors.ArgumentValueError(f"maxout: pool_size must be a positive integer, got "
                                        f"{pool_size}")
    shape = _data(x).shape
    axis %= len(shape)
    if shape[axis] % pool_size:
        raise errors.ShapeError(f"maxout: axis {axis} of {shape} does not divide into groups of "
                                f"{pool_size}")
    grouped = shape[:axis] + (shape[axis] // pool_size, pool_size) + shape[axis + 1:]
    return max_(reshape(x, grouped), axis=axis + 1)
