"""Located values: what a spec's YAML becomes — mappings, lists and scalars that remember
the file, line and column they came from, so every error can point into the source."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from graphcore.errors import SpecError

# YAML 1.1's line breaks, the ones PyYAML counts in its marks (str.splitlines knows more).
LINE_BREAK = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")


class SourceText:
    """A spec's file name and lines, so any location can show the line it points into."""

    def __init__(self, text: str, file: str = "<spec>") -> None:
        self.file = file
        self.lines = LINE_BREAK.split(text)

    def line(self, number: int) -> str | None:
        """The text of 1-based line ``number``, without its line break; None past the end."""
        return self.lines[number - 1] if 1 <= number <= len(self.lines) else None

    def loc(self, line: int, col: int, length: int = 1) -> Loc:
        return Loc(self.file, line, col, max(length, 1), self)

    def error(self, line: int, col: int, message: str, length: int = 1,
              hint: str | None = None) -> SpecError:
        return error_at(self.loc(line, col, length), message, hint)


@dataclass(frozen=True)
class Loc:
    """Where a value starts: 1-based ``line`` and ``col``, ``length`` characters on that line."""

    file: str
    line: int
    col: int
    length: int = 1
    source: SourceText | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def error(self, message: str, hint: str | None = None) -> SpecError:
        return error_at(self, message, hint)


def error_at(loc: Loc, message: str, hint: str | None = None) -> SpecError:
    """A SpecError at ``loc``, with the source line filled in when the loc knows its source."""
    source_line = loc.source.line(loc.line) if loc.source is not None else None
    return SpecError(message, loc.file, loc.line, loc.col, source_line, loc.length, hint)


@dataclass(eq=False)
class LScalar:
    """A scalar: its resolved ``value`` (int, float, bool, None or str), the ``raw`` source text
    (quotes and all), ``style`` ("plain", "quoted" or "block"), ``loc``, and ``trap``: a hint
    when YAML 1.1 reads this plain scalar differently than people expect, else None."""

    value: int | float | bool | str | None
    raw: str
    style: str
    loc: Loc
    trap: str | None = None

    def to_python(self) -> int | float | bool | str | None:
        return self.value


@dataclass(eq=False)
class LSeq:
    """A sequence of located values, in file order."""

    items: list[Located]
    loc: Loc

    def __iter__(self) -> Iterator[Located]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> Located:
        return self.items[index]

    def to_python(self) -> list:
        return [item.to_python() for item in self.items]


class LMap(Mapping):
    """A mapping from string keys to located values, in file order; remembers each key's loc.

    ``get(key)`` returns the located value (or None); ``key_loc(key)`` where the key is written;
    ``spec[key].loc`` where its value is; ``key_trap(key)`` the key's trap hint (``op:relu``).
    """

    def __init__(self, loc: Loc) -> None:
        self.loc = loc
        self._entries: dict[str, tuple[Loc, Located]] = {}
        self._key_traps: dict[str, str] = {}

    def add(self, key: str, key_loc: Loc, value: Located, key_trap: str | None = None) -> None:
        self._entries[key] = (key_loc, value)
        if key_trap is not None:
            self._key_traps[key] = key_trap

    def key_trap(self, key: str) -> str | None:
        """The trap hint of ``key`` as written (see ``LScalar.trap``), or None."""
        return self._key_traps.get(key)

    def __getitem__(self, key: str) -> Located:
        return self._entries[key][1]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"LMap({list(self._entries)!r} at {self.loc})"

    def key_loc(self, key: str) -> Loc:
        """Where ``key`` is written; KeyError if the mapping has no such key."""
        return self._entries[key][0]

    def to_python(self) -> dict:
        return {key: value.to_python() for key, (_, value) in self._entries.items()}


Located: TypeAlias = LMap | LSeq | LScalar


def describe(value: Located) -> str:
    """A short phrase for messages: 'a mapping', 'a list', 'the integer 3', 'the text 'abc''."""
    if isinstance(value, LMap):
        return "a mapping"
    if isinstance(value, LSeq):
        return "a list"
    scalar = value.value
    if scalar is None:
        return "null"
    if isinstance(scalar, bool):
        return f"the boolean {str(scalar).lower()}"
    if isinstance(scalar, int):
        return f"the integer {scalar}"
    if isinstance(scalar, float):
        return f"the number {scalar!r}"
    return f"the text {scalar!r}"


