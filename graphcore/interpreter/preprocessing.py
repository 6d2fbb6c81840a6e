"""What a spec fits on its training rows and keeps with its parameters: the vocabulary of an
input of class names (``encode: category``, or a classification loss's labels given as text)
and the statistics of a normalized input (``normalize: standard | minmax``).

The state is part of the model: ``Preprocessing``, the ``SpecModel`` child under the reserved
name ``PREPROCESSING`` (no value name starts with ``_``), holds one ``InputState`` per input,
whose persistent arrays are saved with the parameters in every file that holds a model
(``_preprocessing/species/classes``, ``_preprocessing/x/shift``, ``_preprocessing/x/scale``).
The vocabulary is a unicode array (read back with ``allow_pickle=False``).

- ``fit_state(spec, rows)``: the state of ``rows`` (the training rows): classes sorted as
  scikit-learn's ``LabelEncoder`` sorts them (numerically when every name is a number, else
  by code point); per feature (every axis after the rows) the mean and the standard deviation
  (``standard``, numpy's ``std``: ddof 0) or the minimum and the range (``minmax``), a zero
  standard deviation or range taken as 1 (scikit-learn's scalers do the same).
- ``encode_rows(spec, state, arrays, sources)``: inputs of class names as class indices;
  a name the vocabulary lacks is a ``SpecError`` at the data file's line and column when the
  rows come from a CSV or JSON Lines file, else at the input in the spec.
- ``prepare_inputs(spec, model, arrays)``: the commands that run a model on inputs they make
  (run, check, export, predict...): the model's state (fitted on the rows given where the model
  has none: a spec run without ``--params``), then ``encode_rows``.
- ``normalized(spec, model, inputs)``: the interpreter's inputs with ``(x - shift) / scale``
  applied, as ops on Variables (so static plans and ONNX graphs hold them: Sub, Div) or on
  arrays.
- ``class_names(model)``: the label input's class names (what ``predict`` writes), or None.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.files.regular import open_regular
from graphcore.inputs.data_files import class_names_of
from graphcore.inputs.data_text import cell_place
from graphcore.inputs.files import show_shape
from graphcore.language.labels import label_input
from graphcore.language.located import error_at
from graphcore.language.syntax import Spec
from graphcore.links.link import Chain, Link
from graphcore.registry import suggestion as did_you_mean
from graphcore.variable import Variable

PREPROCESSING = "_preprocessing"  # the SpecModel child; its keys start with it
KEYS = ("classes", "shift", "scale")
Array = np.ndarray | list[np.ndarray]
State = dict[str, dict[str, np.ndarray]]  # {input: {"classes" | "shift" | "scale": array}}


class InputState(Link):
    """One input's fitted state: ``classes`` (a unicode array) and/or ``shift`` and
    ``scale`` (the input's dtype), None until fitted or loaded."""

    def __init__(self, classes: bool, normalize: bool) -> None:
        super().__init__()
        for key, wanted in (("classes", classes), ("shift", normalize), ("scale", normalize)):
            if wanted:
                setattr(self, key, None)
                self.register_persistent(key)

    def add_classes(self) -> None:
        if "classes" not in self._persistent:
            self.classes = None
            self.register_persistent("classes")

    def keys(self) -> list[str]:
        return [key for key in KEYS if key in self._persistent]


class Preprocessing(Chain):
    """The state of a spec's inputs (module doc). A classification loss's labels get their
    vocabulary only when they are text: when one is fitted, or a parameters file holds one."""

    def __init__(self, spec: Spec) -> None:
        super().__init__()
        self.label = label_input(spec)
        with self.init_scope():
            for name, column in preprocessed(spec).items():
                if column.encode is not None or column.normalize is not None:
                    setattr(self, name, InputState(column.encode is not None,
                                                   column.normalize is not None))

    def input_state(self, name: str) -> InputState | None:
        child = self.__dict__.get(name)
        return child if isinstance(child, InputState) else None

    def add_label_classes(self) -> InputState:
        """The label input's slot for a vocabulary (its values are class names)."""
        state = self.input_state(self.label)
        if state is None:
            with self.init_scope():
                setattr(self, self.label, InputState(True, False))
            state = self.input_state(self.label)
        state.add_classes()
        return state

    def state(self) -> State:
        """What is fitted so far, by input."""
        out: State = {}
        for name, child in self.namedchildren():
            values = {key: getattr(child, key) for key in child.keys()
                      if getattr(child, key) is not None}
            if values:
                out[name] = values
        return out

    def missing(self) -> list[tuple[str, str]]:
        """``(input, key)`` of every state the spec needs that is not fitted yet."""
        return [(name, key) for name, child in self.namedchildren() for key in child.keys()
                if getattr(child, key) is None]

    def load_state(self, state: State) -> None:
        """Set the fitted ``state`` (a label vocabulary adds its slot)."""
        for name, values in state.items():
            if "classes" in values and name == self.label:
                self.add_label_classes()
            child = self.input_state(name)
            if child is None:
                raise errors.ArgumentValueError(f"the spec has no state for input '{name}'")
            for key, value in values.items():
                if key not in child.keys():
                    raise errors.ArgumentValueError(f"input '{name}' keeps no {key}")
                object.__setattr__(child, key, np.array(value))

    def expect(self, keys: list[str]) -> None:
        """A parameters file's keys: a vocabulary of the label input there gets its slot."""
        if self.label is not None and f"{self.label}/classes" in keys:
            self.add_label_classes()

    def namedchildren(self) -> list[tuple[str, InputState]]:
        return [(name, child) for name, child in self.__dict__.items()
                if isinstance(child, InputState)]


def preprocessed(spec: Spec) -> dict[str, Any]:
    """The data columns of inputs that are encoded, normalized or labels, by input name."""
    return {name: s.column for name, s in spec.inputs.items() if s.column is not None and (
        s.column.takes_text or s.column.normalize is not None)}


# ------------------------------------------------------------------------------ fitting

def sorted_classes(names: np.ndarray) -> np.ndarray:
    """The distinct class names, sorted as ``LabelEncoder`` sorts its classes: by value when
    every name is a number (``3 < 10``), else by code point."""
    distinct = sorted(set(names.tolist()))
    try:
        numbers = [float(n) for n in distinct]
    except ValueError:
        pass
    else:
        distinct = [n for _, n in sorted(zip(numbers, distinct, strict=True))]
    return np.array(distinct, dtype=str) if distinct else np.zeros(0, dtype="<U1")


def fit_state(spec: Spec, rows: Mapping[str, Array], only_missing: State | None = None
              ) -> State:
    """The state ``rows`` give (see the module doc); ``only_missing``: a state already held,
    whose entries are kept and not fitted again."""
    held = only_missing or {}
    out: State = {name: dict(values) for name, values in held.items()}
    for name, column in preprocessed(spec).items():
        value = rows.get(name)
        if value is None or isinstance(value, list):
            continue
        if "classes" not in held.get(name, {}) and is_text(value, column):
            out.setdefault(name, {})["classes"] = sorted_classes(np.asarray(value))
        if column.normalize is not None and "shift" not in held.get(name, {}):
            out.setdefault(name, {}).update(_statistics(spec, name, column, np.asarray(value)))
    return out


def is_text(value: np.ndarray, column: Any) -> bool:
    """Values encoded by a vocabulary: class names read as text (declared or labels)."""
    return np.asarray(value).dtype.kind == "U" or column.encode is not None


def _statistics(spec: Spec, name: str, column: Any, value: np.ndarray) -> dict[str, Any]:
    where = column.normalize_loc or spec.inputs[name].loc
    if value.dtype.kind != "f":
        raise error_at(where, f"input '{name}': normalize takes real features, but the data "
                       f"gives {value.dtype} values")
    if value.shape[0] == 0:
        raise error_at(where, f"input '{name}': no rows to fit normalize: "
                       f"{column.normalize} on")
    data = value.astype(np.float64)
    if not np.all(np.isfinite(data)):
        raise error_at(where, f"input '{name}': the training rows hold NaN or infinite "
                       f"values; normalize: {column.normalize} needs finite features")
    if column.normalize == "standard":
        shift, scale = data.mean(axis=0), data.std(axis=0)
    else:
        shift, scale = data.min(axis=0), data.max(axis=0) - data.min(axis=0)
    scale = np.where(scale == 0, 1.0, scale)  # a constant feature: shifted, not scaled
    return {"shift": np.asarray(shift, dtype=value.dtype),
            "scale": np.asarray(scale, dtype=value.dtype)}


# ----------------------------------------------------------------------------- encoding

@dataclass
class Rows:
    """Where an array's rows come from, for messages: the file (None: stdin, generated)
    and, when the array holds some of its rows, which (``index[i]``: the file's data row of
    the array's row ``i``)."""

    path: str | os.PathLike[str] | None = None
    index: np.ndarray | None = None
    what: str = "data row"


def encode_rows(spec: Spec, state: State, arrays: Mapping[str, Array],
                sources: Mapping[str, Rows] | None = None,
                purpose: str = "the training rows hold"
                ) -> dict[str, Array]:
    """``arrays`` with every input of class names as class indices (the input's integer
    dtype); a name not in the vocabulary is a located ``SpecError`` (module doc). An input
    of text without a vocabulary is refused: the parameters were fitted on numbers."""
    out = dict(arrays)
    for name, column in preprocessed(spec).items():
        value = arrays.get(name)
        if value is None or isinstance(value, list) or not is_text(value, column):
            continue
        classes = state.get(name, {}).get("classes")
        if classes is None:
            loc = column.loc
            raise error_at(loc, f"input '{name}' holds class names ({_first(value)}, ...), but "
                           "the parameters hold no vocabulary for it (they were trained on "
                           "class indices)", "give the labels as the training data gave them")
        names = np.asarray(value)
        if names.dtype.kind != "U":
            names = class_names_of(names)
        order = {n: i for i, n in enumerate(classes.tolist())}
        codes = np.fromiter((order.get(n, -1) for n in names.tolist()), dtype=np.int64,
                            count=len(names))
        unknown = np.flatnonzero(codes < 0)
        if unknown.size:
            raise _unknown(spec, name, names, unknown, classes, (sources or {}).get(name),
                           purpose)
        out[name] = codes.astype(spec.inputs[name].dtype if spec.inputs[name].dtype.startswith(
            "int") else np.int32)
    return out


def _first(value: Any) -> str:
    flat = np.asarray(value).reshape(-1)
    return repr(str(flat[0])) if flat.size else "none"


def _unknown(spec: Spec, name: str, names: np.ndarray, unknown: np.ndarray,
             classes: np.ndarray, rows: Rows | None, purpose: str) -> errors.SpecError:
    row = int(unknown[0])
    value = str(names[row])
    shown = ", ".join(classes.tolist()[:12]) + (", ..." if len(classes) > 12 else "")
    count = f" ({unknown.size} rows hold names outside it)" if unknown.size > 1 else ""
    message = (f"input '{name}': class {value!r} is not one of the {len(classes)} classes "
               f"{purpose} ({shown}){count}")
    hint = did_you_mean(value, classes.tolist())
    file_row = row if rows is None or rows.index is None else int(rows.index[row])
    column = spec.inputs[name].column
    place = _place(rows, column, file_row)
    if place is not None:
        path, line, col = place
        return errors.SpecError(message, path, line, col, None, max(len(value), 1), hint)
    what = "data row" if rows is None else rows.what
    return error_at(column.loc, f"{message}; {what} {file_row + 1}", hint)


def _place(rows: Rows | None, column: Any, file_row: int) -> tuple[str, int, int] | None:
    if rows is None or rows.path is None or column.column is None:
        return None
    path = Path(rows.path)
    if path.suffix.lower() not in (".csv", ".jsonl"):
        return None
    try:
        with open_regular(path) as stream:
            found = cell_place(path, stream, column.column, file_row)
    except (OSError, errors.SpecError):
        return None
    return None if found is None else (str(path), *found)


# ------------------------------------------------------------------------ the commands

def prepare_inputs(spec: Spec, model: Any, arrays: Mapping[str, Array],
                   sources: Mapping[str, Rows] | None = None) -> dict[str, Array]:
    """``arrays`` ready for the model: what the model's state lacks fitted on ``arrays``
    themselves (a model that was not trained, e.g. ``graphtool run`` without ``--params``),
    then inputs of class names encoded by its vocabularies."""
    preprocessing = model.preprocessing
    if preprocessing is None:
        return dict(arrays)
    held = preprocessing.state()
    fitted = fit_state(spec, arrays, held)
    new = {name: {key: value for key, value in values.items() if key not in held.get(name, {})}
           for name, values in fitted.items()}
    preprocessing.load_state({name: values for name, values in new.items() if values})
    return encode_rows(spec, preprocessing.state(), arrays, sources,
                       "the parameters were trained on")


def class_names(model: Any) -> tuple[str, ...] | None:
    """The class names of the spec's labels in class-index order (what ``predict`` writes
    for a predicted class), or None when the labels are class indices themselves."""
    preprocessing = getattr(model, "preprocessing", None)
    if preprocessing is None or preprocessing.label is None:
        return None
    state = preprocessing.input_state(preprocessing.label)
    classes = None if state is None else getattr(state, "classes", None)
    return None if classes is None else tuple(classes.tolist())


# -------------------------------------------------------------------------- normalizing

def _at_normalize(spec: Spec, name: str, message: str) -> errors.SpecRuntimeError:
    """``message`` located at input ``name``'s ``normalize:`` (else at the input)."""
    loc = spec.inputs[name].column.normalize_loc or spec.inputs[name].loc
    return errors.SpecRuntimeError(message, loc.file, loc.line, loc.col,
                                   loc.source.line(loc.line) if loc.source else None,
                                   loc.length)


def normalized(spec: Spec, model: Any, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """``inputs`` with each normalized input as ``(x - shift) / scale`` (module doc); a
    model without the statistics is a located ``SpecRuntimeError`` at ``normalize:``."""
    out = dict(inputs)
    preprocessing = getattr(model, "preprocessing", None)
    if preprocessing is None:
        return out
    for name, child in preprocessing.namedchildren():
        if name not in out or "shift" not in child.keys():
            continue
        shift, scale = child.shift, child.scale
        if shift is None or scale is None:
            raise _at_normalize(spec, name, f"input '{name}': normalize needs statistics fitted "
                                "on training rows, and the model holds none; train the spec, "
                                "or load parameters that hold them")
        value = out[name]
        shape = getattr(value, "shape", None)
        if shape is not None and tuple(shape[len(shape) - shift.ndim:]) != shift.shape:
            raise _at_normalize(spec, name, f"input '{name}' has shape "
                                f"{show_shape(tuple(shape))}, but its normalize statistics "
                                f"are per feature of shape {show_shape(shift.shape)}")
        if isinstance(value, Variable):
            out[name] = (value - shift.astype(value.dtype)) / scale.astype(value.dtype)
        else:
            array = np.asarray(value)
            out[name] = (array - shift.astype(array.dtype)) / scale.astype(array.dtype)
    return out


def model_state(model: Any) -> State:
    """The state ``model`` holds (``{}`` for a spec that encodes and normalizes nothing)."""
    preprocessing = getattr(model, "preprocessing", None)
    return {} if preprocessing is None else preprocessing.state()
