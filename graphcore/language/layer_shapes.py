"""The shape rules of the spec's parameterized layers (``layers.LAYERS``): what a layer makes
of its inputs' ``TensorType``s, and the shapes its parameters take from them.

A rule is ``(name, attrs, inputs) -> (outputs, parameters)``. ``parameters`` maps each
parameter a lazily sized layer creates on its first call (``linear`` without ``in_size``:
``W`` from the input's last axis) to its shape, so the shape pass can check that every use of
a shared scope gets inputs of the sizes its first use fixed. Rules raise the engine's
``ShapeInferenceError``/``DTypeInferenceError`` (``graphcore.shapes``) for inputs the layer
can never take; the layers' real forwards are the reference (``tests/language``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphcore import shapes
from graphcore.config import config
from graphcore.registry import get_op
from graphcore.shapes import UNKNOWN, Dim, Shape, ShapeInferenceError, TensorType

Rule = tuple[tuple[TensorType, ...], dict[str, Shape]]


class _Layer:
    """What ``shapes.fail`` names: the layer, as the interpreter's messages do."""

    def __init__(self, name: str) -> None:
        self.name = name


def _fail(name: str, inputs: tuple[TensorType, ...], problem: str):
    raise ShapeInferenceError(name, problem, tuple(t.shape for t in inputs))


def _float(name: str, inputs: tuple[TensorType, ...], t: TensorType) -> np.dtype | None:
    if t.dtype is not None and t.dtype.kind != "f":
        shapes.fail_dtype(_Layer(name), inputs, f"expected a float input, got {t.dtype}")
    return t.dtype


def _sized(name: str, inputs: tuple[TensorType, ...], got: Dim, given: Any, what: str) -> Dim:
    """``got`` (a dim the input has) against the size attribute ``what`` gives (``"the
    input's last axis (in_size)"``; None: lazy, taken from the input)."""
    if given is None:
        return got
    if shapes.conflict(got, given):
        axis, attribute = what.rsplit(" (", 1)
        _fail(name, inputs, f"{axis} is {got}, but {attribute.rstrip(')')} is {given}")
    return shapes.merge(got, given)


def linear(name: str, attrs: dict[str, Any], inputs: tuple[TensorType, ...]) -> Rule:
    x, = inputs
    dtype = _float(name, inputs, x)
    n = attrs.get("n_batch_axes")
    shape = x.shape
    if n is not None and len(shape) > n + 1:  # flattened after the first n axes
        shape = shape[:n] + (shapes.product(shape[n:]),)
    if not shape:
        _fail(name, inputs, "cannot map a 0-d input; expected (..., in)")
    out = attrs["out_size"]
    in_size = _sized(name, inputs, shape[-1], attrs.get("in_size"), "the input's last axis "
                     "(in_size)")
    params = {"W": (out, in_size)}
    return (TensorType(shape[:-1] + (out,), dtype),), params


def embed_id(name: str, attrs: dict[str, Any], inputs: tuple[TensorType, ...]) -> Rule:
    x, = inputs
    if x.dtype is not None and x.dtype.kind not in "iu":
        shapes.fail_dtype(_Layer(name), inputs, f"ids must be integers, got {x.dtype}")
    out = attrs["out_size"]
    return ((TensorType(x.shape + (out,), np.dtype(config.dtype)),),
            {"W": (attrs["in_size"], out)})


def batch_normalization(name: str, attrs: dict[str, Any],
                        inputs: tuple[TensorType, ...]) -> Rule:
    x, = inputs
    _float(name, inputs, x)
    if x.ndim < 2:
        _fail(name, inputs, "expected (batch, channels, ...), at least 2 dimensions")
    channels = _sized(name, inputs, x.shape[1], attrs.get("size"), "axis 1 (size)")
    return (x,), {"gamma": (channels,)}


def layer_normalization(name: str, attrs: dict[str, Any],
                        inputs: tuple[TensorType, ...]) -> Rule:
    x, = inputs
    _float(name, inputs, x)
    if x.ndim < 1:
        _fail(name, inputs, "cannot normalize a 0-d input")
    size = _sized(name, inputs, x.shape[-1], attrs.get("size"), "the last axis (size)")
    return (x,), {"gamma": (size,)}


def recurrent(name: str, attrs: dict[str, Any], inputs: tuple[TensorType, ...]) -> Rule:
    x, = inputs
    dtype = _float(name, inputs, x)
    if x.ndim not in (2, 3):
        _fail(name, inputs, "expected a sequence (length, features) or a batch of them "
                            "(batch, length, features)")
    in_size = _sized(name, inputs, x.shape[-1], attrs.get("in_size"), "the features axis "
                     "(in_size)")
    out = attrs["out_size"]
    return (TensorType(x.shape[:-1] + (out,), dtype),), {"0/w0": (out, in_size)}


def multi_head_attention(name: str, attrs: dict[str, Any],
                         inputs: tuple[TensorType, ...]) -> Rule:
    if len(inputs) not in (1, 2, 3):
        _fail(name, inputs, f"takes x, [x, mask] or [x, kv, mask], got {len(inputs)} inputs")
    x = inputs[0]
    kv = inputs[1] if len(inputs) == 3 else x
    dtype = _float(name, inputs, x)
    _float(name, inputs, kv)
    if x.ndim not in (2, 3) or kv.ndim != x.ndim:
        _fail(name, inputs, "expected x and kv of shape (length, in) or (batch, length, in)")
    size = _sized(name, inputs, x.shape[-1], attrs.get("in_size"), "x's last axis (in_size)")
    size = shapes.expect_dim(_Layer(name), inputs, kv.shape[-1], size, "kv's last axis")
    heads = attrs["n_heads"]
    if isinstance(size, int) and size % heads:
        _fail(name, inputs, f"in_size {size} is not divisible by n_heads {heads}")
    if len(inputs) > 1:
        mask = inputs[-1]
        if mask.dtype is not None and mask.dtype != np.bool_:
            shapes.fail_dtype(_Layer(name), inputs, f"the mask (the last of several inputs) "
                              f"must be boolean, got {mask.dtype}")
        want = x.shape[:-2] + (x.shape[-2], kv.shape[-2])
        shapes.broadcast(_Layer(name), inputs, [mask.shape, want])
    out = attrs.get("out_size") or size
    return (TensorType(x.shape[:-1] + (out,), dtype),), {"W_q": (size, size)}


def convolution(transposed: bool):
    """The rule of ``convolution_Nd`` (``transposed``: ``deconvolution_Nd``): the op of the
    same name's rule on the filter the layer makes."""

    def rule(name: str, attrs: dict[str, Any], inputs: tuple[TensorType, ...]) -> Rule:
        x, = inputs
        _float(name, inputs, x)
        ndim = 2 if name.endswith("2d") else 1
        if x.ndim != ndim + 2:
            _fail(name, inputs, f"expected (batch, channels{', height, width' * (ndim == 2)}"
                                f"{', width' * (ndim == 1)}), {ndim + 2} dimensions")
        channels = _sized(name, inputs, x.shape[1], attrs.get("in_channels"),
                          "axis 1 (in_channels)")
        groups, out = attrs.get("groups", 1), attrs["out_channels"]
        ksize = attrs["ksize"]
        ksize = tuple(ksize) if isinstance(ksize, list | tuple) else (ksize,) * ndim
        if len(ksize) != ndim:
            _fail(name, inputs, f"ksize must be an integer or {ndim} integers, got "
                                f"{list(ksize)}")
        inner = channels // groups if isinstance(channels, int) else UNKNOWN
        W = ((channels, out // groups) if transposed else (out, inner)) + ksize
        options = {k: tuple(v) if isinstance(v, list) else v for k, v in attrs.items()
                   if k in ("stride", "pad", "dilate", "groups", "outsize")}
        op = get_op(name)(**options)
        types = (x, TensorType(W, x.dtype))
        if not attrs.get("nobias"):
            types += (TensorType((out,), x.dtype),)
        return tuple(shapes.infer(op, types)), {"W": W}

    return rule

