"""``train --resume`` over checkpoints as untrusted files: another spec's or data's is refused
saying whose it is; a damaged or tampered one (truncated, bad CRC, mis-keyed, values of the
wrong shape or kind, an order past the data, a zip bomb) is a located exit 65 naming the file
and the key, with no traceback and bounded memory; a folder or a FIFO is exit 66 at once.
Ctrl-C keeps a finished ``--save`` file, says how to continue with the same command, and a
bare ``--resume`` continues with the interrupted run's options; one ``train`` writes a run
folder at a time."""

from __future__ import annotations

import io
import json
import os
import re
import resource
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import graphtool_popen as graphtool
from cli_helpers import invoke as cli

ROOT = Path(__file__).resolve().parents[2]

SPEC = """graphtool: 1
name: points
seed: 0
data:
  file: points.csv
  x: {columns: [f1, f2]}
  t: {column: label, dtype: int32}
validation: 0.25
train: {epochs: 40, batch_size: 16, optimizer: {name: adam, alpha: 0.02}, metrics: [accuracy]}
graph:
  - {op: linear, out_size: 12, from: x}
  - tanh
  - {op: linear, out_size: 2, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
outputs: [logits]
"""


def write_points(path: Path, n: int, seed: int = 0, header: str = "f1,f2,label") -> None:
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 2)
    t = (x[:, 0] * x[:, 1] > 0).astype(int)
    lines = [header] + [f"{a:.5f},{b:.5f},{c}" for (a, b), c in zip(x, t, strict=True)]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    """The spec and its data in the working folder (outputs/ is written there)."""
    write_points(tmp_path / "points.csv", 160)
    (tmp_path / "points.yaml").write_text(SPEC)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def params_of(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as npz:
        return {k: npz[k] for k in npz.files}


def assert_same_params(a: Path, b: Path) -> None:
    first, second = params_of(a), params_of(b)
    assert list(first) == list(second)
    for key in first:
        np.testing.assert_array_equal(first[key], second[key], err_msg=key)


def rows_without_time(path: Path) -> list[str]:
    return [line.rsplit(",", 1)[0] for line in path.read_text().splitlines()]


# --- whose checkpoint it is ------------------------------------------------------------------

def test_a_checkpoint_of_another_spec_is_refused_saying_whose_it_is(folder):
    """Regression: the same name and model over other columns (and data) resumed, exit 0."""
    assert cli("train", "points.yaml", "--epochs", 2, "-q").exit_code == 0
    other = folder / "other"
    other.mkdir()
    write_points(other / "uv.csv", 160, seed=5, header="u,v,y")
    (other / "points.yaml").write_text(SPEC.replace("points.csv", "uv.csv").replace(
        "[f1, f2]", "[u, v]").replace("column: label", "column: y"))
    result = cli("train", Path("other/points.yaml"), "--epochs", 3, "--resume")
    assert result.exit_code == 65, result.stderr
    assert result.stderr == (
        f"error: {Path('outputs/points/runs/1/checkpoint.npz')}: a checkpoint of another spec, "
        "'points' (points.yaml): its data columns differ (t: column label (int32) then, "
        "column y (int32) now; x: columns f1, f2 (float32) then, columns u, v (float32) now); "
        "it was made by: graphtool train points.yaml --epochs 2; resume with that spec, or "
        "train this one without --resume\n")


def test_a_checkpoint_of_another_model_or_other_data_is_refused(folder):
    assert cli("train", "points.yaml", "--epochs", 2, "-q").exit_code == 0
    Path("wider.yaml").write_text(SPEC.replace("out_size: 12", "out_size: 13"))
    result = cli("train", "wider.yaml", "--resume")
    assert result.exit_code == 65
    assert ": a checkpoint of another spec, 'points' (" in result.stderr
    assert "its model differs (spec content " in result.stderr
    write_points(folder / "same_columns.csv", 160, seed=9)
    result = cli("train", "points.yaml", "--resume", "--data", "same_columns.csv")
    assert result.exit_code == 65
    assert "a checkpoint of spec 'points' over other data (the same number of rows, other " \
        "values)" in result.stderr
    write_points(folder / "fewer.csv", 100)
    result = cli("train", "points.yaml", "--resume", "--data", "fewer.csv")
    assert result.exit_code == 65
    assert "over other data (training rows: 120 then, 75 now; validation rows: 40 then, 25 " \
        "now)" in result.stderr
    # the same spec, written otherwise (comments, spacing, key order), is the same spec
    (folder / "respaced.yaml").write_text("# the same spec\n" + SPEC.replace(
        "{op: linear, out_size: 12, from: x}", "{from: x,  op: linear,   out_size: 12}"))
    result = cli("train", "respaced.yaml", "--resume", "--epochs", 3, "-q")
    assert result.exit_code == 0, result.stderr


# --- damaged and tampered checkpoints ----------------------------------------------------------

def _tampered(arrays: dict[str, np.ndarray], edit: str) -> dict[str, np.ndarray]:
    a = dict(arrays)
    if edit == "iteration of shape (2,)":
        a["trainer/updater/iteration"] = np.array([1, 2])
    elif edit == "iteration a float":
        a["trainer/updater/iteration"] = np.asarray(1.5)
    elif edit == "a negative iteration":
        a["trainer/updater/iteration"] = np.asarray(-4)
    elif edit == "an order index past the data":
        order = a["trainer/updater/iterator:main/order"].copy()
        order[0] = 500
        a["trainer/updater/iterator:main/order"] = order
    elif edit == "a position past the epoch":
        a["trainer/updater/iterator:main/current_position"] = np.asarray(121)
    elif edit == "a non-JSON log record":
        a["graphtool/log"] = np.asarray("not json")
    elif edit == "a non-JSON summary":
        a["trainer/extensions/LogReport/_summary/_names"] = np.asarray("[1,")
    elif edit == "RNG keys of another dtype":
        a["trainer/_numpy_random/keys"] = a["trainer/_numpy_random/keys"].astype(np.float64)
    elif edit == "an RNG position past the keys":
        a["trainer/_numpy_random/pos"] = np.asarray(5000)
        # has_gauss is whatever numpy's global generator held when the checkpoint was made,
        # which depends on the tests run before in the same process: fixed, so is the message
        a["trainer/_numpy_random/has_gauss"] = np.asarray(0)
    elif edit == "a missing key":
        del a["trainer/updater/iteration"]
    elif edit == "a mis-keyed key":
        a["trainer/updater/iterationX"] = a.pop("trainer/updater/iteration")
    elif edit == "an extra key":
        a["trainer/extra"] = np.zeros(3)
    elif edit == "a weight of another dtype":
        key = "trainer/updater/model:main/linear_0/W"
        a[key] = a[key].astype(np.float64)
    elif edit == "optimizer state of another shape":
        a["trainer/updater/optimizer:main/linear_0/W/m"] = np.zeros((3, 3), np.float32)
    elif edit == "an identity that is no identity":
        a["graphtool/identity"] = np.asarray("{}")
    elif edit == "an option that cannot be":
        a["graphtool/command"] = np.asarray('{"options": {"epochs": "x"}}')
    elif edit == "an object array":
        a["trainer/updater/iteration"] = np.array([{"x": 1}], dtype=object)
    return a


TAMPERED = [
    ("iteration of shape (2,)", "trainer/updater/iteration: expected an integer (a scalar); "
     "the file holds shape (2,), dtype int64"),
    ("iteration a float", "trainer/updater/iteration: expected an integer (a scalar); the "
     "file holds shape (), dtype float64"),
    ("a negative iteration", "trainer/updater/iteration: -4 is no step count"),
    ("an order index past the data", "trainer/updater/iterator:main/order: not an order of "
     "the 120 examples (each index from 0 once)"),
    ("a position past the epoch", "trainer/updater/iterator:main/current_position, epoch: "
     "121, 2 is no position in an epoch of 120 examples"),
    ("a non-JSON log record", "graphtool/log: not JSON (Expecting value: line 1 column 1 "
     "(char 0))"),
    ("a non-JSON summary", "trainer/extensions/LogReport/_summary/_names: not JSON"),
    ("RNG keys of another dtype", "trainer/_numpy_random/keys: expected shape (624,), dtype "
     "uint32; the file holds shape (624,), dtype float64"),
    ("an RNG position past the keys", "trainer/_numpy_random/pos, has_gauss: 5000, 0 is not "
     "a generator's state"),
    ("a missing key", "trainer/updater/iteration: the file has no such key"),
    ("a mis-keyed key", "trainer/updater/iteration: the file has no such key"),
    ("an extra key", "the checkpoint holds 1 key(s) this run does not have: trainer/extra"),
    ("a weight of another dtype", "trainer/updater/model:main/linear_0/W: dtype float64, but "
     "the model holds float32"),
    ("optimizer state of another shape", "trainer/updater/optimizer:main/linear_0/W/m: shape "
     "(3, 3), dtype float32, but its parameter has shape (12, 2), dtype float32"),
    ("an identity that is no identity", "graphtool/identity: expected an object with the keys"),
    ("an option that cannot be", "graphtool/command: option epochs holds 'x', which it "
     "cannot be"),
    ("an object array", "trainer/updater/iteration: holds Python objects (a pickled array), "
     "which are never loaded"),
]


@pytest.fixture
def trained(folder) -> dict[str, np.ndarray]:
    assert cli("train", "points.yaml", "--epochs", 2, "-q").exit_code == 0
    return params_of(folder / "outputs" / "points" / "runs" / "1" / "checkpoint.npz")


@pytest.mark.parametrize("edit, message", TAMPERED, ids=[e for e, _ in TAMPERED])
def test_a_tampered_checkpoint_is_exit_65_naming_the_file_and_the_key(folder, trained, edit,
                                                                       message):
    """Regression: several of these were exit 70 (a traceback's last line)."""
    path = Path("tampered.npz")
    arrays = _tampered(trained, edit)
    with zipfile.ZipFile(path, "w") as archive:  # np.savez refuses nothing, pickles objects
        for key, value in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, value, allow_pickle=True)
            archive.writestr(key + ".npy", buffer.getvalue())
    result = cli("train", "points.yaml", "--resume", path, "--out-dir", "o")
    assert result.exit_code == 65, result.stderr
    assert result.stderr.startswith(f"error: {path}: {message}"), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert not (Path("o") / "points" / "runs" / "1" / "train.csv").exists()  # nothing written


def test_truncated_and_crc_damaged_checkpoints_are_exit_65(folder, trained):
    data = (Path("outputs") / "points" / "runs" / "1" / "checkpoint.npz").read_bytes()
    Path("truncated.npz").write_bytes(data[:len(data) // 2])
    result = cli("train", "points.yaml", "--resume", "truncated.npz")
    assert result.exit_code == 65
    assert result.stderr == "error: truncated.npz: not a checkpoint (an .npz archive of " \
        "arrays)\n"
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        last = archive.infolist()[-1]  # flip a byte inside its compressed data
        start = last.header_offset + 30 + len(last.filename.encode()) + len(last.extra)
    damaged = bytearray(data)
    damaged[start + last.compress_size // 2] ^= 0xFF
    Path("crc.npz").write_bytes(bytes(damaged))
    result = cli("train", "points.yaml", "--resume", "crc.npz")
    assert result.exit_code == 65, result.stderr
    name = last.filename[:-4]
    assert result.stderr.startswith(f"error: crc.npz: {name}: "), result.stderr
    assert "Traceback" not in result.stderr


def _deflated_zeros(header: bytes, zeros: int) -> tuple[bytes, int]:
    """``header`` then ``zeros`` zero bytes, raw-deflated in about zeros / 1000 bytes (one
    flushed block of 1 MiB written over and over), and their CRC-32."""
    chunk = bytes(1 << 20)
    blocks, rest = divmod(zeros, len(chunk))
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = deflate.compress(header) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
    data += block * blocks + deflate.compress(bytes(rest)) + deflate.flush()
    crc = zlib.crc32(header)
    for _ in range(blocks):
        crc = zlib.crc32(chunk, crc)
    return data, zlib.crc32(bytes(rest), crc)


def _with_bomb(arrays: dict[str, np.ndarray], key: str, dtype: str, count: int,
               path: Path) -> None:
    """An .npz of ``arrays`` whose ``key`` is ``count`` zeros of ``dtype``: true to its
    headers (the zip sizes, the CRC), a few MB on disk."""
    members = []
    for name, value in arrays.items():
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, value)
        raw = buffer.getvalue()
        deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
        members.append((name, deflate.compress(raw) + deflate.flush(), zlib.crc32(raw),
                        len(raw)))
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": dtype, "fortran_order": False,
                                                  "shape": (count,)})
    head = header.getvalue()
    data, crc = _deflated_zeros(head, count * np.dtype(dtype).itemsize)
    members.append((key, data, crc, len(head) + count * np.dtype(dtype).itemsize))
    local, central = bytearray(), bytearray()
    for name, data, crc, size in members:
        encoded = f"{name}.npy".encode()
        fields = (20, 0, 8, 0, 0x21, crc, len(data), size, len(encoded), 0)
        offset = len(local)
        local += struct.pack("<4s5H3L2H", b"PK\x03\x04", *fields) + encoded + data
        central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, *fields, 0, 0, 0, 0,
                               offset) + encoded
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members),
                      len(central), len(local), 0)
    path.write_bytes(bytes(local + central + end))


MEMORY_CAP = 1 << 30


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


@pytest.mark.slow  # a capped process; the same reader refuses a zip bomb quick in test_spec_limits
def test_a_zip_bomb_checkpoint_is_refused_from_its_headers(folder, trained):
    """Regression: 3 MB of RNG keys inflating to 3.2 GB were allocated (MemoryError, 70)."""
    arrays = {k: v for k, v in trained.items() if k != "trainer/_numpy_random/keys"}
    bomb = folder / "bomb.npz"
    _with_bomb(arrays, "trainer/_numpy_random/keys", "<u4", 800_000_000, bomb)
    assert bomb.stat().st_size < 5_000_000
    with zipfile.ZipFile(bomb) as archive:  # a real archive, true to its headers
        assert archive.getinfo("trainer/_numpy_random/keys.npy").file_size > 3_000_000_000
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "cli", "train", "points.yaml", "--resume",
                           "bomb.npz", "-q"], cwd=folder, env=env, preexec_fn=_cap_memory,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 65, done.stderr
    assert done.stderr == "error: bomb.npz: trainer/_numpy_random/keys: expected shape (624,), " \
        "dtype uint32; the file holds shape (800000000,), dtype uint32\n"
    assert time.monotonic() - started < 60


def test_a_folder_or_a_fifo_as_the_checkpoint_is_exit_66_at_once(folder):
    """Regression: a folder was exit 70 (IsADirectoryError), a FIFO hung forever."""
    (folder / "dir").mkdir()
    os.mkfifo(folder / "fifo")
    for name, message in (("dir", "error: checkpoint dir is a folder, not a checkpoint file\n"
                                  f"hint: name the file in it, e.g. {Path('dir/checkpoint.npz')}"),
                          ("fifo", "error: checkpoint fifo is not a regular file (a FIFO, a "
                                   "device or a socket); a checkpoint is read from a file")):
        child = graphtool("train", "points.yaml", "--resume", name, cwd=folder)
        try:
            out, err = child.communicate(timeout=60)
        finally:
            child.kill()
        assert child.returncode == 66, err
        assert err.strip() == message and out == ""


# --- Ctrl-C, the hint, the options a checkpoint keeps --------------------------------------

def _interrupt(child: subprocess.Popen, checkpoint: Path) -> str:
    deadline = time.monotonic() + 60
    while not checkpoint.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    return err


@pytest.mark.slow  # three training processes, one interrupted
def test_ctrl_c_keeps_a_finished_save_and_its_hint_continues_the_same_run(folder):
    """Regression: Ctrl-C replaced a finished run's --save file with mid-training
    parameters; the hint (`graphtool train SPEC --resume`) dropped --epochs (so it trained
    to the spec's 40) and --out-dir (so it failed with 66)."""
    spec = folder / "points.yaml"
    full = graphtool("train", spec, "--epochs", 120, "--lr", 0.01, "--out-dir", "full",
                     "--save", "full.npz", "-q", cwd=folder)
    assert cli("train", spec, "--epochs", 2, "--save", folder / "final.npz", "--out-dir",
               folder / "first", "-q").exit_code == 0
    finished = (folder / "final.npz").read_bytes()
    out_dir = folder / "run dir"  # a space, to be quoted
    child = graphtool("train", "points.yaml", "--epochs", 120, "--lr", 0.01, "--out-dir",
                      "run dir", "--save", "final.npz", "-q", cwd=folder)
    err = _interrupt(child, out_dir / "points" / "runs" / "1" / "checkpoint.npz")
    _, full_err = full.communicate(timeout=300)
    assert full.returncode == 0, full_err
    if child.returncode == 0:
        pytest.skip("training finished before the signal arrived (a very fast machine)")
    shutil.copytree(out_dir, folder / "copy")
    assert child.returncode == 130, err
    assert (folder / "final.npz").read_bytes() == finished  # never replaced by a partial run
    assert "wrote final.npz" not in err
    hint = re.search(r"continue with: (.*)$", err.strip()).group(1)
    assert hint == "graphtool train points.yaml --epochs 120 --lr 0.01 --out-dir 'run dir' " \
        "--save final.npz --resume --run 1"
    assert "; not written: final.npz (--save is written when the run finishes)" in err
    words = shlex.split(hint)
    assert words[:2] == ["graphtool", "train"]
    resumed = graphtool(*words[1:], cwd=folder)
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert_same_params(folder / "full.npz", folder / "final.npz")
    assert rows_without_time(out_dir / "points" / "runs" / "1" / "train.csv") == \
        rows_without_time(folder / "full" / "points" / "runs" / "1" / "train.csv")
    # a bare --resume of the interrupted run's checkpoint continues as the hint does
    bare = graphtool("train", "points.yaml", "--resume", "--out-dir", "copy", "--save",
                     "bare.npz", "-q", cwd=folder)
    _, err = bare.communicate(timeout=300)
    assert bare.returncode == 0, err
    assert_same_params(folder / "full.npz", folder / "bare.npz")


@pytest.mark.slow  # training processes, one interrupted
def test_a_bare_resume_continues_with_the_interrupted_runs_options(folder):
    """The checkpoint keeps the command's options: `--resume` alone trains to --epochs 60
    at --lr 0.01 (not the spec's 40 epochs at 0.02); an option given again replaces one."""
    spec = folder / "points.yaml"
    assert cli("train", spec, "--epochs", 60, "--lr", 0.01, "--out-dir", folder / "full",
               "--save", folder / "full.npz", "-q").exit_code == 0
    assert cli("train", spec, "--epochs", 20, "--lr", 0.01, "--out-dir", folder / "o",
               "-q").exit_code == 0
    stretched = cli("train", spec, "--resume", "--epochs", 60, "--out-dir", folder / "o",
                    "--save", folder / "resumed.npz", "--json")
    assert stretched.exit_code == 0, stretched.stderr
    doc = json.loads(stretched.stdout)
    assert (doc["epochs"], doc["hyperparameters"]) == (60, {"alpha": 0.01})
    assert_same_params(folder / "full.npz", folder / "resumed.npz")
    again = cli("train", spec, "--resume", "--out-dir", folder / "o", "--json")
    assert again.exit_code == 0
    assert json.loads(again.stdout)["epochs"] == 60  # the resumed run's --epochs 60, kept
    changed = cli("train", spec, "--resume", "--lr", 0.02, "--out-dir", folder / "o")
    assert changed.exit_code == 65
    assert "hyperparameters: {'alpha': 0.01} then, {'alpha': 0.02} now" in changed.stderr


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["sigint twice", "sigterm"])
def test_a_run_stopped_at_random_moments_then_resumed_equals_an_uninterrupted_one(folder,
                                                                                  stop):
    """Killed mid-epoch (Ctrl-C twice: at once, without a final checkpoint; or SIGTERM) at
    several moments, each time resumed: the parameters and train.csv are the uninterrupted
    run's (rows written after the last checkpoint are cut off)."""
    spec = folder / "points.yaml"
    (folder / "points.yaml").write_text(SPEC.replace("metrics: [accuracy]",
                                                     "metrics: [accuracy], log_every: 3"))
    assert cli("train", spec, "--epochs", 150, "--out-dir", folder / "full", "--save",
               folder / "full.npz", "-q").exit_code == 0
    checkpoint = folder / "outputs" / "points" / "runs" / "1" / "checkpoint.npz"
    rng = np.random.RandomState(3)
    command = ["train", "points.yaml", "--epochs", 150, "-q"]
    for attempt in range(4):
        before = checkpoint.stat().st_mtime_ns if checkpoint.exists() else None
        child = graphtool(*command, *(["--resume"] if attempt else []), cwd=folder)
        deadline = time.monotonic() + 60
        while child.poll() is None and time.monotonic() < deadline and (
                not checkpoint.exists() or checkpoint.stat().st_mtime_ns == before):
            time.sleep(0.01)  # until this run has written a checkpoint of its own (or ended)
        time.sleep(rng.uniform(0.2, 1.0))
        if stop == "sigterm":
            child.send_signal(signal.SIGTERM)
        else:
            child.send_signal(signal.SIGINT)
            child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
        assert child.returncode in (0, 130, 143), err
        assert "Traceback" not in err
        if child.returncode == 0:
            break
    last = graphtool(*command, "--resume", "--save", "resumed.npz", cwd=folder)
    _, err = last.communicate(timeout=300)
    assert last.returncode == 0, err
    assert_same_params(folder / "full.npz", folder / "resumed.npz")
    assert rows_without_time(folder / "outputs" / "points" / "runs" / "1" / "train.csv") == \
        rows_without_time(folder / "full" / "points" / "runs" / "1" / "train.csv")


# --- one run per run folder --------------------------------------------------------------

@pytest.mark.slow  # four training processes
def test_a_resume_of_a_run_still_training_is_refused_naming_it_and_a_new_train_is_not(folder):
    """Regression: two runs of one spec both exited 0, leaving one's best.npz beside the
    other's checkpoint.npz and train.csv. A new `train` gets a folder of its own; a `--resume`
    of the run still training is refused. A killed run's lock goes with it (kill -9)."""
    first = graphtool("train", "points.yaml", "--epochs", 100000, "-q", cwd=folder)
    try:
        deadline = time.monotonic() + 60
        checkpoint = folder / "outputs" / "points" / "runs" / "1" / "checkpoint.npz"
        while not checkpoint.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        second = graphtool("train", "points.yaml", "--epochs", 1, "-q", cwd=folder)
        _, err = second.communicate(timeout=60)
        assert second.returncode == 0, err
        assert (folder / "outputs" / "points" / "runs" / "2" / "best.npz").exists()
        resumed = graphtool("train", "points.yaml", "--resume", "--run", 1, "-q", cwd=folder)
        out, err = resumed.communicate(timeout=60)
        assert resumed.returncode == 73, err
        assert err == f"error: {Path('outputs/points/runs/1')} is being written by another " \
            f"training run (process {first.pid})\nhint: wait for it to end; `train` without " \
            "--resume starts a run of its own\n"
        assert out == ""
    finally:
        first.kill()
        first.communicate(timeout=30)
    after = graphtool("train", "points.yaml", "--resume", "--run", 1, "--epochs", 1, "-q",
                      cwd=folder)
    _, err = after.communicate(timeout=60)
    assert after.returncode == 0, err
