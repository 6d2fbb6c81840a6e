"""The predicate language of specs (`if:` and `while:` conditions), with its own tokenizer,
parser and evaluator. Nothing here calls ``eval``, ``exec``, ``compile`` or ``ast``, and no user
text ever becomes an attribute lookup: names are looked up as keys of an environment mapping.

Grammar, loosest binding first (comparisons do not chain; runs such as ``a + b - c`` or
``a and b and c`` become one flat node, so long runs do not make deep trees)::

    expr     := or
    or       := and ('or' and)*
    and      := not ('and' not)*
    not      := 'not' not | compare
    compare  := sum (('==' | '!=' | '<' | '<=' | '>' | '>=') sum)?
    sum      := product (('+' | '-') product)*
    product  := unary (('*' | '/' | '%') unary)*
    unary    := '-' unary | atom
    atom     := NUMBER | STRING | 'true' | 'false' | NAME | FUNCTION '(' expr ')' | '(' expr ')'

Names are identifiers (``x``, ``_``) or exactly ``params.NAME``, ``loop.i``, ``loop.t``.

    >>> p = parse_predicate("mean(x) > 0 and params.act == 'tanh'")
    >>> sorted(p.names()), sorted(p.functions())
    (['params.act', 'x'], ['mean'])
    >>> p.evaluate_bool({"x": np.array([1.0, -0.5]), "params.act": "tanh"})
    True

Every error is a `PredicateError` with a 1-based column inside the predicate text (each
character counts one, a newline too); the spec loader maps it to a file position with
`to_spec_error`. Input is bounded (`MAX_LENGTH`, `MAX_DEPTH`), so no text makes the parser
recurse without limit or hang.
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from graphcore.errors import GraphcoreError, SpecError

__all__ = [
    "FUNCTIONS", "MAX_DEPTH", "MAX_LENGTH", "Arithmetic", "Boolean", "Call", "Compare",
    "Logical", "Name", "Negate", "Node", "Not", "Number", "Predicate", "PredicateError", "Step",
    "String", "parse_predicate", "to_spec_error",
]

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


def _did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


# ----------------------------------------------------------------------------------- tokens

@dataclass(frozen=True, slots=True)
class _Token:
    kind: str           # number string name keyword op ( ) , end
    text: str           # the operator / keyword / name as written; the literal for values
    column: int
    length: int
    value: object = None

    @property
    def end(self) -> int:
        """The column just after the token."""
        return self.column + self.length


_IDENT_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_IDENT_CHARS = _IDENT_START | frozenset("0123456789")
_DIGITS = frozenset("0123456789")
_NUMBER = re.compile(r"([0-9]+)(\.[0-9]+)?([eE][+-]?[0-9]+)?|\.[0-9]+([eE][+-]?[0-9]+)?")
_SPACE = frozenset(" \t\r\n")
_TWO_CHAR_OPS = ("==", "!=", "<=", ">=")
_ONE_CHAR_OPS = frozenset("+-*/%<>")
_BAD_PAIRS = {
    "**": "there is no power operator",
    "//": "there is no floor division; '/' divides",
    "&&": "use 'and'",
    "||": "use 'or'",
}
_BAD_CHARS = {
    "=": "use '==' to compare",
    "!": "use 'not'; '!=' means not-equal",
    "&": "use 'and'",
    "|": "use 'or'",
    "^": "there is no power or xor operator",
    "[": "indexing is not supported; use a function such as max or mean",
    "]": "indexing is not supported; use a function such as max or mean",
    ".": "attribute access is not supported",
}


class _Tokenizer:
    """Splits a predicate into tokens; each step consumes at least one character."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[_Token] = []

    def run(self) -> list[_Token]:
        text, i = self.text, 0
        while i < len(text):
            c = text[i]
            if c in _SPACE:
                i += 1
            elif c in _DIGITS or (c == "." and text[i + 1:i + 2] in _DIGITS):
                i = self._number(i)
            elif c in _IDENT_START:
                i = self._name(i)
            elif c in "'\"":
                i = self._string(i)
            else:
                i = self._operator(i)
        end = len(text.rstrip()) + 1
        self.tokens.append(_Token("end", "", end, 1))
        return self.tokens

    def _error(self, message: str, start: int, stop: int, hint: str | None = None) -> None:
        """Raise at text[start:stop] (0-based indices)."""
        raise PredicateError(message, start + 1, max(stop - start, 1), hint)

    def _number(self, i: int) -> int:
        text = self.text
        match = _NUMBER.match(text, i)
        assert match is not None  # the caller saw a digit or '.digit'
        end = match.end()
        if end < len(text) and (text[end] in _IDENT_CHARS or text[end] == "."):
            self._bad_number(i, end)
        literal = match.group()
        whole = match.group(1)
        if whole is not None and len(whole) > 1 and whole.startswith("0"):
            fixed = (whole.lstrip("0") or "0") + literal[len(whole):]
            self._error(f"number '{literal}' has a leading zero", i, end,
                        f"leading zeros are not allowed; write {fixed}")
        if whole is None or match.group(2) or match.group(3):
            value: int | float = float(literal)
            if math.isinf(value):
                self._error(f"number '{literal}' is too large", i, end)
        else:
            value = int(literal)
        self.tokens.append(_Token("number", literal, i + 1, end - i, value))
        return end

    def _bad_number(self, i: int, end: int) -> None:
        text = self.text
        stop = end
        while stop < len(text) and (text[stop] in _IDENT_CHARS or text[stop] == "."):
            stop += 1
        after = text[end + 1:end + 2]
        if text[end] in "eE":
            sign = 1 if after in ("+", "-") else 0
            if text[end + 1 + sign:end + 2 + sign] not in _DIGITS:
                self._error(f"number '{text[i:end + 1 + sign]}' has no exponent digits",
                            i, end + 1 + sign, "write an exponent like 1e-3")
        if text[end] == "." and after not in _DIGITS:
            self._error(f"expected a digit after '.' in '{text[i:end + 1]}'", i, end + 1,
                        f"write {text[i:end]}.0")
        hint = "digit separators '_' are not supported" if "_" in text[i:stop] else None
        self._error(f"invalid number '{text[i:stop]}'", i, stop, hint)

    def _identifier_end(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in _IDENT_CHARS:
            i += 1
        return i

    def _name(self, i: int) -> int:
        text = self.text
        end = self._identifier_end(i)
        word = text[i:end]
        if word in ("params", "loop"):
            word, end = self._dotted(word, i, end)
        if end < len(text) and text[end] == ".":
            attribute_end = self._identifier_end(end + 1)
            self._error(f"attribute access is not allowed: '{text[i:attribute_end]}'",
                        end, attribute_end,
                        "the only dotted names are params.NAME, loop.i and loop.t")
        if word in ("True", "False"):
            self._error(f"unknown name '{word}'", i, end, f"write '{word.lower()}'")
        kind = "keyword" if word in KEYWORDS else "name"
        self.tokens.append(_Token(kind, word, i + 1, end - i))
        return end

    def _dotted(self, head: str, i: int, end: int) -> tuple[str, int]:
        """``params.NAME``, ``loop.i`` or ``loop.t`` starting at i; ``end`` is after the head."""
        text = self.text
        usage = "params.NAME" if head == "params" else "loop.i or loop.t"
        if end >= len(text) or text[end] != ".":
            self._error(f"'{head}' must be followed by a field: {usage}", i, end)
        field_end = self._identifier_end(end + 1)
        if field_end == end + 1 or text[end + 1] in _DIGITS:
            self._error(f"expected a name after '{head}.'", end + 1, end + 2, f"write {usage}")
        name = text[end + 1:field_end]
        if head == "loop" and name not in LOOP_FIELDS:
            hint = _did_you_mean(f"loop.{name}", ("loop.i", "loop.t")) or "write loop.i or loop.t"
            self._error(f"unknown loop variable 'loop.{name}'", end + 1, field_end, hint)
        return f"{head}.{name}", field_end

    def _string(self, i: int) -> int:
        text, quote = self.text, self.text[i]
        chars: list[str] = []
        j = i + 1
        while j < len(text):
            c = text[j]
            if c == quote:
                self.tokens.append(_Token("string", text[i:j + 1], i + 1, j + 1 - i,
                                          "".join(chars)))
                return j + 1
            if c == "\\" and j + 1 < len(text):
                if text[j + 1] not in ("\\", quote):
                    self._error(f"unsupported escape '{text[j:j + 2]}'", j, j + 2,
                                f"the only escapes are \\\\ and \\{quote}")
                chars.append(text[j + 1])
                j += 2
            else:
                chars.append(c)
                j += 1
        self._error("unterminated string", i, len(text), f"close it with {quote}")
        raise AssertionError("unreachable")

    def _operator(self, i: int) -> int:
        text = self.text
        pair = text[i:i + 2]
        if pair in _TWO_CHAR_OPS:
            self.tokens.append(_Token("op", pair, i + 1, 2))
            return i + 2
        if pair in _BAD_PAIRS:
            self._error(f"unexpected '{pair}'", i, i + 2, _BAD_PAIRS[pair])
        c = text[i]
        if c in _ONE_CHAR_OPS:
            self.tokens.append(_Token("op", c, i + 1, 1))
        elif c in "(),":
            self.tokens.append(_Token(c, c, i + 1, 1))
        else:
            self._error(f"unexpected character {c!r}", i, i + 1, _BAD_CHARS.get(c))
        return i + 1


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

_OR, _AND, _NOT, _COMPARE, _ADD, _MULTIPLY, _NEGATE, _ATOM = range(1, 9)
_BINARY = {"or": _OR, "and": _AND, "==": _COMPARE, "!=": _COMPARE, "<": _COMPARE,
           "<=": _COMPARE, ">": _COMPARE, ">=": _COMPARE, "+": _ADD, "-": _ADD,
           "*": _MULTIPLY, "/": _MULTIPLY, "%": _MULTIPLY}


def _precedence(node: Node) -> int:
    match node:
        case Logical(op="or"):
            return _OR
        case Logical():
            return _AND
        case Not():
            return _NOT
        case Compare():
            return _COMPARE
        case Arithmetic(steps=steps):
            return _BINARY[steps[0].op]
        case Negate():
            return _NEGATE
    return _ATOM


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


def _walk(root: Node) -> Iterator[Node]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(_children(node)))


# ----------------------------------------------------------------------------------- parser

class _Parser:
    """Precedence climbing over the token list; recursion is bounded by `MAX_DEPTH`."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.index = 0
        self.nesting = 0

    def parse(self) -> Node:
        node = self._expression(_OR)
        token = self._peek()
        if token.kind == ")":
            raise PredicateError("unmatched ')'", token.column, token.length)
        if token.kind != "end":
            raise PredicateError(f"unexpected '{token.text}' after a complete expression",
                                 token.column, token.length, "is an operator missing?")
        return node

    def _peek(self) -> _Token:
        return self.tokens[self.index]

    def _advance(self) -> _Token:
        token = self.tokens[self.index]
        if token.kind != "end":
            self.index += 1
        return token

    def _previous_end(self) -> int:
        return self.tokens[self.index - 1].end

    def _enter(self, token: _Token) -> None:
        self.nesting += 1
        if self.nesting > MAX_DEPTH:
            raise PredicateError(f"predicate is nested too deeply (more than {MAX_DEPTH} "
                                 "levels)", token.column, token.length)

    def _expression(self, min_precedence: int) -> Node:
        start = self._peek()
        left = self._prefix(min_precedence)
        after_comparison = False
        while True:
            token = self._peek()
            precedence = _BINARY.get(token.text) if token.kind in ("op", "keyword") else None
            if precedence is None or precedence < min_precedence:
                return left
            if precedence == _COMPARE and after_comparison:
                raise PredicateError("comparisons cannot be chained", token.column,
                                     token.length, "join comparisons with 'and': a < b and b < c")
            self._advance()
            right = self._expression(precedence + 1)
            left = self._combine(left, token, right, start.column)
            after_comparison = precedence == _COMPARE

    def _combine(self, left: Node, token: _Token, right: Node, column: int) -> Node:
        span = {"column": column, "length": self._previous_end() - column}
        op = token.text
        if op in ("and", "or"):
            if isinstance(left, Logical) and left.op == op:
                operands, columns = (*left.operands, right), (*left.op_columns, token.column)
            else:
                operands, columns = (left, right), (token.column,)
            node: Node = Logical(op, operands, columns, **span, depth=_depth(operands))
        elif _BINARY[op] == _COMPARE:
            node = Compare(op, left, right, token.column, **span, depth=_depth((left, right)))
        else:
            step = Step(op, right, token.column)
            if isinstance(left, Arithmetic) and _precedence(left) == _BINARY[op]:
                first, steps = left.first, (*left.steps, step)
            else:
                first, steps = left, (step,)
            node = Arithmetic(first, steps, **span,
                              depth=_depth((first, *(s.operand for s in steps))))
        self._check_depth(node, token)
        return node

    def _check_depth(self, node: Node, token: _Token) -> None:
        if node.depth > MAX_DEPTH:
            raise PredicateError(f"predicate is nested too deeply (more than {MAX_DEPTH} "
                                 "levels)", token.column, token.length)

    def _prefix(self, min_precedence: int) -> Node:
        token = self._peek()
        if token.kind == "keyword" and token.text == "not":
            if min_precedence > _NOT:
                raise PredicateError("'not' cannot appear here without parentheses",
                                     token.column, token.length, "write (not ...)")
            node_type: type[Not] | type[Negate] = Not
            operand_precedence = _NOT
        elif token.kind == "op" and token.text == "-":
            node_type, operand_precedence = Negate, _NEGATE
        else:
            return self._atom()
        self._advance()
        self._enter(token)
        operand = (self._expression(operand_precedence) if node_type is Not
                   else self._prefix(operand_precedence))
        self.nesting -= 1
        node = node_type(operand, column=token.column,
                         length=self._previous_end() - token.column, depth=_depth((operand,)))
        self._check_depth(node, token)
        return node

    def _atom(self) -> Node:
        token = self._advance()
        span = {"column": token.column, "length": token.length}
        if token.kind == "number":
            return Number(token.value, **span)
        if token.kind == "string":
            return String(token.value, **span)
        if token.kind == "keyword" and token.text in ("true", "false"):
            return Boolean(token.text == "true", **span)
        if token.kind == "name":
            if self._peek().kind == "(":
                return self._call(token)
            return Name(token.text, **span)
        if token.kind == "(":
            self._enter(token)
            node = self._expression(_OR)
            self._expect_close(token)
            self.nesting -= 1
            return node
        if token.kind == "end":
            raise PredicateError("unexpected end of predicate", token.column, 1,
                                 "expected a value")
        raise PredicateError(f"expected a value, got '{token.text}'", token.column,
                             token.length)

    def _expect_close(self, opening: _Token) -> None:
        token = self._advance()
        if token.kind == ")":
            return
        if token.kind == "end":
            raise PredicateError("'(' is never closed", opening.column, 1)
        raise PredicateError(f"expected ')', got '{token.text}'", token.column, token.length)

    def _call(self, name: _Token) -> Node:
        if name.text not in FUNCTIONS:
            raise PredicateError(f"unknown function '{name.text}'", name.column, name.length,
                                 _did_you_mean(name.text, FUNCTIONS)
                                 or "functions: " + ", ".join(FUNCTIONS))
        opening = self._advance()
        self._enter(opening)
        arguments: list[Node] = []
        if self._peek().kind != ")":
            arguments.append(self._expression(_OR))
            while self._peek().kind == ",":
                self._advance()
                arguments.append(self._expression(_OR))
        self._expect_close(opening)
        self.nesting -= 1
        length = self._previous_end() - name.column
        if len(arguments) != 1:
            raise PredicateError(f"'{name.text}' takes exactly one argument, got "
                                 f"{len(arguments)}", name.column, length)
        node = Call(name.text, arguments[0], column=name.column, length=length,
                    depth=_depth(arguments))
        self._check_depth(node, name)
        return node


def _depth(children: Iterable[Node]) -> int:
    return 1 + max(child.depth for child in children)


def parse_predicate(text: str) -> Predicate:
    """Parse ``text`` into a `Predicate`; raise `PredicateError` at the offending column.

    >>> str(parse_predicate("not(a<b)  or  -x*2 >= 1e-3"))
    'not a < b or -x * 2 >= 0.001'
    """
    if not isinstance(text, str):
        raise TypeError(f"a predicate is a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise PredicateError(f"predicate is too long ({len(text)} characters, at most "
                             f"{MAX_LENGTH})", MAX_LENGTH + 1, len(text) - MAX_LENGTH)
    if not text.strip():
        raise PredicateError("empty predicate", 1, len(text))
    return Predicate(text, _Parser(_Tokenizer(text).run()).parse())


# ------------------------------------------------------------------------------- formatting

def _format(node: Node) -> str:
    match node:
        case Number(value=value):
            return repr(value)
        case String(value=value):
            return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        case Boolean(value=value):
            return "true" if value else "false"
        case Name(name=name):
            return name
        case Call(function=function, argument=argument):
            return f"{function}({_format(argument)})"
        case Negate(operand=operand):
            return "-" + _wrap(operand, _NEGATE)
        case Not(operand=operand):
            return "not " + _wrap(operand, _NOT)
        case Compare(op=op, left=left, right=right):
            return f"{_wrap(left, _COMPARE + 1)} {op} {_wrap(right, _COMPARE + 1)}"
        case Arithmetic(first=first, steps=steps):
            level = _precedence(node)
            return _wrap(first, level) + "".join(
                f" {step.op} {_wrap(step.operand, level + 1)}" for step in steps)
        case Logical(op=op, operands=operands):
            level = _precedence(node)
            return f" {op} ".join(_wrap(operand, level + 1) for operand in operands)
    raise TypeError(f"not a predicate node: {node!r}")


def _wrap(node: Node, min_precedence: int) -> str:
    text = _format(node)
    return f"({text})" if _precedence(node) < min_precedence else text


# ------------------------------------------------------------------------------- evaluation

def _describe(value: Value) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, str):
        return "a string"
    return "a boolean" if isinstance(value, bool) else "a number"


def _normalize(value: object) -> Value:
    """0-d arrays and numpy scalars become Python scalars; other arrays stay arrays."""
    if isinstance(value, np.ndarray) and value.ndim == 0 or isinstance(value, np.generic):
        return value.item()
    return value  # type: ignore[return-value]


def _numeric(value: Value) -> int | float | np.ndarray:
    """Booleans count as 0 and 1 in arithmetic (numpy refuses ``-`` on booleans)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, np.ndarray) and value.dtype == np.bool_:
        return value.astype(np.int64)
    return value  # type: ignore[return-value]


def _from_environment(raw: object, node: Name) -> Value:
    if hasattr(raw, "array") and not isinstance(raw, np.ndarray):
        raw = raw.array  # a graphcore Variable
        if raw is None:
            raise PredicateError(f"'{node.name}' has no value", node.column, node.length)
    if isinstance(raw, (bool, np.bool_)):
        return bool(raw)
    if isinstance(raw, (int, float, str)):
        return raw
    array = raw
    if isinstance(raw, (list, tuple)):
        try:
            array = np.asarray(raw)
        except ValueError:
            pass
    if isinstance(array, (np.ndarray, np.generic)) and array.dtype.kind in "biuf":
        return _normalize(array)
    kind = f"an array of dtype {array.dtype}" if isinstance(array, np.ndarray) \
        else f"a {type(raw).__name__}"
    raise PredicateError(f"'{node.name}' holds {kind}, which a predicate cannot use",
                         node.column, node.length)


def _lookup(node: Name, env: Mapping[str, object]) -> Value:
    name = node.name
    if name in env:
        return _from_environment(env[name], node)
    head, _, rest = name.partition(".")
    group = env.get(head) if rest else None
    if isinstance(group, Mapping) and rest in group:
        return _from_environment(group[rest], node)
    candidates = [key for key in env if isinstance(key, str)]
    for key in ("params", "loop"):
        if isinstance(env.get(key), Mapping):
            candidates += [f"{key}.{field}" for field in env[key] if isinstance(field, str)]
    raise PredicateError(f"undefined name '{name}'", node.column, node.length,
                         _did_you_mean(name, candidates))


_PYTHON_ARITHMETIC: dict[str, Callable[[object, object], object]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "%": operator.mod}
_NUMPY_ARITHMETIC: dict[str, Callable[[object, object], object]] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "%": np.mod}
_COMPARISONS: dict[str, Callable[[object, object], object]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge}


def _combine_arrays(op: str, function: Callable[[object, object], object], left: object,
                    right: object, column: int) -> Value:
    """numpy semantics (broadcasting, inf/nan on division by zero, no warnings)."""
    shapes = (np.shape(left), np.shape(right))
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise PredicateError(f"'{op}' cannot combine shapes {shapes[0]} and {shapes[1]}",
                             column, len(op)) from None
    try:
        with np.errstate(all="ignore"):
            return _normalize(function(left, right))
    except (OverflowError, TypeError, ValueError) as err:
        raise PredicateError(f"'{op}' failed: {err}", column, len(op)) from None


def _arithmetic(op: str, left: Value, right: Value, column: int) -> Value:
    if isinstance(left, str) or isinstance(right, str):
        raise PredicateError(f"'{op}' needs numbers, got {_describe(left)} and "
                             f"{_describe(right)}", column, 1)
    a, b = _numeric(left), _numeric(right)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return _combine_arrays(op, _NUMPY_ARITHMETIC[op], a, b, column)
    if op in "/%" and b == 0:
        what = "division" if op == "/" else "modulo"
        raise PredicateError(f"{what} by zero", column, 1)
    try:
        return _PYTHON_ARITHMETIC[op](a, b)  # type: ignore[return-value]
    except OverflowError:
        raise PredicateError(f"'{op}' gives a number too large", column, 1) from None


def _compare(op: str, left: Value, right: Value, column: int) -> Value:
    if isinstance(left, str) != isinstance(right, str):
        raise PredicateError(f"cannot compare {_describe(left)} with {_describe(right)}",
                             column, len(op))
    if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
        return _combine_arrays(op, _COMPARISONS[op], left, right, column)
    return _COMPARISONS[op](left, right)  # type: ignore[return-value]


def _truth(value: Value, what: str, column: int, length: int) -> bool:
    if isinstance(value, str):
        raise PredicateError(f"{what} needs a boolean or a number, got a string", column,
                             length)
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise PredicateError(f"{what} needs one value, got an array of shape "
                                 f"{value.shape}", column, length)
        value = value.reshape(()).item()
    if isinstance(value, float) and math.isnan(value):
        raise PredicateError(f"{what} got NaN, which is neither true nor false", column,
                             length)
    return bool(value)


def _call(node: Call, value: Value) -> Value:
    name, column, length = node.function, node.column, len(node.function)
    if isinstance(value, str):
        raise PredicateError(f"'{name}' needs a number or an array, got a string", column,
                             length)
    value = _numeric(value)
    if name == "abs":
        return abs(value) if not isinstance(value, np.ndarray) else np.abs(value)
    try:
        array = np.asarray(value)
        if array.dtype.kind == "O":  # a Python int beyond int64
            array = np.asarray(float(value))  # type: ignore[arg-type]
    except OverflowError:
        raise PredicateError(f"'{name}' got a number too large", column, length) from None
    if name == "size":
        return int(array.size)
    if name == "dim":
        return int(array.ndim)
    if name == "len":
        if array.ndim == 0:
            raise PredicateError("'len' needs an array, got a scalar", column, length,
                                 "size counts all elements")
        return int(array.shape[0])
    if array.size == 0 and name in ("mean", "std", "min", "max"):
        raise PredicateError(f"'{name}' of an empty array", column, length)
    with np.errstate(all="ignore"):
        if name == "norm":
            return _normalize(np.linalg.norm(array.reshape(-1)))
        reduce = {"mean": np.mean, "sum": np.sum, "min": np.min, "max": np.max,
                  "std": np.std}[name]
        return _normalize(reduce(array))


def _evaluate(node: Node, env: Mapping[str, object]) -> Value:
    match node:
        case Number(value=value) | String(value=value) | Boolean(value=value):
            return value
        case Name():
            return _lookup(node, env)
        case Call(argument=argument):
            return _call(node, _evaluate(argument, env))
        case Negate(operand=operand):
            value = _evaluate(operand, env)
            if isinstance(value, str):
                raise PredicateError("'-' needs a number, got a string", node.column, 1)
            value = _numeric(value)
            return np.negative(value) if isinstance(value, np.ndarray) else -value
        case Not(operand=operand):
            return not _truth(_evaluate(operand, env), "'not'", node.column, 3)
        case Compare(op=op, left=left, right=right):
            return _compare(op, _evaluate(left, env), _evaluate(right, env), node.op_column)
        case Arithmetic(first=first, steps=steps):
            value = _evaluate(first, env)
            for step in steps:
                value = _arithmetic(step.op, value, _evaluate(step.operand, env), step.column)
            return value
        case Logical(op=op, operands=operands, op_columns=columns):
            stop_on = op == "or"  # 'or' stops at the first true operand, 'and' at a false one
            for index, operand in enumerate(operands):
                column = columns[max(index - 1, 0)]
                if _truth(_evaluate(operand, env), f"'{op}'", column, len(op)) == stop_on:
                    return stop_on
            return not stop_on
    raise TypeError(f"not a predicate node: {node!r}")


# -------------------------------------------------------------------------------- predicate

@dataclass(frozen=True, slots=True, repr=False)
class Predicate:
    """A parsed predicate: the source ``text`` and the ``root`` node of its tree.

    Two predicates are equal when their trees are (spacing and redundant parentheses aside).
    """
    text: str = field(compare=False)
    root: Node

    def names(self) -> frozenset[str]:
        """Every name the predicate reads (``x``, ``params.k``, ``loop.i``)."""
        return frozenset(node.name for node in _walk(self.root) if isinstance(node, Name))

    def name_refs(self) -> tuple[Name, ...]:
        """Every ``Name`` node in source order, with its column and length (for errors that
        point at one name, such as "no value named 'x' here")."""
        refs = [node for node in _walk(self.root) if isinstance(node, Name)]
        return tuple(sorted(refs, key=lambda node: node.column))

    def functions(self) -> frozenset[str]:
        """Every function the predicate calls."""
        return frozenset(node.function for node in _walk(self.root) if isinstance(node, Call))

    def uses_only(self, prefixes: str | Iterable[str]) -> bool:
        """True when every name is one of ``prefixes`` or below it: ``uses_only("params")``
        holds for a predicate over ``params.*`` only (resolvable when the spec loads)."""
        allowed = (prefixes,) if isinstance(prefixes, str) else tuple(prefixes)
        return all(any(name == p or name.startswith(p if p.endswith(".") else p + ".")
                       for p in allowed) for name in self.names())

    def evaluate(self, env: Mapping[str, object]) -> bool | int | float | str:
        """The value of the predicate with names taken from ``env``.

        ``env`` maps names to Python numbers, booleans, strings, numpy arrays or objects with
        an ``.array`` (graphcore Variables); ``params.k`` is found as the key ``"params.k"``
        or as ``env["params"]["k"]``. Arithmetic on arrays is numpy's, elementwise; the result
        must be one value (a one-element array counts).
        """
        value = _evaluate(self.root, env)
        if isinstance(value, np.ndarray):
            if value.size != 1:
                raise PredicateError(f"predicate must give one value, got an array of shape "
                                     f"{value.shape}", 1, len(self.text))
            value = value.reshape(()).item()
        return value

    def evaluate_bool(self, env: Mapping[str, object]) -> bool:
        """`evaluate`, then the truth of the result (a number is true when nonzero)."""
        value = self.evaluate(env)
        if isinstance(value, str):
            raise PredicateError("predicate must give a boolean or a number, got a string",
                                 1, len(self.text))
        return _truth(value, "predicate", 1, len(self.text))

    def __str__(self) -> str:
        """Canonical text: single spaces, single quotes, only the parentheses needed."""
        return _format(self.root)

    def __repr__(self) -> str:
        return f"Predicate({self.text!r})"
