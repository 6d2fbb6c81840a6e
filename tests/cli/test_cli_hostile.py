"""Hostile input, generated: random bad paths, options, spec text and data files fed to the
real `graphtool` process. Whatever the input, graphtool answers with a short message and a
documented exit code:

- no traceback, never exit 70 (internal error), never killed by a signal or the time limit;
- stderr shorter than ``MAX_STDERR`` bytes;
- nothing written outside ``outputs/`` and the output paths the command was given;
- no temporary file left behind.

Every command runs in a real child process under a memory cap (``RLIMIT_AS``), so work that
should be refused before it allocates cannot pass by allocating. To keep this fast, one server
process (under the cap) imports graphtool once and forks a fresh child per command: each child
is a real process (its own cwd, file descriptors, signal handlers and exit code).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from capped_server import CappedServer
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
# Every case is a real process (a capped child of a server process): slow; CI runs them all.
pytestmark = pytest.mark.slow
MEMORY_CAP = 1 << 30  # bytes of address space per child (graphtool needs under 512 MiB)
TIME_LIMIT_S = 20     # per command: a generated command that runs longer is a failure
MAX_STDERR = 4096
INTERNAL, TIMEOUT = 70, "timeout"

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = CappedServer(tmp_path_factory.mktemp("hostile-io"), MEMORY_CAP, TIME_LIMIT_S)
    yield server
    server.close()


@pytest.fixture(scope="module")
def scratch_root(tmp_path_factory):
    return tmp_path_factory.mktemp("hostile")


# --- what a scratch folder holds, and the checks after each command ------------------------
VALID_SPEC = (ROOT / "specs" / "seed_static.yaml").read_text()


def new_scratch(root: Path) -> Path:
    folder = Path(tempfile.mkdtemp(dir=root, prefix="case-"))
    (folder / "spec.yaml").write_text(VALID_SPEC)
    (folder / "afolder").mkdir()
    (folder / "afile").write_text("a file\n")
    (folder / "loop").symlink_to(folder / "loop")
    (folder / "dangling").symlink_to(folder / "nowhere" / "x")
    return folder


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for path in folder.rglob("*"):
        if path.is_symlink() or not path.is_file():
            continue
        info = path.stat()
        out[str(path.relative_to(folder))] = (info.st_size, info.st_mtime_ns)
    return out


def check(result: tuple[object, bytes, bytes], folder: Path, before: dict,
          outputs: list[str], argv: list[str]) -> None:
    code, _, err = result
    text = err.decode("utf-8", "replace")
    shown = f"graphtool {' '.join(argv)!r} -> {code}\n{text[:2000]}"
    assert code != TIMEOUT, f"ran past {TIME_LIMIT_S} s: {shown}"
    assert isinstance(code, int) and code >= 0, f"killed by a signal: {shown}"
    assert code != INTERNAL, f"internal error: {shown}"
    assert "Traceback" not in text, shown
    assert len(err) < MAX_STDERR, f"{len(err)} bytes on stderr: {shown}"
    allowed = ["outputs", *(os.path.normpath(p) for p in outputs if p)]  # and what is under them
    for name, stamp in snapshot(folder).items():
        if any(name == a or name.startswith(a + os.sep) or a == "." for a in allowed):
            continue
        assert before.get(name) == stamp, f"wrote {name} outside outputs/: {shown}"
    left = [str(p.relative_to(folder)) for p in folder.rglob("*.tmp")]
    assert not left, f"temporary files left: {left}: {shown}"


def run_case(server, root, argv, files=None, stdin=b"", outputs=()):
    folder = new_scratch(root)
    for name, data in (files or {}).items():
        (folder / name).write_bytes(data)
    before = snapshot(folder)
    code, _, out, err = server.run(argv, folder, stdin)
    result = code, out, err
    check(result, folder, before, list(outputs), argv)
    shutil.rmtree(folder)
    return result


# --- strategies ----------------------------------------------------------------------------
ODD_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)
BAD_PATHS = st.one_of(
    st.sampled_from(["", ".", "..", "afolder", "afolder/", "afile/x", "nothing.yaml", "loop",
                     "dangling", "/proc", "/dev/null", "-", "afile", "spec.yaml",
                     "outputs", "x" * 300, "a/" * 200 + "b", "é\u202e.yaml", " ", "\n"]),
    ODD_TEXT.filter(lambda s: s and "\x00" not in s),
)
BAD_NUMBERS = st.sampled_from(["-1", "0", "1e9", "nan", "inf", "-inf", "1" * 5000, "0x10",
                               "", " ", "3.5", "1,2", "-0", "2" * 30, "1e-30", "true"])
COMMANDS = st.sampled_from([["run"], ["train", "--steps", "2"], ["viz", "--format", "dot"],
                            ["check"], ["bench", "--repeat", "1", "--warmup", "0"],
                            ["export"]])


PATH_OPTIONS = ["--input", "--params", "-o", "--save", "--out-dir", "--plugin"]
VALUE_OPTIONS = ["--seed", "--set", "--batch", "--steps", "--lr", "--mode", "--passes",
                 "--repeat", "--format", "--modes", "--batch-size", "--rankdir", "--stage",
                 "--nope", "-q", "--json", "--batching", "--opset"]


@st.composite
def bad_options(draw, names):
    """A command and a handful of options from ``names``, each with a hostile value; the
    output paths and folders it names (which it may write)."""
    argv = [*draw(COMMANDS), draw(st.just("spec.yaml") | BAD_PATHS)]
    outputs = []
    for _ in range(draw(st.integers(1, 3))):
        option = draw(st.sampled_from(names))
        if option in ("-q", "--json"):
            argv.append(option)
            continue
        if option == "--set":
            value = f"{draw(st.sampled_from(['params.hidden', 'params.', 'x', 'params.nope']))}" \
                    f"={draw(BAD_NUMBERS | ODD_TEXT)}"
        elif option == "--input":
            value = f"{draw(st.sampled_from(['x', 'y', '']))}={draw(BAD_PATHS)}"
        elif option in PATH_OPTIONS:
            value = draw(BAD_PATHS)
            if option in ("-o", "--save", "--out-dir"):
                outputs.append(value)
        else:
            value = draw(BAD_NUMBERS | ODD_TEXT)
        argv += [option, value]
    return argv, outputs


LINES = VALID_SPEC.splitlines(keepends=True)
HOSTILE_VALUES = st.sampled_from([
    "1e308", "-1", "0", ".nan", ".inf", "99999999999999999999", "'x'", "[]", "{}", "null",
    "[[[[[[[[[[1]]]]]]]]]]", "$params.nope", "$params.hidden", "'" + "y" * 5000 + "'",
    "9" * 4000, "!!python/object:os.system 'true'", "*alias", "&anchor 1", "\"\\u0000\"",
    "[1000000, 1000000]", "[0, 4]", "[-3, 4]", "{random: normal, shape: [3, 4]}", "~",
    "[3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]", "true", "'1e5'",
])


@st.composite
def bad_spec_text(draw):
    """The valid spec with some lines changed: a value replaced by a hostile one, a line
    dropped, repeated, cut short or re-indented, junk bytes inserted."""
    lines = list(LINES)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        line = lines[i]
        action = draw(st.sampled_from(["value", "drop", "repeat", "cut", "indent", "junk"]))
        if action == "value" and ":" in line:
            key = line.rsplit(":", 1)[0]
            lines[i] = f"{key}: {draw(HOSTILE_VALUES)}\n"
        elif action == "drop":
            lines[i] = ""
        elif action == "repeat":
            lines[i] = line * draw(st.integers(2, 50))
        elif action == "cut":
            lines[i] = line[:draw(st.integers(0, len(line)))]
        elif action == "indent":
            lines[i] = " " * draw(st.integers(1, 5)) + line
        else:
            lines[i] = line + draw(st.text(max_size=20)) + "\n"
    return "".join(lines).encode("utf-8", "surrogatepass")


def npy_bytes(array: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


DATA_FILES = st.one_of(
    st.binary(max_size=200),
    st.sampled_from([
        npy_bytes(np.ones((3, 4), np.float32)),
        npy_bytes(np.full((3, 4), np.inf, np.float32)),
        npy_bytes(np.full((3, 4), np.nan, np.float64)),
        npy_bytes(np.full((3, 4), 1e38, np.float32)),
        npy_bytes(np.ones((4, 3), np.float32)),
        npy_bytes(np.ones((0, 4), np.float32)),
        npy_bytes(np.ones((3,), np.int64)),
        npy_bytes(np.array(["a", "b"])),
        npy_bytes(np.ones((3, 4), np.complex64)),
        npy_bytes(np.ones((3, 4), np.float32))[:-5],
        b"1,2,3,4\n5,6,7,8\n9,10,11,nan\n",
        b"a,b\n1,2\n",
        b"1e400,1,1,1\n" * 3,
        b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4', 'fortran_order': False, 'shape': "
        b"(1000000000, 1000000000), }",
    ]),
)


# --- the properties ------------------------------------------------------------------------
# A fixed, bounded set of examples (the same every run); HOSTILE_EXAMPLES=500 HOSTILE_RANDOM=1
# explores further. No shrinking: the failing command is reported as generated.
SETTINGS = settings(max_examples=int(os.environ.get("HOSTILE_EXAMPLES", "15")), deadline=None,
                    derandomize=not os.environ.get("HOSTILE_RANDOM"),
                    phases=(Phase.explicit, Phase.reuse, Phase.generate),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(case=bad_options(PATH_OPTIONS))
@example(case=(["run", "afolder"], []))  # the cases issues 8 and 9 reported, then random ones
@example(case=(["run", "spec.yaml", "--params", "afolder", "--input", "x=afolder"], []))
@example(case=(["run", "spec.yaml", "-o", "afolder"], ["afolder"]))
@example(case=(["train", "--steps", "2", "spec.yaml", "--save", ""], [""]))
@example(case=(["viz", "spec.yaml", "--out-dir", "afile"], ["afile"]))
@example(case=(["run", "spec.yaml", "-o", "x" * 300], ["x" * 300]))
@example(case=(["viz", "spec.yaml", "--plugin", "afolder", "-o", "/proc"], ["/proc"]))
def test_bad_paths(server, scratch_root, case):
    argv, outputs = case
    run_case(server, scratch_root, argv, outputs=outputs)


@SETTINGS
@given(case=bad_options(VALUE_OPTIONS))
def test_bad_option_values(server, scratch_root, case):
    argv, outputs = case
    run_case(server, scratch_root, argv, outputs=outputs)


@SETTINGS
@given(text=bad_spec_text(), command=COMMANDS, via_stdin=st.booleans())
@example(text=b"graphtool: 1\ngraph:\n  - op: " + b"x" * 200_000 + b"\n", command=["run"],
         via_stdin=True)  # a huge op name, echoed whole once
def test_bad_spec_text(server, scratch_root, text, command, via_stdin):
    argv = [*command, "-" if via_stdin else "bad.yaml"]
    run_case(server, scratch_root, argv, files={"bad.yaml": text},
             stdin=text if via_stdin else b"")


@SETTINGS
@given(data=DATA_FILES, suffix=st.sampled_from([".npy", ".npz", ".csv", ".txt"]),
       command=COMMANDS, as_params=st.booleans())
def test_bad_data_files(server, scratch_root, data, suffix, command, as_params):
    name = "data" + suffix
    if as_params and command[0] == "run":
        argv = [*command, "spec.yaml", "--params", name]
    else:
        argv = [*command, "spec.yaml", "--input", f"x={name}"]
        if command[0] == "bench":
            argv = [*command, "spec.yaml"]  # bench takes no --input
    run_case(server, scratch_root, argv, files={name: data})
