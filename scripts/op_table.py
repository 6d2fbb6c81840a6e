"""Bring the op lists of the docs in line with the op registry: docs/spec.md's op table (a
row for every built-in op that is not a layer: new ones get their inputs and attributes from
the op's declaration and "what it does" from the first sentence of its docstring; no row for
an op that is gone; rows that exist keep their hand-written text) and README.md's
"Exportable ops:" line (the ONNX mapping's two tables). ``tests/docs/test_spec_docs.py`` and
``tests/onnx/test_export_specs.py`` check them. Run from anywhere: python scripts/op_table.py"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import graphcore  # noqa: E402
from graphcore.attributes import Attr  # noqa: E402
from graphcore.spec import LAYERS  # noqa: E402

PAGE = ROOT / "docs" / "spec.md"
README = ROOT / "README.md"
HEADER = "| op | inputs | attributes | what it does |"


def _type_text(attr: Attr) -> str:
    if object in attr.types:
        words = ["any"]
    else:
        words = []
        for t in attr.types:
            if t is type(None):
                continue
            word = {int: "int", float: "number", bool: "bool", str: "text", tuple: "list",
                    list: "list"}.get(t, "any")
            if word not in words:
                words.append(word)
    if "int" in words and "number" in words:
        words.remove("int")
    if attr.low is not None and attr.high is not None:
        words[0] += f" in [{attr.low:g}, {attr.high:g}]"
    elif attr.low is not None:
        words[0] += f" ≥ {attr.low:g}"
    if attr.choices:
        words = ["text, " + " or ".join("`null`" if c is None else f"`{c}`"
                                        for c in attr.choices)]
    if (type(None) in attr.types or not attr.required and attr.default is None) \
            and "null" not in words:
        words.append("null")
    text = " or ".join(words)
    if attr.required:
        return f"{text}, required"
    default = {True: "true", False: "false", None: "null"}.get(attr.default, attr.default) \
        if isinstance(attr.default, bool | type(None)) else attr.default
    return f"{text} = `{default}`"


def _declared(op: type) -> tuple[str, str]:
    """The inputs and attributes cells of ``op``'s declaration."""
    attributes = "<br>".join(f"`{key}`: {_type_text(attr)} — {attr.doc}"
                             for key, attr in op.attributes.items()) or "—"
    inputs = "any" if op.arity is None else str(op.arity)
    return inputs, attributes.replace("|", "\\|")


def _row(name: str, op: type, old: str | None) -> str:
    """``old`` (the row as written) where it agrees with the declaration; else a row from the
    declaration, keeping the old "what it does"."""
    inputs, attributes = _declared(op)
    if old is not None:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", old)[1:-1]]
        names = re.findall(r"(?:^|<br>)`(\w+)`: ", cells[2])
        if cells[1] == inputs and names == list(op.attributes):
            return old
        return f"| `{name}` | {inputs} | {attributes} | {cells[3]} |"
    doc = " ".join((op.__doc__ or "").split())
    what = (re.split(r"(?<=\.)\s", doc, maxsplit=1)[0] or "—").replace("``", "`")
    return f"| `{name}` | {inputs} | {attributes} | {what.replace('|', chr(92) + '|')} |"


def main() -> None:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(HEADER)
    lines = text[start:].splitlines()
    body_end = 2
    while body_end < len(lines) and lines[body_end].startswith("|"):
        body_end += 1
    rows = {re.match(r"\| `([^`]+)`", line).group(1): line for line in lines[2:body_end]}
    ops = {name: op for name, op in graphcore.all_ops().items()
           if op.__module__.startswith("graphcore.") and name not in LAYERS}
    added = sorted(set(ops) - set(rows))
    removed = sorted(set(rows) - set(ops))
    table = [_row(name, ops[name], rows.get(name)) for name in sorted(ops)]
    new = "\n".join(lines[:2] + table + lines[body_end:])
    PAGE.write_text(text[:start] + new + ("\n" if text.endswith("\n") else ""),
                    encoding="utf-8")
    print(f"wrote {PAGE}: {len(added)} row(s) added ({', '.join(added) or 'none'}), "
          f"{len(removed)} removed ({', '.join(removed) or 'none'})")


def readme() -> None:
    from graphcore.onnx import CONVERTERS, NOT_EXPORTABLE  # the onnx extra

    line = (f"Exportable ops: {', '.join(f'`{n}`' for n in sorted(CONVERTERS))}; not "
            f"exportable, each with its reason in `graphcore/onnx/mapping/`: "
            f"{', '.join(f'`{n}`' for n in sorted(NOT_EXPORTABLE))}.")
    lines = README.read_text(encoding="utf-8").split("\n")
    at = next(i for i, text in enumerate(lines) if text.startswith("Exportable ops: "))
    lines[at] = line
    README.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {README}: the exportable-ops line")


if __name__ == "__main__":
    main()
    readme()
