"""Activation functions. Each backward reuses the forward output where the derivative allows."""

from __future__ import annotations

import numpy as np

from graphcore import generic as g
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.checks import is_float
from graphcore.registry import register_op


class _Unary(FunctionNode):
    __slots__ = ()
    elementwise = True
    arity = 1

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
        return np.maximum(x, 0),

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
        y = np.tanh(x * 0.5)
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
        return np.tanh(x),

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
    return Softplus(beta).apply((x,))[0]
