"""Optimizer hooks (Chainer's ``chainer.optimizer_hooks``): change gradients before an update.

A hook with ``call_for_each_param = True`` is called as ``hook(rule, param)`` for every
parameter; otherwise as ``hook(optimizer)`` once per update.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from graphcore.attributes import Attr, check_arguments
from graphcore.errors import ArgumentValueError
from graphcore.links.link import Link
from graphcore.variable import Parameter

if TYPE_CHECKING:
    from graphcore.optimizers import Optimizer, UpdateRule

_RATE = {"rate": Attr(float, low=0.0)}
_THRESHOLD = {"threshold": Attr(float, low=0.0)}
_BOUNDS = {"lower_bound": Attr(float), "upper_bound": Attr(float)}


class WeightDecay:
    """L2 regularization: ``grad += rate * param`` before the update."""

    name = "WeightDecay"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, rate: float) -> None:
        check_arguments(type(self).__name__, _RATE, rate=rate)
        self.rate = rate

    def __call__(self, rule: UpdateRule, param: Parameter) -> None:
        p, g = param.array, param.grad
        if p is not None and g is not None:
            g += self.rate * p


class Lasso:
    """L1 regularization: ``grad += rate * sign(param)`` before the update."""

    name = "Lasso"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, rate: float) -> None:
        check_arguments(type(self).__name__, _RATE, rate=rate)
        self.rate = rate

    def __call__(self, rule: UpdateRule, param: Parameter) -> None:
        p, g = param.array, param.grad
        if p is not None and g is not None:
            g += self.rate * np.sign(p)


class GradientClipping:
    """Rescale all gradients together so their global L2 norm is at most ``threshold``."""

    name = "GradientClipping"
    call_for_each_param = False
    timing = "pre"

    def __init__(self, threshold: float) -> None:
        check_arguments(type(self).__name__, _THRESHOLD, threshold=threshold)
        self.threshold = threshold

    def __call__(self, optimizer: Optimizer) -> None:
        grads = list(_grads(optimizer.target))
        sqnorm = sum(float(np.dot(g.ravel(), g.ravel())) for g in grads)
        rate = self.threshold / (math.sqrt(sqnorm) + 1e-6)
        if rate < 1:
            for g in grads:
                g *= rate


class GradientHardClipping:
    """Clip every gradient element into ``[lower_bound, upper_bound]``."""

    name = "GradientHardClipping"
    call_for_each_param = True
    timing = "pre"

    def __init__(self, lower_bound: float, upper_bound: float) -> None:
        check_arguments(type(self).__name__, _BOUNDS, lower_bound=lower_bound,
                        upper_bound=upper_bound)
        if not lower_bound <= upper_bound:
            raise ArgumentValueError(f"{type(self).__name__}: lower_bound {lower_bound} is above "
                                     f"upper_bound {upper_bound}")
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def __call__(self, rule: UpdateRule, param: Parameter) -> None:
        g = param.grad
        if g is not None:
            np.clip(g, self.lower_bound, self.upper_bound, out=g)


def _grads(link: Link) -> Iterator[np.ndarray]:
    for p in link.params(include_uninit=False):
        g = p.grad
        if g is not None and p.requires_grad:
            yield g
