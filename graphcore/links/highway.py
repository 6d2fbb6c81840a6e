"""``Highway`` (Srivastava et al. 2015, Chainer's ``L.Highway``): ``y = act(plain(x)) t + x
(1 - t)`` with the transform gate ``t = sigmoid(transform(x))``; ``transform``'s bias starts
at -1 (Chainer's ``init_bt``), so the layer starts close to the identity."""

from __future__ import annotations

from graphcore.functions import relu, sigmoid
from graphcore.links.linear import Linear
from graphcore.links.link import Chain


class Highway(Chain):
    """``Highway(in_out_size, nobias=False, activate=F.relu, init_Wh=None, init_Wt=None,
    init_bh=None, init_bt=-1)``; children ``plain`` and ``transform`` (``Linear(in_out_size,
    in_out_size)``)."""

    def __init__(self, in_out_size: int, nobias: bool = False, activate=relu, init_Wh=None,
                 init_Wt=None, init_bh=None, init_bt=-1) -> None:
        super().__init__()
        self.activate = activate
        with self.init_scope():
            self.plain = Linear(in_out_size, in_out_size, nobias=nobias, initialW=init_Wh,
                                initial_bias=init_bh)
            self.transform = Linear(in_out_size, in_out_size, nobias=nobias, initialW=init_Wt,
                                    initial_bias=init_bt)

    def forward(self, x):
        transform = sigmoid(self.transform(x))
        return self.activate(self.plain(x)) * transform + x * (1 - transform)
