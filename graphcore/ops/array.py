"""Shape ops: reshape, transpose, broadcast_to, sum_to, concat, stack, split_axis, cast,
swapaxes, copy, transpose_sequence. Each one's gradient is another of them (indexing, with
its scatter gradient, is in ``ops/indexing.py``).
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.config import config
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.checks import normalize_axis, numeric_dtype
from graphcore.registry import register_op
from graphcore.variable import as_variable

SHAPE = Attr((tuple, list), required=True, items=int, doc="target shape")


@register_op
class Reshape(FunctionNode):
    """Same elements, new shape (one axis may be -1)."""

    __slots__ = ("shape",)
    name = "reshape"
    label = "Reshape"
    arity = 1
    attributes = {"shape": SHAPE}

    def shape_rule(self, inputs):
        x, = inputs
        return shapes.TensorType(shapes.reshaped(self, inputs, x.shape, self.shape), x.dtype),

    def __init__(self, shape) -> None:
        self.shape = tuple(shape)

    def forward(self, inputs):
        x, = inputs
        try:
            return x.reshape(self.shape),
        except ValueError:
            raise errors.ShapeError(f"Reshape: cannot reshape {x.shape} ({x.size} elements) "
                                    f"to {self.shape}") from None

    def backward(self, indexes, grad_outputs):
        return g.reshape(grad_outputs[0], self.inputs[0].shape),


@register_op
class Transpose(FunctionNode):
    """Permute axes (default: reverse them)."""

    __slots__ = ("axes",)
    name = "transpose"
    label = "Transpose"
    arity = 1
    attributes = {"axes": Attr((tuple, list, type(None)), None, items=int,
                                 doc="permutation")}

    def shape_rule(self, inputs):
        x, = inputs
        if self.axes is None:
            return shapes.TensorType(x.shape[::-1], x.dtype),
        if sorted(a % max(x.ndim, 1) for a in self.axes) != list(range(x.ndim)):
            shapes.fail(self, inputs, f"axes {self.axes} are not a permutation of the "
                                      f"{x.ndim} axes")
        return shapes.TensorType(tuple(x.shape[a] for a in self.axes), x.dtype),

    def __init__(self, axes=None) -> None:
        self.axes = tuple(axes) if axes is not None else None

    def forward(self, inputs):
        x, = inputs
        if self.axes is not None and sorted(a % max(x.ndim, 1) for a in self.axes) != list(
                range(x.ndim)):
            raise errors.ShapeError(f"Transpose: axes {self.axes} are not a permutation of "
                                    f"the {x.ndim} axes of {x.shape}")
        return x.transpose(self.axes),

    def backward(self, indexes, grad_outputs):
        ndim = self.inputs[0].ndim
        if self.axes is None:
            inverse = None
        else:
            inverse = tuple(np.argsort([a % ndim for a in self.axes]).tolist())
        return g.transpose(grad_outputs[0], inverse),


@register_op
class BroadcastTo(FunctionNode):
    """Broadcast to ``shape`` as numpy does."""

    __slots__ = ("shape",)
    name = "broadcast_to"
    label = "BroadcastTo"
    arity = 1
    attributes = {"shape": SHAPE}

    def shape_rule(self, inputs):
        x, = inputs
        shape = shapes.broadcast(self, inputs, [x.shape, self.shape])
        if len(x.shape) > len(self.shape) or any(
                shapes.conflict(d, want) for d, want in zip(shape, self.shape, strict=True)):
            shapes.fail(self, inputs, f"cannot broadcast to {self.shape}")
        return shapes.TensorType(self.shape, x.dtype),

    def __init__(self, shape) -> None:
        self.shape = tuple(shape)

    def forward(self, inputs):
        x, = inputs
        try:
            return np.broadcast_to(x, self.shape),
        except ValueError:
            raise errors.ShapeError(f"BroadcastTo: cannot broadcast {x.shape} to "
                                    f"{self.shape}") from None

    def backward(self, indexes, grad_outputs):
        return g.sum_to(grad_outputs[0], self.inputs[0].shape),


@register_op
class SumTo(FunctionNode):
    """Sum down to ``shape``: the inverse of broadcasting (the gradient of ``broadcast_to``)."""

    __slots__ = ("shape",)
    name = "sum_to"
    label = "SumTo"
    arity = 1
    attributes = {"shape": SHAPE}

    def shape_rule(self, inputs):
        x, = inputs
        shape = shapes.broadcast(self, inputs, [x.shape, self.shape])
        if len(self.shape) > len(x.shape) or any(
                shapes.conflict(d, want) for d, want in zip(shape, x.shape, strict=True)):
            shapes.fail(self, inputs, f"cannot be summed to {self.shape}")
        return shapes.TensorType(self.shape, x.dtype),

    def __init__(self, shape) -> None:
        self.shape = tuple(shape)

    def forward(self, inputs):
        x, = inputs
        try:
            ok = np.broadcast_shapes(self.shape, x.shape) == x.shape
        except ValueError:
            ok = False
        if not ok:
            raise errors.ShapeError(f"SumTo: {x.shape} cannot be summed to {self.shape}")
        return g.unbroadcast_array(x, self.shape),

    def backward(self, indexes, grad_outputs):
        return g.broadcast_to(grad_outputs[0], self.inputs[0].shape),


@register_op
class Cast(FunctionNode):
    """Convert to another dtype; the gradient is converted back."""

    __slots__ = ("dtype",)
    name = "cast"
    label = "Cast"
    arity = 1
    elementwise = True
    attributes = {"dtype": Attr(str, required=True, doc="numpy dtype name, e.g. float64",
                                check=numeric_dtype)}

    def shape_rule(self, inputs):
        return shapes.TensorType(inputs[0].shape, self.dtype),

    def __init__(self, dtype) -> None:
        self.dtype = np.dtype(dtype)

    def forward(self, inputs):
        return inputs[0].astype(self.dtype, copy=False),

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        if isinstance(gy, np.ndarray):
            return gy.astype(self.inputs[0].dtype, copy=False),
        return cast(gy, self.inputs[0].dtype),


@register_op
class Concat(FunctionNode):
    """Join inputs along ``axis``."""

    __slots__ = ("axis",)
    name = "concat"
    label = "Concat"
    arity = None
    attributes = {"axis": Attr(int, 1, doc="axis to join along")}

    def shape_rule(self, inputs):
        if not inputs:
            shapes.fail(self, inputs, "needs at least one input")
        ndim = inputs[0].ndim
        if any(t.ndim != ndim for t in inputs):
            shapes.fail(self, inputs, "inputs must have one number of dimensions")
        axis = shapes.normalize_axis(self, inputs, self.axis, ndim)
        out = list(inputs[0].shape)
        for t in inputs[1:]:
            for i, d in enumerate(t.shape):
                if i != axis:
                    out[i] = shapes.expect_dim(self, inputs, d, out[i], f"axis {i}")
        out[axis] = shapes.sum_of([t.shape[axis] for t in inputs])
        return shapes.TensorType(tuple(out), shapes.result_dtype(*(t.dtype for t in inputs))),

    def __init__(self, axis: int = 1) -> None:
        self.axis = axis

    def forward(self, inputs):
        if not inputs:
            raise errors.ShapeError("Concat: needs at least one input")
        try:
            return np.concatenate(inputs, axis=self.axis),
        except (ValueError, np.exceptions.AxisError) as e:
            shapes = ", ".join(str(x.shape) for x in inputs)
            raise errors.ShapeError(f"Concat: cannot join {shapes} along axis {self.axis}: "
                                    f"{e}") from None

    def backward(self, indexes, grad_outputs):
        sizes = np.cumsum([x.shape[self.axis] for x in self.inputs])[:-1]
        return _split(grad_outputs[0], tuple(sizes.tolist()), self.axis)


@register_op
class Stack(FunctionNode):
    """Stack inputs of one shape along a new ``axis``."""

    __slots__ = ("axis",)
    name = "stack"
    label = "Stack"
    arity = None
    attributes = {"axis": Attr(int, 0, doc="position of the new axis")}

    def shape_rule(self, inputs):
        if not inputs:
            shapes.fail(self, inputs, "needs at least one input")
        shape = inputs[0].shape
        for t in inputs[1:]:
            if t.ndim != len(shape):
                shapes.fail(self, inputs, "inputs must share one shape")
            shape = tuple(shapes.expect_dim(self, inputs, d, s, f"axis {i}")
                          for i, (d, s) in enumerate(zip(t.shape, shape, strict=True)))
        axis = shapes.normalize_axis(self, inputs, self.axis, len(shape) + 1)
        return shapes.TensorType(shape[:axis] + (len(inputs),) + shape[axis:],
                                 shapes.result_dtype(*(t.dtype for t in inputs))),

    def __init__(self, axis: int = 0) -> None:
        self.axis = axis

    def forward(self, inputs):
        shapes = {x.shape for x in inputs}
        if len(shapes) != 1:
            raise errors.ShapeError(f"Stack: inputs must share one shape, got "
                                    f"{', '.join(str(x.shape) for x in inputs)}")
        return np.stack(inputs, axis=self.axis),

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        n = len(self.inputs)
        axis = self.axis % gy.ndim
        parts = _split(gy, tuple(range(1, n)), axis)
        shape = self.inputs[0].shape
        return tuple(g.reshape(p, shape) for p in parts)


@register_op
class SplitAxis(FunctionNode):
    """Split along ``axis`` into equal sections (an int) or at the given indices (a list)."""

    __slots__ = ("indices_or_sections", "axis")
    name = "split_axis"
    label = "SplitAxis"
    arity = 1
    attributes = {
        "indices_or_sections": Attr((int, tuple, list), required=True, items=int,
                                    doc="number of equal parts, or split points"),
        "axis": Attr(int, 0, doc="axis to split"),
    }

    def shape_rule(self, inputs):
        x, = inputs
        axis = shapes.normalize_axis(self, inputs, self.axis, x.ndim)
        size, ios = x.shape[axis], self.indices_or_sections
        if isinstance(ios, int):
            if ios <= 0 or (isinstance(size, int) and size % ios):
                shapes.fail(self, inputs, f"axis {axis} does not split into {ios} equal parts")
            sizes = [size // ios if isinstance(size, int) else shapes.UNKNOWN] * ios
        else:
            sizes = [shapes.UNKNOWN] * (len(ios) + 1) if not isinstance(size, int) else [
                len(range(size)[a:b]) for a, b in zip((0, *ios), (*ios, None), strict=True)]
        return tuple(shapes.TensorType(x.shape[:axis] + (n,) + x.shape[axis + 1:], x.dtype)
                     for n in sizes)

    def __init__(self, indices_or_sections, axis: int = 0) -> None:
        ios = indices_or_sections
        self.indices_or_sections = ios if isinstance(ios, int) else tuple(ios)
        self.axis = axis

    def forward(self, inputs):
        x, = inputs
        axis = normalize_axis(self.label, self.axis, x.ndim)
        ios = self.indices_or_sections
        if isinstance(ios, int) and (ios <= 0 or x.shape[axis] % ios):
            raise errors.ShapeError(f"SplitAxis: axis {axis} of {x.shape} does not split into "
                                    f"{ios} equal parts")
        return tuple(np.split(x, ios, axis=axis))

    def backward(self, indexes, grad_outputs):
        if isinstance(grad_outputs[0], np.ndarray):
            return np.concatenate(grad_outputs, axis=self.axis),
        return concat(grad_outputs, self.axis),


def _split(x, indices: tuple[int, ...], axis: int):
    if isinstance(x, np.ndarray):
        return tuple(np.split(x, indices, axis=axis))
    return split_axis(x, list(indices), axis)


def reshape(x, shape):
    """Reshape ``x`` (a view of the same elements; one axis may be -1). ``x`` itself (as a
    Variable) when it has ``shape`` already, as in Chainer."""
    if x.shape == shape:
        return as_variable(x)
    return Reshape(shape).apply((x,))[0]


def transpose(x, axes=None):
    return Transpose(axes).apply((x,))[0]


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape``; ``x`` itself (as a Variable) when it has ``shape``."""
    if x.shape == shape:
        return as_variable(x)
    return BroadcastTo(shape).apply((x,))[0]


def sum_to(x, shape):
    return SumTo(shape).apply((x,))[0]


def cast(x, dtype):
    """``x`` converted to ``dtype``. Already of ``dtype`` with backprop off: ``x`` itself (as
    a Variable), as in Chainer; with backprop on, a node whose output shares ``x``'s array."""
    if x.dtype == dtype and not config.enable_backprop:
        return as_variable(x)
    return Cast(dtype).apply((x,))[0]


def concat(xs, axis: int = 1):
    return Concat(axis).apply(_sequence("concat", xs))[0]


def stack(xs, axis: int = 0):
    return Stack(axis).apply(_sequence("stack", xs))[0]


def _sequence(name: str, xs) -> tuple:
    if not isinstance(xs, np.ndarray | str) and hasattr(xs, "__iter__") and not hasattr(
            xs, "creator"):
        return tuple(xs)
    raise errors.ArgumentTypeError(f"{name}: xs must be a list or tuple of Variables or arrays, "
                                   f"got {type(xs).__name__}")


def split_axis(x, indices_or_sections, axis: int = 0, force_tuple: bool = True):
    if isinstance(indices_or_sections, np.ndarray) and indices_or_sections.ndim == 1 \
            and (indices_or_sections.dtype.kind in "iu" or indices_or_sections.size == 0):
        indices_or_sections = tuple(int(i) for i in indices_or_sections)  # as Chainer takes
    ys = SplitAxis(indices_or_sections, axis).apply((x,))
    return ys if force_tuple or len(ys) > 1 else ys[0]


@register_op
class Swapaxes(FunctionNode):
    """Exchange two axes (Chainer's ``F.swapaxes``); its gradient swaps them back."""

    __slots__ = ("axis1", "axis2")
    name = "swapaxes"
    label = "Swapaxes"
    arity = 1
    attributes = {"axis1": Attr(int, required=True, doc="first axis"),
                  "axis2": Attr(int, required=True, doc="second axis")}

    def shape_rule(self, inputs):
        x, = inputs
        a = shapes.normalize_axis(self, inputs, self.axis1, x.ndim)
        b = shapes.normalize_axis(self, inputs, self.axis2, x.ndim)
        shape = list(x.shape)
        shape[a], shape[b] = shape[b], shape[a]
        return shapes.TensorType(tuple(shape), x.dtype),

    def __init__(self, axis1: int, axis2: int) -> None:
        self.axis1 = axis1
        self.axis2 = axis2

    def forward(self, inputs):
        x, = inputs
        a = normalize_axis(self.label, self.axis1, x.ndim)
        b = normalize_axis(self.label, self.axis2, x.ndim)
        return x.swapaxes(a, b),

    def backward(self, indexes, grad_outputs):
        return swapaxes(grad_outputs[0], self.axis1, self.axis2),


def swapaxes(x, axis1: int, axis2: int):
    """``x`` with ``axis1`` and ``axis2`` exchanged (a view for arrays, an op for Variables)."""
    if isinstance(x, np.ndarray):
        return x.swapaxes(axis1, axis2)
    return Swapaxes(axis1, axis2).apply((x,))[0]


# Device names that mean "this process's memory": graphcore computes with numpy only.
_HOST_DEVICES = (-1, None, "@numpy", "cpu", "native", "native:0")


@register_op
class Copy(FunctionNode):
    """A copy of the input (Chainer's ``F.copy``: a device transfer; here always the host)."""

    __slots__ = ()
    name = "copy"
    label = "Copy"
    arity = 1
    elementwise = True
    shape_rule = shapes.same_as_first

    def forward(self, inputs):
        return inputs[0].copy(),

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        return gy.copy() if isinstance(gy, np.ndarray) else Copy().apply((gy,))[0],


def copy(x, dst=-1):
    """Copy ``x`` to device ``dst``. graphcore runs on the host only, so ``dst`` must name it
    (``-1``, ``"@numpy"``, ``"cpu"``); a GPU id is refused rather than silently ignored."""
    if dst not in _HOST_DEVICES:
        raise errors.DeviceError(f"Copy: graphcore computes on the host only; cannot copy to "
                                 f"device {dst!r} (use -1 or '@numpy')")
    return Copy().apply((x,))[0]


@register_op
class TransposeSequence(FunctionNode):
    """Sequences sorted by decreasing length to one batch per time step (its own inverse).

    Chainer's ``F.transpose_sequence``. Inputs: sequences ``xs[i]`` of shape ``(L_i, ...)``
    sorted by non-increasing length. Outputs: one array per time step ``t < L_0``,
    ``ys[t] = stack([x[t] for x if len(x) > t])``, so ``ys[t]`` has shape ``(B_t, ...)``
    with ``B_t`` non-increasing. The op is its own inverse, and its gradient is the same
    transposition of the output gradients.
    """

    __slots__ = ()
    name = "transpose_sequence"
    label = "TransposeSequence"
    arity = None

    def forward(self, inputs):
        if not inputs:
            return ()
        lengths = [len(x) if x.ndim else -1 for x in inputs]
        if min(lengths) < 0:
            raise errors.ShapeError("TransposeSequence: every sequence needs a time axis, got "
                                    f"shapes {', '.join(str(x.shape) for x in inputs)}")
        if any(a < b for a, b in zip(lengths, lengths[1:], strict=False)):
            raise errors.ShapeError("TransposeSequence: sequences must be sorted by "
                                    f"non-increasing length, got lengths {lengths}")
        if len({x.shape[1:] for x in inputs}) != 1 or len({x.dtype for x in inputs}) != 1:
            raise errors.ShapeError("TransposeSequence: sequences must share their step shape "
                                    f"and dtype, got {', '.join(str(x.shape) for x in inputs)}")
        return _transpose_sequence_arrays(inputs)

    def backward(self, indexes, grad_outputs):
        if not grad_outputs:
            return tuple(g.zeros_like_input(x) for x in self.inputs)
        if isinstance(grad_outputs[0], np.ndarray):
            gxs = _transpose_sequence_arrays(grad_outputs)
        else:
            gxs = TransposeSequence().apply(grad_outputs)
        # sequences of length 0 get no step from the transposition
        return tuple(gxs) + tuple(g.zeros_like_input(x) for x in self.inputs[len(gxs):])


def _transpose_sequence_arrays(xs) -> tuple[np.ndarray, ...]:
    steps = len(xs[0])
    ys = []
    for t in range(steps):
        batch = [x[t] for x in xs if len(x) > t]
        ys.append(np.stack(batch))
    return tuple(ys)


def transpose_sequence(xs):
    """``F.transpose_sequence(xs)``: a tuple of time-major batches from sorted sequences."""
    if not xs:
        return ()
    return TransposeSequence().apply(tuple(xs))
