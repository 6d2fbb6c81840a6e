"""Devices, as Chainer 7's ``chainer.backend`` names them: numpy only, and ready for more.

graphcore computes with numpy on the CPU. ``get_device`` reads Chainer's device specifiers:
``'@numpy'``, the numpy module, a negative integer (Chainer's old "CPU" id) and a
``CpuDevice`` give ``CpuDevice()``; a CuPy GPU (``'@cupy:0'``, a non-negative id), iDeep
(``'@intel64'``) or ChainerX (``'native:0'``, ``'cuda:1'``) raise ``DeviceUnavailable``, one
line naming the device and why, never a silent fall-back to the CPU. ``GpuDevice``,
``Intel64Device`` and ``ChainerxDevice`` exist so that code can name them (``isinstance``
checks, ``GpuDevice.from_device_id``) and fail the same way when it makes one.

    get_device("@numpy").send(np.ones(2, np.float32))    # a numpy array
    get_device("@cupy:0")   # DeviceUnavailable: @cupy:0: CuPy (a GPU) is not available: ...
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["ChainerxDevice", "CpuDevice", "Device", "DeviceUnavailable", "GpuDevice",
           "Intel64Device", "copyto", "get_array_module", "get_device",
           "get_device_from_array", "is_arrays_compatible", "using_device"]

_WHY = "graphcore computes with numpy on the CPU (use '@numpy')"


class DeviceUnavailable(RuntimeError):
    """A device graphcore cannot compute on (a GPU, iDeep, ChainerX)."""


class Device:
    """A place arrays live and are computed: ``xp`` (the array module), ``name`` (its
    specifier), ``send`` (arrays to this device), ``create_context`` (``with`` it)."""

    xp: Any = None
    name = "(none)"
    supported_array_types: tuple[type, ...] = ()

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.name == self.name

    def __hash__(self) -> int:
        return hash((type(self), self.name))

    def send(self, arrays: Any) -> Any:
        """``arrays`` (an array, or nested lists, tuples and dicts of them) on this device."""
        if isinstance(arrays, (list, tuple)):
            return type(arrays)(self.send(a) for a in arrays)
        if isinstance(arrays, dict):
            return {k: self.send(v) for k, v in arrays.items()}
        return self.send_array(arrays)

    def send_array(self, array: Any) -> Any:
        raise NotImplementedError

    def is_array_supported(self, array: Any) -> bool:
        return isinstance(array, self.supported_array_types)

    def create_context(self) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def use(self) -> None:
        """Make this the current device (a no-op on the CPU, as in Chainer)."""


class CpuDevice(Device):
    """The CPU: numpy arrays."""

    xp = np
    name = "@numpy"
    supported_array_types = (np.ndarray, np.generic)

    def send_array(self, array: Any) -> Any:
        if array is None or isinstance(array, np.ndarray):
            return array
        if isinstance(array, np.generic):
            return np.asarray(array)
        raise TypeError(f"cannot send a {type(array).__name__} to the CPU: graphcore's "
                        "arrays are numpy arrays")


class _Unavailable(Device):
    """A device of another array library: naming it is fine, making one fails."""

    library = ""

    def __init__(self, *_args: object, **_kwargs: object) -> None:
        raise DeviceUnavailable(f"{self.library} is not available: {_WHY}")


class GpuDevice(_Unavailable):
    library = "CuPy (a GPU)"

    @classmethod
    def from_device_id(cls, device_id: int) -> GpuDevice:
        raise DeviceUnavailable(f"@cupy:{device_id}: CuPy (a GPU) is not available: {_WHY}")

    @classmethod
    def from_array(cls, array: Any) -> GpuDevice:
        raise DeviceUnavailable(f"CuPy (a GPU) is not available: {_WHY}")


class Intel64Device(_Unavailable):
    library = "iDeep (@intel64)"


class ChainerxDevice(_Unavailable):
    library = "ChainerX"


def get_device(device_spec: Any) -> Device:
    """The device of a Chainer device specifier (see the module docstring)."""
    if isinstance(device_spec, Device):
        return device_spec
    if device_spec is np:
        return CpuDevice()
    if isinstance(device_spec, (int, np.integer)) and not isinstance(device_spec, bool):
        if device_spec < 0:
            return CpuDevice()
        return GpuDevice.from_device_id(int(device_spec))
    if isinstance(device_spec, str):
        try:
            return get_device(int(device_spec))
        except ValueError:
            pass
        if device_spec.startswith("@"):
            module, colon, rest = device_spec[1:].partition(":")
            if module == "numpy" and not colon:
                return CpuDevice()
            if module == "cupy" and colon and rest.isdigit():
                return GpuDevice.from_device_id(int(rest))
            if module == "intel64" and not colon:
                raise DeviceUnavailable(f"{device_spec}: iDeep is not available: {_WHY}")
            raise ValueError("a device specifier starting with '@' names a module and, for "
                             f"@cupy, a device id ('@numpy', '@cupy:0'); got {device_spec!r}")
        raise DeviceUnavailable(f"{device_spec}: ChainerX is not available (a specifier "
                                f"without '@' names a ChainerX device): {_WHY}")
    raise TypeError("a device specifier is a Device, a string ('@numpy') or an integer; got "
                    f"{type(device_spec).__name__}")


def get_device_from_array(*arrays: Any) -> Device:
    """The device of ``arrays``: the CPU for numpy arrays and anything else numpy takes."""
    return CpuDevice()


def get_array_module(*args: Any) -> Any:
    """The array module for ``args`` (arrays or Variables): numpy."""
    return np


def is_arrays_compatible(arrays: Any) -> bool:
    """Whether ``arrays`` can be computed together: numpy arrays (and ``None``) only."""
    return all(a is None or isinstance(a, (np.ndarray, np.generic)) for a in arrays)


def copyto(dst: np.ndarray, src: Any) -> None:
    """Copy ``src`` into the array ``dst`` (broadcasting as numpy does)."""
    if not isinstance(dst, np.ndarray):
        raise TypeError(f"copyto's destination is a numpy array, got {type(dst).__name__}")
    np.copyto(dst, np.asarray(src))


@contextlib.contextmanager
def using_device(device_spec: Any) -> Iterator[Device]:
    """``with using_device('@numpy'):`` -- the device made current for the block."""
    device = get_device(device_spec)
    with device.create_context():
        yield device
