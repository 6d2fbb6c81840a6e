"""The text formats of a spec's data files, streamed: CSV with a header, and JSON Lines.

Both read a binary stream line by line, decoding each line alone, so a byte that is not UTF-8
is an error at its line and column. Only the columns (fields) the spec reads are kept, each
converted to numbers as its line is read into a compact column of float64 (8 bytes a value,
never a Python string per cell), so memory follows what the spec reads, not the file's size.
The one exception is a column that may hold class names (``encode: category``, or a
classification loss's labels): its cells are kept as text and become a unicode array of class
names (``class_text``: a number's text is the number's, ``3.0`` is ``3``), unless labels turn
out to be all numbers; ``cell_place`` finds a row's cell again for a message about it.
Everything a file can make a reader hold is bounded before it is held: a line's bytes
(``MAX_CSV_LINE_BYTES``, ``MAX_JSON_LINE_BYTES``), a CSV record's (a quoted field may span
lines), the CSV field limit, and each input's elements (the spec's element limit), counted
as rows arrive. Bad text is a ``SpecError`` at ``file:line:col``.
"""

from __future__ import annotations

import codecs
import csv
import json
from array import array
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from graphcore.errors import SpecError
from graphcore.language.located import error_at
from graphcore.registry import suggestion as did_you_mean

Array = np.ndarray | list[np.ndarray]
MAX_CSV_LINE_BYTES = 1 << 20  # a CSV line, and a CSV record (a quoted field spans lines)
MAX_JSON_LINE_BYTES = 16 << 20  # a JSON line (a sequence per line can be long)
CSV_FIELD_LIMIT = csv.field_size_limit()  # characters of one field (Python's csv limit)
# A data sequence's examples are arrays of their own; each costs memory beyond its values.
MAX_SEQUENCE_EXAMPLES = 1_000_000


def _error(path: Path | str, line: int, col: int, message: str,
           hint: str | None = None) -> SpecError:
    return SpecError(message, str(path), line, col, None, 1, hint)


def _at(loc: Any, message: str, hint: str | None = None) -> SpecError:

    return error_at(loc, message, hint)


def text_lines(path: Path | str, stream: BinaryIO, max_bytes: int
               ) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of ``stream``, decoded as UTF-8 (a BOM on the
    first line dropped); a line over ``max_bytes`` or not UTF-8 is an error at it."""
    number = 0
    while True:
        raw = stream.readline(max_bytes + 1)
        if not raw:
            return
        number += 1
        if len(raw) > max_bytes:
            raise _error(path, number, 1, f"line {number} is longer than {max_bytes:,} bytes "
                         "(the limit for one line)")
        if number == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as e:
            col = len(raw[:e.start].decode("utf-8", "replace")) + 1
            raise _error(path, number, col, f"not UTF-8 text: byte 0x{raw[e.start]:02x} "
                         "cannot be decoded", "save the file as UTF-8") from None


class _Columns:
    """Numbers of some columns, one compact float64 array per column, grown row by row."""

    def __init__(self, count: int) -> None:
        self.values = [array("d") for _ in range(count)]

    def take(self, positions: list[int], dtype: np.dtype, fail: Callable[[str], SpecError]
             ) -> np.ndarray:
        """The columns at ``positions`` as one ``[rows, len(positions)]`` array of
        ``dtype``, converted column by column (no float64 copy of the whole)."""
        rows = len(self.values[0]) if self.values else 0
        out = np.empty((rows, len(positions)), dtype=dtype)
        for c, position in enumerate(positions):
            if rows:
                out[:, c] = convert(np.frombuffer(self.values[position], dtype=np.float64),
                                    dtype, fail)
        return out


def convert(values: np.ndarray, dtype: np.dtype, fail: Callable[[str], SpecError]
            ) -> np.ndarray:
    """``values`` as ``dtype``, never silently changed: non-integers into an integer dtype,
    values outside its range, and finite values too large for a float dtype are refused."""
    if dtype.kind in "iub" and values.dtype.kind == "f" and values.size:
        if not np.all(np.isfinite(values)) or np.any(values != np.trunc(values)):
            raise fail(f"values that are not integers cannot be {dtype}")
    if dtype.kind == "b" and values.dtype.kind != "b" and values.size and \
            np.any((values != 0) & (values != 1)):
        raise fail(f"values other than 0 and 1 cannot be {dtype}")
    if dtype.kind in "iu" and values.dtype.kind in "fiu" and values.size:
        info = np.iinfo(dtype)
        low, high = values.min(), values.max()
        if low < info.min or high > info.max:
            raise fail(f"values outside {dtype}'s range ({low:.6g} to {high:.6g}) cannot be "
                       f"{dtype}")
    with np.errstate(over="ignore", invalid="ignore"):
        result = np.ascontiguousarray(values, dtype=dtype)
    if dtype.kind == "f" and values.dtype.kind == "f" and values.size and \
            np.count_nonzero(np.isfinite(result)) < np.count_nonzero(np.isfinite(values)):
        raise fail(f"values too large for {dtype}")
    return result


def _input_dtype(spec: Any) -> np.dtype:
    return np.dtype(spec.dtype) if spec.dtype_given else np.dtype(np.float32)


def _over_limit(name: str, source: str, count: int, max_elements: int) -> str:
    return (f"data input '{name}': {source} gives it {count:,} elements by this line, over "
            f"the limit of {max_elements:,}")


# ------------------------------------------------------------------------------------- CSV

def csv_records(path: Path | str, stream: BinaryIO
                 ) -> Iterator[tuple[int, str, list[str]]]:
    """``(first line number, the record's text, fields)`` of each CSV record. Blank lines and
    lines starting with ``#`` between records are skipped; inside a quoted field they are
    text. A record may span lines (a quoted newline) up to ``MAX_CSV_LINE_BYTES``."""
    lines = text_lines(path, stream, MAX_CSV_LINE_BYTES)
    state = {"start": True, "first": 0, "text": [], "size": 0}

    def feed() -> Iterator[str]:
        for number, text in lines:
            if state["start"]:
                stripped = text.strip()
                if not stripped or stripped.startswith("#"):
                    continue
                state.update(start=False, first=number, text=[], size=0)
            state["size"] += len(text)
            if state["size"] > MAX_CSV_LINE_BYTES:
                raise _error(path, state["first"], 1, "a record (a quoted field spans "
                             f"lines) runs past {MAX_CSV_LINE_BYTES:,} characters",
                             "close the quote that opens here")
            state["text"].append(text)
            yield text

    reader = csv.reader(feed())
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise _error(path, state["first"] or 1, 1, _csv_reason(e)) from None
        yield state["first"], "".join(state["text"]), row
        state["start"] = True


def _csv_reason(error: csv.Error) -> str:
    text = str(error)
    if "field larger than field limit" in text:
        return f"a field is longer than {CSV_FIELD_LIMIT:,} characters (the CSV field limit)"
    if "new-line character seen in unquoted field" in text:
        return "a carriage return inside an unquoted field (end lines with \\n or \\r\\n)"
    return f"not valid CSV: {text}"


def read_csv(path: Path | str, stream: BinaryIO, inputs: Mapping[str, Any],
             max_elements: int) -> dict[str, Array]:
    """A CSV's columns by header name; ``path`` names the text in messages."""
    source = Path(path).name
    records = csv_records(path, stream)
    first = next(records, None)
    if first is None:
        raise _error(path, 1, 1, f"{source} is empty (a CSV needs a header line)")
    header_line, _, fields = first
    header = _header(path, header_line, fields)
    wanted = {name: _csv_indexes(name, spec, header, source) for name, spec in inputs.items()}
    numeric = {i for name, indexes in wanted.items() if not _text_column(inputs[name])
               for i in indexes}
    texts = {wanted[name][0]: [] for name, spec in inputs.items()
             if _text_column(spec) and wanted[name][0] not in numeric}
    kept = sorted({i for indexes in wanted.values() for i in indexes} - set(texts))
    position = {index: k for k, index in enumerate(kept)}
    columns = _Columns(len(kept))
    max_rows = min((max_elements // max(len(ix), 1) for ix in wanted.values()),
                   default=max_elements)
    rows = 0
    for number, text, row in records:
        if len(row) != len(header):
            raise _error(path, number, 1, f"row has {len(row)} fields, the header has "
                         f"{len(header)}")
        if rows >= max_rows:
            name, indexes = max(wanted.items(), key=lambda item: len(item[1]))
            raise _error(path, number, 1, _over_limit(name, source, (rows + 1) * len(indexes),
                                                      max_elements))
        for index in kept:
            cell = row[index].strip()
            try:
                value = float(cell)
            except ValueError:
                line, col = _field_place(text, index, number)
                raise _error(path, line, col, f"column '{header[index]}' holds "
                             f"{_shown(cell)}, not a number",
                             _category_hint(inputs, wanted, header, index)) from None
            columns.values[position[index]].append(value)
        for index, cells in texts.items():
            cells.append(row[index].strip())
        rows += 1
    if rows == 0:
        raise _error(path, header_line, 1, f"{source} holds a header but no data rows")
    arrays: dict[str, Array] = {}
    for name, spec in inputs.items():
        column = spec.column
        if wanted[name][0] in texts:
            arrays[name] = text_values(texts[wanted[name][0]], spec,
                                       lambda msg, at=column.loc: _at(at, msg))
            continue
        result = columns.take([position[i] for i in wanted[name]], _input_dtype(spec),
                              lambda msg, at=column.loc: _at(at, msg))
        arrays[name] = result[:, 0] if column.column else result
    return arrays


def _text_column(spec: Any) -> bool:
    """An input read as text first: one column that may hold class names."""
    return spec.column.takes_text and spec.column.column is not None


def _category_hint(inputs: Mapping[str, Any], wanted: Mapping[str, list[int]],
                   header: list[str], index: int) -> str:
    """How to read a column of class names: the key to add to the input reading it."""
    readers = [n for n, indexes in wanted.items() if index in indexes]
    name = next((n for n in readers if not _text_column(inputs[n])), readers[0])
    if inputs[name].column.column is not None:
        return (f"if these are class names, add encode: category to data input '{name}' "
                "(its values become class indices 0, 1, ...)")
    return (f"if column '{header[index]}' holds class names, read it as an input of its "
            f"own: {{column: {header[index]}, encode: category}}")


def number_text(value: float) -> str:
    """The one text of a number as a class name: ``3`` for 3 and 3.0, ``2.5`` for 2.5."""
    if np.isfinite(value) and value == int(value):
        return str(int(value))
    return repr(float(value))


def class_text(text: str) -> str:
    """A value's class name: text that reads as a finite number is that number's
    ``number_text`` (so ``3`` and ``3.0`` are one class); other text as it is."""
    try:
        value = float(text)
    except ValueError:
        return text
    return number_text(value) if np.isfinite(value) else text


def text_values(cells: list[str], spec: Any, fail: Callable[[str], SpecError]) -> np.ndarray:
    """One text column of an input that may hold class names: its class names as a unicode
    array (``encode: category``, or labels that are not all numbers), else the numbers of
    labels as the input's dtype."""
    if not spec.column.encode:
        try:
            numbers = np.array([float(cell) for cell in cells], dtype=np.float64)
        except ValueError:
            pass
        else:
            return convert(numbers, _input_dtype(spec), fail)
    return np.array([class_text(cell) for cell in cells], dtype=str) if cells else \
        np.zeros(0, dtype="<U1")


def _header(path: Path | str, line: int, fields: list[str]) -> list[str]:
    header = [name.strip() for name in fields]
    for name in header:
        if not name:
            raise _error(path, line, 1, "the header has an empty column name")
        try:
            float(name)
        except ValueError:
            continue
        raise _error(path, line, 1, f"the first line must name the columns, got "
                     f"{', '.join(header[:4])}", "add a header line such as f1,f2,label")
    return header


def _csv_indexes(name: str, spec: Any, header: list[str], source: str) -> list[int]:
    column = spec.column
    wanted = column.columns or ((column.column,) if column.column else None)
    if wanted is None:
        raise _at(column.loc, f"data input '{name}': a CSV file is read by column name "
                  "(columns: [...] or column: NAME)")
    indexes = []
    for col in wanted:
        if col not in header:
            shown = ", ".join(header[:20]) + (", ..." if len(header) > 20 else "")
            raise _at(column.loc, f"data input '{name}': {source} has no column '{col}' "
                      f"(its columns: {shown})", did_you_mean(col, header))
        indexes.append(header.index(col))
    return indexes


def _field_place(text: str, index: int, first_line: int) -> tuple[int, int]:
    """Line and 1-based column where field ``index`` of a record starts (its text beginning
    at line ``first_line``; commas inside quotes do not separate fields)."""
    field, quoted, offset = 0, False, 0
    while offset < len(text) and field < index:
        char = text[offset]
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            field += 1
        offset += 1
    before = text[:offset]
    line = first_line + before.count("\n")
    return line, offset - (before.rfind("\n") + 1) + 1


def _shown(text: str, width: int = 40) -> str:
    return repr(text if len(text) <= width else text[:width] + "...")


# ----------------------------------------------------------------------------- JSON Lines

def read_jsonl(path: Path | str, stream: BinaryIO, inputs: Mapping[str, Any],
               max_elements: int) -> dict[str, Array]:
    """JSON Lines' fields by name, each line's values kept as numbers as it is read."""
    source = Path(path).name
    readers = {name: _JsonInput(name, spec, path, source, max_elements)
               for name, spec in inputs.items()}
    lines = 0
    for number, text in text_lines(path, stream, MAX_JSON_LINE_BYTES):
        if not text.strip():
            continue
        record = json_object(path, number, text)
        for reader in readers.values():
            reader.add(number, record)
        lines += 1
    if lines == 0:
        raise _error(path, 1, 1, f"{source} holds no JSON lines")
    return {name: reader.result() for name, reader in readers.items()}


def json_object(path: Path | str, number: int, text: str) -> dict[str, Any]:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        raise _error(path, number, e.colno, f"not JSON: {e.msg}") from None
    except RecursionError:
        raise _error(path, number, 1, "not JSON this reader takes: nested too deeply") \
            from None
    except ValueError as e:  # an integer of more digits than Python reads
        raise _error(path, number, 1, f"not JSON this reader takes: {e}") from None
    if not isinstance(record, dict):
        raise _error(path, number, 1, "each line must be a JSON object")
    return record


class _JsonInput:
    """One input's values from JSON Lines: ``field`` (a list per line: one example of a
    sequence), or ``column``/``columns`` (numbers per line: a row)."""

    def __init__(self, name: str, spec: Any, path: Path | str, source: str,
                 max_elements: int) -> None:
        column = spec.column
        self.name, self.spec, self.path, self.source = name, spec, path, source
        self.fields = [column.field] if column.field else \
            list(column.columns or ((column.column,) if column.column else ()))
        if not self.fields:
            raise _at(column.loc, f"data input '{name}': JSON Lines are read by field name "
                      "(field:, column: or columns:)")
        self.max_elements = max_elements
        self.count = 0
        self.examples: list[np.ndarray] = []
        self.columns = _Columns(len(self.fields))
        self.shape: tuple[int, ...] | None = None
        # class names or numbers of an input that may hold them, as the lines give them
        self.cells: list[str | float] | None = [] if _text_column(spec) else None

    def add(self, number: int, record: dict[str, Any]) -> None:
        values = []
        for key in self.fields:
            if key not in record:
                raise _error(self.path, number, 1, f"line has no field '{key}'",
                             did_you_mean(key, list(record)))
            values.append(record[key])
        if self.cells is not None:
            self._add_class(number, values[0])
            return
        value = self._numbers(number, values[0] if self.spec.column.field else values)
        self.count += value.size
        if self.count > self.max_elements:
            raise _error(self.path, number, 1, _over_limit(self.name, self.source, self.count,
                                                           self.max_elements))
        if self.spec.column.field:
            if len(self.examples) >= MAX_SEQUENCE_EXAMPLES:
                raise _error(self.path, number, 1, f"data input '{self.name}': {self.source} "
                             f"holds over {MAX_SEQUENCE_EXAMPLES:,} examples, the limit of a "
                             "sequence input")
            self.examples.append(value)
            return
        if value.shape != (len(self.fields),):
            raise _error(self.path, number, 1, f"field '{self.fields[0]}' is not a number "
                         "(columns: read one number per field)")
        for c, number_value in enumerate(value.tolist()):
            self.columns.values[c].append(number_value)

    def _add_class(self, number: int, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise _error(self.path, number, 1, f"field '{self.fields[0]}' is not a class name "
                         "(a string) or a number")
        self.count += 1
        if self.count > self.max_elements:
            raise _error(self.path, number, 1, _over_limit(self.name, self.source, self.count,
                                                           self.max_elements))
        self.cells.append(value if isinstance(value, str) else float(value))

    def _numbers(self, number: int, value: Any) -> np.ndarray:
        try:
            return np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError, OverflowError, RecursionError):
            raise _error(self.path, number, 1, f"field '{self.fields[0]}' is not a number or "
                         "a list of numbers (of one length, within float64)") from None

    def result(self) -> Array:
        dtype = _input_dtype(self.spec)
        at = self.spec.column.loc

        def fail(message: str) -> SpecError:
            return _at(at, message)

        if self.spec.column.field:
            return [convert(v, dtype, fail) for v in self.examples]
        if self.cells is not None:
            return text_values([v if isinstance(v, str) else number_text(v)
                                for v in self.cells], self.spec, fail)
        values = self.columns.take(list(range(len(self.fields))), dtype, fail)
        return values[:, 0] if self.spec.column.column else values


# -------------------------------------------------------------------- where a row's value is

def cell_place(path: Path | str, stream: BinaryIO, column: str, row: int
               ) -> tuple[int, int] | None:
    """Line and column of data row ``row`` (0-based) of ``column`` (a CSV column, a JSON
    Lines field) in the text ``stream`` holds, read again for a message about that value;
    None when the text has no such row."""
    if Path(path).suffix.lower() == ".jsonl":
        count = 0
        for number, text in text_lines(path, stream, MAX_JSON_LINE_BYTES):
            if not text.strip():
                continue
            if count == row:
                at = text.find(json.dumps(column))
                if at < 0:
                    return number, 1
                value = text.find(":", at + len(json.dumps(column))) + 1
                while value < len(text) and text[value] in " \t":
                    value += 1
                return number, value + 1
            count += 1
        return None
    records = csv_records(path, stream)
    first = next(records, None)
    if first is None:
        return None
    header = [name.strip() for name in first[2]]
    if column not in header:
        return None
    for count, (number, text, _) in enumerate(records):
        if count == row:
            return _field_place(text, header.index(column), number)
    return None
