"""How each op and layer runs on a batch of examples: the table the batcher reads.

A batched value carries a leading example axis (``(B, ...)``) in front of the shape one example
would have; shared values (parameters, inputs without ``lengths``/``examples``, constants) have
none. Every op and layer a spec can name is declared here once, with one of these rules:

- ``map``: elementwise with numpy broadcasting. Batched operands are first given the rank of
  the highest-ranked operand (ones after the example axis), so broadcasting an example against
  a shared operand of higher rank aligns as it did for one example.
- ``axes``: the listed attributes are axes of one example; they move one to the right (``None``
  for a reduction becomes "every axis but the example axis"). An axis out of range for one
  example is left to the per-example run, which reports it.
- ``shape``: the ``shape`` attribute gets ``B`` in front (``reshape``, ``broadcast_to``).
- ``last``: works over the last axis (or elementwise over ids) whatever the leading axes are;
  the other inputs (weights) must be shared.
- ``fold``: the op treats axis 0 of an example as independent samples (convolution, pooling,
  n-step layers given a batch of sequences): the example axis is merged into it and split out
  again. ``data`` names the inputs that carry examples; the rest must be shared.
- a custom function (``concat``, ``stack``, ``matmul``, ``get_item``, the losses, ...).
- ``Unbatchable(reason)``: a spec that uses it runs one example at a time, and says why.

An op or layer that is not in the table is not batchable ("no batching rule"). A rule that
meets a case it cannot express raises ``NotBatchable``: the batcher then runs that call one
example at a time, so an error is always the per-example run's located error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphcore import functions as F


class NotBatchable(Exception):
    """This call cannot run as a batch (the run falls back to one example at a time)."""


@dataclass(frozen=True)
class Rule:
    kind: str  # map | axes | shape | last | fold | custom
    attrs: tuple[str, ...] = ()  # axes: the attributes that are axes
    data: tuple[int, ...] | None = None  # fold/last: inputs carrying examples (None: all)
    apply: Callable | None = None  # custom: (call, args, flags, batch, attrs) -> result


@dataclass(frozen=True)
class Unbatchable:
    reason: str


# --- helpers --------------------------------------------------------------------------------

def _rank(x: Any, batched: bool) -> int:
    return np.ndim(x) - (1 if batched else 0)


def _lift(x: Any, batched: bool, rank: int) -> Any:
    """A batched value with ones inserted after the example axis up to ``rank`` axes."""
    have = _rank(x, batched)
    if not batched or have >= rank:
        return x
    shape = np.shape(x)
    return F.reshape(x, (shape[0],) + (1,) * (rank - have) + tuple(shape[1:]))


def _spread(x: Any, batched: bool, batch: int) -> Any:
    """A shared value repeated for every example (for ops that do not broadcast)."""
    return x if batched else F.broadcast_to(x, (batch,) + tuple(np.shape(x)))


def _axis(a: int, rank: int) -> int:
    if not -rank <= a < rank:
        raise NotBatchable(f"axis {a} out of range")
    return a % rank + 1


def _shift(value: Any, rank: int, none_means_all: bool) -> Any:
    if value is None:
        return tuple(range(1, rank + 1)) if none_means_all else None
    if isinstance(value, (list, tuple)):
        return tuple(_axis(int(a), rank) for a in value)
    return _axis(int(value), rank)


_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "prod"})


def apply_rule(rule: Rule, name: str, call: Callable, args: list, flags: list[bool],
               batch: int, attrs: dict[str, Any], defaults: dict[str, Any]) -> Any:
    """Run one op or layer on ``args`` (``flags``: which carry the example axis). ``call(args,
    attrs)`` runs it for real; the result has the example axis."""
    kind = rule.kind
    if kind == "map":
        rank = max(_rank(a, f) for a, f in zip(args, flags, strict=True))
        return call([_lift(a, f, rank) for a, f in zip(args, flags, strict=True)], attrs)
    if kind == "axes":
        rank = _rank(args[0], flags[0])
        if not flags[0]:
            raise NotBatchable("the shaped input is shared")
        new = dict(attrs)
        for key in rule.attrs:
            value = attrs.get(key, defaults.get(key))
            new[key] = _shift(value, rank, name in _REDUCTIONS)
        return call(args, new)
    if kind == "shape":
        if name == "broadcast_to":
            target = tuple(attrs["shape"])
            x = _lift(args[0], flags[0], len(target))
            return call([x], {**attrs, "shape": (batch,) + target})
        return call(args, {**attrs, "shape": (batch,) + tuple(attrs["shape"])})
    data = range(len(args)) if rule.data is None else rule.data
    if any(f for i, f in enumerate(flags) if i not in data):
        raise NotBatchable("a weight input carries examples")
    if kind == "last":
        return call(args, attrs)
    if kind == "fold":
        return _fold(call, args, flags, batch, attrs, data)
    return rule.apply(call, args, flags, batch, attrs)


def _fold(call, args, flags, batch, attrs, data) -> Any:
    folded = list(args)
    for i in data:
        if i >= len(args):
            continue
        x = _spread(args[i], flags[i], batch)
        shape = np.shape(x)
        if len(shape) < 2:
            raise NotBatchable("fold needs a sample axis")
        folded[i] = F.reshape(x, (batch * shape[1],) + tuple(shape[2:]))
    result = call(folded, attrs)
    return _unfold(result, batch)


def _unfold(result: Any, batch: int) -> Any:
    if isinstance(result, tuple):
        return tuple(_unfold(r, batch) for r in result)
    shape = np.shape(result)
    return F.reshape(result, (batch, shape[0] // batch) + tuple(shape[1:]))


# --- custom rules ---------------------------------------------------------------------------

def _join(call, args, flags, batch, attrs, stack: bool) -> Any:
    rank = max(_rank(a, f) for a, f in zip(args, flags, strict=True))
    axis = attrs.get("axis", 1 if not stack else 0)
    new_axis = _axis(int(axis), rank + 1 if stack else rank)
    spread = [_spread(a, f, batch) for a, f in zip(args, flags, strict=True)]
    return call(spread, {**attrs, "axis": new_axis})


def _concat(call, args, flags, batch, attrs):
    return _join(call, args, flags, batch, attrs, stack=False)


def _stack(call, args, flags, batch, attrs):
    return _join(call, args, flags, batch, attrs, stack=True)


def _split(call, args, flags, batch, attrs):
    rank = _rank(args[0], flags[0])
    return call(args, {**attrs, "axis": _axis(int(attrs.get("axis", 0)), rank)})


def _transpose(call, args, flags, batch, attrs):
    rank = _rank(args[0], flags[0])
    axes = attrs.get("axes")
    if axes is None:
        new = (0,) + tuple(range(rank, 0, -1))
    else:
        new = (0,) + tuple(_axis(int(a), rank) for a in axes)
    return call(args, {**attrs, "axes": new})


def _swapaxes(call, args, flags, batch, attrs):
    rank = _rank(args[0], flags[0])
    return call(args, {**attrs, "axis1": _axis(int(attrs["axis1"]), rank),
                       "axis2": _axis(int(attrs["axis2"]), rank)})


def _get_item(call, args, flags, batch, attrs):
    index = attrs["index"]
    parts = tuple(index) if isinstance(index, tuple) else (index,)
    advanced = [p for p in parts if isinstance(p, (list, np.ndarray))]
    if len(advanced) > 1 or any(isinstance(p, (bool, np.bool_)) for p in parts):
        raise NotBatchable("several advanced indices")
    return call(args, {**attrs, "index": (slice(None),) + parts})


def _permutate(call, args, flags, batch, attrs):
    """A batch of examples reordered by one shared permutation: the same op one axis to the
    right. Per-example indices would need a gather by (example, index) pairs, which no op
    here takes as data (``get_item``'s index is an attribute, fixed when traced)."""
    if flags[1]:
        raise NotBatchable("the indices differ between examples")
    rank = _rank(args[0], flags[0])
    return call(args, {**attrs, "axis": _axis(int(attrs.get("axis", 0)), rank)})


def _matmul(call, args, flags, batch, attrs):
    a, b = args
    fa, fb = flags
    ra, rb = _rank(a, fa), _rank(b, fb)
    if ra < 2 or rb < 2:
        raise NotBatchable("matmul of vectors")  # the op refuses them per example too
    rank = max(ra, rb)
    return call([_lift(a, fa, rank), _lift(b, fb, rank)], attrs)


def _per_example_mean(x: Any, batch: int) -> Any:
    return F.mean(F.reshape(x, (batch, -1)), axis=1)


def _mean_squared_error(call, args, flags, batch, attrs):
    a, b = (_spread(x, f, batch) for x, f in zip(args, flags, strict=True))
    if np.shape(a) != np.shape(b):
        raise NotBatchable("shapes differ")  # the op refuses them per example
    diff = a - b
    return _per_example_mean(diff * diff, batch)


def _softmax_cross_entropy(call, args, flags, batch, attrs):
    x, t = (_spread(a, f, batch) for a, f in zip(args, flags, strict=True))
    xs, ts = np.shape(x), np.shape(t)
    if len(xs) < 3 or len(ts) < 2 or xs[1] != ts[1]:
        raise NotBatchable("scores need (N, C, ...) per example")
    n = xs[1]
    flat_x = F.reshape(x, (batch * n,) + tuple(xs[2:]))
    flat_t = F.reshape(t, (batch * n,) + tuple(ts[2:]))
    nll = call([flat_x, flat_t], {**attrs, "reduce": "no"})
    if attrs.get("reduce", "mean") == "no":
        return F.reshape(nll, (batch, n) + tuple(np.shape(nll)[1:]))
    total = F.sum(F.reshape(nll, (batch, -1)), axis=1)
    if not attrs.get("normalize", True):
        return total / nll.dtype.type(max(n, 1))
    # the divisor made from the labels by ops, as for sigmoid_cross_entropy: a count read
    # from their values would be frozen into a static plan and wrong for other labels
    counted = F.sum(F.reshape(_counted(t, attrs.get("ignore_label", -1), nll.dtype),
                              (batch, -1)), axis=1)
    return total / F.maximum(counted, np.ones(batch, nll.dtype))


def _sigmoid_cross_entropy(call, args, flags, batch, attrs):
    """Each example's loss with its own run's divisor: its counted labels (``normalize``) or
    its axis 0 (Chainer's ``len(x)``). The count is made from the labels by ops, not read
    from their values, so a static plan counts again when it replays other labels."""
    x, t = (_spread(a, f, batch) for a, f in zip(args, flags, strict=True))
    xs = np.shape(x)
    if np.shape(t) != xs:
        raise NotBatchable("labels of another shape")  # the op refuses them per example
    losses = call([x, t], {**attrs, "reduce": "no"})  # elementwise, ignored labels zeroed
    if attrs.get("reduce", "mean") == "no":
        return losses
    total = F.sum(F.reshape(losses, (batch, -1)), axis=1)
    if not attrs.get("normalize", True):
        if len(xs) < 2:
            raise NotBatchable("len() of a 0-d example")  # the op fails per example
        return total / losses.dtype.type(max(xs[1], 1))
    counted = F.sum(F.reshape(_counted(t, attrs.get("ignore_label", -1), losses.dtype),
                              (batch, -1)), axis=1)
    return total / F.maximum(counted, np.ones(batch, losses.dtype))


def _counted(t, ignore: int, dtype) -> Any:
    """1 where a label is not ``ignore``, else 0, in ``dtype``. In int64 ``t - ignore`` is 0
    exactly where they are equal (wrapping cannot reach 0 otherwise) and any other integer is
    at least 1 in magnitude, so clipping its absolute value to 1 is exact; labels are made
    int64 first, which holds every other integer dtype's values but uint64's."""
    if np.dtype(t.dtype) == np.uint64 or not -2**63 < ignore < 2**63:
        raise NotBatchable("uint64 labels or an ignore_label beyond int64")
    labels = t if np.dtype(t.dtype) == np.int64 else F.cast(t, np.int64)
    return F.clip(abs(F.cast(labels - ignore, dtype)), 0.0, 1.0)


def _custom(fn: Callable, data: tuple[int, ...] | None = None) -> Rule:
    return Rule("custom", data=data, apply=fn)


_MAP = Rule("map")
_LAST = Rule("last", data=(0,))
_RANDOM = "draws random numbers per call: a batch would draw other numbers than one run per " \
    "example (it batches in evaluation mode, where it draws none)"

# Registry ops, by name.
OP_RULES: dict[str, Rule | Unbatchable] = {
    **{name: _MAP for name in (
        "abs", "add", "add_scalar", "cast", "clip", "copy", "div", "exp", "leaky_relu", "log",
        "maximum", "minimum", "mul", "multi_add", "neg", "pow", "pow_scalar", "rdiv_scalar",
        "relu", "rpow_scalar", "rsub_scalar", "scale", "sigmoid", "softplus", "sqrt", "square",
        "sub", "tanh", "where", "dropout")},
    **{name: Rule("axes", ("axis",)) for name in ("sum", "mean", "max", "min", "prod",
                                                   "softmax", "log_softmax")},
    "reshape": Rule("shape"),
    "broadcast_to": Rule("shape"),
    "linear": _LAST,
    "embed_id": _LAST,
    "layer_normalization": _LAST,
    "lstm": Rule("fold"),
    **{name: Rule("fold", data=(0,)) for name in (
        "convolution_1d", "convolution_2d", "deconvolution_1d", "deconvolution_2d",
        "average_pooling_1d", "average_pooling_2d", "max_pooling_1d", "max_pooling_2d",
        "local_response_normalization")},
    "concat": _custom(_concat),
    "stack": _custom(_stack),
    "split_axis": _custom(_split),
    "transpose": _custom(_transpose),
    "swapaxes": _custom(_swapaxes),
    "get_item": _custom(_get_item),
    "permutate": _custom(_permutate),
    "matmul": _custom(_matmul),
    "mean_squared_error": _custom(_mean_squared_error),
    "softmax_cross_entropy": _custom(_softmax_cross_entropy),
    "sigmoid_cross_entropy": _custom(_sigmoid_cross_entropy),
    "sum_to": Unbatchable("sums to a shape given for one example from the left, where the "
                          "example axis is"),
    "prod_others": Unbatchable("a gradient helper with no batching rule"),
    "accuracy": Unbatchable("a metric that reduces over the example's own axis 0 to one "
                            "value; no batching rule yet"),
    "transpose_sequence": Unbatchable("reorders a list of sequences, which a batch of "
                                      "examples cannot hold"),
}


def _sequence_layer(call, args, flags, batch, attrs):
    """lstm/gru layers take one sequence (l, in) or a batch of them (N, l, in)."""
    if _rank(args[0], flags[0]) == 2:
        return call(args, attrs)  # (B, l, in): a batch of the examples' sequences
    return _fold(call, args, flags, batch, attrs, (0,))


def _attention_layer(call, args, flags, batch, attrs):
    """``multi_head_attention`` on x, [x, mask] or [x, kv, mask]. An example's x (Lq, in) is
    one sequence: the examples become the layer's batch axis. An example's x (b, Lq, in) is a
    batch of its own: the examples are folded into it (B * b rows, as ``fold`` does) and split
    out again. kv follows x; the mask is made to give every row of the layer's batch what its
    example's run gives it (``_attention_mask``)."""
    if len(args) not in (1, 2, 3):
        raise NotBatchable("not x, [x, mask] or [x, kv, mask]")  # the layer refuses it
    shapes = [np.shape(a)[1:] if f else np.shape(a) for a, f in zip(args, flags, strict=True)]
    seqs = 2 if len(args) == 3 else 1
    rank = len(shapes[0])
    if rank not in (2, 3) or any(len(s) != rank for s in shapes[1:seqs]):
        raise NotBatchable("x and kv need (Lq, in) or (b, Lq, in), one rank")  # as the layer
    samples = shapes[0][0] if rank == 3 else None
    new = [_attention_rows(a, f, s, batch, samples, i > 0) for i, (a, f, s) in
           enumerate(zip(args[:seqs], flags[:seqs], shapes[:seqs], strict=True))]
    if len(args) > 1:
        new.append(_attention_mask(args[-1], flags[-1], shapes[-1], batch, samples))
    result = call(new, attrs)
    return result if samples is None else _unfold(result, batch)


def _attention_rows(x, flag: bool, shape: tuple, batch: int, samples: int | None,
                    is_kv: bool) -> Any:
    """x or kv with the layer's batch axis: B sequences, or B * ``samples`` when an example
    has its own. A kv whose axis 0 is 1 is broadcast over x's samples by the layer, so
    a shared one stays as it is and a per-example one is repeated for them."""
    if samples is None:
        return _spread(x, flag, batch)  # the layer needs x and kv of one rank
    if shape[0] not in (1, samples):
        raise NotBatchable("kv's axis 0 is neither 1 nor x's")  # the layer refuses it
    if is_kv and not flag and shape[0] == 1:
        return x
    x = _spread(x, flag, batch)
    if shape[0] != samples:
        x = F.broadcast_to(x, (batch, samples) + tuple(shape[1:]))
    return F.reshape(x, (batch * samples,) + tuple(shape[1:]))


def _attention_mask(mask, flag: bool, shape: tuple, batch: int, samples: int | None) -> Any:
    """The layer gives one example's mask a head axis (``(a, Lq, Lk)`` -> ``(a, 1, Lq, Lk)``,
    a = 1 or the example's own batch) or, with fewer axes, broadcasts it from the right. A
    shared mask of one row does the same for every row of a batch, so it stays as it is;
    otherwise each example's rows become rows of the batch. A mask that broadcasts for no
    example is refused here, since a batch of as many rows could make it broadcast."""
    if len(shape) > 3:
        raise NotBatchable("a mask of more than 3 axes")  # the layer refuses it per example
    lead = shape[0] if len(shape) == 3 else 1
    if lead not in (1, samples or 1):
        raise NotBatchable("a mask whose axis 0 is neither 1 nor x's")
    if not flag and lead == 1:
        return mask
    inner = tuple(shape[1:]) if len(shape) == 3 else (1,) * (2 - len(shape)) + tuple(shape)
    if samples is None:
        return F.reshape(_spread(mask, flag, batch), (batch,) + inner)
    rows = F.reshape(_spread(mask, flag, batch), (batch, lead) + inner)
    if lead != samples:
        rows = F.broadcast_to(rows, (batch, samples) + inner)
    return F.reshape(rows, (batch * samples,) + inner)


def _linear_layer(call, args, flags, batch, attrs):
    n = attrs.get("n_batch_axes")
    return call(args, {} if n is None else {"n_batch_axes": n + 1})


# Layers (spec.layers), by name.
LAYER_RULES: dict[str, Rule | Unbatchable] = {
    "linear": _custom(_linear_layer, data=(0,)),
    "embed_id": _LAST,
    "layer_normalization": _LAST,
    "lstm": _custom(_sequence_layer, data=(0,)),
    "gru": _custom(_sequence_layer, data=(0,)),
    "convolution_1d": Rule("fold"),
    "convolution_2d": Rule("fold"),
    "deconvolution_1d": Rule("fold"),
    "deconvolution_2d": Rule("fold"),
    "batch_normalization": Unbatchable(
        "normalizes with statistics over the example's own axis 0: one batch of examples "
        "would share statistics that each example computes alone"),
    "multi_head_attention": _custom(_attention_layer),
}


def rule_for(name: str, layer: bool) -> Rule | Unbatchable:
    table = LAYER_RULES if layer else OP_RULES
    return table.get(name, Unbatchable(f"no batching rule for {'layer' if layer else 'op'} "
                                       f"'{name}'"))


RANDOM_REASON = _RANDOM
