"""Global switches, Chainer style: ``config.train``, ``config.enable_backprop``, ``config.debug``.

The engine reads these on every op call, so they are plain attributes of one module-level
object (an attribute read is the cheapest lookup Python has). They are process-wide, not
thread-local: run one model per process or guard switches yourself.
"""

import contextlib
from collections.abc import Iterator

import numpy as np

from graphcore.errors import ArgumentTypeError, ArgumentValueError


class _Config:
    __slots__ = ("train", "enable_backprop", "debug", "dtype")

    def __init__(self) -> None:
        self.train = True  # dropout and batch norm behave as in training
        self.enable_backprop = True  # record the graph while running forward
        self.debug = False  # check every op's outputs and gradients for NaN/Inf
        self.dtype = np.dtype(np.float32)  # dtype of parameters links create


config = _Config()


@contextlib.contextmanager
def using_config(name: str, value: object) -> Iterator[None]:
    """Set ``config.<name>`` to ``value`` inside a ``with`` block, then restore it.

    >>> with using_config('train', False):
    ...     y = model(x)      # dropout off, batch norm uses running statistics
    """
    if name not in _Config.__slots__:
        raise ArgumentValueError(f"using_config: unknown config key {name!r}; known: "
                                 f"{', '.join(_Config.__slots__)}")
    if name == "dtype":
        value = _float_dtype(value)
    elif not isinstance(value, bool | np.bool_):
        raise ArgumentTypeError(f"using_config: {name} must be True or False, got {value!r}")
    old = getattr(config, name)
    setattr(config, name, value)
    try:
        yield
    finally:
        setattr(config, name, old)


def _float_dtype(value: object) -> np.dtype:
    try:
        dtype = np.dtype(value) if value is not None else None
    except (TypeError, ValueError):
        dtype = None
    if dtype is None or dtype.kind != "f":
        raise ArgumentTypeError(f"using_config: dtype must be a floating-point dtype, got "
                                f"{value!r}")
    return dtype


def no_backprop_mode() -> contextlib.AbstractContextManager[None]:
    """Run ops without recording the graph (inference, parameter updates)."""
    return using_config("enable_backprop", False)


def force_backprop_mode() -> contextlib.AbstractContextManager[None]:
    """Record the graph even inside ``no_backprop_mode``."""
    return using_config("enable_backprop", True)
