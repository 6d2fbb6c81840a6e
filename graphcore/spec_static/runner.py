"""Static mode for specs: replay cached plans, with guards for the spec's live predicates.

A plan is cached per input signature (shapes, dtypes, train flag, gradients wanted); each
predicate the traced run evaluated is a ``guard`` step in the plan. A call whose guards all
hold replays; a guard that fails stops the replay, the call runs define-by-run instead, and
the path it takes is traced and cached beside the others (a bounded cache, hits and misses
counted). So a dynamic spec runs at static speed on every path it repeats. A ``kind: static``
spec whose path changes is reported with the position of the step that diverged.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.config import config
from graphcore.interpreter.calls import bound_dims
from graphcore.interpreter.examples import example_count, example_rows, sequence_names
from graphcore.interpreter.forward import ForwardPass
from graphcore.interpreter.parameters import SpecModel, seeded
from graphcore.interpreter.plan import plan_of
from graphcore.interpreter.results import EagerViews, PathEntry, RunResult
from graphcore.language.syntax import Spec
from graphcore.spec_static import groups as spec_batching
from graphcore.spec_static.gradients import accumulate_grad
from graphcore.static.compile import CacheStats
from graphcore.static.guards import GuardMiss
from graphcore.static.lower import Plan
from graphcore.static.passes import PassReport, run_passes, select
from graphcore.static.trace import Trace, trace
from graphcore.variable import Variable


class _Variant:
    """One traced path: its plan and the path entries it stands for."""

    def __init__(self, traced: Trace, plan: Plan, reports: list[PassReport], path: list,
                 compile_ms: float, locations: dict[int, str] | None = None) -> None:
        self.trace = traced
        # traced IR node id -> the "line:col" of the spec step that made it (drawings link
        # IR nodes to the spec; passes keep the ids of the nodes they leave alone)
        self.locations = locations or {}
        self.plan = plan
        self.reports = reports
        self.path = path
        self.compile_ms = compile_ms
        self.guarded = any(n.op == "guard" for n in plan.graph.nodes)


class StaticSpecRunner:
    """Runs one spec (with one model) in static mode; reuse it across calls."""

    def __init__(self, spec: Spec, model: SpecModel, passes: list[str] | None = None,
                 cache_size: int = 32, loss_inputs: bool = False) -> None:
        """``loss_inputs``: plans also return the loss step's first two arguments, and
        results carry them (``RunResult.loss_inputs``), for training metrics."""
        self.spec = spec
        self.loss_inputs = loss_inputs
        self.model = model
        self.passes = select(passes)
        self.cache_size = cache_size
        self.cache: OrderedDict[tuple, list[_Variant]] = OrderedDict()
        self.stats = CacheStats()
        self.last: _Variant | None = None
        self.uncached = 0  # calls run define-by-run because the cache was full

    def _define_by_run(self, example: dict[str, np.ndarray], backward: bool):
        """One example define-by-run: its outputs (arrays), loss, path and gradients."""
        taken: list[PathEntry] = []
        self.model.cleargrads()
        with np.errstate(all="ignore"):
            outputs, loss = ForwardPass(self.spec, self.model, dict(example),
                                             taken).forward()
            if backward and config.train and loss is not None and loss.creator is not None:
                loss.backward()
        arrays = {name: (v.array if isinstance(v, Variable) else v)
                  for name, v in outputs.items()}
        grads = {name: p.grad for name, p in self.params().items() if p.grad is not None}
        return arrays, (None if loss is None else float(loss.array.item())), taken, grads

    def params(self) -> dict:
        return {n.lstrip("/"): p for n, p in self.model.namedparams()}

    # --- one call ---------------------------------------------------------------------------
    def run(self, inputs: Mapping[str, Any], *, backward: bool = True,
            seed: int | None = None, batching: str = "auto") -> RunResult:
        """One call; per-example runs are batched as ``run_spec`` batches them, each group
        (or padded bucket) replaying its own cached plan (``spec_batching``)."""
        for value in inputs.values():
            if isinstance(value, list):
                inputs = example_rows(self.spec, inputs)
                return spec_batching.run(self, inputs, backward, seed, batching)
        return self.run_examples(inputs, backward=backward, seed=seed)

    def run_examples(self, inputs: Mapping[str, Any], *, backward: bool = True,
                     seed: int | None = None) -> RunResult:
        """``run`` one example at a time."""
        n = example_count(self.spec, inputs)
        self.model.cleargrads()
        path: list[PathEntry] = bound_dims(self.spec, inputs)
        per_example, total, forward_s, backward_s = [], 0.0, 0.0, 0.0
        loss_args: list[tuple[Any, ...]] = []
        grads: dict[str, np.ndarray] = {}
        with seeded((self.spec.seed if seed is None else seed) + 1):
            for i in range(n):
                example = {k: np.asarray(v[i] if isinstance(v, list) else v)
                           for k, v in inputs.items()}
                if any(isinstance(v, list) for v in inputs.values()):
                    lengths = {k: len(inputs[k][i])
                               for k in sequence_names(self.spec, inputs)}
                    where = self.spec.inputs[next(iter(lengths))].loc
                    path.append(PathEntry("example", where, {"index": i, "lengths": lengths}))
                start = time.perf_counter()
                variant, values = self._forward(example, backward)
                if variant is None:  # a path the full cache cannot take: define-by-run
                    outputs, loss, taken, example_grads = self._define_by_run(example, backward)
                    forward_s += time.perf_counter() - start
                    path.extend(taken)
                    per_example.append(outputs)
                    if loss is not None:
                        total += loss / n
                    for name, g in example_grads.items():
                        accumulate_grad(grads, name, g, n)
                    continue
                forward_s += time.perf_counter() - start
                path.extend(variant.path)
                # a plan's outputs are its buffers, which its next replay (a later example on
                # the same path) overwrites: with several examples each keeps a copy
                outputs = {name: (np.array(values[f"out:{name}"]) if n > 1
                                  else values[f"out:{name}"]) for name in self.spec.outputs}
                per_example.append(outputs)
                if "loss" in values:
                    total += float(values["loss"]) / n
                if "loss_in:0" in values:  # buffers too: a copy each with several examples
                    loss_args.append(tuple(
                        np.array(values[f"loss_in:{i}"]) if n > 1 else values[f"loss_in:{i}"]
                        for i in range(2) if f"loss_in:{i}" in values))
                if backward and variant.plan.backward_steps:
                    start = time.perf_counter()
                    out = variant.plan.run_backward()
                    backward_s += time.perf_counter() - start
                    for key, buf in out.items():
                        if key.startswith("grad/"):
                            accumulate_grad(grads, key[5:], buf, n)
        params = self.params()
        for name, g in grads.items():
            params[name]._grad = g
        timing = {"forward": forward_s * 1e3, "backward": backward_s * 1e3,
                  "total": (forward_s + backward_s) * 1e3}
        return RunResult(loss=total if self.spec.loss else None,
                         timing_ms=timing, examples=n,
                         views=EagerViews(per_example[-1], path, per_example, loss_args))

    def cache_key(self, example: dict[str, np.ndarray], backward: bool,
                  call_kind: Any = False) -> tuple:
        """The plan cache's key for ``example``: its shapes and dtypes, the train flag, whether
        gradients are wanted, and ``call_kind`` (what else tells traced functions apart)."""
        wants = backward and config.train and self.spec.loss is not None
        return (tuple((k, v.shape, v.dtype) for k, v in example.items()), config.train, wants,
                call_kind)

    def _forward(self, example: dict[str, np.ndarray], backward: bool, make_call=None,
                 key: tuple | None = None):
        """The variant replayed (or traced) for ``example`` and its values; (None, None) when
        the cache is full. ``make_call(path, on_predicate)``: the traced function (default:
        one run), whose plans ``key`` (``cache_key``) tells apart from others'."""
        if key is None:
            key = self.cache_key(example, backward)
        wants = key[2]
        variants = self.cache.get(key, [])
        # Every attempt (a replay a guard may stop, then the trace) starts from the same
        # random state, so dropout draws what define-by-run would have drawn. Only a plan
        # with guards can stop: without one, the first replay is the only attempt. (Saving
        # the state costs more than a small plan's replay: only a spec that draws saves it.)
        rng_state = np.random.get_state() if variants and variants[0].guarded \
            and plan_of(self.spec).draws_randomness else None
        for variant in variants:
            if variant is not variants[0] and rng_state is not None:
                np.random.set_state(rng_state)
            try:
                values = variant.plan.run(example, backward=False)
            except GuardMiss as miss:
                if self.spec.kind == "static":
                    raise errors.TraceError(
                        f"{miss.at}: the static spec took another path here ('{miss.predicate}' "
                        f"was {miss.found}, the traced run found {miss.expected})") from None
                continue
            self.stats.hits += 1
            self.last = variant
            if variants[0] is not variant:  # most recently used first
                variants.remove(variant)
                variants.insert(0, variant)
            self.cache.move_to_end(key)
            return variant, values
        self.stats.misses += 1
        if rng_state is not None:
            np.random.set_state(rng_state)
        if sum(len(v) for v in self.cache.values()) >= self.cache_size:
            # The cache cannot hold another path. Evicting one to trace this one makes a
            # spec with more paths than the cache holds trace on nearly every call (slower
            # than define-by-run), so this call runs define-by-run and the cache is kept.
            self.uncached += 1
            return None, None
        variant = self._compile(example, wants, make_call)
        variants.insert(0, variant)
        self.cache[key] = variants
        self.stats.keys = list(self.cache)
        self.last = variant
        return variant, variant.plan.run(example, backward=False)

    def _compile(self, example: dict[str, np.ndarray], grads: bool, make_call=None) -> _Variant:
        start = time.perf_counter()
        spec, model = self.spec, self.model
        records: list[dict[str, Any]] = []
        path: list[PathEntry] = []

        def hook(predicate, loc, scope, outcome) -> None:
            values = {ref.name: scope[ref.name] for ref in predicate.name_refs()}
            records.append({"predicate": predicate, "expect": outcome, "values": values,
                            "at": str(loc)})

        steps: dict[int, str] = {}

        def call(variables: dict[str, Variable]) -> dict[str, Variable]:
            run = ForwardPass(spec, model, dict(variables), path, on_predicate=hook)
            outputs, loss = run.forward()
            steps.update(run.op_locations())
            result = {}
            if loss is not None:
                result["loss"] = loss
                if self.loss_inputs:  # what metrics compare (the loss step's arguments)
                    for i, value in enumerate(run.produced[-1][2][:2]):
                        result[f"loss_in:{i}"] = value if isinstance(value, Variable) else \
                            Variable(np.asarray(value), requires_grad=False)
            for name, value in outputs.items():
                if isinstance(value, tuple):
                    raise errors.TraceError(f"static mode cannot return output '{name}': it "
                                            "holds several arrays")
                result[f"out:{name}"] = value if isinstance(value, Variable) else \
                    Variable(np.asarray(value), requires_grad=False)
            return result

        if make_call is not None:
            call = make_call(path, hook)
        traced = trace(None, example, self.params(), name=spec.name, grads=grads,
                       loss_scale=getattr(make_call, "loss_scale", 1.0),
                       call=call, guards=lambda: records)
        graph, reports = run_passes(traced.graph, self.passes)
        plan = Plan(graph, traced.params, traced.instances, after_trace=True)
        compile_ms = (time.perf_counter() - start) * 1e3
        self.stats.compile_ms += compile_ms
        locations = {i: steps[id(f)] for i, f in traced.instances.items() if id(f) in steps}
        return _Variant(traced, plan, reports, path, compile_ms, locations)
