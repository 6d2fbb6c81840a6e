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

import io
import itertools
import math
import os
import stat
import sys
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np

from graphcore.errors import SpecError
from graphcore.registry import suggestion as _did_you_mean
from graphcore.spec.loader import DEFAULT_MAX_ELEMENTS
from graphcore.spec.model import InputSpec
from graphcore.spec.stacked_examples import StackedExamples
from graphcore.spec.yaml_source import Loc, error_at

DTYPES = ("float16", "float32", "float64", "int32", "int64", "bool")
STDIN = "-"  # an override naming stdin: --input x=-
FILE_TYPES = (".npy", ".npz", ".csv")
STDIN_BYTES_PER_ELEMENT = 32  # stdin is read up to max_elements * this (+ 64 KiB), no further
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
# What reading a corrupt or unreadable file raises, besides our own SpecError.
_READ_ERRORS = (ValueError, EOFError, OSError, zipfile.BadZipFile, zlib.error, UnicodeError)

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
    from graphcore.training import data_files

    fed = {name: spec for name, spec in inputs.items()
           if spec.source == "data" and name not in overrides}
    arrays = _read_data_inputs(fed, folder)
    for name, spec in inputs.items():
        if spec.source == "data" and name in overrides:
            arrays[name] = _read_data_override(spec, overrides[name], override_locs[name],
                                               stdin, max_elements)
        elif name not in arrays:
            arrays[name] = _make(spec, seed, folder, overrides.get(name),
                                 override_locs.get(name), stdin, max_elements)
    data_files.check_batch_dims(arrays, inputs)
    return {name: arrays[name] for name in inputs}


def _read_data_inputs(fed: Mapping[str, InputSpec], folder: str | os.PathLike
                      ) -> dict[str, Array]:
    """The inputs a spec's ``data:`` section feeds, read from their file(s) once each."""
    from graphcore.training import data_files

    by_file: dict[str, dict[str, InputSpec]] = {}
    for name, spec in fed.items():
        by_file.setdefault(spec.column.file, {})[name] = spec
    arrays: dict[str, Array] = {}
    for file, specs in by_file.items():
        first = next(iter(specs.values())).column
        arrays.update(data_files.read_data(Path(folder) / file, specs, first.file_loc))
    return arrays


def _read_data_override(spec: InputSpec, path: str, loc: Loc, stdin: BinaryIO | None,
                        max_elements: int) -> Array:
    """``--input x=new.csv`` for a data-fed input: a CSV/JSON Lines file is read by the same
    column names; an .npy (or stdin) holds the input's array itself."""
    from graphcore.training import data_files

    suffix = Path(path).suffix.lower()
    if path != STDIN and suffix in (".csv", ".jsonl", ".npz"):
        return data_files.read_data(path, {spec.name: spec}, loc)[spec.name]
    plain = InputSpec(name=spec.name, source="file", loc=spec.loc, shape=spec.shape,
                      dtype=spec.dtype, dtype_given=spec.dtype_given, batch_dim=spec.batch_dim,
                      keep_file_dtype=not spec.dtype_given)
    return _make(plain, 0, ".", path, loc, stdin, max_elements)


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
        array = _read_stdin(spec, dtype, stdin, override_loc, None, max_elements)
    elif override is not None:
        array = _read_file(spec, dtype, Path(override), override_loc, max_elements)
    elif spec.source == "file":
        if not spec.path:
            raise error_at(spec.loc, f"input '{spec.name}': file needs a path")
        array = _read_file(spec, dtype, Path(folder) / spec.path, spec.loc, max_elements)
    elif spec.source == "stdin":
        array = _read_stdin(spec, dtype, stdin, spec.loc, spec.format or "npy", max_elements)
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




def _show_shape(shape: Iterable[int | None]) -> str:
    return "[" + ", ".join("null" if n is None else str(n) for n in shape) + "]"


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
                           f"is the sequence length), got {_show_shape(spec.shape)}")
        sizes += list(spec.lengths)
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in sizes):
        raise error_at(spec.loc, f"{what}: sizes must be non-negative integers, got shape "
                       f"{_show_shape(spec.shape)}"
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


# ---------------------------------------------------------------- files and stdin

def _read_file(spec: InputSpec, dtype: np.dtype, path: Path, loc: Loc,
               max_elements: int) -> np.ndarray:
    suffix = path.suffix.lower()
    if suffix not in FILE_TYPES:
        raise error_at(loc, f"input '{spec.name}': {path} must be an .npy, .npz or .csv file, "
                       f"not '{suffix or path.name}'")
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise error_at(loc, f"input '{spec.name}': {path} is not a regular file")
        with open(path, "rb") as handle:
            return _Reader(spec, dtype, str(path), loc, max_elements).read(handle, suffix[1:])
    except FileNotFoundError:
        raise FileNotFoundError(f"input '{spec.name}': file not found: {path}") from None
    except OSError as err:
        raise error_at(loc, f"input '{spec.name}': cannot read {path}: "
                       f"{err.strerror or err}") from None


def _read_stdin(spec: InputSpec, dtype: np.dtype, stdin: BinaryIO | None, loc: Loc,
                kind: str | None, max_elements: int) -> np.ndarray:
    """Read stdin once (bounded by the size limit); ``kind`` None: judge by the first bytes."""
    stream = stdin if stdin is not None else sys.stdin.buffer
    limit = max_elements * STDIN_BYTES_PER_ELEMENT + 65536
    data = stream.read(limit + 1)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if len(data) > limit:
        raise error_at(loc, f"input '{spec.name}': stdin holds over {limit:,} bytes, more than "
                       f"an input of {max_elements:,} elements needs")
    if kind is None:
        kind = ("npy" if data.startswith(_NPY_MAGIC)
                else "npz" if data.startswith(_ZIP_MAGICS) else "csv")
    return _Reader(spec, dtype, "stdin", loc, max_elements).read(io.BytesIO(data), kind)


class _Reader:
    """Reads one array (npy, npz or csv) from a binary stream for one input, refusing what
    does not fit the input before reading it: object arrays, non-numbers, wrong shapes and
    arrays over the size limit."""

    def __init__(self, spec: InputSpec, dtype: np.dtype, where: str, loc: Loc,
                 max_elements: int) -> None:
        self.spec = spec
        self.dtype = dtype
        self.where = where  # names the data in messages: a path, "stdin", "a.npz, array 'x'"
        self.loc = loc
        self.max_elements = max_elements

    def fail(self, message: str, hint: str | None = None) -> SpecError:
        return error_at(self.loc, f"input '{self.spec.name}': {message}", hint)

    def read(self, stream: BinaryIO, kind: str) -> np.ndarray:
        try:
            array = {"npy": self.npy, "npz": self.npz, "csv": self.csv}[kind](stream)
        except SpecError:
            raise
        except _READ_ERRORS as err:
            raise self.fail(f"cannot read {self.where} as {kind}: {err}") from None
        return self.convert(array)

    # --- formats ----------------------------------------------------------------------------
    keeps_dtype = False  # set when reading .npy/.npz (CSV text has no dtype of its own)

    def npy(self, stream: BinaryIO) -> np.ndarray:
        self.keeps_dtype = True
        start = stream.read(len(_NPY_MAGIC))
        if start != _NPY_MAGIC:
            hint = "stdin: csv reads comma-separated text" if self.where == "stdin" else None
            raise self.fail(f"{self.where} is not an .npy file (it starts with {start!r})",
                            hint)
        stream.seek(0)
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
        else:  # 2.0 and 3.0 share the header layout; 3.0 only allows UTF-8 field names
            shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
        if dtype.hasobject:
            raise self.fail(f"{self.where} holds Python objects (a pickled array), which are "
                            "never loaded", "save a numeric array")
        self.check_kind(dtype)
        self.check_size(shape)
        self.check_shape(shape)
        stream.seek(0)
        return np.lib.format.read_array(stream, allow_pickle=False)

    def npz(self, stream: BinaryIO) -> np.ndarray:
        with zipfile.ZipFile(stream) as archive:
            members = {(name[:-4] if name.endswith(".npy") else name): name
                       for name in archive.namelist() if not name.endswith("/")}
            key = self.key_in(members)
            self.where = f"{self.where}, array '{key}'"
            with archive.open(members[key]) as member:
                return self.npy(member)

    def key_in(self, members: Mapping[str, str]) -> str:
        key = self.spec.key
        names = ", ".join(members) or "no arrays"
        if key is None:
            if len(members) == 1:
                return next(iter(members))
            raise self.fail(f"{self.where} holds {len(members)} arrays ({names}); say which "
                            "one with 'key' in the spec")
        if key not in members:
            raise self.fail(f"{self.where} has no array '{key}' (it holds: {names})",
                            _did_you_mean(key, members))
        return key

    def csv(self, stream: BinaryIO) -> np.ndarray:
        with io.TextIOWrapper(stream, encoding="utf-8-sig") as text:
            return self.csv_lines(text)

    def csv_lines(self, lines: Iterable[str]) -> np.ndarray:
        lines = iter(lines)
        for _ in range(self.spec.skip_header):
            next(lines, None)
        # Blank and comment lines are dropped here: loadtxt's max_rows would warn about them.
        lines = (line for line in lines if _is_data(line))
        first = next(lines, None)
        if first is None:
            skipped = f" after {self.spec.skip_header} header lines" * bool(self.spec.skip_header)
            raise self.fail(f"{self.where} holds no data{skipped}")
        columns = self.loadtxt([first]).shape[1]
        self.check_size((columns,))
        max_rows = self.max_elements // columns
        array = self.loadtxt(itertools.chain([first], lines), max_rows=max_rows + 1)
        if array.shape[0] > max_rows:
            raise self.fail(f"{self.where} holds over {self.max_elements:,} numbers (the limit)")
        declared = self.spec.shape
        if declared is not None and len(declared) == 1 and 1 in array.shape:
            array = array.reshape(-1)  # one row or one column reads as a vector when asked
        self.check_shape(array.shape)
        return array

    def loadtxt(self, lines: Iterable[str], max_rows: int | None = None) -> np.ndarray:
        return np.loadtxt(lines, delimiter=self.spec.delimiter, comments="#", ndmin=2,
                          dtype=np.float64, max_rows=max_rows)

    # --- checks -----------------------------------------------------------------------------
    def check_kind(self, dtype: np.dtype) -> None:
        if dtype.kind not in "biuf":
            raise self.fail(f"{self.where} holds {dtype} values, not numbers",
                            "save real numbers, integers or booleans")

    def check_size(self, shape: tuple[int, ...]) -> None:
        size = math.prod(shape)
        if size > self.max_elements:
            raise self.fail(f"{self.where} holds {size:,} elements, over the limit of "
                            f"{self.max_elements:,}")

    def check_shape(self, shape: tuple[int, ...]) -> None:
        declared = self.spec.shape
        if declared is None:
            return
        if len(shape) != len(declared) or any(d is not None and d != n
                                              for d, n in zip(declared, shape, strict=True)):
            raise self.fail(f"{self.where} holds an array of shape {_show_shape(shape)}, but "
                            f"the spec declares shape {_show_shape(declared)}")

    def convert(self, array: np.ndarray) -> np.ndarray:
        """The array in the input's dtype; refuses conversions that would change values.
        Integer and bool arrays of .npy/.npz files keep their dtype unless ``dtype`` is given."""
        target = self.dtype
        if self.spec.keep_file_dtype and array.dtype.kind in "biu" and self.keeps_dtype:
            return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
        if target.kind in "iu" and array.dtype.kind == "f":
            if not np.all(np.isfinite(array)) or np.any(array != np.trunc(array)):
                raise self.fail(f"{self.where} holds values that are not integers, but the "
                                f"input's dtype is {target}")
        if target.kind in "iu" and array.size:
            info = np.iinfo(target)
            if array.min() < info.min or array.max() > info.max:
                raise self.fail(f"{self.where} holds values outside {target}'s range",
                                "use dtype: int64")
        with np.errstate(over="ignore", invalid="ignore"):
            result = np.ascontiguousarray(array, dtype=target)
        finite_before = (np.count_nonzero(np.isfinite(array)) if array.dtype.kind == "f"
                         else array.size)
        if target.kind == "f" and np.count_nonzero(np.isfinite(result)) < finite_before:
            raise self.fail(f"{self.where} holds values too large for {target}",
                            "use dtype: float32 or float64")
        return result


def _is_data(line: str) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith("#")
