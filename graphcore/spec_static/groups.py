"""Static mode for batched examples: each group of examples replays its own cached plan.

The groups are ``spec.batching``'s (shapes or padded buckets, split where a live predicate
divides them). A group's plan is traced from one batched run (``batch_run.BatchRun``) and
cached beside the per-example plans, keyed by the group's input shapes (padding masks
included, so a bucket of the same size replays whatever its lengths). Its guards evaluate the
predicate for every example: when the examples disagree the replay stops with ``Split`` and
each side runs as its own group. The plan returns the examples' losses and their sum, whose
backward gives the group's gradients, scaled by ``1 / examples`` as one-at-a-time runs
accumulate them. A group the full cache cannot hold runs batched define-by-run (never
traced), so a cache too small for a spec's paths never makes it slower than define-by-run.
A call repeating the last one's single whole group (the same stacked example lists) replays
its plan without forming groups again (``_WholeCall``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from graphcore import errors
from graphcore import functions as F
from graphcore.batching import batcher
from graphcore.batching.batched_pass import BatchRun
from graphcore.batching.outcomes import Fallback, Split
from graphcore.batching.results import GroupResults
from graphcore.config import config
from graphcore.inputs.stacked import stacked_rows
from graphcore.interpreter.calls import bound_dims
from graphcore.interpreter.parameters import seeded
from graphcore.interpreter.plan import plan_of
from graphcore.interpreter.results import PathEntry, RunResult
from graphcore.spec_static.gradients import accumulate_grad
from graphcore.static.guards import GuardMiss
from graphcore.variable import Variable


def _traced_call(runner, batched: set[str], batch: int, meta: dict[str, Any], whole: bool):
    """The function a group's plan is traced from (``meta`` gets the output flags);
    ``whole``: the group is all the call's examples, so the plan differentiates their mean
    (``loss_scale``) and its gradients are the call's (lent, as one example's plan lends
    them), not a share to add."""
    spec, model = runner.spec, runner.model

    def make(path: list[PathEntry], on_predicate):
        def call(variables: dict[str, Variable]) -> dict[str, Variable]:
            run = BatchRun(spec, model, dict(variables), batched, batch, path,
                           on_predicate=on_predicate)
            with np.errstate(all="ignore"):
                outputs, loss = run.forward_unguarded()
            result: dict[str, Variable] = {}
            if loss is not None:
                result["loss"] = F.sum(loss)  # differentiated scaled by loss_scale
                result["losses"] = loss
                if runner.loss_inputs:
                    meta["loss_flags"] = run.last_flags[:2]
                    for i, value in enumerate(run.last_args[:2]):
                        result[f"loss_in:{i}"] = _variable(value)
            for j, order in enumerate(run.partitions):  # read back for the path
                result[f"split:{j}"] = order
            meta["splits"] = len(run.partitions)
            padded = {key: name for key, (_, name) in run.padded.items()}
            meta["flags"] = {name: run.flag(name) for name in outputs}
            meta["padded"] = {name: padded.get(id(v)) for name, v in outputs.items()}
            for name, value in outputs.items():
                if isinstance(value, tuple):
                    raise errors.TraceError(f"static mode cannot return output '{name}': it "
                                            "holds several arrays")
                result[f"out:{name}"] = _variable(value)
            return result
        return call
    make.loss_scale = 1.0 / batch if whole else 1.0
    return make


def _variable(value: Any) -> Variable:
    return value if isinstance(value, Variable) else \
        Variable(np.asarray(value), requires_grad=False)


def _group_dynamic(runner, env: dict[str, Any], batched: set[str], batch: int,
                   backward: bool):
    """A group the full cache cannot hold: batched define-by-run."""
    taken: list[PathEntry] = []
    runner.model.cleargrads()
    run = BatchRun(runner.spec, runner.model, env, batched, batch, taken)
    with np.errstate(all="ignore"):
        outputs, loss = run.forward_unguarded()
        if backward and config.train and loss is not None and loss.creator is not None:
            F.sum(loss).backward()
    grads = {name: p.grad for name, p in runner.params().items() if p.grad is not None}
    padded = {key: name for key, (_, name) in run.padded.items()}
    meta = {"flags": {name: run.flag(name) for name in outputs},
            "padded": {name: padded.get(id(v)) for name, v in outputs.items()},
            "loss_flags": run.last_flags[:2], "splits": len(run.partitions)}
    values = {f"out:{name}": (v.array if isinstance(v, Variable) else v)
              for name, v in outputs.items()}
    for j, order in enumerate(run.partitions):
        values[f"split:{j}"] = order.array
    if loss is not None:
        values["losses"] = loss.array
        for i, a in enumerate(run.last_args[:2]):
            values[f"loss_in:{i}"] = a.array if isinstance(a, Variable) else a
    return values, taken, grads, meta


def run(runner, inputs: Mapping[str, Any], backward: bool, seed: int | None,
        mode: str) -> RunResult:
    """``StaticSpecRunner.run`` for inputs with per-example runs."""
    batcher.check_mode("StaticSpecRunner.run", mode)
    again = runner.__dict__.get(_WHOLE_KEY)
    if again is not None:
        result = again.replay(runner, inputs, backward, mode)
        if result is not None:
            return result
    spec, model = runner.spec, runner.model
    info = batcher.BatchingInfo(mode)
    info.reason = batcher.why_not(spec, inputs, model, mode)
    if info.reason is None and not model.initialized():
        # size lazy parameters define-by-run (as run_spec draws them) without filling the
        # plan cache with per-example paths; then batch
        with seeded((spec.seed if seed is None else seed) + 1), np.errstate(all="ignore"):
            batcher.size_lazy_parameters(spec, model, inputs)
    result = None
    if info.reason is None:
        try:
            # numpy's global generator is saved and restored only for a spec that draws
            if plan_of(spec).draws_randomness or not model.initialized():
                with seeded((spec.seed if seed is None else seed) + 1):
                    result = _run_groups(runner, inputs, backward, info)
            else:
                result = _run_groups(runner, inputs, backward, info)
        except Fallback as e:
            info.reason = f"fell back to one example at a time: {e}"
            result = None
    if result is None:
        info.applied = False
        result = runner.run_examples(inputs, backward=backward, seed=seed)
        model.__dict__["_graphcore_ran_once"] = True
    result.batching = info.to_dict()
    return result


def _run_groups(runner, inputs: Mapping[str, Any], backward: bool,
                info: batcher.BatchingInfo) -> RunResult:
    spec = runner.spec
    runner.model.cleargrads()
    runner.__dict__.pop(_WHOLE_KEY, None)
    shared = {k: np.asarray(v) for k, v in inputs.items() if not isinstance(v, list)}
    groups, info.padded_steps, info.steps, info.pad_refused = batcher.plan_groups(
        spec, inputs, info.mode, round_steps=True)
    n = sum(len(g.index) for g in groups)
    results = GroupResults(spec, n, _same, copy_loss_args=True)
    grads: dict[str, np.ndarray] = {}
    owners: dict[str, Any] = {}  # parameter name -> the Parameter its gradient goes to
    forward_s = backward_s = 0.0
    splitting = runner.__dict__.setdefault("_split_keys", set())
    while groups:
        group = groups.pop(0)
        batch = len(group.index)
        whole = batch == n
        env, key = _env_and_key(runner, group, shared, backward, whole)
        start = time.perf_counter()
        meta: dict[str, Any] = {}
        try:
            if key in splitting:  # its trace split: run it untraced (the prefix only, usually)
                variant, values = None, None
            else:
                variant, values = runner._forward(
                    env, backward, _traced_call(runner, set(group.arrays), batch, meta, whole),
                    key)
        except Split as split:
            if key not in runner.cache:
                splitting.add(key)  # the trace split: never trace this key again
            info.splits += 1
            groups[:0] = [group.take(split.outcome), group.take(~split.outcome)]
            continue
        if variant is None:
            try:
                values, taken, group_grads, meta = _group_dynamic(
                    runner, env, set(group.arrays), batch, backward)
            except Split as split:
                info.splits += 1
                groups[:0] = [group.take(split.outcome), group.take(~split.outcome)]
                continue
            forward_s += time.perf_counter() - start
            owners.update(runner.params())
            for name, g in group_grads.items():
                accumulate_grad(grads, name, g, n)
            keys = _value_keys(spec, meta)
        else:
            if not hasattr(variant, "meta"):
                variant.meta = meta
                variant.value_keys = _value_keys(spec, meta)
            meta, taken, keys = variant.meta, variant.path, variant.value_keys
            forward_s += time.perf_counter() - start
            plan = variant.plan
            if backward and plan.backward_steps:
                start = time.perf_counter()
                plan.run_backward()
                backward_s += time.perf_counter() - start
                owners.update(plan.params)
                if whole:  # the plan's mean already: its buffers, lent
                    grads.update(plan.grad_outputs)
                else:
                    for name, buf in plan.grad_outputs:
                        accumulate_grad(grads, name, buf, n)
        info.groups += 1
        info.group_sizes.append(batch)
        _add_group(results, info, group, taken, meta, keys, values)
        if whole and variant is not None and not shared and info.splits == 0:
            _WholeCall.remember(runner, inputs, group, env, key, variant, backward, info)
    for name, g in grads.items():
        owners[name]._grad = g
    info.applied = True
    timing = {"forward": forward_s * 1e3, "backward": backward_s * 1e3,
              "total": (forward_s + backward_s) * 1e3}
    return results.result(bound_dims(spec, inputs), timing)


def _add_group(results: GroupResults, info: batcher.BatchingInfo, group: batcher.Group,
               taken: list[PathEntry], meta: dict[str, Any], keys: dict[str, list],
               values: dict[str, Any]) -> None:
    """A finished group's outputs, loss arguments and row orders into ``results``."""
    # plan buffers are overwritten by the next replay: one copy per group, read lazily
    outputs = {name: (np.array(values[k]), meta["flags"][name], meta["padded"][name])
               for name, k in keys["outputs"]}
    loss_args = None
    if "loss_in:0" in values:
        flags = meta.get("loss_flags", [False, False])
        loss_args = [(np.array(values[k]), flags[j]) for j, k in enumerate(LOSS_ARGS)
                     if k in values]
    orders = [np.array(values[k]) for k in keys["splits"]]
    info.partitions += len(orders)
    results.add(group, taken, outputs, loss_args, values.get("losses"), orders)


_WHOLE_KEY = "_graphcore_whole_call"


class _WholeCall:
    """A call whose examples all ran as one group, replaying a cached plan, from per-example
    lists made as the rows of one array each (``stacked_examples``). A later call with the
    same lists, still holding those rows, the same flags and that plan still cached replays
    it at once, without forming groups again (on a small spec that Python is a quarter of the
    call); anything else, or a guard that stops the replay, takes the general path."""

    __slots__ = ("lists", "group", "env", "key", "variant", "backward", "train", "mode",
                 "steps")

    @classmethod
    def remember(cls, runner, inputs: Mapping[str, Any], group: batcher.Group,
                 env: dict[str, Any], key: tuple, variant, backward: bool,
                 info: batcher.BatchingInfo) -> None:
        if plan_of(runner.spec).draws_randomness or any(
                stacked_rows(inputs[name]) is not array for name, array in group.arrays.items()):
            return
        whole = cls()
        whole.lists = {name: inputs[name] for name in group.arrays}
        whole.group, whole.env, whole.key, whole.variant = group, env, key, variant
        whole.backward, whole.train, whole.mode, whole.steps = \
            backward, config.train, info.mode, info.steps
        runner.__dict__[_WHOLE_KEY] = whole

    def replay(self, runner, inputs: Mapping[str, Any], backward: bool, mode: str
               ) -> RunResult | None:
        if mode != self.mode or backward != self.backward or config.train != self.train \
                or len(inputs) != len(self.lists):
            return None
        for name, rows in self.lists.items():
            if inputs.get(name) is not rows or stacked_rows(rows) is not self.group.arrays[name]:
                return None
        variants = runner.cache.get(self.key)
        if not variants or variants[0] is not self.variant:
            return None
        runner.model.cleargrads()
        variant, plan = self.variant, self.variant.plan
        start = time.perf_counter()
        try:
            values = plan.run(self.env, backward=False)
        except GuardMiss:
            runner.__dict__.pop(_WHOLE_KEY, None)
            return None  # the general path replays (or traces) what this call needs
        forward_s = time.perf_counter() - start
        runner.stats.hits += 1
        runner.last = variant
        runner.cache.move_to_end(self.key)
        backward_s = 0.0
        if backward and plan.backward_steps:
            start = time.perf_counter()
            plan.run_backward()
            backward_s = time.perf_counter() - start
            owners = plan.params
            for name, g in plan.grad_outputs:  # the plan's mean: its buffers, lent
                owners[name]._grad = g
        n = len(self.group.index)
        info = batcher.BatchingInfo(self.mode, applied=True, groups=1, group_sizes=[n],
                                    steps=self.steps)
        results = GroupResults(runner.spec, n, _same, copy_loss_args=True)
        _add_group(results, info, self.group, variant.path, variant.meta, variant.value_keys,
                   values)
        timing = {"forward": forward_s * 1e3, "backward": backward_s * 1e3,
                  "total": (forward_s + backward_s) * 1e3}
        result = results.result(bound_dims(runner.spec, inputs), timing)
        result.batching = info.to_dict()
        return result


def _same(value: Any) -> Any:
    return value


def _env_and_key(runner, group: batcher.Group, shared: dict[str, np.ndarray], backward: bool,
                 whole: bool) -> tuple[dict[str, Any], tuple]:
    """The group's inputs and its plan cache key. A group made again for the same arrays
    (``plan_groups`` keeps one per input list) with no shared inputs keeps both: nothing
    they depend on can have changed but the train flag and whether gradients are wanted."""
    memo = group.__dict__.setdefault("_graphcore_keys", {}) if not shared else None
    wanted = (backward, config.train, whole)
    found = memo.get(wanted) if memo is not None else None
    if found is None:
        env = group.env(shared)
        found = (env, runner.cache_key(env, backward,
                                       "batched whole" if whole else "batched group"))
        if memo is not None:
            memo[wanted] = found
    return found


LOSS_ARGS = ("loss_in:0", "loss_in:1")


def _value_keys(spec, meta: dict[str, Any]) -> dict[str, list]:
    """Which plan values a group's results copy (made once per plan): the outputs, and each
    partitioned ``if``'s row order."""
    return {"outputs": [(name, f"out:{name}") for name in spec.outputs],
            "splits": [f"split:{j}" for j in range(meta.get("splits", 0))]}
