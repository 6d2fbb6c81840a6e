"""Whose checkpoint it is: the spec a training run trains and the data it trains on, as a
checkpoint records them and ``--resume`` compares them.

``RunIdentity.of(spec, data)`` holds

- ``model``: a hash of the spec's model-relevant content (its kind, params after ``--set``,
  inputs, steps and loss), from the loaded spec, so spacing, comments, the order of a
  mapping's keys and where its files lie do not change it, and every value that changes
  what is trained does;
- ``columns``: for each data-fed input, where in the data file it comes from (``x: columns
  f1, f2``), and its dtype;
- ``data``: a hash of the arrays the run trains and validates on (and the inputs every step
  shares), with the row counts.

The spec's name and file are kept to say whose checkpoint it is; they are not compared (a
renamed or moved spec is the same spec).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphcore.errors import SerializationError
from graphcore.language.predicate import Predicate
from graphcore.language.syntax import Spec

# Where a spec's value sits and which file it names, not what it computes; and where in the
# data file an input comes from (``columns``, compared on its own).
_NOT_MODEL = frozenset({"loc", "file", "file_loc", "folder", "source", "path",
                        "predicate_loc", "shape_loc", "column"})


@dataclass(frozen=True)
class RunIdentity:
    spec: str
    file: str
    model: str
    columns: dict[str, str]
    data: str
    rows: int
    validation_rows: int | None

    @classmethod
    def of(cls, spec: Spec, data: Any) -> RunIdentity:
        content = {"kind": spec.kind, "params": spec.params, "inputs": spec.inputs,
                   "graph": spec.graph, "loss": spec.loss}
        model = hashlib.sha256(json.dumps(_canonical(content), sort_keys=True).encode())
        columns = {name: _column(item) for name, item in spec.inputs.items()
                   if item.column is not None}
        digest = hashlib.sha256()
        for part in ("train", "validation", "shared"):
            arrays = getattr(data, part)
            digest.update(part.encode() + b"\0")
            for name in sorted(arrays or {}):
                digest.update(name.encode() + b"\0")
                value = arrays[name]
                for array in value if isinstance(value, list) else [value]:
                    array = np.ascontiguousarray(array)
                    digest.update(f"{array.dtype.str}{array.shape}".encode())
                    digest.update(array.data)
        validation = None if data.validation is None else \
            len(next(iter(data.validation.values())))
        return cls(spec.name, spec.file, model.hexdigest()[:16], columns,
                   digest.hexdigest()[:16], data.rows, validation)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str, key: str) -> RunIdentity:
        """The identity a checkpoint stored at ``key`` (a ``SerializationError`` naming the
        key when it is not one)."""
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise SerializationError(f"{key}: not JSON ({e})") from None
        fields = {f.name: f.type for f in dataclasses.fields(cls)}
        if not isinstance(doc, dict) or set(doc) != set(fields):
            raise SerializationError(f"{key}: expected an object with the keys "
                                     f"{', '.join(sorted(fields))}")
        texts = ("spec", "file", "model", "data")
        if not (all(isinstance(doc[k], str) for k in texts)
                and isinstance(doc["columns"], dict)
                and all(isinstance(v, str) for v in doc["columns"].values())
                and _count(doc["rows"])
                and (doc["validation_rows"] is None or _count(doc["validation_rows"]))):
            raise SerializationError(f"{key}: a field holds a value of the wrong kind")
        return cls(**doc)

    def describe(self) -> str:
        columns = "; ".join(f"{k}: {v}" for k, v in sorted(self.columns.items()))
        return f"spec '{self.spec}' ({self.file})" + (f", data {columns}" if columns else "")

    def spec_differences(self, other: RunIdentity) -> list[str]:
        """What makes ``other`` (a checkpoint's) another spec's: its model, its columns."""
        found = []
        if self.model != other.model:
            found.append(f"its model differs (spec content {other.model} then, "
                         f"{self.model} now)")
        if self.columns != other.columns:
            found.append("its data columns differ (" + "; ".join(
                f"{k}: {other.columns.get(k, 'none')} then, {self.columns.get(k, 'none')} now"
                for k in sorted(set(self.columns) | set(other.columns))
                if self.columns.get(k) != other.columns.get(k)) + ")")
        return found

    def data_differences(self, other: RunIdentity) -> list[str]:
        """How the data ``other`` (a checkpoint's) trained on differs from this run's."""
        found = []
        if self.rows != other.rows:
            found.append(f"training rows: {other.rows} then, {self.rows} now")
        if self.validation_rows != other.validation_rows:
            found.append(f"validation rows: {other.validation_rows} then, "
                         f"{self.validation_rows} now")
        if not found and self.data != other.data:
            found.append("the same number of rows, other values")
        return found


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _column(item: Any) -> str:
    c = item.column
    if c.columns is not None:
        where = "columns " + ", ".join(c.columns)
    elif c.column is not None:
        where = f"column {c.column}"
    elif c.values is not None:
        where = f"values {c.values}, offsets {c.offsets}"
    elif c.field is not None:
        where = f"field {c.field}"
    else:
        where = f"key {c.key}"
    return f"{where} ({item.dtype})"


def _canonical(value: Any) -> Any:
    """``value`` (the loaded spec's dataclasses) as plain JSON data, without places."""
    if isinstance(value, Predicate):
        return {"predicate": value.text.strip()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"": type(value).__name__,
                **{f.name: _canonical(getattr(value, f.name))
                   for f in dataclasses.fields(value) if f.name not in _NOT_MODEL}}
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, np.ndarray | np.generic):
        return _canonical(value.tolist())
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return {"type": type(value).__name__, "text": str(value)}
