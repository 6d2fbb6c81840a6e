"""Parameter initializers (Chainer's names and arguments). An initializer is a callable that
fills an array in place.

As in Chainer 7.8.1: every random initializer takes ``rng=`` (a ``numpy.random.RandomState`` or
``Generator``; numpy's global generator when omitted), ``HeNormal`` / ``HeUniform`` take
``fan_option='fan_in' | 'fan_out'``, ``Orthogonal`` takes ``mode=``, and an initializer whose
``dtype`` is set refuses an array of another dtype. ``generate_array(initializer, shape, xp,
dtype=None, device=None)`` makes a new array; graphcore's ``generate_array`` also takes a number
(a constant) or an array (copied) as the initializer, and None (LeCunNormal).
"""

from __future__ import annotations

import numpy as np

from graphcore import backend
from graphcore.attributes import Attr, check_arguments
from graphcore.config import config
from graphcore.errors import ArgumentTypeError

_SCALE = {"scale": Attr(float, low=0.0)}


def _rng_argument(initializer: object, kwargs: dict) -> object:
    """The ``rng=`` keyword, Chainer's only extra keyword of a random initializer."""
    rng = kwargs.pop("rng", None)
    if kwargs:
        raise TypeError(f"{type(initializer).__name__}() got unexpected keyword argument(s) "
                        f"{', '.join(sorted(kwargs))}")
    if rng is not None and not callable(getattr(rng, "normal", None)):
        raise ArgumentTypeError(f"{type(initializer).__name__}: rng must be a numpy random "
                                f"generator (numpy.random.RandomState or Generator), got "
                                f"{type(rng).__name__}")
    return rng


def get_fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight: axis 1 and axis 0, times the receptive field."""
    if not isinstance(shape, tuple):
        raise ValueError(f"shape must be a tuple, got {type(shape).__name__}")
    if len(shape) < 2:
        raise ValueError(f"fan-in/fan-out need at least 2 dimensions, got shape {shape}")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


class Initializer:
    """Fills an array in place; ``dtype`` defaults to ``config.dtype``."""

    def __init__(self, dtype=None) -> None:
        if dtype is not None:
            try:
                kind = np.dtype(dtype).kind
            except (TypeError, ValueError):
                kind = None
            if kind not in ("f", "i", "u", "b", "c"):
                raise ArgumentTypeError(f"{type(self).__name__}: dtype must be a numeric dtype "
                                        f"or None, got {dtype!r}")
        self.dtype = dtype

    def __call__(self, array: np.ndarray) -> None:
        raise NotImplementedError

    def _check_dtype(self, array: np.ndarray) -> None:
        if self.dtype is not None and array.dtype != np.dtype(self.dtype):
            raise ArgumentTypeError(f"{type(self).__name__} is for {np.dtype(self.dtype)} "
                                    f"arrays, got a {array.dtype} array")


class Constant(Initializer):
    """Fills with ``fill_value`` (a number, or an array broadcast to the target)."""

    def __init__(self, fill_value, dtype=None) -> None:
        super().__init__(dtype)
        if isinstance(fill_value, bool) or not (isinstance(fill_value, np.ndarray)
                                                or np.isscalar(fill_value)) \
                or isinstance(fill_value, str | bytes):
            raise ArgumentTypeError(f"{type(self).__name__}: fill_value must be a number or an "
                                    f"array, got {type(fill_value).__name__}")
        self.fill_value = fill_value

    def __call__(self, array: np.ndarray) -> None:
        self._check_dtype(array)
        if isinstance(self.fill_value, np.ndarray):
            np.copyto(array, self.fill_value.astype(array.dtype, copy=False))
        else:
            array[...] = self.fill_value


class Zero(Constant):
    def __init__(self, dtype=None) -> None:
        super().__init__(0.0, dtype)


class One(Constant):
    def __init__(self, dtype=None) -> None:
        super().__init__(1.0, dtype)


class NaN(Constant):
    def __init__(self, dtype=None) -> None:
        super().__init__(np.nan, dtype)


class Identity(Initializer):
    """``scale`` times the identity matrix (a square 2-d array only)."""

    def __init__(self, scale: float = 1.0, dtype=None) -> None:
        super().__init__(dtype)
        self.scale = scale

    def __call__(self, array: np.ndarray) -> None:
        self._check_dtype(array)
        if array.ndim != 2 or array.shape[0] != array.shape[1]:
            raise ValueError(f"Identity initializes square 2-d arrays only, got shape "
                             f"{array.shape}")
        array[...] = np.identity(array.shape[0]) * self.scale


def _checked_scale(initializer: Initializer, scale: object) -> float:
    check_arguments(type(initializer).__name__, _SCALE, scale=scale)
    return scale


class _Random(Initializer):
    """A random initializer: ``scale``, ``dtype`` and Chainer's ``rng=``."""

    def __init__(self, scale: float, dtype=None, **kwargs) -> None:
        super().__init__(dtype)
        self.scale = _checked_scale(self, scale)
        self.rng = _rng_argument(self, kwargs)

    @property
    def _generator(self):
        return np.random if self.rng is None else self.rng

    def _normal(self, array: np.ndarray, std: float) -> None:
        self._check_dtype(array)
        array[...] = self._generator.normal(0.0, std, array.shape)

    def _uniform(self, array: np.ndarray, bound: float) -> None:
        self._check_dtype(array)
        array[...] = self._generator.uniform(-bound, bound, array.shape)


def _fan(initializer, shape: tuple[int, ...]) -> int:
    fan_in, fan_out = get_fans(shape)
    if initializer.fan_option == "fan_in":
        return fan_in
    if initializer.fan_option == "fan_out":
        return fan_out
    raise ValueError(f"{type(initializer).__name__}: fan_option must be 'fan_in' or 'fan_out', "
                     f"got {initializer.fan_option!r}")


class Normal(_Random):
    """Normal with mean 0 and std ``scale``."""

    def __init__(self, scale: float = 0.05, dtype=None, **kwargs) -> None:
        super().__init__(scale, dtype, **kwargs)

    def __call__(self, array: np.ndarray) -> None:
        self._normal(array, self.scale)


class LeCunNormal(_Random):
    """Normal with std ``scale * sqrt(1 / fan_in)`` (Chainer's default for Linear)."""

    def __init__(self, scale: float = 1.0, dtype=None, **kwargs) -> None:
        super().__init__(scale, dtype, **kwargs)

    def __call__(self, array: np.ndarray) -> None:
        fan_in, _ = get_fans(array.shape)
        self._normal(array, self.scale * np.sqrt(1.0 / fan_in))


class GlorotNormal(_Random):
    """Normal with std ``scale * sqrt(2 / (fan_in + fan_out))``."""

    def __init__(self, scale: float = 1.0, dtype=None, **kwargs) -> None:
        super().__init__(scale, dtype, **kwargs)

    def __call__(self, array: np.ndarray) -> None:
        fan_in, fan_out = get_fans(array.shape)
        self._normal(array, self.scale * np.sqrt(2.0 / (fan_in + fan_out)))


class HeNormal(_Random):
    """Normal with std ``scale * sqrt(2 / fan)``, ``fan`` by ``fan_option``."""

    def __init__(self, scale: float = 1.0, dtype=None, fan_option: str = "fan_in",
                 **kwargs) -> None:
        super().__init__(scale, dtype, **kwargs)
        self.fan_option = fan_option

    def __call__(self, array: np.ndarray) -> None:
        self._normal(array, self.scale * np.sqrt(2.0 / _fan(self, array.shape)))


class Uniform(_Random):
    """Uniform on ``[-scale, scale]``."""

    def __init__(self, scale: float = 0.05, dtype=None, **kwargs) -> None:
        super().__init__(scale, dtype, **kwargs)

    def __call__(self, array: np.ndarray) -> None:
        self._uniform(array, self.scale)


class LeCunUniform(_Random):
    """Uniform on ``[-s, s]``, ``s = scale * sqrt(3 / fan_in)``."""

    def __init__(self, scale: float = 1.0, dtype=None, **kwargs) -> None:
        super().__init__(scale, dtype, **kwargs)

    def __call__(self, array: np.ndarray) -> None:
        fan_in, _ = get_fans(array.shape)
        self._uniform(array, self.scale * np.sqrt(3.0 / fan_in))


class GlorotUniform(_Random):
    """Uniform on ``[-s, s]``, ``s = scale * sqrt(6 / (fan_in + fan_out))``."""

    def __init__(self, scale: float = 1.0, dtype=None, **kwargs) -> None:
        super().__init__(scale, dtype, **kwargs)

    def __call__(self, array: np.ndarray) -> None:
        fan_in, fan_out = get_fans(array.shape)
        self._uniform(array, self.scale * np.sqrt(6.0 / (fan_in + fan_out)))


class HeUniform(_Random):
    """Uniform on ``[-s, s]``, ``s = scale * sqrt(6 / fan)``, ``fan`` by ``fan_option``."""

    def __init__(self, scale: float = 1.0, dtype=None, fan_option: str = "fan_in",
                 **kwargs) -> None:
        super().__init__(scale, dtype, **kwargs)
        self.fan_option = fan_option

    def __call__(self, array: np.ndarray) -> None:
        self._uniform(array, self.scale * np.sqrt(6.0 / _fan(self, array.shape)))


_ORTHOGONAL_MODES = {  # mode -> (refuse more inputs than outputs, refuse fewer)
    "auto": (False, False), "projection": (False, True),
    "embedding": (True, False), "basis": (True, True),
}


class Orthogonal(_Random):
    """A (semi-)orthogonal matrix times ``scale`` (Saxe et al.): the Q of a QR decomposition of
    a Gaussian matrix, with R's diagonal made non-negative so that Q is unique; axes after the
    first are flattened into one."""

    def __init__(self, scale: float = 1.1, dtype=None, mode: str = "auto", **kwargs) -> None:
        super().__init__(scale, dtype, **kwargs)
        if mode not in _ORTHOGONAL_MODES:
            raise ValueError(f"Orthogonal: mode must be one of "
                             f"{', '.join(map(repr, _ORTHOGONAL_MODES))}, got {mode!r}")
        self.mode = mode

    def __call__(self, array: np.ndarray) -> None:
        self._check_dtype(array)
        if array.ndim == 0:
            draw = getattr(self._generator, "randint", None) or self._generator.integers
            array[...] = self.scale * (2 * int(draw(2)) - 1)  # an orthogonal 1x1 is +-1
            return
        if array.size == 0:
            raise ValueError("Orthogonal: the array to initialize is empty")
        out_dim, in_dim = len(array), array.size // len(array)
        refuse_wide, refuse_narrow = _ORTHOGONAL_MODES[self.mode]
        if (in_dim > out_dim and refuse_wide) or (in_dim < out_dim and refuse_narrow):
            raise ValueError(f"Orthogonal: cannot make an orthogonal {self.mode} of shape "
                             f"{array.shape} ({in_dim} inputs, {out_dim} outputs)")
        a = self._generator.normal(size=(out_dim, in_dim))
        wide = in_dim > out_dim
        q, r = np.linalg.qr(a.T if wide else a)
        q *= np.copysign(self.scale, np.diag(r))
        np.copyto(array, (q.T if wide else q).reshape(array.shape).astype(array.dtype))


def _linear_filter(size: int, ndim: int, upsampling: bool) -> np.ndarray:
    """The bilinear (trilinear, ...) kernel of FCN's up/downsampling layers."""
    factor = (size + 1) // 2
    center = factor - 1.0 if size % 2 == 1 else factor - 0.5
    kernel = 1.0
    for grid in np.ogrid[(slice(size),) * ndim]:
        kernel = kernel * (1.0 - abs(grid - center) / factor)
    return kernel if upsampling else kernel / kernel.sum()


class _SamplingFilter(Initializer):
    def __init__(self, upsampling: bool, interpolation: str = "linear", dtype=None) -> None:
        if interpolation != "linear":
            raise ValueError(f"{type(self).__name__}: interpolation must be 'linear', got "
                             f"{interpolation!r}")
        super().__init__(dtype)
        self.upsampling = upsampling

    def __call__(self, array: np.ndarray) -> None:
        self._check_dtype(array)
        in_c, out_c = array.shape[:2]
        if not (in_c == out_c or out_c == 1):
            raise ValueError(f"{type(self).__name__}: the weight's two channel axes must be "
                             f"equal or the second 1, got shape {array.shape}")
        sizes = set(array.shape[2:])
        if len(sizes) > 1:
            raise ValueError(f"{type(self).__name__}: every kernel axis must have the same "
                             f"size, got {array.shape[2:]}")
        kernel = _linear_filter(array.shape[2], array.ndim - 2, self.upsampling)
        array[...] = 0
        array[np.arange(in_c), 0 if out_c == 1 else np.arange(out_c), ...] = kernel


class UpsamplingDeconvFilter(_SamplingFilter):
    """The bilinear upsampling kernel, for a DeconvolutionND with stride ``(ksize + 1) // 2``
    (Long et al., FCN)."""

    def __init__(self, interpolation: str = "linear", dtype=None) -> None:
        super().__init__(True, interpolation, dtype)


class DownsamplingConvFilter(_SamplingFilter):
    """The normalized linear downsampling kernel, for a ConvolutionND with stride
    ``(ksize + 1) // 2``."""

    def __init__(self, interpolation: str = "linear", dtype=None) -> None:
        super().__init__(False, interpolation, dtype)


def get_initializer(initializer):
    """An initializer from Chainer's spellings: None (LeCunNormal), a number or an array (a
    constant), or a callable."""
    if initializer is None:
        return LeCunNormal()
    if isinstance(initializer, np.ndarray) or (np.isscalar(initializer)
                                               and not isinstance(initializer, str | bytes)):
        return Constant(initializer)
    if not callable(initializer):
        raise TypeError(f"invalid type of initializer: {type(initializer).__name__}")
    return initializer


def check_is_initializer_like(initializer) -> None:
    """Raise TypeError unless ``initializer`` is something a link's ``initialW=`` accepts."""
    if not (initializer is None or callable(initializer) or isinstance(initializer, np.ndarray)
            or (np.isscalar(initializer) and not isinstance(initializer, str | bytes))):
        raise TypeError(f"Initializer is of wrong type: {type(initializer).__name__}. Allowed "
                        f"types are Initializer, ndarray and scalar.")


def generate_array(initializer, shape, xp=None, dtype=None, device=None) -> np.ndarray:
    """A new array of ``shape`` filled by ``initializer`` (None = LeCunNormal, a number = a
    constant, an array = a copy of it). ``xp`` (numpy) and ``device`` ('@numpy') are Chainer's
    arguments; another array module or device raises. ``dtype`` must agree with the
    initializer's own."""
    if xp is not None and xp is not np:
        raise ArgumentTypeError(f"generate_array: graphcore's arrays are numpy's, got xp="
                                f"{getattr(xp, '__name__', xp)!r}")
    if device is not None:
        backend.get_device(device)  # raises DeviceUnavailable for anything but numpy
    shape = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    if isinstance(initializer, np.ndarray):
        if initializer.shape != shape:
            raise ValueError(f"initial array has shape {initializer.shape}, expected {shape}")
        return initializer.astype(dtype) if dtype is not None else initializer.copy()
    initializer = _get_initializer(initializer)
    own = getattr(initializer, "dtype", None)
    if dtype is not None and own is not None and np.dtype(dtype) != np.dtype(own):
        raise ValueError(f"dtype mismatch: {np.dtype(dtype)} != {np.dtype(own)}")
    array = np.empty(shape, dtype=dtype or own or config.dtype)
    if array.size:  # nothing to fill (a weight over 0 input features has no fan-in to scale by)
        initializer(array)
    return array


# Chainer's (private) names of the two, which Chainer's own code and tests call
_get_initializer = get_initializer
_check_is_initializer_like = check_is_initializer_like
