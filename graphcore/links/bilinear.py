"""``Bilinear``: ``y = e1 W e2 (+ e1 V1 + e2 V2 + b)`` with ``W: (left, right, out)``
(``F.bilinear``); ``Scale`` and ``Bias``: ``x * W`` and ``x + b`` with the parameter laid
over the axes of ``x`` from ``axis`` on (``F.scale``, ``F.bias``), Chainer's links."""

from __future__ import annotations

import numpy as np

from graphcore.errors import ArgumentTypeError, ArgumentValueError, ShapeError
from graphcore.links.link import Chain, Link
from graphcore.ops.linalg import bias, bilinear, scale
from graphcore.variable import Parameter


def _parameter(initializer, shape: tuple[int, ...], what: str) -> Parameter:
    if isinstance(initializer, np.ndarray) and initializer.shape != shape:
        raise ShapeError(f"Bilinear: {what} must have shape {shape}, got {initializer.shape}")
    return Parameter(initializer, shape)


class Bilinear(Link):
    """Bilinear layer of ``left_size`` and ``right_size`` inputs and ``out_size`` outputs.
    ``initial_bias`` is a tuple ``(V1, V2, b)`` of initializers or arrays (None: V1 and V2
    LeCun normal, b zero); ``nobias`` leaves out the linear terms."""

    def __init__(self, left_size: int, right_size: int, out_size: int, nobias: bool = False,
                 initialW=None, initial_bias=None) -> None:
        super().__init__()
        self.in_sizes = (left_size, right_size)
        self.nobias = nobias
        with self.init_scope():
            self.W = _parameter(initialW, (left_size, right_size, out_size), "initialW")
            if nobias:
                return
            if initial_bias is None:
                initial_bias = (None, None, 0)
            elif not isinstance(initial_bias, tuple) or len(initial_bias) != 3:
                raise ArgumentValueError("Bilinear: initial_bias must be a tuple (V1, V2, b) "
                                         f"or None, got {type(initial_bias).__name__}")
            initial_v1, initial_v2, initial_b = initial_bias
            self.V1 = _parameter(initial_v1, (left_size, out_size), "V1")
            self.V2 = _parameter(initial_v2, (right_size, out_size), "V2")
            self.b = _parameter(initial_b, (out_size,), "b")

    def forward(self, e1, e2):
        if self.nobias:
            return bilinear(e1, e2, self.W)
        return bilinear(e1, e2, self.W, self.V1, self.V2, self.b)

    def zero_grads(self) -> None:
        self.zerograds()


def _count(link: str, xs: tuple, expected: int) -> None:
    if len(xs) != expected:
        raise ArgumentTypeError(
            f"{link}: expected {'x alone (the link holds y)' if expected == 1 else 'x and y'}, "
            f"got {len(xs)} inputs")


class Bias(Link):
    """``x + b`` (``F.bias``); with ``shape``, ``b`` is a parameter of that shape (zeros),
    else it is the call's second argument."""

    def __init__(self, axis: int = 1, shape: tuple[int, ...] | None = None) -> None:
        super().__init__()
        if shape is not None:
            with self.init_scope():
                self.b = Parameter(0, shape)
        self.axis = axis

    def forward(self, *xs):
        _count("Bias", xs, 1 if hasattr(self, "b") else 2)
        if hasattr(self, "b"):
            x, = xs
            return bias(x, self.b, self.axis)
        x, y = xs
        return bias(x, y, self.axis)


class Scale(Chain):
    """``x * W`` (``F.scale``), then ``+ bias`` with ``bias_term``; with ``W_shape``, ``W``
    is a parameter of that shape (ones), else it is the call's second argument (and the bias,
    if any, has ``bias_shape``)."""

    def __init__(self, axis: int = 1, W_shape: tuple[int, ...] | None = None,
                 bias_term: bool = False, bias_shape: tuple[int, ...] | None = None) -> None:
        super().__init__()
        self.axis = axis
        with self.init_scope():
            if W_shape is not None:
                self.W = Parameter(1, W_shape)
                if bias_term:
                    self.bias = Bias(axis, W_shape)
            elif bias_term:
                if bias_shape is None:
                    raise ArgumentValueError("Scale: bias_shape should be given if W is not "
                                             "learnt parameter and bias_term is True.")
                self.bias = Bias(axis, bias_shape)

    def forward(self, *xs):
        _count("Scale", xs, 1 if hasattr(self, "W") else 2)
        if hasattr(self, "W"):
            x, = xs
            z = scale(x, self.W, self.axis)
        else:
            x, y = xs
            z = scale(x, y, self.axis)
        return self.bias(z) if hasattr(self, "bias") else z
