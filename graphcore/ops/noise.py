"""Random ops of training: dropout (zero a random ``ratio`` of elements, scale the rest by
1/(1-ratio)), zoneout (keep a random ``ratio`` of the previous state), simplified dropconnect
(a linear layer whose weights are dropped at random, per sample), and Gumbel-softmax sampling.

Randomness comes from numpy's global generator (``np.random.seed`` makes runs repeatable, as
in Chainer). Each op draws its mask on its first forward and keeps it as ``mask`` (zoneout:
``flag_h``/``flag_x``), so one op object applied again reuses it, as Chainer's do. The ops are
impure, so static-mode passes never merge or fold them.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.config import config
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.array import broadcast_to, cast, reshape
from graphcore.ops.linalg import matmul
from graphcore.ops.loss import softmax
from graphcore.ops.reduction import sum as sum_
from graphcore.registry import register_op
from graphcore.variable import as_variable


@register_op
class Dropout(FunctionNode):
    """Randomly zero elements with probability ``ratio`` (training only)."""

    __slots__ = ("ratio", "mask")
    name = "dropout"
    label = "Dropout"
    arity = 1
    pure = False
    elementwise = True
    attributes = {"ratio": Attr(float, 0.5, doc="probability of dropping", low=0.0, high=1.0)}
    shape_rule = shapes.same_as_first

    def __init__(self, ratio: float = 0.5, mask: np.ndarray | None = None) -> None:
        if not 0.0 <= ratio < 1.0:
            raise ValueError(f"Dropout: ratio must be in [0, 1), got {ratio}")
        self.ratio = ratio
        self.mask = mask  # the scaled mask, kept for backward and for another apply

    def forward(self, inputs):
        x, = inputs
        mask = self.mask
        if mask is None:
            keep = np.random.random_sample(x.shape) >= self.ratio
            mask = keep.astype(x.dtype) * x.dtype.type(1.0 / (1.0 - self.ratio))
            self.mask = mask
        y = x * mask
        return (y if y.dtype == x.dtype else y.astype(x.dtype)),

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        mask = self.mask
        return gy * (mask if mask.dtype == gy.dtype else mask.astype(gy.dtype)),


def dropout(x, ratio: float = 0.5, mask: np.ndarray | None = None, return_mask: bool = False):
    """Dropout in training mode; the identity (no node) when ``config.train`` is False.

    ``mask`` (already scaled: ``0`` or ``1/(1-ratio)``) reuses a fixed pattern, as gradient
    checks do; ``return_mask`` returns ``(y, mask)`` as well (the mask is None outside
    training), as Chainer's ``F.dropout``.
    """
    if not config.train:
        y = as_variable(x)
        return (y, None) if return_mask else y
    node = Dropout(ratio, mask)
    y = node.apply((x,))[0]
    return (y, node.mask) if return_mask else y


@register_op
class Zoneout(FunctionNode):
    """``h`` where a random ``ratio`` of elements is kept, ``x`` elsewhere (Chainer's
    ``F.zoneout``); ``flag_h``/``flag_x`` are the boolean masks, drawn on the first call."""

    __slots__ = ("ratio", "flag_h", "flag_x")
    name = "zoneout"
    label = "Zoneout"
    arity = 2
    pure = False
    elementwise = True
    attributes = {"ratio": Attr(float, 0.5, doc="probability of keeping h", low=0.0,
                                high=1.0)}
    shape_rule = shapes.broadcasting

    def __init__(self, ratio: float = 0.5, flag_x: np.ndarray | None = None) -> None:
        self.ratio = ratio
        self.flag_x = flag_x  # given: a fixed pattern (True: take x), as gradient checks use
        self.flag_h = None if flag_x is None else ~flag_x

    def forward(self, inputs):
        h, x = inputs
        if self.flag_x is None:
            self.flag_x = np.random.rand(*x.shape) >= self.ratio
            self.flag_h = ~self.flag_x
        return h * self.flag_h + x * self.flag_x,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        return g.mask(gy, self.flag_h), g.mask(gy, self.flag_x)


def zoneout(h, x, ratio: float = 0.5):
    """Chainer's ``F.zoneout``: in training, each element is the previous state ``h`` with
    probability ``ratio``, else the new ``x``; outside training, ``x``."""
    if not config.train:
        return as_variable(x)
    return Zoneout(float(ratio)).apply((h, x))[0]


@register_op
class SimplifiedDropconnect(FunctionNode):
    """``y = x W^T + b`` with each weight dropped with probability ``ratio`` and the rest
    scaled by ``1/(1-ratio)`` (Chainer's ``F.simplified_dropconnect``).

    ``mask`` is boolean: ``(n, M, N)`` (a pattern per sample, ``use_batchwise_mask``) or
    ``(M, N)``; drawn on the first forward when not given. ``x`` (``(n, ...)``, flattened to
    ``(n, N)``) and ``W`` (``(M, N)``) may differ in float dtype: ``y`` has ``x``'s, each
    gradient its input's.
    """

    __slots__ = ("ratio", "mask", "use_batchwise_mask")
    name = "simplified_dropconnect"
    label = "SimplifiedDropconnect"
    arity = None
    pure = False
    attributes = {
        "ratio": Attr(float, 0.5, doc="probability of dropping a weight", low=0.0, high=1.0),
        "use_batchwise_mask": Attr(bool, True, doc="draw one mask per sample"),
    }

    def shape_rule(self, inputs):
        if len(inputs) not in (2, 3):
            shapes.fail(self, inputs, f"takes x, W and an optional b, got {len(inputs)} inputs")
        x, W = inputs[:2]
        shapes.expect_ndim(self, inputs, W, 2, "W (out, in)")
        if x.ndim < 2 or shapes.conflict(shapes.product(x.shape[1:]), W.shape[1]):
            shapes.fail(self, inputs, f"x's features do not fit W's {W.shape[1]} inputs")
        return shapes.TensorType((x.shape[0], W.shape[0]), x.dtype),

    def __init__(self, ratio: float = 0.5, mask: np.ndarray | None = None,
                 use_batchwise_mask: bool = True) -> None:
        if not 0.0 <= ratio < 1.0:
            raise errors.ArgumentValueError(f"SimplifiedDropconnect: ratio must be in [0, 1), "
                                            f"got {ratio}")
        self.ratio = ratio
        self.mask = mask
        self.use_batchwise_mask = use_batchwise_mask

    def _check(self, inputs) -> None:
        if len(inputs) not in (2, 3):
            raise errors.ShapeError(f"SimplifiedDropconnect: takes x, W and an optional b, got "
                                    f"{len(inputs)} inputs")
        x, W = inputs[:2]
        if x.dtype.kind != "f" or W.dtype.kind != "f":
            raise errors.DTypeError(f"SimplifiedDropconnect: x and W must be floating-point, "
                                    f"got {x.dtype} and {W.dtype}")
        if x.ndim < 2 or W.ndim != 2 or int(np.prod(x.shape[1:])) != W.shape[1]:
            raise errors.ShapeError(f"SimplifiedDropconnect: x {x.shape} does not fit W "
                                    f"{W.shape} (x needs n rows of W.shape[1] elements)")
        if len(inputs) == 3:
            b = inputs[2]
            if b.dtype != x.dtype or b.shape != (W.shape[0],):
                raise errors.ShapeError(f"SimplifiedDropconnect: b must be ({W.shape[0]},) of "
                                        f"x's dtype {x.dtype}, got {b.shape} {b.dtype}")
        if self.mask is not None:
            want = (x.shape[0],) + W.shape if self.use_batchwise_mask else W.shape
            if self.mask.shape != want:
                raise errors.ShapeError(f"SimplifiedDropconnect: mask must have shape {want}, "
                                        f"got {self.mask.shape}")

    def _scaled_mask(self, dtype) -> np.ndarray:
        return self.mask * np.asarray(1.0 / (1.0 - self.ratio), dtype)

    def forward(self, inputs):
        self._check(inputs)
        x, W = inputs[:2]
        if self.mask is None:
            shape = ((x.shape[0],) + W.shape) if self.use_batchwise_mask else W.shape
            self.mask = np.random.rand(*shape) >= self.ratio
        x2 = x.reshape(len(x), -1)
        Wm = W * self._scaled_mask(W.dtype)
        if Wm.ndim == 3:
            y = np.einsum("nmk,nk->nm", Wm, x2.astype(Wm.dtype, copy=False))
        else:
            y = x2.astype(Wm.dtype, copy=False) @ Wm.T
        y = y.astype(x.dtype, copy=False)
        if len(inputs) == 3:
            y += inputs[2]
        return y,

    def backward(self, indexes, grad_outputs):
        # Written with the ops, so that a double backward records them; a first-order walk
        # (backprop off) gets their arrays.
        gy, = grad_outputs
        first_order = isinstance(gy, np.ndarray)
        x, W = self.inputs[:2]
        n, (m, k) = x.shape[0], W.shape
        mask = self._scaled_mask(W.dtype)
        gy_w = cast(gy, W.dtype) if gy.dtype != W.dtype else gy
        grads = [None] * len(self.inputs)
        if 0 in indexes:
            Wm = W * mask
            if Wm.ndim == 2:
                Wm = broadcast_to(Wm, (n, m, k))
            gx = reshape(matmul(reshape(gy_w, (n, 1, m)), Wm), x.shape)
            grads[0] = cast(gx, x.dtype) if x.dtype != W.dtype else gx
        if 1 in indexes:
            x2 = reshape(x, (n, k))
            x2 = cast(x2, W.dtype) if x.dtype != W.dtype else x2
            outer = reshape(gy_w, (n, m, 1)) * reshape(x2, (n, 1, k))
            if mask.ndim == 3:
                grads[1] = sum_(outer * mask, axis=0)
            else:
                grads[1] = sum_(outer, axis=0) * mask
        if len(self.inputs) == 3 and 2 in indexes:
            grads[2] = sum_(gy, axis=0)
        if first_order:
            return tuple(None if gx is None else getattr(gx, "array", gx) for gx in grads)
        return tuple(grads)


def simplified_dropconnect(x, W, b=None, ratio: float = 0.5, train: bool = True, mask=None,
                           use_batchwise_mask: bool = True):
    """Chainer's ``F.simplified_dropconnect``: a linear layer ``x W^T + b`` whose weights are
    dropped with probability ``ratio`` (outside ``train``, none is: ratio 0), per sample when
    ``use_batchwise_mask``. ``mask`` (boolean, ``(n, M, N)`` or ``(M, N)``) fixes the
    pattern."""
    if not train:
        ratio = 0.0
    if mask is not None:
        mask = np.asarray(getattr(mask, "array", mask))
    node = SimplifiedDropconnect(float(ratio), mask, use_batchwise_mask)
    return node.apply((x, W) if b is None else (x, W, b))[0]


def gumbel_softmax(log_pi, tau: float = 0.1, axis: int = 1):
    """Chainer's ``F.gumbel_softmax``: ``softmax((log_pi + g) / tau)`` along ``axis`` with
    ``g`` Gumbel noise, a differentiable sample close to one-hot for small ``tau``."""
    data = getattr(log_pi, "array", log_pi)
    if data.ndim < 1:
        return as_variable(np.ones((), data.dtype))
    noise = np.random.gumbel(size=data.shape).astype(data.dtype)
    return softmax((log_pi + noise) * data.dtype.type(1.0 / tau), axis=axis)
