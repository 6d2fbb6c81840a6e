"""Chainer's ``chainer.utils.type_check``: checks of a function's input types written as
expressions that explain themselves when they fail.

``check_type_forward(in_types)`` gets a ``TypeInfoTuple`` of ``Variable`` atoms (one per
input, each holding a ``TypeInfo``: ``shape``, ``dtype``, ``ndim``, ``size``); an expression
over them (``in_types[0].ndim >= 2``) is an ``Expr`` tree, and ``expect(*conditions)`` evaluates
each and raises ``InvalidType`` with the failing condition and the values it saw. In light mode
(``with light_mode:``) the same code runs on plain values (``LightTypeInfoTuple``, arrays) and
the checks are plain booleans: faster, with a terser error.

``InvalidType`` is ``graphcore.errors.InvalidType``, the base of graphcore's ``ShapeError`` and
``DTypeError``: a caller that catches it catches graphcore's own input checks too.
"""

from __future__ import annotations

import contextlib
import operator
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from graphcore.errors import InvalidType, function_check

__all__ = [
    "Atom", "BinaryOperator", "BoolBinaryOperator", "Call", "Constant", "Expr", "GetAttr",
    "GetItem", "InvalidType", "LightMode", "LightTypeInfoTuple", "Testable", "TypeInfo",
    "TypeInfoTuple", "UnaryOperator", "Variable", "argname", "eval", "expect",
    "expect_broadcast_shapes", "get_function_check_context", "get_light_types", "get_types",
    "in_light_mode", "light_mode", "make_variable", "prod", "same_types",
]

_light = threading.local()


@contextlib.contextmanager
def get_function_check_context(function: Any) -> Iterator[None]:
    """Inside the block, an ``InvalidType`` raised names ``function`` (its ``label``)."""
    previous = getattr(function_check, "current", None)
    function_check.current = function
    try:
        yield
    finally:
        function_check.current = previous


class TypeInfo:
    """Shape and dtype of one input or gradient array (device-independent)."""

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)

    @property
    def size(self) -> int:
        size = 1
        for n in self.shape:
            size *= n
        return size


class TypeInfoTuple(tuple):
    """The ``Variable`` atoms of a function's inputs; ``size()`` is an expression of its
    length, named after the tuple (``in_types.size``)."""

    name: str = "in_types"

    def size(self) -> Variable:
        return Variable(len(self), f"{self.name}.size")


class LightTypeInfoTuple(tuple):
    """The inputs themselves (arrays or ``TypeInfo``), for light mode; ``size()`` is their
    number."""

    def size(self) -> int:
        return len(self)


def get_types(data: tuple, name: str, accept_none: bool, *,
              shapes: tuple | None = None) -> TypeInfoTuple:
    """``data``'s arrays as ``TypeInfoTuple`` atoms named ``name[i]`` (``shapes``: the shapes
    to report instead of the arrays' own). ``accept_none``: a ``None`` (a gradient not given)
    becomes a ``TypeInfo`` of shape ``()`` and dtype ``None``."""
    if not isinstance(data, tuple):
        raise TypeError(f"get_types: data must be a tuple, got {type(data).__name__}")
    if shapes is None:
        shapes = tuple(None if x is None else x.shape for x in data)
    info = TypeInfoTuple(_get_type(name, i, x, accept_none, shape)
                         for i, (x, shape) in enumerate(zip(data, shapes, strict=True)))
    info.name = name
    return info


def get_light_types(data: tuple, *, shapes: tuple | None = None) -> LightTypeInfoTuple:
    """``data`` for light mode (with ``shapes``: ``TypeInfo`` of those shapes and the arrays'
    dtypes)."""
    if not isinstance(data, tuple):
        raise TypeError(f"get_light_types: data must be a tuple, got {type(data).__name__}")
    if shapes is None:
        return LightTypeInfoTuple(data)
    return LightTypeInfoTuple(TypeInfo(shape, x.dtype) for x, shape in zip(data, shapes,
                                                                            strict=True))


def _get_type(name: str, index: int, array: Any, accept_none: bool, shape: Any) -> Variable:
    label = f"{name}[{index}]"
    if accept_none and array is None:
        return Variable(TypeInfo((), None), label)
    if not isinstance(array, np.ndarray):
        raise InvalidType(f"isinstance({label}, ndarray)", f"type({label}) == {type(array)}")
    return Variable(TypeInfo(shape, array.dtype), label)


def _unary(symbol: str, priority: int, func: Callable) -> Callable:
    def make(x: Any) -> UnaryOperator:
        return UnaryOperator(priority, x, symbol, func)
    return make


def _binary(symbol: str, priority: int, func: Callable, right_associative: bool = False,
            flip: bool = False) -> Callable:
    if flip:
        def make(x: Any, y: Any) -> BinaryOperator:
            return BinaryOperator(priority, y, x, symbol, func, right_associative)
    else:
        def make(x: Any, y: Any) -> BinaryOperator:
            return BinaryOperator(priority, x, y, symbol, func, right_associative)
    return make


def _compare(symbol: str, inverse: str, func: Callable) -> Callable:
    def make(x: Any, y: Any) -> BoolBinaryOperator:
        return BoolBinaryOperator(x, y, symbol, inverse, func)
    return make


class Expr:
    """A node of an expression tree. ``eval()`` computes its value, ``str()`` writes it as
    source (``in_types[0].ndim >= 2``); comparisons build ``Testable`` nodes for ``expect``.
    An ``Expr`` cannot be a bool: ``x == y and y == z`` would silently test only the second."""

    def __init__(self, priority: int) -> None:
        self.priority = priority

    def eval(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} defines no eval")

    def __getattr__(self, name: str) -> GetAttr:
        if name.startswith("__"):  # copy, pickle and friends probe dunders
            raise AttributeError(name)
        return GetAttr(self, name)

    def __getitem__(self, key: Any) -> GetItem:
        return GetItem(self, key)

    def __call__(self, *args: Any) -> Call:
        return Call(self, args)

    def __bool__(self) -> bool:
        raise RuntimeError("An Expr instance cannot be evaluated as bool. Please use "
                           "chainer.utils.type_check.eval() to evaluate an expression.")

    __hash__ = object.__hash__

    # Python's operator priorities, lowest first: | ^ & shifts +- */%// unary **.
    __eq__ = _compare("==", "!=", operator.eq)
    __ne__ = _compare("!=", "==", operator.ne)
    __lt__ = _compare("<", ">=", operator.lt)
    __le__ = _compare("<=", ">", operator.le)
    __gt__ = _compare(">", "<=", operator.gt)
    __ge__ = _compare(">=", "<", operator.ge)

    __add__ = _binary("+", 4, operator.add)
    __radd__ = _binary("+", 4, operator.add, flip=True)
    __sub__ = _binary("-", 4, operator.sub)
    __rsub__ = _binary("-", 4, operator.sub, flip=True)
    __mul__ = _binary("*", 5, operator.mul)
    __rmul__ = _binary("*", 5, operator.mul, flip=True)
    __truediv__ = _binary("/", 5, operator.truediv)
    __rtruediv__ = _binary("/", 5, operator.truediv, flip=True)
    __floordiv__ = _binary("//", 5, operator.floordiv)
    __rfloordiv__ = _binary("//", 5, operator.floordiv, flip=True)
    __mod__ = _binary("%", 5, operator.mod)
    __rmod__ = _binary("%", 5, operator.mod, flip=True)
    __pow__ = _binary("**", 7, operator.pow, right_associative=True)
    __lshift__ = _binary("<<", 3, operator.lshift)
    __rlshift__ = _binary("<<", 3, operator.lshift, flip=True)
    __rshift__ = _binary(">>", 3, operator.rshift)
    __rrshift__ = _binary(">>", 3, operator.rshift, flip=True)
    __and__ = _binary("&", 2, operator.and_)
    __rand__ = _binary("&", 2, operator.and_, flip=True)
    __xor__ = _binary("^", 1, operator.xor)
    __rxor__ = _binary("^", 1, operator.xor, flip=True)
    __or__ = _binary("|", 0, operator.or_)
    __ror__ = _binary("|", 0, operator.or_, flip=True)

    __neg__ = _unary("-", 6, operator.neg)
    __pos__ = _unary("+", 6, operator.pos)
    __invert__ = _unary("~", 6, operator.invert)


def _eval_expr(value: Any) -> Any:
    if isinstance(value, Expr):
        return value.eval()
    if isinstance(value, list):
        return [_eval_expr(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_eval_expr(v) for v in value)
    return value


def _repr(value: Any) -> str:
    if isinstance(value, Expr):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(_repr, value)) + "]"
    if isinstance(value, tuple):
        if len(value) == 1:
            return f"({_repr(value[0])},)"
        return "(" + ", ".join(map(_repr, value)) + ")"
    return repr(value)


class Atom(Expr):
    """A leaf or a postfix form (attribute, item, call): binds tightest."""

    def __init__(self) -> None:
        super().__init__(8)


class Constant(Atom):
    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value

    def __str__(self) -> str:
        return _repr(self.value)

    def eval(self) -> Any:
        return self.value


class Variable(Atom):
    """A named value (``in_types[0]``, ``prod``)."""

    def __init__(self, value: Any, name: str) -> None:
        super().__init__()
        self.value = value
        self.name = name

    def __str__(self) -> str:
        return self.name

    def eval(self) -> Any:
        return self.value


class GetAttr(Atom):
    def __init__(self, obj: Any, name: Any) -> None:
        super().__init__()
        self.obj = obj
        self.name = name

    def __str__(self) -> str:
        if isinstance(self.name, str):
            return f"{_repr(self.obj)}.{self.name}"
        if isinstance(self.name, Constant) and isinstance(self.name.value, str):
            return f"{_repr(self.obj)}.{self.name.value}"
        return f"getattr({_repr(self.obj)}, {_repr(self.name)})"

    def eval(self) -> Any:
        return getattr(_eval_expr(self.obj), _eval_expr(self.name))


def _str_subscript(key: Any) -> str:
    if key is Ellipsis:
        return "..."
    if isinstance(key, slice):
        parts = ["" if v is None else _repr(v) for v in (key.start, key.stop)]
        if key.step is not None:
            parts.append(_repr(key.step))
        return ":".join(parts)
    if isinstance(key, tuple):
        return ", ".join(map(_str_subscript, key))
    return _repr(key)


class GetItem(Atom):
    def __init__(self, obj: Any, key: Any) -> None:
        super().__init__()
        self.obj = obj
        self.key = key

    def __str__(self) -> str:
        return f"{_repr(self.obj)}[{_str_subscript(self.key)}]"

    def eval(self) -> Any:
        return _eval_expr(self.obj)[_eval_expr(self.key)]


class Call(Atom):
    def __init__(self, obj: Any, args: tuple) -> None:
        super().__init__()
        self.obj = obj
        self.args = tuple(args)

    def __str__(self) -> str:
        return f"{_repr(self.obj)}({', '.join(map(_repr, self.args))})"

    def eval(self) -> Any:
        func = _eval_expr(self.obj)
        return func(*[_eval_expr(a) for a in self.args])


class UnaryOperator(Expr):
    def __init__(self, priority: int, term: Any, exp: str, func: Callable) -> None:
        super().__init__(priority)
        self.term = term
        self.exp = exp
        self.func = func

    def eval(self) -> Any:
        return self.func(_eval_expr(self.term))

    def __str__(self) -> str:
        text = _repr(self.term)
        if isinstance(self.term, Expr) and self.term.priority < self.priority:
            text = f"({text})"
        return self.exp + text


class BinaryOperator(Expr):
    def __init__(self, priority: int, lhs: Any, rhs: Any, exp: str, func: Callable,
                 right_associative: bool = False) -> None:
        super().__init__(priority)
        self.lhs = lhs
        self.rhs = rhs
        self.exp = exp
        self.func = func
        self.right_associative = right_associative

    def eval(self) -> Any:
        return self.func(self._eval_left(), self._eval_right())

    def _eval_left(self) -> Any:
        return _eval_expr(self.lhs)

    def _eval_right(self) -> Any:
        return _eval_expr(self.rhs)

    def __str__(self) -> str:
        # Parenthesize an operand that binds looser, and one of the same priority on the side
        # the operator does not associate to (x - (y - z), (x ** y) ** z).
        left = _repr(self.lhs)
        if isinstance(self.lhs, Expr) and (
                self.priority > self.lhs.priority
                or (self.right_associative and self.priority == self.lhs.priority)):
            left = f"({left})"
        right = _repr(self.rhs)
        if isinstance(self.rhs, Expr) and (
                self.priority > self.rhs.priority
                or (not self.right_associative and self.priority == self.rhs.priority)):
            right = f"({right})"
        return f"{left} {self.exp} {right}"


class Testable:
    """A condition ``expect`` can test."""

    def expect(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} defines no expect")


class BoolBinaryOperator(BinaryOperator, Testable):
    """A comparison; ``expect()`` raises ``InvalidType`` when it does not hold, with the
    condition and its evaluated operands under the inverse comparison."""

    def __init__(self, lhs: Any, rhs: Any, exp: str, inv: str, func: Callable) -> None:
        BinaryOperator.__init__(self, -1, lhs, rhs, exp, func)
        self.inv = inv

    def expect(self) -> None:
        left = self._eval_left()
        right = self._eval_right()
        if not self.func(left, right):
            raise InvalidType(f"{self.lhs} {self.exp} {self.rhs}", f"{left} {self.inv} {right}")


def argname(in_types: tuple, names: tuple[str, ...]) -> None:
    """Name the atoms of ``in_types`` after ``names`` (``x``, ``W``) for the error messages;
    ``InvalidType`` when their numbers differ (a function given the wrong number of inputs)."""
    if len(in_types) != len(names):
        raise InvalidType(f"{len(names)} argument(s)", f"{len(in_types)} argument(s)",
                          "Invalid number of arguments")
    for in_type, name in zip(in_types, names, strict=True):
        if isinstance(in_type, Variable):
            in_type.name = name


def expect(*bool_exprs: Any) -> None:
    """Test each condition in order; ``InvalidType`` at the first that does not hold."""
    if in_light_mode():
        if not all(bool_exprs):
            raise InvalidType("", "")
        return
    for condition in bool_exprs:
        if not isinstance(condition, Testable):
            raise TypeError(f"type_check.expect: a condition must be a comparison of type-check "
                            f"expressions, got {type(condition).__name__}")
        condition.expect()


def same_types(*arrays: Any) -> bool:
    """Whether ``arrays`` are all of one array type (all numpy arrays here)."""
    return all(isinstance(x, np.ndarray) for x in arrays)


def eval(exp: Any) -> Any:  # noqa: A001 - Chainer's name
    """The value of ``exp`` (in light mode ``exp`` is already a value)."""
    return exp if in_light_mode() else exp.eval()


def make_variable(value: Any, name: str) -> Any:
    """``value`` as a named atom (in light mode, the value itself)."""
    return value if in_light_mode() else Variable(value, name)


def _make_variable_from_array(array: Any, name: str) -> Any:
    if not isinstance(array, np.ndarray):
        raise InvalidType(f"isinstance({name}, ndarray)", f"type({name}) == {type(array)}")
    return array if in_light_mode() else Variable(TypeInfo(array.shape, array.dtype), name)


class LightMode:
    """``with light_mode:`` runs type checks on plain values (this thread only)."""

    def __enter__(self) -> None:
        _light.on = True

    def __exit__(self, *_exc: object) -> None:
        _light.on = False


light_mode = LightMode()


def in_light_mode() -> bool:
    return getattr(_light, "on", False)


def _prod_impl(xs: Any) -> Any:
    result = 1
    for x in xs:
        result *= x
    return result


_prod = Variable(_prod_impl, "prod")


def prod(xs: Any) -> Any:
    """The product of ``xs`` (an expression of it outside light mode)."""
    return _prod_impl(xs) if in_light_mode() else _prod(xs)


def expect_broadcast_shapes(*shape_types: Any) -> None:
    """``InvalidType`` listing the shapes when they cannot be broadcast together."""
    shapes = [eval(s) for s in shape_types]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        lines = ["cannot broadcast inputs of the following shapes:"]
        lines += [f"{t} = {s}" for t, s in zip(shape_types, shapes, strict=True)]
        raise InvalidType("", "", msg="\n".join(lines)) from None
