"""A spec's inputs as numpy arrays: ``InputSpec`` -> ``np.ndarray`` (DESIGN sections 4 and 8).

``make_inputs(spec.inputs, seed, spec.folder)`` builds every input of a loaded spec::

    arrays = make_inputs(spec.inputs, seed=0, folder=spec.folder,
                         overrides={"x": "batch.npy"})     # from --input x=batch.npy
    arrays["x"]          # float32 array read from ./batch.npy (relative to the working dir)
    arrays["s"]          # an input with lengths: a list of arrays, one per example
                         # (of one shape: views of one array's rows, ``StackedExamples``)

Random inputs draw from ``input_rng(seed, name)``, a generator keyed by the seed and the input's
name, so adding, removing or reordering inputs never changes another input's values. Files
(``.npy``, ``.npz``, ``.csv``) and stdin are read without pickle and converted to the input's
dtype. Sizes are checked before anything is allocated: the shape of a random, zeros or ones
input, the header of an ``.npy`` (also inside an ``.npz``), the rows of a ``.csv``.

Problems with the data are ``SpecError``s located at the input (or at ``--input``); a missing
file is a ``FileNotFoundError`` naming the input and the path.
"""

from __future__ import annotations

import math
import os
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np

from graphcore.inputs import data_files
from graphcore.inputs.files import (  # noqa: F401  (FILE_TYPES: part of the API)
    FILE_TYPES,
    STDIN_BYTES_PER_ELEMENT,
    read_bytes,
    read_file,
    read_stdin,
    show_shape,
    stdin_bytes,
)
from graphcore.inputs.stacked import StackedExamples
from graphcore.language.loader import DEFAULT_MAX_ELEMENTS
from graphcore.language.syntax import InputSpec
from graphcore.language.yaml_source import Loc, error_at
from graphcore.registry import suggestion as _did_you_mean

DTYPES = ("float16", "float32", "float64", "int32", "int64", "bool")
STDIN = "-"  # an override naming stdin: --input x=-
# What reading a corrupt or unreadable file raises, besides our own SpecError.

Array = np.ndarray | list[np.ndarray]


def input_rng(seed: int, name: str) -> np.random.Generator:
    """The generator of input ``name`` under ``seed``: stable across runs, processes and
    platforms (``zlib.crc32`` of the name, never Python's salted ``hash``)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    key = zlib.crc32(name.encode("utf-8", "surrogatepass"))
    return np.random.default_rng(np.random.SeedSequence([int(seed), key]))


def make_inputs(inputs: Mapping[str, InputSpec], seed: int, folder: str | os.PathLike = ".",
                overrides: Mapping[str, str] | None = None, stdin: BinaryIO | None = None,
                max_elements: int = DEFAULT_MAX_ELEMENTS) -> dict[str, Array]:
    """Every input's data, in the order of ``inputs``.

    ``folder`` anchors ``file:`` paths (the spec's folder). ``overrides`` maps input names to a
    path relative to the working directory, or ``"-"`` for stdin (``--input name=PATH``); the
    file type comes from the suffix (stdin's from its first bytes). At most one input may read
    ``stdin`` (default ``sys.stdin.buffer``). Raises ``SpecError`` (the first problem found) or
    ``FileNotFoundError``.
    """
    overrides = dict(overrides or {})
    override_locs = _check_overrides(overrides, inputs)
    _check_one_stdin(inputs, overrides, override_locs)

    fed = {name: spec for name, spec in inputs.items()
           if spec.source == "data" and name not in overrides}
    arrays = _read_data_inputs(fed, folder, max_elements)
    for name, spec in inputs.items():
        if spec.source == "data" and name in overrides:
            arrays[name] = _read_data_override(spec, overrides[name], override_locs[name],
                                               stdin, max_elements)
        elif name not in arrays:
            arrays[name] = _make(spec, seed, folder, overrides.get(name),
                                 override_locs.get(name), stdin, max_elements)
    data_files.check_batch_dims(arrays, inputs)
    return {name: arrays[name] for name in inputs}


def _read_data_inputs(fed: Mapping[str, InputSpec], folder: str | os.PathLike,
                      max_elements: int) -> dict[str, Array]:
    """The inputs a spec's ``data:`` section feeds, read from their file(s) once each."""

    by_file: dict[str, dict[str, InputSpec]] = {}
    for name, spec in fed.items():
        by_file.setdefault(spec.column.file, {})[name] = spec
    arrays: dict[str, Array] = {}
    for file, specs in by_file.items():
        first = next(iter(specs.values())).column
        arrays.update(data_files.read_data(Path(folder) / file, specs, first.file_loc,
                                           max_elements))
    return arrays


def _read_data_override(spec: InputSpec, path: str, loc: Loc, stdin: BinaryIO | None,
                        max_elements: int) -> Array:
    """``--input x=new.csv`` for a data-fed input: a CSV/JSON Lines/.npz file, or stdin
    holding one, is read as the data file is (CSV by its header's column names); an .npy
    (file or stdin) holds the input's array itself, of the shape its columns imply."""

    suffix = Path(path).suffix.lower()
    if path != STDIN and suffix in (".csv", ".jsonl", ".npz"):
        return data_files.read_data(path, {spec.name: spec}, loc, max_elements)[spec.name]
    plain = InputSpec(name=spec.name, source="file", loc=spec.loc, shape=_data_shape(spec),
                      dtype=spec.dtype, dtype_given=spec.dtype_given, batch_dim=spec.batch_dim,
                      keep_file_dtype=not spec.dtype_given)
    if path == STDIN:
        data = stdin_bytes(spec, stdin, loc, max_elements)
        if not data.startswith(data_files.NPY_MAGIC):
            return data_files.read_data_bytes(data, {spec.name: spec}, loc,
                                              max_elements=max_elements)[spec.name]
        return read_bytes(plain, _dtype(plain), data, "npy", loc, max_elements)
    return _make(plain, 0, ".", path, loc, stdin, max_elements)


def _data_shape(spec: InputSpec) -> tuple[int | None, ...] | None:
    """A data-fed input's shape: declared, or what its columns give (``columns: [a, b]``:
    ``[rows, 2]``, ``column: a``: ``[rows]``)."""
    if spec.shape is not None or spec.column is None:
        return spec.shape
    if spec.column.columns:
        return (None, len(spec.column.columns))
    return (None,) if spec.column.column else None


def make_input(spec: InputSpec, seed: int, folder: str | os.PathLike = ".",
               override: str | None = None, stdin: BinaryIO | None = None,
               max_elements: int = DEFAULT_MAX_ELEMENTS) -> Array:
    """One input's data (see ``make_inputs``); an input with ``lengths`` gives a list."""
    loc = None if override is None else _override_loc(spec.name, override, 0)
    return _make(spec, seed, folder, override, loc, stdin, max_elements)


# ---------------------------------------------------------------- overrides and stdin

def _override_loc(name: str, path: str, index: int) -> Loc:
    """Where ``--input name=path`` is "written": file ``--input``, line = its position."""
    return Loc("--input", index + 1, 1, len(f"{name}={path}"))


def _check_overrides(overrides: Mapping[str, str], inputs: Mapping[str, InputSpec]
                     ) -> dict[str, Loc]:
    locs = {}
    for index, (name, path) in enumerate(overrides.items()):
        loc = _override_loc(name, path, index)
        if name not in inputs:
            known = ", ".join(inputs) or "none"
            raise error_at(loc, f"--input {name}={path}: the spec has no input '{name}' (its "
                           f"inputs: {known})", _did_you_mean(name, inputs))
        if not path:
            raise error_at(loc, f"--input {name}=: give a path, or '-' for stdin")
        locs[name] = loc
    return locs


def _check_one_stdin(inputs: Mapping[str, InputSpec], overrides: Mapping[str, str],
                     override_locs: Mapping[str, Loc]) -> None:
    readers = [name for name, spec in inputs.items()
               if overrides.get(name, STDIN if spec.source == "stdin" else None) == STDIN]
    if len(readers) > 1:
        first, second = readers[:2]
        loc = override_locs.get(second, inputs[second].loc)
        raise error_at(loc, f"input '{second}' reads stdin, but input '{first}' already does; "
                       "only one input can read stdin", "give the others a file")


# ---------------------------------------------------------------- one input

def _make(spec: InputSpec, seed: int, folder: str | os.PathLike, override: str | None,
          override_loc: Loc | None, stdin: BinaryIO | None, max_elements: int) -> Array:
    dtype = _dtype(spec)
    if override is None and spec.source in ("random", "zeros", "ones"):
        return _generate(spec, dtype, seed, max_elements)
    if override == STDIN:
        array = read_stdin(spec, dtype, stdin, override_loc, None, max_elements)
    elif override is not None:
        array = read_file(spec, dtype, Path(override), override_loc, max_elements)
    elif spec.source == "file":
        if not spec.path:
            raise error_at(spec.loc, f"input '{spec.name}': file needs a path")
        array = read_file(spec, dtype, Path(folder) / spec.path, spec.loc, max_elements)
    elif spec.source == "stdin":
        array = read_stdin(spec, dtype, stdin, spec.loc, spec.format or "npy", max_elements)
    else:
        raise error_at(spec.loc, f"input '{spec.name}': unknown source '{spec.source}'",
                       _did_you_mean(spec.source, ("random", "zeros", "ones", "file", "stdin")))
    # Data from a file or stdin is one example; an input with lengths still gets a list.
    return [array] if spec.lengths is not None else array


def _dtype(spec: InputSpec) -> np.dtype:
    if spec.dtype not in DTYPES:
        raise error_at(spec.loc, f"input '{spec.name}': dtype must be one of "
                       f"{', '.join(DTYPES)}, got {spec.dtype!r}",
                       _did_you_mean(str(spec.dtype), DTYPES))
    return np.dtype(spec.dtype)




# ---------------------------------------------------------------- random, zeros, ones

def _generate(spec: InputSpec, dtype: np.dtype, seed: int, max_elements: int) -> Array:
    shapes = _example_shapes(spec)
    largest = max(math.prod(shape) for shape in shapes)
    if largest > max_elements:
        each = " per example" if spec.lengths is not None else ""
        raise error_at(spec.loc, f"input '{spec.name}' would have {largest:,} elements{each}, "
                       f"over the limit of {max_elements:,}")
    total = sum(math.prod(shape) for shape in shapes)
    if total > max_elements:  # every example is made before the run starts
        raise error_at(spec.loc, f"input '{spec.name}' would have {total:,} elements in its "
                       f"{len(shapes):,} examples, over the limit of {max_elements:,}")
    if spec.source == "random":
        draw = _random_draw(spec, dtype)
        rng = input_rng(seed, spec.name)
        arrays = [draw(rng, shape) for shape in shapes]  # in order, from one generator
    else:
        fill = np.zeros if spec.source == "zeros" else np.ones
        arrays = [fill(shape, dtype) for shape in shapes]
    if spec.lengths is None:
        return arrays[0]
    if len(set(shapes)) == 1:  # one shape: the rows of one array, which batching reads whole
        return StackedExamples(np.stack(arrays))
    return arrays


def _example_shapes(spec: InputSpec) -> list[tuple[int, ...]]:
    """The shape of the input, or of each example when it has ``lengths``."""
    what = f"input '{spec.name}'"
    if spec.shape is None:
        raise error_at(spec.loc, f"{what} needs a shape")
    sizes = list(spec.shape[1:] if spec.lengths is not None else spec.shape)
    if spec.lengths is not None:
        if not spec.shape or spec.shape[0] is not None:
            raise error_at(spec.loc, f"{what}: lengths need shape [null, ...] (the null axis "
                           f"is the sequence length), got {show_shape(spec.shape)}")
        sizes += list(spec.lengths)
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in sizes):
        raise error_at(spec.loc, f"{what}: sizes must be non-negative integers, got shape "
                       f"{show_shape(spec.shape)}"
                       + ("" if spec.lengths is None else f" and lengths {list(spec.lengths)}"),
                       "a null size needs 'lengths'" if None in sizes else None)
    if spec.lengths is None:
        return [tuple(spec.shape)]
    return [(length, *spec.shape[1:]) for length in spec.lengths]


def _random_draw(spec: InputSpec, dtype: np.dtype):
    """Checks the distribution's parameters once; returns ``draw(rng, shape) -> array``."""
    what = f"input '{spec.name}'"
    dist = spec.distribution or "normal"
    if dist not in ("normal", "uniform", "randint"):
        raise error_at(spec.loc, f"{what}: random must be normal, uniform or randint, got "
                       f"'{dist}'", _did_you_mean(dist, ("normal", "uniform", "randint")))
    if dist != "randint" and dtype.kind != "f":
        raise error_at(spec.loc, f"{what}: random: {dist} draws real numbers, but dtype is "
                       f"{dtype}", "use random: randint (low, high) for integers and booleans")
    if dist == "normal":
        mean, std = float(spec.mean), float(spec.std)
        if not (math.isfinite(mean) and math.isfinite(std)) or std < 0:
            raise error_at(spec.loc, f"{what}: mean and std must be finite numbers and std "
                           f"must not be negative, got mean {mean} and std {std}")
        return lambda rng, shape: rng.normal(mean, std, shape).astype(dtype)
    if dist == "randint" and spec.high is None:
        raise error_at(spec.loc, f"{what}: randint needs 'high' (exclusive)")
    low = 0.0 if spec.low is None else float(spec.low)
    high = 1.0 if spec.high is None else float(spec.high)
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        raise error_at(spec.loc, f"{what}: low and high must be finite numbers with low < "
                       f"high, got low {low} and high {high}")
    if dist == "uniform":
        return _uniform(spec, dtype, low, high)
    return _randint(spec, dtype, low, high)


def _uniform(spec: InputSpec, dtype: np.dtype, low: float, high: float):
    with np.errstate(over="ignore"):
        bounds = np.array([low, high], dtype=dtype)
    if not np.all(np.isfinite(bounds)):
        raise error_at(spec.loc, f"input '{spec.name}': low {low} and high {high} do not fit "
                       f"in {dtype}")
    # Rounding to a narrower dtype can land on `high`; the range stays half-open.
    top = np.nextafter(bounds[1], bounds[0])

    def draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        values = (low + (high - low) * rng.random(shape)).astype(dtype)
        return np.minimum(values, top, out=values)

    return draw


def _randint(spec: InputSpec, dtype: np.dtype, low: float, high: float):
    first, stop = math.ceil(low), math.ceil(high)  # the integers k with low <= k < high
    if first >= stop:
        raise error_at(spec.loc, f"input '{spec.name}': no integer k with {low} <= k < {high}")
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    if dtype.kind == "b" and (first < 0 or stop > 2):
        raise error_at(spec.loc, f"input '{spec.name}': dtype bool needs low >= 0 and high "
                       f"<= 2, got low {low} and high {high}")
    if info is not None and (first < info.min or stop - 1 > info.max):
        raise error_at(spec.loc, f"input '{spec.name}': integers in [{first}, {stop}) do not "
                       f"fit in {dtype}", "use dtype: int64")
    if first < np.iinfo(np.int64).min or stop - 1 > np.iinfo(np.int64).max:
        raise error_at(spec.loc, f"input '{spec.name}': randint bounds are out of range")
    return lambda rng, shape: rng.integers(first, stop, shape, dtype=np.int64).astype(dtype)
