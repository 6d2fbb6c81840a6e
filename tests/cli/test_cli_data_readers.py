"""Every reader of user data is bounded and answers bad input in the documented way: the data
file of train/evaluate/predict/run (CSV, JSON Lines, .npy, .npz), ``--params``, and ``file:``
inputs. A problem in the data is a located exit 65, a folder or a FIFO an exit 66 at once;
nothing is allocated from what a header merely claims, and valid CSV (a quoted newline) reads
as it should."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from array_file_bytes import npy_bytes, npy_header, npz_bytes, zeros_member
from cli_helpers import invoke as cli

ROOT = Path(__file__).resolve().parents[2]
MEMORY_CAP = 1 << 30

SPEC = """graphtool: 1
name: points
data:
  file: {file}
  x: {{{x}}}
  t: {{{t}, dtype: int32}}
train: {{epochs: 1, batch_size: 2}}
graph:
  - {{op: linear, out_size: 3, from: x, to: logits, name: l1}}
loss: {{op: softmax_cross_entropy, from: [logits, t]}}
outputs: [logits]
"""
CSV = "f1,f2,label\n0.5,1.0,0\n1.5,-1.0,1\n-0.5,2.0,2\n1.0,1.0,1\n"


def write_spec(folder: Path, file: str = "points.csv", x: str = "columns: [f1, f2]",
               t: str = "column: label") -> Path:
    path = folder / "points.yaml"
    path.write_text(SPEC.format(file=file, x=x, t=t))
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "points.csv").write_text(CSV)
    write_spec(tmp_path)
    params = tmp_path / "p.npz"
    np.savez(params, **{"l1/W": np.zeros((3, 2), np.float32), "l1/b": np.zeros(3, np.float32)})
    return tmp_path


def commands(folder: Path, data: str | None = None):
    """train, evaluate and predict of the folder's spec (on ``--data data`` if given)."""
    spec = folder / "points.yaml"
    extra = ["--data", folder / data] if data else []
    return [("train", spec, "--out-dir", folder / "o", *extra),
            ("evaluate", spec, "--params", folder / "p.npz", *extra),
            ("predict", spec, "--params", folder / "p.npz", "-o", folder / "pr.csv", *extra)]


def refused(args, code: int, *messages: str) -> str:
    result = cli(*args)
    assert result.exit_code == code, (args, result.stderr)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    for message in messages:
        assert message in result.stderr, (message, result.stderr)
    return result.stderr


def graphtool_capped(cwd: Path, *args, timeout: float = 60) -> subprocess.CompletedProcess:
    """``graphtool ARGS`` in a child process of at most 1 GiB of address space."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "cli", *map(str, args)], cwd=cwd, env=env,
                          preexec_fn=cap, capture_output=True, text=True, timeout=timeout)


# --- .npy and .npz data: the element limit from the headers, before allocating ------------

def test_an_npy_data_file_whose_header_claims_2e11_elements_is_refused(folder):
    (folder / "big.npy").write_bytes(npy_header((100_000, 2_000_000)) + bytes(16_000))
    spec = write_spec(folder, "big.npy", x="key: x", t="key: t")
    spec.write_text(spec.read_text().replace("  t: {key: t, dtype: int32}\n", "")
                    .replace("softmax_cross_entropy, from: [logits, t]", "sum, from: logits"))
    for command in ("run", "train"):
        refused((command, spec, "--out-dir", folder / "o"), 65,
                "points.yaml:5:6: error: data input 'x': big.npy holds 200,000,000,000 "
                "elements (shape (100000, 2000000)), over the limit of 50,000,000")


def test_an_npz_of_52_million_zeros_is_over_the_limit_of_50_million(folder):
    zeros_member(folder / "z.npz", "x.npy", (26_000_000, 2),
                 extra=[("t.npy", npy_bytes(np.zeros(4, np.int32)))])
    assert (folder / "z.npz").stat().st_size < 2_000_000
    spec = write_spec(folder, "z.npz", x="key: x", t="key: t")
    refused(("train", spec, "--out-dir", folder / "o"), 65,
            "error: data input 'x': z.npz: 'x' holds 52,000,000 elements (shape (26000000, "
            "2)), over the limit of 50,000,000")


def test_an_object_array_in_a_data_npz_is_exit_65_and_never_unpickled(folder):
    (folder / "o.npz").write_bytes(npz_bytes([
        ("x.npy", npy_header((2,), "|O") + b"\x80\x04N."),
        ("t.npy", npy_bytes(np.zeros(2, np.int32)))]))
    spec = write_spec(folder, "o.npz", x="key: x", t="key: t")
    refused(("run", spec), 65, "data input 'x': o.npz: 'x' holds Python objects (a pickled "
            "array), which are never loaded")


def test_an_npy_cut_short_is_refused_before_its_array_is_allocated(folder):
    import tracemalloc

    from graphcore.commands.train.data import load_spec_data
    from graphcore.spec import load_spec_file

    (folder / "short.npy").write_bytes(npy_header((10_000_000, 2)) + bytes(100))
    spec = write_spec(folder, "short.npy", x="key: x", t="key: t")
    spec.write_text(spec.read_text().replace("  t: {key: t, dtype: int32}\n", "")
                    .replace("softmax_cross_entropy, from: [logits, t]", "sum, from: logits"))
    loaded = load_spec_file(spec)
    tracemalloc.start()
    try:
        with pytest.raises(Exception, match="short.npy is cut short: its header declares "
                           "80,000,000 bytes of data for shape \\(10000000, 2\\), the file "
                           "holds 100"):
            load_spec_data(loaded, 0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000  # the 80 MB the header claims were never allocated


# --- CSV ---------------------------------------------------------------------------------

def test_a_cell_over_the_csv_field_limit_is_a_located_exit_65(folder):
    (folder / "big.csv").write_text("f1,f2,label\n1,2,0\n3,\"" + "7" * 200_000 + "\",1\n")
    for args in commands(folder, "big.csv"):
        refused(args, 65, "big.csv:3:1: error: a field is longer than 131,072 characters "
                "(the CSV field limit)")


def test_latin1_bytes_are_a_located_exit_65(folder):
    (folder / "latin.csv").write_bytes(b"f1,f2,label\n1,2,0\n3,\xe9,1\n")
    for args in commands(folder, "latin.csv"):
        refused(args, 65, "latin.csv:3:3: error: not UTF-8 text: byte 0xe9 cannot be decoded "
                "(save the file as UTF-8)")


def test_quoted_newlines_are_valid_csv_and_read_as_such(folder):
    # a quoted newline in the header, in a column the spec does not read and in one it reads
    (folder / "q.csv").write_text('f1,"f\n2",label,note\n0.5,1.0,0,"two\nlines"\n'
                                  '1.5,-1.0,1,plain\n"-0.5",2.0,"2","# not a comment\n"\n'
                                  '# a comment between records\n1.0,1.0,1,x\n')
    spec = write_spec(folder, x='columns: [f1, "f\\n2"]')
    from graphcore.commands.train.data import load_spec_data
    from graphcore.spec import load_spec_file

    data = load_spec_data(load_spec_file(spec), 0, {"x": str(folder / "q.csv"),
                                                    "t": str(folder / "q.csv")})
    np.testing.assert_array_equal(data.train["x"], [[0.5, 1.0], [1.5, -1.0], [-0.5, 2.0],
                                                    [1.0, 1.0]])
    np.testing.assert_array_equal(data.train["t"], [0, 1, 2, 1])
    (folder / "points.csv").write_text((folder / "q.csv").read_text())
    for args in commands(folder):
        assert cli(*args).exit_code == 0


def test_a_bad_number_after_a_quoted_newline_is_placed_at_its_own_line(folder):
    (folder / "q.csv").write_text('note,f1,f2,label\n"a\nb",1,x,0\n')
    refused(commands(folder, "q.csv")[0], 65, "q.csv:3:6: error: column 'f2' holds 'x', not "
            "a number")


def test_a_header_only_file_is_exit_65_for_every_command(folder):
    (folder / "empty.csv").write_text("f1,f2,label\n")
    for args in commands(folder, "empty.csv"):
        refused(args, 65, "empty.csv:1:1: error: empty.csv holds a header but no data rows")


def test_an_empty_array_from_input_is_exit_65_not_a_crash(folder):
    np.save(folder / "none.npy", np.zeros((0, 2), np.float32))
    refused(("predict", folder / "points.yaml", "--params", folder / "p.npz", "--input",
             f"x={folder / 'none.npy'}", "-o", "-"), 65, "input 'x' has no rows to predict")


def test_a_line_over_the_line_limit_is_refused_without_holding_it(folder):
    (folder / "long.csv").write_text("f1,f2,label\n" + "1," * 600_000 + "\n")
    refused(commands(folder, "long.csv")[0], 65, "long.csv:2:1: error: line 2 is longer than "
            "1,048,576 bytes (the limit for one line)")


def test_an_unclosed_quote_cannot_swallow_the_file(folder):
    rows = "".join(f"{i},{i},1\n" for i in range(200_000))
    (folder / "open.csv").write_text('f1,f2,label\n1,"2,0\n' + rows)
    refused(commands(folder, "open.csv")[0], 65, "open.csv:2:1: error: a field is longer "
            "than 131,072 characters (the CSV field limit)")
    # short quoted fields, each spanning a line: the record as a whole is bounded
    (folder / "open.csv").write_text('f1,f2,label\n1,2,' + '"\n",' * 300_000 + "\n")
    refused(commands(folder, "open.csv")[0], 65, "open.csv:2:1: error: a record (a quoted "
            "field spans lines) runs past 1,048,576 characters")


# --- JSON Lines --------------------------------------------------------------------------

@pytest.fixture
def jsonl(folder: Path) -> Path:
    write_spec(folder, "points.jsonl", x="columns: [f1, f2]", t="column: label")
    (folder / "points.jsonl").write_text('{"f1": 1, "f2": 2, "label": 0}\n'
                                         '{"f1": 3, "f2": 4, "label": 1}\n')
    return folder


@pytest.mark.parametrize("line, message", [
    ('{"f1": ' + "[" * 200_000 + "]" * 200_000 + ', "f2": 1, "label": 0}',
     "bad.jsonl:2:1: error: not JSON this reader takes: nested too deeply"),
    ('{"f1": ' + "9" * 400 + ', "f2": 1, "label": 0}',
     "bad.jsonl:2:1: error: field 'f1' is not a number or a list of numbers"),
    ('{"f1": 1, "f2": 1, "label": 1e999999}', "values that are not integers cannot be int32"),
])
def test_hostile_json_lines_are_located_exit_65(jsonl, line, message):
    (jsonl / "bad.jsonl").write_text('{"f1": 1, "f2": 2, "label": 0}\n' + line + "\n")
    reading = commands(jsonl, "bad.jsonl")
    for args in reading if "label" not in message and "int32" not in message else reading[:2]:
        refused(args, 65, message)  # (predict reads no labels)


def test_non_utf8_json_lines_are_a_located_exit_65(jsonl):
    (jsonl / "bad.jsonl").write_bytes(b'{"f1": 1, "f2": 2, "label": 0}\n{"f1": "\xff"}\n')
    for args in commands(jsonl, "bad.jsonl"):
        refused(args, 65, "bad.jsonl:2:9: error: not UTF-8 text: byte 0xff cannot be decoded")


# --- labels ------------------------------------------------------------------------------

@pytest.mark.parametrize("row", [1, 3])
def test_a_bad_label_names_its_row_wherever_it_is(folder, row):
    lines = CSV.splitlines()
    lines[row] = lines[row].rsplit(",", 1)[0] + ",7"
    (folder / "points.csv").write_text("\n".join(lines) + "\n")
    for args in commands(folder)[:2]:  # train and evaluate (predict reads no labels)
        refused(args, 65, f"points.yaml:6:6: error: input 't': data row {row} has label 7, "
                "outside 0..2 for softmax_cross_entropy over 3 classes (1 such row)")


# --- folders, FIFOs: exit 66 at once -----------------------------------------------------

def test_a_params_folder_is_exit_66_for_every_command(folder):
    (folder / "dir.npz").mkdir()
    spec = folder / "points.yaml"
    for args in [("evaluate", spec), ("predict", spec, "-o", "-"),
                 ("train", spec, "--out-dir", folder / "o"), ("run", spec),
                 ("export", spec, "-o", folder / "m.onnx")]:
        refused((*args, "--params", folder / "dir.npz"), 66,
                f"error: --params {folder / 'dir.npz'} is a folder, not a file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.slow  # a process per reader or command, under a memory cap
def test_a_fifo_is_exit_66_at_once_for_every_reader(folder):
    os.mkfifo(folder / "fifo.npz")
    os.mkfifo(folder / "fifo.csv")
    spec = folder / "points.yaml"
    (folder / "fifo.yaml").write_text(spec.read_text().replace("points.csv", "fifo.csv"))
    (folder / "file_input.yaml").write_text(
        "graphtool: 1\ninputs:\n  x: {file: fifo.csv}\ngraph: [relu]\n")
    cases = [(("evaluate", spec, "--params", "fifo.npz"), "--params fifo.npz is not a "
              "regular file"),
             (("predict", spec, "--params", "fifo.npz", "-o", "-"), "is not a regular file"),
             (("train", spec, "--params", "fifo.npz"), "is not a regular file"),
             (("train", "fifo.yaml"), "fifo.yaml:4:9: error: data file fifo.csv is a FIFO, "
              "not a regular file"),
             (("evaluate", spec, "--params", "p.npz", "--data", "fifo.csv"),
              "fifo.csv is a FIFO, not a regular file"),
             (("run", "file_input.yaml"), "file_input.yaml:3:6: error: input 'x': fifo.csv "
              "is a FIFO, not a regular file")]
    for args, message in cases:
        done = graphtool_capped(folder, *args, timeout=30)
        assert done.returncode == 66, (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)


def test_a_data_folder_is_exit_66(folder):
    (folder / "dir.csv").mkdir()
    refused(commands(folder, "dir.csv")[0], 66, "data file", "dir.csv is a folder, not a "
            "regular file")


# --- --params: one check for every command, headers that lie ---------------------------

@pytest.mark.slow  # a process per reader or command, under a memory cap
def test_a_params_member_hidden_behind_a_second_name_is_refused_for_every_command(folder):
    # 'l1/W' twice: a small header the check reads, and (by the other spelling of its name)
    # a header claiming 1.2 billion elements that numpy's loader would have allocated
    (folder / "twice.npz").write_bytes(npz_bytes([
        ("l1/W", npy_header((3, 400_000_000))),
        ("l1/W.npy", npy_bytes(np.zeros((3, 2), np.float32))),
        ("l1/b.npy", npy_bytes(np.zeros(3, np.float32)))]))
    spec = folder / "points.yaml"
    for args in [("run", spec), ("evaluate", spec), ("predict", spec, "-o", "-"),
                 ("train", spec, "--out-dir", "o"), ("export", spec, "-o", "m.onnx")]:
        done = graphtool_capped(folder, *args, "--params", "twice.npz")
        assert done.returncode == 65, (args, done.stderr)
        assert "error: --params twice.npz holds two arrays named 'l1/W'" in done.stderr


def test_training_session_params_are_checked_against_the_spec(folder):
    from graphcore.commands.train.session import TrainingSession, load_spec_data, settings_for
    from graphcore.errors import SerializationError
    from graphcore.spec import load_spec_file

    np.savez(folder / "wide.npz", **{"l1/W": np.zeros((7, 2), np.float32),
                                     "l1/b": np.zeros(7, np.float32)})
    spec = load_spec_file(folder / "points.yaml")
    settings = settings_for(spec)
    with pytest.raises(SerializationError, match="l1/W has shape \\(7, 2\\) in the file, but "
                       "the spec declares \\(3, any\\)"):
        TrainingSession(spec, settings, load_spec_data(spec, 0), folder / "o",
                        initial_params=folder / "wide.npz")


def test_an_array_of_zero_columns_runs_a_linear_layer_of_no_fan_in(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((3, 0), np.float32))
    (tmp_path / "s.yaml").write_text("graphtool: 1\ninputs:\n  x: {file: x.npy}\ngraph:\n"
                                     "  - {op: linear, out_size: 2}\noutputs: [_]\n")
    result = cli("run", tmp_path / "s.yaml", "--out-dir", tmp_path / "o", "--json")
    assert result.exit_code == 0, result.stderr  # was a ZeroDivisionError initializing W


def test_stdin_costs_what_it_holds_not_the_limit(folder):
    import tracemalloc

    from graphcore.inputs.make import make_inputs
    from graphcore.spec import load_spec_file

    spec = load_spec_file(folder / "points.yaml")
    tracemalloc.start()
    try:
        with open(folder / "points.csv", "rb") as stdin:  # a buffered stream, as sys.stdin is
            arrays = make_inputs(spec.inputs, 0, folder, {"x": "-"}, stdin)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert arrays["x"].shape == (4, 2)
    assert peak < 20_000_000  # not a buffer of the 1.6 GB stdin may hold


@pytest.mark.slow  # tens of megabytes read while memory is traced
def test_a_csv_costs_the_columns_the_spec_reads_not_the_file(folder):
    import tracemalloc

    from graphcore.commands.train.data import load_spec_data
    from graphcore.spec import load_spec_file

    rng = np.random.RandomState(0)
    names = [f"c{i}" for i in range(17)]
    rows = "".join(",".join(f"{v:.5f}" for v in row) + f",{i % 3}\n"
                   for i, row in enumerate(rng.randn(40_000, 19)))
    (folder / "wide.csv").write_text("f1,f2," + ",".join(names) + ",label\n" + rows)
    spec = load_spec_file(folder / "points.yaml")
    tracemalloc.start()
    try:
        data = load_spec_data(spec, 0, {"x": str(folder / "wide.csv"),
                                        "t": str(folder / "wide.csv")})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert data.train["x"].shape == (40_000, 2)
    size = (folder / "wide.csv").stat().st_size
    # 3 of 20 columns as float64 while reading: ~1 MB; the file is 7 MB, its cells as
    # Python strings several times that
    assert size > 6_000_000 and peak < 3_000_000, (size, peak)


@pytest.mark.slow  # tens of megabytes read while memory is traced
def test_train_on_a_32_mb_csv_peaks_far_below_its_old_gigabyte(tmp_path):
    """The figure: peak RSS of `graphtool train` over a 34 MB, 770,000-row CSV of six
    columns reading three (580 MB before the CSV reader streamed; about 120 MB now, of which
    graphtool itself is about 100 MB)."""
    rng = np.random.default_rng(0)
    block = rng.normal(size=(110_000, 5))
    labels = rng.integers(0, 3, 110_000)
    rows = "".join(f"{r[0]:.5f},{r[1]:.5f},{r[2]:.5f},{r[3]:.5f},{r[4]:.5f},{t}\n"
                   for r, t in zip(block, labels, strict=True))
    with open(tmp_path / "big.csv", "w") as f:
        f.write("f1,f2,f3,f4,f5,label\n")
        for _ in range(7):  # the same rows seven times: the reader's memory is what is measured
            f.write(rows)
    write_spec(tmp_path, "big.csv")
    spec = tmp_path / "points.yaml"
    spec.write_text(spec.read_text().replace("batch_size: 2", "batch_size: 4096"))
    measure = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
               "capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN)"
               ".ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", measure, sys.executable, "-m", "cli", "train",
                           str(spec), "--out-dir", str(tmp_path / "o"), "-q"],
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                          text=True, timeout=600, check=True)
    peak_kib = int(done.stdout.strip())
    assert (tmp_path / "big.csv").stat().st_size > 32_000_000
    assert peak_kib < 250 * 1024, f"peak RSS {peak_kib / 1024:.0f} MiB"
