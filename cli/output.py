"""Where output goes: data on stdout, messages and progress on stderr.

Human output is Rich, with colour and box drawing only on a terminal (and no colour under
``NO_COLOR``); ``--json`` prints exactly one JSON document with sorted keys. Rich markup is off
in every console: what is printed (op docs, spec names, paths, messages) is text, and text
like ``[x_min, x_max]`` must reach the reader as written.
"""

from __future__ import annotations

import io
import json
import math
import sys
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table


def stdout_console() -> Console:
    return _console(sys.stdout)


def stderr_console() -> Console:
    return _console(sys.stderr)


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # Rich would exit(1) here; let the one error handler end quietly with its pipe code.
        raise BrokenPipeError


def _console(file) -> Console:
    console = _Console(file=file, highlight=False, soft_wrap=True, markup=False)
    if not console.is_terminal:  # a pipe or a file: never wrap tables to 80 columns
        console = _Console(file=file, highlight=False, soft_wrap=True, markup=False,
                           width=1000)
    return console


def text_console() -> Console:
    """A console that renders into a string (``.file.getvalue()``) as ``show`` prints off a
    terminal: no colour, no markup, and a width no terminal setting changes."""
    return Console(file=io.StringIO(), width=1000, highlight=False, markup=False,
                   color_system=None, force_terminal=False, soft_wrap=True)


def table(*columns: str, title: str | None = None, console: Console | None = None) -> Table:
    """A table that draws boxes on a terminal and plain aligned columns elsewhere."""
    console = console or stdout_console()
    t = Table(*columns, title=title, box=box.SIMPLE_HEAD if console.is_terminal else None,
              show_edge=False, pad_edge=False, title_justify="left")
    return t


def emit_json(document: dict[str, Any]) -> None:
    """Print one JSON document (sorted keys) and a newline to stdout."""
    sys.stdout.write(to_json(document))
    sys.stdout.flush()


def to_json(document: dict[str, Any]) -> str:
    """``document`` as RFC 8259 JSON, whatever its numbers: NaN and Inf, which JSON lacks, are
    written ``null``, and a top-level ``nonfinite`` list says where and what each was:
    ``{"path": ["grads", "l1/W"], "value": "inf"}`` (``"nan"``, ``"inf"`` or ``"-inf"``)."""
    nonfinite: list[dict[str, Any]] = []
    clean = _finite(document, [], nonfinite)
    if nonfinite:
        clean["nonfinite"] = nonfinite
    return json.dumps(clean, sort_keys=True, indent=2, allow_nan=False) + "\n"


def _finite(value: Any, path: list[Any], nonfinite: list[dict[str, Any]]) -> Any:
    """A copy of ``value`` with plain JSON types only and NaN/Inf replaced by None."""
    if isinstance(value, dict):  # in sorted order, so the list follows the printed document
        return {str(k): _finite(value[k], [*path, str(k)], nonfinite)
                for k in sorted(value, key=str)}
    if isinstance(value, list | tuple):
        return [_finite(v, [*path, i], nonfinite) for i, v in enumerate(value)]
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        nonfinite.append({"path": path, "value": str(value)})
        return None
    return _finite(_plain(value), path, nonfinite)


def note(message: str, quiet: bool = False) -> None:
    """A message for people, on stderr."""
    if not quiet:
        print(message, file=sys.stderr, flush=True)


def wrote(paths: list[str], quiet: bool = False) -> None:
    for path in paths:
        note(f"wrote {path}", quiet)


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def show(console: Console, renderable: Any) -> None:
    """Print ``renderable``; off a terminal, without the trailing spaces Rich pads with."""
    if console.is_terminal:
        console.print(renderable)
        return
    with console.capture() as captured:
        console.print(renderable)
    text = "\n".join(line.rstrip() for line in captured.get().splitlines())
    console.file.write(text + "\n")


def show_columns(console: Console, headers: list[str], rows: list[list[str]], keep: int = 1,
                 title: str | None = None) -> None:
    """A table of text cells that never cuts one: on a terminal narrower than the table, its
    columns are split over several tables, each repeating the first ``keep`` columns (the
    row's key, such as the epoch), the title above the first; a cell wider than the terminal
    folds onto the next line."""

    def build(columns: list[int], title: str | None = title) -> Table:
        t = table(*(headers[i] for i in columns), title=title, console=console)
        for column in t.columns:
            column.overflow = "fold"
        for row in rows:
            t.add_row(*(row[i] for i in columns))
        return t

    def width(t: Table) -> int:
        return console.measure(t, options=console.options.update_width(10_000)).maximum

    whole = build(list(range(len(headers))))
    if not console.is_terminal or width(whole) <= console.width:
        show(console, whole)
        return
    groups, current = [], list(range(keep))
    for i in range(keep, len(headers)):
        if len(current) > keep and width(build([*current, i])) > console.width:
            groups.append(current)
            current = list(range(keep))
        current.append(i)
    groups.append(current)
    for k, columns in enumerate(groups):
        show(console, build(columns, title if k == 0 else None))


def pad_warning(reason: str, spec: str | None = None) -> str:
    """The one line saying ``--batching pad`` could not pad, and why (``reason`` may start
    with "one example at a time: " where nothing batched); ``spec`` names the spec."""
    what = "" if reason.startswith("one example at a time") else \
        "examples are grouped by shape instead: "
    where = "" if spec is None else f"{spec}: "
    return f"warning: {where}--batching pad: the sequences are not padded, {what}{reason}"
