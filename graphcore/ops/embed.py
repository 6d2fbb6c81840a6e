"""Embedding lookup ``W[ids]`` and its gradient, a scatter-add of rows into ``W``'s shape."""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore.function_node import Attr, FunctionNode
from graphcore.registry import register_op


def _check_ids(label: str, ids: np.ndarray, W: np.ndarray, ignore_label) -> np.ndarray:
    if ids.dtype.kind not in "iu":
        raise errors.DTypeError(f"{label}: ids must be integers, got {ids.dtype}")
    if W.ndim != 2:
        raise errors.ShapeError(f"{label}: W must be 2-D (vocabulary, size), got {W.shape}")
    keep = ids != ignore_label if ignore_label is not None else np.ones(ids.shape, bool)
    bad = keep & ((ids < 0) | (ids >= W.shape[0]))
    if bad.any():
        raise errors.ShapeError(f"{label}: id {int(ids[bad][0])} is out of range for a "
                                f"vocabulary of {W.shape[0]}")
    return keep


@register_op
class EmbedIDFunction(FunctionNode):
    """Rows of ``W`` picked by integer ``ids``; ``ignore_label`` ids give zero rows."""

    __slots__ = ("ignore_label",)
    name = "embed_id"
    label = "EmbedIDFunction"
    arity = 2
    attributes = {"ignore_label": Attr((int, type(None)), None, doc="id that maps to zeros")}

    def shape_rule(self, inputs):
        ids, W = inputs
        if ids.dtype is not None and ids.dtype.kind not in "iu":
            shapes.fail_dtype(self, inputs, f"ids must be integers, got {ids.dtype}")
        shapes.expect_ndim(self, inputs, W, 2, "W (vocabulary, size)")
        return shapes.TensorType(ids.shape + W.shape[1:], W.dtype),

    def __init__(self, ignore_label: int | None = None) -> None:
        self.ignore_label = ignore_label

    def forward(self, inputs):
        ids, W = inputs
        keep = _check_ids(self.label, ids, W, self.ignore_label)
        if keep.all():
            return W[ids],
        y = W[np.where(keep, ids, 0)]
        y[~keep] = 0
        return y,

    def backward(self, indexes, grad_outputs):
        ids = self.inputs[0]._array
        W = self.inputs[1]
        return None, embed_id_grad(grad_outputs[0], ids, W.shape[0], self.ignore_label)


@register_op
class EmbedIDGrad(FunctionNode):
    """Scatter-add rows of ``gy`` into a ``(vocabulary, size)`` array at ``ids``."""

    __slots__ = ("vocabulary", "ignore_label")
    name = "embed_id_grad"
    label = "EmbedIDGrad"
    arity = 2
    attributes = {"vocabulary": Attr(int, required=True, doc="rows of the result", low=1),
                  "ignore_label": Attr((int, type(None)), None, doc="id that is skipped")}

    def shape_rule(self, inputs):
        ids, gy = inputs
        return shapes.TensorType((self.vocabulary, gy.shape[-1] if gy.ndim else None), gy.dtype),

    def __init__(self, vocabulary: int, ignore_label: int | None = None) -> None:
        self.vocabulary = vocabulary
        self.ignore_label = ignore_label

    def forward(self, inputs):
        ids, gy = inputs
        return _scatter_rows(ids, gy, self.vocabulary, self.ignore_label),

    def backward(self, indexes, grad_outputs):
        return None, embed_id(self.inputs[0], grad_outputs[0], self.ignore_label)


def _scatter_rows(ids, gy, vocabulary, ignore_label):
    gW = np.zeros((vocabulary,) + gy.shape[ids.ndim:], gy.dtype)
    if ignore_label is not None:
        keep = ids != ignore_label
        ids, gy = ids[keep], gy[keep]
    np.add.at(gW, ids, gy)
    return gW


def embed_id_grad(gy, ids, vocabulary, ignore_label=None):
    """Array-generic gradient of ``embed_id`` with respect to ``W``."""
    if isinstance(gy, np.ndarray):
        return _scatter_rows(ids, gy, vocabulary, ignore_label)
    return EmbedIDGrad(vocabulary, ignore_label).apply((ids, gy))[0]


def embed_id(x, W, ignore_label: int | None = None):
    """Look up rows of ``W`` (``(vocabulary, size)``) for the integer ids in ``x``."""
    return EmbedIDFunction(ignore_label).apply((x, W))[0]
