"""``EmbedID``: a learned lookup table from integer ids to vectors."""

from __future__ import annotations

import numpy as np

from graphcore import initializers
from graphcore.attributes import Attr, check_arguments
from graphcore.links.link import Link
from graphcore.ops.embed import embed_id
from graphcore.variable import Parameter

_ARGS = {"in_size": Attr(int, low=1), "out_size": Attr(int, low=1),
         "ignore_label": Attr((int, type(None)))}


class EmbedID(Link):
    """Map ids in ``[0, in_size)`` to rows of ``W: (in_size, out_size)``.

    Ids equal to ``ignore_label`` map to zero vectors and send no gradient.

    >>> embed = EmbedID(1000, 64)
    >>> y = embed(np.array([3, 1, 4]))      # shape (3, 64)
    """

    ignore_label: int | None = None  # what a link pickled without the attribute uses

    def __init__(self, in_size: int, out_size: int, initialW=None,
                 ignore_label: int | None = None) -> None:
        super().__init__()
        check_arguments(type(self).__name__, _ARGS, in_size=in_size, out_size=out_size,
                        ignore_label=ignore_label)
        self.ignore_label = ignore_label
        if initialW is None:
            initialW = initializers.Normal(1.0)  # Chainer's default for embeddings
        with self.init_scope():
            self.W = Parameter(initialW, (in_size, out_size))

    @classmethod
    def from_params(cls, W, ignore_label: int | None = None) -> EmbedID:
        """A link whose ``W`` is a copy of the array (or Variable) ``W: (in_size, out_size)``."""
        W = np.array(getattr(W, "array", W))
        return cls(W.shape[0], W.shape[1], initialW=W, ignore_label=ignore_label)

    def forward(self, x):
        return embed_id(x, self.W, ignore_label=self.ignore_label)
