"""Global switches, Chainer style: ``config.train``, ``config.enable_backprop``, ``config.debug``.

The engine reads these on every op call, so they are plain attributes of one module-level
object (an attribute read is the cheapest lookup Python has). They are process-wide, not
thread-local: run one model per process or guard switches yourself.
"""

import contextlib
from collections.abc import Iterator

import numpy as np


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
        raise AttributeError(f"unknown config key {name!r}; known: {', '.join(_Config.__slots__)}")
    old = getattr(config, name)
    setattr(config, name, np.dtype(value) if name == "dtype" else value)
    try:
        yield
    finally:
        setattr(config, name, old)


def no_backprop_mode() -> contextlib.AbstractContextManager[None]:
    """Run ops without recording the graph (inference, parameter updates)."""
    return using_config("enable_backprop", False)


def force_backprop_mode() -> contextlib.AbstractContextManager[None]:
    """Record the graph even inside ``no_backprop_mode``."""
    return using_config("enable_backprop", True)
