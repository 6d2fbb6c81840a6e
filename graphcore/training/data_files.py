"""Reading training data: the arrays a spec's ``data:`` section names, from one file.

``read_data(path, inputs)`` returns ``{input name: array}`` (or a list of arrays, one per
example, for sequences). Formats: CSV with a header (``columns: [a, b]`` -> a ``[rows, 2]``
array, ``column: a`` -> ``[rows]``), ``.npz`` (``key``, or a sequence as ``values`` +
``offsets`` arrays), ``.npy`` (the whole array) and JSON Lines (``field``, ``column`` or
``columns`` of each line's object). ``.npy``/``.npz`` integer and bool arrays keep their dtype
unless the input gives ``dtype``; floats become float32; CSV values are float32 unless
``dtype`` says otherwise. Bad data raises ``SpecError`` located in the data file
(``data.csv:7:3``: line and column of the field) or at the spec's column entry; every input
must have the same number of rows (they bind the same batch dimension). Nothing is pickled.
"""

from __future__ import annotations

import csv
import io
import json
import os
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from graphcore.errors import SpecError
from graphcore.registry import suggestion as did_you_mean

Array = np.ndarray | list[np.ndarray]
NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")


def _error(path: Path | str, line: int, col: int, message: str,
           hint: str | None = None) -> SpecError:
    return SpecError(message, str(path), line, col, None, 1, hint)


def _at(loc: Any, message: str, hint: str | None = None) -> SpecError:
    from graphcore.spec.located import error_at

    return error_at(loc, message, hint)


def read_data(path: str | os.PathLike[str], inputs: Mapping[str, Any],
              where: Any = None) -> dict[str, Array]:
    """The arrays for ``inputs`` (``InputSpec``s of source ``data``) from the file ``path``;
    ``where`` is the spec location that named the file (for errors about the file itself:
    a missing file is a ``MissingFileError`` there)."""
    path = Path(path)
    if not path.is_file():
        if not path.exists():
            raise missing_file(where, "data file not found", path)
        raise _at(where, f"data: {path} is not a regular file") if where else \
            _error(path, 0, 0, "not a regular file")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        with open(path, newline="", encoding="utf-8-sig") as f:
            arrays = _read_csv(path, f, inputs)
    elif suffix in (".npz", ".npy"):
        arrays = _read_numpy(path, path, suffix[1:], inputs, where)
    elif suffix == ".jsonl":
        with open(path, encoding="utf-8") as f:
            arrays = _read_jsonl(path, f, inputs)
    else:
        raise _at(where, f"data file must be .csv, .npz, .npy or .jsonl, got '{suffix}'")
    check_declared_shapes(arrays, inputs, path.name)
    check_batch_dims(arrays, inputs)
    return arrays


def read_data_bytes(data: bytes, inputs: Mapping[str, Any], where: Any,
                    source: str = "stdin") -> dict[str, Array]:
    """``read_data`` for bytes (stdin), read exactly as a file of the format they are:
    ``.npy`` or ``.npz`` by their first bytes, JSON Lines when the first character is ``{``,
    otherwise CSV with a header line naming the columns."""
    start = data.lstrip()[:1]
    if data.startswith(NPY_MAGIC) or data.startswith(ZIP_MAGICS):
        kind = "npy" if data.startswith(NPY_MAGIC) else "npz"
        arrays = _read_numpy(io.BytesIO(data), source, kind, inputs, where)
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise _at(where, f"{source} is neither .npy, .npz nor UTF-8 text (CSV or JSON "
                      f"Lines): {e.reason} at byte {e.start}") from None
        reader = _read_jsonl if start == b"{" else _read_csv
        arrays = reader(source, io.StringIO(text, newline=""), inputs)
    check_declared_shapes(arrays, inputs, source)
    check_batch_dims(arrays, inputs)
    return arrays


def missing_file(where: Any, message: str, path: Path | str) -> FileNotFoundError:
    """A file a spec names that does not exist: located at the name in the spec when known
    (the CLI exits 66 either way)."""
    if where is None:
        return FileNotFoundError(2, message, str(path))
    from graphcore.errors import MissingFileError

    located = _at(where, f"{message}: {path}")
    return MissingFileError(located.message, located.file, located.line, located.col,
                            located.source_line, located.length, filename=str(path))


def check_declared_shapes(arrays: Mapping[str, Array], inputs: Mapping[str, Any],
                          source: str) -> None:
    """Each input's data has the shape its ``shape:`` declares: the same number of axes and
    the same sizes, the leading (named or null) axis free. Data is never reshaped to fit: a
    sequence's examples are checked one by one, the leading axis being each one's length."""
    for name, value in arrays.items():
        spec = inputs.get(name)
        declared = getattr(spec, "shape", None)
        if declared is None or getattr(spec, "shape_loc", None) is None:
            continue  # no shape written in the spec (bench may set rows of its own)
        # the leading axis holds the rows (a sequence's: each example's length), of any size
        free = (None, *declared[1:]) if declared else declared
        examples = value if isinstance(value, list) else [value]
        for index, array in enumerate(examples):
            shape = np.shape(array)
            if _fits(shape, free):
                continue
            what = f"example {index + 1} of {source}" if isinstance(value, list) else source
            raise _at(spec.shape_loc or spec.loc,
                      f"data input '{name}': {what} gives an array of shape "
                      f"{_show(shape)}, but the spec declares shape {declared_shape(spec)}",
                      _shape_hint(spec, shape))


def _fits(shape: tuple[int, ...], declared: tuple[int | None, ...]) -> bool:
    return len(shape) == len(declared) and all(
        want is None or want == size for want, size in zip(declared, shape, strict=True))


def declared_shape(spec: Any) -> str:
    """A declared shape as the spec writes it: ``[batch, 4]`` (``null`` for an unnamed
    leading axis)."""
    sizes = [str(n) if n is not None else (spec.batch_dim if i == 0 and spec.batch_dim and
                                            not spec.sequence else "null")
             for i, n in enumerate(spec.shape)]
    return "[" + ", ".join(sizes) + "]"


def _show(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _shape_hint(spec: Any, shape: tuple[int, ...]) -> str:
    column = spec.column
    if column is not None and column.column and len(spec.shape) == 2 and len(shape) == 1:
        return "column: NAME reads a [rows] vector; columns: [NAME] reads [rows, 1]"
    lead = "null" if spec.sequence or not spec.batch_dim else spec.batch_dim
    own = "[" + ", ".join([lead, *map(str, shape[1:])]) + "]"
    return f"the data is not reshaped to fit: declare shape {own}, or reshape it in the " \
           "graph (op: reshape)"


def check_batch_dims(arrays: Mapping[str, Array], inputs: Mapping[str, Any]) -> None:
    """Inputs naming the same batch dimension must have the same number of rows."""
    bound: dict[str, tuple[str, int]] = {}
    for name, value in arrays.items():
        spec = inputs.get(name)
        dim = getattr(spec, "batch_dim", None)
        if dim is None:
            continue
        rows = len(value) if isinstance(value, list) else \
            (value.shape[0] if np.ndim(value) else 1)
        if dim in bound and bound[dim][1] != rows:
            first, first_rows = bound[dim]
            raise _at(spec.loc, f"batch dimension '{dim}' is {first_rows} for input '{first}' "
                      f"but {rows} for input '{name}'",
                      "every input naming it must have the same number of rows")
        bound.setdefault(dim, (name, rows))


# ------------------------------------------------------------------------------------- CSV

def _read_csv(path: Path | str, text: Iterable[str], inputs: Mapping[str, Any]
              ) -> dict[str, Array]:
    """A CSV's columns by header name; ``path`` names the text in messages."""
    lines = [(number, line) for number, line in enumerate(text, 1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise _error(path, 1, 1, f"{Path(path).name} is empty (a CSV needs a header line)")
    rows = list(csv.reader(line for _, line in lines))
    header = [name.strip() for name in rows[0]]
    header_line = lines[0][0]
    for name in header:
        if not name:
            raise _error(path, header_line, 1, "the header has an empty column name")
        try:
            float(name)
        except ValueError:
            continue
        raise _error(path, header_line, 1, f"the first line must name the columns, got "
                     f"{', '.join(header[:4])}", "add a header line such as f1,f2,label")
    body = rows[1:]
    for (number, _), row in zip(lines[1:], body, strict=True):
        if len(row) != len(header):
            raise _error(path, number, 1, f"row has {len(row)} fields, the header has "
                         f"{len(header)}")
    arrays: dict[str, Array] = {}
    for name, spec in inputs.items():
        column = spec.column
        wanted = column.columns or ((column.column,) if column.column else None)
        if wanted is None:
            raise _at(column.loc, f"data input '{name}': a CSV file is read by column name "
                      "(columns: [...] or column: NAME)")
        indexes = []
        for col in wanted:
            if col not in header:
                raise _at(column.loc, f"data input '{name}': {Path(path).name} has no column "
                          f"'{col}' (its columns: {', '.join(header)})",
                          did_you_mean(col, header))
            indexes.append(header.index(col))
        dtype = np.dtype(spec.dtype) if spec.dtype_given else np.dtype(np.float32)
        values = np.empty((len(body), len(indexes)), dtype=np.float64)
        for r, ((number, line), row) in enumerate(zip(lines[1:], body, strict=True)):
            for c, index in enumerate(indexes):
                text = row[index].strip()
                try:
                    values[r, c] = float(text)
                except ValueError:
                    raise _error(path, number, _field_col(line, index),
                                 f"column '{header[index]}' holds {text!r}, not a "
                                 "number") from None
        array = _convert(values, dtype, lambda msg, at=column.loc: _at(at, msg))
        arrays[name] = array[:, 0] if column.column else array
    return arrays


def _field_col(line: str, index: int) -> int:
    """1-based character column where field ``index`` starts (plain comma-separated text)."""
    col = 1
    for _ in range(index):
        comma = line.find(",", col - 1)
        if comma < 0:
            break
        col = comma + 2
    return col


# ---------------------------------------------------------------------------- npz and npy

def _read_numpy(stream: Path | BinaryIO, path: Path | str, kind: str,
                inputs: Mapping[str, Any], where: Any) -> dict[str, Array]:
    """An .npy (the one input's array) or .npz (arrays by name) from ``stream``; ``path``
    names it in messages."""
    path = Path(path)
    try:
        loaded = np.load(stream, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise _at(where, f"cannot read {path} as {kind}: {e}") if where else \
            _error(path, 0, 0, f"cannot read: {e}") from None
    arrays: dict[str, Array] = {}
    if isinstance(loaded, np.ndarray):
        if len(inputs) != 1:
            raise _at(where, f"{path.name} holds one array but data names {len(inputs)} "
                      "inputs; use an .npz with one array per input")
        (name, spec), = inputs.items()
        return {name: _keep_dtype(loaded, spec)}
    with loaded:
        names = list(loaded.files)
        for name, spec in inputs.items():
            column = spec.column
            keys = [column.values, column.offsets] if column.values else [column.key]
            if keys == [None]:
                raise _at(column.loc, f"data input '{name}': an .npz file is read by array "
                          "name (key: NAME, or values: + offsets:)")
            for key in keys:
                if key not in names:
                    raise _at(column.loc, f"data input '{name}': {path.name} has no array "
                              f"'{key}' (it holds: {', '.join(names)})", did_you_mean(key, names))
            if column.values:
                arrays[name] = _sequences(loaded[column.values], loaded[column.offsets], spec,
                                          path)
            else:
                arrays[name] = _keep_dtype(loaded[column.key], spec)
    return arrays


def _sequences(values: np.ndarray, offsets: np.ndarray, spec: Any, path: Path
               ) -> list[np.ndarray]:
    values = _keep_dtype(values, spec)
    offsets = np.asarray(offsets)
    bad = (offsets.ndim != 1 or offsets.dtype.kind not in "iu" or offsets.size == 0
           or offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] > len(values))
    if bad:
        raise _at(spec.column.loc, f"data input '{spec.name}': the offsets of {path.name} must "
                  "be non-decreasing integers starting at 0 and not past the values")
    ends = list(offsets[1:]) + ([len(values)] if offsets[-1] < len(values) else [])
    return [values[start:end] for start, end in zip(offsets, ends, strict=False)]


def _keep_dtype(array: np.ndarray, spec: Any) -> np.ndarray:
    if array.dtype.hasobject or array.dtype.kind not in "biuf":
        raise _at(spec.column.loc if spec.column else spec.loc,
                  f"data input '{spec.name}': the array holds {array.dtype} values, not numbers")
    if spec.dtype_given:
        return _convert(array, np.dtype(spec.dtype),
                        lambda msg: _at(spec.column.loc if spec.column else spec.loc, msg))
    if array.dtype.kind == "f":
        return np.ascontiguousarray(array, dtype=np.float32)
    return np.ascontiguousarray(array)


def _convert(array: np.ndarray, dtype: np.dtype, fail: Any) -> np.ndarray:
    if dtype.kind in "iu" and array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or np.any(array != np.trunc(array)):
            raise fail(f"values that are not integers cannot be {dtype}")
    return np.ascontiguousarray(array, dtype=dtype)


# ----------------------------------------------------------------------------- JSON Lines

def _read_jsonl(path: Path | str, text: Iterable[str], inputs: Mapping[str, Any]
                ) -> dict[str, Array]:
    """JSON Lines' fields by name; ``path`` names the text in messages."""
    records = []
    for number, line in enumerate(text, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise _error(path, number, e.colno, f"not JSON: {e.msg}") from None
        if not isinstance(record, dict):
            raise _error(path, number, 1, "each line must be a JSON object")
        records.append((number, record))
    arrays: dict[str, Array] = {}
    for name, spec in inputs.items():
        column = spec.column
        fields = [column.field] if column.field else \
            list(column.columns or ((column.column,) if column.column else ()))
        if not fields:
            raise _at(column.loc, f"data input '{name}': JSON Lines are read by field name "
                      "(field:, column: or columns:)")
        dtype = np.dtype(spec.dtype) if spec.dtype_given else np.dtype(np.float32)
        values = []
        for number, record in records:
            row = []
            for key in fields:
                if key not in record:
                    raise _error(path, number, 1, f"line has no field '{key}'",
                                 did_you_mean(key, list(record)))
                row.append(record[key])
            try:
                value = np.asarray(row[0] if column.field else row, dtype=np.float64)
            except (TypeError, ValueError):
                raise _error(path, number, 1, f"field '{fields[0]}' is not a number or a "
                             "list of numbers") from None
            values.append(value)
        if column.field:
            arrays[name] = [_convert(v, dtype, lambda m, at=column.loc: _at(at, m))
                            for v in values]
        else:
            stacked = np.stack(values) if values else np.zeros((0, len(fields)))
            array = _convert(stacked, dtype, lambda m, at=column.loc: _at(at, m))
            arrays[name] = array[:, 0] if column.column else array
    return arrays
