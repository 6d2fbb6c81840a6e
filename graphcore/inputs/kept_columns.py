"""Columns of a data file that a spec does not read, passed through to its predictions
(``predict --keep id``): a CSV column or a JSON Lines field as the text it holds (``007`` stays
``007``), an ``.npz`` array by its key. The same bounds hold as for the data itself: a line at
a time, the CSV record limit, the spec's element limit per column.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from graphcore.errors import GraphcoreError
from graphcore.files.arrays import NPY_MAGIC, ZIP_MAGICS, ArrayFileError, NpzArchive
from graphcore.files.regular import open_regular
from graphcore.inputs.data_text import MAX_JSON_LINE_BYTES, csv_records, json_object, text_lines
from graphcore.language.syntax import DEFAULT_MAX_ELEMENTS
from graphcore.registry import suggestion as did_you_mean

SUFFIXES = (".csv", ".jsonl", ".npz")


class KeptColumnError(GraphcoreError, ValueError):
    """A column to keep is not in the data file, or the file cannot hold named columns."""


def read_kept_columns(path: str | os.PathLike[str], names: Sequence[str],
                      max_elements: int = DEFAULT_MAX_ELEMENTS) -> dict[str, np.ndarray]:
    """``names``' columns of the data file ``path``, a value per row, in the order given."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise KeptColumnError(f"--keep reads named columns of a .csv, .jsonl or .npz file; "
                              f"{path} is {suffix or 'a file without a suffix'}")
    try:
        handle = open_regular(path, "--keep: ")
    except FileNotFoundError:
        raise FileNotFoundError(2, "data file not found", os.fspath(path)) from None
    with handle:
        return _read(handle, suffix[1:], names, str(path), max_elements)


def kept_columns_from_bytes(data: bytes, names: Sequence[str],
                            max_elements: int = DEFAULT_MAX_ELEMENTS) -> dict[str, np.ndarray]:
    """``read_kept_columns`` for stdin's bytes, of the format their first bytes say (as
    ``--input x=-`` reads them: a zip archive is an ``.npz``, ``{`` JSON Lines, else CSV)."""
    if data.startswith(NPY_MAGIC):
        raise KeptColumnError("--keep reads named columns, and stdin holds one .npy array")
    kind = "npz" if data.startswith(ZIP_MAGICS) else \
        "jsonl" if data.lstrip()[:1] == b"{" else "csv"
    return _read(io.BytesIO(data), kind, names, "stdin", max_elements)


def _read(stream: BinaryIO, kind: str, names: Sequence[str], source: str,
          max_elements: int) -> dict[str, np.ndarray]:
    if kind == "npz":
        return _npz(stream, names, source, max_elements)
    if kind == "jsonl":
        return _jsonl(stream, names, source, max_elements)
    return _csv(stream, names, source, max_elements)


def _missing(name: str, source: str, available: list[str]) -> KeptColumnError:
    shown = ", ".join(available[:30]) + (", ..." if len(available) > 30 else "")
    hint = did_you_mean(name, available)
    return KeptColumnError(f"--keep {name}: {Path(source).name} has no column '{name}' (its "
                           f"columns: {shown})" + (f"; {hint}" if hint else ""))


def _csv(stream: BinaryIO, names: Sequence[str], source: str, max_elements: int
         ) -> dict[str, np.ndarray]:
    records = csv_records(source, stream)
    first = next(records, None)
    header = [] if first is None else [name.strip() for name in first[2]]
    for name in names:
        if name not in header:
            raise _missing(name, source, header)
    indexes = [header.index(name) for name in names]
    values: list[list[str]] = [[] for _ in names]
    for number, _, row in records:
        if len(row) != len(header):
            raise KeptColumnError(f"{source}:{number}: row has {len(row)} fields, the header "
                                  f"has {len(header)}")
        if len(values[0]) >= max_elements:
            raise KeptColumnError(f"{source}:{number}: --keep {names[0]}: over "
                                  f"{max_elements:,} rows, the element limit")
        for column, index in zip(values, indexes, strict=True):
            column.append(row[index].strip())
    return {name: np.asarray(column, dtype=str) for name, column in
            zip(names, values, strict=True)}


def _jsonl(stream: BinaryIO, names: Sequence[str], source: str, max_elements: int
           ) -> dict[str, np.ndarray]:
    values: list[list[str]] = [[] for _ in names]
    for number, text in text_lines(source, stream, MAX_JSON_LINE_BYTES):
        if not text.strip():
            continue
        record = json_object(source, number, text)
        for name, column in zip(names, values, strict=True):
            if name not in record:
                raise _missing(name, f"{source}:{number}", list(record))
            column.append(_text(record[name]))
        if len(values[0]) > max_elements:
            raise KeptColumnError(f"{source}:{number}: --keep {names[0]}: over "
                                  f"{max_elements:,} rows, the element limit")
    return {name: np.asarray(column, dtype=str) for name, column in
            zip(names, values, strict=True)}


def _text(value: Any) -> str:
    """A JSON value as a CSV cell: a string as itself, anything else as its JSON text."""
    return value if isinstance(value, str) else json.dumps(value)


def _npz(stream: BinaryIO, names: Sequence[str], source: str, max_elements: int
         ) -> dict[str, np.ndarray]:
    try:
        archive = NpzArchive(stream, max_elements)
    except ArrayFileError as err:
        raise KeptColumnError(f"{source} {err.message}") from None
    try:
        out = {}
        for name in names:
            if name not in archive:
                raise _missing(name, source, archive.files)
            try:
                array = archive[name]
            except ArrayFileError as err:
                raise KeptColumnError(f"{source}: '{name}' {err.message}") from None
            if array.ndim != 1:
                raise KeptColumnError(f"--keep {name}: {source} holds it as an array of shape "
                                      f"{array.shape}; a kept column has one value per row")
            out[name] = array
        return out
    finally:
        archive.close()
