"""Padding ops: ``pad`` (constant borders around an array, as ``numpy.pad``) and
``pad_sequence`` (sequences of different lengths to one padded batch). The gradient of each
is a slice of the output gradient: the padding gets none.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.indexing import get_item
from graphcore.registry import register_op


def _pad_pairs(label: str, pad_width, ndim: int) -> np.ndarray:
    """``pad_width`` in any form ``numpy.pad`` takes (an int, a pair, a pair per axis) as an
    ``(ndim, 2)`` array of ``(before, after)`` widths."""
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu" or (widths < 0).any():
        raise errors.ShapeError(f"{label}: pad_width must be non-negative ints (one, a pair, or "
                                f"a pair per axis), got {pad_width!r}")
    try:
        pairs = np.broadcast_to(widths, (ndim, 2))
    except ValueError:
        raise errors.ShapeError(f"{label}: pad_width {pad_width!r} does not fit an input of "
                                f"{ndim} dimensions") from None
    return pairs.astype(np.intp)  # (0, 2) for a 0-d x: numpy.pad wants integers even then


@register_op
class Pad(FunctionNode):
    """``numpy.pad(x, pad_width, mode='constant', constant_values=...)``: borders of constant
    values; the gradient is the slice of the output gradient that holds ``x``."""

    __slots__ = ("pad_width", "constant_values")
    name = "pad"
    label = "Pad"
    arity = 1
    attributes = {
        "pad_width": Attr((int, tuple, list), required=True,
                          doc="(before, after) widths: one for all axes, or one per axis"),
        "constant_values": Attr((int, float, tuple, list), 0,
                                doc="the padding value(s), as numpy.pad takes them"),
    }

    def shape_rule(self, inputs):
        x, = inputs
        shapes.float_like_first(self, inputs)
        try:
            pairs = _pad_pairs(self.label, self.pad_width, x.ndim)
        except errors.ShapeError as e:
            shapes.fail(self, inputs, str(e).removeprefix(f"{self.label}: "))
        return shapes.TensorType(tuple(d + int(a + b) if isinstance(d, int) else shapes.UNKNOWN
                                       for d, (a, b) in zip(x.shape, pairs, strict=True)),
                                 x.dtype),

    def __init__(self, pad_width, constant_values=0) -> None:
        self.pad_width = pad_width
        self.constant_values = constant_values

    def forward(self, inputs):
        x, = inputs
        if x.dtype.kind != "f":
            raise errors.DTypeError(f"Pad: expected a floating-point input, got {x.dtype}")
        pairs = _pad_pairs(self.label, self.pad_width, x.ndim)
        if x.ndim == 0:  # nothing to pad (numpy.pad fails on the empty widths)
            return x.copy(),
        return np.pad(x, pairs, mode="constant", constant_values=self.constant_values),

    def backward(self, indexes, grad_outputs):
        x = self.inputs[0]
        pairs = _pad_pairs(self.label, self.pad_width, x.ndim)
        index = tuple(slice(int(before), int(before) + n)
                      for (before, _), n in zip(pairs, x.shape, strict=True))
        gy = grad_outputs[0]
        return (gy[index] if isinstance(gy, np.ndarray) else get_item(gy, index)),


def pad(x, pad_width, mode="constant", **keywords):
    """Chainer's ``F.pad``: ``x`` padded as ``numpy.pad(x, pad_width, mode, **keywords)``.

    Only ``mode='constant'`` (with ``constant_values``) is differentiable by slicing, so it is
    the one taken; other modes copy values of ``x`` into the border, whose gradient this op
    would drop, and are refused."""
    if mode != "constant":
        raise errors.ArgumentValueError(f"pad: mode {mode!r} is not supported (only "
                                        "'constant', whose gradient is a slice)")
    unknown = set(keywords) - {"constant_values"}
    if unknown:
        raise errors.ArgumentTypeError(f"pad: unexpected keyword arguments {sorted(unknown)} "
                                       "for mode 'constant'")
    values = keywords.get("constant_values", 0)
    if isinstance(values, np.ndarray):
        values = values.tolist()
    return Pad(pad_width, values).apply((x,))[0]


@register_op
class PadSequence(FunctionNode):
    """Sequences ``xs[i]`` of shape ``(L_i, ...)`` to one array ``(len(xs), length, ...)``:
    row ``i`` holds ``xs[i]`` then ``padding``. ``length`` None: the longest ``L_i``."""

    __slots__ = ("length", "padding")
    name = "pad_sequence"
    label = "PadSequence"
    arity = None
    attributes = {
        "length": Attr((int, type(None)), None, doc="padded length (None: the longest)",
                       low=0),
        "padding": Attr((int, float, bool), 0, doc="value of the padding"),
    }

    def shape_rule(self, xs):
        if not xs:
            shapes.fail(self, xs, "needs at least one sequence")
        step = xs[0].shape[1:]
        for t in xs:
            if t.ndim == 0 or t.ndim != xs[0].ndim or any(map(shapes.conflict, t.shape[1:],
                                                               step)):
                shapes.fail(self, xs, "sequences must have a time axis and share their step "
                                      "shape")
            if self.length is not None and isinstance(t.shape[0], int) and (
                    t.shape[0] > self.length):
                shapes.fail(self, xs, f"a sequence has more steps than length {self.length}")
        lengths = [t.shape[0] for t in xs]
        length = self.length if self.length is not None else (
            max(lengths) if all(isinstance(n, int) for n in lengths) else shapes.UNKNOWN)
        return shapes.TensorType((len(xs), length) + step, shapes.same_dtype(self, xs, xs)),

    def __init__(self, length=None, padding=0) -> None:
        self.length = length
        self.padding = padding

    def forward(self, xs):
        self._check(xs)
        length = self.length
        if length is None:
            length = max(len(x) for x in xs)
        first = xs[0]
        y = np.empty((len(xs), length) + first.shape[1:], first.dtype)
        for i, x in enumerate(xs):
            n = len(x)
            y[i, :n] = x
            if n < length:
                y[i, n:] = self.padding
        return y,

    def _check(self, xs) -> None:
        if not xs:
            raise errors.ShapeError("PadSequence: needs at least one sequence")
        first = xs[0]
        for i, x in enumerate(xs):
            if x.ndim == 0 or x.shape[1:] != first.shape[1:] or x.dtype != first.dtype:
                raise errors.ShapeError(
                    "PadSequence: sequences must have a time axis and share their step shape "
                    f"and dtype; xs[{i}] is {x.shape} {x.dtype}, xs[0] {first.shape} "
                    f"{first.dtype}")
            if self.length is not None and len(x) > self.length:
                raise errors.ShapeError(f"PadSequence: xs[{i}] has {len(x)} steps, more than "
                                        f"length {self.length}")

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        xs = self.inputs
        if isinstance(gy, np.ndarray):
            return tuple(gy[i, :len(x)] for i, x in enumerate(xs))
        return tuple(get_item(gy, (i, slice(0, len(xs[i])))) if i in indexes else None
                     for i in range(len(xs)))


def pad_sequence(xs, length=None, padding=0):
    """Chainer's ``F.pad_sequence``: the sequences ``xs`` padded with ``padding`` to
    ``length`` (None: the longest) and stacked, shape ``(len(xs), length, ...)``."""
    if isinstance(padding, np.generic):
        padding = padding.item()
    return PadSequence(length, padding).apply(tuple(xs))[0]
