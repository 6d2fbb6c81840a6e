"""Automatic batching of per-example runs (``batching="auto" | "pad" | "off"``).

A spec with sequence inputs (``lengths``, or ``examples: N``) runs once per example. Batching
runs the examples in groups instead, each group as one pass with a leading example axis
(``batch_run``): examples start grouped by their shapes (the sequence lengths) or, where the
spec allows it (``batch_analysis``), padded into buckets with a mask; a live predicate on
which a group's examples disagree splits it, and each side reruns as its own group, so every
group that finishes took one path (branch outcomes, trip counts, lengths). Per-example
outputs, losses and the path are then read back per example, and gradients are the group
losses' sum scaled by ``1 / examples``: the same as the per-example accumulation within float
rounding.

``auto`` chooses buckets with a cost model: a pass over ``rows`` examples for ``steps`` time
steps costs ``steps * (OVERHEAD_ROWS + rows)``, so padding pays when many distinct lengths
would each pay the per-step overhead; ``pad`` pads every example into one bucket; ``off`` runs
one example at a time. A spec that cannot batch (an op or layer without a batching rule,
randomness in training) runs one example at a time, with the reason in
``BatchingInfo.reason``. On a call that finds parameters still lazily sized, forward passes
over the first examples size them first (``size_lazy_parameters``: initial values drawn as the
per-example run draws them), then every example runs batched.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from graphcore import functions as F
from graphcore.batching.analysis import analysis_of
from graphcore.batching.batched_pass import MASK, BatchRun
from graphcore.batching.outcomes import Fallback, Split
from graphcore.batching.results import GroupResults
from graphcore.config import config, no_backprop_mode
from graphcore.errors import ArgumentValueError
from graphcore.inputs.stacked import stacked_rows
from graphcore.interpreter.calls import bound_dims
from graphcore.interpreter.examples import sequence_names
from graphcore.interpreter.forward import ForwardPass
from graphcore.interpreter.parameters import seeded
from graphcore.interpreter.results import PathEntry, RunResult
from graphcore.language.syntax import Spec
from graphcore.variable import Variable

MODES = ("auto", "pad", "off")
OVERHEAD_ROWS = 64  # the cost model: one step's fixed cost, in examples' worth of work


@dataclass
class BatchingInfo:
    """How a call batched: groups run (after splits), examples per group, padded steps."""

    mode: str
    applied: bool = False
    reason: str | None = None
    groups: int = 0
    group_sizes: list[int] = field(default_factory=list)
    splits: int = 0
    partitions: int = 0  # ifs run on both sides in one pass (``batch_split``), per group
    padded_steps: int = 0  # example-steps computed past an example's end
    steps: int = 0  # example-steps computed in all
    pad_refused: str | None = None  # mode pad: why the examples were grouped by shape instead

    @property
    def padding_waste(self) -> float:
        return self.padded_steps / self.steps if self.steps else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "applied": self.applied, "reason": self.reason,
                "groups": self.groups, "group_sizes": self.group_sizes,
                "splits": self.splits, "partitions": self.partitions,
                "padding_waste": round(self.padding_waste, 4), "pad_refused": self.pad_refused}


@dataclass
class Group:
    """Examples ``index`` (ascending) with their inputs stacked (``arrays``), padding masks and
    lengths."""

    index: np.ndarray
    arrays: dict[str, np.ndarray]
    lengths: dict[str, np.ndarray]  # per sequence input: each example's length
    padded: bool = False

    def take(self, keep: np.ndarray) -> Group:
        return Group(self.index[keep], {k: v[keep] for k, v in self.arrays.items()},
                     {k: v[keep] for k, v in self.lengths.items()}, self.padded)

    def env(self, shared: Mapping[str, Any]) -> dict[str, Any]:
        env = dict(shared)
        env.update(self.arrays)
        if self.padded:
            for name, lengths in self.lengths.items():
                steps = self.arrays[name].shape[1]
                env[MASK + name] = np.arange(steps)[None, :] < lengths[:, None]
        return env


def check_mode(api: str, batching: str) -> None:
    if batching not in MODES:
        raise ArgumentValueError(f"{api}: batching must be one of {', '.join(MODES)}, got "
                                 f"{batching!r}")


def why_not(spec: Spec, inputs: Mapping[str, Any], model, mode: str) -> str | None:
    """Why this call runs one example at a time (None: it batches)."""
    if mode == "off":
        return "batching is off"
    if not any(isinstance(v, list) for v in inputs.values()):
        return "the spec has no per-example runs (no lengths or examples inputs)"
    analysis = analysis_of(spec)
    if analysis.blockers:
        return analysis.blockers[0]
    if analysis.random_reason and config.train:
        return f"the spec {analysis.random_reason}"
    return None


def plan_groups(spec: Spec, inputs: Mapping[str, Any], mode: str, round_steps: bool = False
                ) -> tuple[list[Group], int, int, str | None]:
    """The groups a call starts with, (padded example-steps, example-steps), and why its
    sequences were not padded (None: they were, or needed no padding). ``round_steps`` (static
    mode): a padded bucket's time axis is rounded up to ``padded_steps`` sizes, so shuffled
    batches, whose longest examples differ, share a few shapes (a few plans) instead of
    tracing one plan per longest length."""
    lists = {k: v for k, v in inputs.items() if isinstance(v, list)}
    # the sequences have lengths (and may be padded); per-row inputs' rows only stack
    sequences = {k: lists[k] for k in sequence_names(spec, inputs)}
    whole = _stacked_group(lists, sequences)
    if whole is not None:
        first = next(iter(sequences))
        return [whole], 0, len(whole.index) * whole.arrays[first].shape[1], None
    lengths = {k: np.array([np.shape(a)[0] for a in v]) for k, v in sequences.items()}
    first = next(iter(sequences))
    refused = None if mode == "off" else pad_refusal(spec, sequences, lengths[first])
    may_pad = mode != "off" and refused is None
    if may_pad:
        buckets = _buckets(tuple(lengths[first].tolist()), force=(mode == "pad"))
    else:
        signature: dict[tuple, list[int]] = {}
        keys = zip(*[[(a.shape, a.dtype.str) for a in map(np.asarray, v)]
                     for v in lists.values()], strict=True)
        for i, key in enumerate(keys):
            signature.setdefault(key, []).append(i)
        buckets = [(np.array(ix), False) for ix in signature.values()]
    groups, padded, total = [], 0, 0
    for index, pad in buckets:
        longest = int(lengths[first][index].max())
        if may_pad and round_steps and padded_steps(longest) > longest:
            longest, pad = padded_steps(longest), True
        arrays = {}
        for k, v in lists.items():
            if k not in sequences:
                stacked = stacked_rows(v)
                arrays[k] = stacked[index] if stacked is not None else \
                    np.stack([np.asarray(v[i]) for i in index])
                continue
            if pad:
                arrays[k] = _edge_padded(v, index, longest)
            else:
                arrays[k] = np.stack([np.asarray(v[i]) for i in index])
        padded += int((longest - lengths[first][index]).sum())
        total += longest * len(index)
        groups.append(Group(index, arrays, {k: lengths[k][index] for k in sequences}, pad))
    return groups, padded, total, None if mode != "pad" else refused


def pad_refusal(spec: Spec, sequences: Mapping[str, list], lengths: np.ndarray) -> str | None:
    """Why these examples' sequences cannot be padded into buckets (None: they can): the
    spec's located reason (``batch_analysis``), or one about the examples themselves."""
    reason = analysis_of(spec).pad_reason
    if reason is not None:
        return reason
    if lengths.min() == 0:
        i = int(np.argmin(lengths))
        return f"example {i} has an empty sequence, which has no last step to pad with"
    return _different_rest(sequences)


def padded_steps(steps: int) -> int:
    """``steps`` rounded up to one of four sizes per octave (..., 8, 10, 12, 14, 16, 20, 24,
    28, 32, 40, ...): at most a quarter more steps, a handful of shapes for any lengths."""
    if steps <= 8:
        return steps
    grain = 1 << ((steps - 1).bit_length() - 3)
    return -(-steps // grain) * grain


def _stacked_group(lists: Mapping[str, list], sequences: Mapping[str, list]) -> Group | None:
    """Inputs made as the rows of one array each (``stacked_examples``), for as many examples:
    one group of them all, as stacking the rows would give, without stacking them."""
    arrays = {}
    for k, v in lists.items():
        stacked = stacked_rows(v)
        if stacked is None or stacked.ndim < (2 if k in sequences else 1):
            return None
        arrays[k] = stacked
    # the same arrays as the last call's (their shapes too): its group again (a Group is
    # never changed once made; it holds the arrays, so their ids stay theirs)
    first = next(iter(lists.values()))
    key = tuple((k, id(a), a.shape) for k, a in arrays.items())
    memo = first.__dict__.get("_graphcore_group")
    if memo is not None and memo[0] == key:
        return memo[1]
    n = len(next(iter(arrays.values())))
    if any(len(a) != n for a in arrays.values()):
        return None
    group = Group(np.arange(n), arrays, {k: np.full(n, arrays[k].shape[1]) for k in sequences})
    first.__dict__["_graphcore_group"] = (key, group)
    return group


def _different_rest(lists: Mapping[str, list]) -> str | None:
    """Padding needs every example of an input to agree on all but the time axis, and all
    the sequence inputs of one example to have one length: what breaks that, or None."""
    for name, v in lists.items():
        kinds = dict.fromkeys((np.shape(a)[1:], np.asarray(a).dtype.str) for a in v)
        if len(kinds) > 1:
            (a, da), (b, db) = list(kinds)[:2]
            return f"the examples of input '{name}' differ beyond the time axis " \
                f"({a} {np.dtype(da)} and {b} {np.dtype(db)} per step)"
    per_example = zip(*[[np.shape(a)[0] for a in v] for v in lists.values()], strict=True)
    for i, ls in enumerate(per_example):
        if len(set(ls)) > 1:
            return f"example {i}'s sequence inputs ({', '.join(lists)}) have different " \
                f"lengths ({', '.join(map(str, ls))})"
    return None


@lru_cache(maxsize=64)
def _buckets(length: tuple[int, ...], force: bool) -> tuple[tuple[np.ndarray, bool], ...]:
    """Contiguous ranges of the sorted distinct lengths (each example's ``length``), chosen to
    minimise the cost model (``force``: one bucket); worked out once per list of lengths (a
    training loop or a benchmark calls with the same lengths again). The examples' indexes
    are read-only: groups share them."""
    lengths = np.array(length)
    distinct = np.unique(lengths)
    if force or len(distinct) == 1:
        return (_read_only(np.arange(len(length))), len(distinct) > 1),
    counts = [int((lengths == d).sum()) for d in distinct]
    k = len(distinct)
    best = [0.0] + [float("inf")] * k  # best[j]: cost of the first j distinct lengths
    cut = [0] * (k + 1)
    for j in range(1, k + 1):
        rows = 0
        for i in range(j - 1, -1, -1):
            rows += counts[i]
            cost = best[i] + int(distinct[j - 1]) * (OVERHEAD_ROWS + rows)
            if cost < best[j]:
                best[j], cut[j] = cost, i
    result = []
    j = k
    while j > 0:
        i = cut[j]
        members = np.nonzero((lengths >= distinct[i]) & (lengths <= distinct[j - 1]))[0]
        result.append((_read_only(members), j - i > 1))
        j = i
    return tuple(result[::-1])


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _edge_padded(sequences: list, index: np.ndarray, steps: int) -> np.ndarray:
    """The sequences at ``index`` in one array of ``steps`` time steps, each repeated at its
    last step past its end: padded steps see real data, so they stay finite where the real
    ones are (their results are masked out). Written in place, one sequence at a time."""
    head = np.asarray(sequences[index[0]])
    out = np.empty((len(index), steps) + head.shape[1:], head.dtype)
    for row, i in enumerate(index.tolist()):
        a = np.asarray(sequences[i])
        length = a.shape[0]
        out[row, :length] = a
        if length < steps:
            out[row, length:] = a[length - 1]
    return out


def _as_variable(value: Any) -> Any:
    """A per-example output as one-example runs give it: a Variable (without its graph)."""
    if isinstance(value, Variable | tuple):
        return value
    return Variable(np.asarray(value), requires_grad=False)


def run_dynamic(spec: Spec, model, inputs: Mapping[str, Any], *, backward: bool,
                mode: str) -> tuple[RunResult | None, BatchingInfo]:
    """The call batched define-by-run, or None (run it per example) with the reason."""
    info = BatchingInfo(mode)
    info.reason = why_not(spec, inputs, model, mode)
    if info.reason is not None:
        return None, info
    shared = {k: v for k, v in inputs.items() if not isinstance(v, list)}
    groups, info.padded_steps, info.steps, info.pad_refused = plan_groups(spec, inputs, mode)
    n = sum(len(g.index) for g in groups)
    results = GroupResults(spec, n, _as_variable, copy_loss_args=False)
    forward_s = backward_s = 0.0
    while groups:
        group = groups.pop(0)
        start = time.perf_counter()
        taken: list[PathEntry] = []
        run = BatchRun(spec, model, group.env(shared), set(group.arrays), len(group.index),
                       taken)
        try:
            with np.errstate(all="ignore"):
                outputs, loss = run.forward_unguarded()
        except Split as split:
            info.splits += 1
            groups[:0] = [group.take(split.outcome), group.take(~split.outcome)]
            continue
        except Fallback as e:
            info.reason = f"fell back to one example at a time: {e}"
            return None, info
        forward_s += time.perf_counter() - start
        info.groups += 1
        info.group_sizes.append(len(group.index))
        info.partitions += len(run.partitions)
        padded = {key: name for key, (_, name) in run.padded.items()}
        results.add(group, taken,
                    {name: (v, run.flag(name), padded.get(id(v))) for name, v in outputs.items()},
                    None if loss is None else list(zip(run.last_args, run.last_flags,
                                                       strict=True)),
                    None if loss is None else loss.array,
                    [order.array for order in run.partitions])
        if loss is not None and backward and loss.creator is not None:
            start = time.perf_counter()
            total = F.sum(loss)
            (total * (1.0 / n) if n > 1 else total).backward()
            backward_s += time.perf_counter() - start
    info.applied = True
    timing = {"forward": forward_s * 1e3, "backward": backward_s * 1e3,
              "total": (forward_s + backward_s) * 1e3}
    result = results.result(bound_dims(spec, inputs), timing)
    return result, info


def size_lazy_parameters(spec: Spec, model, inputs: Mapping[str, Any]) -> None:
    """Give a fresh model's lazily sized layers the shapes and initial values a per-example
    run gives them: forward passes over the examples in order (nothing recorded, results
    dropped), drawing from numpy's generator as the per-example run draws, until every
    parameter is sized (usually after the first example) or every example has run; once per
    model. The caller seeds the generator as the per-example run does. A spec that batches has
    no randomness and no state a forward pass changes, so nothing else differs."""
    if model.initialized() or model.__dict__.get("_graphcore_ran_once"):
        return
    n = len(next(v for v in inputs.values() if isinstance(v, list)))
    with no_backprop_mode():
        for i in range(n):
            example = {k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()}
            ForwardPass(spec, model, example, [], record=False).forward_unguarded()
            if model.initialized():
                break
    model.__dict__["_graphcore_ran_once"] = True


def run(spec: Spec, model, inputs: Mapping[str, Any], backward: bool, seed: int | None,
        mode: str, per_example) -> RunResult:
    """``run_spec`` for inputs with per-example runs: batched, or one example at a time."""
    check_mode("run_spec", mode)
    model.cleargrads()
    result = None
    info = BatchingInfo(mode)
    if why_not(spec, inputs, model, mode) is None:
        lazy = not model.initialized()  # a parameter still unsized draws its initial values
        with (seeded((spec.seed if seed is None else seed) + 1) if lazy
              else contextlib.nullcontext()), np.errstate(all="ignore"):
            size_lazy_parameters(spec, model, inputs)
            result, info = run_dynamic(spec, model, inputs, backward=backward, mode=mode)
    else:
        info.reason = why_not(spec, inputs, model, mode)
    if result is None:
        result = per_example(spec, model, inputs, backward, seed)
        model.__dict__["_graphcore_ran_once"] = True
    result.batching = info.to_dict()
    return result
