"""The define-by-run interpreter: walk a ``Spec``'s steps over live Variables.

``build_model(spec)`` creates one link per layer scope (so parameters exist, named
``/<scope>/W``, before the first run); ``run_spec(spec, model, inputs)`` runs forward (and
backward when the spec has a loss) and reports outputs, loss, the path taken and timings.
Control flow is ordinary Python over live values, so every run records a fresh graph of
exactly the path it took; that path (each ``if`` branch, each loop's trip count, each
sequence length, with the step's position) is recorded for reports and static-mode guards.
One pass over one example is ``spec_run._Run``; this module drives it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.interpreter.arguments import check_inputs, check_model, check_spec, plain_inputs
from graphcore.interpreter.float_errors import (
    ignore_float_errors,
    ignoring_float_errors,
    restore_float_errors,
)
from graphcore.interpreter.forward import PREDICATE_HOOKS, _PredicateScope, _Run  # noqa: F401  (re-exported)
from graphcore.interpreter.parameters import (  # noqa: F401  (re-exported: the interpreter's API)
    PathEntry,
    RunResult,
    SpecModel,
    build_model,
    example_rows,
    seeded,
    sequence_names,
)
from graphcore.interpreter.parameters import example_count as _example_count
from graphcore.interpreter.parameters import has_sequences as _has_sequences
from graphcore.interpreter.plan import plan_of
from graphcore.language.syntax import Spec
from graphcore.variable import Variable


def run_spec(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], *,
             backward: bool = True, seed: int | None = None,
             batching: str = "auto") -> RunResult:
    """Run ``spec`` forward on ``inputs`` (arrays, or lists of arrays for sequence inputs) and,
    when it has a loss and ``backward`` is set, backward; gradients land in ``model``'s
    parameters (cleared first). Failures raise ``SpecRuntimeError`` at the failing step.
    Per-example runs are batched (``batching``: auto, pad or off; ``spec.batching``)."""
    if type(spec) is Spec and isinstance(model, SpecModel) and plain_inputs(spec, inputs):
        return _run_one(spec, model, inputs, backward, seed)  # checked: arrays only
    check_spec("run_spec", spec)
    check_model("run_spec", model)
    check_inputs("run_spec", spec, inputs)
    if _has_sequences(inputs):
        from graphcore.batching import batcher
        inputs = example_rows(spec, inputs)
        return batcher.run(spec, model, inputs, backward, seed, batching, _run_examples)
    return _run_one(spec, model, inputs, backward, seed)


def _run_one(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], backward: bool,
             seed: int | None) -> RunResult:
    """``run_spec`` without sequence inputs: one pass and nothing kept per example (the
    common case, kept lean: beside the ops it is most of a small spec's ``bench`` time)."""
    model.cleargrads()
    plan = plan_of(spec)
    path: list[PathEntry] = bound_dims(spec, inputs) if plan.batch_dims else []
    run = _Run(spec, model, inputs, path, record=False, plan=plan)
    token = ignore_float_errors()
    try:
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
    finally:
        restore_float_errors(token)
    timing = {"forward": forward_s * 1e3, "backward": backward_s * 1e3,
              "total": (forward_s + backward_s) * 1e3}
    return RunResult(outputs, None if loss is None else float(loss._array.item()), path, timing,
                     1, [outputs], loss, [] if loss is None else [run.last_args])


def _run_examples(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], backward: bool,
                  seed: int | None) -> RunResult:
    """``run_spec`` one example at a time."""
    sequences = _has_sequences(inputs)
    n = _example_count(spec, inputs) if sequences else 1
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
          else contextlib.nullcontext()), ignoring_float_errors():
        for i in range(n):
            if sequences:
                example = {k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()}
                lengths = {k: len(inputs[k][i]) for k in sequence_names(spec, inputs)}
                where = spec.inputs[next(iter(lengths))].loc if lengths else spec.loc
                path.append(PathEntry("example", where, {"index": i, "lengths": lengths}))
            else:
                example = inputs
            start = time.perf_counter()
            run = _Run(spec, model, example, path, record=False)
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
    return RunResult(outputs=per_example[-1], loss=total_loss if spec.loss else None,
                     path=path, timing_ms=timing, examples=n, example_outputs=per_example,
                     loss_variable=loss_var, loss_inputs=loss_args)


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
    n = _example_count(spec, inputs)
    total = None
    for i in range(n):
        example = {k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()}
        _, loss = _Run(spec, model, example, []).forward()
        total = loss if total is None else total + loss
    return total * (1.0 / n) if n > 1 else total
