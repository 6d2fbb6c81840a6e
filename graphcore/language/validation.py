"""What the spec validators share: scopes, limits, names and the small helpers that
describe a located value in an error message."""

from __future__ import annotations

import re
from typing import Any

from graphcore.language.syntax import PREVIOUS
from graphcore.language.yaml_source import LMap, Loc, LScalar, LSeq
from graphcore.links.link import Chain
from graphcore.registry import suggestion as did_you_mean

FORMAT_VERSION = 1
TOP_KEYS = ("graphtool", "name", "kind", "seed", "params", "inputs", "graph", "loss", "outputs")
STEP_KINDS = ("op", "if", "repeat", "while", "for_each")
SOURCES = ("random", "zeros", "ones", "file", "stdin")
RESERVED = {"params", "loop", "true", "false", "and", "or", "not", PREVIOUS}
NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
# ``from: parts[1]`` takes one part of a value of several arrays (``_[0]`` of the last one).
PART_PATTERN = re.compile(r"^([A-Za-z][A-Za-z0-9_]*|_)\[(-?[0-9]+)\]$")
PARAM_REF = "$params."
TEXT_BOOLEAN_WORDS = ("y", "n")  # YAML 1.1 booleans that PyYAML reads as text
# 1e-3: YAML 1.1 text. Each part matches one way only, so a long run of digits is linear time.
FLOAT_12 = re.compile(r"^[-+]?(\d+(?:\.\d*)?|\.\d+)[eE][-+]?\d+$")
MAX_TRIPS = 100_000  # trips of one loop: a repeat count, a while's max_iters, a for_each
MAX_OP_RUNS = 1_000_000  # op steps one run may execute, loop trips multiplied through nesting
MAX_UNROLLED_LAYERS = 10_000  # layer scopes after unrolling (nested unrolls multiplied)


class Scope:
    """Value names bound at a point of the graph, each with where it was bound."""

    def __init__(self, names: dict[str, Loc | None], loops: tuple[str, ...] = (),
                 partial: dict[str, int] | None = None) -> None:
        self.names = dict(names)
        self.loops = loops  # kinds of the enclosing loops, innermost last
        self.partial = dict(partial or {})  # name -> line of an `if` that binds it in one branch

    def copy(self) -> Scope:
        return Scope(self.names, self.loops, self.partial)

    def missing_hint(self, name: str) -> str | None:
        """Why ``name`` is not in scope, when that can be told, else a did-you-mean."""
        if name in self.partial:
            return (f"'{name}' is bound in only one branch of the if at line "
                    f"{self.partial[name]}; bind it in both branches to use it after the if")
        return did_you_mean(name, [n for n in self.names if n != PREVIOUS])





class InvalidType:
    """Marks a value that was already reported as an error."""

    def __repr__(self) -> str:
        return "<invalid>"


INVALID = InvalidType()


# The names a layer scope may not take: each scope becomes an attribute of the spec's model
# (``interpreter.parameters.SpecModel``, a ``Chain``), and ``name: layer`` would replace one of
# its attributes: ``Chain``'s, and the ones ``SpecModel`` adds (a test keeps the two in step).
MODEL_ATTRIBUTES = frozenset(dir(Chain)) | {"spec", "name", "layer", "initialized",
                                            "preprocessing"}


def model_attribute(name: str) -> bool:
    """Whether a layer scope ``name`` would clash with an attribute of the model."""
    return name in MODEL_ATTRIBUTES


def items_of(node: Any, value: Any) -> list:
    """The located items behind ``value``: a list written out, or one ``$params.NAME`` scalar
    standing for a whole list (each item then points at that scalar)."""
    if isinstance(node, LSeq):
        return list(node)
    return [node] * len(value) if isinstance(value, list) else [node]




def show(node: Any) -> str:
    if isinstance(node, LScalar):
        return repr(node.value) if isinstance(node.value, str) else str(node.raw or node.value)
    if isinstance(node, LSeq):
        return "a list"
    if isinstance(node, LMap):
        return "a mapping"
    return repr(node)


def boolean_word_hint(node: Any) -> str | None:
    """The trap hint of ``y`` / ``n``, which YAML 1.1 defines as booleans but PyYAML reads as
    text: only where a boolean is expected (elsewhere the text is what was meant), so the
    loader does not attach it to every error the way it does other traps."""
    if isinstance(node, LScalar) and isinstance(node.value, str) and node.trap is not None \
            and node.value.lower() in TEXT_BOOLEAN_WORDS:
        return node.trap
    return None


def source_line(loc: Loc) -> str | None:
    return loc.source.line(loc.line) if loc.source is not None else None


def describe_types(types: tuple[type, ...]) -> str:
    names = {int: "an integer", float: "a number", bool: "true or false", str: "text",
             list: "a list", tuple: "a list", type(None): "null"}
    words = []
    for t in types:
        word = names.get(t, t.__name__)
        if word not in words:
            words.append(word)
    if "an integer" in words and "a number" in words:
        words.remove("an integer")
    return " or ".join(words)

