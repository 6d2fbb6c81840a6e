"""``LayerNormalization``: normalize each sample over its last axis, then scale and shift."""

from __future__ import annotations

from graphcore.errors import ShapeError
from graphcore.links.link import Link
from graphcore.ops.normalization_layer import layer_normalization
from graphcore.variable import Parameter


class LayerNormalization(Link):
    """Chainer's ``L.LayerNormalization(size=None, eps=1e-6, initial_gamma=None,
    initial_beta=None)``: parameters ``gamma`` (starts at 1) and ``beta`` (starts at 0) of
    shape ``(size,)``; ``size=None`` takes it from the first input's last axis.

    Chainer's layer takes ``(batch, size)``; here any leading axes are allowed.
    """

    def __init__(self, size: int | None = None, eps: float = 1e-6, initial_gamma=None,
                 initial_beta=None) -> None:
        super().__init__()
        self.eps = eps
        with self.init_scope():
            self.gamma = Parameter(1.0 if initial_gamma is None else initial_gamma)
            self.beta = Parameter(0.0 if initial_beta is None else initial_beta)
        if size is not None:
            self._initialize(size)

    def _initialize(self, size: int) -> None:
        self.gamma.initialize((size,))
        self.beta.initialize((size,))

    def forward(self, x):
        if self.gamma.array is None:
            if not x.shape:
                raise ShapeError("LayerNormalization: cannot infer the size from a 0-d input; "
                                 "expected (..., size)")
            self._initialize(x.shape[-1])
        return layer_normalization(x, self.gamma, self.beta, self.eps)
