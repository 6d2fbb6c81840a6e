"""The predicate language's limits, errors and syntax tree (immutable, with columns)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from graphcore.errors import GraphcoreError, SpecError

MAX_LENGTH = 500
"""Longest predicate text accepted, in characters."""

MAX_DEPTH = 32
"""Deepest nesting accepted: of parentheses, prefix operators and calls while parsing, and of
operator nodes in the parsed tree (a flat ``a + b - c`` or ``a and b and c`` is one level)."""

FUNCTIONS = ("mean", "sum", "min", "max", "std", "norm", "abs", "size", "len", "dim")
"""The closed set of functions; each takes exactly one argument."""

KEYWORDS = ("and", "or", "not", "true", "false")
LOOP_FIELDS = ("i", "t")

Value = bool | int | float | str | np.ndarray


# ----------------------------------------------------------------------------------- errors

class PredicateError(GraphcoreError, ValueError):
    """A problem in a predicate: ``message`` at 1-based ``column`` of the predicate text,
    underlining ``length`` characters; ``hint`` is an optional extra sentence (did-you-mean)."""

    def __init__(self, message: str, column: int = 1, length: int = 1,
                 hint: str | None = None) -> None:
        self.message = message
        self.column = max(column, 1)
        self.length = max(length, 1)
        self.hint = hint
        text = f"column {self.column}: {message}"
        super().__init__(f"{text} ({hint})" if hint else text)


def to_spec_error(err: PredicateError, file: str, line: int, col_of_predicate_start: int,
                  source_line: str | None = None) -> SpecError:
    """The `SpecError` for ``err`` when the predicate text starts at ``line``,
    ``col_of_predicate_start`` (1-based, the first character after any opening quote).

    >>> to_spec_error(PredicateError("boom", column=3), "m.yaml", 7, 9).headline()
    'm.yaml:7:11: error: boom'
    """
    return SpecError(err.message, file=file, line=line,
                     col=col_of_predicate_start + err.column - 1, source_line=source_line,
                     length=err.length, hint=err.hint)





# ------------------------------------------------------------------------------------ nodes
# Nodes are small immutable values. Their position (column and length: the node's span in the
# predicate text) and depth (operator levels below and including it) are keyword-only and take
# no part in equality, so a predicate equals its canonical re-parse.

def _untracked(default: object = 0) -> int:
    return field(default=default, compare=False, repr=False)  # type: ignore[return-value]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Span:
    column: int = _untracked()
    length: int = _untracked()
    depth: int = _untracked()


@dataclass(frozen=True, slots=True)
class Number(_Span):
    value: int | float


@dataclass(frozen=True, slots=True)
class String(_Span):
    value: str


@dataclass(frozen=True, slots=True)
class Boolean(_Span):
    value: bool


@dataclass(frozen=True, slots=True)
class Name(_Span):
    """A value in scope: ``x``, ``_``, ``params.k``, ``loop.i``, ``loop.t``."""
    name: str


@dataclass(frozen=True, slots=True)
class Call(_Span):
    """``function(argument)``; ``column`` is the function name's."""
    function: str
    argument: Node


@dataclass(frozen=True, slots=True)
class Negate(_Span):
    operand: Node


@dataclass(frozen=True, slots=True)
class Not(_Span):
    operand: Node


@dataclass(frozen=True, slots=True)
class Compare(_Span):
    op: str
    left: Node
    right: Node
    op_column: int = _untracked()


@dataclass(frozen=True, slots=True)
class Step:
    """One ``op operand`` after the first operand of an `Arithmetic` chain."""
    op: str
    operand: Node
    column: int = _untracked()


@dataclass(frozen=True, slots=True)
class Arithmetic(_Span):
    """``first op1 x1 op2 x2 ...``, left to right; all ops additive or all multiplicative."""
    first: Node
    steps: tuple[Step, ...]


@dataclass(frozen=True, slots=True)
class Logical(_Span):
    """``a and b and ...`` or ``a or b or ...``, short-circuit; ``op_columns[k]`` is the column
    of the operator before ``operands[k + 1]``."""
    op: str
    operands: tuple[Node, ...]
    op_columns: tuple[int, ...] = _untracked(())


Node = Number | String | Boolean | Name | Call | Negate | Not | Compare | Arithmetic | Logical

OR, AND, NOT, COMPARE, ADD, MULTIPLY, NEGATE, ATOM = range(1, 9)
BINARY = {"or": OR, "and": AND, "==": COMPARE, "!=": COMPARE, "<": COMPARE,
           "<=": COMPARE, ">": COMPARE, ">=": COMPARE, "+": ADD, "-": ADD,
           "*": MULTIPLY, "/": MULTIPLY, "%": MULTIPLY}


def precedence_of(node: Node) -> int:
    match node:
        case Logical(op="or"):
            return OR
        case Logical():
            return AND
        case Not():
            return NOT
        case Compare():
            return COMPARE
        case Arithmetic(steps=steps):
            return BINARY[steps[0].op]
        case Negate():
            return NEGATE
    return ATOM


def _children(node: Node) -> tuple[Node, ...]:
    match node:
        case Call(argument=argument):
            return (argument,)
        case Negate(operand=operand) | Not(operand=operand):
            return (operand,)
        case Compare(left=left, right=right):
            return (left, right)
        case Arithmetic(first=first, steps=steps):
            return (first, *(step.operand for step in steps))
        case Logical(operands=operands):
            return operands
    return ()


def walk(root: Node) -> Iterator[Node]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(_children(node)))


