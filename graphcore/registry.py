"""The op registry: every op class, by name, with the flags the rest of graphtool reads.

The engine, the spec validator, ``graphtool ops``, the static-mode passes and the test suite
all discover ops here, so an op is declared exactly once (its ``FunctionNode`` subclass).
"""

from __future__ import annotations

import difflib

from graphcore import errors
from graphcore.function_node import FunctionNode

_ops: dict[str, type[FunctionNode]] = {}


def register_op(cls: type[FunctionNode] | None = None, *, name: str | None = None,
                replace: bool = False):
    """Class decorator: make an op usable by name (specs, ``graphtool ops``, tests).

    >>> @register_op
    ... class Cube(FunctionNode):
    ...     name = "cube"
    ...     ...
    """

    def add(op: type[FunctionNode]) -> type[FunctionNode]:
        key = name or op.name
        if not key or not isinstance(key, str):
            raise errors.RegistryError(f"{op.__name__}: an op needs a string `name` to register")
        if not issubclass(op, FunctionNode):
            raise errors.RegistryError(f"{op.__name__}: ops must subclass FunctionNode")
        if key in _ops and _ops[key] is not op and not replace:
            raise errors.RegistryError(f"op name {key!r} is already registered by "
                                       f"{_ops[key].__module__}.{_ops[key].__name__}")
        op.name = key
        _ops[key] = op
        return op

    return add(cls) if cls is not None else add


def get_op(name: str) -> type[FunctionNode]:
    """The op class registered as ``name``; the error suggests the closest names."""
    try:
        return _ops[name]
    except KeyError:
        raise errors.RegistryError(f"unknown op {name!r}{did_you_mean(name, _ops)}") from None


def all_ops() -> dict[str, type[FunctionNode]]:
    """Every registered op, sorted by name."""
    return dict(sorted(_ops.items()))


def suggestion(word: str, choices: object) -> str | None:
    """``"did you mean 'relu'?"`` for the closest of ``choices``, or None (every did-you-mean
    hint in graphtool comes from here)."""
    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def did_you_mean(word: str, choices: object) -> str:
    """``"; did you mean 'relu'?"`` to append to a message, or an empty string."""
    hint = suggestion(word, choices)
    return f"; {hint}" if hint else ""
