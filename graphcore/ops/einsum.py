"""Einstein summation: ``einsum`` (Chainer's ``F.einsum``, numpy's subscripts) over the ops
``EinSum`` and ``DiagEinSum``.

Subscripts are stored in Chainer's internal form: one letter per axis, ``@`` for an ellipsis,
inputs separated by commas (``"@ij,@jk"``), and an explicit output (``"@ik"``). ``EinSum`` is
numpy's einsum without broadcasting (each letter, and the ellipsis, has one size everywhere).
``DiagEinSum``, the gradient, may also write its output on a diagonal or along new axes
(``i->ii``, ``i->ij``: the output's shape is an attribute); it is an ``EinSum`` whose
backward is the same rule. float16 operands are summed in float32.
"""

from __future__ import annotations

import numpy as np

from graphcore import errors, shapes
from graphcore.attributes import Attr
from graphcore.function_node import FunctionNode
from graphcore.registry import register_op
from graphcore.variable import Variable

einsum_symbols = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
einsum_symbols_set = set(einsum_symbols)


def _axes(subscript: str, ndim: int):
    """``(axis or slice, letter)`` for each letter of one operand's subscript (``@``: the
    slice of axes the ellipsis covers)."""
    if "@" in subscript:
        left, right = subscript.split("@")
        yield from enumerate(left)
        yield slice(len(left), ndim - len(right)), "@"
        yield from ((ndim - len(right) + i, s) for i, s in enumerate(right))
    else:
        yield from enumerate(subscript)


def _einsum(in_subs: str, out_sub: str, inputs, dtype: np.dtype, refuse_ellipsis_sum: bool):
    """numpy's einsum of ``inputs`` in ``dtype``; an ellipsis missing from ``out_sub`` is
    summed over (numpy's einsum does not allow that), unless ``refuse_ellipsis_sum``."""
    sum_ellipsis = "@" in in_subs and "@" not in out_sub
    if sum_ellipsis:
        subscripts = f"{in_subs.replace('@', '...')}->...{out_sub}"
    else:
        subscripts = f"{in_subs}->{out_sub}".replace("@", "...")
    work = np.float32 if dtype == np.float16 else dtype
    arrays = [x.astype(work, copy=False) for x in inputs]
    y = np.einsum(subscripts, *arrays, optimize=len(arrays) >= 3)
    if sum_ellipsis:
        sum_ndim = y.ndim - len(out_sub)
        if sum_ndim > 0:
            if refuse_ellipsis_sum:
                shown = f"{in_subs}->{out_sub}".replace("@", "...")
                raise errors.ArgumentValueError(
                    f"einsum: '{shown}' sums over the axes of the ellipsis, which einsum "
                    "does not define; keep '...' in the output")
            y = y.sum(axis=tuple(range(sum_ndim)))
    return np.asarray(y, dtype=dtype)


def _letter_sizes(op, inputs) -> dict[str, tuple]:
    """The dims each letter (and the ellipsis, ``@``) stands for in ``op.in_subs`` over the
    input ``TensorType``s; a letter of two different sizes is a ``ShapeInferenceError``."""
    subs = op.in_subs.split(",")
    if len(subs) != len(inputs):
        shapes.fail(op, inputs, f"'{op.in_subs}' names {len(subs)} operands")
    sizes: dict[str, tuple] = {}
    for sub, x in zip(subs, inputs, strict=True):
        shapes.float_like_first(op, (x,))
        letters = len(sub) - ("@" in sub)
        if x.ndim < letters or ("@" not in sub and x.ndim != letters):
            shapes.fail(op, inputs, f"subscript '{sub}' does not fit an operand of shape "
                                    f"{shapes.show_shape(x.shape)}")
        for axis, letter in _axes(sub, x.ndim):
            size = x.shape[axis] if isinstance(axis, slice) else (x.shape[axis],)
            known = sizes.setdefault(letter, size)
            if len(known) != len(size) or any(map(shapes.conflict, known, size)):
                what = "the ellipsis" if letter == "@" else f"'{letter}'"
                shapes.fail(op, inputs, f"{what} has two sizes in '{op.in_subs}' (einsum does "
                                        "not broadcast)")
            sizes[letter] = tuple(map(shapes.merge, known, size))
    return sizes


def _run(node: FunctionNode, inputs: tuple):
    """``node`` on ``inputs``: an array when all are arrays (a first-order walk), else a
    recorded Variable (double backprop)."""
    if not any(isinstance(x, Variable) for x in inputs):
        return node.forward(inputs)[0]
    return node.apply(inputs)[0]


@register_op
class EinSum(FunctionNode):
    """``numpy.einsum(in_subs -> out_sub, *inputs)``, without broadcasting; the result has
    the inputs' numpy result type."""

    __slots__ = ("in_subs", "out_sub")
    name = "einsum"
    label = "EinSum"
    arity = None
    attributes = {
        "in_subs": Attr(str, required=True, doc="comma-separated subscripts of the inputs "
                                                "('@' for an ellipsis)"),
        "out_sub": Attr(str, required=True, doc="subscript of the output"),
    }

    def shape_rule(self, inputs):
        sizes = _letter_sizes(self, inputs)
        return shapes.TensorType(tuple(d for letter in self.out_sub for d in sizes[letter]),
                                 shapes.result_dtype(*(t.dtype for t in inputs))),

    def __init__(self, in_subs: str, out_sub: str) -> None:
        self.in_subs = in_subs
        self.out_sub = out_sub

    def forward(self, inputs):
        self._check(inputs)
        dtype = np.result_type(*[x.dtype for x in inputs])
        return _einsum(self.in_subs, self.out_sub, inputs, dtype, refuse_ellipsis_sum=True),

    def _check(self, inputs):
        subs = self.in_subs.split(",")
        if len(subs) != len(inputs):
            raise errors.ShapeError(f"{self.label}: '{self.in_subs}' names {len(subs)} "
                                    f"operands, got {len(inputs)}")
        sizes: dict[str, object] = {}
        for sub, x in zip(subs, inputs, strict=True):
            if x.dtype.kind != "f":
                raise errors.DTypeError(f"{self.label}: expected floating-point inputs, got "
                                        f"{x.dtype}")
            letters = len(sub) - ("@" in sub)
            if x.ndim < letters or ("@" not in sub and x.ndim != letters):
                raise errors.ShapeError(f"{self.label}: subscript '{sub}' does not fit an "
                                        f"operand of shape {x.shape}")
            for axis, letter in _axes(sub, x.ndim):
                size = x.shape[axis]
                if sizes.setdefault(letter, size) != size:
                    what = "the ellipsis" if letter == "@" else f"'{letter}'"
                    raise errors.ShapeError(
                        f"{self.label}: {what} has sizes {sizes[letter]} and {size} in "
                        f"'{self.in_subs}' for shapes {[y.shape for y in inputs]} (einsum "
                        "does not broadcast)")

    def backward(self, indexes, grad_outputs):
        inputs = self.get_retained_inputs()
        gy, = grad_outputs
        subs = self.in_subs.split(",")
        grads = []
        for i in indexes:
            # the gradient of operand i contracts gy with the other operands into i's axes
            rule = DiagEinSum(",".join(self.out_sub if j == i else s for j, s in enumerate(subs)),
                              subs[i], tuple(inputs[i].shape))
            grads.append(_run(rule, tuple(gy if j == i else x for j, x in enumerate(inputs))))
        return tuple(grads)


@register_op
class DiagEinSum(EinSum):
    """``EinSum`` whose output (of shape ``out_shape``) may repeat a letter (its values go on
    that diagonal, zeros elsewhere) or have letters no input has (the values are repeated
    along them); an ellipsis missing from the output is summed over."""

    __slots__ = ("out_shape",)
    name = "diag_einsum"
    label = "DiagEinSum"
    attributes = {**EinSum.attributes,
                  "out_shape": Attr(tuple, required=True, items=int, doc="output shape")}

    def __init__(self, in_subs: str, out_sub: str, out_shape: tuple) -> None:
        self.in_subs = in_subs
        self.out_sub = out_sub
        self.out_shape = tuple(int(n) for n in out_shape)

    def shape_rule(self, inputs):
        _letter_sizes(self, inputs)
        return shapes.TensorType(self.out_shape, shapes.result_dtype(*(t.dtype for t in inputs))),

    def forward(self, inputs):
        self._check(inputs)
        dtype = np.result_type(*[x.dtype for x in inputs])
        present = set(self.in_subs)
        if len(set(self.out_sub)) == len(self.out_sub) and set(self.out_sub) <= present:
            return _einsum(self.in_subs, self.out_sub, inputs, dtype, False),
        # one label per output axis (the ellipsis's axes each their own)
        n_ellipsis = len(self.out_shape) - (len(self.out_sub) - ("@" in self.out_sub))
        labels = []
        for letter in self.out_sub:
            labels.extend([("@", k) for k in range(n_ellipsis)] if letter == "@"
                          else [(letter, 0)])
        if len(labels) != len(self.out_shape):
            raise errors.ShapeError(f"{self.label}: output subscript '{self.out_sub}' does "
                                    f"not fit the output shape {self.out_shape}")
        unique = list(dict.fromkeys(labels))
        size = {lab: n for lab, n in zip(labels, self.out_shape, strict=True)}
        direct = "".join(dict.fromkeys(lab[0] for lab in unique if lab[0] in present))
        values = _einsum(self.in_subs, direct, inputs, dtype, False)
        values = values[tuple(slice(None) if lab[0] in present else None for lab in unique)]
        grid = [np.arange(size[lab]).reshape([-1 if k == j else 1 for k in range(len(unique))])
                for j, lab in enumerate(unique)]
        y = np.zeros(self.out_shape, dtype)
        y[tuple(grid[unique.index(lab)] for lab in labels)] = np.broadcast_to(
            values, tuple(size[lab] for lab in unique))
        return y,


def einsum(*operands):
    """Einstein summation, as ``numpy.einsum``: ``einsum("ij,jk->ik", a, b)``, or the sublist
    form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` (``Ellipsis`` for ``...``). Without
    ``->`` the output is the letters that occur once, in alphabetical order (after the
    ellipsis). Operands do not broadcast against each other."""
    in_subs, out_sub, arrays = _parse(operands)
    return EinSum(in_subs, out_sub).apply(arrays)[0]


def _sublist(items) -> str:
    text = ""
    for s in items:
        if s is Ellipsis:
            text += "@"
        elif isinstance(s, int | np.integer) and 0 <= s < len(einsum_symbols):
            text += einsum_symbols[s]
        else:
            raise TypeError("For this input type lists must contain either int or Ellipsis")
    return text


def _parse(operands):
    """``(input subscripts, output subscript, operands)`` in the internal form."""
    if not operands:
        raise ValueError("einsum: no operands")
    if isinstance(operands[0], str):
        subscripts = operands[0].replace(" ", "")
        arrays = operands[1:]
        for s in subscripts:
            if s not in ".,->" and s not in einsum_symbols_set:
                raise ValueError(f"einsum: character {s!r} is not a valid subscript")
        if ("-" in subscripts or ">" in subscripts) and (
                subscripts.count("-") > 1 or subscripts.count(">") > 1
                or subscripts.count("->") != 1):
            raise ValueError("einsum: subscripts can contain only one '->'")
        subscripts = subscripts.replace("...", "@")
        if "." in subscripts:
            raise ValueError("einsum: invalid ellipsis (use '...')")
    else:
        rest = list(operands)
        arrays, subs = [], []
        while len(rest) >= 2:
            arrays.append(rest.pop(0))
            subs.append(_sublist(rest.pop(0)))
        subscripts = ",".join(subs)
        if rest:
            subscripts += "->" + _sublist(rest[0])
    if "->" in subscripts:
        in_subs, out_sub = subscripts.split("->")
        for s in out_sub:
            if s not in in_subs:
                raise ValueError(f"einsum: output subscript {'...' if s == '@' else s!r} is "
                                 "not among the inputs'")
    else:
        in_subs = subscripts
        letters = subscripts.replace(",", "")
        out_sub = "".join(s for s in sorted(set(letters)) if s == "@" or letters.count(s) == 1)
    if len(in_subs.split(",")) != len(arrays):
        raise ValueError(f"einsum: {len(in_subs.split(','))} subscripts for {len(arrays)} "
                         "operands")
    return in_subs, out_sub, tuple(arrays)
