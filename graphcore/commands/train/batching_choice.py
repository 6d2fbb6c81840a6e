"""The batching a training run's steps use when its caller names none: of those that apply to
its batches, the fastest, measured on the run's first steps (as cuDNN's benchmark mode picks
an algorithm per shape).

``candidates(spec, rows)`` says which batchings apply to a spec's training rows: none to
choose from without per-example runs; only ``off`` where the spec cannot batch in training
(an op without a batching rule, dropout), with the located reason; ``off`` and ``auto``, and
``pad`` where its sequences may be padded (``batching.pad_refusal`` says why not otherwise).

``MeasuredRuns`` is a step's run, ``(inputs, seed) -> RunResult``, that runs each candidate
on the step's batch for the first ``ROUNDS`` steps, then keeps the one with the lowest median
time over the rounds after the first (the first one sizes lazy parameters and traces the
first plans). A run's time leaves out the time it spent tracing plans (static mode), a cost
paid once per shape, so the times compare what the steps cost once the plans exist; a
candidate ``DROP`` times slower than the fastest is not run again. A candidate other than
``off`` is kept only when it is at least ``MARGIN`` faster than ``off``, so a choice is never
slower than ``off`` by more than the noise of the measurement. The timing cannot change what
is computed:

- the optimizer's update after a measured step uses the gradients of its ``auto`` run (the
  ``REFERENCE``, run first on the first round, as an unmeasured ``auto`` run would: lazily
  sized parameters draw their initial values there), put back after the others ran: the
  measured steps are those of ``--batching auto``, whatever the timings say;
- every candidate's loss must agree with the reference's within float rounding, or the step
  stops with ``BatchingMismatch`` (a batched run that computes something else is a bug, not a
  speed);
- nothing draws from the session's generators: the iterator draws the shuffled order once
  per epoch, each run seeds numpy's global generator itself and restores it, and a spec that
  draws randomness in training (dropout) does not batch, so has no candidates to time.

After the choice, the steps run with the chosen batching, whose results are the others'
within float rounding; a checkpoint records the choice and a resumed run keeps it, so an
interrupted run continues as it would have without the interruption.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcore.batching.batcher import pad_refusal, why_not
from graphcore.config import using_config
from graphcore.interpreter.results import RunResult
from graphcore.language.syntax import Spec

ROUNDS = 3  # measured steps: the first warms up, the others are timed
MARGIN = 0.1  # a batched candidate must be this much faster than off to be chosen
DROP = 3.0  # a candidate this many times slower than the fastest is not timed again
REFERENCE = "auto"  # whose gradients the measured steps' updates use
LOSS_RTOL = 1e-4  # float32 sums in another order agree to this (relative)

Run = Callable[..., RunResult]


class BatchingMismatch(RuntimeError):
    """Two batchings of one training step computed different losses: a batched run that is
    not the per-example run within float rounding (an internal error, never a speed)."""


@dataclass
class BatchingChoice:
    """What a training run's steps ran with, and why.

    ``how``: ``given`` (the caller named it), ``measured`` (``step_ms`` holds each
    candidate's median milliseconds per step), ``only`` (one batching applies; ``reason``
    says why the others do not), ``short`` (too few steps to measure: ``off``), ``resumed``
    (kept from the checkpoint), ``none`` (no per-example runs: nothing to batch)."""

    batching: str | None
    how: str
    reason: str | None = None
    step_ms: dict[str, float] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)  # batching -> why it does not apply

    def to_dict(self) -> dict[str, Any]:
        return {"used": self.batching, "how": self.how, "reason": self.reason,
                "step_ms": dict(self.step_ms) or None, "left_out": dict(self.left_out) or None}


def candidates(spec: Spec, rows: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The batchings that apply to training batches of ``rows`` (``off`` first), and why each
    other one does not (an empty list: no per-example runs, nothing to batch)."""
    lists = {k: v for k, v in rows.items() if isinstance(v, list)}
    if not lists:
        return [], {}
    with using_config("train", True):
        why = why_not(spec, lists, None, "auto")
    if why is not None:
        return ["off"], {"auto": why, "pad": why}
    first = next(iter(lists.values()))
    lengths = np.array([np.shape(a)[0] if np.ndim(a) else 0 for a in first])
    sequences = any(s.sequence for name, s in spec.inputs.items() if name in lists)
    refused = pad_refusal(spec, lists, lengths) if sequences else \
        "the spec has no sequence inputs (lengths, or a data file's sequences)"
    if refused is None and len(np.unique(lengths)) == 1:
        refused = "every example has the same length: there is nothing to pad"
    if refused is not None:
        return ["off", "auto"], {"pad": refused}
    return ["off", "auto", "pad"], {}


class MeasuredRuns:
    """A step's run that measures the candidates on the first ``ROUNDS`` steps, then runs the
    fastest (see the module docstring). ``make_run(batching)`` makes one candidate's run, a
    callable ``(inputs, seed=) -> RunResult`` whose ``compile_ms`` is the time it has spent
    tracing plans so far; ``on_choice(choice)`` is told the choice once it is made."""

    def __init__(self, make_run: Callable[[str], Run], names: list[str],
                 left_out: Mapping[str, str], model: Any,
                 on_choice: Callable[[BatchingChoice], None]) -> None:
        self.runs = {name: make_run(name) for name in names}
        self.times: dict[str, list[float]] = {name: [] for name in names}
        self.left_out = dict(left_out)
        self.model = model
        self.on_choice = on_choice
        self.round = 0
        self.chosen: Run | None = None

    def __call__(self, inputs: Mapping[str, Any], seed: int) -> RunResult:
        if self.chosen is not None:
            return self.chosen(inputs, seed=seed)
        self.round += 1
        names = [REFERENCE, *(n for n in self.runs if n != REFERENCE)]
        if self.round > 1:  # rotated, so no candidate always runs on caches another warmed
            k = self.round % len(names)
            names = names[k:] + names[:k]
        results: dict[str, RunResult] = {}
        grads: dict[str, np.ndarray | None] = {}
        for name in names:
            run = self.runs[name]
            compiled = run.compile_ms
            start = time.perf_counter()
            results[name] = run(inputs, seed=seed)
            elapsed = (time.perf_counter() - start) * 1e3 - (run.compile_ms - compiled)
            if self.round > 1:
                self.times[name].append(elapsed)
            if name == REFERENCE:
                grads = {n: (None if p.grad is None else np.array(p.grad))
                         for n, p in self.model.namedparams()}
        reference = results[REFERENCE]
        for name, result in results.items():
            _check_same_loss(name, result, reference)
        for n, p in self.model.namedparams():
            p.cleargrad()
            if grads[n] is not None:
                p.grad = grads[n]
        if self.round > 1:
            self._drop_the_slow()
        if self.round == ROUNDS or len(self.runs) == 1:
            self._choose()
        return reference

    def _medians(self) -> dict[str, float]:
        return {name: float(np.median(t)) for name, t in self.times.items() if t}

    def _drop_the_slow(self) -> None:
        """Candidates ``DROP`` times slower than the fastest are not run again (the
        reference always is: its gradients make the update)."""
        medians = {n: m for n, m in self._medians().items() if n in self.runs}
        best = min(medians.values())
        for name, median in medians.items():
            if name != REFERENCE and median > DROP * best:
                del self.runs[name]

    def _choose(self) -> None:
        medians = self._medians()
        best = min((n for n in medians if n in self.runs), key=medians.__getitem__)
        if best != "off" and "off" in medians and medians[best] > (1 - MARGIN) * medians["off"]:
            best = "off"
        self.chosen = self.runs[best]
        self.runs = {}  # the others' plans are not needed again
        self.on_choice(BatchingChoice(best, "measured",
                                      step_ms={k: round(v, 3) for k, v in medians.items()},
                                      left_out=self.left_out))


def _check_same_loss(name: str, result: RunResult, reference: RunResult) -> None:
    if result.loss is None or reference.loss is None:
        return
    a, b = float(result.loss), float(reference.loss)
    if a == b or np.isnan(a) and np.isnan(b):
        return
    if np.isfinite(a) and np.isfinite(b) and np.isclose(a, b, rtol=LOSS_RTOL, atol=1e-7):
        return
    raise BatchingMismatch(f"batching {name} computed the loss {a!r} where one example at a "
                           f"time computes {b!r}; the training step is stopped")
