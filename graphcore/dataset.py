"""Batch assembly (Chainer's ``chainer.dataset.concat_examples``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["concat_examples"]


def concat_examples(batch: Sequence[Any], device: Any = None, padding: Any = None) -> Any:
    """Stack a list of examples into arrays, as Chainer does.

    Examples that are tuples give a tuple of arrays (one per field), dicts give a dict, plain
    arrays give one array. With ``padding``, arrays of different shapes are padded (at the
    end of each axis) with that value to the largest shape; without it they must match.
    ``device`` is accepted for Chainer's signature: only ``None`` or a negative id (the CPU).
    """
    if device is not None and not (isinstance(device, int) and device < 0):
        raise ValueError(f"concat_examples: device {device!r} is not the CPU (graphcore has "
                         "no GPU support)")
    if len(batch) == 0:
        raise ValueError("concat_examples: the batch is empty")
    first = batch[0]
    if isinstance(first, tuple):
        pads = padding if isinstance(padding, tuple) else (padding,) * len(first)
        return tuple(_stack([ex[i] for ex in batch], pads[i]) for i in range(len(first)))
    if isinstance(first, dict):
        pads = padding if isinstance(padding, dict) else dict.fromkeys(first, padding)
        return {k: _stack([ex[k] for ex in batch], pads[k]) for k in first}
    return _stack(batch, padding)


def _stack(arrays: Sequence[Any], padding: Any) -> np.ndarray:
    arrays = [np.asarray(a) for a in arrays]
    if padding is None:
        return np.stack(arrays)
    shape = tuple(np.max([a.shape for a in arrays], axis=0)) if arrays[0].ndim else ()
    out = np.full((len(arrays),) + shape, padding, dtype=arrays[0].dtype)
    for i, a in enumerate(arrays):
        out[(i,) + tuple(slice(0, n) for n in a.shape)] = a
    return out
