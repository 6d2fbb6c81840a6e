"""Chainer's LSTM activation ``F.lstm(c_prev, x) -> (c, h)`` as one op, and its gradient
``LSTMGrad`` as another (Chainer's ``chainer.functions.rnn.lstm.LSTMGrad``).

One node instead of the dozen a composite records (reshape, split, three sigmoids, two tanh,
products, a sum): the activated gates are kept for backward, so a first-order backward is a
few elementwise passes. Under double backprop the backward is an ``LSTMGrad`` node, which
recomputes the gates from the recorded input; its own gradient is the vector-Jacobian product
of that formula (written with ``graphcore.generic``, so it is differentiable again).

As in Chainer, ``c_prev`` may hold more rows than ``x`` (sequences sorted by decreasing
length): the rows past ``x``'s batch are carried to ``c`` unchanged and have no ``h``.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore import generic as g
from graphcore.backprop import grad
from graphcore.config import config, using_config
from graphcore.function_node import FunctionNode
from graphcore.ops.activation import sigmoid, tanh
from graphcore.ops.array import concat, reshape
from graphcore.ops.checks import is_float
from graphcore.registry import register_op


def _activate(x: np.ndarray, n: int) -> np.ndarray:
    """The activated gates, (B, n, 4, ...): sigmoid of every pre-activation, computed on the
    contiguous array (a strided pass per gate costs ~10x more), then tanh for the a gates."""
    act = x * 0.5
    np.tanh(act, out=act)
    act *= 0.5
    act += 0.5
    act = act.reshape((x.shape[0], n, 4) + x.shape[2:])
    np.tanh(x.reshape(act.shape)[:, :, 0], out=act[:, :, 0])
    return act


@register_op
class LSTM(FunctionNode):
    """``x`` holds the gate pre-activations (a, i, f, o) interleaved per unit along axis 1
    (``(B, 4n, ...)``); ``c = tanh(a) sig(i) + sig(f) c_prev``, ``h = sig(o) tanh(c)``."""

    __slots__ = ()
    name = "lstm"
    label = "LSTM"
    arity = 2
    _out_keep = (0,)

    def shape_rule(self, inputs):
        c_prev, x = inputs
        shapes.float_like_first(self, inputs[1:])
        if x.ndim < 2 or c_prev.ndim != x.ndim:
            shapes.fail(self, inputs, "expected x (B, 4n, ...) and c_prev (B', n, ...)")
        four_n = x.shape[1]
        if isinstance(four_n, int) and four_n % 4:
            shapes.fail(self, inputs, f"x's axis 1 ({four_n}) is not 4 * n")
        n = four_n // 4 if isinstance(four_n, int) else shapes.UNKNOWN
        unit = (n,) + x.shape[2:]
        if any(shapes.conflict(a, b) for a, b in zip(c_prev.shape[1:], unit, strict=True)):
            shapes.fail(self, inputs, "expected x (B, 4n, ...) and c_prev (B', n, ...)")
        if isinstance(c_prev.shape[0], int) and isinstance(x.shape[0], int) and (
                c_prev.shape[0] < x.shape[0]):
            shapes.fail(self, inputs, "the batch size of x must be at most that of c_prev")
        unit = tuple(map(shapes.merge, c_prev.shape[1:], unit))
        dtype = shapes.same_dtype(self, inputs, inputs)
        return (shapes.TensorType(c_prev.shape[:1] + unit, dtype),
                shapes.TensorType(x.shape[:1] + unit, dtype))

    def forward(self, inputs):
        c_prev, x = inputs
        is_float(self.label, x)
        _check_cell(self.label, c_prev, x)
        n, batch = x.shape[1] // 4, x.shape[0]
        act = _activate(x, n)
        c = act[:, :, 0] * act[:, :, 1]
        carried = c_prev.shape[0] > batch
        c += act[:, :, 2] * (c_prev[:batch] if carried else c_prev)
        tanh_c = np.tanh(c)
        h = act[:, :, 3] * tanh_c
        self._saved = (act, tanh_c)
        if carried:
            c = np.concatenate([c, c_prev[batch:]])
        return c, h

    def backward(self, indexes, grad_outputs):
        c_prev, x = self.get_retained_inputs()
        gc, gh = grad_outputs
        if not config.double_backprop and type(gc) is np.ndarray and type(gh) is np.ndarray:
            return self._backward_arrays(indexes, c_prev, x.shape, gc, gh)
        # double backprop: an LSTMGrad node, which recomputes the gates from the recorded x
        c = self.get_retained_outputs()[0]
        gc_prev, gx = LSTMGrad().apply((c_prev, x, c, gc, gh))
        return (gc_prev if 0 in indexes else None), (gx if 1 in indexes else None)

    def _backward_arrays(self, indexes, c_prev, x_shape, gc, gh):
        """First order, on the gates kept by forward; the per-gate factors are multiplied by
        the activations' derivatives in one contiguous pass."""
        act, tanh_c = self._saved
        a, i, f, o = (act[:, :, k] for k in range(4))
        batch = act.shape[0]
        carried = gc[batch:] if gc.shape[0] > batch else None
        if carried is not None:
            gc, c_prev = gc[:batch], c_prev[:batch]
        gc_total = 1 - tanh_c * tanh_c
        gc_total *= o
        gc_total *= gh
        gc_total += gc
        gx = None
        if 1 in indexes:
            gx = np.empty_like(act)
            np.multiply(gc_total, i, out=gx[:, :, 0])
            np.multiply(gc_total, a, out=gx[:, :, 1])
            np.multiply(gc_total, c_prev, out=gx[:, :, 2])
            np.multiply(gh, tanh_c, out=gx[:, :, 3])
            slope = 1 - act
            slope *= act  # sigmoid' = s (1 - s); the a gates: tanh' = 1 - a^2, below
            np.multiply(a, a, out=slope[:, :, 0])
            np.subtract(1, slope[:, :, 0], out=slope[:, :, 0])
            gx *= slope
            gx = gx.reshape(x_shape)
        gc_prev = None
        if 0 in indexes:
            gc_prev = gc_total * f
            if carried is not None:
                gc_prev = np.concatenate([gc_prev, carried])
        return gc_prev, gx


def _check_cell(label: str, c_prev: np.ndarray, x: np.ndarray) -> None:
    n = x.shape[1] // 4 if x.ndim >= 2 else 0
    if (x.ndim < 2 or x.shape[1] != 4 * n or c_prev.ndim != x.ndim
            or c_prev.shape[1:] != (n,) + x.shape[2:] or c_prev.dtype != x.dtype):
        raise errors.ShapeError(
            f"{label}: expected x (B, 4n, ...) and c_prev (B', n, ...) of x's dtype, got "
            f"x {x.shape} {x.dtype}, c_prev {c_prev.shape} {c_prev.dtype}")
    if c_prev.shape[0] < x.shape[0]:
        raise errors.ShapeError(
            f"{label}: the batch size of x ({x.shape[0]}) must be at most that of c_prev "
            f"({c_prev.shape[0]})")


def _join(head, tail):
    if isinstance(head, np.ndarray) and isinstance(tail, np.ndarray):
        return np.concatenate([head, tail])
    return concat((head, tail), axis=0)


def _cell_grads(c_prev, x, c_next, gc, gh):
    """The LSTM cell's gradients ``(gc_prev, gx)`` from its inputs, its output ``c_next`` and
    the output gradients (arrays in, arrays out; Variables in, a recorded graph out)."""
    batch, n = x.shape[0], x.shape[1] // 4
    carried = c_prev.shape[0] > batch
    if carried:
        c_prev, c_next, gc, gc_rest = c_prev[:batch], c_next[:batch], gc[:batch], gc[batch:]
    gates = g.reshape(x, (batch, n, 4) + x.shape[2:])
    a = g.tanh(gates[:, :, 0])
    i, f, o = (g.sigmoid(gates[:, :, k]) for k in (1, 2, 3))
    tanh_c = g.tanh(c_next)
    gc_total = gc + gh * o * (1 - tanh_c * tanh_c)
    parts = [gc_total * i * (1 - a * a), gc_total * a * i * (1 - i),
             gc_total * c_prev * f * (1 - f), gh * tanh_c * o * (1 - o)]
    gx = g.reshape(g.stack(parts, axis=2), x.shape)
    gc_prev = gc_total * f
    return (_join(gc_prev, gc_rest) if carried else gc_prev), gx


@register_op
class LSTMGrad(FunctionNode):
    """The LSTM cell's gradient: ``(c_prev, x, c_next, gc, gh) -> (gc_prev, gx)``, with
    ``c_next`` the cell's output ``c``. Its gradient is the vector-Jacobian product of the same
    formula, so any order of backprop is exact."""

    __slots__ = ()
    name = "lstm_grad"
    label = "LSTMGrad"
    arity = 5

    def shape_rule(self, inputs):
        c_prev, x = inputs[:2]
        c, h = LSTM.shape_rule(self, inputs[:2])
        for t, want in zip(inputs[2:], (c, c, h), strict=True):
            if t.ndim != want.ndim or any(map(shapes.conflict, t.shape, want.shape)):
                shapes.fail(self, inputs, "expected c_next and gc of c_prev's shape and gh of h's")
        return (shapes.TensorType(c_prev.shape, x.dtype), shapes.TensorType(x.shape, x.dtype))

    def forward(self, inputs):
        c_prev, x, c_next, gc, gh = inputs
        _check_cell(self.label, c_prev, x)
        batch = x.shape[0]
        if (c_next.shape != c_prev.shape or gc.shape != c_prev.shape
                or gh.shape != (batch,) + c_prev.shape[1:]):
            raise errors.ShapeError(
                f"{self.label}: expected c_next and gc of c_prev's shape {c_prev.shape} and gh "
                f"{(batch,) + c_prev.shape[1:]}, got {c_next.shape}, {gc.shape}, {gh.shape}")
        return tuple(np.asarray(y, x.dtype) for y in _cell_grads(c_prev, x, c_next, gc, gh))

    def backward(self, indexes, grad_outputs):
        return _vjp(self, _cell_grads, indexes, grad_outputs)

    def __call__(self, *inputs):
        """Applied like Chainer's ``Function`` object (each call records a new node)."""
        return type(self)().apply(inputs)


def _vjp(node: FunctionNode, formula, indexes, grad_outputs):
    """The gradients of ``formula``'s outputs with respect to ``node``'s inputs, recomputed on
    a graph: on fresh leaves for a first-order walk (arrays out), on the recorded inputs under
    double backprop (Variables out, differentiable again)."""
    from graphcore.variable import Variable  # noqa: PLC0415 (the engine's type, used here only)

    double = config.double_backprop
    if double:
        xs = tuple(node.inputs)
    else:
        xs = tuple(Variable(np.array(x._array)) for x in node.inputs)
    with using_config("enable_backprop", True):  # a first-order walk records nothing itself
        ys = formula(*xs)
    pairs = [(y, gy) for y, gy in zip(ys, grad_outputs, strict=True) if gy is not None]
    out: list = [None] * len(xs)
    if not pairs:
        return tuple(out)
    gxs = grad([y for y, _ in pairs], [xs[k] for k in indexes], [gy for _, gy in pairs],
               enable_double_backprop=double)
    for k, gx in zip(indexes, gxs, strict=True):
        if gx is None:
            gx = np.zeros(xs[k].shape, xs[k].dtype)
        elif not double:
            gx = gx.array
        out[k] = gx
    return tuple(out)


def lstm(c_prev, x):
    """Chainer's ``F.lstm``: ``x`` holds the 4 gate pre-activations (a, i, f, o) along axis 1,
    interleaved per unit; returns ``(c, h)``. ``c_prev`` may have more rows than ``x``: those
    are carried to ``c`` unchanged (``h`` has ``x``'s rows)."""
    return LSTM().apply((c_prev, x))


def _check_slstm(label: str, c1, c2, x1, x2) -> None:
    n = x1.shape[1] // 4 if x1.ndim >= 2 else 0
    if (x1.ndim < 2 or x1.shape[1] != 4 * n or x2.shape != x1.shape
            or c1.shape != (x1.shape[0], n) + x1.shape[2:] or c2.shape != c1.shape
            or len({a.dtype for a in (c1, c2, x1, x2)}) != 1):
        raise errors.ShapeError(
            f"{label}: expected x1, x2 (B, 4n, ...) and c_prev1, c_prev2 (B, n, ...), all of one "
            f"float dtype, got {x1.shape} {x1.dtype}, {x2.shape} {x2.dtype}, {c1.shape} "
            f"{c1.dtype}, {c2.shape} {c2.dtype}")


def _slstm_gates(x):
    gates = g.reshape(x, (x.shape[0], x.shape[1] // 4, 4) + x.shape[2:])
    return (g.tanh(gates[:, :, 0]), g.sigmoid(gates[:, :, 1]), g.sigmoid(gates[:, :, 2]),
            gates[:, :, 3])


def _slstm_grads(c1, c2, x1, x2, c_next, gc, gh):
    """The S-LSTM cell's gradients ``(gc_prev1, gc_prev2, gx1, gx2)`` from its inputs, its
    output ``c_next`` and the output gradients (arrays or Variables, as ``_cell_grads``)."""
    a1, i1, f1, o1 = _slstm_gates(x1)
    a2, i2, f2, o2 = _slstm_gates(x2)
    o = g.sigmoid(o1 + o2)
    tanh_c = g.tanh(c_next)
    gc_total = gc + gh * o * (1 - tanh_c * tanh_c)
    go = gh * tanh_c * o * (1 - o)
    gx1 = g.reshape(g.stack([gc_total * i1 * (1 - a1 * a1), gc_total * a1 * i1 * (1 - i1),
                             gc_total * c1 * f1 * (1 - f1), go], axis=2), x1.shape)
    gx2 = g.reshape(g.stack([gc_total * i2 * (1 - a2 * a2), gc_total * a2 * i2 * (1 - i2),
                             gc_total * c2 * f2 * (1 - f2), go], axis=2), x2.shape)
    return gc_total * f1, gc_total * f2, gx1, gx2


@register_op
class SLSTM(FunctionNode):
    """Chainer's S-LSTM cell (a tree LSTM of two children): ``c = tanh(a1) sig(i1) + tanh(a2)
    sig(i2) + sig(f1) c_prev1 + sig(f2) c_prev2``, ``h = sig(o1 + o2) tanh(c)``, each ``x``
    holding its gates (a, i, f, o) interleaved per unit along axis 1."""

    __slots__ = ()
    name = "slstm"
    label = "SLSTM"
    arity = 4
    _out_keep = (0,)

    def shape_rule(self, inputs):
        c1, c2, x1, x2 = inputs
        shapes.float_like_first(self, inputs[2:])
        dtype = shapes.same_dtype(self, inputs, inputs)
        four_n = x1.shape[1] if x1.ndim >= 2 else None
        if x1.ndim < 2 or (isinstance(four_n, int) and four_n % 4):
            shapes.fail(self, inputs, "expected x1 and x2 (B, 4n, ...)")
        n = four_n // 4 if isinstance(four_n, int) else shapes.UNKNOWN
        shape = x1.shape[:1] + (n,) + x1.shape[2:]
        for t, want in ((x2, x1.shape), (c1, shape), (c2, shape)):
            if t.ndim != len(want) or any(map(shapes.conflict, t.shape, want)):
                shapes.fail(self, inputs, "expected c1, c2 (B, n, ...) and x1, x2 (B, 4n, ...)")
            if t is not x2:
                shape = tuple(map(shapes.merge, t.shape, shape))
        return shapes.TensorType(shape, dtype), shapes.TensorType(shape, dtype)

    def forward(self, inputs):
        c1, c2, x1, x2 = inputs
        is_float(self.label, x1)
        _check_slstm(self.label, c1, c2, x1, x2)
        n = x1.shape[1] // 4
        act1, act2 = _activate(x1, n), _activate(x2, n)
        c = act1[:, :, 0] * act1[:, :, 1]
        c += act2[:, :, 0] * act2[:, :, 1]
        c += act1[:, :, 2] * c1
        c += act2[:, :, 2] * c2
        o = x1.reshape(act1.shape)[:, :, 3] + x2.reshape(act2.shape)[:, :, 3]
        o *= 0.5
        np.tanh(o, out=o)
        o *= 0.5
        o += 0.5
        return c, o * np.tanh(c)

    def backward(self, indexes, grad_outputs):
        gc, gh = grad_outputs
        c1, c2, x1, x2 = self.get_retained_inputs()
        c = self.get_retained_outputs()[0]
        if not config.double_backprop:
            grads = tuple(np.asarray(v, x1.dtype) for v in _slstm_grads(c1, c2, x1, x2, c, gc, gh))
        else:
            grads = SLSTMGrad().apply((c1, c2, x1, x2, c, gc, gh))
        return tuple(grads[k] if k in indexes else None for k in range(4))


@register_op
class SLSTMGrad(FunctionNode):
    """The S-LSTM cell's gradient: ``(c_prev1, c_prev2, x1, x2, c_next, gc, gh) ->
    (gc_prev1, gc_prev2, gx1, gx2)``; its own gradient as ``LSTMGrad``'s."""

    __slots__ = ()
    name = "slstm_grad"
    label = "SLSTMGrad"
    arity = 7

    def shape_rule(self, inputs):
        c, _ = SLSTM.shape_rule(self, inputs[:4])
        for t in inputs[4:]:
            if t.ndim != c.ndim or any(map(shapes.conflict, t.shape, c.shape)):
                shapes.fail(self, inputs, "expected c_next, gc and gh of c_prev1's shape")
        return tuple(shapes.TensorType(t.shape, inputs[2].dtype) for t in inputs[:4])

    def forward(self, inputs):
        c1, c2, x1, x2, c_next, gc, gh = inputs
        _check_slstm(self.label, c1, c2, x1, x2)
        if not c_next.shape == gc.shape == gh.shape == c1.shape:
            raise errors.ShapeError(
                f"{self.label}: expected c_next, gc and gh of c_prev1's shape {c1.shape}, got "
                f"{c_next.shape}, {gc.shape}, {gh.shape}")
        return tuple(np.asarray(y, x1.dtype) for y in _slstm_grads(*inputs))

    def backward(self, indexes, grad_outputs):
        return _vjp(self, _slstm_grads, indexes, grad_outputs)

    def __call__(self, *inputs):
        """Applied like Chainer's ``Function`` object (each call records a new node)."""
        return type(self)().apply(inputs)


def slstm(c_prev1, c_prev2, x1, x2):
    """Chainer's ``F.slstm``: the S-LSTM cell of two children's states ``c_prev1``,
    ``c_prev2`` and gate pre-activations ``x1``, ``x2`` (``(B, 4n, ...)``, gates a, i, f, o
    interleaved per unit); returns ``(c, h)``."""
    return SLSTM().apply((c_prev1, c_prev2, x1, x2))


def tree_lstm(*inputs):
    """Chainer's ``F.tree_lstm``: the Tree-LSTM cell of ``N`` children, ``tree_lstm(c_1, ...,
    c_N, x) -> (c, h)``. ``x`` ``(B, (3 + N) n, ...)`` holds the gate pre-activations as
    consecutive blocks a, i, o, f_1 .. f_N (not interleaved, unlike ``lstm``); ``c = tanh(a)
    sig(i) + sum_k sig(f_k) c_k``, ``h = sig(o) tanh(c)``. A composite of registered ops."""
    if not inputs:
        raise errors.ArgumentTypeError("tree_lstm: expected the children's cell states, then x")
    cs, x = inputs[:-1], inputs[-1]
    shape = tuple(x.shape)
    blocks = 3 + len(cs)
    if len(shape) < 2 or shape[1] % blocks:
        raise errors.ShapeError(f"tree_lstm: x's axis 1 must hold {blocks} gate blocks (a, i, "
                                f"o and one forget gate per child), got x {shape}")
    n = shape[1] // blocks
    for c in cs:
        if tuple(c.shape) != (shape[0], n) + shape[2:] or c.dtype != x.dtype:
            raise errors.ShapeError(f"tree_lstm: each child's c must be "
                                    f"{(shape[0], n) + shape[2:]} of x's dtype {x.dtype}, got "
                                    f"{c.shape} {c.dtype}")
    gates = reshape(x, (shape[0], blocks, n) + shape[2:])
    a, i, o = (gates[:, k] for k in range(3))
    c = tanh(a) * sigmoid(i)
    for k, c_child in enumerate(cs):
        c = c + sigmoid(gates[:, 3 + k]) * c_child
    return c, sigmoid(o) * tanh(c)
