"""Chainer's array functions that are compositions of the shape and indexing ops: flips,
``hstack``/``vstack``/``dstack``, axis moves, ``flatten``, ``separate``, ``select_item``,
``diagonal``, ``depth2space``/``space2depth``, ``broadcast``. No op of their own: each is
differentiable (twice, too) through the ops it is made of.

Each checks its arguments as Chainer's type check does and raises ``ShapeError`` or
``DTypeError`` (both ``InvalidType``) for wrong inputs, ``TypeError`` for wrong arguments.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore.config import config
from graphcore.ops.array import broadcast_to, concat, reshape, split_axis, stack, transpose
from graphcore.ops.indexing import get_item
from graphcore.variable import as_variable


def _int(name: str, what: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise errors.ArgumentTypeError(f"{name}: {what} must be an int, got {value!r}")
    return int(value)


def _axis(name: str, axis, ndim: int, what: str = "axis") -> int:
    axis = _int(name, what, axis)
    if not -ndim <= axis < ndim:
        raise errors.ShapeError(f"{name}: {what} {axis} is out of range for an input of {ndim} "
                                "dimensions")
    return axis % ndim


def _arrays(name: str, xs) -> tuple:
    xs = tuple(xs)
    if not xs:
        raise errors.ShapeError(f"{name}: needs at least one input")
    dtypes = {x.dtype for x in xs}
    if len(dtypes) > 1:
        raise errors.DTypeError(f"{name}: inputs must share one dtype, got "
                                f"{', '.join(str(x.dtype) for x in xs)}")
    if len({x.ndim for x in xs}) > 1:
        raise errors.ShapeError(f"{name}: inputs must have the same number of dimensions, got "
                                f"{', '.join(str(x.shape) for x in xs)}")
    return xs


def _same_but(name: str, xs, axis: int | None) -> None:
    """Every input's shape equals the first's except along ``axis`` (None: everywhere)."""
    first = xs[0].shape
    for x in xs[1:]:
        if any(a != b for d, (a, b) in enumerate(zip(first, x.shape, strict=True))
               if d != axis):
            where = "" if axis is None else f" outside axis {axis}"
            raise errors.ShapeError(f"{name}: shapes {', '.join(str(x.shape) for x in xs)} "
                                    f"differ{where}")


# --- flips ----------------------------------------------------------------------------------

def flip(x, axis):
    """Chainer's ``F.flip``: the elements of ``x`` in reverse order along ``axis``."""
    if x.ndim == 0:
        raise errors.ShapeError("flip: the input needs at least one dimension")
    axis = _axis("flip", axis, x.ndim)
    return get_item(x, (slice(None),) * axis + (slice(None, None, -1),))


def fliplr(x):
    """Chainer's ``F.fliplr``: ``x`` reversed along axis 1 (at least 2-D)."""
    if x.ndim < 2:
        raise errors.ShapeError(f"fliplr: the input needs at least 2 dimensions, got {x.shape}")
    return get_item(x, (slice(None), slice(None, None, -1)))


def flipud(x):
    """Chainer's ``F.flipud``: ``x`` reversed along axis 0 (at least 1-D)."""
    if x.ndim < 1:
        raise errors.ShapeError("flipud: the input needs at least 1 dimension")
    return get_item(x, slice(None, None, -1))


# --- stacking -------------------------------------------------------------------------------

def hstack(xs):
    """Chainer's ``F.hstack`` (``numpy.hstack``): join along axis 1, or axis 0 for 1-D and
    0-D inputs."""
    xs = _arrays("hstack", xs)
    ndim = xs[0].ndim
    if ndim == 0:
        return stack(xs, 0) if len(xs) > 1 else reshape(xs[0], (1,))
    if ndim > 1:
        _same_but("hstack", xs, 1)
    axis = 0 if ndim == 1 else 1
    return concat(xs, axis) if len(xs) > 1 else as_variable(xs[0])


def vstack(xs):
    """Chainer's ``F.vstack`` (``numpy.vstack``): join along axis 0, 0-D and 1-D inputs made
    rows first."""
    xs = _arrays("vstack", xs)
    ndim = xs[0].ndim
    if ndim <= 1:
        _same_but("vstack", xs, None)
        row = (1, xs[0].size)
        return concat([reshape(x, row) for x in xs], 0) if len(xs) > 1 else reshape(xs[0], row)
    _same_but("vstack", xs, 0)
    return concat(xs, 0) if len(xs) > 1 else as_variable(xs[0])


def dstack(xs):
    """Chainer's ``F.dstack`` (``numpy.dstack``): join along axis 2, inputs of fewer
    dimensions made ``(1, n, 1)`` or ``(m, n, 1)`` first."""
    xs = _arrays("dstack", xs)
    ndim = xs[0].ndim
    if ndim <= 2:
        _same_but("dstack", xs, None)
        shape = np.atleast_3d(np.empty(xs[0].shape, bool)).shape
        xs = [reshape(x, shape) for x in xs]
    else:
        _same_but("dstack", xs, 2)
    return concat(xs, 2) if len(xs) > 1 else as_variable(xs[0])


# --- axes -----------------------------------------------------------------------------------

def rollaxis(x, axis, start=0):
    """Chainer's ``F.rollaxis`` (``numpy.rollaxis``): ``axis`` moved to before ``start``."""
    ndim = x.ndim
    axis = _axis("rollaxis", axis, ndim)
    start = _int("rollaxis", "start", start)
    if not -ndim <= start <= ndim:
        raise errors.ShapeError(f"rollaxis: start {start} is out of range for an input of "
                                f"{ndim} dimensions")
    if start < 0:
        start += ndim
    order = list(range(ndim))
    order.remove(axis)
    order.insert(start - (axis < start), axis)
    return transpose(x, tuple(order))


def moveaxis(x, source, destination):
    """Chainer's ``F.moveaxis`` (``numpy.moveaxis``): axes ``source`` moved to positions
    ``destination``, the others kept in order."""
    if x.dtype.kind != "f":
        raise errors.DTypeError(f"moveaxis: expected a floating-point input, got {x.dtype}")
    ndim = x.ndim
    source = (source,) if isinstance(source, int | np.integer) else tuple(source)
    destination = (destination,) if isinstance(destination, int | np.integer) else tuple(
        destination)
    source = [_axis("moveaxis", a, ndim, "source axis") for a in source]
    destination = [_axis("moveaxis", a, ndim, "destination axis") for a in destination]
    if len(source) != len(destination):
        raise errors.ArgumentValueError("moveaxis: source and destination must have the same "
                                        f"number of axes, got {source} and {destination}")
    if len(set(source)) != len(source) or len(set(destination)) != len(destination):
        raise errors.ArgumentValueError(f"moveaxis: repeated axis in {source} or "
                                        f"{destination}")
    order = [a for a in range(ndim) if a not in source]
    for dest, src in sorted(zip(destination, source, strict=True)):
        order.insert(dest, src)
    return transpose(x, tuple(order))


def flatten(x):
    """Chainer's ``F.flatten``: the elements of ``x`` as a 1-D array (C order)."""
    return reshape(x, (x.size,))


def separate(x, axis=0):
    """Chainer's ``F.separate``: the slices of ``x`` along ``axis``, that axis removed (the
    inverse of ``stack``)."""
    axis = _axis("separate", axis, x.ndim)
    n = x.shape[axis]
    shape = x.shape[:axis] + x.shape[axis + 1:]
    parts = split_axis(x, n, axis) if n > 1 else (as_variable(x),)
    return tuple(reshape(p, shape) for p in parts)


# --- indexing -------------------------------------------------------------------------------

def select_item(x, t):
    """Chainer's ``F.select_item``: ``y[i] = x[i, t[i]]`` for a 2-D ``x`` and 1-D signed
    integer ``t`` (in range: checked in debug mode, as Chainer does)."""
    t = getattr(t, "array", t)
    t = np.asarray(t)
    if t.dtype.kind != "i":
        raise errors.DTypeError(f"select_item: t must be signed integers, got {t.dtype}")
    if x.ndim != 2 or t.ndim != 1 or x.shape[0] != t.shape[0]:
        raise errors.ShapeError(f"select_item: expected a 2-D x and a 1-D t with one index per "
                                f"row, got {x.shape} and {t.shape}")
    if config.debug and t.size and ((t < 0).any() or (t >= x.shape[1]).any()):
        raise errors.ShapeError(f"select_item: each t must satisfy 0 <= t < {x.shape[1]}")
    return get_item(x, (np.arange(t.shape[0]), t))


def diagonal(x, offset=0, axis1=0, axis2=1):
    """Chainer's ``F.diagonal`` (``numpy.diagonal``): the diagonal of axes ``axis1`` and
    ``axis2`` (shifted by ``offset``) as the last axis, after the remaining axes."""
    ndim = x.ndim
    offset = _int("diagonal", "offset", offset)
    a = _axis("diagonal", axis1, ndim, "axis1")
    b = _axis("diagonal", axis2, ndim, "axis2")
    if a == b:
        raise errors.ShapeError("diagonal: axis1 and axis2 must differ")
    rest = [d for d in range(ndim) if d not in (a, b)]
    moved = transpose(x, tuple(rest + [a, b]))
    row0, col0 = max(-offset, 0), max(offset, 0)
    n = max(0, min(x.shape[a] - row0, x.shape[b] - col0))
    steps = np.arange(n)
    return get_item(moved, (Ellipsis, steps + row0, steps + col0))


def depth2space(X, r):
    """Chainer's ``F.depth2space``: ``(n, c * r * r, h, w)`` to ``(n, c, h * r, w * r)``,
    channels moved into ``r`` x ``r`` blocks of pixels."""
    r = _int("depth2space", "r", r)
    _four_d_float("depth2space", X)
    n, c, h, w = X.shape
    if c % (r * r):
        raise errors.ShapeError(f"depth2space: {c} channels do not divide by r * r = {r * r}")
    c //= r * r
    y = reshape(X, (n, r, r, c, h, w))
    y = transpose(y, (0, 3, 4, 1, 5, 2))
    return reshape(y, (n, c, h * r, w * r))


def space2depth(X, r):
    """Chainer's ``F.space2depth``: ``(n, c, h * r, w * r)`` to ``(n, c * r * r, h, w)``,
    the inverse of ``depth2space``."""
    r = _int("space2depth", "r", r)
    _four_d_float("space2depth", X)
    n, c, h, w = X.shape
    if h % r or w % r:
        raise errors.ShapeError(f"space2depth: height and width {h}, {w} do not divide by {r}")
    y = reshape(X, (n, c, h // r, r, w // r, r))
    y = transpose(y, (0, 3, 5, 1, 2, 4))
    return reshape(y, (n, r * r * c, h // r, w // r))


def _four_d_float(name: str, x) -> None:
    if x.dtype.kind != "f" or x.ndim != 4:
        raise errors.ShapeError(f"{name}: expected a 4-D floating-point input, got {x.shape} "
                                f"{x.dtype}")


def broadcast(*args):
    """Chainer's ``F.broadcast``: the inputs broadcast to their common shape (one input: as a
    Variable; several: a tuple)."""
    if not args:
        raise errors.ShapeError("broadcast: needs at least one input")
    if len(args) == 1:
        return as_variable(args[0])
    try:
        shape = np.broadcast_shapes(*(np.shape(getattr(x, "array", x)) for x in args))
    except ValueError:
        raise errors.ShapeError("broadcast: shapes "
                                f"{', '.join(str(np.shape(getattr(x, 'array', x))) for x in args)}"
                                " cannot be broadcast together") from None
    return tuple(broadcast_to(x, shape) if x.shape != shape else as_variable(x) for x in args)
