"""Train a spec's parameters: N optimizer steps over (mini-batches of) the spec's data.

``train_spec`` builds the model and the inputs exactly as ``graphtool run`` does (same seed,
same ``--input`` overrides), then repeats: take a batch, run forward and backward
(``run_spec``), update with the optimizer. It never prints; ``on_step(step, loss)`` lets a
caller draw progress.

>>> result = train_spec(spec, steps=30, optimizer="adam", batch_size=4)
>>> result.losses[0], result.losses[-1], result.final_loss

Batches. Default: every step sees all the data. With ``batch_size``:

- sequence inputs (``lengths``: a list of examples) are batched over examples, with the
  inputs that give each example its own row (a named leading axis, ``rows``); the other
  inputs are shared by every example, as in a plain run, and are left whole;
- otherwise the batch axis is the leading axis of the first input with one, and every input
  whose leading axis has that same length (labels too) is sliced along it; inputs of another
  length (or scalars) are left whole.

Examples are visited in a shuffled order drawn from a generator keyed by the seed; when one
pass over the data ends mid-batch, the batch is filled from the next pass (Chainer's
``SerialIterator``), so every batch has the same size and every example is used. A batch size
equal to the data size means full batches, unshuffled.

``losses[k]`` is the loss of step ``k + 1``'s batch before its update; ``final_loss`` is the
loss of all the data under the trained parameters, what ``graphtool run --params`` reports.

``mode="static"`` runs every step (and the final evaluation) through one ``StaticSpecRunner``:
the first step traces and compiles a plan, later steps with the same input shapes (and, for
a dynamic spec, the same path) replay it. The optimizer updates the parameters in place, so
each replay reads the updated values; the losses equal define-by-run's within float
tolerance. ``TrainResult.cache`` is then the plan cache's ``CacheStats`` (hits, misses,
compile time) and ``to_dict()`` carries it under ``static``.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from graphcore import errors, optimizers
from graphcore.commands.schema import SCHEMA_VERSION
from graphcore.commands.train.settings import (  # noqa: F401  (TrainingOptionError: the API)
    TrainingOptionError,
    make_optimizer,
    settings_for,
)
from graphcore.inputs.make import make_inputs
from graphcore.interpreter.calls import SpecModel, build_model, run_spec
from graphcore.interpreter.parameters import per_row_inputs
from graphcore.language.syntax import Spec
from graphcore.spec_static.runner import StaticSpecRunner

Inputs = dict[str, Any]


class NoLossError(errors.GraphcoreError, ValueError):
    """The spec has no ``loss:``, so there is nothing to train or differentiate."""


@dataclass
class TrainResult:
    spec: Spec
    seed: int
    optimizer: str
    lr: float | None  # None: the optimizer has no learning rate (adadelta)
    steps: int
    batch_size: int | None  # examples per step; None: the data has no batch axis
    losses: list[float]
    final_loss: float
    model: SpecModel
    mode: str = "dynamic"
    cache: Any = None  # static mode: the plan cache's CacheStats
    batching: dict[str, Any] | None = None  # the last step's ``RunResult.batching``

    def params(self) -> dict[str, np.ndarray]:
        """The trained parameters keyed as ``save_npz`` writes them (``l1/W``)."""
        return {name.lstrip("/"): p.array for name, p in self.model.namedparams()
                if p.array is not None}

    def to_dict(self, mode: str | None = None) -> dict[str, Any]:
        """The ``train --json`` document; static mode adds ``static: {cache: {...}}``."""
        doc = {
            "schema_version": SCHEMA_VERSION, "spec": self.spec.name, "seed": self.seed,
            "mode": self.mode if mode is None else mode, "optimizer": self.optimizer,
            "lr": self.lr, "steps": self.steps, "batch_size": self.batch_size,
            "losses": self.losses, "final_loss": self.final_loss,
        }
        if self.cache is not None:
            doc["static"] = {"cache": self.cache.to_dict()}
        return doc


def require_loss(spec: Spec, purpose: str) -> None:
    """Raise ``NoLossError`` unless ``spec`` has a loss (``purpose``: "train", ...)."""
    if spec.loss is None:
        raise NoLossError(f"spec '{spec.name}' has no loss, so there is nothing to {purpose}; "
                          "add one, e.g. `loss: {op: sum}`")


def train_spec(spec: Spec, steps: int = 100, optimizer: str = "adam", lr: float | None = None,
               batch_size: int | None = None, seed: int | None = None,
               input_overrides: Mapping[str, str] | None = None,
               stdin: BinaryIO | None = None,
               on_step: Callable[[int, float], None] | None = None,
               mode: str = "dynamic", passes: Sequence[str] | None = None,
               batching: str = "auto") -> TrainResult:
    """Train ``spec``'s parameters for ``steps`` updates; see the module docstring.

    ``mode``: ``dynamic`` or ``static``; ``passes`` (static mode) as ``select`` reads them;
    ``batching``: how per-example runs are batched (``spec.batching``)."""
    require_loss(spec, "train")
    if mode not in ("dynamic", "static"):
        raise TrainingOptionError(f"unknown mode {mode!r}; choose dynamic or static")
    settings = settings_for(spec, seed=seed, steps=steps, optimizer=optimizer, lr=lr,
                            mode=mode)
    opt = make_optimizer(settings)
    keyword = optimizers.learning_rate_keyword(settings.optimizer)
    lr = None if keyword is None else settings.hyperparameters.get(
        keyword, optimizers.default_learning_rate(settings.optimizer))
    seed = settings.seed
    model = build_model(spec, seed)
    data = make_inputs(spec.inputs, seed, spec.folder, input_overrides, stdin)
    batches = Batches(data, batch_size, seed, per_row_inputs(spec))
    opt.setup(model)
    run = functools.partial(run_spec, spec, model, batching=batching)
    runner = None
    if mode == "static":
        runner = StaticSpecRunner(spec, model, passes=passes)
        run = functools.partial(runner.run, batching=batching)
    losses = []
    info = None
    # A diverging run overflows somewhere; numpy's warnings would only repeat, less precisely,
    # the error the interpreter raises naming the step whose value turned NaN or Inf.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for step in range(1, steps + 1):
            batch = batches.next()
            try:
                result = run(batch, seed=seed + step - 1)
            except errors.SpecRuntimeError as e:
                raise _at_step(e, step) from None
            opt.update()
            info = result.batching
            losses.append(float(result.loss))
            if on_step is not None:
                on_step(step, losses[-1])
        try:
            final = run(data, backward=False, seed=seed)
        except errors.SpecRuntimeError as e:
            raise _at_step(e, None) from None
    return TrainResult(spec, seed, optimizer, lr, steps, batches.size, losses,
                       float(final.loss), model, mode, None if runner is None else runner.stats,
                       None if info is None else dict(info))


class Batches:
    """Deterministic mini-batches of ``data`` (see the module docstring)."""

    def __init__(self, data: Mapping[str, Any], batch_size: int | None, seed: int,
                 rows: Sequence[str] = ()) -> None:
        self.data = dict(data)
        self.sequences = [k for k, v in self.data.items() if isinstance(v, list)]
        self.rows = [k for k in rows if k in self.data and k not in self.sequences]
        self.batched, self.total = self._batch_axis()
        self.size = self._check_size(batch_size)
        self.full = self.size is None or self.size == self.total
        key = zlib.crc32(b"graphtool.train.batches")
        self.rng = np.random.default_rng(np.random.SeedSequence([int(seed), key]))
        self.order: Iterator[int] = self._stream()

    def _batch_axis(self) -> tuple[list[str], int | None]:
        """The inputs to slice and their common length (None: nothing to batch over)."""
        if self.sequences:
            total = len(self.data[self.sequences[0]])
            rows = [k for k in self.rows if np.ndim(self.data[k]) >= 1
                    and np.shape(self.data[k])[0] == total]  # others: refused when run
            return self.sequences + rows, total
        for value in self.data.values():
            if np.ndim(value) >= 1:
                total = value.shape[0]
                return [k for k, v in self.data.items()
                        if np.ndim(v) >= 1 and v.shape[0] == total], total
        return [], None

    def _check_size(self, batch_size: int | None) -> int | None:
        if batch_size is None:
            return self.total
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise TrainingOptionError(f"the batch size must be a positive integer, got "
                                      f"{batch_size!r}")
        if self.total is None:
            raise TrainingOptionError("the spec's inputs have no batch axis (all are "
                                      "scalars), so --batch-size does not apply")
        if batch_size > self.total:
            what = ("examples in the sequence input" if self.sequences
                    else f"rows along the leading axis of {', '.join(self.batched)}")
            raise TrainingOptionError(f"batch size {batch_size} is larger than the data: "
                                      f"{self.total} {what}")
        return batch_size

    def _stream(self) -> Iterator[int]:
        while True:
            yield from (int(i) for i in self.rng.permutation(self.total))

    def next(self) -> Inputs:
        """The next batch: every input, with the batched ones sliced."""
        if self.full:
            return self.data
        index = np.fromiter((next(self.order) for _ in range(self.size)), np.int64, self.size)
        batch = dict(self.data)
        for name in self.batched:
            value = self.data[name]
            batch[name] = [value[i] for i in index] if isinstance(value, list) else value[index]
        return batch


def _at_step(e: errors.SpecRuntimeError, step: int | None) -> errors.SpecRuntimeError:
    where = f"training step {step}" if step is not None else "the final evaluation"
    return errors.SpecRuntimeError(f"{where}: {e.message}", e.file, e.line, e.col,
                                   e.source_line, e.length)
