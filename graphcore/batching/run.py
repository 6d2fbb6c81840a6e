"""``run_spec``: the spec API's run of a spec on a call's inputs. A call without sequence
inputs is one pass (``interpreter.calls.run_one``); one with them runs per example, batched
where it can be (``batching.batcher.run``, over ``interpreter.calls.run_examples``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphcore.batching import batcher
from graphcore.interpreter.arguments import check_inputs, check_spec, plain_inputs
from graphcore.interpreter.calls import run_examples, run_one
from graphcore.interpreter.examples import example_rows, has_sequences
from graphcore.interpreter.parameters import SpecModel, check_model
from graphcore.interpreter.results import RunResult
from graphcore.language.syntax import Spec


def run_spec(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], *,
             backward: bool = True, seed: int | None = None,
             batching: str = "auto") -> RunResult:
    """Run ``spec`` forward on ``inputs`` (arrays, or lists of arrays for sequence inputs) and,
    when it has a loss and ``backward`` is set, backward; gradients land in ``model``'s
    parameters (cleared first). Failures raise ``SpecRuntimeError`` at the failing step.
    Per-example runs are batched (``batching``: auto, pad or off; ``spec.batching``)."""
    if type(spec) is Spec and isinstance(model, SpecModel) and plain_inputs(spec, inputs):
        return run_one(spec, model, inputs, backward, seed)  # checked: arrays only
    check_spec("run_spec", spec)
    check_model("run_spec", model)
    check_inputs("run_spec", spec, inputs)
    if has_sequences(inputs):
        inputs = example_rows(spec, inputs)
        return batcher.run(spec, model, inputs, backward, seed, batching, run_examples)
    return run_one(spec, model, inputs, backward, seed)
