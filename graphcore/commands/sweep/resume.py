"""``--resume``: an earlier ``sweep.json`` read back, every row checked, and the rows of this
sweep's points kept.

The file is the sweep's own artifact, but it may have been edited, truncated or replaced, so it
is read as untrusted input: refused from its size before it is read (``MAX_BYTES``), and from
a count of its objects and arrays before it is parsed (``MAX_CONTAINERS``), so that neither
its size nor its shape can take the memory; then every row is checked field by field. Every
problem becomes a ``SpecError`` at ``sweep.json:LINE:COL`` naming the row (all of them at once,
as ``SpecErrors``: exit 65); a path that is not a regular file is a ``SweepInputError``
(exit 66).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from graphcore.commands.sweep.grid import MAX_POINTS
from graphcore.commands.sweep.records import SCHEMA_VERSION
from graphcore.commands.sweep.tasks import (
    SweepInputError,
    SweepReadError,
    SweepTask,
    open_regular_file,
)
from graphcore.errors import SpecError, SpecErrors, clip

# A sweep writes a row of about 1 KB per point (2 KB with a long error message) for at most
# MAX_POINTS points: 64 MiB is three times the largest sweep.json a sweep writes.
MAX_BYTES = 64 * 2**20
# Each row is three objects (the row, its settings, its figures); the allowance covers
# brackets inside error messages. Counted from the text's "{" and "[", which bounds what
# parsing allocates for containers (a 64 MiB file of "[]," would otherwise be 21M lists).
MAX_CONTAINERS = 64 * MAX_POINTS
STATUSES = ("ok", "failed")
_NULL = type(None)
# field -> the JSON types it takes (int excludes bool, which JSON keeps apart)
FIELDS: dict[str, tuple[type, ...]] = {
    "key": (str,), "index": (int,), "command": (str,), "settings": (dict,),
    "figures": (dict,), "status": (str,), "error": (str, _NULL), "exit_code": (int,),
    "exit_class": (str, _NULL), "started": (int, float, _NULL),
    "seconds": (int, float, _NULL), "worker": (str, _NULL)}
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_KINDS = {str: "a string", int: "an integer", float: "a number", dict: "an object",
          list: "an array", bool: "true or false", _NULL: "null"}


def read_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of the ``sweep.json`` at ``path``, each checked (no file: none)."""
    loaded = _load(Path(path))
    return [] if loaded is None else loaded[1]


def resume(path: str | os.PathLike[str],
           tasks: Sequence[SweepTask]) -> dict[str, dict[str, Any]]:
    """The rows of the ``sweep.json`` at ``path`` (checked as ``read_rows`` checks them) that
    ran one of ``tasks``' points and finished ok, by key, each with the task's ``index`` (its
    place in this sweep's grid). A row whose command or settings are not those of the point
    its key names was edited: an error at that row."""
    loaded = _load(Path(path))
    if loaded is None:
        return {}
    text, rows = loaded
    by_key = {t.key: t for t in tasks}
    kept, problems = {}, []
    for number, row in enumerate(rows):
        task = by_key.get(row["key"])
        if task is None or row["status"] != "ok":
            continue
        if row["command"] != task.command or row["settings"] != task.settings:
            problems.append((number, f"its command and settings ({row['command']} "
                                     f"{_settings(row['settings'])}) are not those of the "
                                     f"point its key {row['key']!r} names ({task.command} "
                                     f"{_settings(task.settings)})"))
            continue
        kept[row["key"]] = {**row, "index": task.index}
    if problems:
        raise _row_errors(str(path), text, problems)
    return kept


def _load(path: Path) -> tuple[str, list[dict[str, Any]]] | None:
    text = _read_text(path)
    if text is None:
        return None
    name = str(path)
    document = _parse(text, name)
    start = _skip(text, 0)
    if not isinstance(document, dict):
        raise SpecErrors([_at(name, text, start, "sweep.json must hold a JSON object, not "
                                                 f"{_kind(document)}")])
    if "schema_version" not in document:
        raise SpecErrors([_at(name, text, start, "sweep.json has no schema_version")])
    if document["schema_version"] != SCHEMA_VERSION:
        raise SpecErrors([_at(name, text, start, "sweep.json has schema_version "
                                                 f"{_kind(document['schema_version'])}; this "
                                                 f"graphtool reads {SCHEMA_VERSION}")])
    rows = document.get("rows")
    if not isinstance(rows, list):
        raise SpecErrors([_at(name, text, start, "sweep.json has no 'rows' array"
                              if rows is None else
                              f"sweep.json's 'rows' must be an array, not {_kind(rows)}")])
    if len(rows) > MAX_POINTS:
        raise SpecErrors([_at(name, text, start, f"sweep.json holds {len(rows):,} rows, more "
                                                 f"than the {MAX_POINTS:,} points a sweep "
                                                 "runs")])
    problems: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(rows):
        problems += [(number, message) for message in row_problems(row)]
        if isinstance(row, dict) and isinstance(row.get("key"), str):
            if row["key"] in seen:
                problems.append((number, f"its key {_shown(row['key'])} is that of row "
                                         f"{seen[row['key']]} too"))
            seen.setdefault(row["key"], number)
    if problems:
        raise _row_errors(name, text, problems)
    return text, rows


def _row_errors(name: str, text: str, problems: Sequence[tuple[int, str]]) -> SpecErrors:
    """``(row number, message)`` problems as errors at each row's first character."""
    offsets = _row_offsets(text)
    return SpecErrors([_at(name, text, offsets[number] if number < len(offsets) else 0,
                           f"row {number}: {message}") for number, message in problems])


def row_problems(row: Any) -> list[str]:
    """What is wrong with one row of sweep.json (nothing: an empty list)."""
    if not isinstance(row, dict):
        return [f"a row must be an object, not {_kind(row)}"]
    problems = []
    missing = [f"'{field}'" for field in FIELDS if field not in row]
    if missing:
        problems.append(f"{missing[0]} is missing" if len(missing) == 1 else
                        f"{', '.join(missing[:-1])} and {missing[-1]} are missing")
    for field, kinds in FIELDS.items():
        if field in row and not _is(row[field], kinds):
            problems.append(f"'{field}' must be {' or '.join(_KINDS[k] for k in kinds)}, "
                            f"not {_kind(row[field])}")
    if isinstance(row.get("status"), str) and row["status"] not in STATUSES:
        problems.append(f"'status' must be \"ok\" or \"failed\", not {_shown(row['status'])}")
    if _is(row.get("index"), (int,)) and row["index"] < 0:
        problems.append(f"'index' must be 0 or more, not {row['index']}")
    for field in ("started", "seconds"):
        value = row.get(field)
        if _is(value, (int, float)) and not (math.isfinite(value) and value >= 0):
            problems.append(f"'{field}' must be a time of 0 or more, not {value}")
    if isinstance(row.get("settings"), dict):
        for key, value in row["settings"].items():
            if not isinstance(value, str):
                problems.append(f"setting {_shown(key)} must be a string, not {_kind(value)}")
    if isinstance(row.get("figures"), dict):
        for key, value in row["figures"].items():
            if value is not None and not _is_figure(value):
                problems.append(f"figure {_shown(key)} must be a finite number or null, "
                                f"not {_kind(value)}")
    return problems


def _read_text(path: Path) -> str | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise SweepInputError(f"{path}: cannot read it: {err.strerror or err}") from None
    if stat.S_ISDIR(info.st_mode):
        raise SweepInputError(f"{path} is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise SweepInputError(f"{path} is not a regular file")
    if info.st_size > MAX_BYTES:
        raise SpecErrors([SpecError(f"sweep.json is {info.st_size / 2**20:.1f} MiB, over the "
                                    f"limit of {MAX_BYTES // 2**20} MiB (a sweep of "
                                    f"{MAX_POINTS:,} points writes about 20 MiB)",
                                    str(path), 1, 1)])
    with open_regular_file(path, "") as handle:  # swapped for a FIFO since: no hang
        try:
            data = handle.read(MAX_BYTES + 1)
        except OSError as err:
            raise SweepReadError(f"{path}: read failed: {err.strerror or err}") from None
    if len(data) > MAX_BYTES:
        raise SpecErrors([SpecError(f"sweep.json grew over the limit of "
                                    f"{MAX_BYTES // 2**20} MiB while it was read",
                                    str(path), 1, 1)])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise SpecErrors([SpecError(f"sweep.json is not UTF-8 text (byte "
                                    f"0x{data[err.start]:02x})", str(path), line, col)]) \
            from None


def _parse(text: str, name: str) -> Any:
    containers = text.count("{") + text.count("[")
    if containers > MAX_CONTAINERS:
        raise SpecErrors([SpecError(f"sweep.json holds {containers:,} objects and arrays, more "
                                    f"than a sweep of {MAX_POINTS:,} points writes "
                                    f"({MAX_CONTAINERS:,})", name, 1, 1)])

    def constant(word: str) -> Any:
        raise ValueError(f"{word} is not JSON (a figure that is not finite is written null)")

    try:
        return json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as err:
        raise SpecErrors([SpecError(f"sweep.json is not JSON: {err.msg}", name, err.lineno,
                                    err.colno)]) from None
    except RecursionError:
        raise SpecErrors([SpecError("sweep.json nests arrays or objects too deeply", name,
                                    1, 1)]) from None
    except ValueError as err:  # NaN/Infinity, an integer of over 4300 digits
        raise SpecErrors([SpecError(f"sweep.json is not JSON: {err}", name, 1, 1)]) from None


def _row_offsets(text: str) -> list[int]:
    """Where each element of the top-level object's last ``rows`` array starts (``text``
    is known to parse): a walk with the JSON scanner, one value at a time."""
    scan = json.JSONDecoder().scan_once
    index = _skip(text, 0)
    if text[index:index + 1] != "{":
        return []
    index = _skip(text, index + 1)
    offsets: list[int] = []
    while text[index:index + 1] == '"':
        key, index = scan(text, index)
        index = _skip(text, _skip(text, index) + 1)  # past ':'
        if key == "rows" and text[index:index + 1] == "[":
            offsets = []
            index = _skip(text, index + 1)
            while text[index:index + 1] not in ("]", ""):
                offsets.append(index)
                _, index = scan(text, index)
                index = _skip(text, index)
                if text[index:index + 1] == ",":
                    index = _skip(text, index + 1)
            index += 1
        else:
            _, index = scan(text, index)
        index = _skip(text, index)
        if text[index:index + 1] == ",":
            index = _skip(text, index + 1)
    return offsets


def _skip(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()


def _at(name: str, text: str, offset: int, message: str) -> SpecError:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    end = text.find("\n", offset)
    source = text[text.rfind("\n", 0, offset) + 1:end if end >= 0 else len(text)]
    return SpecError(message, name, line, col, source)


def _is(value: Any, kinds: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, kinds)


def _is_figure(value: Any) -> bool:
    """A number a row's figure can hold: finite and within a float's range (the table
    writes it with 6 significant digits)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"{json.dumps(value)}"
    if isinstance(value, str):
        return f"the string {_shown(value)}"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return f"the number {clip(str(value), 40)}"
    return _KINDS.get(type(value), type(value).__name__)


def _shown(text: str) -> str:
    return json.dumps(clip(text, 40))


def _settings(settings: Mapping[str, Any]) -> str:
    return clip(" ".join(f"{k}={v}" for k, v in settings.items()) or "(none)", 120)
