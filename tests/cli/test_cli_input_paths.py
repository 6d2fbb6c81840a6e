"""What commands read: every input path that is not a readable file is exit 66 with one line;
a spec on stdin is read no further than a spec file's size limit; messages echo only a short
window of what the user wrote."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import invoke

from graphcore.errors import CLIP_WIDTH, SpecError, SpecErrors
from graphcore.language.yaml_source import MAX_BYTES

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "specs" / "seed_static.yaml"


def one_line_66(result) -> str:
    assert result.exit_code == 66, result.stderr
    assert "Traceback" not in result.stderr and "internal" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize("options", [
    lambda d: ["run", d, "--out-dir", d / "outputs"],
    lambda d: ["check", d],
    lambda d: ["bench", d, "--out-dir", d / "outputs"],
    lambda d: ["run", SPEC, "--params", d, "--out-dir", d / "outputs"],
    lambda d: ["run", SPEC, "--input", f"x={d}", "--out-dir", d / "outputs"],
    lambda d: ["viz", SPEC, "--plugin", d, "--out-dir", d / "outputs"],
])
def test_a_folder_given_as_an_input_is_exit_66(options, tmp_path):
    line = one_line_66(invoke(*options(tmp_path)))
    assert str(tmp_path) in line and "is a folder" in line
    assert not (tmp_path / "outputs").exists()


@pytest.mark.parametrize("make", [
    lambda p: p.symlink_to("/dev/null"),  # a character device is no .npz
    lambda p: p.symlink_to(p),            # a symlink loop
])
def test_other_unreadable_inputs_are_exit_66(make, tmp_path):
    bad = tmp_path / "bad.npz"
    make(bad)
    one_line_66(invoke("run", SPEC, "--params", bad, "--out-dir", tmp_path))


def test_a_missing_input_is_exit_66(tmp_path):
    line = one_line_66(invoke("run", SPEC, "--input", f"x={tmp_path / 'no.npy'}"))
    assert "--input x=" in line and "not found" in line
    line = one_line_66(invoke("run", tmp_path / "no.yaml"))
    assert "not found" in line


def test_an_unreadable_spec_is_exit_66(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.read_text())
    spec.chmod(0)
    assert "cannot read" in one_line_66(invoke("run", spec))


def test_a_spec_from_a_fifo_is_read(tmp_path):
    done = subprocess.run(["bash", "-c", f"{sys.executable} -m cli run <(cat {SPEC}) --json -q"
                           f" --out-dir {tmp_path}"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 0, done.stderr


def test_stdin_is_read_no_further_than_the_spec_size_limit(tmp_path):
    # `yes "# x" | graphtool run -` once grew without bound; now the read stops at the limit
    child = subprocess.Popen([sys.executable, "-m", "cli", "run", "-", "--out-dir",
                              str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    chunk = b"# x\n" * 16384
    sent = 0
    try:
        while child.poll() is None and sent < 64 * MAX_BYTES:
            child.stdin.write(chunk)
            sent += len(chunk)
    except BrokenPipeError:
        pass
    _, err = child.communicate(timeout=120)
    assert child.returncode == 65, err
    assert sent < 64 * MAX_BYTES, "graphtool kept reading"
    assert f"over {MAX_BYTES:,} bytes" in err.decode() and len(err) < 300


def test_a_spec_on_stdin_at_the_limit_is_still_read(tmp_path):
    text = SPEC.read_text()
    text += "#" * (MAX_BYTES - len(text.encode()) - 1) + "\n"
    assert len(text.encode()) == MAX_BYTES
    result = invoke("run", "-", "--json", "-q", "--out-dir", tmp_path, input=text)
    assert result.exit_code == 0, result.stderr


def test_a_huge_op_name_is_echoed_as_a_short_window(tmp_path):
    spec = tmp_path / "long.yaml"
    spec.write_text("graphtool: 1\ninputs:\n  x: {zeros: [2]}\ngraph:\n  - op: "
                    + "x" * 200_000 + "\n")
    result = invoke("run", spec)
    assert result.exit_code == 65
    assert len(result.stderr) < 600, len(result.stderr)
    assert "unknown op 'xxx" in result.stderr and "..." in result.stderr
    assert all(len(line) <= 2 * CLIP_WIDTH + 40 for line in result.stderr.splitlines())


def test_a_huge_path_is_echoed_as_a_short_window(tmp_path):
    result = invoke("run", "a" * 5000 + ".yaml")
    assert result.exit_code == 66 and len(result.stderr) < 300


def test_the_caret_stays_under_the_column_in_a_clipped_line():
    line = "a" * 500 + "BAD" + "b" * 500
    error = SpecError("bad value", "s.yaml", 1, 501, line, 3)
    source, caret = error.render().splitlines()[1:]
    assert len(source) <= CLIP_WIDTH + 10
    start = caret.index("^")
    assert source[start:start + 3] == "BAD" and caret.strip() == "^~~"


def test_every_error_is_listed_up_to_a_limit():
    errors = [SpecError(f"problem {i}", "s.yaml", i + 1, 1) for i in range(50)]
    text = SpecErrors(errors).render()
    assert text.count("error: problem") == 20 and text.endswith("... and 30 more errors "
                                                                 "(fix these first)")
