"""PyYAML's syntax errors -> plain-language, located ``SpecError``s (the YAML reader's errors).

PyYAML reports what its parser expected (``expected <block end>, but found '?'``), at the point
where it gave up. A person wants to know which line is wrong and how to write it, so the common
mistakes are recognised from the error and the lines around it, and reported in those terms:

- a key at the column of a list's ``- `` (``then:`` under ``- if:``), or at a column no block
  above has: which line it should line up with;
- a key indented under a line that already has its value (read as the rest of that value);
- ``key:value`` without a space, ``-item`` without a space, a line that is neither a key nor
  an item;
- a ``[`` / ``{`` / quote that is never closed (reported at the bracket or quote), a bracket
  closed by the other kind, a missing ``,`` between flow entries;
- ``': '`` inside an unquoted value, text after a closing quote or bracket, a tab.

Anything else keeps PyYAML's words (token names made readable) with the indentation hint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from graphcore.errors import SpecError
from graphcore.language.located import LINE_BREAK, SourceText

_KEY = re.compile(r"([^\s#'\"{}\[\],&*!|>%@`-][^:#]*?|-[^\s:#][^:#]*?):(?:\s|$)")
_CLOSERS = {"[": "]", "{": "}"}
_CONTEXT_WORDS = [
    ("while parsing a block collection", "in the block that starts"),
    ("while parsing a block mapping", "in the mapping that starts"),
    ("while parsing a flow sequence", "in the [...] list that starts"),
    ("while parsing a flow mapping", "in the {...} mapping that starts"),
    ("while parsing a flow node", "in the value that starts"),
    ("while parsing a block node", "in the value that starts"),
    ("while scanning a simple key", "in the key that starts"),
    ("while scanning a quoted scalar", "in the quoted text that starts"),
    ("while scanning a plain scalar", "in the value that starts"),
]
_TOKEN_WORDS = [("'<stream end>'", "the end of the file"), ("<stream end>", "the end of the file"),
                ("'<block mapping start>'", "a new mapping"), ("<block end>", "the end of a block"),
                ("'<block sequence start>'", "a new list"), ("'?'", "a key"),
                ("'<scalar>'", "a value"), ("'<block end>'", "the end of a block")]
_SYNTAX_HINTS = [
    ("found character '\\t'", "indent with spaces; YAML does not allow tabs there"),
    ("cannot start any token", "quote a value that starts with this character"),
    ("mapping values are not allowed here", "quote a value that contains ': ', or check the "
                                            "indentation"),
    ("expected <block end>", "check the indentation of this line"),
    ("could not find expected ':'", "a key needs ': ' after it; or check the indentation"),
    ("unknown escape character", "in double quotes write \\\\ for a backslash, or use single "
                                 "quotes"),
]


# ---------------------------------------------------------------- the lines around an error

@dataclass(frozen=True)
class _Block:
    """A column that is open at some line: the keys of a mapping or the ``- `` of a list."""

    column: int  # 0-based: the number of spaces before it
    kind: str  # "key" or "item"
    line: int  # 1-based line where it is written
    label: str  # the key, or the item's text


def _spaces(count: int) -> str:
    return f"{count} space{'s' * (count != 1)}"


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _content(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith("#")


def _short(text: str, limit: int = 24) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _is_item(stripped: str) -> bool:
    return stripped == "-" or stripped.startswith("- ")


def _blocks_of(number: int, text: str) -> list[_Block]:
    """The columns line ``number`` opens: its ``- `` and the key after it, or its key."""
    column = _indent(text)
    rest = text[column:]
    blocks = []
    if _is_item(rest):
        blocks.append(_Block(column, "item", number, _short(rest)))
        after = rest[1:].lstrip(" ")
        column += len(rest) - len(after)
        rest = after
    key = _KEY.match(rest)
    if key is not None:
        blocks.append(_Block(column, "key", number, key.group(1).strip()))
    return blocks


def _open_blocks(source: SourceText, line: int) -> list[_Block]:
    """The blocks open just before ``line``: each earlier line less indented than every line
    between it and ``line`` (the chain of parents), nearest first, one per column."""
    found: dict[int, _Block] = {}
    limit = None
    for number in range(line - 1, 0, -1):
        text = source.line(number) or ""
        if not _content(text) or "\t" in text[:_indent(text) + 1]:
            continue
        column = _indent(text)
        if limit is not None and column >= limit:
            continue
        for block in _blocks_of(number, text):
            found.setdefault(block.column, block)
        limit = column
        if column == 0:
            break
    return list(found.values())


def _previous_content(source: SourceText, line: int) -> int | None:
    for number in range(line - 1, 0, -1):
        if _content(source.line(number) or ""):
            return number
    return None


def _nearest(blocks: list[_Block], column: int) -> _Block | None:
    """The block whose column is closest to ``column`` (the deeper one on a tie)."""
    return min(blocks, key=lambda b: (abs(b.column - column), -b.column), default=None)


# ---------------------------------------------------------------- the mistakes recognised

def _indentation(source: SourceText, mark: yaml.Mark) -> SpecError | None:
    """A line at a column that continues no open block (``expected <block end>`` and kin)."""
    number = mark.line + 1
    text = source.line(number) or ""
    column = _indent(text)
    if mark.column != column:
        return _after_a_value(source, mark)
    blocks = _open_blocks(source, number)
    stripped = text.strip()
    if _is_item(stripped):
        items = [b for b in blocks if b.kind == "item"]
        target = _nearest(items, column)
        if target is None or any(b.column == column for b in items):
            return None
        return source.error(number, column + 1,
                            f"invalid YAML: '{_short(stripped)}' is indented {_spaces(column)}, "
                            "which lines up with no list above it", len(stripped),
                            hint=f"indent it {_spaces(target.column)}, like "
                                 f"'{target.label}' on line {target.line}")
    key = _KEY.match(stripped)
    if key is None:
        return None
    label = key.group(1).strip()
    keys = [b for b in blocks if b.kind == "key"]
    item = next((b for b in blocks if b.kind == "item" and b.column == column), None)
    if item is not None and not any(b.column == column for b in keys):
        inside = [b for b in keys if b.column > column and b.line >= item.line]
        target = min(inside, key=lambda b: b.column, default=None)
        if target is None:
            return None
        return source.error(number, column + 1,
                            f"invalid YAML: '{label}:' lines up with the '- ' on line "
                            f"{item.line}, so it is outside that list item", len(label) + 1,
                            hint=f"indent it {_spaces(target.column)}, like '{target.label}:' "
                                 f"on line {target.line}")
    target = _nearest(keys, column)
    if target is None or target.column == column:
        return None
    return source.error(number, column + 1,
                        f"invalid YAML: '{label}:' is indented {_spaces(column)}, which lines up "
                        "with no key above it", len(label) + 1,
                        hint=f"indent it {_spaces(target.column)}, like '{target.label}:' on line "
                             f"{target.line}")


def _after_a_value(source: SourceText, mark: yaml.Mark) -> SpecError | None:
    """Something after a complete value on its line: text after a closing quote, an extra
    closing bracket, text after one."""
    number = mark.line + 1
    text = source.line(number) or ""
    before = text[:mark.column].rstrip()
    found = text[mark.column:mark.column + 1]
    if not before:
        return None
    if before[-1] in "'\"":
        value = text[_value_start(text):].rstrip()
        quote = "'" if '"' in value else '"'
        hint = ("put the whole value in quotes" if "'" in value and '"' in value else
                f"put the whole value in quotes: {quote}{value}{quote}")
        return source.error(number, mark.column + 1, "invalid YAML: text after the closing "
                            "quote (a quoted value ends at its quote)", hint=hint)
    if before[-1] in "]}":
        if found in "]}":
            return source.error(number, mark.column + 1, f"invalid YAML: an extra '{found}'",
                                hint="remove it, or check the brackets on this line")
        return source.error(number, mark.column + 1, f"invalid YAML: text after the closing "
                            f"'{before[-1]}'", hint="remove it, or move it inside the brackets")
    return None


def _value_start(text: str) -> int:
    """Where the value of the key on this line starts (after ``key: ``), else its indent."""
    column = _indent(text)
    rest = text[column:]
    if _is_item(rest):
        after = rest[1:].lstrip(" ")
        column += len(rest) - len(after)
        rest = after
    key = _KEY.match(rest)
    if key is None:
        return column
    value = rest[key.end():]
    return column + key.end() + len(value) - len(value.lstrip(" "))


def _colon_in_value(source: SourceText, mark: yaml.Mark) -> SpecError | None:
    """``mapping values are not allowed here``: a ``key:`` on a line that continues the plain
    value above it (indented too far, or after ``key:value`` without a space), or a second
    ``': '`` inside one unquoted value."""
    number = mark.line + 1
    text = source.line(number) or ""
    column = _indent(text)
    previous = _previous_content(source, number)
    here = _KEY.match(text[column:])
    if previous is not None and here is not None and mark.column == column + len(
            here.group(1)):
        above = source.line(previous) or ""
        label = here.group(1).strip()
        blocks = _blocks_of(previous, above)
        key = next((b for b in blocks if b.kind == "key"), None)
        item = next((b for b in blocks if b.kind == "item"), None)
        if key is not None and column > key.column:
            value = above[_value_start(above):].strip()
            return source.error(number, column + 1,
                                f"invalid YAML: '{label}:' is indented more than "
                                f"'{key.label}:' on line {previous}, so it reads as the rest "
                                f"of that line's value ('{_short(value)} {label}')",
                                len(label) + 1,
                                hint=f"indent it {_spaces(key.column)}, like '{key.label}:'")
        if key is None and item is not None and column > item.column:
            value = above[_value_start(above):].strip()
            glued = re.match(r"([A-Za-z_][A-Za-z0-9_]*):(\S.*)", value)
            if glued is not None:
                return source.error(previous, _value_start(above) + 1,
                                    f"invalid YAML: '{glued.group(1)}:' needs a space after "
                                    f"the ':', so '{_short(value)}' is one text and line "
                                    f"{number} is read as part of it", len(value),
                                    hint=f"write '{glued.group(1)}: {glued.group(2)}'")
            return source.error(number, column + 1,
                                f"invalid YAML: '{label}:' is indented more than the '- ' on "
                                f"line {previous}, so it reads as the rest of that item's "
                                f"value ('{_short(value)} {label}')", len(label) + 1,
                                hint=f"indent it {_spaces(item.column)}, like the '- ' on line "
                                     f"{previous}, or {item.column + 2} to put it inside it")
    start = _value_start(text)
    value = text[start:].split(" #")[0].rstrip()
    if start == column or ": " not in value + " " or mark.column < start:
        return None
    key_text = text[column:start].strip()
    if key_text.startswith("- "):
        key_text = key_text[2:].lstrip()
    quote = "'" if "'" not in value else '"' if '"' not in value else None
    hint = (f"quote the value: {key_text} {quote}{value}{quote}" if quote
            else "quote the value, or check the indentation")
    return source.error(number, mark.column + 1, "invalid YAML: ': ' inside an unquoted value",
                        hint=hint)


def _not_a_key(source: SourceText, err: yaml.MarkedYAMLError) -> SpecError | None:
    """``could not find expected ':'``: a line that is neither ``key: value`` nor ``- item``."""
    mark = err.context_mark
    if mark is None:
        return None
    number = mark.line + 1
    text = (source.line(number) or "")[mark.column:].split(" #")[0].rstrip()
    if not text:
        return None
    if re.match(r"-[^\s-]", text):
        return source.error(number, mark.column + 1, f"invalid YAML: '{_short(text)}' needs a "
                            "space after '-' to be a list item", len(text),
                            hint=f"write '- {text[1:]}'")
    item = next((b for b in _open_blocks(source, number)
                 if b.kind == "item" and b.column == mark.column), None)
    hint = (f"write '- {text}', like '{item.label}' on line {item.line}" if item is not None
            else "write 'name: value' for a key, '- value' for a list item, or check the "
                 "indentation")
    return source.error(number, mark.column + 1, f"invalid YAML: '{_short(text)}' is neither a "
                        "key ('name: value') nor a list item ('- value')", len(text), hint=hint)


def _unclosed_quote(source: SourceText, err: yaml.MarkedYAMLError) -> SpecError | None:
    mark = err.context_mark
    if mark is None or "end of stream" not in (err.problem or ""):
        return None
    quote = (source.line(mark.line + 1) or "")[mark.column:mark.column + 1] or "'"
    return source.error(mark.line + 1, mark.column + 1, f"invalid YAML: the quote ({quote}) "
                        "here is never closed", hint=f"end the text with {quote}")


def _flow_bracket(text: str, index: int) -> yaml.Mark | None:
    """Where the innermost ``[`` or ``{`` still open at ``index`` starts, by PyYAML's tokens."""
    stack: list[yaml.Mark] = []
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if token.start_mark.index >= index:
                break
            if isinstance(token, yaml.FlowSequenceStartToken | yaml.FlowMappingStartToken):
                stack.append(token.start_mark)
            elif isinstance(token, yaml.FlowSequenceEndToken | yaml.FlowMappingEndToken) \
                    and stack:
                stack.pop()
    except yaml.YAMLError:
        pass
    return stack[-1] if stack else None


def _flow(source: SourceText, text: str, err: yaml.MarkedYAMLError) -> SpecError | None:
    """A ``[...]`` / ``{...}`` that is not closed, closed by the other bracket, or missing a
    ``,`` between two entries."""
    mark = err.problem_mark
    if mark is None:
        return None
    bracket = _flow_bracket(text, mark.index)
    if bracket is None:
        return None
    opener = (source.line(bracket.line + 1) or "")[bracket.column:bracket.column + 1]
    closer = _CLOSERS.get(opener)
    if closer is None:
        return None
    line = source.line(mark.line + 1)
    opened = (source.line(bracket.line + 1) or "").split(" #")[0].rstrip()
    later = (line or "").strip()
    at_end = line is None or mark.index >= len(text) or not later or (
        mark.line > bracket.line and (opened[-1:] not in (",", opener) or _is_item(later)
                                      or _KEY.match(later) is not None))
    if at_end:
        read_to = "the end of the file" if not later else f"line {mark.line + 1}"
        return source.error(bracket.line + 1, bracket.column + 1,
                            f"invalid YAML: this '{opener}' is never closed",
                            hint=f"close it with '{closer}'; YAML read on to {read_to} "
                                 "looking for it")
    found = line[mark.column:mark.column + 1]
    if found in "]}" and found != closer:
        return source.error(mark.line + 1, mark.column + 1, f"invalid YAML: the '{opener}' at "
                            f"line {bracket.line + 1} column {bracket.column + 1} is closed by "
                            f"'{found}'", hint=f"close a '{opener}' with '{closer}'")
    if found == ":":
        word = re.search(r"([^\s,\[{]+)\s*$", line[:mark.column])
        if word is not None:
            return source.error(mark.line + 1, mark.column + 1, f"invalid YAML: expected ',' "
                                f"or '{closer}' before this ':'",
                                hint=f"put ', ' before '{word.group(1)}' (entries inside "
                                     f"'{opener}{closer}' are separated by commas); quote a "
                                     "value that contains ': '")
    return None


# ---------------------------------------------------------------- entry points

def syntax_error(source: SourceText, text: str, err: yaml.MarkedYAMLError) -> SpecError:
    """The located ``SpecError`` for PyYAML's syntax error ``err`` in ``text``."""
    problem = err.problem or ""
    context = err.context or ""
    recognised = None
    if "quoted scalar" in context:
        recognised = _unclosed_quote(source, err)
    elif "flow" in context or "expected ',' or" in problem:
        recognised = _flow(source, text, err)
    elif "mapping values are not allowed here" in problem and err.problem_mark is not None:
        recognised = _colon_in_value(source, err.problem_mark)
    elif "could not find expected ':'" in problem:
        recognised = _not_a_key(source, err)
    elif err.problem_mark is not None and ("expected <block end>" in problem
                                           or "did not find expected" in problem):
        recognised = (_misindented(source, err.problem_mark.line + 1)
                      or _indentation(source, err.problem_mark))
    if recognised is None and "found character '\\t'" in problem and err.problem_mark:
        mark = err.problem_mark
        return source.error(mark.line + 1, mark.column + 1, "invalid YAML: a tab where YAML "
                            "expects spaces", hint="replace it with spaces; YAML does not "
                            "allow tabs for indentation")
    return recognised or _pyyaml_words(source, err)


def _pyyaml_words(source: SourceText, err: yaml.MarkedYAMLError) -> SpecError:
    """PyYAML's own message with its token names and contexts in words."""
    mark = err.problem_mark or err.context_mark
    problem = err.problem or err.context or "malformed YAML"
    for token, words in _TOKEN_WORDS:
        problem = problem.replace(token, words)
    message = f"invalid YAML: {problem}"
    if err.problem and err.context and err.context_mark is not None:
        context = err.context
        for phrase, words in _CONTEXT_WORDS:
            context = context.replace(phrase, words)
        message += f" ({context} at line {err.context_mark.line + 1})"
    hint = next((hint for key, hint in _SYNTAX_HINTS if key in (err.problem or "")), None)
    if mark is None:
        return source.error(1, 1, message, hint=hint)
    return mark_error(source, mark, message, hint, word=False)


def _misindented(source: SourceText, problem: int) -> SpecError | None:
    """An error at the line that is really mis-indented, when it is not PyYAML's problem line.

    PyYAML notices a bad indentation one line late when the odd line opens a block: in
    ``inputs:`` / ``   x: ...`` / ``  t: ...`` the 3-space ``x`` opens the block and ``t``, the
    correct one, is reported. The problem line dedented to an indentation no open block has;
    the lines just above it are deeper. Of those lines' first one and the problem line (both
    children of the same parent), the one whose step from the parent differs from the
    file's usual step is the wrong one. None when the problem line is the wrong one.
    """
    content = [(n, _indent(text)) for n, text in enumerate(source.lines, 1)
               if text.strip() and not text.lstrip().startswith("#")]
    index = next((i for i, (n, _) in enumerate(content) if n == problem), None)
    if index is None:
        return None
    indent = content[index][1]
    first = index
    while first > 0 and content[first - 1][1] > indent:
        first -= 1
    if first == index or first == 0:
        return None  # the previous line is not deeper: the problem line itself is wrong
    parent = content[first - 1][1]
    block_line, block_indent = content[first]
    steps: dict[int, int] = {}
    for (m, a), (n, b) in zip(content, content[1:], strict=False):
        if b > a and not {m, n} & {block_line, problem}:  # steps of the two suspects don't vote
            steps[b - a] = steps.get(b - a, 0) + 1
    usual = max(steps, key=lambda k: (steps[k], k == 2, -k)) if steps else 2
    if block_indent - parent == usual or indent - parent != usual:
        return None
    return source.error(block_line, block_indent + 1,
                        f"invalid YAML: line {block_line} is indented {_spaces(block_indent)}, "
                        f"but line {problem} of the same block {indent}",
                        len(source.line(block_line).strip()) or 1,
                        hint=f"indent it {_spaces(indent)}, like line {problem}")


def reader_error(source: SourceText, text: str, err: yaml.reader.ReaderError) -> SpecError:
    before = LINE_BREAK.split(text[:err.position])
    line, col = len(before), len(before[-1]) + 1
    character = err.character if isinstance(err.character, int) else ord(err.character)
    error = source.error(line, col, f"the spec contains the character U+{character:04X}, which "
                         "YAML does not allow", hint="remove it, or write it as an escape in "
                         "double quotes")
    if error.source_line is not None:  # show U+FFFD instead: a lone surrogate cannot be printed
        error.source_line = error.source_line[:col - 1] + "\ufffd" + error.source_line[col:]
    return error


def mark_error(source: SourceText, mark: yaml.Mark, message: str, hint: str | None = None,
               word: bool = True) -> SpecError:
    """A SpecError at a PyYAML mark, underlining the word that starts there (or one character)."""
    line = source.line(mark.line + 1) or ""
    length = len(re.match(r"\S*", line[mark.column:]).group()) if word else 1
    return source.error(mark.line + 1, mark.column + 1, message, length, hint)
