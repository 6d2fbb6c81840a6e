"""Parameter initializers (Chainer's names). An initializer is a callable filling an array."""

from __future__ import annotations

import numpy as np

from graphcore.attributes import Attr, check_arguments
from graphcore.config import config
from graphcore.errors import ArgumentTypeError

_SCALE = {"scale": Attr(float, low=0.0)}


class Initializer:
    """Fills an array in place; ``dtype`` defaults to ``config.dtype``."""

    def __init__(self, dtype=None) -> None:
        if dtype is not None:
            try:
                kind = np.dtype(dtype).kind
            except (TypeError, ValueError):
                kind = None
            if kind != "f":
                raise ArgumentTypeError(f"{type(self).__name__}: dtype must be a floating-point "
                                        f"dtype or None, got {dtype!r}")
        self.dtype = dtype

    def __call__(self, array: np.ndarray) -> None:
        raise NotImplementedError


class Constant(Initializer):
    def __init__(self, fill_value: float, dtype=None) -> None:
        super().__init__(dtype)
        if isinstance(fill_value, bool) or not isinstance(
                fill_value, int | float | np.number | np.ndarray):
            raise ArgumentTypeError(f"{type(self).__name__}: fill_value must be a number or an "
                                    f"array, got {type(fill_value).__name__}")
        self.fill_value = fill_value

    def __call__(self, array: np.ndarray) -> None:
        array[...] = self.fill_value


class Zero(Constant):
    def __init__(self, dtype=None) -> None:
        super().__init__(0.0, dtype)


class One(Constant):
    def __init__(self, dtype=None) -> None:
        super().__init__(1.0, dtype)


def _checked_scale(initializer: Initializer, scale: object) -> float:
    check_arguments(type(initializer).__name__, _SCALE, scale=scale)
    return scale


def _fans(shape: tuple[int, ...]) -> tuple[int, int]:
    if len(shape) < 2:
        raise ValueError(f"fan-in/fan-out need at least 2 dimensions, got shape {shape}")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


class Normal(Initializer):
    def __init__(self, scale: float = 0.05, dtype=None) -> None:
        super().__init__(dtype)
        self.scale = _checked_scale(self, scale)

    def __call__(self, array: np.ndarray) -> None:
        array[...] = np.random.normal(0.0, self.scale, array.shape)


class LeCunNormal(Initializer):
    """Normal with std ``scale * sqrt(1 / fan_in)`` (Chainer's default for Linear)."""

    def __init__(self, scale: float = 1.0, dtype=None) -> None:
        super().__init__(dtype)
        self.scale = _checked_scale(self, scale)

    def __call__(self, array: np.ndarray) -> None:
        fan_in, _ = _fans(array.shape)
        array[...] = np.random.normal(0.0, self.scale * np.sqrt(1.0 / fan_in), array.shape)


class HeNormal(Initializer):
    def __init__(self, scale: float = 1.0, dtype=None) -> None:
        super().__init__(dtype)
        self.scale = _checked_scale(self, scale)

    def __call__(self, array: np.ndarray) -> None:
        fan_in, _ = _fans(array.shape)
        array[...] = np.random.normal(0.0, self.scale * np.sqrt(2.0 / fan_in), array.shape)


class GlorotUniform(Initializer):
    def __init__(self, scale: float = 1.0, dtype=None) -> None:
        super().__init__(dtype)
        self.scale = _checked_scale(self, scale)

    def __call__(self, array: np.ndarray) -> None:
        fan_in, fan_out = _fans(array.shape)
        s = self.scale * np.sqrt(6.0 / (fan_in + fan_out))
        array[...] = np.random.uniform(-s, s, array.shape)


class Uniform(Initializer):
    def __init__(self, scale: float = 0.05, dtype=None) -> None:
        super().__init__(dtype)
        self.scale = _checked_scale(self, scale)

    def __call__(self, array: np.ndarray) -> None:
        array[...] = np.random.uniform(-self.scale, self.scale, array.shape)


def generate_array(initializer, shape: tuple[int, ...]) -> np.ndarray:
    """A new array of ``shape`` filled by ``initializer`` (None = LeCunNormal, a number = constant,
    an array = a copy of it)."""
    if isinstance(initializer, np.ndarray):
        if initializer.shape != tuple(shape):
            raise ValueError(f"initial array has shape {initializer.shape}, expected {shape}")
        return initializer.copy()
    if initializer is None:
        initializer = LeCunNormal()
    elif isinstance(initializer, int | float):
        initializer = Constant(initializer)
    dtype = getattr(initializer, "dtype", None) or config.dtype
    array = np.empty(shape, dtype=dtype)
    if array.size:  # nothing to fill (a weight over 0 input features has no fan-in to scale by)
        initializer(array)
    return array
