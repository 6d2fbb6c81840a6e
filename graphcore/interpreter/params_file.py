"""Loading a parameters file (``graphtool run --params FILE``) into a spec's model.

The file must fit the model the spec declares: the same keys, and each array the shape the
spec gives it. A lazily sized weight (``linear`` without ``in_size``) has no array yet, but its
``out_size`` is declared, so ``W`` must be ``(out_size, any)``: a file must never silently
change the model. Everything is checked from the arrays' headers before any data is
decompressed (a small file can inflate to gigabytes), against the spec's element limit too.
Problems are one ``SerializationError`` naming each key, in the terms of the spec.
"""

from __future__ import annotations

import math
import os

import numpy as np

from graphcore import serializers
from graphcore.config import config
from graphcore.errors import SerializationError
from graphcore.interpreter.parameters import SpecModel
from graphcore.interpreter.preprocessing import PREPROCESSING
from graphcore.links.batch_norm import BatchNormalization
from graphcore.links.linear import Linear

# a declared shape: sizes, None for a size the first input decides, or None for no shape yet
Declared = tuple[int | None, ...] | None


CHECKPOINT_MODEL = "trainer/updater/model:main/"  # where a training checkpoint keeps them


def load_params(file: str | os.PathLike[str], model: SpecModel, prefix: str | None = None
                ) -> None:
    """Check ``file`` against ``model`` (every key, shape and size), then load it; the one
    check of parameters every command makes (run, export, train, evaluate, predict).
    ``prefix``: the parameters are the file's keys under it; None: as the file holds them,
    a training checkpoint's model (under ``CHECKPOINT_MODEL``) or a parameters file's own.
    A folder, a FIFO or an unreadable path is an ``UnreadableFileError`` at once."""
    name = os.fspath(file)
    try:
        headers = serializers.npz_headers(file)
    except SerializationError as e:
        raise SerializationError(f"--params {e}") from e
    if prefix is None:
        checkpoint = any(key.startswith(CHECKPOINT_MODEL) for key in headers)
        prefix = CHECKPOINT_MODEL if checkpoint else ""
    if prefix:
        headers = {key[len(prefix):]: header for key, header in headers.items()
                   if key.startswith(prefix)}
    if model.preprocessing is not None:  # a label vocabulary is there when labels were text
        model.preprocessing.expect([key[len(PREPROCESSING) + 1:] for key in headers
                                    if key.startswith(PREPROCESSING + "/")])
    declared = declared_shapes(model)
    limit = model.spec.max_elements
    problems = []
    missing = [key for key in declared if key not in headers]
    extra = [key for key in headers if key not in declared]
    state = [key for key in missing if key.startswith(PREPROCESSING + "/")]
    missing = [key for key in missing if key not in state]
    if state:
        problems.append(f"it lacks {_state_keys(state)}, which training fits on the training "
                        "rows and saves with the parameters (parameters trained before the "
                        "spec said so); train the spec again")
    if missing:
        problems.append(f"it lacks {_keys(missing)}, which the spec's model has")
    if extra:
        problems.append(f"it has {_keys(extra)}, which the spec's model does not")
    for key, (want, want_dtype) in declared.items():
        if key not in headers:
            continue
        shape, dtype = headers[key]
        size = math.prod(shape)
        if size > limit:
            problems.append(f"{key} holds {size:,} elements, over the limit of {limit:,}")
        elif want is not None and (len(shape) != len(want) or any(
                w is not None and w != n for w, n in zip(want, shape, strict=True))):
            problems.append(f"{key} has shape {_show(shape)} in the file, but the spec "
                            f"declares {_show(want)}")
        elif want_dtype is not None and dtype != want_dtype:
            problems.append(f"{key} holds {dtype} values, but the model holds {want_dtype}")
    if problems:
        raise SerializationError(f"--params {name} does not fit spec '{model.spec.name}': "
                                 + "; ".join(problems))
    try:
        serializers.load_npz(file, model, path=prefix, max_elements=limit, exact=True)
    except SerializationError as e:  # the file changed, or a header lied about its data
        raise SerializationError(f"--params {name}: {e}") from e


def declared_shapes(model: SpecModel) -> dict[str, tuple[Declared, np.dtype | None]]:
    """``{key: (shape, dtype)}`` of every array a parameters file for ``model`` holds."""
    out: dict[str, tuple[Declared, np.dtype | None]] = {}
    for path, link in model.namedlinks(skipself=True):
        prefix = path[1:] + "/"
        for name, param in link.namedparams():
            if name.count("/") != 1:
                continue  # a child link's: listed under that link
            key = prefix + name[1:]
            if param.array is not None:
                out[key] = (param.array.shape, param.array.dtype)
            else:
                dtype = np.dtype(getattr(param.initializer, "dtype", None) or config.dtype)
                out[key] = (_lazy_shape(link, name[1:]), dtype)
        for attr in link._persistent:
            value = getattr(link, attr)
            if isinstance(value, np.ndarray):
                out[prefix + attr] = (value.shape, value.dtype)
            elif isinstance(value, bool | int | float):
                out[prefix + attr] = ((), None)
            else:
                out[prefix + attr] = (_lazy_shape(link, attr), None)
    return out


def _lazy_shape(link: object, name: str) -> Declared:
    """What the spec fixes of a parameter that has no array yet."""
    if isinstance(link, Linear) and name == "W":
        return (link.out_size, None)
    if isinstance(link, BatchNormalization):
        return (None,)
    return None


def _state_keys(keys: list[str]) -> str:
    """The fitted state a file lacks, in the spec's terms."""
    words = {"classes": "the vocabulary", "shift": "the normalize statistics",
             "scale": "the normalize statistics"}
    named: dict[str, None] = {}
    for key in keys:
        name, _, what = key[len(PREPROCESSING) + 1:].rpartition("/")
        named[f"{words.get(what, what)} of input '{name}'"] = None
    return ", ".join(named)


def _keys(keys: list[str]) -> str:
    return ", ".join(keys[:8]) + (f" and {len(keys) - 8} more" if len(keys) > 8 else "")


def _show(shape: tuple[int | None, ...]) -> str:
    sizes = ["any" if n is None else str(n) for n in shape]
    return "(" + ", ".join(sizes) + ("," if len(sizes) == 1 else "") + ")"
