"""Hand-made array files for reader tests: ``.npy`` headers that claim what they like, and
``.npz`` archives whose members lie (names, declared sizes, data that inflates far)."""

from __future__ import annotations

import io
import warnings
import zipfile

import numpy as np


def npy_header(shape: tuple[int, ...], descr: str = "<f4", fortran: bool = False) -> bytes:
    """A version 1.0 ``.npy`` header declaring ``shape`` and ``descr`` (no data after it)."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": descr, "fortran_order": fortran, "shape": tuple(shape)})
    return buffer.getvalue()


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def npz_bytes(members: list[tuple[str, bytes]], compression: int = zipfile.ZIP_DEFLATED
              ) -> bytes:
    """A zip archive of ``(name, content)`` members, in order (names may repeat)."""
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w", compression) as archive:
        warnings.simplefilter("ignore")  # "Duplicate name": a repeated name is the point
        for name, content in members:
            archive.writestr(zipfile.ZipInfo(name), content, compress_type=compression)
    return buffer.getvalue()


def zeros_member(path, name: str, shape: tuple[int, ...], descr: str = "<f4",
                 extra: list[tuple[str, bytes]] = ()) -> None:
    """Write an .npz at ``path`` whose member ``name`` really holds an array of ``shape``
    zeros, deflated (a few hundred KB for hundreds of MB), streamed so the test never holds
    the array; then the ``extra`` members."""
    header = npy_header(shape, descr)
    nbytes = int(np.prod(shape)) * np.dtype(descr).itemsize
    chunk = bytes(1 << 22)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open(name, "w", force_zip64=True) as member:
            member.write(header)
            left = nbytes
            while left:
                member.write(chunk[:min(left, len(chunk))])
                left -= min(left, len(chunk))
        for extra_name, content in extra:
            archive.writestr(extra_name, content)
