"""Which input of a spec holds class labels: the one whose values reach a classification
loss (``softmax_cross_entropy``, ``sigmoid_cross_entropy``) as its targets."""

from __future__ import annotations

from graphcore.language.syntax import OpStep, Spec

# losses (and metrics) whose targets are integer class labels
INTEGER_LABELS = ("softmax_cross_entropy", "sigmoid_cross_entropy")
# ops that pass their input's values (and dtype) on, reshaped or indexed
KEEP_VALUES = ("reshape", "transpose", "swapaxes", "get_item", "broadcast_to", "copy")


def label_input(spec: Spec) -> str | None:
    """The input whose values reach the loss as its labels (the second input of a loss in
    ``INTEGER_LABELS``, followed back through top-level reshapes and indexing), or None."""
    loss = spec.loss
    if loss is None or loss.op not in INTEGER_LABELS or len(loss.inputs) < 2:
        return None
    name = loss.inputs[1]
    made = {step.to: step for step in spec.graph if isinstance(step, OpStep) and step.to}
    seen: set[str] = set()
    while name not in spec.inputs:
        step = made.get(name)
        if step is None or name in seen or step.op not in KEEP_VALUES or \
                len(step.inputs) != 1:
            return None
        seen.add(name)
        name = step.inputs[0]
    return name
