"""The installed `graphtool` as a process: Ctrl-C at any moment, closed and failing standard
streams, pipes whose reader leaves early, and what usage errors and help look like when they
are not going to a terminal. Real subprocesses only: none of this exists inside CliRunner.
A behaviour tried for several commands or output kinds runs for the first of them in the quick
run (``quick_first``), for all of them in the full one."""

import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import quick_first

ROOT = Path(__file__).resolve().parents[2]
GRAPHTOOL = str(Path(sys.executable).parent / "graphtool")
BOX_DRAWING = ("╭", "│", "╰", "─")


@pytest.fixture
def workdir(tmp_path):
    shutil.copytree(ROOT / "specs", tmp_path / "specs")
    return tmp_path


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    e["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{e.get('PATH', '')}"
    return e


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env(), capture_output=True,
                          text=True, timeout=120)


# --- Ctrl-C ---------------------------------------------------------------------------------
def _numpy_loaded(pid: int) -> bool:
    try:
        return "_multiarray_umath" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def test_ctrl_c_while_the_modules_import_ends_with_130_and_no_traceback(workdir):
    child = subprocess.Popen([GRAPHTOOL, "ops"], cwd=workdir, env=env(), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not _numpy_loaded(child.pid):  # the heavy imports have begun
        assert child.poll() is None and time.monotonic() < deadline
        time.sleep(0.001)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    # "interrupted", unless the signal fell in Typer's option parsing (a few ms), which ends 130
    # without a word
    assert err.strip() in ("interrupted", "") and out == ""


def test_ctrl_c_during_a_command_ends_with_130_and_one_line(workdir):
    child = subprocess.Popen([GRAPHTOOL, "train", "specs/residual_mlp.yaml", "--steps",
                              "1000000", "-q"], cwd=workdir, env=env(), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(3)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130
    assert err.strip() == "interrupted"


# --- stdout closed or failing ---------------------------------------------------------------
@pytest.mark.parametrize("command", quick_first(["graphtool ops >&-", "graphtool ops --json >&-",
                                                 "graphtool run specs/seed_static.yaml -q >&-"]))
def test_a_closed_stdout_is_an_io_error_in_one_line(command, workdir):
    done = shell(command, workdir)
    assert done.returncode == 74
    assert done.stderr == "error: cannot write to stdout: stdout is closed\n"


def test_a_closed_stdout_is_fine_when_nothing_is_printed(workdir):
    done = shell("graphtool viz specs/seed_static.yaml --format dot -q >&-", workdir)
    assert done.returncode == 0, done.stderr
    assert (workdir / "outputs" / "seed_static" / "graph.dot").is_file()


@pytest.mark.parametrize("command", quick_first(["graphtool ops --json", "graphtool ops",
                                                 "graphtool run specs/seed_static.yaml --json -q",
                                                 "graphtool viz specs/seed_static.yaml -o - -q"]))
def test_a_full_disk_on_stdout_is_74_with_one_line(command, workdir):
    done = shell(f"{command} > /dev/full", workdir)
    assert done.returncode == 74
    assert done.stderr == "error: cannot write to stdout: No space left on device\n"


def test_closed_stdin_and_stderr_are_no_internal_error(workdir):
    done = shell("graphtool run - --json 2>&- <&-", workdir)
    assert done.returncode == 65  # an empty spec, said on a stderr nobody reads
    assert done.stdout == ""


# --- pipes: one rule, 141 quietly -----------------------------------------------------------
OUTPUT_KINDS = {
    "table": ["run", "specs/seed_static.yaml"],
    "json": ["run", "specs/seed_static.yaml", "--json"],
    "csv": ["bench", "specs/seed_static.yaml", "--format", "csv", "--repeat", "1"],
    "dot": ["viz", "specs/seed_static.yaml", "-o", "-", "--format", "dot"],
    "ops table": ["ops"],
    "ops json": ["ops", "--json"],
}


@pytest.mark.parametrize("kind", quick_first(OUTPUT_KINDS))
def test_a_reader_gone_before_the_first_write_is_141_quietly(kind, workdir):
    read_end, write_end = os.pipe()
    os.close(read_end)
    done = subprocess.run([GRAPHTOOL, *OUTPUT_KINDS[kind]], cwd=workdir, env=env(),
                          stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(write_end)
    assert done.returncode == 141
    assert "Traceback" not in done.stderr and "error" not in done.stderr


@pytest.mark.parametrize("kind", quick_first(OUTPUT_KINDS))
def test_a_reader_gone_with_output_unread_is_141_quietly(kind, workdir):
    """A reader that takes the first byte and leaves: whatever the output kind, 141."""
    out_read, out_write = os.pipe()
    child = subprocess.Popen([GRAPHTOOL, *OUTPUT_KINDS[kind]], cwd=workdir, env=env(),
                             stdout=out_write, stderr=subprocess.PIPE, text=True)
    os.close(out_write)
    first = os.read(out_read, 1)  # graphtool has written its output
    os.close(out_read)  # and the reader leaves, almost all of it unread
    _, err = child.communicate(timeout=120)
    assert child.returncode == 141 and first
    assert "Traceback" not in err and "error" not in err


@pytest.mark.parametrize("kind", quick_first(["table", "json", "csv", "dot"]))
def test_head_ends_every_output_kind_alike(kind, workdir):
    """`| head -n 1` that reads the whole (small) output in its first read: nothing was lost,
    so 0, for tables as for JSON (each kind reaches stdout in one write)."""
    full = shell(f"graphtool {' '.join(OUTPUT_KINDS[kind])}", workdir)
    done = shell(f"set -o pipefail; graphtool {' '.join(OUTPUT_KINDS[kind])} | head -n 1",
                 workdir)
    assert len(full.stdout.encode()) < 8192  # what head reads at once
    assert done.returncode == 0, done.stderr
    assert done.stdout == full.stdout.splitlines(keepends=True)[0]


def test_head_leaving_output_unread_is_141(workdir):
    done = shell("set -o pipefail; graphtool ops --json | head -n 1", workdir)
    assert len(shell("graphtool ops --json", workdir).stdout) > 8192
    assert done.returncode == 141 and done.stdout == "{\n" and done.stderr == ""


def test_a_reader_that_reads_only_after_the_process_ended_gets_everything(workdir):
    # a pipe that holds the whole document (ops --json is some 90 kB, over Linux's default
    # 64 kB, and a writer to a full pipe waits whatever it does)
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    with subprocess.Popen([GRAPHTOOL, "ops", "--json"], cwd=workdir, env=env(), text=True,
                          stdout=write_end, stderr=subprocess.PIPE) as child:
        os.close(write_end)
        assert child.wait(timeout=120) == 0  # no deadlock: graphtool does not wait for it
        with os.fdopen(read_end) as out:
            assert json.loads(out.read())["ops"]


def test_sigterm_while_the_output_waits_for_its_reader_is_143_and_one_line(workdir):
    """Regression: a SIGTERM after the command, while graphtool gave an unread pipe its last
    half second, ended in a traceback and exit 1."""
    with subprocess.Popen([GRAPHTOOL, "--version"], cwd=workdir, env=env(), text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
        ready, _, _ = select.select([child.stdout], [], [], 60)  # written, not read
        assert ready
        child.send_signal(signal.SIGTERM)
        err = child.stderr.read()
        assert child.wait(timeout=60) == 143, err
    assert err == "terminated\n"


@pytest.mark.parametrize("kind", quick_first(OUTPUT_KINDS))
def test_a_reader_that_reads_everything_is_0(kind, workdir):
    done = shell(f"set -o pipefail; graphtool {' '.join(OUTPUT_KINDS[kind])} | cat > /dev/null",
                 workdir)
    assert done.returncode == 0, done.stderr


# --- what goes to a pipe is plain -----------------------------------------------------------
@pytest.mark.parametrize("args", quick_first([["run", "--bogus", "specs/seed_static.yaml"],
                                              ["run"],
                                              ["bench", "specs/seed_static.yaml", "--repeat", "0"],
                                              ["nosuchcommand"]]))
def test_usage_errors_are_plain_text_when_stderr_is_a_pipe(args, workdir):
    done = subprocess.run([GRAPHTOOL, *args], cwd=workdir, env=env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert not any(ch in done.stderr for ch in BOX_DRAWING), done.stderr
    assert "Error:" in done.stderr and "\x1b[" not in done.stderr


@pytest.mark.parametrize("args", quick_first([["--help"], ["run", "--help"], ["bench", "-h"]]))
def test_help_is_plain_text_when_stdout_is_a_pipe(args, workdir):
    done = subprocess.run([GRAPHTOOL, *args], cwd=workdir, env=env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0
    assert "Usage: graphtool" in done.stdout
    assert not any(ch in done.stdout for ch in BOX_DRAWING), done.stdout
    assert "\x1b[" not in done.stdout


def test_python_dash_m_cli_has_the_same_process_handling(workdir):
    done = subprocess.run(["bash", "-c", f"{sys.executable} -m cli ops >&-"], cwd=workdir,
                          env={**env(), "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 74
    assert done.stderr == "error: cannot write to stdout: stdout is closed\n"
