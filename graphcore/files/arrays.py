"""Reading ``.npy`` and ``.npz`` files without trusting them: every reader of user arrays
(``data:`` files, ``file:`` inputs and ``--input``, ``--params``, training checkpoints) goes
through here.

What a file says about itself is checked before anything is allocated: an array's header
(shape and dtype) against an element limit and against the bytes the file really holds (a
16 KB ``.npy`` cannot make us allocate the 745 GiB its header claims), and, inside an
``.npz``, against the member's declared uncompressed size. The data is then read in chunks into
the array, never past the bytes the header needs, so a member that inflates to more than it
declares (a zip bomb with a lying header) costs no more than its header admits. Nothing is
ever unpickled: object arrays are refused from their header. Problems are ``ArrayFileError``s
(a ``ValueError``), which each reader words in its own terms and places.

>>> with NpzArchive("params.npz") as archive:
...     archive.header("l1/W").shape       # from the header alone: nothing inflated
...     archive.read("l1/W", max_elements=50_000_000)
"""

from __future__ import annotations

import math
import os
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import numpy as np

NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
# An archive may hold at most this many arrays: a model's parameters and a checkpoint's
# optimizer state stay far below it (10,000 layer scopes), and every member costs memory
# when the archive's directory is read.
MAX_NPZ_MEMBERS = 100_000
_CHUNK = 1 << 20  # bytes read (and inflated) at a time
# what zipfile, zlib and numpy's header parser raise for a corrupt archive or header
_CORRUPT = (ValueError, EOFError, OSError, zipfile.BadZipFile, zlib.error, RuntimeError,
            NotImplementedError, SyntaxError, KeyError, TypeError, UnicodeError)


class ArrayFileError(ValueError):
    """A file that is not a readable array file, or holds an array that cannot be read as
    asked (over the limit, cut short, Python objects). ``message`` says what is wrong with
    the file, or with the archive's array ``key``: ``str()`` names it (``'x' holds ...``)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        self.message = message
        self.key = key
        super().__init__(message if key is None else f"'{key}' {message}")


@dataclass(frozen=True)
class NpyHeader:
    """What an ``.npy`` header declares, and where its data starts (``offset`` bytes in)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    fortran_order: bool
    offset: int

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize


def read_npy_header(stream: IO[bytes]) -> NpyHeader:
    """The header at the start of ``stream`` (left just past it). Refuses anything but a
    numeric-or-text ``.npy`` header: a bad magic, a malformed header, negative sizes, and
    object dtypes (a pickled array, never loaded)."""
    start = stream.read(len(NPY_MAGIC))
    if start != NPY_MAGIC:
        raise ArrayFileError(f"is not an .npy array (it starts with {start[:8]!r})")
    try:
        rest = stream.read(2)
        version = (rest[0], rest[1]) if len(rest) == 2 else None
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        elif version in ((2, 0), (3, 0)):  # 3.0 only allows UTF-8 field names
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            raise ArrayFileError(f"has an .npy header of unknown version {version}")
        offset = stream.tell()  # where the data starts
    except ArrayFileError:
        raise
    except Exception as err:  # noqa: BLE001 - numpy parses the header text with tokenize and
        # literal_eval, whose failures on hostile text are open-ended (TokenError, ...)
        raise ArrayFileError(f"has a malformed .npy header ({_reason(err)})") from None
    shape = tuple(shape)
    if any(not isinstance(n, int) or n < 0 for n in shape):
        raise ArrayFileError(f"declares an impossible shape {shape}")
    if dtype.hasobject:
        raise ArrayFileError("holds Python objects (a pickled array), which are never loaded")
    return NpyHeader(shape, dtype, bool(fortran), offset)


def read_npy_data(stream: IO[bytes], header: NpyHeader, available: int | None,
                  max_elements: int | None = None) -> np.ndarray:
    """The array ``header`` declares, read from ``stream`` (positioned at its data).
    ``available``: the bytes the file holds after the header (None: unknown). Refused before
    allocating: more than ``max_elements`` elements, or more bytes than are available."""
    check_size(header, max_elements)
    if available is not None and available < header.nbytes:
        raise ArrayFileError(f"is cut short: its header declares {header.nbytes:,} bytes of "
                             f"data for shape {header.shape}, the file holds {available:,}")
    try:
        array = np.empty(header.size, dtype=header.dtype)
    except (MemoryError, ValueError):  # only where no limit applies: a size no machine holds
        raise ArrayFileError(f"declares {header.nbytes:,} bytes of data for shape "
                             f"{header.shape}, more than can be allocated") from None
    view = memoryview(array.view(np.uint8).reshape(-1)) if header.nbytes else memoryview(b"")
    done = 0
    try:
        while done < header.nbytes:
            chunk = stream.read(min(_CHUNK, header.nbytes - done))
            if not chunk:
                break
            view[done:done + len(chunk)] = chunk
            done += len(chunk)
    except _CORRUPT as err:
        raise ArrayFileError(f"cannot be read: {_reason(err)}") from None
    if done < header.nbytes:
        raise ArrayFileError(f"is cut short: its header declares {header.nbytes:,} bytes of "
                             f"data, the file holds {done:,}")
    try:
        return array.reshape(header.shape, order="F" if header.fortran_order else "C")
    except ValueError as err:  # sizes numpy cannot index, even of no elements
        raise ArrayFileError(f"declares an impossible shape {header.shape} ({err})") from None


def check_size(header: NpyHeader, max_elements: int | None) -> None:
    """Refuse an array of more than ``max_elements`` elements, or (text and records, whose
    elements can be of any size) more bytes than that many 8-byte elements."""
    if max_elements is None:
        return
    if header.size > max_elements:
        raise ArrayFileError(f"holds {header.size:,} elements (shape "
                             f"{header.shape}), over the limit of {max_elements:,}")
    if header.nbytes > max_elements * 8:
        raise ArrayFileError(f"holds {header.nbytes:,} bytes ({header.dtype}), over "
                             f"the limit of {max_elements * 8:,} ({max_elements:,} elements "
                             "of 8 bytes)")


def read_npy(stream: IO[bytes], max_elements: int | None = None) -> np.ndarray:
    """A whole ``.npy`` file (an open binary file, or bytes in a ``BytesIO``)."""
    header = read_npy_header(stream)
    return read_npy_data(stream, header, remaining_bytes(stream), max_elements)


def remaining_bytes(stream: IO[bytes]) -> int | None:
    """Bytes left in ``stream`` after its position (a file's size, a buffer's), if known."""
    try:
        here = stream.tell()
        end = stream.seek(0, os.SEEK_END)
        stream.seek(here)
        return end - here
    except (OSError, ValueError, AttributeError):
        return None


class NpzArchive:
    """An ``.npz`` file (a path or a binary stream): its arrays by name, each header read on
    request without inflating the data, each array read within its header's bounds.
    ``max_elements``: the limit ``archive[key]`` applies (``read`` takes its own)."""

    def __init__(self, source: str | os.PathLike[str] | IO[bytes],
                 max_elements: int | None = None) -> None:
        self.max_elements = max_elements
        try:
            self.zip = zipfile.ZipFile(source)
        except _CORRUPT:
            raise ArrayFileError("is not an .npz file (a zip archive of .npy arrays)") from None
        try:
            self.members = self._members()
        except ArrayFileError:
            self.zip.close()
            raise
        self._headers: dict[str, NpyHeader] = {}

    def _members(self) -> dict[str, zipfile.ZipInfo]:
        infos = [info for info in self.zip.infolist() if not info.filename.endswith("/")]
        if len(infos) > MAX_NPZ_MEMBERS:
            raise ArrayFileError(f"holds {len(infos):,} arrays, over the limit of "
                                 f"{MAX_NPZ_MEMBERS:,}")
        members: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if key in members:  # two members that read as one name: which one is meant?
                raise ArrayFileError(f"holds two arrays named '{key}'")
            if info.flag_bits & 0x1:
                raise ArrayFileError(f"holds '{key}' encrypted, which cannot be read")
            members[key] = info
        return members

    # --- the mapping numpy's NpzFile offers, bounded ---------------------------------------
    @property
    def files(self) -> list[str]:
        return list(self.members)

    def __contains__(self, key: object) -> bool:
        return key in self.members

    def __iter__(self) -> Iterator[str]:
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    def __getitem__(self, key: str) -> np.ndarray:
        return self.read(key, self.max_elements)

    def header(self, key: str) -> NpyHeader:
        """``key``'s header, from the first bytes of its member (nothing else inflated)."""
        if key not in self._headers:
            try:
                with self.zip.open(self._info(key)) as member:
                    self._headers[key] = read_npy_header(member)
            except ArrayFileError as err:
                raise ArrayFileError(err.message, key) from None
            except _CORRUPT as err:
                raise ArrayFileError(f"is not a readable .npy array ({_reason(err)})",
                                     key) from None
        return self._headers[key]

    def read(self, key: str, max_elements: int | None = None) -> np.ndarray:
        """``key``'s array: its header checked against ``max_elements`` and against the
        member's declared size before anything is allocated; no more inflated than that."""
        header = self.header(key)
        try:
            check_size(header, max_elements)
            self._check_declared_size(self._info(key), header)
            with self.zip.open(self._info(key)) as member:
                read_npy_header(member)
                return read_npy_data(member, header, None)
        except ArrayFileError as err:
            raise ArrayFileError(err.message, key) from None
        except _CORRUPT as err:
            raise ArrayFileError(f"cannot be read: {_reason(err)}", key) from None

    def _info(self, key: str) -> zipfile.ZipInfo:
        if key not in self.members:
            raise KeyError(key)
        return self.members[key]

    @staticmethod
    def _check_declared_size(info: zipfile.ZipInfo, header: NpyHeader) -> None:
        """An .npy member is its header and its data, nothing more: a member declaring
        another size than that is corrupt (and reading it whole checks its CRC)."""
        needed = header.offset + header.nbytes
        if info.file_size != needed:
            raise ArrayFileError(f"declares {info.file_size:,} bytes, but its header (shape "
                                 f"{header.shape}, {header.dtype}) needs {needed:,}")

    def close(self) -> None:
        self.zip.close()

    def __enter__(self) -> NpzArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _reason(err: BaseException) -> str:
    return str(err) or type(err).__name__
