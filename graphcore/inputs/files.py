"""Reading one input's array from a file (``.npy``, ``.npz``, ``.csv``) or stdin, without
pickle, refusing before it reads them what does not fit the input: object arrays, text in a
numeric column, wrong shapes and arrays over the size limit (from ``.npy`` headers, also inside
an ``.npz``, and ``.csv`` rows). Problems are ``SpecError``s located at the input.
"""

from __future__ import annotations

import io
import itertools
import math
import sys
import zipfile
import zlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np

from graphcore.errors import SpecError, UnreadableFileError
from graphcore.files.arrays import (
    NPY_MAGIC,
    ZIP_MAGICS,
    ArrayFileError,
    NpyHeader,
    NpzArchive,
    read_npy_data,
    read_npy_header,
    remaining_bytes,
)
from graphcore.files.regular import located, open_regular
from graphcore.inputs.data_text import MAX_CSV_LINE_BYTES
from graphcore.language.syntax import InputSpec
from graphcore.language.yaml_source import Loc, error_at
from graphcore.registry import suggestion as _did_you_mean

FILE_TYPES = (".npy", ".npz", ".csv")
STDIN_BYTES_PER_ELEMENT = 32  # stdin is read up to max_elements * this (+ 64 KiB), no further
_READ_ERRORS = (ValueError, EOFError, OSError, zipfile.BadZipFile, zlib.error, UnicodeError)


def show_shape(shape: Iterable[int | str | None]) -> str:
    """A shape as the spec writes it: ``[null, 8]`` (a named axis by its name)."""
    return "[" + ", ".join("null" if n is None else str(n) for n in shape) + "]"


def read_file(spec: InputSpec, dtype: np.dtype, path: Path, loc: Loc,
               max_elements: int) -> np.ndarray:
    """One input's array from the file ``path`` (``loc``: where the spec or ``--input`` names
    it). A folder, a FIFO or an unreadable path is an ``UnreadableFileError`` at once."""
    suffix = path.suffix.lower()
    if suffix not in FILE_TYPES:
        raise error_at(loc, f"input '{spec.name}': {path} must be an .npy, .npz or .csv file, "
                       f"not '{suffix or path.name}'")
    try:
        handle = open_regular(path, f"input '{spec.name}': ")
    except FileNotFoundError:
        raise FileNotFoundError(f"input '{spec.name}': file not found: {path}") from None
    except UnreadableFileError as err:
        raise located(err, loc) from None
    try:
        with handle:
            return _Reader(spec, dtype, str(path), loc, max_elements).read(handle, suffix[1:])
    except OSError as err:
        raise located(UnreadableFileError(f"input '{spec.name}': cannot read {path}: "
                                          f"{err.strerror or err}", filename=str(path)),
                      loc) from None


def read_stdin(spec: InputSpec, dtype: np.dtype, stdin: BinaryIO | None, loc: Loc,
                kind: str | None, max_elements: int) -> np.ndarray:
    """Read stdin once (bounded by the size limit); ``kind`` None: judge by the first bytes."""
    data = stdin_bytes(spec, stdin, loc, max_elements)
    if kind is None:
        kind = ("npy" if data.startswith(NPY_MAGIC)
                else "npz" if data.startswith(ZIP_MAGICS) else "csv")
    return read_bytes(spec, dtype, data, kind, loc, max_elements)


def stdin_bytes(spec: InputSpec, stdin: BinaryIO | None, loc: Loc, max_elements: int
                ) -> bytes:
    """All of stdin, refused past what an input of ``max_elements`` elements needs."""
    stream = stdin if stdin is not None else sys.stdin.buffer
    limit = max_elements * STDIN_BYTES_PER_ELEMENT + 65536
    chunks, size = [], 0
    while size <= limit:  # in chunks: memory follows what stdin holds, not the limit
        chunk = stream.read(min(1 << 20, limit + 1 - size))
        if not chunk:
            break
        chunk = chunk.encode("utf-8") if isinstance(chunk, str) else chunk
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        raise error_at(loc, f"input '{spec.name}': stdin holds over {limit:,} bytes, more than "
                       f"an input of {max_elements:,} elements needs")
    return data


def read_bytes(spec: InputSpec, dtype: np.dtype, data: bytes, kind: str, loc: Loc,
               max_elements: int) -> np.ndarray:
    """One input's array from stdin's bytes, as ``kind`` (npy, npz or csv)."""
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
        """An .npy array, its header checked (dtype, elements, declared shape, the bytes
        the file holds) before the array is allocated."""
        self.keeps_dtype = True
        start = stream.read(len(NPY_MAGIC))
        if start != NPY_MAGIC:
            hint = "stdin: csv reads comma-separated text" if self.where == "stdin" else None
            raise self.fail(f"{self.where} is not an .npy file (it starts with {start!r})",
                            hint)
        stream.seek(0)
        header = self.header(lambda: read_npy_header(stream))
        self.check_kind(header.dtype)
        self.check_size(header.shape)
        self.check_shape(header.shape)
        try:
            return read_npy_data(stream, header, remaining_bytes(stream))
        except ArrayFileError as err:
            raise self.fail(f"{self.where} {err}") from None

    def header(self, read: Callable[[], NpyHeader]) -> NpyHeader:
        try:
            return read()
        except ArrayFileError as err:
            raise self.fail(f"{self.where} {err.message}", "save a numeric array" if
                            "objects" in err.message else None) from None

    def npz(self, stream: BinaryIO) -> np.ndarray:
        try:
            archive = NpzArchive(stream)
        except ArrayFileError as err:
            raise self.fail(f"{self.where} {err}") from None
        with archive:
            key = self.key_in({name: name for name in archive.files})
            self.where = f"{self.where}, array '{key}'"
            self.keeps_dtype = True
            header = self.header(lambda: archive.header(key))
            self.check_kind(header.dtype)
            self.check_size(header.shape)
            self.check_shape(header.shape)
            try:
                return archive.read(key)
            except ArrayFileError as err:
                raise self.fail(f"{self.where} {err.message}") from None

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
            return self.csv_lines(self.bounded_lines(text))

    def bounded_lines(self, text: io.TextIOBase) -> Iterable[str]:
        """The lines of ``text``, none held past ``MAX_CSV_LINE_BYTES`` characters."""
        while True:
            line = text.readline(MAX_CSV_LINE_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_CSV_LINE_BYTES:
                raise self.fail(f"{self.where} has a line longer than "
                                f"{MAX_CSV_LINE_BYTES:,} characters (the limit for one line)")
            yield line

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
            shown = show_shape(declared)
            if self.spec.batch_dim is not None:  # the leading axis as the spec names it
                shown = show_shape((self.spec.batch_dim, *declared[1:]))
            raise self.fail(f"{self.where} holds an array of shape {show_shape(shape)}, but "
                            f"the spec declares shape {shown}")

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

