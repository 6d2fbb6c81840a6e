"""Shape rules: an op's output shapes and dtypes from its inputs', with no array computed.

An op declares its rule beside its ``forward``, as the class attribute ``shape_rule``: a
function ``(op, inputs) -> outputs`` over ``TensorType``s (the op instance carries its
attributes, already normalized by its constructor). ``infer(op, inputs)`` applies it, or
returns None for an op without one (a plugin op: its shapes are known only when it runs).
``tests/ops/test_shape_rules.py`` checks every rule against the op's real forward.

A dim is an ``int``, a symbol (a ``str`` such as ``"batch"``: a named dim that stays
symbolic) or ``UNKNOWN`` (``None``: a size no name says, such as ``reshape(-1)`` over
``batch * 3``). Rules propagate symbols (broadcasting two equal symbols keeps the symbol,
``linear`` keeps the leading dims) and raise ``ShapeInferenceError``/``DTypeInferenceError``
(kinds of ``ShapeError``/``DTypeError``, naming the op and every input's shape) only for
what cannot run: two different ints, a wrong rank, a wrong dtype kind. A symbol against an
int or another symbol is never a mismatch (the symbol may take that size).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.utils.conv import get_conv_outsize

Dim = int | str | None
Shape = tuple[Dim, ...]
UNKNOWN = None


@dataclass(frozen=True, slots=True)
class TensorType:
    """What flows along an edge before any array exists: a shape (ints, symbols, unknowns)
    and a dtype (None: unknown)."""

    shape: Shape
    dtype: np.dtype | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(self.shape))
        if self.dtype is not None and not isinstance(self.dtype, np.dtype):
            object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        return f"{show_shape(self.shape)} {self.dtype if self.dtype is not None else '?'}"


def show_shape(shape: Sequence[Dim]) -> str:
    """``(batch, 4)``; an unknown dim is ``?``."""
    dims = ["?" if d is None else str(d) for d in shape]
    return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"


class ShapeInferenceError(errors.ShapeError):
    """A shape rule found inputs an op can never take; ``op`` is its name, ``shapes`` the
    input shapes (both in the message)."""

    def __init__(self, op: str, problem: str, shapes: tuple[Shape, ...]) -> None:
        super().__init__(f"{op}: {problem} (input shapes "
                         f"{', '.join(show_shape(s) for s in shapes)})")
        self.op = op
        self.problem = problem
        self.shapes = shapes

    def __reduce__(self) -> tuple:
        return type(self), (self.op, self.problem, self.shapes)


class DTypeInferenceError(errors.DTypeError):
    """A shape rule found an input dtype an op can never take."""

    def __init__(self, op: str, problem: str, dtypes: tuple[np.dtype | None, ...]) -> None:
        super().__init__(f"{op}: {problem} (input dtypes "
                         f"{', '.join(str(d) for d in dtypes)})")
        self.op = op
        self.problem = problem
        self.dtypes = dtypes

    def __reduce__(self) -> tuple:
        return type(self), (self.op, self.problem, self.dtypes)


ShapeRule = Callable[[Any, tuple[TensorType, ...]], tuple[TensorType, ...]]


def has_rule(op: Any) -> bool:
    """Whether an op (class or instance) declares a shape rule."""
    return getattr(op, "shape_rule", None) is not None


def infer(op: Any, inputs: Sequence[TensorType]) -> tuple[TensorType, ...] | None:
    """The outputs of ``op`` (an op instance) on ``inputs``; None when it has no rule."""
    if not has_rule(op):
        return None
    inputs = tuple(inputs)
    if op.arity is not None and len(inputs) != op.arity:
        fail(op, inputs, f"takes {op.arity} input{'s' * (op.arity != 1)}, got {len(inputs)}")
    return tuple(op.shape_rule(inputs))


# --- what a rule raises ---------------------------------------------------------------------

def op_name(op: Any) -> str:
    return getattr(op, "name", None) or type(op).__name__


def fail(op: Any, inputs: Sequence[TensorType], problem: str):
    raise ShapeInferenceError(op_name(op), problem, tuple(t.shape for t in inputs))


def fail_dtype(op: Any, inputs: Sequence[TensorType], problem: str):
    raise DTypeInferenceError(op_name(op), problem, tuple(t.dtype for t in inputs))


# --- dims -----------------------------------------------------------------------------------

def conflict(a: Dim, b: Dim) -> bool:
    """Whether two dims can never be equal (two different ints)."""
    return isinstance(a, int) and isinstance(b, int) and a != b


def merge(a: Dim, b: Dim) -> Dim:
    """The better known of two dims that may be equal: an int, else a symbol, else unknown."""
    if isinstance(a, int):
        return a
    if isinstance(b, int):
        return b
    return a if a is not None else b


def expect_dim(op: Any, inputs: Sequence[TensorType], got: Dim, want: Dim,
               what: str) -> Dim:
    """``got`` merged with ``want``, or a ``ShapeInferenceError`` saying ``what``."""
    if conflict(got, want):
        fail(op, inputs, f"{what}: expected {want}, got {got}")
    return merge(got, want)


def expect_ndim(op: Any, inputs: Sequence[TensorType], t: TensorType, ndim: int | tuple[int, ...],
                what: str) -> None:
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if t.ndim not in allowed:
        fail(op, inputs, f"{what} must have {' or '.join(map(str, allowed))} dimensions, "
                         f"got {show_shape(t.shape)}")


def product(dims: Sequence[Dim]) -> Dim:
    """The product of dims: an int, a symbol times 1, else unknown."""
    count, symbols, unknown = _factors(dims)
    if unknown:
        return UNKNOWN
    if not symbols:
        return count
    return symbols[0] if count == 1 and len(symbols) == 1 else UNKNOWN


def _factors(dims: Sequence[Dim]) -> tuple[int, list[str], bool]:
    count, symbols, unknown = 1, [], False
    for d in dims:
        if isinstance(d, int):
            count *= d
        elif d is None:
            unknown = True
        else:
            symbols.append(d)
    return count, sorted(symbols), unknown


def normalize_axis(op: Any, inputs: Sequence[TensorType], axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        fail(op, inputs, f"axis {axis} is out of range for {ndim} dimensions")
    return axis % ndim


def broadcast(op: Any, inputs: Sequence[TensorType], shapes: Sequence[Shape]) -> Shape:
    """numpy's broadcasting over dims that may be symbols: equal dims stay, a 1 gives way."""
    ndim = max((len(s) for s in shapes), default=0)
    out: list[Dim] = []
    for i in range(ndim):
        dims = [s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0]
        result: Dim = 1
        for d in dims:
            if d == 1:
                continue
            if result == 1:
                result = d
            elif conflict(result, d):
                fail(op, inputs, f"shapes {', '.join(show_shape(s) for s in shapes)} do not "
                                 "broadcast")
            elif result != d:
                result = merge(result, d) if isinstance(merge(result, d), int) else UNKNOWN
        out.append(result)
    return tuple(out)


def result_dtype(*dtypes: np.dtype | None) -> np.dtype | None:
    """numpy's promotion of dtypes (no value-based casting: every operand is an array)."""
    if any(d is None for d in dtypes):
        return None
    return np.result_type(*dtypes)


def reduced(op: Any, inputs: Sequence[TensorType], shape: Shape, axis: Any,
            keepdims: bool) -> Shape:
    """``shape`` reduced over ``axis`` (None: every axis)."""
    if axis is None:
        return (1,) * len(shape) if keepdims else ()
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    kept = {normalize_axis(op, inputs, int(a), len(shape)) for a in axes}
    if len(kept) != len(axes):
        fail(op, inputs, f"repeated axis in {axis}")
    if keepdims:
        return tuple(1 if i in kept else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in kept)


def reshaped(op: Any, inputs: Sequence[TensorType], shape: Shape,
             target: Sequence[int]) -> Shape:
    """``shape`` reshaped to ``target`` (one entry may be -1): the -1 is derived from the
    ints and symbols on both sides (``(batch, 4, 3) -> (-1, 12)`` gives ``(batch, 12)``)."""
    if list(target).count(-1) > 1:
        fail(op, inputs, f"can only infer one dimension of {tuple(target)}")
    count, symbols, unknown = _factors(shape)
    known = [d for d in target if d != -1]
    wanted = math.prod(known)
    if -1 not in target:
        if not symbols and not unknown and wanted != count:
            fail(op, inputs, f"cannot reshape {show_shape(shape)} ({count} elements) to "
                             f"{tuple(target)}")
        return tuple(target)
    if wanted == 0 or count % wanted:
        if not symbols and not unknown:
            fail(op, inputs, f"cannot reshape {show_shape(shape)} ({count} elements) to "
                             f"{tuple(target)}")
        return tuple(UNKNOWN if d == -1 else d for d in target)
    derived = product([count // wanted, *symbols]) if not unknown else UNKNOWN
    return tuple(derived if d == -1 else d for d in target)


# --- rules shared by families of ops --------------------------------------------------------

def same_as_first(op: Any, inputs: tuple[TensorType, ...]) -> tuple[TensorType, ...]:
    """Elementwise with one array input: the output is like the (first) input."""
    return inputs[0],


def float_like_first(op: Any, inputs: tuple[TensorType, ...]) -> tuple[TensorType, ...]:
    """An elementwise float op: the first input's shape and dtype, which must be a float."""
    x = inputs[0]
    if x.dtype is not None and x.dtype.kind != "f":
        fail_dtype(op, inputs, f"expected a float input, got {x.dtype}")
    return x,


def same_dtype(op: Any, inputs: Sequence[TensorType],
               types: Sequence[TensorType]) -> np.dtype | None:
    """The one dtype of ``types`` (unknowns aside), or a ``DTypeInferenceError``."""
    known = [t.dtype for t in types if t.dtype is not None]
    if any(d != known[0] for d in known):
        fail_dtype(op, inputs, f"inputs must share a dtype, got {', '.join(map(str, known))}")
    return known[0] if len(known) == len(types) and known else None


def broadcasting(op: Any, inputs: tuple[TensorType, ...]) -> tuple[TensorType, ...]:
    """Elementwise over inputs of one dtype, broadcast as numpy does."""
    if not inputs:
        fail(op, inputs, "needs at least one input")
    shape = broadcast(op, inputs, [t.shape for t in inputs])
    return TensorType(shape, same_dtype(op, inputs, inputs)),



def sum_of(dims: Sequence[Dim]) -> Dim:
    """The sum of dims: an int when every one is, else unknown."""
    return sum(dims) if all(isinstance(d, int) for d in dims) else UNKNOWN


def windows(op: Any, inputs: Sequence[TensorType], spatial: Sequence[Dim],
            ksize: Sequence[int], stride: Sequence[int], pad: Sequence[int],
            dilate: Sequence[int], cover_all: bool) -> Shape:
    """The number of windows along each spatial axis (a convolution's or a pooling's output
    size); a symbolic size gives an unknown one."""
    out = tuple(get_conv_outsize(n, k, s, p, cover_all, d) if isinstance(n, int) else UNKNOWN
                for n, k, s, p, d in zip(spatial, ksize, stride, pad, dilate, strict=True))
    if any(o is not None and o <= 0 for o in out):
        fail(op, inputs, f"the window {tuple(ksize)} (dilate {tuple(dilate)}, pad "
                         f"{tuple(pad)}) does not fit the spatial size {show_shape(spatial)}")
    return out


def indexed(op: Any, inputs: Sequence[TensorType], shape: Shape, index: Any) -> Shape:
    """The shape of ``x[index]`` for numpy's basic and advanced indexing (ints, slices,
    ``None``, ``...``, int and bool arrays); a slice of a symbolic dim keeps it only when it
    takes the whole axis."""
    items = list(index) if isinstance(index, tuple) else [index]
    items = [np.asarray(i) if isinstance(i, list | np.ndarray) else i for i in items]
    advanced = any(isinstance(i, np.ndarray) for i in items)
    used = sum(i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else
               0 if i is None or i is Ellipsis else 1 for i in items)
    if sum(i is Ellipsis for i in items) > 1:
        fail(op, inputs, "an index can only have a single ellipsis")
    if used > len(shape):
        fail(op, inputs, f"too many indices: {used} for {len(shape)} dimensions")
    rest = [slice(None)] * (len(shape) - used)
    if any(i is Ellipsis for i in items):
        at = next(k for k, i in enumerate(items) if i is Ellipsis)
        items[at:at + 1] = rest
    else:
        items += rest
    out: list[Any] = []
    picked: list[Shape] = []
    axis = 0
    for item in items:
        if item is None:
            out.append(1)
            continue
        if isinstance(item, slice):
            d = shape[axis]
            out.append(len(range(d)[item]) if isinstance(d, int) else
                       d if item == slice(None) else UNKNOWN)
            axis += 1
            continue
        if isinstance(item, np.ndarray) and item.dtype == bool:
            for k, n in enumerate(item.shape):
                if conflict(shape[axis + k], n):
                    fail(op, inputs, f"a boolean index of shape {item.shape} does not fit")
            picked.append((int(item.sum()),))
            axis += item.ndim
        else:
            d, values = shape[axis], np.asarray(item)
            if values.size == 0:  # numpy reads an empty list as an empty integer index
                values = values.astype(np.intp)
            if values.dtype.kind not in "iu":
                fail(op, inputs, f"an index must be an int, a slice or an array, got {item!r}")
            if isinstance(d, int) and values.size and not (
                    -d <= values.min() and values.max() < d):
                fail(op, inputs, f"index {item!r} is out of range for axis {axis} of size {d}")
            picked.append(values.shape)
            axis += 1
        if advanced:
            out.append(_PICKED)
    if not advanced:
        return tuple(out)
    joint = broadcast(op, inputs, picked)
    spots = [k for k, d in enumerate(out) if d is _PICKED]
    kept = [d for d in out if d is not _PICKED]
    at = spots[0] if spots == list(range(spots[0], spots[0] + len(spots))) else 0
    return tuple(kept[:at]) + joint + tuple(kept[at:])


_PICKED = object()  # where advanced indices stand in ``indexed``'s output, until placed
