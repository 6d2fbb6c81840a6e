"""How a batched pass stops short: ``Fallback`` (the group cannot run as a batch) and ``Split``
(its examples disagree on a live predicate)."""

from __future__ import annotations

import numpy as np


class Fallback(Exception):
    """This group cannot run as a batch; the call runs one example at a time."""


class Split(Exception):
    """The examples of a group disagree on a live predicate: ``outcome[i]`` per example."""

    def __init__(self, outcome: np.ndarray) -> None:
        super().__init__("split")
        self.outcome = outcome
