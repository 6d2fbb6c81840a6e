"""The op registry: every op class, by name, with the flags the rest of graphtool reads.

The engine, the spec validator, ``graphtool ops``, the static-mode passes and the test suite
all discover ops here, so an op is declared exactly once (its ``FunctionNode`` subclass).
"""

from __future__ import annotations

import difflib

from graphcore import errors
from graphcore.function_node import FunctionNode

_ops: dict[str, type[FunctionNode]] = {}


def register_op(op: str | type[FunctionNode] | None = None,
                cls: type[FunctionNode] | None = None, /, *, name: str | None = None,
                replace: bool = False):
    """Make an op usable by name (specs, ``graphtool ops``, tests). Returns the class.

    Either a call or a class decorator; the name is the op's ``name`` attribute unless given:

    >>> register_op("swish", Swish)          # a call: name, then the FunctionNode subclass
    >>> @register_op                         # a decorator, using the class's ``name``
    ... class Cube(FunctionNode):
    ...     name = "cube"
    >>> @register_op("cube")                 # a decorator with a name
    >>> @register_op(name="cube", replace=True)   # replace an op registered before

    A name already taken by another class raises ``RegistryError`` unless ``replace=True``;
    a class redefined under the same module and name (a re-run cell or snippet) replaces the
    old one.
    """
    if isinstance(op, str):
        if name is not None:
            raise errors.ArgumentTypeError(f"register_op: the name is given twice ({op!r} and "
                                           f"name={name!r})")
        name, op = op, cls
    elif cls is not None:
        raise errors.ArgumentTypeError(
            f"register_op(name, cls): the name (a str) comes first, got {type(op).__name__} "
            f"then {type(cls).__name__}")
    if name is not None and not isinstance(name, str):
        raise errors.ArgumentTypeError(f"register_op: name must be a str, got "
                                       f"{type(name).__name__}")

    def add(op: type[FunctionNode]) -> type[FunctionNode]:
        if not isinstance(op, type) or not issubclass(op, FunctionNode):
            raise errors.ArgumentTypeError(
                f"register_op: expected a FunctionNode subclass, got "
                f"{op.__name__ if isinstance(op, type) else type(op).__name__}; "
                "call register_op(\"name\", OpClass) or decorate the class with @register_op")
        key = name or op.name
        if not key or not isinstance(key, str):
            raise errors.RegistryError(f"{op.__name__}: an op needs a string `name` to register "
                                       f"(register_op(\"name\", {op.__name__}))")
        if key in _ops and _ops[key] is not op and not replace and not _redefines(op, _ops[key]):
            raise errors.RegistryError(f"op name {key!r} is already registered by "
                                       f"{_ops[key].__module__}.{_ops[key].__name__}")
        op.name = key
        _ops[key] = op
        return op

    return add(op) if op is not None else add


def _redefines(new: type, old: type) -> bool:
    return (new.__module__, new.__qualname__) == (old.__module__, old.__qualname__)


def get_op(name: str) -> type[FunctionNode]:
    """The op class registered as ``name``; the error suggests the closest names."""
    if not isinstance(name, str):
        raise errors.ArgumentTypeError(f"get_op: name must be a str, got {type(name).__name__}")
    try:
        return _ops[name]
    except KeyError:
        raise errors.RegistryError(f"unknown op {name!r}{did_you_mean(name, _ops)}") from None


def all_ops() -> dict[str, type[FunctionNode]]:
    """Every registered op, sorted by name."""
    return dict(sorted(_ops.items()))


def suggestion(word: str, choices: object) -> str | None:
    """``"did you mean 'relu'?"`` for the closest of ``choices``, or None (every did-you-mean
    hint in graphtool comes from here).

    The closest is, in order: the same name in another case (``SGD`` -> ``sgd``); the one
    name that ``word`` abbreviates part by part (``acc`` -> ``accuracy``, ``val_acc`` ->
    ``validation_accuracy``); else the closest spelling (``sigmod`` -> ``sigmoid``).
    """
    names = [str(c) for c in choices]
    lowered = word.lower()
    same = [name for name in names if name.lower() == lowered]
    if same:
        return f"did you mean '{same[0]}'?" if same[0] != word else None
    abbreviated = [name for name in names if _abbreviates(lowered, name.lower())]
    if len(abbreviated) == 1:
        return f"did you mean '{abbreviated[0]}'?"
    by_lower = {}
    for name in names:
        by_lower.setdefault(name.lower(), name)
    close = difflib.get_close_matches(lowered, list(by_lower), n=1, cutoff=0.6)
    return f"did you mean '{by_lower[close[0]]}'?" if close else None


def _abbreviates(word: str, name: str) -> bool:
    """Whether each ``_``-part of ``word`` (at least two letters) begins the same part of
    ``name``: ``acc`` abbreviates ``accuracy``, ``val_loss`` ``validation_loss``."""
    parts, name_parts = word.split("_"), name.split("_")
    return (len(parts) == len(name_parts) and word != name
            and all(len(p) >= 2 and n.startswith(p) for p, n in zip(parts, name_parts,
                                                                    strict=True)))


def did_you_mean(word: str, choices: object) -> str:
    """``"; did you mean 'relu'?"`` to append to a message, or an empty string."""
    hint = suggestion(word, choices)
    return f"; {hint}" if hint else ""
