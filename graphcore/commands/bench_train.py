"""Timing training steps (``graphtool bench --train``): what a step of ``graphtool train``
costs per execution mode and batching, so the figures predict ``train``'s own.

>>> bench = bench_training([spec], modes=("dynamic", "static"))
>>> [(r.mode, r.batching, r.to_dict()["median_ms"]) for r in bench.results]

For every (spec, batch size, mode, batching) a fresh ``TrainingSession`` is made as ``train``
makes it (the spec's data and validation split, its seed, optimizer and ``batch_size``, its
shuffled order), so every combination sees the same batches, and its trainer runs as
``train``'s does, extensions and files included (written into a temporary folder): ``warmup``
steps untimed, then ``repeat`` steps (default: one epoch's worth) timed, each from the end of
the step before (the batch drawn and collated, forward, backward, the optimizer's update, the
trainer's logs) to its end. A step that ends an epoch also validates, logs and writes
``train.csv``, ``best.npz`` and the checkpoint: those steps are kept apart, their time beyond
the mean step is ``epoch_work_ms`` (the run goes on to the next epoch's end when the timed
steps hold none). Static mode's tracing is part of the steps it happens in, as in ``train``
(``compile_ms`` says how much of it there was, ``cache_misses`` how many plans the timed steps
traced). ``epoch_s`` predicts an epoch of ``train``: its steps at the mean step time plus the
epoch's own work.

The batchings are those that apply to the spec's training rows (``batching_choice.candidates``:
``off``, ``auto``, and ``pad`` where its sequences may be padded); each one left out is in
``TrainBench.notes`` with the reason. A spec without per-example runs has one row per mode
(``batching`` None). ``speedup`` is the mean step time of dynamic mode with batching ``off``
(define-by-run, one example at a time) over this one's, at the same batch size. Nothing here
prints; ``progress(done, total, description)`` is called after every step.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcore.commands.bench import DIGITS, MODES, Progress, StepCounter, timing_stats
from graphcore.commands.train.batching_choice import candidates
from graphcore.commands.train.session import TrainingSession, load_spec_data, settings_for
from graphcore.errors import GraphcoreError
from graphcore.language.syntax import Spec

BATCHINGS = ("off", "auto", "pad")
DEFAULT_WARMUP = 2


class TrainBenchOptionError(GraphcoreError, ValueError):
    """A ``bench --train`` option the spec cannot honour (a spec without training data, a
    batch size larger than its rows, an unknown mode or batching)."""


@dataclass
class TrainBenchResult:
    """One (spec, batch size, mode, batching): the timed steps and what they ran."""

    spec: str
    mode: str
    batching: str | None  # None: the spec has no per-example runs
    batch_size: int
    seed: int
    repeat: int
    warmup: int
    steps_per_epoch: float
    step_ms: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    epoch_work_ms: float | None = None  # an epoch end's validation, logs and files
    compile_ms: float | None = None  # static: tracing in the warm-up and timed steps
    cache_hits: int | None = None  # static: replays and traces in the timed steps
    cache_misses: int | None = None
    plans: int | None = None
    groups: int | None = None  # the last timed step's batched groups (None: not batched)
    padding_waste: float | None = None
    speedup: float | None = None

    @property
    def mean_ms(self) -> float:
        return float(np.mean(self.step_ms))

    @property
    def epoch_s(self) -> float:
        return (self.steps_per_epoch * self.mean_ms + (self.epoch_work_ms or 0.0)) / 1e3

    def to_dict(self) -> dict[str, Any]:
        stats = timing_stats(self.step_ms)
        return {
            "spec": self.spec, "mode": self.mode, "batching": self.batching,
            "batch_size": self.batch_size, "seed": self.seed, "repeat": self.repeat,
            "warmup": self.warmup, "steps_per_epoch": round(self.steps_per_epoch, 3),
            "median_ms": stats["median"], "mean_ms": round(self.mean_ms, DIGITS),
            "min_ms": stats["min"], "max_ms": stats["max"], "iqr_ms": stats["iqr"],
            "epoch_s": round(self.epoch_s, DIGITS),
            "epoch_work_ms": None if self.epoch_work_ms is None
            else round(self.epoch_work_ms, DIGITS),
            "compile_ms": None if self.compile_ms is None else round(self.compile_ms, DIGITS),
            "cache_hits": self.cache_hits, "cache_misses": self.cache_misses,
            "plans": self.plans, "groups": self.groups, "padding_waste": self.padding_waste,
            "last_loss": self.losses[-1] if self.losses else None, "speedup": self.speedup,
        }


FIELDS = ("spec", "mode", "batching", "batch_size", "seed", "repeat", "warmup",
          "steps_per_epoch", "median_ms", "mean_ms", "min_ms", "max_ms", "iqr_ms", "epoch_s",
          "epoch_work_ms", "compile_ms", "cache_hits", "cache_misses", "plans", "groups",
          "padding_waste", "last_loss", "speedup")
"""The keys of ``TrainBenchResult.to_dict()``, in table order (the CSV header)."""


@dataclass
class TrainBench:
    results: list[TrainBenchResult]
    notes: list[tuple[str, str]]  # (spec name, why a batching was left out or not applied)


def bench_training(specs: Sequence[Spec], modes: Sequence[str] = MODES,
                   batchings: Sequence[str] | None = None,
                   batch_sizes: Sequence[int] | None = None, repeat: int | None = None,
                   warmup: int = DEFAULT_WARMUP, seed: int | None = None,
                   passes: Sequence[str] | None = None,
                   progress: Progress | None = None) -> TrainBench:
    """Time training steps (see the module docstring). ``batchings`` None: every one that
    applies; named ones run even where they do not apply (as ``train --batching`` runs them),
    with a note saying so. Every option is checked against every spec before any step runs."""
    _check(modes, batchings, batch_sizes, repeat, warmup)
    plans = []
    for spec in specs:
        if spec.data is None and spec.train is None:
            raise TrainBenchOptionError(
                f"spec '{spec.name}' has no `data:` or `train:` section: bench --train times "
                "the training steps they configure (graphtool train runs such a spec as "
                "optimizer steps over its inputs)")
        if spec.loss is None:
            raise TrainBenchOptionError(f"spec '{spec.name}' has no loss, so there is "
                                        "nothing to train")
        base = settings_for(spec, seed=seed)
        data = load_spec_data(spec, base.seed)
        names, left_out = candidates(spec, data.train)
        chosen: list[str | None] = [None] if not names else \
            list(names) if batchings is None else list(batchings)
        notes = [(spec.name, _note(b, why, batchings is None)) for b, why in
                 _grouped(left_out).items() if batchings is None or
                 names and set(b.split(" and ")) & set(batchings)]
        for i, size in enumerate(batch_sizes or [base.batch_size]):
            if size > data.rows:
                raise TrainBenchOptionError(f"batch size {size} is larger than the training "
                                            f"data of spec '{spec.name}' ({data.rows} rows)")
            plans.append((spec, data, size, chosen, notes if i == 0 else []))
    per_epoch = {(id(s), size): data.rows / size for s, data, size, _, _ in plans}
    timed = {key: repeat or max(1, int(np.ceil(n))) for key, n in per_epoch.items()}
    total = sum((warmup + timed[(id(s), size)]) * len(modes) * len(chosen)
                for s, _, size, chosen, _ in plans)
    counter = StepCounter(total, progress)
    results, notes = [], []
    for spec, data, size, chosen, spec_notes in plans:
        notes += spec_notes
        group = [_bench_one(spec, data, mode, batching, size, timed[(id(spec), size)], warmup,
                            seed, passes, per_epoch[(id(spec), size)], counter)
                 for mode in modes for batching in chosen]
        _set_speedups(group)
        results += group
    return TrainBench(results, notes)


def _bench_one(spec: Spec, data: Any, mode: str, batching: str | None, batch_size: int,
               repeat: int, warmup: int, seed: int | None, passes: Sequence[str] | None,
               steps_per_epoch: float, counter: StepCounter) -> TrainBenchResult:
    timed_end = warmup + repeat
    ends = [i for i in range(1, timed_end + int(np.ceil(steps_per_epoch)) + 1)
            if _ends_epoch(i, batch_size, data.rows)]
    last_step = max(timed_end, next(i for i in ends if i > warmup))
    settings = settings_for(spec, seed=seed, batch_size=batch_size, mode=mode,
                            steps=last_step)
    settings.early_stopping = None  # the timed steps run whatever the metric does
    where = f"{spec.name} {mode}" + ("" if batching is None else f" batching {batching}")
    result = TrainBenchResult(spec.name, mode, batching, batch_size, settings.seed, repeat,
                              warmup, steps_per_epoch)
    with tempfile.TemporaryDirectory() as folder:
        session = TrainingSession(spec, settings, data, folder, passes=passes,
                                  batching=batching or "auto")
        updater = session.trainer.updater
        last: list[Any] = []
        run = updater.run

        def kept(inputs: Any, seed: int) -> Any:
            last[:] = [run(inputs, seed=seed)]
            return last[0]

        updater.run = kept
        clock = _Clock(session, warmup, repeat, counter, where)
        session.trainer.extend(clock, name="bench clock", trigger=(1, "iteration"),
                               priority=-1000)
        session.trainer.run()
    timed = [(i, ms) for i, ms in clock.times if warmup < i <= timed_end]
    result.step_ms = [ms for i, ms in timed if i not in ends]
    if result.step_ms:
        work = [ms for i, ms in clock.times if i > warmup and i in ends]
        result.epoch_work_ms = max(0.0, float(np.mean(work)) - result.mean_ms)
    else:  # every step ends an epoch (a batch of all the rows): its work is in the step
        result.step_ms = [ms for _, ms in timed]
    result.losses = clock.losses[:repeat]
    runner = session.static_runner
    if runner is not None:
        result.compile_ms = runner.stats.compile_ms
        result.cache_hits = runner.stats.hits - clock.hits
        result.cache_misses = runner.stats.misses - clock.misses
        result.plans = len(runner.cache)
    info = last[0].batching
    if batching is not None and info and info["applied"]:
        result.groups, result.padding_waste = info["groups"], info["padding_waste"]
    return result


def _ends_epoch(step: int, batch_size: int, rows: int) -> bool:
    """Whether training step ``step`` (from 1) ends an epoch (``SerialIterator``'s order)."""
    return step * batch_size // rows > (step - 1) * batch_size // rows


class _Clock:
    """The last extension of each iteration: the time since the last one ended, the step's
    loss, and the static runner's counts when the warm-up ends."""

    def __init__(self, session: TrainingSession, warmup: int, repeat: int, counter: StepCounter,
                 where: str) -> None:
        self.session, self.warmup, self.repeat = session, warmup, repeat
        self.counter, self.where = counter, where
        self.times: list[tuple[int, float]] = []  # (step, ms since the last step ended)
        self.losses: list[float] = []
        self.hits = self.misses = 0
        self.last = 0.0

    def initialize(self, trainer: Any) -> None:
        self.last = time.perf_counter()

    def __call__(self, trainer: Any) -> None:
        now = time.perf_counter()
        step = trainer.updater.iteration
        self.times.append((step, (now - self.last) * 1e3))
        loss = trainer.observation.get("main/loss")
        if step > self.warmup and loss is not None:
            self.losses.append(float(loss))
        if step == self.warmup:
            runner = self.session.static_runner
            if runner is not None:
                self.hits, self.misses = runner.stats.hits, runner.stats.misses
        if step <= self.warmup + self.repeat:
            self.counter.tick(f"{self.where}: {'warm-up' if step <= self.warmup else 'timing'}")
        self.last = time.perf_counter()


def _grouped(left_out: dict[str, str]) -> dict[str, str]:
    """Batchings left out for one reason, named together: {"auto and pad": reason}."""
    by_reason: dict[str, list[str]] = {}
    for name, why in left_out.items():
        by_reason.setdefault(why, []).append(name)
    return {" and ".join(names): why for why, names in by_reason.items()}


def _note(names: str, why: str, left_out: bool) -> str:
    if left_out:
        return f"batching {names} left out: {why}"
    if "pad" in names.split(" and ") and not why.startswith("every example"):
        return f"batching {names}: not padded, examples grouped by shape instead: {why}"
    return f"batching {names}: one example at a time: {why}" if "auto" in names else \
        f"batching {names}: {why}"


def _set_speedups(group: list[TrainBenchResult]) -> None:
    base = next((r for r in group if r.mode == "dynamic" and r.batching in ("off", None)),
                None)
    for r in group:
        if base is not None and r.mean_ms > 0:
            r.speedup = round(base.mean_ms / r.mean_ms, 3)


def _check(modes: Sequence[str], batchings: Sequence[str] | None,
           batch_sizes: Sequence[int] | None, repeat: int | None, warmup: int) -> None:
    if not modes:
        raise TrainBenchOptionError("no mode to benchmark")
    for mode in modes:
        if mode not in MODES:
            raise TrainBenchOptionError(f"unknown mode '{mode}' (available: "
                                        f"{', '.join(MODES)})")
    if len(set(modes)) != len(modes):
        raise TrainBenchOptionError("a mode is listed twice")
    for b in batchings or ():
        if b not in BATCHINGS:
            raise TrainBenchOptionError(f"unknown batching '{b}' (available: "
                                        f"{', '.join(BATCHINGS)})")
    if repeat is not None and repeat < 1 or warmup < 0:
        raise TrainBenchOptionError(f"repeat must be at least 1 and warmup at least 0, got "
                                    f"{repeat} and {warmup}")
    for b in batch_sizes or ():
        if isinstance(b, bool) or not isinstance(b, int) or b < 1:
            raise TrainBenchOptionError(f"a batch size must be a positive integer, got {b!r}")
