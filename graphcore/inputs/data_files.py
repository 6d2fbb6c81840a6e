"""Reading training data: the arrays a spec's ``data:`` section names, from one file.

``read_data(path, inputs)`` returns ``{input name: array}`` (or a list of arrays, one per
example, for sequences). Formats: CSV with a header (``columns: [a, b]`` -> a ``[rows, 2]``
array, ``column: a`` -> ``[rows]``), ``.npz`` (``key``, or a sequence as ``values`` +
``offsets`` arrays), ``.npy`` (the whole array) and JSON Lines (``field``, ``column`` or
``columns`` of each line's object). ``.npy``/``.npz`` integer and bool arrays keep their dtype
unless the input gives ``dtype``; floats become float32; CSV values are float32 unless
``dtype`` says otherwise; an input that may hold class names (``encode: category``, labels)
is a unicode array of them (``class_names_of``). Bad data raises ``SpecError`` located in
the data file (``data.csv:7:3``: line and column of the field) or at the spec's column
entry; every input must have the same number of rows (they bind the same batch dimension).
Nothing is pickled.

Every read is bounded (``graphcore.files.arrays`` for .npy/.npz, ``data_text`` for CSV and JSON
Lines): each input's elements against the spec's limit, checked from headers or as rows
arrive, before anything is allocated; a folder or a FIFO is an ``UnreadableFileError`` at once.
"""

from __future__ import annotations

import codecs
import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from graphcore.errors import MissingFileError, SpecError, UnreadableFileError
from graphcore.files.arrays import (
    NPY_MAGIC,
    ZIP_MAGICS,
    ArrayFileError,
    NpyHeader,
    NpzArchive,
    read_npy_data,
    read_npy_header,
    remaining_bytes,
)
from graphcore.files.regular import located, open_regular
from graphcore.inputs.data_text import (
    MAX_SEQUENCE_EXAMPLES,
    class_text,
    convert,
    number_text,
    read_csv,
    read_jsonl,
)
from graphcore.language.located import error_at
from graphcore.language.syntax import DEFAULT_MAX_ELEMENTS
from graphcore.registry import suggestion as did_you_mean

__all__ = ["NPY_MAGIC", "ZIP_MAGICS", "check_batch_dims", "check_declared_shapes",
           "read_data", "read_data_bytes"]

Array = np.ndarray | list[np.ndarray]


def _error(path: Path | str, line: int, col: int, message: str,
           hint: str | None = None) -> SpecError:
    return SpecError(message, str(path), line, col, None, 1, hint)


def _at(loc: Any, message: str, hint: str | None = None) -> SpecError:

    return error_at(loc, message, hint)


def read_data(path: str | os.PathLike[str], inputs: Mapping[str, Any],
              where: Any = None, max_elements: int = DEFAULT_MAX_ELEMENTS
              ) -> dict[str, Array]:
    """The arrays for ``inputs`` (``InputSpec``s of source ``data``) from the file ``path``;
    ``where`` is the spec location that named the file (for errors about the file itself:
    a missing file is a ``MissingFileError`` there, a folder or a FIFO an
    ``UnreadableFileError``). Each input may have at most ``max_elements`` elements."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".npz", ".npy", ".jsonl"):
        raise _at(where, f"data file must be .csv, .npz, .npy or .jsonl, got '{suffix}'")
    try:
        handle = open_regular(path, "data file ")
    except FileNotFoundError:
        raise missing_file(where, "data file not found", path) from None
    except UnreadableFileError as err:
        raise located(err, where) from None
    try:
        with handle:
            if suffix == ".csv":
                arrays = read_csv(path, handle, inputs, max_elements)
            elif suffix == ".jsonl":
                arrays = read_jsonl(path, handle, inputs, max_elements)
            else:
                arrays = _read_numpy(handle, path, suffix[1:], inputs, where, max_elements)
    except OSError as err:  # the disk failed while reading
        raise located(UnreadableFileError(f"data file {path}: cannot read it: "
                                          f"{err.strerror or err}", filename=str(path)),
                      where) from None
    _check_read(arrays, inputs, path.name)
    return arrays


def read_data_bytes(data: bytes, inputs: Mapping[str, Any], where: Any,
                    source: str = "stdin", max_elements: int = DEFAULT_MAX_ELEMENTS
                    ) -> dict[str, Array]:
    """``read_data`` for bytes (stdin), read exactly as a file of the format they are:
    ``.npy`` or ``.npz`` by their first bytes, JSON Lines when the first character is ``{``,
    otherwise CSV with a header line naming the columns."""
    stream = io.BytesIO(data)
    if data.startswith(NPY_MAGIC) or data.startswith(ZIP_MAGICS):
        kind = "npy" if data.startswith(NPY_MAGIC) else "npz"
        arrays = _read_numpy(stream, source, kind, inputs, where, max_elements)
    else:
        start = data.lstrip().removeprefix(codecs.BOM_UTF8)[:1]
        reader = read_jsonl if start == b"{" else read_csv
        arrays = reader(source, stream, inputs, max_elements)
    _check_read(arrays, inputs, source)
    return arrays


def _check_read(arrays: Mapping[str, Array], inputs: Mapping[str, Any], source: str) -> None:
    check_declared_shapes(arrays, inputs, source)
    check_batch_dims(arrays, inputs)
    for name, value in arrays.items():
        spec = inputs.get(name)
        if spec is not None and spec.batch_dim is not None and _rows_of(value) == 0:
            raise _at(spec.column.loc if spec.column else spec.loc,
                      f"data input '{name}': {source} holds no rows for it")


def _rows_of(value: Array) -> int:
    return len(value) if isinstance(value, list) else (value.shape[0] if np.ndim(value) else 1)


def missing_file(where: Any, message: str, path: Path | str) -> FileNotFoundError:
    """A file a spec names that does not exist: located at the name in the spec when known
    (the CLI exits 66 either way)."""
    if where is None:
        return FileNotFoundError(2, message, str(path))

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


# ---------------------------------------------------------------------------- npz and npy

def _read_numpy(stream: BinaryIO, path: Path | str, kind: str, inputs: Mapping[str, Any],
                where: Any, max_elements: int) -> dict[str, Array]:
    """An .npy (the one input's array) or .npz (arrays by name) from ``stream``; ``path``
    names it in messages. Headers are checked (dtype, elements, the bytes the file holds)
    before any array is allocated; see ``graphcore.files.arrays``."""
    path = Path(path)

    def about_file(message: str) -> SpecError:
        return _at(where, message) if where is not None else _error(path, 0, 0, message)

    if kind == "npy":
        if len(inputs) != 1:
            raise about_file(f"{path.name} holds one array but data names {len(inputs)} "
                             "inputs; use an .npz with one array per input")
        (name, spec), = inputs.items()
        try:
            header = read_npy_header(stream)
            _check_kind(header, spec, path.name)
            array = read_npy_data(stream, header, remaining_bytes(stream), max_elements)
        except ArrayFileError as err:
            raise _at_input(spec, f"{path.name} {err}") from None
        return {name: _keep_dtype(array, spec)}
    try:
        archive = NpzArchive(stream)
    except ArrayFileError as err:
        raise about_file(f"{path.name} {err}") from None
    arrays: dict[str, Array] = {}
    with archive:
        names = archive.files
        for name, spec in inputs.items():
            column = spec.column
            keys = [column.values, column.offsets] if column.values else [column.key]
            if keys == [None]:
                raise _at(column.loc, f"data input '{name}': an .npz file is read by array "
                          "name (key: NAME, or values: + offsets:)")
            for key in keys:
                if key not in names:
                    shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
                    raise _at(column.loc, f"data input '{name}': {path.name} has no array "
                              f"'{key}' (it holds: {shown or 'no arrays'})",
                              did_you_mean(key, names))
            try:
                for key in keys:
                    _check_kind(archive.header(key), spec, f"{path.name}, array '{key}'")
                loaded = [archive.read(key, max_elements) for key in keys]
            except ArrayFileError as err:
                raise _at_input(spec, f"{path.name}: {err}") from None
            if column.values:
                arrays[name] = _sequences(*loaded, spec, path)
            else:
                arrays[name] = _keep_dtype(loaded[0], spec)
    return arrays


def _at_input(spec: Any, message: str) -> SpecError:
    return _at(spec.column.loc if spec.column else spec.loc,
               f"data input '{spec.name}': {message}")


def _check_kind(header: NpyHeader, spec: Any, what: str) -> None:
    text = header.dtype.kind == "U" and spec.column is not None and spec.column.takes_text
    if header.dtype.kind not in "biuf" and not text:
        raise _at_input(spec, f"{what} holds {header.dtype} values, not numbers")




def _sequences(values: np.ndarray, offsets: np.ndarray, spec: Any, path: Path
               ) -> list[np.ndarray]:
    values = _keep_dtype(values, spec)
    bad = (offsets.ndim != 1 or offsets.dtype.kind not in "iu" or offsets.size == 0
           or offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] > len(values))
    if bad:
        raise _at(spec.column.loc, f"data input '{spec.name}': the offsets of {path.name} must "
                  "be non-decreasing integers starting at 0 and not past the values")
    if offsets.size > MAX_SEQUENCE_EXAMPLES:
        raise _at_input(spec, f"{path.name} holds {offsets.size:,} examples, over the limit "
                        f"of {MAX_SEQUENCE_EXAMPLES:,} examples of a sequence input")
    ends = list(offsets[1:]) + ([len(values)] if offsets[-1] < len(values) else [])
    return [values[start:end] for start, end in zip(offsets, ends, strict=False)]


def _keep_dtype(array: np.ndarray, spec: Any) -> np.ndarray:
    column = spec.column
    if column is not None and column.takes_text and (
            column.encode or array.dtype.kind == "U") and not array.dtype.hasobject:
        if array.ndim != 1:
            raise _at_input(spec, f"class names or codes are one per row (a 1-d array), but "
                            f"the array has shape {list(array.shape)}")
        return class_names_of(array)
    if array.dtype.hasobject or array.dtype.kind not in "biuf":
        raise _at_input(spec, f"the array holds {array.dtype} values, not numbers")
    if spec.dtype_given:
        return convert(array, np.dtype(spec.dtype),
                       lambda msg: _at(spec.column.loc if spec.column else spec.loc, msg))
    if array.dtype.kind == "f":
        return convert(array, np.dtype(np.float32),
                       lambda msg: _at(spec.column.loc if spec.column else spec.loc, msg))
    return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))


def class_names_of(array: np.ndarray) -> np.ndarray:
    """A 1-d array of class names (text) or codes (numbers) as class names: a unicode array
    in which a number and its text are one name (``3``, ``3.0`` and ``"3"`` are ``3``)."""
    if array.dtype.kind == "U":
        names = [class_text(str(v)) for v in array.tolist()]
    elif array.dtype.kind == "b":
        names = [str(int(v)) for v in array.tolist()]
    else:
        names = [number_text(float(v)) for v in array.tolist()]
    return np.array(names, dtype=str) if names else np.zeros(0, dtype="<U1")
