"""Tokenizer, recursive-descent parser and canonical printer of the predicate language.

No ``eval``, ``exec``, ``ast`` or attribute access: every character is read here."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from graphcore.language.predicate.nodes import (
    BINARY,
    COMPARE,
    FUNCTIONS,
    KEYWORDS,
    LOOP_FIELDS,
    MAX_DEPTH,
    NEGATE,
    NOT,
    OR,
    Arithmetic,
    Boolean,
    Call,
    Compare,
    Logical,
    Name,
    Negate,
    Node,
    Not,
    Number,
    PredicateError,
    Step,
    String,
    precedence_of,
)
from graphcore.registry import suggestion as _did_you_mean

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


class Tokenizer:
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



# ----------------------------------------------------------------------------------- parser

class Parser:
    """Precedence climbing over the token list; recursion is bounded by `MAX_DEPTH`."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.index = 0
        self.nesting = 0

    def parse(self) -> Node:
        node = self._expression(OR)
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
            precedence = BINARY.get(token.text) if token.kind in ("op", "keyword") else None
            if precedence is None or precedence < min_precedence:
                return left
            if precedence == COMPARE and after_comparison:
                raise PredicateError("comparisons cannot be chained", token.column,
                                     token.length, "join comparisons with 'and': a < b and b < c")
            self._advance()
            right = self._expression(precedence + 1)
            left = self._combine(left, token, right, start.column)
            after_comparison = precedence == COMPARE

    def _combine(self, left: Node, token: _Token, right: Node, column: int) -> Node:
        span = {"column": column, "length": self._previous_end() - column}
        op = token.text
        if op in ("and", "or"):
            if isinstance(left, Logical) and left.op == op:
                operands, columns = (*left.operands, right), (*left.op_columns, token.column)
            else:
                operands, columns = (left, right), (token.column,)
            node: Node = Logical(op, operands, columns, **span, depth=_depth(operands))
        elif BINARY[op] == COMPARE:
            node = Compare(op, left, right, token.column, **span, depth=_depth((left, right)))
        else:
            step = Step(op, right, token.column)
            if isinstance(left, Arithmetic) and precedence_of(left) == BINARY[op]:
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
            if min_precedence > NOT:
                raise PredicateError("'not' cannot appear here without parentheses",
                                     token.column, token.length, "write (not ...)")
            node_type: type[Not] | type[Negate] = Not
            operand_precedence = NOT
        elif token.kind == "op" and token.text == "-":
            node_type, operand_precedence = Negate, NEGATE
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
            node = self._expression(OR)
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
            arguments.append(self._expression(OR))
            while self._peek().kind == ",":
                self._advance()
                arguments.append(self._expression(OR))
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



# ------------------------------------------------------------------------------- formatting

def format_tree(node: Node) -> str:
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
            return f"{function}({format_tree(argument)})"
        case Negate(operand=operand):
            return "-" + _wrap(operand, NEGATE)
        case Not(operand=operand):
            return "not " + _wrap(operand, NOT)
        case Compare(op=op, left=left, right=right):
            return f"{_wrap(left, COMPARE + 1)} {op} {_wrap(right, COMPARE + 1)}"
        case Arithmetic(first=first, steps=steps):
            level = precedence_of(node)
            return _wrap(first, level) + "".join(
                f" {step.op} {_wrap(step.operand, level + 1)}" for step in steps)
        case Logical(op=op, operands=operands):
            level = precedence_of(node)
            return f" {op} ".join(_wrap(operand, level + 1) for operand in operands)
    raise TypeError(f"not a predicate node: {node!r}")


def _wrap(node: Node, min_precedence: int) -> str:
    text = format_tree(node)
    return f"({text})" if precedence_of(node) < min_precedence else text


