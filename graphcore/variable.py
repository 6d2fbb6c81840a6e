"""``Variable``: an array plus the edge to the op that made it (define-by-run graph node).

A Variable is the graph's value node: ``creator`` is the ``FunctionNode`` that produced it, and
that node holds its inputs strongly and its outputs weakly, so the whole graph behind a result is
freed by reference counting as soon as the last reference to the result goes.
Arithmetic operators are installed by ``graphcore.ops.arithmetic`` (``x + y``, ``x @ W``, ...).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from graphcore import backend, errors, initializers

if TYPE_CHECKING:
    from graphcore.function_node import FunctionNode


class Variable:
    """An n-dimensional array that records how it was computed.

    >>> x = Variable(np.ones((2, 3), np.float32))
    >>> y = F.sum(x * x)
    >>> y.backward()
    >>> x.grad            # 2 * x
    """

    __slots__ = ("_array", "_grad", "creator", "name", "requires_grad", "rank", "_index",
                 "__weakref__")
    # numpy defers binary operators to ours: ``ndarray * Variable`` -> ``Variable.__rmul__``.
    __array_ufunc__ = None

    def __init__(self, array: np.ndarray | None = None, name: str | None = None,
                 grad: np.ndarray | None = None, requires_grad: bool = True) -> None:
        self._array = _check_array(array)
        if name is not None and not isinstance(name, str):
            raise errors.ArgumentTypeError(
                f"Variable: name must be a str or None, got {type(name).__name__}")
        if not isinstance(requires_grad, bool | np.bool_):
            raise errors.ArgumentTypeError(
                f"Variable: requires_grad must be True or False, got {requires_grad!r}")
        self._grad = _check_grad(self._array, grad, "Variable: grad")
        self.creator: FunctionNode | None = None
        self.name = name
        self.requires_grad = requires_grad
        self.rank = 0
        self._index = 0

    # --- data -------------------------------------------------------------------------------
    @property
    def array(self) -> np.ndarray:
        return self._array

    @array.setter
    def array(self, value: np.ndarray) -> None:
        self._array = _check_array(value)

    data = array

    @property
    def shape(self) -> tuple[int, ...]:
        return self._array.shape

    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def size(self) -> int:
        return self._array.size

    def __len__(self) -> int:
        return len(self._array)

    def item(self) -> Any:
        """The one element of the array as a Python scalar."""
        return self._array.item()

    @property
    def xp(self) -> Any:
        """The array module of this Variable's device: numpy."""
        return np

    @property
    def device(self) -> Any:
        """The device the array is on: the CPU (``'@numpy'``)."""
        return backend.CpuDevice()

    def to_device(self, device: Any) -> Variable:
        """Move the array and gradient to ``device`` (a Chainer device specifier; only the
        CPU exists, another raises ``DeviceUnavailable``). Returns this Variable."""
        target = backend.get_device(device)
        self._array = target.send(self._array)
        if not isinstance(self._grad, Variable):
            self._grad = target.send(self._grad)
        return self

    def to_cpu(self) -> Variable:
        """The array is on the CPU already."""
        return self.to_device("@numpy")

    def to_gpu(self, device: Any = None) -> Variable:
        """Raises ``DeviceUnavailable``: graphcore computes with numpy only."""
        backend.GpuDevice.from_device_id(0 if device is None else device)
        return self

    def to_intel64(self) -> Variable:
        """Raises ``DeviceUnavailable``: graphcore computes with numpy only."""
        backend.get_device("@intel64")
        return self

    def zerograd(self) -> None:
        """Set the gradient to zeros (Chainer deprecates it for ``cleargrad``)."""
        warnings.warn("Variable.zerograd is deprecated; use Variable.cleargrad instead",
                      DeprecationWarning, stacklevel=2)
        if self._array is not None:
            self._grad = np.zeros_like(self._array)

    def copydata(self, var: Variable) -> None:
        """Copy the array of ``var`` into this Variable's (an uninitialized Parameter takes
        ``var``'s shape first)."""
        src = var._array
        if src is None:
            if self._array is None:
                return
            var.initialize(self._array.shape)
            src = var._array
        if self._array is None:
            self.initialize(src.shape)
        np.copyto(self._array, src)

    def addgrad(self, var: Variable) -> None:
        """Add the gradient of ``var`` to this Variable's (an uninitialized Parameter takes
        ``var``'s shape first; ``var`` without a gradient adds nothing; this Variable without
        one shares ``var``'s, as in Chainer)."""
        src = var.grad_var
        if src is None:
            return
        if self._array is None:
            self.initialize(src.shape)
        dst = self.grad_var
        self.grad_var = src if dst is None else src + dst

    # --- gradient ---------------------------------------------------------------------------
    @property
    def grad(self) -> np.ndarray | None:
        g = self._grad
        return g._array if isinstance(g, Variable) else g

    @grad.setter
    def grad(self, value: np.ndarray | None) -> None:
        self._grad = _check_grad(self._array, value, "Variable.grad")

    @property
    def grad_var(self) -> Variable | None:
        g = self._grad
        if g is None or isinstance(g, Variable):
            return g
        self._grad = Variable(g, requires_grad=False)
        return self._grad

    @grad_var.setter
    def grad_var(self, value: Variable | None) -> None:
        if value is not None:
            if not isinstance(value, Variable):
                raise errors.ArgumentTypeError(f"Variable.grad_var must be a Variable or None, "
                                               f"got {type(value).__name__}")
            _check_grad(self._array, value._array, "Variable.grad_var")
        self._grad = value

    def cleargrad(self) -> None:
        """Forget the accumulated gradient (the next backward starts from nothing)."""
        self._grad = None

    @property
    def creator_node(self) -> FunctionNode | None:
        """Chainer's name for ``creator``."""
        return self.creator

    @property
    def label(self) -> str:
        """Shape and dtype as Chainer's graph dumps show them: ``(3, 5), float32``."""
        shape = self._array.shape if self._array is not None else None
        if shape == ():
            return str(self._array.dtype)
        if shape is None:
            return "uninitialized"
        return f"({', '.join(map(str, shape))}), {self._array.dtype}"

    # --- graph ------------------------------------------------------------------------------
    def backward(self, retain_grad: bool = False, enable_double_backprop: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``grad`` that requires one.

        Starts from ``self.grad`` when set, else from ones (only for a one-element output).
        Intermediate gradients are kept only with ``retain_grad=True``; with
        ``enable_double_backprop=True`` gradients are Variables with a graph of their own.
        Afterwards the values each op saved for backward are released unless ``retain_grad``
        or ``enable_double_backprop`` is set, so a second ``backward()`` needs one of them.
        """
        _backprop().backward_from(self, retain_grad, enable_double_backprop)

    def unchain(self) -> None:
        """Cut the edge to the creator: this Variable becomes a leaf of later graphs."""
        self.creator = None
        self.rank = 0

    def unchain_backward(self) -> None:
        """Cut the whole graph behind this Variable so it can be freed (truncated BPTT)."""
        from graphcore.function_node import unchain_graph  # noqa: PLC0415  (Chainer's circle)

        unchain_graph(self)

    def __repr__(self) -> str:
        """Chainer's form: ``variable([1., 2.])``, ``variable x([[0., 1.]])`` when named."""
        prefix = f"variable {self.name}" if self.name else "variable"
        array = self._array
        if array is None:
            body = "None"
        elif array.size > 0 or array.shape == (0,):
            body = np.array2string(array, separator=", ", prefix=prefix + "(")
        else:  # an empty array other than (0,) shows its shape, as numpy's repr does
            body = f"[], shape={array.shape!r}"
        return f"{prefix}({body})"

    def __str__(self) -> str:
        """Chainer's form: ``variable([1. 2.])`` (numpy's ``str`` of the array)."""
        prefix = f"variable {self.name}" if self.name else "variable"
        array = self._array
        body = "None" if array is None else np.array2string(array, separator=" ",
                                                              prefix=prefix + "(")
        return f"{prefix}({body})"

    def __bool__(self) -> bool:
        raise TypeError("the truth value of a Variable is ambiguous; use x.array for control flow")


# Array kinds no op computes with: object, text, bytes, structured, dates and durations.
_NOT_NUMERIC = frozenset("OUSVMm")


def _check_array(array: object) -> np.ndarray | None:
    if array is None:
        return array
    if type(array) is not np.ndarray:
        if not isinstance(array, np.ndarray | np.generic):
            raise errors.ArgumentTypeError(
                f"Variable holds a numpy.ndarray, got {type(array).__name__}; wrap it with "
                "np.asarray")
        array = np.asarray(array)
    if array.dtype.kind in _NOT_NUMERIC:
        raise errors.DTypeError(
            f"Variable holds a numeric (bool, integer, float) array, got dtype {array.dtype}")
    return array


def _check_grad(array: np.ndarray | None, grad: object, where: str) -> np.ndarray | None:
    """A gradient must match its Variable (Chainer's rule): an array of its shape and, for a
    floating-point Variable, its dtype; anything else would be summed into wrong results."""
    if grad is None:
        return None
    if not isinstance(grad, np.ndarray):
        raise errors.ArgumentTypeError(
            f"{where} must be a numpy.ndarray or None, got {type(grad).__name__}")
    if array is None:
        return grad
    if grad.shape != array.shape:
        raise errors.ShapeError(f"{where}: a gradient of shape {grad.shape} for a Variable of "
                                f"shape {array.shape}")
    if array.dtype.kind == "f" and grad.dtype != array.dtype:
        raise errors.DTypeError(f"{where}: a gradient of dtype {grad.dtype} for a Variable of "
                                f"dtype {array.dtype}")
    return grad


def new_output(array: np.ndarray, creator: FunctionNode, index: int, rank: int) -> Variable:
    """Make an op's output Variable without ``__init__``'s checks (the engine's hot path)."""
    v = Variable.__new__(Variable)
    v._array = array
    v._grad = None
    v.creator = creator
    v.name = None
    v.requires_grad = True
    v.rank = rank
    v._index = index
    return v


def constant(array: np.ndarray) -> Variable:
    """A Variable that needs no gradient (data, labels, results computed without a graph)."""
    v = Variable.__new__(Variable)
    v._array = array
    v._grad = None
    v.creator = None
    v.name = None
    v.requires_grad = False
    v.rank = 0
    v._index = 0
    return v


def as_variable(x: Variable | np.ndarray) -> Variable:
    """Return ``x`` if it is a Variable, else a constant Variable holding it (Chainer's name)."""
    if isinstance(x, Variable):
        return x
    if not isinstance(x, np.ndarray | np.generic | int | float):
        raise errors.ArgumentTypeError(f"as_variable takes a Variable or a numpy array, got "
                                       f"{type(x).__name__}")
    return constant(_check_array(np.asarray(x)))


def as_array(x: Variable | np.ndarray) -> np.ndarray:
    """Return the array inside ``x`` (or ``x`` itself)."""
    return x._array if isinstance(x, Variable) else np.asarray(x)


class Parameter(Variable):
    """A Variable owned by a Link, optionally created lazily from an initializer.

    ``Parameter(initializer)`` stays uninitialized (``array is None``) until ``initialize(shape)``
    runs, which lets ``Linear(None, n)`` learn its input size from the first batch.
    """

    __slots__ = ("initializer", "update_rule")

    def __init__(self, initializer: object = None, shape: tuple[int, ...] | None = None,
                 name: str | None = None) -> None:
        array = None
        if isinstance(initializer, np.ndarray):
            array, initializer = initializer, None
        elif not (initializer is None or callable(initializer) or (
                isinstance(initializer, int | float | np.number)
                and not isinstance(initializer, bool))):
            raise errors.ArgumentTypeError(
                f"Parameter: initializer must be None, a number, a numpy array or an "
                f"initializer (a callable filling an array), got {type(initializer).__name__}")
        super().__init__(array, name=name)
        self.initializer = initializer
        self.update_rule = None
        if shape is not None and array is None:
            self.initialize(shape)

    @property
    def is_initialized(self) -> bool:
        return self._array is not None

    def initialize(self, shape: tuple[int, ...]) -> None:
        if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
            shape = (int(shape),)
        if not isinstance(shape, tuple | list) or not all(
                isinstance(n, int | np.integer) and not isinstance(n, bool) and n >= 0
                for n in shape):
            raise errors.ArgumentTypeError(f"Parameter: shape must be a tuple of non-negative "
                                           f"ints, got {shape!r}")

        self._array = initializers.generate_array(self.initializer, shape)
        self._grad = None

    def zerograd(self) -> None:
        self._grad = None if self._array is None else np.zeros_like(self._array)


def _backprop():
    """``graphcore.backprop`` (it imports this module, so it is looked up on first use)."""
    global _backprop_module
    if _backprop_module is None:
        import graphcore.backprop as module  # noqa: PLC0415  (Chainer's circle)

        _backprop_module = module
    return _backprop_module


_backprop_module = None
