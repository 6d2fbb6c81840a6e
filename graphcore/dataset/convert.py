"""``concat_examples``: a list of examples -> batched arrays, Chainer's default converter.

Tuples give a tuple of arrays, dicts a dict, arrays one array; ``padding`` fills examples of
different shapes to the largest shape along each axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graphcore import backend
from graphcore.errors import DeviceError


def check_device(device: Any) -> None:
    """Refuse a device other than the host (graphcore computes with numpy only); the host is
    None, ``'cpu'`` or any Chainer specifier of it (-1, ``'-1'``, ``'@numpy'``, a CpuDevice)."""
    if device is None or (isinstance(device, str) and device == "cpu"):
        return
    try:
        if isinstance(backend.get_device(device), backend.CpuDevice):
            return
    except (backend.DeviceUnavailable, TypeError, ValueError):
        pass
    raise DeviceError(f"concat_examples: graphcore computes on the host only, got device "
                      f"{device!r}")


class Converter:
    """Chainer's converter base: ``converter(batch, device)`` -> the batch, converted; the
    device is a ``backend.Device`` (or None). ``converter()`` makes one of a function."""

    def __call__(self, batch: Any, device: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __call__(batch, device)")


class _FunctionConverter(Converter):
    def __init__(self, function: Any) -> None:
        if not callable(function):
            raise TypeError(f"converter() wraps a callable, got {type(function).__name__}")
        self.base_callable = function
        self.__doc__ = getattr(function, "__doc__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # the device argument, positional or named, as a Device (Chainer's normalization)
        if len(args) >= 2:
            args = (args[0], _device(args[1]), *args[2:])
        elif "device" in kwargs:
            kwargs["device"] = _device(kwargs["device"])
        return self.base_callable(*args, **kwargs)


def converter() -> Any:
    """Decorate ``f(batch, device)`` into a ``Converter`` (Chainer 7's ``@converter()``): it
    is called with the device as a ``backend.Device`` (None stays None)."""
    return _FunctionConverter


def _device(device: Any) -> Any:
    return None if device is None else backend.get_device(device)


def call_converter(convert: Any, batch: Any, device: Any = None) -> Any:
    """Call a converter as Chainer's updaters do: a ``Converter`` (and ``concat_examples``)
    gets the device as a Device, an old-style function ``(batch, device)`` gets None or -1
    (the host's id in Chainer 5's convention)."""
    if isinstance(convert, Converter):
        return convert(batch, _device(device))
    if convert is concat_examples:
        return convert(batch, None)
    return convert(batch, None if device is None else -1)


def concat_examples(batch: Sequence[Any], device: Any = None, padding: Any = None) -> Any:
    if len(batch) == 0:
        raise ValueError("batch is empty")
    check_device(device)
    first = batch[0]
    if isinstance(first, tuple):
        pads = padding if isinstance(padding, tuple) else [padding] * len(first)
        return tuple(_concat_arrays([example[i] for example in batch], pads[i])
                     for i in range(len(first)))
    if isinstance(first, dict):
        pads = padding if isinstance(padding, dict) else {key: padding for key in first}
        return {key: _concat_arrays([example[key] for example in batch], pads[key])
                for key in first}
    return _concat_arrays(batch, padding)


def _concat_arrays(arrays: Sequence[Any], padding: Any) -> np.ndarray:
    if not isinstance(arrays[0], np.ndarray):
        arrays = [np.asarray(a) for a in arrays]
    if padding is not None:
        shape = np.array(arrays[0].shape, dtype=int)
        for array in arrays[1:]:
            if array.ndim != len(shape):
                raise ValueError("concat_examples: examples have different ranks")
            shape = np.maximum(shape, array.shape)
        result = np.full((len(arrays), *shape), padding, dtype=arrays[0].dtype)
        for i, array in enumerate(arrays):
            result[(i, *(slice(0, n) for n in array.shape))] = array
        return result
    return np.stack(arrays)


def to_device(device: Any, x: Any) -> Any:
    """``x`` unchanged: graphcore keeps every array on the host."""
    check_device(device)
    return x
