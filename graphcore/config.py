"""Global switches, Chainer style: ``config.train``, ``config.enable_backprop``, ``config.debug``.

The engine reads these on every op call, so they are plain attributes of one module-level
object (an attribute read is the cheapest lookup Python has). They are process-wide, not
thread-local: run one model per process or guard switches yourself.

As in Chainer, users may add keys of their own (``config.my_flag = 1``,
``using_config('my_flag', 2)``); the keys Chainer code sets for its GPU back ends
(``use_cudnn``, ``autotune``, ...) exist with Chainer's CPU defaults and change nothing here.
``config.double_backprop`` belongs to the engine: users read it, ``using_config`` refuses it.
``config.dtype`` is a floating-point dtype or Chainer's ``mixed16`` (``get_dtype`` resolves
it).
"""

import contextlib
from collections.abc import Iterator

import numpy as np

from graphcore.errors import ArgumentTypeError, ArgumentValueError

# Keys Chainer defines that only matter to its GPU/iDeep back ends: accepted, never read here.
_CHAINER_ONLY_DEFAULTS = {
    "use_cudnn": "never", "cudnn_deterministic": False, "use_cudnn_tensor_core": "auto",
    "autotune": False, "use_ideep": "never", "type_check": True, "keep_graph_on_report": False,
    "lazy_grad_sum": False, "use_static_graph": True, "warn_nondeterministic": False,
    "in_recomputing": False,
}

_SWITCHES = ("train", "enable_backprop", "debug")  # the engine's boolean keys
# Keys the engine sets itself and users only read: ``using_config`` refuses them.
_ENGINE_OWNED = ("double_backprop",)


class _Config:
    # The engine's own keys are slots (fastest reads); user keys live in __dict__.
    __slots__ = ("train", "enable_backprop", "debug", "dtype", "double_backprop", "__dict__")

    def __init__(self) -> None:
        self.train = True  # dropout and batch norm behave as in training
        self.enable_backprop = True  # record the graph while running forward
        self.debug = False  # check every op's outputs and gradients for NaN/Inf
        self.dtype = np.dtype(np.float32)  # dtype of parameters links create
        # True while a backward walk records the graph of the gradient; set by the engine,
        # read by backward code that has an array-only fast path (``ops.lstm_cell``).
        self.double_backprop = False
        self.__dict__.update(_CHAINER_ONLY_DEFAULTS)

    def __getattr__(self, name: str) -> object:  # only reached for keys never set
        raise AttributeError(f"graphcore.config has no key {name!r}")


config = _Config()


@contextlib.contextmanager
def using_config(name: str, value: object) -> Iterator[None]:
    """Set ``config.<name>`` to ``value`` inside a ``with`` block, then restore it.

    >>> with using_config('train', False):
    ...     y = model(x)      # dropout off, batch norm uses running statistics

    A key that did not exist before the block is removed again after it.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ArgumentTypeError(f"using_config: the key must be an identifier string, got "
                                f"{name!r}")
    if name in _ENGINE_OWNED:
        raise ArgumentValueError(
            f"using_config: {name} is set by the engine during a backward walk; ask for it "
            "with backward(enable_double_backprop=True) or grad(..., "
            "enable_double_backprop=True)")
    if name == "dtype":
        value = _float_dtype(value)
    elif name in _SWITCHES and not isinstance(value, bool | np.bool_):
        raise ArgumentTypeError(f"using_config: {name} must be True or False, got {value!r}")
    missing = object()
    old = getattr(config, name, missing)
    setattr(config, name, value)
    try:
        yield
    finally:
        if old is missing:
            delattr(config, name)
        else:
            setattr(config, name, old)


class _Mixed16:
    """Chainer's ``mixed16``: a ``dtype`` setting meaning float16 computation with float32
    where precision needs it (normalization statistics and parameters); its ``dtype`` is
    float16."""

    dtype = np.dtype(np.float16)

    def __repr__(self) -> str:
        return "dtype('mixed16')"


mixed16 = _Mixed16()


def get_dtype(dtype: object = None, map_mixed16: object = None) -> np.dtype:
    """Chainer's default dtype resolved: ``dtype`` (normalized by ``np.dtype``) when given,
    else ``config.dtype``; when that is ``mixed16``, ``map_mixed16`` if given, else float16."""
    if dtype is None:
        dtype = config.dtype
    if dtype is mixed16 and map_mixed16 is not None:
        dtype = map_mixed16
    return np.dtype(dtype)


def is_debug() -> bool:
    """Whether debug mode (NaN/Inf checks of every op) is on."""
    return bool(config.debug)


def set_debug(debug: bool) -> None:
    """Turn debug mode on or off (``config.debug = debug``)."""
    if not isinstance(debug, bool | np.bool_):
        raise ArgumentTypeError(f"set_debug: debug must be True or False, got {debug!r}")
    config.debug = bool(debug)


def _float_dtype(value: object) -> np.dtype | _Mixed16:
    if value is mixed16:
        return value
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
