"""The artifacts ``graphtool report`` shows, checked before the page is made from them.

``parse_run_json``, ``parse_bench_json``, ``parse_ir_text`` and ``parse_train_csv`` take a file's
bytes and its name and return what ``report_html.render_report`` shows: the fields the page
reads, of the types it draws them as (a number is an ``int`` or a finite ``float``, text is a
``str``); anything else in the file is kept as read. A file that is not what its writer writes
(not UTF-8, not JSON, a field of the wrong type, a CSV row of another width) raises
``SpecErrors`` with every problem at once, each at its line and column in the file (a JSON
value is located where it starts). ``MAX_ARTIFACT_BYTES`` bounds what is read at all; JSON
nests at most ``MAX_JSON_DEPTH`` deep. Nothing here opens a file.
"""

from __future__ import annotations

import csv
import io
import json
import json.decoder
import json.scanner
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphcore.errors import SpecError, SpecErrors

MAX_ARTIFACT_BYTES = 64 * 2**20  # the artifacts are KBs; the page holds the IR text whole
MAX_JSON_DEPTH = 64
MAX_ERRORS = 20  # a file of another shape: the first problems say enough

Path = tuple[str | int, ...]  # keys and indexes from the document's root


# --- JSON with the place of every value -------------------------------------------------------
class _NotJSON(ValueError):
    pass


class _JSONProblem(Exception):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message, self.offset = message, offset


@dataclass
class JSONDocument:
    """A parsed JSON text and where each value in it starts."""

    value: Any
    file: str
    text: str
    starts: dict[int, dict[str | int, int]]  # id(object or array) -> key or index -> offset

    def error(self, path: Path, message: str) -> SpecError:
        """``message`` about the value at ``path``, located where that value starts."""
        offset, container = _first_value(self.text), self.value
        for key in path:
            offset = self.starts[id(container)][key]
            container = container[key]
        where = _path_text(path)
        return _error_at(self.text, self.file, offset, f"{where}: {message}" if where else message)


def parse_json(data: bytes, file: str) -> JSONDocument:
    """``data`` as JSON (UTF-8; no NaN or Infinity, no duplicate-free guarantee: the last of a
    repeated key counts, as for ``json.loads``); ``SpecErrors`` at the first problem."""
    text = decode_utf8(data, file)
    starts: dict[int, dict[str | int, int]] = {}
    open_levels: list[list[int]] = []

    def scan(string: str, index: int) -> tuple[Any, int]:
        if open_levels:
            open_levels[-1].append(index)
        try:
            return scan_value(string, index)
        except _NotJSON as e:
            raise _JSONProblem(str(e), index) from None
        except ValueError as e:
            if isinstance(e, json.JSONDecodeError):
                raise
            # int() refuses a number of over 4,300 digits (Python's limit)
            raise _JSONProblem("a number too long to read", index) from None

    def parse_object(s_and_end, strict, _scan_once, _hook, _pairs_hook, memo):
        pairs, end = _nested(s_and_end[1], lambda: json.decoder.JSONObject(
            s_and_end, strict, scan, None, lambda found: found, memo))
        value: dict[str, Any] = {}
        where: dict[str | int, int] = {}
        for (key, item), start in zip(pairs, open_levels.pop(), strict=True):
            value[key] = item
            where[key] = start  # a repeated key: the last one, as its value
        starts[id(value)] = where
        return value, end

    def parse_array(s_and_end, _scan_once):
        items, end = _nested(s_and_end[1], lambda: json.decoder.JSONArray(s_and_end, scan))
        starts[id(items)] = dict(enumerate(open_levels.pop()))
        return items, end

    def _nested(offset: int, parse: Callable[[], tuple[Any, int]]) -> tuple[Any, int]:
        if len(open_levels) >= MAX_JSON_DEPTH:
            raise _JSONProblem(f"nested over {MAX_JSON_DEPTH} levels deep", offset - 1)
        open_levels.append([])
        try:
            return parse()
        except BaseException:
            open_levels.pop()
            raise

    def refuse_constant(name: str) -> None:
        raise _NotJSON(f"not JSON: {name} (JSON numbers are finite)")

    context = json.JSONDecoder(parse_constant=refuse_constant)
    context.parse_object, context.parse_array = parse_object, parse_array
    scan_value = json.scanner.py_make_scanner(context)
    start = _first_value(text)
    try:
        try:
            value, end = scan(text, start)
        except StopIteration:
            raise _JSONProblem("not JSON: expecting a value", start) from None
        except json.JSONDecodeError as e:
            raise _JSONProblem(f"not JSON: {e.msg}", e.pos) from None
        end = _first_value(text, end)
        if end != len(text):
            raise _JSONProblem("not JSON: more after the value", end)
    except _JSONProblem as e:
        raise SpecErrors([_error_at(text, file, e.offset, e.message)]) from None
    return JSONDocument(value, file, text, starts)


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _first_value(text: str, offset: int = 0) -> int:
    return _WHITESPACE.match(text, offset).end()


def _path_text(path: Path) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


def _error_at(text: str, file: str, offset: int, message: str) -> SpecError:
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    source = text[line_start:line_end if line_end >= 0 else len(text)]
    return SpecError(message, file, line, offset - line_start + 1, source)


def decode_utf8(data: bytes, file: str) -> str:
    """``data`` as UTF-8 text; ``SpecErrors`` at the first byte that is not."""
    if len(data) > MAX_ARTIFACT_BYTES:
        raise SpecErrors([SpecError(f"too large to show: {len(data):,} bytes, over the limit "
                                    f"of {MAX_ARTIFACT_BYTES:,}", file, 1, 1)])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[:e.start].decode("utf-8")
        line = before.count("\n") + 1
        col = len(before) - before.rfind("\n")
        raise SpecErrors([SpecError(f"not UTF-8 text: byte 0x{data[e.start]:02x}", file, line,
                                    col)]) from None


# --- the fields the page reads ----------------------------------------------------------------
@dataclass(frozen=True)
class Leaf:
    """A value of one kind: ``what`` names it in messages, ``ok`` tells it."""

    what: str
    ok: Callable[[Any], bool]


@dataclass(frozen=True)
class Required:
    """A key that must be there (the others may be left out; none may be ``null``)."""

    schema: Any


def is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """An ``int`` or a finite ``float`` (not a boolean)."""
    return is_integer(value) or (isinstance(value, float) and math.isfinite(value))


TEXT = Leaf("a string", lambda v: isinstance(v, str))
COUNT = Leaf("an integer >= 0", lambda v: is_integer(v) and v >= 0)
INTEGER = Leaf("an integer", is_integer)  # a pass that adds nodes (a fusion's casts) removes < 0
BATCH = Leaf("an integer >= 1", lambda v: is_integer(v) and v >= 1)
MILLISECONDS = Leaf("a finite number >= 0", lambda v: is_number(v) and v >= 0)

# What the page reads of each document: an object's keys (a dict), an array's items (a list of
# one schema), a leaf. Anything else in the documents is kept as read and shown only as text.
RUN_SCHEMA = {
    "path": [{"at": TEXT, "kind": TEXT}],
    "static": {"passes": [{"name": TEXT, "nodes_removed": INTEGER, "bytes_saved": INTEGER,
                           "notes": [TEXT]}],
               "nodes": {"traced": COUNT, "optimized": COUNT}},
}
BENCH_SCHEMA = {
    "results": [{"mode": Required(TEXT), "batch": Required(BATCH),
                 "median_ms": Required(MILLISECONDS)}],
}


def check_schema(document: JSONDocument, schema: Any) -> None:
    """``SpecErrors`` with every place where ``document`` is not what ``schema`` says."""
    errors: list[SpecError] = []

    def check(value: Any, schema: Any, path: Path) -> None:
        if isinstance(schema, dict):
            if not isinstance(value, dict):
                errors.append(document.error(path, f"expected an object, got {_kind(value)}"))
                return
            for key, inner in schema.items():
                required = isinstance(inner, Required)
                inner = inner.schema if required else inner
                if key in value:
                    check(value[key], inner, (*path, key))
                elif required:
                    errors.append(document.error(path, f"missing {key!r}"))
        elif isinstance(schema, list):
            if not isinstance(value, list):
                errors.append(document.error(path, f"expected an array, got {_kind(value)}"))
                return
            for index, item in enumerate(value):
                check(item, schema[0], (*path, index))
        elif not schema.ok(value):
            shown = f" {_shown(value)}" if isinstance(value, str | int | float) else ""
            errors.append(document.error(path, f"expected {schema.what}, got {_kind(value)}"
                                         + shown))

    check(document.value, schema, ())
    if errors:
        raise SpecErrors(errors[:MAX_ERRORS])


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def parse_run_json(data: bytes, file: str) -> dict[str, Any]:
    """``run.json``: an object whose ``path`` is an array of objects (``at``, ``kind``: strings)
    and whose ``static`` section (when there is one) has ``passes`` (``name``, ``notes``:
    text; ``nodes_removed``, ``bytes_saved``: integers, negative where a pass added) and
    ``nodes`` (``traced``, ``optimized``: integers >= 0)."""
    document = parse_json(data, file)
    check_schema(document, RUN_SCHEMA)
    return document.value


def parse_bench_json(data: bytes, file: str) -> dict[str, Any]:
    """``bench.json``: an object whose ``results`` are objects with ``mode`` (a string),
    ``batch`` (an integer >= 1) and ``median_ms`` (a finite number >= 0)."""
    document = parse_json(data, file)
    check_schema(document, BENCH_SCHEMA)
    return document.value


def parse_ir_text(data: bytes, file: str) -> str:
    """``ir.txt`` / ``ir.optimized.txt``: UTF-8 text."""
    return decode_utf8(data, file)


def parse_train_csv(data: bytes, file: str) -> dict[str, list[float]]:
    """``train.csv``'s numeric columns, by name in the header's order: those whose every cell
    is a number (``nan`` and ``inf`` included; the chart skips them). Text columns are left
    out (new columns are welcome); every row must have the header's width."""
    text = decode_utf8(data, file)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    errors: list[SpecError] = []
    columns: dict[str, list[float] | None] = {}
    try:
        names = next(reader, None)
        if names is None:
            return {}
        for k, name in enumerate(names):
            if name in names[:k]:
                errors.append(_row_error(text, file, 1, f"column {name!r} is in the header twice"))
            columns[name] = []
        for row in reader:
            if len(row) != len(names):
                cells = f"{len(row)} cell{'s' * (len(row) != 1)}"
                errors.append(_row_error(text, file, reader.line_num,
                                         f"{cells} where the header has {len(names)}"))
                if len(errors) >= MAX_ERRORS:
                    break
                continue
            for name, cell in zip(names, row, strict=True):
                values = columns[name]
                if values is not None:
                    number = _csv_number(cell)
                    if number is None:
                        columns[name] = None  # a text column: not drawn
                    else:
                        values.append(number)
    except csv.Error as e:
        errors.append(_row_error(text, file, max(reader.line_num, 1), f"not CSV: {e}"))
    if errors:
        raise SpecErrors(errors)
    return {name: values for name, values in columns.items() if name and values is not None}


def _row_error(text: str, file: str, line: int, message: str) -> SpecError:
    """``message`` at the start of line ``line`` (1-based) of ``text``."""
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return SpecError(message, file, line, 1)
    end = text.find("\n", start)
    source = text[start:end if end >= 0 else len(text)]
    return SpecError(message, file, line, 1, source.rstrip("\r"))


def _csv_number(cell: str) -> float | None:
    if len(cell) > 64:  # no number is written longer; float() of a long one is slow
        return None
    try:
        return float(cell)
    except ValueError:
        return None
