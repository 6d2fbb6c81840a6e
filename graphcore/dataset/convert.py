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
