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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from graphcore.language.predicate.evaluate import evaluate_node, truth
from graphcore.language.predicate.nodes import (
    FUNCTIONS,
    MAX_DEPTH,
    MAX_LENGTH,
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
    to_spec_error,
    walk,
)
from graphcore.language.predicate.parse import Parser, Tokenizer, format_tree

__all__ = [
    "FUNCTIONS", "MAX_DEPTH", "MAX_LENGTH", "Arithmetic", "Boolean", "Call", "Compare",
    "Logical", "Name", "Negate", "Node", "Not", "Number", "Predicate", "PredicateError", "Step",
    "String", "parse_predicate", "to_spec_error",
]


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
    return Predicate(text, Parser(Tokenizer(text).run()).parse())



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
        return frozenset(node.name for node in walk(self.root) if isinstance(node, Name))

    def name_refs(self) -> tuple[Name, ...]:
        """Every ``Name`` node in source order, with its column and length (for errors that
        point at one name, such as "no value named 'x' here")."""
        refs = [node for node in walk(self.root) if isinstance(node, Name)]
        return tuple(sorted(refs, key=lambda node: node.column))

    def functions(self) -> frozenset[str]:
        """Every function the predicate calls."""
        return frozenset(node.function for node in walk(self.root) if isinstance(node, Call))

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
        value = evaluate_node(self.root, env)
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
        return truth(value, "predicate", 1, len(self.text))

    def __str__(self) -> str:
        """Canonical text: single spaces, single quotes, only the parentheses needed."""
        return format_tree(self.root)

    def __repr__(self) -> str:
        return f"Predicate({self.text!r})"

