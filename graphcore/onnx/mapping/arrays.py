"""Converters of the indexing and multi-output array ops: ``get_item`` (numpy indexing),
``permutate``, ``split_axis``, ``where``, ``transpose_sequence``, and ``pad`` (ONNX ``Pad``
in constant mode; one padding value for every border, ONNX's only form).

``permutate`` is a ``Gather`` along its axis by the indices, an input of the model; the
inverse gathers by the inverse permutation, made in the graph (``ScatterElements`` of
``0 .. n-1`` at the indices), so it follows whatever indices the model is given.

``get_item`` by the index kind:

- basic (ints, slices, ``None``, ``Ellipsis``): ``Slice`` on the sliced axes, ``Gather`` with a
  scalar for each int (drops the axis), ``Unsqueeze`` for each ``None``. An axis that follows
  the batch keeps its symbolic size (a negative step there fixes the dims: ONNX clamps a
  backward start differently from Python);
- one integer array (or 1-d boolean mask), the other entries slices: ``Gather`` on that axis
  (numpy puts the array's dims in place of the axis, as ``Gather`` does);
- anything else (several arrays, an n-d mask, arrays mixed with ints or ``None``): numpy
  computes the flat positions at export time (``arange(size).reshape(shape)[index]``) and one
  ``Gather`` reads them from the flattened input: numpy's own rules, on a fixed input shape.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors
from graphcore.onnx.mapping.base import converts

_INT64_MAX = np.iinfo(np.int64).max
_INT64_MIN = np.iinfo(np.int64).min


def _i64(e, values) -> str:
    return e.const(np.asarray(values, np.int64))


@converts("where")
def _where(e, node, ins):
    return e.op("Where", ins)


@converts("pad")
def _pad(e, node, ins):
    value = np.asarray(node.attrs["constant_values"])
    if value.size != 1 and np.unique(value).size != 1:
        raise errors.ExportError(f"pad: ONNX's Pad takes one padding value; this pad has "
                                 f"{value.tolist()}")
    ndim = len(e.shape_of(node.inputs[0]))
    widths = np.broadcast_to(np.asarray(node.attrs["pad_width"], np.int64), (ndim, 2))
    dtype = np.dtype(e.by_id[node.inputs[0]].dtype)
    fill = e.const(np.asarray(value.reshape(-1)[0], dtype))
    return e.op("Pad", [ins[0], _i64(e, np.concatenate([widths[:, 0], widths[:, 1]])), fill],
                mode="constant")


@converts("permutate")
def _permutate(e, node, ins):
    from onnx import TensorProto

    x, indices = ins
    axis = int(node.attrs.get("axis", 0)) % len(e.shape_of(node.inputs[0]))
    if node.attrs.get("inv", False):
        # int64 throughout: Size gives int64, and ScatterElements' data and updates share one
        # dtype; the indices serve as its data, every entry overwritten by a permutation
        indices = e.op("Cast", [indices], to=TensorProto.INT64)
        positions = e.op("Range", [_i64(e, 0), e.op("Size", [indices]), _i64(e, 1)])
        indices = e.op("ScatterElements", [indices, indices, positions], axis=0)
    return e.op("Gather", [x, indices], axis=axis)


@converts("split_axis")
def _split_axis(e, node, ins):
    """``Split`` by the output sizes when the parts tile the axis in order (the usual case),
    else one ``Slice`` per part with numpy's bounds."""
    outs = e.projections(node)
    shape = e.shape_of(node.inputs[0])
    axis = int(node.attrs.get("axis", 0)) % len(shape)
    for out in outs:  # the sizes are baked in: they must not follow the batch
        e.fixed_shape(out)
    ios = node.attrs["indices_or_sections"]
    if isinstance(ios, int):
        cuts = [shape[axis] // ios * k for k in range(1, ios)]
    else:
        cuts = list(ios)
    bounds = [slice(a, b).indices(shape[axis])[:2]
              for a, b in zip([0, *cuts], [*cuts, None], strict=True)]
    sizes = [max(b - a, 0) for a, b in bounds]
    tiles = all(a == b for (_, a), (b, _) in zip(bounds, bounds[1:], strict=False))
    if tiles and sum(sizes) == shape[axis]:
        return e.ops("Split", [ins[0], _i64(e, sizes)], len(outs), axis=axis)
    return [e.op("Slice", [ins[0], _i64(e, [a]), _i64(e, [max(a, b)]), _i64(e, [axis])])
            for a, b in bounds]


@converts("transpose_sequence")
def _transpose_sequence(e, node, ins):
    """Step ``t`` is the concatenation of row ``t`` of every sequence longer than ``t``
    (lengths are baked in: they are the inputs' shapes)."""
    lengths = [e.fixed_shape(e.by_id[i])[0] for i in node.inputs]
    steps = []
    for t in range(lengths[0] if lengths else 0):
        rows = [e.op("Slice", [x, _i64(e, [t]), _i64(e, [t + 1]), _i64(e, [0])])
                for x, n in zip(ins, lengths, strict=True) if n > t]
        steps.append(rows[0] if len(rows) == 1 else e.op("Concat", rows, axis=0))
    return steps if node.shape is None else steps[0]


# --- get_item -----------------------------------------------------------------------------

def _parts(index) -> tuple:
    parts = index if isinstance(index, tuple) else (index,)
    return tuple(np.asarray(p) if isinstance(p, list) else p for p in parts)


def _is_basic(part) -> bool:
    return isinstance(part, int | np.integer | slice | type(None)) or part is Ellipsis


def _expanded(parts: tuple, rank: int) -> tuple:
    """``Ellipsis`` replaced by full slices (numpy allows one); a boolean array counts for
    as many axes as it has dims."""
    used = sum(np.ndim(p) if isinstance(p, np.ndarray) and p.dtype == np.bool_ else 1
               for p in parts if p is not None and p is not Ellipsis)
    out: list = []
    for p in parts:
        out.extend([slice(None)] * (rank - used) if p is Ellipsis else [p])
    if not any(p is Ellipsis for p in parts):
        out.extend([slice(None)] * (rank - used))
    return tuple(out)


@converts("get_item")
def _get_item(e, node, ins):
    x_id = node.inputs[0]
    rank = len(e.shape_of(x_id))
    parts = _expanded(_parts(node.attrs["index"]), rank)
    arrays = [k for k, p in enumerate(parts) if isinstance(p, np.ndarray)]
    if all(_is_basic(p) for p in parts):
        y = _basic(e, x_id, ins[0], parts)
        return e.op("Identity", [y]) if y == ins[0] else y
    single = len(arrays) == 1 and all(isinstance(p, slice) for k, p in enumerate(parts)
                                      if k != arrays[0])
    index = parts[arrays[0]] if single else None
    if single and index.dtype == np.bool_ and index.ndim == 1:
        index = np.flatnonzero(index)
    if single and np.issubdtype(index.dtype, np.integer):
        sliced = _basic(e, x_id, ins[0], tuple(slice(None) if k == arrays[0] else p
                                                for k, p in enumerate(parts)))
        return e.op("Gather", [sliced, _i64(e, index)], axis=arrays[0])
    shape = e.fixed_shape(e.by_id[x_id])
    flat = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
    positions = flat[node.attrs["index"]]
    return e.op("Gather", [e.op("Reshape", [ins[0], _i64(e, [-1])]), _i64(e, positions)],
                axis=0)


def _basic(e, x_id: int, x: str, parts: tuple) -> str:
    """Basic indexing: slices, then ints (``Gather`` with a scalar), then new axes."""
    shape, moving = e.shape_of(x_id), e.follows_batch(x_id)
    starts, stops, axes, steps = [], [], [], []
    ints, new_axes = [], []
    axis = out_axis = 0
    for p in parts:
        if p is None:
            new_axes.append(out_axis)
            out_axis += 1
            continue
        if isinstance(p, slice):
            bounds = _slice_bounds(e, x_id, p, shape[axis], moving[axis])
            if bounds is not None:
                starts.append(bounds[0])
                stops.append(bounds[1])
                steps.append(bounds[2])
                axes.append(axis)
            out_axis += 1
        else:
            ints.append((axis, int(p)))
        axis += 1
    if axes:
        x = e.op("Slice", [x, _i64(e, starts), _i64(e, stops), _i64(e, axes), _i64(e, steps)])
    for axis, value in reversed(ints):  # from the last axis: each Gather drops its axis
        x = e.op("Gather", [x, _i64(e, value)], axis=axis)
    if new_axes:
        x = e.op("Unsqueeze", [x, _i64(e, new_axes)])
    return x


def _slice_bounds(e, x_id: int, s: slice, size: int, moving: bool):
    """ONNX ``Slice`` start, end and step for a Python slice (None: the whole axis)."""
    step = 1 if s.step is None else int(s.step)
    if step == 1 and s.start in (None, 0) and s.stop is None:
        return None
    if moving:
        if step > 0:  # Python's and ONNX's bounds agree for a forward step
            return (0 if s.start is None else int(s.start),
                    _INT64_MAX if s.stop is None else int(s.stop), step)
        e.fixed_shape(e.by_id[x_id])  # raises: the dims are exported fixed
    start, stop, step = s.indices(size)
    if not range(start, stop, step):
        return 0, 0, 1
    return start, (_INT64_MIN if stop < 0 else stop), step
