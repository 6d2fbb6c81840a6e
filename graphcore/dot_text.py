"""Text inside Graphviz DOT: the one place a label, a cluster title or any other attribute value
is written as a quoted DOT string (``quote``, ``attribute_list``) and read back (``unquote``).

Every drawing this project writes (``computational_graph``, the spec drawing's clusters, the
static IR, ``viz --diff``) quotes through here, so text from anywhere (a plugin op's label, a
spec file's path in a loop's cluster, a run's name in a legend) reaches the renderer as the
characters it holds:

- ``\\`` and ``"`` are escaped (an unescaped one ends the string early, a trailing backslash
  swallows the closing quote);
- a newline becomes DOT's ``\\n`` line break (multi-line labels are written with ``\\n``);
- in the label of a record-shaped node (Chainer's function nodes) ``{ } | < >`` are escaped:
  Graphviz reads them there as field syntax, and an unbalanced one makes it reject the file;
- other control characters (a NUL makes the renderer reject the file, the rest would land in
  the SVG, where XML forbids them) and lone surrogates (no UTF-8 encoding) become U+FFFD.

Ordinary text (``LinearFunction``, ``(3, 5), float32``) is written unchanged, so the executed
graph's DOT stays byte-identical to what Chainer writes for the same graph.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

RECORD_SHAPES = frozenset({"record", "Mrecord"})
RECORD_SPECIALS = "{}|<>"
REPLACEMENT = "\ufffd"

_PLAIN = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n"})
_RECORD = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n",
                         **{c: "\\" + c for c in RECORD_SPECIALS}})
_UNWRITABLE = re.compile("[\x00-\x09\x0b-\x1f\x7f\ud800-\udfff]")
_ESCAPE = re.compile(r"\\(.)", re.S)
_UNESCAPED = {"n": "\n", **{c: c for c in '\\"' + RECORD_SPECIALS}}


def quote(text: str, *, record: bool = False) -> str:
    """``text`` as a quoted DOT string that draws exactly ``text`` (``record``: the label of a
    record-shaped node)."""
    text = _UNWRITABLE.sub(REPLACEMENT, text)
    return '"' + text.translate(_RECORD if record else _PLAIN) + '"'


def unquote(token: str) -> str:
    """The text of a DOT string ``quote`` wrote (a bare ID is its own text). An escape
    ``quote`` never writes (``\\l``, ``\\N``) is kept as written."""
    if not token.startswith('"'):
        return token
    return _ESCAPE.sub(lambda m: _UNESCAPED.get(m.group(1), m.group(0)), token[1:-1])


def attribute_list(attributes: Mapping[str, object]) -> str:
    """``label="Sum",shape="record"``: each value quoted, a record node's label as a record
    label."""
    record = str(attributes.get("shape", "")) in RECORD_SHAPES
    return ",".join(f"{key}={quote(str(value), record=record and key == 'label')}"
                    for key, value in attributes.items())
