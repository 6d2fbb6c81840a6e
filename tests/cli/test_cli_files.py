"""Where commands write: `-o`, `--save`, `viz -o` and the artifact folder. Atomic writes rename
only over regular files; symlinks are written through, FIFOs and devices written into; paths
that cannot be created are exit 73 (74 for a full disk), with nothing half-written; temporary
files never outlive their writer for long (SIGTERM, kill -9); a viz's drawing files never mix
two runs."""

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import quick_first
from typer.testing import CliRunner

from cli import files
from cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "specs" / "seed_static.yaml"
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def run_to(destination, tmp_path, *extra):
    return invoke("run", SPEC, "-q", "--out-dir", tmp_path / "outputs", "-o", destination,
                  *extra)


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


def is_npz(data: bytes) -> bool:
    return data.startswith(b"PK\x03\x04")


# --- special files and links ---------------------------------------------------------------
def make_device(path: Path, kind: int, device: tuple[int, int]) -> None:
    try:
        os.mknod(path, kind | 0o666, os.makedev(*device))
    except (PermissionError, AttributeError, OSError) as err:
        pytest.skip(f"cannot create a device node here: {err}")


def test_a_character_device_is_written_into_not_replaced(tmp_path):
    null = tmp_path / "null"  # a second /dev/null (char 1,3), made here: /dev/null stays safe
    make_device(null, stat.S_IFCHR, (1, 3))
    before = os.stat(null)
    result = run_to(null, tmp_path)
    assert result.exit_code == 0, result.stderr
    after = os.stat(null)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert after.st_ino == before.st_ino
    assert temporaries(tmp_path) == []


def test_a_full_device_is_exit_74(tmp_path):
    full = tmp_path / "full"  # /dev/full: every write fails with ENOSPC
    make_device(full, stat.S_IFCHR, (1, 7))
    result = run_to(full, tmp_path)
    assert result.exit_code == 74, result.stderr
    assert result.stderr.startswith("error: cannot write") and "No space left" in result.stderr
    assert stat.S_ISCHR(os.stat(full).st_mode)


def test_a_block_device_is_refused_and_kept(tmp_path):
    block = tmp_path / "block"
    make_device(block, stat.S_IFBLK, (7, 0))
    result = run_to(block, tmp_path)
    assert result.exit_code == 73 and "block device" in result.stderr
    assert stat.S_ISBLK(os.stat(block).st_mode)


def test_a_fifo_is_written_into(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = run_to(fifo, tmp_path)
    reader.join(30)
    assert result.exit_code == 0, result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received and is_npz(received[0])
    assert temporaries(tmp_path) == []


def test_a_symlink_is_written_through_and_kept(tmp_path):
    target = tmp_path / "real" / "arrays.npz"
    target.parent.mkdir()
    target.write_bytes(b"old")
    target.chmod(0o640)
    link = tmp_path / "link.npz"
    link.symlink_to(target)
    result = run_to(link, tmp_path)
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert is_npz(target.read_bytes())
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640  # an existing file keeps its mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.npz", "outputs", "real"]
    assert temporaries(tmp_path) == []


def test_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.npz"
    link.symlink_to(tmp_path / "made.npz")
    assert run_to(link, tmp_path).exit_code == 0
    assert link.is_symlink() and is_npz((tmp_path / "made.npz").read_bytes())


def test_dev_stdout_writes_to_the_process_stdout(tmp_path):
    done = subprocess.run([sys.executable, "-m", "cli", "viz", str(SPEC), "-q", "--out-dir",
                           str(tmp_path), "-o", "/dev/stdout"], capture_output=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"digraph")
    assert list(tmp_path.iterdir()) == []


# --- outputs that cannot be created: exit 73, before any work ------------------------------
@pytest.mark.parametrize("command", [["run", SPEC, "-o"], ["train", SPEC, "--steps", "1",
                                                               "--save"], ["viz", SPEC, "-o"]])
def test_an_output_that_is_a_folder_is_exit_73(command, tmp_path):
    folder = tmp_path / "here"
    folder.mkdir()
    result = invoke(*command, folder, "--out-dir", tmp_path / "outputs")
    assert result.exit_code == 73, result.stderr
    assert "cannot create output" in result.stderr and "is a folder" in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2  # the message and a hint
    assert not (tmp_path / "outputs").exists()  # refused before anything was written


@pytest.mark.parametrize("command", [["run", SPEC, "-o", ""], ["viz", SPEC, "-o", ""],
                                     ["train", SPEC, "--steps", "1", "--save", ""],
                                     ["run", SPEC, "--out-dir", ""], ["viz", SPEC, "--out-dir", ""],
                                     ["bench", SPEC, "--out-dir", ""]])
def test_an_empty_output_path_is_exit_73(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # '' must not become the current folder
    result = invoke(*command)
    assert result.exit_code == 73, result.stderr
    assert "''" in result.stderr and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_out_dir_naming_a_file_is_exit_73(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("mine")
    for command in (["run", SPEC], ["viz", SPEC], ["bench", SPEC, "--repeat", "1"]):
        result = invoke(*command, "--out-dir", afile)
        assert result.exit_code == 73, result.stderr
        assert "is not a folder" in result.stderr
    assert afile.read_text() == "mine"


def test_an_output_under_a_file_is_exit_73(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("mine")
    result = run_to(afile / "x.npz", tmp_path)
    assert result.exit_code == 73 and "afile is a file, not a folder" in result.stderr


def read_only_folder(tmp_path: Path) -> Path:
    if os.geteuid() != 0:
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    if Path("/sys").is_dir() and not os.access("/sys", os.W_OK):
        return Path("/sys")
    probe = Path("/sys") / "graphtool.probe"
    try:  # root writes anywhere, except where the kernel says no
        probe.write_bytes(b"")
    except OSError:
        return Path("/sys")
    probe.unlink()
    pytest.skip("no folder here that this user cannot write")


def test_a_read_only_folder_is_exit_73(tmp_path):
    folder = read_only_folder(tmp_path)
    result = run_to(folder / "arrays.npz", tmp_path)
    assert result.exit_code == 73, result.stderr
    assert "cannot create output" in result.stderr and "internal" not in result.stderr


def test_a_spec_name_too_long_for_a_file_name_is_exit_73(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.read_text().replace("name: seed_static", "name: " + "n" * 300))
    result = invoke("run", spec, "--out-dir", tmp_path / "outputs")
    assert result.exit_code == 73, result.stderr
    assert "File name too long" in result.stderr and len(result.stderr) < 300
    assert temporaries(tmp_path) == []


# --- a folder name from a file name -------------------------------------------------------
@pytest.mark.parametrize("stem", ["..", ".", "-x", ".hidden"])
def test_a_spec_file_stem_is_made_a_safe_folder_name(stem, tmp_path):
    spec = tmp_path / "specs" / f"{stem}.yaml"
    spec.parent.mkdir()
    spec.write_text(SPEC.read_text().replace("name: seed_static\n", ""))
    work = tmp_path / "work"
    (work / "outputs").mkdir(parents=True)
    result = runner.invoke(app, ["run", str(spec), "--json", "-q", "--out-dir",
                                 str(work / "outputs")])
    assert result.exit_code == 0, result.stderr
    folders = [p for p in (work / "outputs").iterdir()]
    assert len(folders) == 1 and (folders[0] / "run.json").exists()
    assert not folders[0].name.startswith((".", "-"))
    assert sorted(p.name for p in work.iterdir()) == ["outputs"]


# --- leftovers: SIGTERM, kill -9, and viz's pair of files ---------------------------------
DRIVER = """
import os, sys, time
real_replace = os.replace
count = 0
def slow_replace(src, dst):
    global count
    if str(src).endswith(".tmp"):
        count += 1
        print("replacing " + os.path.basename(str(dst)), file=sys.stderr, flush=True)
        if count == int(os.environ["PAUSE_AT"]):
            time.sleep(60)
    return real_replace(src, dst)
os.replace = slow_replace
sys.argv = ["graphtool"] + sys.argv[1:]
from cli.entry import main
main()
"""


def start_driver(tmp_path: Path, *args: str, pause_at: int = 1) -> subprocess.Popen:
    """graphtool in a child that says on stderr when it renames a temporary file, and stops
    for a minute before the ``pause_at``-th rename, so a test can signal it mid-write."""
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    return subprocess.Popen([sys.executable, str(driver), *args], cwd=tmp_path,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "PAUSE_AT": str(pause_at)})


def wait_for(child: subprocess.Popen, text: str, times: int = 1) -> None:
    deadline = time.monotonic() + 60
    seen = 0
    while time.monotonic() < deadline:
        line = child.stderr.readline()
        if not line:
            break
        seen += text in line
        if seen == times:
            return
    child.kill()
    child.communicate(timeout=30)
    pytest.fail(f"the child never said {text!r}")


@pytest.mark.parametrize("signum, code, word", quick_first([(signal.SIGTERM, 143, "terminated"),
                                                            (signal.SIGINT, 130, "interrupted")]))
def test_a_signal_during_a_save_removes_its_temporary(signum, code, word, tmp_path):
    child = start_driver(tmp_path, "train", str(SPEC), "--steps", "2", "-q", "--save",
                         "params.npz", pause_at=3)  # after runs/latest and train.csv
    wait_for(child, "replacing params.npz")
    assert temporaries(tmp_path), "the temporary file exists while the save is under way"
    child.send_signal(signum)
    _, err = child.communicate(timeout=60)
    assert child.returncode == code, err
    assert word in err and "Traceback" not in err
    assert temporaries(tmp_path) == [] and not (tmp_path / "params.npz").exists()


@pytest.mark.slow  # processes killed
def test_a_temporary_left_by_kill_9_is_removed_by_the_next_write(tmp_path):
    child = start_driver(tmp_path, "run", str(SPEC), "-q", "-o", "arrays.npz",
                         pause_at=2)  # after run.json
    wait_for(child, "replacing arrays.npz")
    child.kill()
    child.communicate(timeout=30)
    left = temporaries(tmp_path)
    assert any(name.startswith(".arrays.npz.") for name in left)
    assert run_to(tmp_path / "arrays.npz", tmp_path).exit_code == 0
    assert not any(name.startswith(".arrays.npz.") for name in temporaries(tmp_path))
    assert is_npz((tmp_path / "arrays.npz").read_bytes())


def test_stale_temporaries_are_judged_by_pid_and_age(tmp_path):
    target = tmp_path / "a.npz"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    names = {
        "dead": f".a.npz.{dead}.0badc0de.tmp",        # writer gone: stale
        "alive": f".a.npz.{os.getppid()}.0badc0de.tmp",  # writer running, recent: kept
        "old": f".a.npz.{os.getppid()}.00000000.tmp",  # writer running but an hour old
        "legacy": "a.npz.deadbeef.tmp",                 # earlier versions' name, recent: kept
        "other": f".b.npz.{dead}.0badc0de.tmp",          # another target's: not ours to judge
        "mine": "notes.tmp",                            # not our pattern at all
    }
    for name in names.values():
        (tmp_path / name).write_bytes(b"x")
    hour_ago = time.time() - files.STALE_AGE_S - 60
    os.utime(tmp_path / names["old"], (hour_ago, hour_ago))
    files.write_bytes(target, b"new")
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {"a.npz", names["alive"], names["legacy"], names["other"], names["mine"]}


@pytest.mark.slow  # processes killed
def test_a_viz_killed_between_its_renames_never_leaves_a_new_dot_beside_an_old_png(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.read_text())
    assert invoke("viz", spec, "-q", "--out-dir", tmp_path / "outputs").exit_code == 0
    folder = tmp_path / "outputs" / "seed_static"
    old_png = (folder / "graph.png").read_bytes()
    spec.write_text(SPEC.read_text().replace("  - relu\n", "  - tanh\n"))
    child = start_driver(tmp_path, "viz", str(spec), "-q", "--out-dir", "outputs", pause_at=2)
    wait_for(child, "replacing", times=2)  # the first rename is done; the second is next
    child.kill()
    child.communicate(timeout=30)
    dot = (folder / "graph.dot").read_text() if (folder / "graph.dot").exists() else None
    png = (folder / "graph.png").read_bytes() if (folder / "graph.png").exists() else None
    assert dot is None or "tanh" in dot.lower()
    assert not (dot is not None and png == old_png), "a new graph.dot beside the old graph.png"
    assert invoke("viz", spec, "-q", "--out-dir", tmp_path / "outputs").exit_code == 0
    assert "tanh" in (folder / "graph.dot").read_text().lower()
    assert (folder / "graph.png").read_bytes() != old_png
    assert temporaries(tmp_path) == []


def test_train_save_writes_every_array_of_the_model(tmp_path):
    result = invoke("train", ROOT / "specs" / "residual_mlp.yaml", "--steps", "2", "-q",
                    "--save", tmp_path / "p.npz", "--out-dir", tmp_path / "outputs")
    assert result.exit_code == 0, result.stderr
    with np.load(tmp_path / "p.npz") as saved:
        assert saved.files and all(saved[k].size for k in saved.files)
    assert temporaries(tmp_path) == []
