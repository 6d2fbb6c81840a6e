"""``Variable``'s Python operators (``+ - * / // ** @``, ``-x``, ``abs``, ``x[i]``, ``.T``,
``.reshape``, ``.transpose``), made of the ops' own functions (never the F facade, which is
built on the ops). ``graphcore/__init__`` installs them once every op is registered.
``//`` is Chainer's: the floor of the quotient, a Variable without a graph. As for ``+``, a raw
array beside a Variable in ``@`` is a constant of the Variable's dtype."""

from __future__ import annotations

from graphcore.ops.arithmetic import binary_add, constants_like, div, mul, neg, pow, sub
from graphcore.ops.array import reshape, transpose
from graphcore.ops.elementwise import floor
from graphcore.ops.indexing import get_item
from graphcore.ops.linalg import matmul
from graphcore.ops.math import absolute
from graphcore.variable import Variable


def install_operators() -> None:
    """Give ``Variable`` its Python operators (Chainer's ``install_variable_arithmetics``)."""

    def swap(f):
        return lambda self, other: f(other, self)

    Variable.__add__ = binary_add
    Variable.__radd__ = swap(binary_add)
    Variable.__sub__ = sub
    Variable.__rsub__ = swap(sub)
    Variable.__mul__ = mul
    Variable.__rmul__ = swap(mul)
    Variable.__truediv__ = div
    Variable.__rtruediv__ = swap(div)
    Variable.__floordiv__ = lambda self, other: floor(div(self, other))
    Variable.__rfloordiv__ = lambda self, other: floor(div(other, self))
    Variable.__pow__ = pow
    Variable.__rpow__ = swap(pow)
    Variable.__matmul__ = lambda self, other: matmul(*constants_like(self, other))
    Variable.__rmatmul__ = lambda self, other: matmul(*constants_like(other, self))
    Variable.__neg__ = neg
    Variable.__pos__ = lambda self: self
    Variable.__abs__ = absolute
    Variable.__getitem__ = get_item
    Variable.T = property(lambda self: transpose(self))
    Variable.reshape = lambda self, *shape: reshape(
        self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape)
    Variable.transpose = lambda self, *axes: transpose(
        self, (axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes) or None)
