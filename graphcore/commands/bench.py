"""Timing specs: forward, backward and total time per execution mode and batch size.

>>> results = bench_spec(spec, modes=("dynamic",), batches=[1, 32], repeat=10, warmup=2)
>>> [(r.batch, r.to_dict()["median_ms"]) for r in results]

For every (spec, batch size, mode): build the model and the inputs once, run ``warmup``
untimed iterations, then ``repeat`` timed ones (forward and backward timed apart by
``run_spec``, with the garbage collector paused), then one separate iteration under
``tracemalloc`` for the peak memory, and with ``profile`` ``repeat`` more under
``profile_ops()`` for the per-op table; tracing and profiling never touch the timed iterations.
``speedup`` is the dynamic mode's median over this mode's at the same batch size (so dynamic
is 1.0; None when dynamic is not measured).

Static mode (``static``) runs the spec through a ``StaticSpecRunner``: its first call traces,
optimizes and lowers the plan, and is timed apart, before the warm-up, into ``compile_ms``;
the warm-up and timed iterations then replay. Its result also carries, per pass of the plan it
replayed, what the pass removed (``passes``: name, nodes_removed, bytes_saved) and the plan
cache's hits and misses after the timed iterations (``cache_hits``, ``cache_misses``; a
dynamic spec whose path repeats hits on every call after the first). ``passes`` chooses the
passes as ``graphcore.static.passes.select`` reads them (``["-fuse"]``).

Batch sizes rewrite the leading axis of every generated input (random, zeros, ones) in a copy
of the spec; an input read from a file or stdin, a sequence input (``lengths``) or an input
without an axis cannot be resized, and asking for it raises ``BenchOptionError``. Nothing here
prints; ``progress(done, total, description)`` is called after every iteration.
"""

from __future__ import annotations

import dataclasses
import gc
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcore.batching.run import run_spec
from graphcore.errors import GraphcoreError
from graphcore.inputs.make import make_inputs
from graphcore.interpreter.parameters import build_model
from graphcore.interpreter.preprocessing import prepare_inputs
from graphcore.interpreter.results import RunResult
from graphcore.language.syntax import Spec
from graphcore.profiling import ProfileReport, profile_ops
from graphcore.spec_static.runner import StaticSpecRunner
from graphcore.static.passes import select

MODES = ("dynamic", "static")
BASELINE_MODE = "dynamic"
DIGITS = 4  # milliseconds are reported to 0.1 microsecond
Progress = Callable[[int, int, str], None]


class BenchOptionError(GraphcoreError, ValueError):
    """A benchmark option the spec cannot honour (a batch size for an input read from a file,
    an unknown mode, a repeat count below one)."""


@dataclass
class BenchResult:
    """The measurements of one spec in one mode at one batch size. ``batch`` is the leading
    axis of the inputs (``None`` when the spec has no plain first input)."""

    spec: str
    mode: str
    batch: int | None
    seed: int
    repeat: int
    warmup: int
    examples: int = 1
    forward_ms: list[float] = field(default_factory=list)
    backward_ms: list[float] = field(default_factory=list)
    compile_ms: float | None = None
    peak_memory_bytes: int | None = None
    speedup: float | None = None
    profile: ProfileReport | None = None
    passes: list[dict[str, Any]] | None = None  # static: name, nodes_removed, bytes_saved
    cache_hits: int | None = None  # static: the plan cache after the timed iterations
    cache_misses: int | None = None
    # per-example runs batched (spec.batching): its mode, groups formed, partitioned ifs,
    # padded share of the example-steps, and the per-example median over this one (None when
    # nothing batched)
    batching: str | None = None
    batching_groups: int | None = None
    batching_partitions: int | None = None  # ifs run on both sides in one pass, per group
    padding_waste: float | None = None
    batching_speedup: float | None = None
    pad_refused: str | None = None  # batching pad: why the examples were grouped instead

    @property
    def total_ms(self) -> list[float]:
        return [f + b for f, b in zip(self.forward_ms, self.backward_ms, strict=True)]

    @property
    def median_ms(self) -> float:
        return float(np.median(self.total_ms))

    def to_dict(self) -> dict[str, Any]:
        """Flat measurements (what CSV rows hold) plus ``passes`` (a list, None in dynamic
        mode) and ``profile`` (a nested table or None)."""
        total = timing_stats(self.total_ms)
        doc: dict[str, Any] = {
            "spec": self.spec, "mode": self.mode, "batch": self.batch, "seed": self.seed,
            "repeat": self.repeat, "warmup": self.warmup, "examples": self.examples,
            "median_ms": total["median"], "min_ms": total["min"], "max_ms": total["max"],
            "iqr_ms": total["iqr"],
        }
        for phase, samples in (("forward", self.forward_ms), ("backward", self.backward_ms)):
            stats = timing_stats(samples)
            doc.update({f"{phase}_{k}_ms": stats[k] for k in ("median", "min", "max")})
        doc["compile_ms"] = None if self.compile_ms is None else round(self.compile_ms, DIGITS)
        doc["speedup"] = self.speedup
        doc["peak_memory_bytes"] = self.peak_memory_bytes
        doc["cache_hits"] = self.cache_hits
        doc["cache_misses"] = self.cache_misses
        doc["batching"] = self.batching
        doc["batching_groups"] = self.batching_groups
        doc["batching_partitions"] = self.batching_partitions
        doc["padding_waste"] = self.padding_waste
        doc["batching_speedup"] = self.batching_speedup
        doc["passes"] = None if self.passes is None else [dict(p) for p in self.passes]
        doc["profile"] = None
        if self.profile is not None:
            doc["profile"] = {"iterations": self.repeat, **self.profile.to_dict(DIGITS)}
        return doc


FIELDS = ("spec", "mode", "batch", "seed", "repeat", "warmup", "examples", "median_ms",
          "min_ms", "max_ms", "iqr_ms", "forward_median_ms", "forward_min_ms", "forward_max_ms",
          "backward_median_ms", "backward_min_ms", "backward_max_ms", "compile_ms", "speedup",
          "peak_memory_bytes", "cache_hits", "cache_misses", "batching", "batching_groups",
          "batching_partitions", "padding_waste", "batching_speedup")
"""The flat keys of ``BenchResult.to_dict()``, in table order (the CSV header)."""


def bench_spec(spec: Spec, modes: Sequence[str] = MODES, batches: Sequence[int] | None = None,
               repeat: int = 10, warmup: int = 2, profile: bool = False,
               seed: int | None = None, progress: Progress | None = None,
               passes: Sequence[str] | None = None,
               batching: str = "auto") -> list[BenchResult]:
    """Benchmark one spec: a result per (batch size, mode), batch sizes in the given order."""
    return bench_specs([spec], modes, batches, repeat, warmup, profile, seed, progress,
                       passes, batching)


def bench_specs(specs: Sequence[Spec], modes: Sequence[str] = MODES,
                batches: Sequence[int] | None = None, repeat: int = 10, warmup: int = 2,
                profile: bool = False, seed: int | None = None,
                progress: Progress | None = None,
                passes: Sequence[str] | None = None,
                batching: str = "auto") -> list[BenchResult]:
    """Benchmark several specs; every option is checked against every spec before anything
    runs, so a bad combination fails at once. ``passes`` applies to static mode."""
    _check_options(modes, batches, repeat, warmup, passes)
    if batching not in ("auto", "pad", "off"):
        raise BenchOptionError(f"batching must be auto, pad or off, got {batching!r}")
    plans = [(s, batched_spec(s, b)) for s in specs for b in (batches or [None])]
    per_run = warmup + repeat + 1 + (repeat if profile else 0)
    total = len(plans) * len(modes) * per_run
    counter = StepCounter(total, progress)
    results = []
    for original, variant in plans:
        run_seed = original.seed if seed is None else seed
        inputs = _data_rows(variant, make_inputs(variant.inputs, run_seed, variant.folder))
        group = [_bench_mode(variant, inputs, mode, run_seed, repeat, warmup, profile, counter,
                             passes, batching) for mode in modes]
        _set_speedups(group)
        results.extend(group)
    return results


def batched_spec(spec: Spec, batch: int | None) -> Spec:
    """A copy of ``spec`` whose generated inputs have leading axis ``batch`` (``spec`` itself
    when ``batch`` is None). Raises ``BenchOptionError`` naming an input it cannot resize."""
    if batch is None:
        return spec
    if not spec.inputs:
        raise BenchOptionError(f"cannot set a batch size for spec '{spec.name}': it has no "
                               "inputs")
    inputs = {}
    for name, inp in spec.inputs.items():
        why = None
        if inp.source == "data" and inp.column is not None and not inp.column.sequence:
            # rows of the data file: the first `batch` of them, cycled when there are fewer
            inputs[name] = dataclasses.replace(inp, shape=(batch, *(inp.shape or (None,))[1:]))
            continue
        if inp.source in ("file", "stdin"):
            where = inp.path if inp.source == "file" else "stdin"
            why = f"is read from {where}; only random, zeros and ones inputs can be resized"
        elif inp.lengths is not None:
            why = "is a list of sequences (it has lengths), which has no batch axis"
        elif not inp.shape:
            why = "has no leading axis to resize"
        if why is not None:
            raise BenchOptionError(f"cannot set a batch size for spec '{spec.name}': input "
                                   f"'{name}' {why}")
        inputs[name] = dataclasses.replace(inp, shape=(batch, *inp.shape[1:]))
    return dataclasses.replace(spec, inputs=inputs)


def _data_rows(spec: Spec, inputs: dict[str, Any]) -> dict[str, Any]:
    """Data-fed inputs cut (or cycled) to the rows ``batched_spec`` asked for."""
    for name, inp in spec.inputs.items():
        if inp.source == "data" and inp.shape and isinstance(inp.shape[0], int):
            rows = inputs[name]
            index = np.arange(inp.shape[0]) % len(rows)
            inputs[name] = [rows[i] for i in index] if isinstance(rows, list) else rows[index]
    return inputs


def leading_axis(spec: Spec) -> int | None:
    """The batch a spec runs at: the leading axis of its first input, if it has one."""
    first = next(iter(spec.inputs.values()), None)
    if first is None or first.lengths is not None or not first.shape:
        return None
    size = first.shape[0]
    return size if isinstance(size, int) else None


# --- one mode -------------------------------------------------------------------------------
class _Dynamic:
    """Define-by-run: every iteration records a fresh graph. Nothing to compile."""

    def __init__(self, spec: Spec, inputs: dict[str, Any], seed: int,
                 passes: Sequence[str] | None = None, batching: str = "auto") -> None:
        self.spec, self.seed, self.batching = spec, seed, batching
        self.model = build_model(spec, seed)
        self.inputs = inputs = prepare_inputs(spec, self.model, inputs)
        self.compile_ms: float | None = None

    def step(self) -> RunResult:
        return run_spec(self.spec, self.model, self.inputs, seed=self.seed,
                        batching=self.batching)

    def finish(self, result: BenchResult) -> None:
        """Add what this mode knows beyond timings (nothing, define-by-run)."""


class _Static:
    """Static mode: the first call traces, runs the passes and lowers a plan (``compile_ms``,
    timed here, apart from the iterations); later calls replay it."""

    def __init__(self, spec: Spec, inputs: dict[str, Any], seed: int,
                 passes: Sequence[str] | None = None, batching: str = "auto") -> None:
        self.spec, self.seed, self.batching = spec, seed, batching
        self.model = build_model(spec, seed)
        self.inputs = inputs = prepare_inputs(spec, self.model, inputs)
        self.runner = StaticSpecRunner(spec, self.model, passes=passes)
        self.runner.run(inputs, seed=seed, batching=batching)
        self.compile_ms: float | None = self.runner.stats.compile_ms

    def step(self) -> RunResult:
        return self.runner.run(self.inputs, seed=self.seed, batching=self.batching)

    def finish(self, result: BenchResult) -> None:
        stats, variant = self.runner.stats, self.runner.last
        result.cache_hits, result.cache_misses = stats.hits, stats.misses
        result.passes = None if variant is None else [
            {"name": r.name, "nodes_removed": r.nodes_removed, "bytes_saved": r.bytes_saved}
            for r in variant.reports]


RUNNERS = {"dynamic": _Dynamic, "static": _Static}


def _bench_mode(spec: Spec, inputs: dict[str, Any], mode: str, seed: int, repeat: int,
                warmup: int, profile: bool, counter: StepCounter,
                passes: Sequence[str] | None = None, batching: str = "auto") -> BenchResult:
    runner = RUNNERS[mode](spec, inputs, seed, passes, batching)
    where = f"{spec.name} {mode}" + ("" if leading_axis(spec) is None
                                     else f" batch {leading_axis(spec)}")
    result = BenchResult(spec.name, mode, leading_axis(spec), seed, repeat, warmup,
                         compile_ms=runner.compile_ms)
    for _ in range(warmup):
        runner.step()
        counter.tick(f"{where}: warm-up")
    for _ in range(repeat):
        run = _untroubled(runner.step)
        result.forward_ms.append(run.timing_ms["forward"])
        result.backward_ms.append(run.timing_ms["backward"])
        result.examples = run.examples
        counter.tick(f"{where}: timing")
    runner.finish(result)
    _batching(result, run, lambda: RUNNERS[mode](spec, inputs, seed, passes, "off"), warmup,
              repeat, counter)
    result.peak_memory_bytes = _peak_bytes(runner.step)
    counter.tick(f"{where}: memory")
    if profile:
        with profile_ops() as report:
            for _ in range(repeat):
                _untroubled(runner.step)
                counter.tick(f"{where}: profile")
        result.profile = report
    return result


def _batching(result: BenchResult, last: RunResult, per_example, warmup: int, repeat: int,
              counter: StepCounter) -> None:
    """When the examples ran batched: groups, padding, and the per-example run timed too."""
    info = last.batching
    if info and info.get("pad_refused"):
        result.pad_refused = info["pad_refused"]
    elif info and info["mode"] == "pad" and not info["applied"]:
        result.pad_refused = f"one example at a time: {info['reason']}"
    if not info or not info["applied"]:
        return
    result.batching = info["mode"]
    result.batching_groups = info["groups"]
    result.batching_partitions = info["partitions"]
    result.padding_waste = info["padding_waste"]
    runner = per_example()
    for _ in range(warmup):
        runner.step()
    times = [sum(_untroubled(runner.step).timing_ms[k] for k in ("forward", "backward"))
             for _ in range(repeat)]
    if result.median_ms > 0:
        result.batching_speedup = round(float(np.median(times)) / result.median_ms, 3)


def _untroubled(step: Callable[[], RunResult]) -> RunResult:
    """One timed iteration with the garbage collector paused (as ``timeit`` does)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return step()
    finally:
        if enabled:
            gc.enable()


def _peak_bytes(step: Callable[[], Any]) -> int:
    """Bytes allocated at the peak of one ``step()`` above what was allocated before it."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        step()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if started:
            tracemalloc.stop()
    return max(peak - before, 0)


def _set_speedups(group: list[BenchResult]) -> None:
    base = next((r for r in group if r.mode == BASELINE_MODE), None)
    for r in group:
        if base is not None and r.median_ms > 0:
            r.speedup = round(base.median_ms / r.median_ms, 3)


# --- helpers --------------------------------------------------------------------------------
def _check_options(modes: Sequence[str], batches: Sequence[int] | None, repeat: int,
                   warmup: int, passes: Sequence[str] | None = None) -> None:
    if passes is not None:
        try:
            select(passes)
        except ValueError as e:
            raise BenchOptionError(str(e)) from None
    if not modes:
        raise BenchOptionError("no mode to benchmark")
    for mode in modes:
        if mode not in RUNNERS:
            raise BenchOptionError(f"unknown mode '{mode}' (available: {', '.join(MODES)})")
    if len(set(modes)) != len(modes):
        raise BenchOptionError("a mode is listed twice")
    if repeat < 1 or warmup < 0:
        raise BenchOptionError(f"repeat must be at least 1 and warmup at least 0, got "
                               f"{repeat} and {warmup}")
    for b in batches or ():
        if isinstance(b, bool) or not isinstance(b, int) or b < 1:
            raise BenchOptionError(f"a batch size must be a positive integer, got {b!r}")
    if batches and len(set(batches)) != len(batches):
        raise BenchOptionError("a batch size is listed twice")


def timing_stats(samples: Sequence[float]) -> dict[str, float]:
    """Median, min, max and interquartile range of timings (ms), rounded to ``DIGITS``."""
    q1, median, q3 = np.percentile(samples, [25, 50, 75])
    return {"median": round(float(median), DIGITS), "min": round(min(samples), DIGITS),
            "max": round(max(samples), DIGITS), "iqr": round(float(q3 - q1), DIGITS)}


class StepCounter:
    """Counts the timed runs done of ``total`` and tells ``progress`` after each."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.done, self.total, self.progress = 0, total, progress

    def tick(self, description: str) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total, description)
