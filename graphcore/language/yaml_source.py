"""YAML text -> a tree of located values, safely: the first layer of the spec loader.

PyYAML's ``SafeLoader`` composes the text into nodes (each with its start mark); nothing is ever
constructed from a tag. The nodes become ``LMap`` / ``LSeq`` / ``LScalar`` values that remember
where they came from, so every later layer can report ``file:line:col: error: ...`` with the
source line under it::

    spec = load_yaml("graphtool: 1\\nseed: 0\\n", "model.yaml")
    spec.get("seed").value          # 0
    spec.key_loc("seed")            # Loc('model.yaml', 2, 1, 4)
    error_at(spec.get("seed").loc, "seed must be positive")   # a SpecError with source_line

Refused, each as a located ``SpecError`` (all of them at once, in one ``SpecErrors``): duplicate
and non-string keys, anchors, aliases and merge keys, tags other than the core scalar ones, more
than one document, an empty spec, a top level that is not a mapping. A YAML syntax error, input
over ``MAX_BYTES`` and nesting deeper than ``MAX_DEPTH`` stop loading and are reported alone.

Values resolve as SafeLoader resolves them (YAML 1.1), except that timestamps stay text. Plain
scalars that YAML reads differently than people expect carry a ``trap`` hint (``trap_hint``:
``1e-3`` is text, ``on`` is true, ``op:relu`` is one text; ``folded_hint``: a deeper ``- tanh``
folded into the item above it), which the validator attaches to any error about that value.
A syntax error is reported in plain words by ``yaml_errors``.
"""

from __future__ import annotations

import os

import yaml

from graphcore.errors import SpecError, SpecErrors
from graphcore.language.located import (
    LMap,
    Loc,
    Located,
    LScalar,
    LSeq,
    SourceText,
    describe,
    error_at,
)
from graphcore.language.yaml_errors import mark_error, reader_error, syntax_error
from graphcore.language.yaml_scalars import CORE, folded_hint, implicit_value, resolve, trap_hint

__all__ = [
    "MAX_BYTES", "MAX_DEPTH", "LMap", "LScalar", "LSeq", "Loc", "Located", "SourceText",
    "describe", "error_at", "load_yaml", "load_yaml_file", "trap_hint",
]

MAX_BYTES = 262_144  # specs are a few KB; this bounds PyYAML's pure-Python parse time
MAX_DEPTH = 64

_SCALAR_TAGS = {CORE + name for name in ("str", "int", "float", "bool", "null")}
_INVALID_TAG = "!graphtool/invalid"  # marks a placeholder node for something already reported
_STYLES = {None: "plain", "'": "quoted", '"': "quoted", "|": "block", ">": "block"}



# ---------------------------------------------------------------- composing with guards

class _TooDeep(Exception):
    def __init__(self, mark: yaml.Mark) -> None:
        super().__init__("too deep")
        self.mark = mark


class _GuardedLoader(yaml.SafeLoader):
    """SafeLoader's composer, changed in three ways: anchors, aliases and foreign tags are noted
    as problems (and neither followed nor kept), and nesting past MAX_DEPTH stops composing.

    Only ``compose_node`` is replaced; scanning, parsing and resolving are PyYAML's.
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.depth = 0
        self.problems: list[tuple[yaml.Mark, str, str | None]] = []

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            self.get_event()
            self.problems.append((event.start_mark, f"aliases (*{event.anchor}) are not "
                                  "allowed in a spec", "write the value out again"))
            return yaml.ScalarNode(_INVALID_TAG, "", event.start_mark, event.end_mark)
        if event.anchor is not None:
            self.problems.append((event.start_mark, f"anchors (&{event.anchor}) are not "
                                  "allowed in a spec", None))
        if event.tag is not None and event.tag not in self._allowed_tags(event):
            self.problems.append((event.start_mark, f"the tag {_short_tag(event.tag)} is not "
                                  "allowed in a spec", "only !!str, !!int, !!float, !!bool and "
                                  "!!null may tag a scalar"))
            event.tag = None  # compose it as if untagged; the problem is already reported
        if isinstance(event, yaml.ScalarEvent):
            node = self._compose(self.compose_scalar_node, parent, index)
            node.explicit_tag = event.tag is not None  # only the core scalar tags get here
            return node
        if self.depth >= MAX_DEPTH:
            raise _TooDeep(event.start_mark)
        self.depth += 1
        if isinstance(event, yaml.SequenceStartEvent):
            node = self._compose(self.compose_sequence_node, parent, index)
        else:
            node = self._compose(self.compose_mapping_node, parent, index)
        self.depth -= 1
        return node

    def _compose(self, compose, parent: yaml.Node | None, index: object) -> yaml.Node:
        self.descend_resolver(parent, index)
        node = compose(None)  # None: no anchor is ever registered, so no alias can resolve
        self.ascend_resolver()
        return node

    @staticmethod
    def _allowed_tags(event: yaml.Event) -> set[str]:
        return _SCALAR_TAGS if isinstance(event, yaml.ScalarEvent) else set()


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(CORE):] if tag.startswith(CORE) else tag


def _compose(text: str) -> tuple[yaml.Node | None, list[tuple[yaml.Mark, str, str | None]]]:
    """The root node (None for an empty stream) and the problems noted while composing.

    Raises PyYAML's errors for bad syntax and _TooDeep for too much nesting.
    """
    loader = _GuardedLoader(text)
    try:
        loader.get_event()  # stream start
        root = None
        if not loader.check_event(yaml.StreamEndEvent):
            root = loader.compose_document()
            if not loader.check_event(yaml.StreamEndEvent):
                loader.problems.append((loader.peek_event().start_mark,
                                        "a spec is one YAML document, but another starts here",
                                        "remove the '---' line, or split the file"))
        return root, loader.problems
    finally:
        loader.dispose()


# ---------------------------------------------------------------- nodes -> located values

class _Builder:
    """Turns composed nodes into located values, collecting every problem on the way."""

    def __init__(self, source: SourceText, text: str) -> None:
        self.source = source
        self.text = text
        self.errors: list[SpecError] = []

    def loc(self, node: yaml.Node) -> Loc:
        start, end = node.start_mark, node.end_mark
        if end is not None and end.line == start.line:
            length = end.column - start.column
        elif isinstance(node, yaml.ScalarNode):
            length = len((self.source.line(start.line + 1) or "").rstrip()) - start.column
        else:
            length = 1
        return self.source.loc(start.line + 1, start.column + 1, length)

    def error(self, node: yaml.Node, message: str, hint: str | None = None) -> None:
        self.errors.append(error_at(self.loc(node), message, hint))

    def build(self, node: yaml.Node) -> Located:
        # Depth is bounded by MAX_DEPTH (the loader stops past it), so recursion is safe here.
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node)
        if isinstance(node, yaml.SequenceNode):
            return LSeq([self.build(item) for item in node.value], self.loc(node))
        return self.scalar(node)

    def scalar(self, node: yaml.ScalarNode) -> LScalar:
        loc = self.loc(node)
        raw = self.text[node.start_mark.index:node.end_mark.index]
        style = _STYLES.get(node.style, "quoted")
        if node.tag == _INVALID_TAG:
            return LScalar(None, raw, style, loc)
        if not getattr(node, "explicit_tag", False):
            value = implicit_value(node.value, node.tag)
            trap = None
            if style == "plain":
                start = node.start_mark
                before = (self.source.line(start.line + 1) or "")[:start.column]
                trap = trap_hint(node.value) or (
                    folded_hint(raw, value, start.line + 1, before)
                    if isinstance(value, str) else None)
            return LScalar(value, raw, style, loc, trap)
        try:
            value = resolve(node.tag, node.value)
        except (ValueError, KeyError, IndexError):
            self.error(node, f"cannot read {node.value!r} as {_short_tag(node.tag)}")
            value = node.value
        return LScalar(value, raw, style, loc)

    def mapping(self, node: yaml.MappingNode) -> LMap:
        result = LMap(self.loc(node))
        for key_node, value_node in node.value:
            value = self.build(value_node)
            key = self.key(key_node)
            if key is None:
                continue
            if key.value in result:
                first = result.key_loc(key.value)
                self.error(key_node, f"duplicate key {key.value!r} (first at line {first.line})")
                continue
            result.add(key.value, key.loc, value, key.trap)
        return result

    def key(self, node: yaml.Node) -> LScalar | None:
        """The key (its value is text), or None (with the problem noted) when it cannot be a
        spec key."""
        if node.tag == _INVALID_TAG:
            return None
        if node.tag == CORE + "merge":
            self.error(node, "merge keys (<<) are not allowed in a spec",
                       "write the keys out instead")
            return None
        key = self.build(node)
        if isinstance(key, LScalar) and isinstance(key.value, str):
            return key
        hint = key.trap if isinstance(key, LScalar) else None
        if hint is None and isinstance(key, LScalar) and key.raw:
            hint = f"quote it ('{key.raw}') if you meant it as a name"
        self.error(node, f"a key must be text, got {describe(key)}", hint)
        return None


# ---------------------------------------------------------------- public entry points

def load_yaml(text: str, file: str = "<spec>") -> LMap:
    """Parse spec text into a located mapping; raise SpecErrors listing every problem found."""
    source = SourceText(text, file)
    if len(text) > MAX_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        size = len(text.encode("utf-8", "surrogatepass"))
        raise SpecErrors([source.error(1, 1, f"the spec is too large: {size:,} bytes "
                                              f"(the limit is {MAX_BYTES:,})")])
    try:
        root, problems = _compose(text)
    except yaml.reader.ReaderError as err:
        raise SpecErrors([reader_error(source, text, err)]) from None
    except yaml.MarkedYAMLError as err:
        raise SpecErrors([syntax_error(source, text, err)]) from None
    except _TooDeep as err:
        message = f"the spec nests deeper than {MAX_DEPTH} levels"
        raise SpecErrors([mark_error(source, err.mark, message, word=False)]) from None
    errors = [mark_error(source, mark, message, hint) for mark, message, hint in problems]
    builder = _Builder(source, text)
    tree = builder.build(root) if root is not None else None
    errors += builder.errors
    if tree is None or (isinstance(tree, LScalar) and tree.value is None and not tree.raw):
        errors.append(source.error(1, 1, "the spec is empty"))
    elif not isinstance(tree, LMap):
        errors.append(error_at(tree.loc, "the top level of a spec must be a mapping "
                                         f"(key: value lines), got {describe(tree)}"))
    if errors:
        raise SpecErrors(errors)
    return tree


def load_yaml_file(path: str | os.PathLike[str]) -> LMap:
    """Read a spec file as UTF-8 and load it; a missing file raises FileNotFoundError as is."""
    file = os.fspath(path)
    with open(file, "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        source = SourceText("", file)
        raise SpecErrors([source.error(1, 1, f"the spec is too large: over {MAX_BYTES:,} "
                                             "bytes")])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        message = (f"the spec is not UTF-8 text (byte 0x{data[err.start]:02x} at offset "
                   f"{err.start})")
        raise SpecErrors([SpecError(message, file, 1, 1, hint="save the file as UTF-8")]) from None
    return load_yaml(text, file)
