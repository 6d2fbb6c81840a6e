"""The define-by-run interpreter's calls: ``run_one`` (one pass over the inputs, then
backward), ``run_examples`` (one pass per example), ``loss_function`` (the loss with its
graph, for gradient checks) and ``bound_dims``.

Control flow is ordinary Python over live values, so every run records a fresh graph of
exactly the path it took; that path (each ``if`` branch, each loop's trip count, each
sequence length, with the step's position) is recorded for reports and static-mode guards.
One pass over one example is ``forward.ForwardPass``; ``batching.run.run_spec`` chooses the
call.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.interpreter.arguments import check_inputs, check_spec
from graphcore.interpreter.examples import (
    example_count,
    example_rows,
    has_sequences,
    sequence_names,
)
from graphcore.interpreter.forward import ForwardPass
from graphcore.interpreter.parameters import SpecModel, check_model, seeded
from graphcore.interpreter.plan import plan_of
from graphcore.interpreter.results import EagerViews, PathEntry, RunResult
from graphcore.language.syntax import Spec
from graphcore.variable import Variable


def run_one(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], backward: bool,
             seed: int | None) -> RunResult:
    """One pass over ``inputs`` (no sequence inputs), then backward, nothing kept per example
    (the common call, kept lean: beside the ops it is most of a small spec's ``bench``
    time)."""
    model.cleargrads()
    plan = plan_of(spec)
    path: list[PathEntry] = bound_dims(spec, inputs) if plan.batch_dims else []
    run = ForwardPass(spec, model, inputs, path, record=False, plan=plan)
    with np.errstate(all="ignore"):  # non-finite values are reported as located errors
        start = time.perf_counter()
        # Saving and restoring numpy's global generator costs more than a small model's
        # whole run, so it is done only when the forward pass can draw from it.
        if plan.draws_randomness or not model.initialized():
            with seeded((spec.seed if seed is None else seed) + 1):
                outputs, loss = run.forward_unguarded()
        else:
            outputs, loss = run.forward_unguarded()
        forward_s = time.perf_counter() - start
        backward_s = 0.0
        if loss is not None and backward and loss.creator is not None:
            start = time.perf_counter()
            loss.backward()
            backward_s = time.perf_counter() - start
    timing = {"forward": forward_s * 1e3, "backward": backward_s * 1e3,
              "total": (forward_s + backward_s) * 1e3}
    return RunResult(None if loss is None else float(loss._array.item()), timing, 1, loss,
                     views=EagerViews(outputs, path, [outputs],
                                      [] if loss is None else [run.last_args]))


def run_examples(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], backward: bool,
                  seed: int | None) -> RunResult:
    """``run_spec`` one example at a time (its per-example runner, ``batching.batcher.run``)."""
    sequences = has_sequences(inputs)
    n = example_count(spec, inputs) if sequences else 1
    model.cleargrads()
    path: list[PathEntry] = bound_dims(spec, inputs)
    per_example: list[dict[str, Any]] = []
    total_loss = 0.0
    loss_var = None
    loss_args: list[tuple[Any, ...]] = []
    forward_s = backward_s = 0.0
    # Saving and restoring numpy's global generator costs more than a small model's whole
    # run, so it is done only when the run can draw from it.
    random = plan_of(spec).draws_randomness or not model.initialized()
    with (seeded((spec.seed if seed is None else seed) + 1) if random
          else contextlib.nullcontext()), np.errstate(all="ignore"):
        for i in range(n):
            if sequences:
                example = {k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()}
                lengths = {k: len(inputs[k][i]) for k in sequence_names(spec, inputs)}
                where = spec.inputs[next(iter(lengths))].loc if lengths else spec.loc
                path.append(PathEntry("example", where, {"index": i, "lengths": lengths}))
            else:
                example = inputs
            start = time.perf_counter()
            run = ForwardPass(spec, model, example, path, record=False)
            outputs, loss = run.forward_unguarded()
            forward_s += time.perf_counter() - start
            per_example.append(outputs)
            if loss is not None:
                loss_args.append(run.last_args)  # the loss op's inputs (metrics read them)
                total_loss += float(loss.array.item()) / n  # size 1, any ndim
                loss_var = loss
                if backward and loss.creator is not None:
                    start = time.perf_counter()
                    (loss * (1.0 / n) if n > 1 else loss).backward()
                    backward_s += time.perf_counter() - start
    timing = {"forward": forward_s * 1e3, "backward": backward_s * 1e3,
              "total": (forward_s + backward_s) * 1e3}
    return RunResult(loss=total_loss if spec.loss else None,
                     timing_ms=timing, examples=n, loss_variable=loss_var,
                     views=EagerViews(per_example[-1], path, per_example, loss_args))


def bound_dims(spec: Spec, inputs: Mapping[str, Any]) -> list[PathEntry]:
    """A ``batch`` path entry per named leading axis (``shape: [batch, 2]``): the size the
    run bound it to, at the first input naming it."""
    entries, seen = [], set()
    for name, inp in spec.inputs.items():
        dim = inp.batch_dim
        if dim is None or dim in seen or name not in inputs:
            continue
        seen.add(dim)
        value = inputs[name]
        size = len(value) if isinstance(value, list) else int(np.shape(value)[0])
        entries.append(PathEntry("batch", inp.loc, {"dim": dim, "size": size}))
    return entries


def loss_function(spec: Spec, model: SpecModel, inputs: Mapping[str, Any]) -> Variable:
    """The spec's loss as one Variable (the mean over examples for sequence inputs), with its
    whole graph: what gradient checks differentiate. Records no path and runs no backward."""
    check_spec("loss_function", spec)
    check_model("loss_function", model)
    check_inputs("loss_function", spec, inputs)
    inputs = example_rows(spec, inputs)
    if spec.loss is None:
        raise errors.SpecRuntimeError("the spec has no loss to differentiate", spec.file,
                                      spec.loc.line if spec.loc else 0,
                                      spec.loc.col if spec.loc else 0)
    n = example_count(spec, inputs)
    total = None
    for i in range(n):
        example = {k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()}
        _, loss = ForwardPass(spec, model, example, []).forward()
        total = loss if total is None else total + loss
    return total * (1.0 / n) if n > 1 else total
