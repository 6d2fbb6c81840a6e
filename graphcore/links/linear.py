"""``Linear``: ``y = x @ W.T + b`` with ``W: (out, in)``; ``in_size=None`` is inferred lazily."""

from __future__ import annotations

import numpy as np

from graphcore.attributes import Attr, check_arguments
from graphcore.errors import ArgumentTypeError, ShapeError
from graphcore.links.link import Link
from graphcore.ops.array import reshape
from graphcore.ops.linalg import linear_last_axis
from graphcore.variable import Parameter, Variable

SIZE = Attr((int, type(None)), low=1)
_ARGS = {"in_size": SIZE, "out_size": Attr(int, low=1), "nobias": Attr(bool)}


class Linear(Link):
    """Fully connected layer: ``y = x @ W.T + b`` on ``(batch, in)``; a higher-dimensional input
    is flattened after its first ``n_batch_axes`` axes (1 unless given), as in Chainer.

    ``Linear(None, 5)`` creates ``W`` on the first call, from the input's last axis
    (Chainer also accepts ``Linear(5)`` meaning the same).
    """

    def __init__(self, in_size: int | None, out_size: int | None = None, nobias: bool = False,
                 initialW=None, initial_bias=None) -> None:
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        if out_size is None:
            raise ArgumentTypeError("Linear: argument 'out_size' is required: Linear(in_size, "
                                    "out_size), or Linear(out_size) to infer in_size")
        check_arguments(type(self).__name__, _ARGS, in_size=in_size, out_size=out_size,
                        nobias=nobias)
        self.out_size = out_size
        with self.init_scope():
            self.W = Parameter(initialW)
            if in_size is not None:
                self.W.initialize((out_size, in_size))
            if not nobias:
                self.b = Parameter(0.0 if initial_bias is None else initial_bias, (out_size,))
            else:
                self.b = None

    # Chainer's default: the first axis is the batch and every later axis a feature, so an
    # (N, C, H, W) input is flattened to (N, C * H * W). None maps the last axis instead,
    # (..., in) -> (..., out), as the spec language's ``linear`` does.
    n_batch_axes: int | None = 1

    def forward(self, x, n_batch_axes: int | None = None):
        n = self.n_batch_axes if n_batch_axes is None else n_batch_axes
        if n is not None and getattr(x, "ndim", 0) > n + 1:
            x = reshape(x, tuple(x.shape[:n]) + (-1,))
        W = self.W
        if W._array is None:
            if not isinstance(x, Variable | np.ndarray):
                raise ArgumentTypeError(f"{type(self).__name__}: input must be a Variable or a "
                                        f"numpy array, got {type(x).__name__}")
            if not x.shape:
                raise ShapeError(f"Linear: cannot infer the input size from a 0-d input; "
                                 f"expected (..., in), got {x.shape}")
            W.initialize((self.out_size, x.shape[-1]))
        return linear_last_axis(x, x._array if isinstance(x, Variable) else np.asarray(x), W,
                                self.b)

    @classmethod
    def from_params(cls, W, b=None, nobias: bool = False) -> Linear:
        """A ``Linear`` whose parameters start as the arrays ``W`` (``(out, in)``) and ``b``
        (``(out,)``, zeros when None unless ``nobias``)."""
        W = W.array if isinstance(W, Variable) else W
        b = b.array if isinstance(b, Variable) else b
        out_size, in_size = W.shape
        if b is not None and b.size != out_size:
            raise ShapeError(f"Linear.from_params: b has {b.size} elements for W of shape "
                             f"{W.shape}; expected {out_size}")
        return cls(in_size, out_size, nobias, initialW=W, initial_bias=b)
