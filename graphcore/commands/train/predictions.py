"""What ``graphtool predict`` writes: the spec's outputs for rows of new data and, for a
classification loss, the predicted class and the probability of each class.

``prediction_spec`` is the spec ``predict`` runs: without its loss and the top-level steps only
the loss reads (labels are not needed), and with the loss's first input (the logits) kept as a
value even where the spec does not declare it an output. ``predict_table`` runs it over the rows
and returns ``Predictions``: named arrays, in the order of a CSV's columns, with the CSV's
column names (``csv_text``) and the arrays of an ``.npz`` (``arrays``).

For ``softmax_cross_entropy`` the probabilities are the softmax of the logits over their class
axis (axis 1); for ``sigmoid_cross_entropy`` each logit is a label of its own, of class 1 with
probability ``sigmoid(logit)`` and class 0 with the rest. With ``LABEL`` the name of the input
the loss takes its labels from (``classification_head``), what ``outputs`` selects
(``OUTPUT_KINDS``):

- ``class``: ``LABEL_predictions``, the most probable class (its name, ``class_names``: the
  data's class names where the labels were names, saved with the parameters; else its index);
- ``probability``: ``LABEL_probability``, that class's probability;
- ``probabilities``: ``LABEL_probabilities_<class>``, each class's probability (``.npz``: one
  array ``LABEL_probabilities`` with the classes along axis 1);
- ``raw``: the spec's declared outputs under their own names (``NAME``, or ``NAME_k`` per
  element of a row).

Logits with more than one position per row (``[N, C, H, W]``, or several sigmoid labels) give
a column per position ``k``: ``LABEL_predictions_k``, ``LABEL_probability_k``,
``LABEL_probabilities_k_<class>``. Columns kept from the data file (``--keep``) come first, as
their text. Every number is written as the shortest text that reads back as its own dtype.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from graphcore.batching.analysis import reads
from graphcore.commands.train.data import label_input, predict_arrays
from graphcore.commands.train.settings import TrainingOptionError
from graphcore.interpreter.parameters import SpecModel
from graphcore.interpreter.preprocessing import class_names as vocabulary
from graphcore.language.syntax import PREVIOUS, OpStep, Spec, walk_steps
from graphcore.registry import suggestion as did_you_mean

Array = np.ndarray | list[np.ndarray]
CLASSIFICATION_LOSSES = ("softmax_cross_entropy", "sigmoid_cross_entropy")
OUTPUT_KINDS = ("class", "probability", "probabilities", "raw")
CLASSIFICATION_DEFAULT = ("class", "probability", "probabilities", "raw")
REGRESSION_DEFAULT = ("raw",)


@dataclass(frozen=True)
class ClassificationHead:
    """What a classification loss says about the predictions: its op, the value holding the
    logits (the loss's first input) and the name the class columns are prefixed with (the
    label input, followed back through reshapes; else the loss's second input)."""

    loss: str
    logits: str
    label: str


def classification_head(spec: Spec) -> ClassificationHead | None:
    """The spec's classification head, or None when its loss is not a classification loss."""
    loss = spec.loss
    if loss is None or loss.op not in CLASSIFICATION_LOSSES or len(loss.inputs) < 2:
        return None
    return ClassificationHead(loss.op, loss.inputs[0], label_input(spec) or loss.inputs[1])


def class_names(spec: Spec, model: SpecModel, classes: int) -> list[str]:
    """The names of a classifier's ``classes`` classes, in class-index order, as predictions
    show them: the label vocabulary saved with the parameters (class names in the data, such
    as ``setosa``), else the integer labels themselves (``"0"``, ``"1"``, ...)."""
    names = vocabulary(model)
    if names is None:
        return [str(i) for i in range(classes)]
    if len(names) != classes:
        raise TrainingOptionError(
            f"the parameters' label vocabulary holds {len(names)} class names "
            f"({', '.join(names[:5])}{', ...' if len(names) > 5 else ''}), but the logits give "
            f"{classes} classes: these parameters were not trained with this spec's labels",
            spec.loss.loc if spec.loss is not None else spec.loc)
    return list(names)


def output_kinds(spec: Spec, given: Sequence[str] | None) -> tuple[str, ...]:
    """What ``predict`` writes: ``given`` (checked), else every kind for a classification
    loss and the raw outputs otherwise."""
    head = classification_head(spec)
    if not given:
        return CLASSIFICATION_DEFAULT if head is not None else REGRESSION_DEFAULT
    unknown = [k for k in given if k not in OUTPUT_KINDS]
    if unknown:
        hint = did_you_mean(unknown[0], OUTPUT_KINDS)
        raise TrainingOptionError(f"--outputs {','.join(given)}: unknown "
                                  f"{', '.join(repr(k) for k in unknown)}; choose from "
                                  f"{', '.join(OUTPUT_KINDS)}" + (f" ({hint})" if hint else ""))
    derived = [k for k in given if k != "raw"]
    if derived and head is None:
        loss = "no loss" if spec.loss is None else f"loss {spec.loss.op}"
        raise TrainingOptionError(
            f"--outputs {','.join(derived)}: spec '{spec.name}' has {loss}; a class and "
            f"probabilities come from a classification loss ({', '.join(CLASSIFICATION_LOSSES)}"
            "); write --outputs raw", spec.loss.loc if spec.loss is not None else spec.loc)
    return tuple(k for k in OUTPUT_KINDS if k in given)


@dataclass
class Column:
    """One array of the predictions: ``name`` (its ``.npz`` key), its values (a row per
    example, or a list of arrays where the shape differs per example), the CSV's names of
    each row's flattened values (None: ``name``, or ``name_k`` per element), ``source``, the
    spec value it comes from (where a message about it points), and ``class_axis``."""

    name: str
    values: Array
    headers: list[str] | None = None
    source: str | None = None
    class_axis: bool = False  # axis 1 holds classes: a CSV row lists each position's together

    @property
    def ragged(self) -> bool:
        return isinstance(self.values, list)


@dataclass
class Predictions:
    columns: list[Column]

    def ragged(self) -> Column | None:
        """A column whose shape differs from example to example, a raw output first (None:
        none)."""
        ragged = [c for c in self.columns if c.ragged]
        return next((c for c in ragged if c.source == c.name), ragged[0] if ragged else None)

    def arrays(self) -> dict[str, np.ndarray]:
        """The ``.npz`` entries: a column per key, ``NAME/k`` per example where ragged."""
        out: dict[str, np.ndarray] = {}
        for column in self.columns:
            if column.ragged:
                out.update({f"{column.name}/{k}": a for k, a in enumerate(column.values)})
            else:
                out[column.name] = np.asarray(column.values)
        return out

    def csv_text(self) -> str:
        """One row per example, a column per value of a row (see the module docstring); a
        column that is ragged cannot be written (``ragged`` tells which)."""
        header: list[str] = []
        cells: list[list[str]] = []
        for column in self.columns:
            array = np.asarray(column.values)
            if column.class_axis:
                array = np.moveaxis(array, 1, -1)
            flat = array.reshape(array.shape[0], -1) if array.ndim > 1 else array.reshape(-1, 1)
            if column.headers is not None:
                names = column.headers
            elif flat.shape[1] == 1:
                names = [column.name]
            else:
                names = [f"{column.name}_{i}" for i in range(flat.shape[1])]
            header.extend(names)
            cells.extend([str(v) for v in flat[:, i]] for i in range(flat.shape[1]))
        repeated = sorted({h for h in header if header.count(h) > 1})
        if repeated:
            raise TrainingOptionError(f"predictions would have two columns named "
                                      f"{', '.join(repeated)}; rename the spec's output or "
                                      "choose other --outputs or --keep")
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(zip(*cells, strict=True))
        return out.getvalue()


def predict_table(spec: Spec, model: SpecModel, rows: Mapping[str, Array],
                  shared: Mapping[str, Array] | None = None, *, batch_size: int = 256,
                  seed: int | None = None, outputs: Sequence[str] = REGRESSION_DEFAULT,
                  kept: Mapping[str, np.ndarray] | None = None,
                  run_spec: Spec | None = None) -> Predictions:
    """The predictions of ``spec`` (as loaded, with its loss) for ``rows``: ``outputs`` as
    ``output_kinds`` gives them, after the ``kept`` columns (a value per row). ``run_spec``:
    the spec to run (default ``prediction_spec(spec)``), whose inputs ``rows`` and ``shared``
    hold."""
    head = classification_head(spec)
    graph = prediction_spec(spec) if run_spec is None else run_spec
    values = predict_arrays(graph, model, rows, shared, batch_size, seed)
    count = _count(next(iter(values.values())))
    columns: list[Column] = []
    for name, array in (kept or {}).items():
        if len(array) != count:
            raise TrainingOptionError(f"--keep {name}: the data file has {len(array)} rows of "
                                      f"it, the predictions {count} (one per example); "
                                      "--keep passes a column of one value per example")
        columns.append(Column(name, np.asarray(array)))
    if head is not None and any(k != "raw" for k in outputs):
        columns += _class_columns(spec, model, head, values[head.logits], outputs)
    if "raw" in outputs:
        columns += [Column(name, values[name], source=name) for name in spec.outputs]
    return Predictions(columns)


def _count(values: Array) -> int:
    return len(values) if isinstance(values, list) else int(np.shape(values)[0])


def _class_columns(spec: Spec, model: SpecModel, head: ClassificationHead, logits: Array,
                   outputs: Sequence[str]) -> list[Column]:
    examples = logits if isinstance(logits, list) else [logits]
    probabilities = [_probabilities(head, np.asarray(a)) for a in examples]
    classes = probabilities[0].shape[1]
    names = class_names(spec, model, classes)
    labels = _label_values(names)
    chosen = [np.argmax(p, axis=1) for p in probabilities]
    top = [np.take_along_axis(p, c[:, None], axis=1)[:, 0] for p, c in zip(probabilities, chosen,
                                                                           strict=True)]

    def joined(parts: list[np.ndarray]) -> Array:
        return parts if isinstance(logits, list) else parts[0]

    positions = int(np.prod(probabilities[0].shape[2:], dtype=np.int64))
    suffixes = [""] if positions == 1 else [f"_{k}" for k in range(positions)]
    label = head.label
    columns = []
    for kind in (k for k in OUTPUT_KINDS if k in outputs):  # one order, however given
        if kind == "class":
            columns.append(Column(f"{label}_predictions", joined([labels[c] for c in chosen]),
                                  [f"{label}_predictions{s}" for s in suffixes], head.logits))
        elif kind == "probability":
            columns.append(Column(f"{label}_probability", joined(top),
                                  [f"{label}_probability{s}" for s in suffixes], head.logits))
        elif kind == "probabilities":
            columns.append(Column(f"{label}_probabilities", joined(probabilities),
                                  [f"{label}_probabilities{s}_{n}" for s in suffixes
                                   for n in names], head.logits, class_axis=True))
    return columns


def _label_values(names: list[str]) -> np.ndarray:
    """The classes as predictions hold them: integers where the names are the indices."""
    if names == [str(i) for i in range(len(names))]:
        return np.arange(len(names))
    return np.asarray(names)


def _probabilities(head: ClassificationHead, logits: np.ndarray) -> np.ndarray:
    """Each class's probability, the classes along axis 1, in the logits' float dtype."""
    dtype = logits.dtype if logits.dtype.kind == "f" else np.dtype(np.float32)
    values = logits.astype(np.float64)
    if head.loss == "softmax_cross_entropy":
        if values.ndim < 2:
            raise TrainingOptionError(f"{head.loss}: logits '{head.logits}' of shape "
                                      f"{logits.shape} have no class axis (axis 1)")
        shifted = values - values.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        result = exp / exp.sum(axis=1, keepdims=True)
    else:
        one = 1.0 / (1.0 + np.exp(-values))
        result = np.stack([1.0 - one, one], axis=1)
    return result.astype(dtype)


# ------------------------------------------------------------------ the spec predict runs

def prediction_spec(spec: Spec) -> Spec:
    """The spec without its loss and without the top-level op steps only the loss needed (a
    label's reshape), keeping only the inputs what is left reads: labels are not needed to
    predict. A classification loss's logits stay a value of the run (an output of it)."""
    head = classification_head(spec)
    outputs = list(spec.outputs)
    if head is not None and head.logits not in outputs:
        outputs.append(head.logits)
    spec = dataclasses.replace(spec, outputs=outputs)
    steps = _needed_steps(spec)
    used: set[str] = set()
    for step in walk_steps(steps):
        if isinstance(step, OpStep):
            used.update(step.inputs)
        if hasattr(step, "sequence"):
            used.add(step.sequence)
        predicate = getattr(step, "predicate", None)
        if predicate is not None:
            used.update(ref.name for ref in predicate.name_refs())
    used.update(outputs)
    first = next(iter(spec.inputs), None)
    if PREVIOUS in used and first is not None:
        used.add(first)
    inputs = {n: s for n, s in spec.inputs.items() if n in used}
    return dataclasses.replace(spec, loss=None, inputs=inputs, graph=steps)


def _needed_steps(spec: Spec) -> list:
    """The graph's steps less the top-level op steps whose values no output needs: walked
    back from the outputs, an op step is kept when a later step or an output reads what it
    binds (its ``to:`` name, or ``_``); control flow is always kept, with all it reads."""
    needed = set(spec.outputs)
    kept = []
    for step in reversed(spec.graph):
        if isinstance(step, OpStep):
            binds = {PREVIOUS} | ({step.to} if step.to else set())
            if not binds & needed:
                continue
            needed -= binds
            needed.update(step.inputs)
        else:
            needed |= reads(step) | {PREVIOUS}
        kept.append(step)
    if not kept:
        return list(spec.graph)
    return kept[::-1]
