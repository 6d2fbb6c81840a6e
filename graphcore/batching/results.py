"""A batched call's results, kept as group arrays and read back per example on demand.

Each finished group (``spec.batching``) adds its path, its outputs and the loss step's
arguments as arrays with a leading example axis, and its losses. ``result`` makes the
``RunResult``: the loss total at once; the last example's outputs, the path (one
``example`` entry and the group's entries per example), every example's outputs and the loss
inputs only when a caller first reads them (``GroupResults`` is the result's ``views``), with
the contents and types one-example-at-a-time runs give.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphcore.batching.split import expand
from graphcore.interpreter.results import PathEntry, RunResult
from graphcore.language.syntax import Spec


class _Done:
    """One finished group: ``outputs`` maps a name to (value, batched, padded input)."""

    __slots__ = ("group", "taken", "outputs", "loss_args", "orders")

    def __init__(self, group, taken, outputs, loss_args, orders) -> None:
        self.group, self.taken, self.outputs, self.loss_args = group, taken, outputs, loss_args
        self.orders = orders


class GroupResults:
    """The finished groups of one call over ``n`` examples. ``wrap`` turns each example's
    output (an array, or a tuple of arrays) into what a one-example run returns;
    ``copy_loss_args``: each example's loss inputs are copies, not views of the group's."""

    def __init__(self, spec: Spec, n: int, wrap: Callable[[Any], Any],
                 copy_loss_args: bool) -> None:
        self.spec, self.n, self.wrap, self.copy_loss_args = spec, n, wrap, copy_loss_args
        self.done: list[_Done] = []
        self.losses = np.zeros(n)
        self._last: dict[str, Any] | None = None  # the last example's outputs, once made
        self.before: list[PathEntry] = []  # the call's path entries before the examples'

    def add(self, group, taken: list[PathEntry], outputs: dict[str, tuple[Any, bool, Any]],
            loss_args: list[tuple[Any, bool]] | None, losses: Any,
            orders: list[np.ndarray] = ()) -> None:
        """A finished group; ``loss_args``: the loss step's (argument, batched) pairs;
        ``orders``: the row order of each partitioned ``if`` in ``taken`` (``batch_split``)."""
        self.done.append(_Done(group, taken, outputs, loss_args, orders))
        if losses is not None:
            if len(group.index) == self.n:  # every example, in order (indexes are sorted)
                self.losses[:] = losses
            else:
                self.losses[group.index] = losses

    def result(self, path: list[PathEntry], timing: dict[str, float]) -> RunResult:
        """The call's ``RunResult``; ``path``: the entries before the examples' own. The loss
        is made now; the last example's outputs and the per-example views (this object's
        ``outputs``, ``path``, ``example_outputs``, ``loss_inputs``) when a caller first reads
        them."""
        n = self.n
        self.before = path
        # each example's loss / n added in order, as one-at-a-time runs accumulate it
        total = float(sum((self.losses / n).tolist())) if self.spec.loss else None
        return RunResult(loss=total, timing_ms=timing, examples=n, views=self)

    # --- per example, on demand ---------------------------------------------------------
    def _outputs(self, done: _Done, k: int) -> dict[str, Any]:
        return {name: self.wrap(slice_output(value, batched, k, done.group, padded, False))
                for name, (value, batched, padded) in done.outputs.items()}

    def outputs(self) -> dict[str, Any]:
        """The last example's outputs (``RunResult.outputs``)."""
        return self._last_outputs()

    def _last_outputs(self) -> dict[str, Any]:
        if self._last is None:
            last = self.n - 1
            done = next(d for d in self.done if (d.group.index == last).any())
            self._last = self._outputs(done, int(np.flatnonzero(done.group.index == last)[0]))
        return self._last

    def path(self) -> list[PathEntry]:
        return self.before + self._paths()

    def example_outputs(self) -> list[dict[str, Any]]:
        per: list[Any] = [None] * self.n
        for done in self.done:
            for k, i in enumerate(done.group.index.tolist()):
                per[i] = self._outputs(done, k)
        if self._last is None:
            self._last = per[-1]
        per[-1] = self._last  # the same dict as ``outputs``, as one-at-a-time runs give
        return per

    def _paths(self) -> list[PathEntry]:
        per: list[Any] = [None] * self.n
        for done in self.done:
            group = done.group
            inverses: dict[int, np.ndarray] = {}
            for k, (i, entry) in enumerate(zip(group.index.tolist(),
                                               example_entries(self.spec, group), strict=True)):
                taken = expand(done.taken, k, done.orders, inverses)
                per[i] = [entry] + example_path(taken, group, k)
        return [entry for entries in per for entry in entries]

    def loss_inputs(self) -> list[tuple[Any, ...]]:
        if self.spec.loss is None:
            return []
        per: list[Any] = [None] * self.n
        for done in self.done:
            if done.loss_args is None:
                continue
            group = done.group
            for k, i in enumerate(group.index.tolist()):
                per[i] = tuple(slice_output(a, batched, k, group, None, self.copy_loss_args)
                               for a, batched in done.loss_args)
        return [args for args in per if args is not None]


def example_entries(spec: Spec, group) -> list[PathEntry]:
    """Each example's ``example`` path entry, in group order."""
    names = list(group.lengths)
    loc = spec.inputs[names[0]].loc
    columns = [group.lengths[name].tolist() for name in names]
    return [PathEntry("example", loc, {"index": i, "lengths": dict(zip(names, ls, strict=True))})
            for i, *ls in zip(group.index.tolist(), *columns, strict=True)]


def example_path(entries: list[PathEntry], group, k: int) -> list[PathEntry]:
    """A group's path entries for its k-th example (padded loops get its own length)."""
    if not any("padded" in e.detail for e in entries):
        return entries
    out = []
    for e in entries:
        if "padded" in e.detail:
            e = PathEntry(e.kind, e.loc, {"length": int(group.lengths[e.detail["padded"]][k])})
        out.append(e)
    return out


def slice_output(value: Any, batched: bool, k: int, group, padded_input: str | None,
                 copy: bool) -> Any:
    """Example ``k``'s part of a group's value (its own length where the value is padded)."""
    if not batched:
        return value
    array = value.array if hasattr(value, "array") else value
    if isinstance(array, tuple):
        return tuple(a[k] for a in array)
    part = array[k]
    if padded_input is not None:
        part = part[:int(group.lengths[padded_input][k])]
    return np.array(part) if copy else part
