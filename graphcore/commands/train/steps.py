"""Train a spec without ``data:``: N optimizer steps over (mini-batches of) the spec's own
inputs, through the one training loop (``TrainingSession``: a ``Trainer`` stopped after N
iterations), and the ``train --json`` document of such a run.

``train_spec`` builds the model and the inputs exactly as ``graphtool run`` does (same seed,
same ``--input`` overrides; ``inputs_as_data`` says which inputs are batched), then each step
takes a batch, runs forward and backward (``run_spec``, seeded ``seed + step - 1``) and updates
with the optimizer. It never prints; ``on_step(step, loss)`` lets a caller draw progress.

>>> result = train_spec(spec, steps=30, optimizer="adam", batch_size=4)
>>> result.losses[0], result.losses[-1], result.final_loss

Batches. Default: every step sees all the data, in order. With ``batch_size`` (smaller than
the data), the session's ``SerialIterator`` visits the rows in an order shuffled by
``RandomState(seed)`` each epoch; when one pass over the data ends mid-batch, the batch is
filled from the next pass (Chainer's ``SerialIterator``), so every batch has the same size and
every example is used. A batch size equal to the data size means full batches, unshuffled.

``losses[k]`` is the loss of step ``k + 1``'s batch before its update; ``final_loss`` is the
loss of all the data under the trained parameters (training mode, ``backward=False``, the
run's seed), what ``graphtool run --params`` reports.

``mode="static"`` runs every step (and the final evaluation) through one ``StaticSpecRunner``:
the first step traces and compiles a plan, later steps with the same input shapes (and, for
a dynamic spec, the same path) replay it. The optimizer updates the parameters in place, so
each replay reads the updated values; the losses equal define-by-run's within float
tolerance. ``TrainResult.cache`` is then the plan cache's ``CacheStats`` (hits, misses,
compile time) and ``to_dict()`` carries it under ``static``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from graphcore import errors, optimizers
from graphcore.batching.run import run_spec
from graphcore.commands.schema import SCHEMA_VERSION
from graphcore.commands.train.data import SpecData, inputs_as_data
from graphcore.commands.train.session import TrainingSession
from graphcore.commands.train.settings import (  # noqa: F401  (TrainingOptionError: the API)
    TrainingOptionError,
    TrainSettings,
    settings_for,
)
from graphcore.interpreter.parameters import SpecModel
from graphcore.language.syntax import Spec

DEFAULT_STEPS = 100


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


def plain_settings(spec: Spec, data: SpecData, *, steps: int = DEFAULT_STEPS,
                   optimizer: str = "adam", lr: float | None = None,
                   batch_size: int | None = None, seed: int | None = None,
                   mode: str = "dynamic", **schedule: Any) -> TrainSettings:
    """The training settings of a spec without ``data:`` (see the module docstring): ``steps``
    iterations, full batches unshuffled unless ``batch_size`` is smaller than the data, the
    optimizer's own default learning rate, a checkpoint only when interrupted."""
    if batch_size is not None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise TrainingOptionError(f"the batch size must be a positive integer, got "
                                      f"{batch_size!r}")
        if not data.train:
            raise TrainingOptionError("the spec's inputs have no batch axis (all are "
                                      "scalars), so --batch-size does not apply")
        if batch_size > data.rows:
            sequences = any(isinstance(v, list) for v in data.train.values())
            what = ("examples in the sequence input" if sequences
                    else f"rows along the leading axis of {', '.join(data.train)}")
            raise TrainingOptionError(f"batch size {batch_size} is larger than the data: "
                                      f"{data.rows} {what}")
    size = data.rows if batch_size is None else batch_size
    settings = settings_for(spec, seed=seed, steps=steps, batch_size=size,
                            shuffle=size < data.rows, optimizer=optimizer, lr=lr, mode=mode,
                            **schedule)
    settings.checkpoint_every = None
    return settings


def train_spec(spec: Spec, steps: int = DEFAULT_STEPS, optimizer: str = "adam",
               lr: float | None = None, batch_size: int | None = None,
               seed: int | None = None, input_overrides: Mapping[str, str] | None = None,
               stdin: BinaryIO | None = None,
               on_step: Callable[[int, float], None] | None = None,
               mode: str = "dynamic", passes: Sequence[str] | None = None,
               batching: str = "auto", **schedule: Any) -> TrainResult:
    """Train ``spec``'s parameters for ``steps`` updates; see the module docstring.

    ``mode``: ``dynamic`` or ``static``; ``passes`` (static mode) as ``select`` reads them;
    ``batching``: how per-example runs are batched (``spec.batching``); ``schedule``: the
    learning-rate schedule, warm-up, weight decay and clipping (``settings_for``'s keywords,
    an epoch being a pass over the inputs)."""
    require_loss(spec, "train")
    if mode not in ("dynamic", "static"):
        raise TrainingOptionError(f"unknown mode {mode!r}; choose dynamic or static")
    seed = spec.seed if seed is None else seed
    data = inputs_as_data(spec, seed, input_overrides, stdin)
    settings = plain_settings(spec, data, steps=steps, optimizer=optimizer, lr=lr,
                              batch_size=batch_size, seed=seed, mode=mode, **schedule)
    progress = None if on_step is None else (lambda step, epoch, loss: on_step(step, loss))
    losses: list[float] = []

    def step_loss(step: int, epoch: int, loss: float) -> None:
        losses.append(loss)
        if progress is not None:
            progress(step, epoch, loss)

    # the Trainer makes its out folder; a session without files keeps nothing in it
    with tempfile.TemporaryDirectory(prefix="graphtool-train-") as scratch:
        session = TrainingSession(spec, settings, data, scratch, on_step=step_loss,
                                  passes=None if passes is None else list(passes),
                                  batching=batching, files=False)
        session.trainer.updater.keep_last = True  # the last step's batching, for the caller
        session.run()
    runner = session.static_runner
    given = {**data.shared, **data.train}
    everything = {name: given[name] for name in sorted(given, key=list(spec.inputs).index)}
    # A diverging run overflows somewhere; numpy's warnings would only repeat, less precisely,
    # the error the interpreter raises naming the step whose value turned NaN or Inf.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        try:
            if runner is not None:
                final = runner.run(everything, backward=False, seed=seed, batching=batching)
            else:
                final = run_spec(spec, session.model, everything, backward=False, seed=seed,
                                 batching=batching)
        except errors.SpecRuntimeError as e:
            raise errors.SpecRuntimeError(f"the final evaluation: {e.message}", e.file, e.line,
                                          e.col, e.source_line, e.length) from None
    keyword = optimizers.learning_rate_keyword(settings.optimizer)
    rate = None if keyword is None else settings.hyperparameters.get(
        keyword, optimizers.default_learning_rate(settings.optimizer))
    last = session.trainer.updater.last_result
    info = None if last is None else last.batching
    return TrainResult(spec, seed, settings.optimizer, rate, steps,
                       settings.batch_size if data.train else None, losses, float(final.loss),
                       session.model, mode, None if runner is None else runner.stats,
                       None if info is None else dict(info))
