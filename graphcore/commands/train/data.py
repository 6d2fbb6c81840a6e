"""A spec's training data: its inputs read and split into the batched rows and the shared
inputs, with the held-out parts (``load_spec_data``: the test part first, then the validation
part, from the rows left; the rest are the training rows); batches of rows; and the evaluation
(``evaluation``, ``evaluate_arrays``) and prediction (in evaluation mode) the ``evaluate`` and
``predict`` commands run.
"""


from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from graphcore import errors
from graphcore.batching.run import run_spec
from graphcore.commands.train.metrics import (
    PER_CLASS_METRICS,
    ClassFigures,
    MetricCollector,
    MetricError,
    class_names,
    metric_sums,
)
from graphcore.commands.train.settings import TrainingOptionError
from graphcore.config import no_backprop_mode, using_config
from graphcore.inputs.data_files import read_data
from graphcore.inputs.make import make_inputs
from graphcore.interpreter.examples import per_row_inputs
from graphcore.interpreter.parameters import SpecModel
from graphcore.interpreter.preprocessing import Rows, State, encode_rows, fit_state
from graphcore.interpreter.preprocessing import class_names as label_names
from graphcore.language.labels import INTEGER_LABELS, label_input  # noqa: F401  (the API)
from graphcore.language.syntax import Spec, ValidationSpec

Array = np.ndarray | list[np.ndarray]


@dataclass
class SpecData:
    """The data split into the batched inputs (rows: the training part, and the held-out
    validation and test parts) and the shared ones."""

    train: dict[str, Array]
    validation: dict[str, Array] | None
    shared: dict[str, Array]
    # With a fraction split off: which rows of the data each part holds (for messages).
    train_index: np.ndarray | None = None
    validation_index: np.ndarray | None = None
    test: dict[str, Array] | None = None
    test_index: np.ndarray | None = None
    # what the training rows fitted (vocabularies, normalize statistics), or the model's
    # state the rows were encoded with; the session's model holds it
    state: State = field(default_factory=dict)

    @property
    def rows(self) -> int:
        """Rows to batch over; 1 when nothing is batched (every input shared)."""
        return _rows(self.train) if self.train else 1


def _rows(arrays: Mapping[str, Array]) -> int:
    first = next(iter(arrays.values()))
    return len(first)


def batched_inputs(spec: Spec, arrays: Mapping[str, Array]) -> list[str]:
    """Inputs split into batches: those with a named batch dimension, and sequences."""
    return [name for name, s in spec.inputs.items()
            if s.batch_dim is not None or isinstance(arrays.get(name), list)]


def no_batched_input(spec: Spec, verb: str) -> TrainingOptionError:
    """The refusal of a command that works on rows (``verb``: train, evaluate, predict) for a
    spec whose inputs all have fixed shapes, located at its first input."""
    first = next(iter(spec.inputs.values()), None)
    return TrainingOptionError(
        f"spec '{spec.name}' has no batched input to {verb} over (its inputs have fixed "
        "shapes); feed them from `data:`, name their leading axis (shape: [batch, ...]) or "
        "make them per-example inputs (lengths:, examples:)",
        first.loc if first is not None else spec.loc)


def load_spec_data(spec: Spec, seed: int, input_overrides: Mapping[str, str] | None = None,
                   stdin: BinaryIO | None = None, split: bool = True,
                   verb: str = "train", state: State | None = None) -> SpecData:
    """Read the spec's inputs and split off the held-out parts: ``test:`` first, then
    ``validation:`` from the rows left (each a seeded fraction of all the rows, or a file);
    the training rows are the rest. ``split=False`` keeps every row for training. ``verb``
    names what the rows are for in the refusal of a spec without any (train, evaluate).

    Inputs of class names are encoded and normalize statistics fitted on the training rows
    alone, after both splits (``interpreter.preprocessing``); ``state``: a trained model's
    state to encode with instead (evaluate), nothing fitted. A class the vocabulary lacks is
    an error at its row in the data file."""
    arrays = make_inputs(spec.inputs, seed, spec.folder, input_overrides, stdin,
                         spec.max_elements)
    names = batched_inputs(spec, arrays)
    if not names:
        raise no_batched_input(spec, verb)
    rows = {n: arrays[n] for n in names}
    require_rows(spec, rows, verb)
    shared = {n: v for n, v in arrays.items() if n not in rows}
    parts = [("test", spec.test), ("validation", spec.validation)] if split else []
    check_fractions(spec, _rows(rows), [p for _, p in parts])
    left = np.arange(_rows(rows))  # the rows no part has taken yet
    held: dict[str, tuple[dict[str, Array] | None, np.ndarray | None]] = {}
    for name, part in parts:
        held[name] = None, None
        if part is not None and part.fraction is not None:
            taken = _split_fraction(part, seed, left, _rows(rows))
            left = np.setdiff1d(left, taken)
            held[name] = {k: _take(a, taken) for k, a in rows.items()}, taken
        elif part is not None and part.file is not None:
            fed = {n: s for n, s in spec.inputs.items() if s.source == "data"}
            held[name] = read_data(Path(spec.folder) / part.file, fed,
                                   part.file_loc or part.loc, spec.max_elements), None
    validation, val_index = held.get("validation", (None, None))
    test, test_index = held.get("test", (None, None))
    train_index = None
    if val_index is not None or test_index is not None:
        train_index = left
        rows = {k: _take(a, train_index) for k, a in rows.items()}
    purpose = "the training rows hold" if state is None else "the parameters were trained on"
    state = fit_state(spec, rows) if state is None else state
    origin = data_origins(spec, input_overrides)
    rows = encode_rows(spec, state, rows, {n: Rows(r.path, train_index)
                                           for n, r in origin.items()}, purpose)
    encoded = []
    for name, part, index in (("validation", spec.validation, val_index),
                              ("test", spec.test, test_index)):
        values = validation if name == "validation" else test
        if values is not None:
            where = {n: Rows(r.path, index) for n, r in origin.items()} if index is not None \
                else {n: Rows(Path(spec.folder) / part.file, None, f"{name} row")
                      for n in origin}
            values = encode_rows(spec, state, values, where, purpose)
        encoded.append(values)
    validation, test = encoded
    check_label_dtype(spec, rows, validation, test)
    return SpecData(rows, validation, shared, train_index, val_index, test, test_index, state)


def data_origins(spec: Spec, overrides: Mapping[str, str] | None) -> dict[str, Rows]:
    """The file each data-fed input's rows are read from (``path`` None: stdin), for
    messages about a row (``interpreter.preprocessing.Rows``)."""
    out: dict[str, Rows] = {}
    for name, s in spec.inputs.items():
        if s.source != "data":
            continue
        given = (overrides or {}).get(name)
        out[name] = Rows(None if given == "-" else Path(given) if given is not None else
                         Path(spec.folder) / s.column.file)
    return out


def check_fractions(spec: Spec, n: int, parts: list[ValidationSpec | None]) -> None:
    """The held-out fractions of ``n`` rows each take at least one row and leave at least one
    for training; else a data error at the part that cannot (every one at once)."""
    fractions = [(("test" if p is spec.test else "validation"), p, int(round(n * p.fraction)))
                 for p in parts if p is not None and p.fraction is not None]
    left = n - sum(count for _, _, count in fractions)
    problems = []
    for key, part, count in fractions:
        if count < 1 or (left < 1 and len(fractions) == 1):
            problems.append(errors.SpecError(
                f"{key} fraction {part.fraction:g} of {n} rows leaves {n - count} for "
                f"training and {count} for {key}; both need at least one",
                part.loc.file, part.loc.line, part.loc.col))
    if not problems and left < 1:
        (_, _, test_count), (_, part, val_count) = fractions
        problems.append(errors.SpecError(
            f"test fraction {spec.test.fraction:g} ({test_count} rows) and validation "
            f"fraction {part.fraction:g} ({val_count} rows) of {n} rows leave {left} for "
            "training; it needs at least one", part.loc.file, part.loc.line, part.loc.col))
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise errors.SpecErrors(problems)


def _split_fraction(part: ValidationSpec, seed: int, left: np.ndarray, n: int) -> np.ndarray:
    """The rows (sorted indices) a fraction of all ``n`` rows takes from the rows ``left``,
    drawn with the part's seed (the run's where it names none)."""
    order = np.random.RandomState(seed if part.seed is None else part.seed).permutation(
        left.size)
    return np.sort(left[order[:int(round(n * part.fraction))]])


def inputs_as_data(spec: Spec, seed: int, input_overrides: Mapping[str, str] | None = None,
                   stdin: BinaryIO | None = None) -> SpecData:
    """A spec without ``data:`` trains on its own inputs (generated, or ``--input``), made as
    ``graphtool run`` makes them; which of them are batched:

    - sequence inputs (``lengths``: a list of examples) are batched over examples, with the
      inputs that give each example its own row (a named leading axis, ``per_row_inputs``);
      the other inputs are shared by every example, as in a plain run, and are left whole;
    - otherwise the batch axis is the leading axis of the first input with one, and every input
      whose leading axis has that same length (labels too) is batched along it; inputs of
      another length (or scalars) are shared.

    No input with an axis: nothing is batched (``rows`` is 1, every input shared)."""
    arrays = make_inputs(spec.inputs, seed, spec.folder, input_overrides, stdin)
    sequences = [k for k, v in arrays.items() if isinstance(v, list)]
    if sequences:
        total = len(arrays[sequences[0]])
        batched = sequences + [k for k in per_row_inputs(spec) if k in arrays
                               and k not in sequences and np.ndim(arrays[k]) >= 1
                               and np.shape(arrays[k])[0] == total]  # others: refused when run
    else:
        first = next((v for v in arrays.values() if np.ndim(v) >= 1), None)
        batched = [] if first is None else [
            k for k, v in arrays.items() if np.ndim(v) >= 1 and v.shape[0] == first.shape[0]]
    train = {k: arrays[k] for k in batched}
    return SpecData(train, None, {k: v for k, v in arrays.items() if k not in train})


def require_rows(spec: Spec, rows: Mapping[str, Array], verb: str) -> None:
    """Rows to ``verb`` over (train, evaluate, predict): an input without any (an empty
    array from ``--input``, a file of no rows) is a data error at the input."""
    for name, value in rows.items():
        if (len(value) if isinstance(value, list) or np.ndim(value) else 1) == 0:
            where = spec.inputs[name]
            at = where.column.loc if where.column is not None else where.loc
            raise errors.SpecError(
                f"input '{name}' has no rows to {verb}", at.file, at.line, at.col,
                at.source.line(at.line) if at.source else None, at.length)


def check_label_dtype(spec: Spec, *parts: Mapping[str, Array] | None) -> None:
    """Labels of a classification loss read as floats are a data error at the label input,
    found when the data is loaded (the loss would fail at the first step)."""
    name = label_input(spec)
    if name is None:
        return
    for arrays in parts:
        value = (arrays or {}).get(name)
        if value is None:
            continue
        examples = value if isinstance(value, list) else [value]
        if all(np.asarray(a).dtype.kind in "iub" for a in examples):
            continue
        whole = all(np.all(np.isfinite(a)) and np.all(a == np.trunc(a)) for a in
                    map(np.asarray, examples))
        where = spec.inputs[name]
        at = where.column.loc if where.column is not None else where.loc
        what = f"{np.asarray(examples[0]).dtype} values"
        if whole:
            hint = "add dtype: int32 to the input"
        else:
            what += " that are not integers"
            hint = "class labels are 0, 1, ...; for real targets use a regression loss such " \
                "as mean_squared_error"
        raise errors.SpecError(
            f"input '{name}': {spec.loss.op} takes integer class labels, but the data gives "
            f"{what}", at.file, at.line, at.col,
            at.source.line(at.line) if at.source else None, at.length, hint)


def _take(array: Array, index: np.ndarray) -> Array:
    if isinstance(array, list):
        return [array[int(i)] for i in index]
    return array[index]


def collate(batch: list[dict[str, Any]], shared: Mapping[str, Array],
            sequences: frozenset[str]) -> dict[str, Array]:
    """Examples -> the spec's inputs: rows stacked, sequences kept as lists, shared added."""
    out: dict[str, Array] = dict(shared)
    for key in batch[0]:
        column = [example[key] for example in batch]
        out[key] = column if key in sequences else np.stack(column)
    return out


def batches(arrays: Mapping[str, Array], batch_size: int):
    """Consecutive slices of ``batch_size`` rows (the last may be shorter)."""
    n = _rows(arrays)
    for start in range(0, n, batch_size):
        yield start, {k: v[start:start + batch_size] for k, v in arrays.items()}


# ---------------------------------------------------------------------- evaluate, predict

@dataclass
class Evaluation:
    """What ``evaluation`` computes: the loss and each scalar metric (``values``), and for a
    classification, the class names, each class's figures (``per_class``, when precision,
    recall or f1 is asked) and the confusion matrix (``confusion``, when asked)."""

    values: dict[str, float]
    rows: int
    classes: list[str] | None = None
    per_class: list[ClassFigures] | None = None
    confusion: np.ndarray | None = None

    def to_dict(self) -> dict[str, Any]:
        """As JSON data: the values, and ``per_class``/``confusion`` where computed."""
        out: dict[str, Any] = dict(self.values)
        if self.per_class is not None:
            out["per_class"] = [c.to_dict() for c in self.per_class]
        if self.confusion is not None:
            out["confusion"] = {"classes": self.classes, "matrix": self.confusion.tolist()}
        return out


def evaluation(spec: Spec, model: SpecModel, rows: Mapping[str, Array],
               shared: Mapping[str, Array] | None = None, batch_size: int = 256,
               metrics: tuple[str, ...] = (), seed: int | None = None,
               batching: str = "auto", confusion: bool = False,
               class_vocabulary: Sequence[str] | None = None) -> Evaluation:
    """Loss and ``metrics`` over every row, in evaluation mode (per-example runs batched as
    ``batching`` says): the loss an exact mean over rows, each metric computed once from every
    row's predictions. ``confusion``: compute the confusion matrix even where ``metrics`` does
    not name it. ``class_vocabulary``: the class names (default: the vocabulary of the
    model's labels when they were class names, else their indices)."""
    if spec.loss is None:
        raise TrainingOptionError(f"spec '{spec.name}' has no loss to evaluate")
    wanted = tuple(metrics) + (("confusion",) if confusion and "confusion" not in metrics
                               else ())
    collector = MetricCollector(wanted, spec.loss.op)
    loss_sum, n = 0.0, 0
    with using_config("train", False), no_backprop_mode():
        for _, batch in batches(rows, batch_size):
            size = _rows(batch)
            result = run_spec(spec, model, {**(shared or {}), **batch}, backward=False,
                              seed=spec.seed if seed is None else seed, batching=batching)
            loss_sum += float(result.loss) * size
            n += size
            try:
                collector.add(result.loss_inputs)
            except MetricError as e:
                raise TrainingOptionError(str(e)) from None
    if n == 0:
        raise TrainingOptionError(f"spec '{spec.name}': no rows to evaluate")
    out = Evaluation({"loss": loss_sum / n, **collector.values()}, n)
    if collector.classify:
        vocabulary = class_vocabulary if class_vocabulary is not None else label_names(model)
        out.classes = class_names(collector.classes, vocabulary)
        if any(m in wanted for m in PER_CLASS_METRICS):
            out.per_class = collector.per_class(out.classes)
        if "confusion" in wanted:
            out.confusion = collector.confusion()
    return out


def evaluate_arrays(spec: Spec, model: SpecModel, rows: Mapping[str, Array],
                    shared: Mapping[str, Array] | None = None, batch_size: int = 256,
                    metrics: tuple[str, ...] = (), seed: int | None = None,
                    batching: str = "auto") -> dict[str, float]:
    """The loss and each scalar metric of ``evaluation``."""
    return evaluation(spec, model, rows, shared, batch_size, metrics, seed, batching).values


def predict_arrays(spec: Spec, model: SpecModel, rows: Mapping[str, Array],
                   shared: Mapping[str, Array] | None = None, batch_size: int = 256,
                   seed: int | None = None) -> dict[str, Array]:
    """The spec's outputs for every row, in evaluation mode, computed ``batch_size`` rows at
    a time and joined along the batch axis. A spec run once per example gives one row per
    example (``stack_examples``): an output of one shape per example is one array, a list of
    arrays (one per example) only where its shape differs per example."""
    if not rows or _rows(rows) == 0:
        raise TrainingOptionError(f"spec '{spec.name}': no rows to predict")
    parts: dict[str, list[Any]] = {name: [] for name in spec.outputs}
    sequences = any(isinstance(v, list) for v in rows.values())
    with using_config("train", False), no_backprop_mode():
        for _, batch in batches(rows, batch_size):
            result = run_spec(spec, model, {**(shared or {}), **batch}, backward=False,
                              seed=spec.seed if seed is None else seed)
            for name in spec.outputs:
                if sequences:
                    parts[name].extend(_array(o[name]) for o in result.example_outputs)
                else:
                    parts[name].append(_array(result.outputs[name]))
    if sequences:
        return {name: stack_examples(values) for name, values in parts.items()}
    return {name: np.concatenate([np.atleast_1d(p) for p in values])
            for name, values in parts.items()}


def stack_examples(outputs: list[np.ndarray]) -> Array:
    """Per-example outputs as one row per example: outputs of one shape ``(1, ...)`` (the
    example's own batch axis of one) joined along it into ``(n, ...)``; of another one shape,
    stacked into ``(n, shape...)``; of shapes that differ per example, the list itself."""
    shapes = {np.shape(o) for o in outputs}
    if len(shapes) != 1:
        return list(outputs)
    shape, = shapes
    if shape and shape[0] == 1:
        return np.concatenate(outputs)
    return np.stack(outputs)


def _array(value: Any) -> np.ndarray:
    return np.asarray(getattr(value, "array", value))


def metric_value(name: str, loss_inputs: list, loss_op: str | None = None
                 ) -> tuple[float, int]:
    """A metric's (sum, count) over the loss's inputs; a metric that does not fit is a
    training option error."""
    try:
        return metric_sums(name, loss_inputs, loss_op)
    except MetricError as e:
        raise TrainingOptionError(str(e)) from None


def check_labels(spec: Spec, model: SpecModel, data: SpecData) -> None:
    """Labels a softmax cross entropy cannot take (outside [0, classes), -1 ignored) are a
    data error naming the input and the first bad row, found before training starts."""
    loss = spec.loss
    if loss is None or loss.op != "softmax_cross_entropy" or len(loss.inputs) < 2:
        return
    label = label_input(spec) or loss.inputs[1]  # through reshapes, to the data's input
    if label not in data.train or isinstance(data.train[label], list):
        return
    # One row tells the number of classes; its label is set to 0 (valid for any number of
    # classes), so a bad label in that row is reported below with the others, by its row.
    probe = {k: v[:1] for k, v in data.train.items()}
    probe[label] = np.zeros_like(probe[label])
    with using_config("train", False), no_backprop_mode():
        try:
            result = run_spec(spec, model, {**data.shared, **probe}, backward=False)
        except errors.SpecRuntimeError:
            return  # the loss itself will report what is wrong, at its step
    logits = _array(result.loss_inputs[0][0]) if result.loss_inputs else None
    if logits is None or logits.ndim != 2:
        return
    classes = logits.shape[1]
    parts = (("training", data.train, data.train_index),
             ("validation", data.validation or {}, data.validation_index),
             ("test", data.test or {}, data.test_index))
    for part, arrays, index in parts:
        labels = arrays.get(label)
        if labels is None:
            continue
        labels = np.asarray(labels).reshape(len(labels), -1)  # every label of each row
        wrong = (labels != -1) & ((labels < 0) | (labels >= classes))
        bad = np.flatnonzero(wrong.any(axis=1))
        if bad.size:
            where = spec.inputs[label].loc
            row = int(bad[0] if index is None else index[bad[0]]) + 1
            what = "data row" if index is not None or part == "training" else f"{part} row"
            value = labels[bad[0]][wrong[bad[0]]][0]
            raise errors.SpecError(
                f"input '{label}': {what} {row} has label {value.item()!r}, outside "
                f"0..{classes - 1} for softmax_cross_entropy over {classes} classes "
                f"({bad.size} such row{'s' * (bad.size != 1)})", where.file, where.line, where.col)
