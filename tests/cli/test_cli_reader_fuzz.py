"""Every reader of user data, fed mutated files through the real CLI: CSV and JSON Lines data
files (and the same bytes on stdin), ``.npy`` and ``.npz`` files (as data and as ``file:``
inputs), and ``--params`` archives. The files are valid ones mutated: cut short, bytes
flipped or inserted, headers that lie (shapes, dtypes, declared zip sizes, a member's name
twice), huge declared sizes, deep nesting, long cells and lines, bytes that are not UTF-8.

Whatever the file, graphtool answers with a short message and a documented exit code: never 70
(internal error), no traceback, not killed, within ``TIME_LIMIT_S``, and within bounded memory:
each command runs in a forked child of a server whose address space is capped at 1 GiB
(``RLIMIT_AS``: an allocation a header merely claims fails there, as exit 70), and the child's
peak RSS (``wait4``) must stay under ``MAX_RSS``.

The default run is a fixed, short set of examples (a few seconds); the slow profile
(``-m slow``) explores further, and ``READER_FUZZ_EXAMPLES=N READER_FUZZ_RANDOM=1`` further
still.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from array_file_bytes import npy_bytes, npy_header, npz_bytes
from capped_server import CappedServer
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
MEMORY_CAP = 1 << 30  # address space of the server and each child
MAX_RSS = 600 << 20   # peak resident memory of one command (graphtool itself: about 100 MB)
TIME_LIMIT_S = 20
MAX_STDERR = 4096
ALLOWED_CODES = {0, 1, 2, 65, 66}  # ok, failed run, usage, bad data, unreadable input

# --- the folder every case starts from: specs reading data.*, parameters that fit them ----
POINTS = """graphtool: 1
name: points
data:
  file: data.{suffix}
  x: {{{x}}}
  t: {{{t}, dtype: int32}}
train: {{epochs: 1, batch_size: 2}}
graph:
  - {{op: linear, out_size: 3, from: x, to: logits, name: l1}}
loss: {{op: softmax_cross_entropy, from: [logits, t]}}
outputs: [logits]
"""
ARRAY_ONLY = """graphtool: 1
name: array
data:
  file: data.npy
  x: {key: x}
graph:
  - {op: linear, out_size: 3, from: x, to: logits, name: l1}
loss: {op: sum, from: logits}
outputs: [logits]
"""
FILE_INPUT = """graphtool: 1
name: file_input
inputs:
  x: {{file: data.{suffix}{key}}}
graph:
  - {{op: linear, out_size: 3, name: l1}}
outputs: [_]
"""
ROWS = np.random.RandomState(0).randn(8, 2).astype(np.float32)
LABELS = np.arange(8, dtype=np.int32) % 3
CSV = "f1,f2,label,note\n" + "".join(
    f'{a:.4f},{b:.4f},{t},"n{i}"\n'
    for i, ((a, b), t) in enumerate(zip(ROWS, LABELS, strict=True)))
JSONL = "".join(json.dumps({"f1": float(a), "f2": float(b), "label": int(t), "s": [1, 2]})
                + "\n" for (a, b), t in zip(ROWS, LABELS, strict=True))
PARAMS = npz_bytes([("l1/W.npy", npy_bytes(np.zeros((3, 2), np.float32))),
                    ("l1/b.npy", npy_bytes(np.zeros(3, np.float32)))])
BASE = {
    "csv": CSV.encode(),
    "jsonl": JSONL.encode(),
    "npy": npy_bytes(ROWS),
    "npz": npz_bytes([("x.npy", npy_bytes(ROWS)), ("t.npy", npy_bytes(LABELS))]),
    "params": PARAMS,
}
EVALUATE = ["evaluate", "{spec}", "--params", "p.npz"]
PREDICT = ["predict", "{spec}", "--params", "p.npz", "-o", "-"]
# per reader: (spec, command) pairs reading the mutated data.* file, or stdin for x=- (train
# reads its data and --params as evaluate does, then draws curves: too slow to fuzz here)
COMMANDS = {
    "csv": [("points_csv.yaml", EVALUATE), ("points_csv.yaml", PREDICT),
            ("points_csv.yaml", [*PREDICT, "--input", "x=-"])],
    "jsonl": [("points_jsonl.yaml", EVALUATE), ("points_jsonl.yaml", PREDICT),
              ("points_jsonl.yaml", [*PREDICT, "--input", "x=-"])],
    "npy": [("array.yaml", EVALUATE), ("file_npy.yaml", ["run", "{spec}"]),
            ("points_csv.yaml", [*PREDICT, "--input", "x=data.npy"]),
            ("points_csv.yaml", [*PREDICT, "--input", "x=-"])],
    "npz": [("points_npz.yaml", EVALUATE), ("points_npz.yaml", PREDICT),
            ("file_npz.yaml", ["run", "{spec}"]),
            ("points_npz.yaml", [*PREDICT, "--input", "x=-"])],
    "params": [("points_csv.yaml", ["evaluate", "{spec}", "--params", "data.npz"]),
               ("points_csv.yaml", ["run", "{spec}", "--params", "data.npz"]),
               ("points_csv.yaml", ["predict", "{spec}", "--params", "data.npz", "-o", "-"])],
}


def make_base(folder: Path) -> None:
    columns = {"csv": ("columns: [f1, f2]", "column: label"),
               "jsonl": ("columns: [f1, f2]", "column: label"),
               "npz": ("key: x", "key: t")}
    for suffix, (x, t) in columns.items():
        (folder / f"points_{suffix}.yaml").write_text(POINTS.format(suffix=suffix, x=x, t=t))
    (folder / "array.yaml").write_text(ARRAY_ONLY)
    (folder / "file_npy.yaml").write_text(FILE_INPUT.format(suffix="npy", key=""))
    (folder / "file_npz.yaml").write_text(FILE_INPUT.format(suffix="npz", key=", key: x"))
    (folder / "p.npz").write_bytes(PARAMS)
    for suffix in ("csv", "jsonl", "npy", "npz"):
        (folder / f"data.{suffix}").write_bytes(BASE[suffix])


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reader-fuzz-base")
    make_base(folder)
    return folder


@pytest.fixture(scope="module")
def server(tmp_path_factory, base):
    server = CappedServer(tmp_path_factory.mktemp("reader-fuzz-io"), MEMORY_CAP, TIME_LIMIT_S)
    for spec, command in (("points_csv.yaml", EVALUATE), ("points_csv.yaml", PREDICT),
                          ("file_npy.yaml", ["run", "{spec}"])):
        server.warm([part.format(spec=spec) for part in command], base)
    yield server
    server.close()


def run_reader(server: CappedServer, base: Path, reader: str, content: bytes, command: int) -> None:
    """Run command number ``command`` of ``reader`` on ``content`` and check the answer."""
    spec, template = COMMANDS[reader][command % len(COMMANDS[reader])]
    folder = Path(tempfile.mkdtemp(dir=server.scratch, prefix=f"{reader}-"))
    try:
        shutil.copytree(base, folder, dirs_exist_ok=True)
        suffix = "npz" if reader == "params" else reader
        (folder / f"data.{suffix}").write_bytes(content)
        argv = [part.format(spec=spec) for part in template]
        stdin = content if "x=-" in argv else b""
        code, rss, _, err = server.run(argv, folder, stdin)
        text = err.decode("utf-8", "replace")
        shown = f"{reader}: graphtool {' '.join(argv)} -> {code}\n{text[:1500]}"
        assert code != "timeout", f"ran past {TIME_LIMIT_S} s: {shown}"
        assert isinstance(code, int) and code >= 0, f"killed by a signal: {shown}"
        assert code in ALLOWED_CODES, f"exit {code}: {shown}"
        assert "Traceback" not in text and "internal error" not in text, shown
        assert len(err) < MAX_STDERR, f"{len(err)} bytes on stderr: {shown}"
        assert rss < MAX_RSS, f"peak RSS {rss / 2**20:.0f} MiB: {shown}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- mutations -----------------------------------------------------------------------------
DESCRS = ["<f4", "<f8", ">f4", "<f2", "<i4", "<i8", ">i8", "<u8", "|b1", "|u1", "<U5", "|S3",
          "|O", "<c8", "|V8", "<M8[s]", "<m8[s]", [("a", "<f4"), ("b", "<i4")]]
SIZES = st.one_of(st.integers(0, 12), st.sampled_from([2**31, 2**40, 10**11, 26_000_000]))
SHAPES = st.lists(SIZES, min_size=0, max_size=4).map(tuple)


def npy_lie(draw, original: bytes) -> bytes:
    """An .npy header that claims some shape and dtype, followed by part of the original's
    data (or none, or a lot of zeros)."""
    shape, descr = draw(SHAPES), draw(st.sampled_from(DESCRS))
    descr = np.dtype(descr).descr if isinstance(descr, list) else descr
    try:
        header = npy_header(shape, descr, draw(st.booleans()))
    except (ValueError, TypeError):
        header = npy_header(shape)
    data = original[128:]
    tail = draw(st.sampled_from(["same", "none", "cut", "zeros"]))
    if tail == "none":
        data = b""
    elif tail == "cut":
        data = data[:draw(st.integers(0, len(data)))]
    elif tail == "zeros":
        data = bytes(draw(st.integers(0, 200_000)))
    return header + data


def members(content: bytes) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return [(info.filename, archive.read(info)) for info in archive.infolist()]


def patch_sizes(draw, content: bytes) -> bytes:
    """Declared sizes in the zip's local and central headers set to other values."""
    data = bytearray(content)
    size = draw(st.sampled_from([0, 1, 100, 2**31 - 1, 2**32 - 1]))
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = data.find(signature)
        while start >= 0 and draw(st.booleans()):
            data[start + offset:start + offset + 4] = struct.pack("<I", size)
            start = data.find(signature, start + 4)
    return bytes(data)


def npz_mutation(draw, original: bytes) -> bytes:
    parts = members(original)
    action = draw(st.sampled_from(["lie", "twice", "huge", "drop", "rename", "sizes",
                                   "method", "bytes"]))
    index = draw(st.integers(0, len(parts) - 1))
    name, content = parts[index]
    if action == "lie":
        parts[index] = (name, npy_lie(draw, content))
    elif action == "twice":  # the same key as 'x' and 'x.npy', one of them lying
        lie = (name[:-4] if name.endswith(".npy") else name, npy_lie(draw, content))
        parts.insert(draw(st.integers(0, len(parts))), lie)
    elif action == "huge":
        parts.append((draw(st.sampled_from(["big.npy", name])), npy_header((10**6, 10**6))))
    elif action == "drop":
        del parts[index]
    elif action == "rename":
        parts[index] = (draw(st.sampled_from(["", "dir/", "../x.npy", "x", "W.npy"])), content)
    if action == "sizes":
        return patch_sizes(draw, npz_bytes(parts))
    if action == "method":
        method = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_BZIP2,
                                       zipfile.ZIP_LZMA]))
        return npz_bytes(parts, method)
    if action == "bytes":
        return byte_mutation(draw, original)
    return npz_bytes(parts)


TEXT_PAYLOADS = [b'"', b'""', b"\n", b"\r", b"\r\n", b"\x00", b"\xff\xfe", b"\xe9", b"#",
                 b",", b",,,,", b"1e999", b"-inf", b"nan", b"9" * 400, b"[" * 5000,
                 b"{" * 5000, b"\xef\xbb\xbf", b"{}", b"[]", b"null", b"true", b'"\\ud800"',
                 b"7" * 200_000, b"," * 600_000, b"1,2\n" * 3, b"\t"]


def byte_mutation(draw, original: bytes) -> bytes:
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["cut", "flip", "insert", "delete", "repeat"]))
        at = draw(st.integers(0, len(data)))
        if action == "cut":
            del data[at:]
        elif action == "flip" and data:
            at = min(at, len(data) - 1)
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif action == "insert":
            data[at:at] = draw(st.sampled_from(TEXT_PAYLOADS) | st.binary(max_size=16))
        elif action == "delete":
            del data[at:at + draw(st.integers(1, 64))]
        elif action == "repeat":
            data[at:at] = data[at:at + 64] * draw(st.integers(2, 2000))
    return bytes(data)


@st.composite
def mutated(draw, reader: str) -> bytes:
    original = BASE[reader]
    if reader == "npy" and draw(st.booleans()):
        return npy_lie(draw, original)
    if reader in ("npz", "params") and draw(st.booleans()):
        return npz_mutation(draw, original)
    return byte_mutation(draw, original)


def fuzz_settings(examples: int):
    return settings(max_examples=int(os.environ.get("READER_FUZZ_EXAMPLES", examples)),
                    deadline=None, derandomize=not os.environ.get("READER_FUZZ_RANDOM"),
                    database=None, phases=(Phase.explicit, Phase.generate),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


READERS = ["csv", "jsonl", "npy", "npz", "params"]
# The reported findings, as fixed examples run every time.
FINDINGS = [
    ("npy", npy_header((100_000, 2_000_000)) + bytes(16_000), 0),
    ("csv", b"f1,f2,label,note\n1,2,0,x\n3,\"" + b"7" * 200_000 + b"\",1,x\n", 0),
    ("csv", b"f1,f2,label,note\n1,2,0,x\n3,\xe9,1,x\n", 1),
    ("csv", b'f1,f2,label,note\n1,2,0,"a\nb"\n3,4,1,c\n', 2),
    ("csv", b"f1,f2,label,note\n", 0),
    ("csv", b"f1,f2,label,note\n", 1),
    ("jsonl", b'{"f1": ' + b"[" * 200_000 + b"]" * 200_000 + b', "f2": 1, "label": 0}\n', 0),
    ("jsonl", b'{"f1": ' + b"9" * 400 + b', "f2": 1, "label": 0}\n', 0),
    ("jsonl", b'{"f1": "\xff", "f2": 1, "label": 0}\n', 1),
    ("npz", npz_bytes([("x.npy", npy_header((2,), "|O") + b"\x80\x04N."),
                       ("t.npy", npy_bytes(LABELS))]), 0),
    ("npy", npy_bytes(np.zeros((3, 0), np.float32)), 1),  # a weight of no fan-in
    ("params", npz_bytes([("l1/W", npy_header((3, 400_000_000))),
                          ("l1/W.npy", npy_bytes(np.zeros((3, 2), np.float32))),
                          ("l1/b.npy", npy_bytes(np.zeros(3, np.float32)))]), 0),
]


@pytest.mark.parametrize("reader", READERS)
@fuzz_settings(8)
@given(data=st.data(), command=st.integers(0, 3))
def test_mutated_files_get_documented_answers_in_bounded_memory(server, base, reader, data,
                                                                 command):
    run_reader(server, base, reader, data.draw(mutated(reader)), command)


@pytest.mark.parametrize("reader, content, command", FINDINGS)
def test_the_reported_files_get_documented_answers(server, base, reader, content, command):
    run_reader(server, base, reader, content, command)


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS)
@fuzz_settings(150)
@given(data=st.data(), command=st.integers(0, 3))
def test_mutated_files_longer_profile(server, base, reader, data, command):
    run_reader(server, base, reader, data.draw(mutated(reader)), command)
