"""Op attribute declarations (``Attr``) and their check when an op is constructed.

An op declares its attributes once (``attributes = {"axis": Attr(int, 1, ...)}``); the spec
validator, ``graphtool ops`` and the Python API all read that declaration. For the Python API,
``FunctionNode`` wraps each op's ``__init__`` (``checked_init``) so a wrong value fails where
it is given, naming the op and the attribute, instead of deep inside numpy or not at all.

The check costs a few set lookups per constructor call: the wrapper is generated with the
op's own signature (no ``*args`` repacking) and accepts plainly right values (an ``int`` for
an int, ``None`` where allowed, a number inside its range, a declared choice) inline; only
other values go through ``Attr.validate``. ``FunctionNode.apply`` checks no attribute.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graphcore import errors


class Attr:
    """Declaration of one op attribute: its type, default, allowed range and documentation.

    ``type`` is what a spec may write (and what ``graphtool ops`` shows); Python values are
    checked against the same declaration, with numpy scalars accepted as the Python numbers
    they stand for and an ``int`` where a number is declared (``bool`` is not an ``int``
    here). ``items`` is the type every element of a tuple/list value must have. ``check``,
    when given, replaces the type check for Python values: a function that raises
    ``TypeError``/``ValueError`` saying what the value must be (``Cast``'s dtype).
    """

    __slots__ = ("type", "default", "required", "doc", "choices", "low", "high", "items",
                 "check", "exact")

    def __init__(self, type: type | tuple[type, ...], default: Any = None, *,
                 required: bool = False, doc: str = "", choices: Sequence[Any] | None = None,
                 low: float | None = None, high: float | None = None,
                 items: type | None = None, check: Callable[[Any], None] | None = None,
                 ) -> None:
        self.type = type
        self.default = default
        self.required = required
        self.doc = doc
        self.choices = tuple(choices) if choices is not None else None
        self.low = low
        self.high = high
        self.items = items
        self.check = check
        self.exact = _exact_types(self)

    @property
    def types(self) -> tuple[type, ...]:
        return self.type if isinstance(self.type, tuple) else (self.type,)

    def validate(self, owner: str, key: str, value: Any, what: str = "attribute") -> None:
        """Raise ``ArgumentTypeError``/``ArgumentValueError`` naming ``owner`` and ``key``
        unless ``value`` fits this declaration."""
        where = f"{owner}: {what} '{key}'"
        if self.check is not None:
            try:
                self.check(value)
            except TypeError as e:
                raise errors.ArgumentTypeError(f"{where} {e}") from None
            except ValueError as e:
                raise errors.ArgumentValueError(f"{where} {e}") from None
            return
        types = self.types
        if object in types:
            return
        if not _is_instance(value, types, self.items):
            raise errors.ArgumentTypeError(
                f"{where} must be {describe_types(types, self.items)}, got {show(value)}")
        if value is None:
            return
        if self.choices is not None and value not in self.choices:
            raise errors.ArgumentValueError(
                f"{where} must be one of {', '.join(map(repr, self.choices))}, "
                f"got {show(value)}")
        if isinstance(value, int | float | np.number) and not isinstance(value, bool):
            if self.low is not None and not value >= self.low:  # NaN fails too
                raise errors.ArgumentValueError(
                    f"{where} must be at least {self.low}, got {show(value)}")
            if self.high is not None and not value <= self.high:
                raise errors.ArgumentValueError(
                    f"{where} must be at most {self.high}, got {show(value)}")


def _exact_types(attr: Attr) -> frozenset[type]:
    """Value types that need no look beyond ``type(value)`` (the constructor's fast path)."""
    types = attr.types
    if attr.check is not None or object in types:
        return frozenset()
    exact = {type(None)} if type(None) in types else set()
    if attr.choices is None and attr.low is None and attr.high is None:
        exact.update(t for t in (bool, int, float, str) if t in types)
        if float in types:
            exact.add(int)
        if attr.items is None:
            exact.update(t for t in (tuple, list) if t in types)
    return frozenset(exact)


def _is_instance(value: Any, types: tuple[type, ...], items: type | None) -> bool:
    if value is None:
        return type(None) in types
    if isinstance(value, bool | np.bool_):
        return bool in types
    if isinstance(value, int | np.integer):
        return int in types or float in types
    if isinstance(value, float | np.floating):
        return float in types
    if isinstance(value, tuple | list):
        if not (tuple in types or list in types):
            return False
        return items is None or all(_is_instance(v, (items,), None) for v in value)
    plain = tuple(t for t in types if t not in (bool, int, float, tuple, list))
    return bool(plain) and isinstance(value, plain)


def describe_types(types: tuple[type, ...], items: type | None = None) -> str:
    """``"an int or None"``: the Python types of a declaration, in words."""
    names = {int: "an int", float: "a number", bool: "True or False", str: "a str",
             type(None): "None"}
    words: list[str] = []
    for t in types:
        if t in (tuple, list):
            word = "a tuple or list" + (f" of {items.__name__}s" if items else "")
        else:
            word = names.get(t, t.__name__)
        if word not in words:
            words.append(word)
    if "an int" in words and "a number" in words:
        words.remove("an int")
    return " or ".join(words)


def show(value: Any) -> str:
    """A value as a message quotes it: short, with its type unless that is obvious."""
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    plain = value is None or isinstance(value, bool | int | float | str | tuple | list)
    return text if plain else f"{type(value).__name__} {text}"


def check_arguments(owner: str, declared: dict[str, Attr], **values: Any) -> None:
    """Validate a public function's arguments against ``Attr`` declarations (links,
    optimizers): ``check_arguments("Linear", _ARGS, in_size=in_size, out_size=out_size)``."""
    for key, value in values.items():
        attr = declared[key]
        if type(value) not in attr.exact:
            attr.validate(owner, key, value, what="argument")


# --- the checked constructor ----------------------------------------------------------------

def checked_init(init: Callable[..., None], attributes: dict[str, Attr]) -> Callable[..., None]:
    """``init`` behind a check of the declared attributes it receives.

    The wrapper has ``init``'s own signature, generated once per class (as ``dataclasses``
    generates ``__init__``), so a call costs one plain extra call and, per attribute, one
    type lookup; only a value that is not plainly right reaches ``Attr.validate``.
    """
    params = list(inspect.signature(init).parameters.values())[1:]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY) for p in params):
        return _generic_checked_init(init, attributes)
    # Builtins are bound under private names: a parameter may be called ``type``.
    namespace: dict[str, Any] = {"_init": init, "_type": type}
    signature, call, checks = ["self"], ["self"], []
    keyword_only = False
    for i, p in enumerate(params):
        if p.kind is p.KEYWORD_ONLY and not keyword_only:
            signature.append("*")
            keyword_only = True
        if p.default is p.empty:
            signature.append(p.name)
        else:
            namespace[f"_d{i}"] = p.default
            signature.append(f"{p.name}=_d{i}")
        call.append(f"{p.name}={p.name}" if keyword_only else p.name)
        attr = attributes.get(p.name)
        if attr is not None:
            checks.append(_check_source(attr, p.name, i, namespace))
    source = (f"def __init__({', '.join(signature)}):\n" + "".join(checks)
              + f"    _init({', '.join(call)})\n")
    code = compile(source, f"<checked {init.__qualname__}>", "exec")
    exec(code, namespace)  # noqa: S102 - source built from the op's own parameter names
    wrapper = namespace["__init__"]
    wrapper.__qualname__ = init.__qualname__
    wrapper.__doc__ = init.__doc__
    wrapper.__module__ = init.__module__
    wrapper.__wrapped__ = init
    wrapper.unchecked = init
    return wrapper


def _check_source(attr: Attr, name: str, i: int, namespace: dict[str, Any]) -> str:
    """``if <not plainly right>: validate`` for one parameter, accepting inline what it can."""
    namespace[f"_a{i}"] = attr
    namespace[f"_e{i}"] = attr.exact
    right = [f"_type({name}) in _e{i}"]
    types = attr.types
    if attr.check is None and object not in types:
        numbers = frozenset(t for t in (int, float) if t in types or (t is int and float in types))
        if numbers and (attr.low is not None or attr.high is not None) and attr.choices is None:
            namespace[f"_n{i}"] = numbers
            namespace[f"_lo{i}"] = -math.inf if attr.low is None else attr.low
            namespace[f"_hi{i}"] = math.inf if attr.high is None else attr.high
            right.append(f"(_type({name}) in _n{i} and _lo{i} <= {name} <= _hi{i})")
        sequences = frozenset(t for t in (tuple, list) if t in types)
        if sequences and attr.items is not None:
            namespace["_all_of"] = _all_of
            namespace[f"_s{i}"], namespace[f"_it{i}"] = sequences, attr.items
            right.append(f"(_type({name}) in _s{i} and _all_of(_it{i}, {name}))")
        if attr.choices is not None and all(isinstance(c, str) for c in attr.choices) \
                and str in types:
            namespace[f"_c{i}"] = frozenset(attr.choices)
            right.append(f"(_type({name}) is str and {name} in _c{i})")
    elif object in types:
        return ""
    return (f"    if not ({' or '.join(right)}):\n"
            f"        _a{i}.validate(_type(self).__name__, {name!r}, {name})\n")


def _all_of(kind: type, values: Sequence[Any]) -> bool:
    for v in values:
        if type(v) is not kind:
            return False
    return True


def _generic_checked_init(init: Callable[..., None],
                          attributes: dict[str, Attr]) -> Callable[..., None]:
    """The same check for a constructor with ``*args``/``**kwargs`` (slower: repacks)."""
    params = list(inspect.signature(init).parameters.values())[1:]
    positional = tuple(
        (p.name, attributes[p.name]) if p.name in attributes else None for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        for slot, value in zip(positional, args, strict=False):  # extra *args: unchecked
            if slot is not None and type(value) not in slot[1].exact:
                slot[1].validate(type(self).__name__, slot[0], value)
        for key, value in kwargs.items():
            attr = attributes.get(key)
            if attr is not None and type(value) not in attr.exact:
                attr.validate(type(self).__name__, key, value)
        init(self, *args, **kwargs)

    __init__.__qualname__ = init.__qualname__
    __init__.__wrapped__ = init  # type: ignore[attr-defined]
    __init__.unchecked = init  # type: ignore[attr-defined]
    return __init__
