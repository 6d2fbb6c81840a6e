"""--resume reads an earlier sweep.json as untrusted input: a row missing a field or holding the
wrong type, a file that is not JSON, too large, too deep or not UTF-8, rows edited to claim
another point's key: each is exit 65 with ``sweep.json:LINE:COL: error: row N: ...`` (every
problem at once), a folder or a FIFO exit 66 at once, before any cluster is asked for (the CLI
runs here point at a closed port they never reach). What a sweep writes reads back, and a
kept row takes its point's place in the grid it resumes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sweep_helpers import SPEC, invoke

from cli.output import to_json
from graphcore.commands.sweep import make_tasks, run_point, sweep_document
from graphcore.commands.sweep.resume import MAX_BYTES, read_rows, resume
from graphcore.errors import SpecErrors
from graphcore.spec import load_spec_file

CLOSED = "tcp://127.0.0.1:1"
POINT = {"train.steps": "2"}
ROOT = SPEC.parents[1]


@pytest.fixture
def out(tmp_path, monkeypatch):
    """A short relative artifacts folder (messages name it whole, not clipped)."""
    monkeypatch.chdir(tmp_path)
    return Path("o")


def _tasks(points):
    return make_tasks("train", str(SPEC), SPEC.read_text(), load_spec_file(SPEC), points)


@pytest.fixture(scope="module")
def good_row():
    """The row a sweep writes for POINT (run in this process)."""
    row = run_point(_tasks([POINT])[0])
    assert row["status"] == "ok", row
    return row


def _write(out_dir, text):
    path = out_dir / "residual_mlp" / "sweep.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text) if isinstance(text, str) else path.write_bytes(text)
    return path


def _document(rows):
    return to_json(sweep_document("residual_mlp", "train", rows, "final_loss"))


def _resume(out_dir):
    return invoke("sweep", SPEC, "--grid", "train.steps=2", "--scheduler", CLOSED, "--resume",
                  "--out-dir", out_dir)


def _without(row, field):
    return {k: v for k, v in row.items() if k != field}


TAMPERED_ROWS = [
    # (what the row becomes, what the message says)
    (lambda r: _without(r, "status"), "'status' is missing"),
    (lambda r: _without(r, "index"), "'index' is missing"),
    (lambda r: _without(r, "figures"), "'figures' is missing"),
    (lambda r: _without(r, "key"), "'key' is missing"),
    (lambda r: {**r, "index": "0"}, "'index' must be an integer, not the string \"0\""),
    (lambda r: {**r, "index": True}, "'index' must be an integer, not true"),
    (lambda r: {**r, "index": -1}, "'index' must be 0 or more"),
    (lambda r: {**r, "status": "done"}, "'status' must be \"ok\" or \"failed\""),
    (lambda r: {**r, "figures": [1, 2]}, "'figures' must be an object, not an array"),
    (lambda r: {**r, "figures": {"final_loss": "low"}},
     "figure \"final_loss\" must be a finite number or null, not the string \"low\""),
    (lambda r: {**r, "settings": {"train.steps": 2}},
     "setting \"train.steps\" must be a string, not the number 2"),
    (lambda r: {**r, "seconds": "fast"}, "'seconds' must be an integer or a number or null"),
    (lambda r: {**r, "settings": {"train.steps": "5"}},
     "its command and settings (train train.steps=5) are not those of the point its key"),
    (lambda r: {**r, "command": "bench"}, "its command and settings (bench train.steps=2)"),
]


@pytest.mark.parametrize("tamper, message", TAMPERED_ROWS)
def test_a_tampered_row_is_a_located_error_naming_sweep_json_and_the_row(tamper, message,
                                                                        good_row, out):
    path = _write(out, _document([good_row]).replace(
        json.dumps(good_row, indent=2, sort_keys=True).replace("\n", "\n    "),
        json.dumps(tamper(good_row), indent=2, sort_keys=True).replace("\n", "\n    ")))
    assert json.loads(path.read_text())["rows"] == [tamper(good_row)]
    result = _resume(out)
    assert result.exit_code == 65, result.stderr
    assert result.stderr.startswith(f"{path}:4:5: error: row 0: "), result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_a_huge_figure_and_non_finite_numbers_are_refused(good_row, out):
    for figure, message in (("1" + "0" * 400, "figure \"final_loss\" must be a finite number"),
                            ("1e999", "figure \"final_loss\" must be a finite number"),
                            ("NaN", "NaN is not JSON")):
        text = _document([good_row]).replace(
            f'"final_loss": {good_row["figures"]["final_loss"]!r}', f'"final_loss": {figure}')
        assert figure in text
        _write(out, text)
        result = _resume(out)
        assert result.exit_code == 65 and message in result.stderr, (figure, result.stderr)
        assert "sweep.json:" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("text, message, where", [
    ("not json\n", "sweep.json is not JSON: Expecting value", "1:1"),
    ('{"schema_version": 1, "rows": [\n  {"key": "a",}\n]}\n', "is not JSON", "2:15"),
    ("[1, 2]\n", "must hold a JSON object, not an array", "1:1"),
    ('{"schema_version": 1, "rows": 3}\n', "'rows' must be an array, not the number 3",
     "1:1"),
    ('{"schema_version": 1}\n', "has no 'rows' array", "1:1"),
    ('{"rows": []}\n', "has no schema_version", "1:1"),
    ('{"schema_version": 2, "rows": []}\n', "has schema_version the number 2", "1:1"),
    ('{"schema_version": 1, "rows": ' + "[" * 100_000 + "]" * 100_000 + "}",
     "nests arrays or objects too deeply", "1:1"),
    ('{"schema_version": 1, "rows": [' + ",".join(["[]"] * 700_000) + "]}",
     "holds 700,002 objects and arrays", "1:1"),
    ('{"schema_version": 1, "rows": [\n  7\n]}\n',
     "row 0: a row must be an object, not the number 7", "2:3"),
    ('{"schema_version": 1, "rows": [\n  {"key": "a"}\n]}\n',
     "row 0: 'index', 'command', 'settings', 'figures', 'status', 'error', 'exit_code', "
     "'exit_class', 'started', 'seconds' and 'worker' are missing", "2:3"),
])
def test_a_file_that_is_not_a_sweep_document_is_a_located_error(text, message, where,
                                                                out):
    path = _write(out, text)
    result = _resume(out)
    assert result.exit_code == 65, result.stderr
    assert result.stderr.startswith(f"{path}:{where}: error: "), result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_not_utf8_and_too_large_are_refused_before_parsing(out):
    path = _write(out, b'{"schema_version": 1,\n "rows": ["\xff"]}')
    result = _resume(out)
    assert result.exit_code == 65, result.stderr
    assert result.stderr.startswith(f"{path}:2:12: error: sweep.json is not UTF-8 text")
    with open(path, "r+b") as handle:  # sparse: the size is checked, nothing is read
        handle.truncate(MAX_BYTES + 1)
    result = _resume(out)
    assert result.exit_code == 65, result.stderr
    assert "sweep.json is 64.0 MiB, over the limit of 64 MiB" in result.stderr


def test_every_bad_row_is_reported_at_once(good_row, out):
    other = {**good_row, "key": "0123456789abcdef", "index": 1}
    rows = [_without(good_row, "status"), other, {**other, "figures": None}]
    path = _write(out, _document(rows))
    result = _resume(out)
    assert result.exit_code == 65, result.stderr
    lines = result.stderr.splitlines()
    errors = [line for line in lines if ": error: " in line]
    assert len(errors) == 3, result.stderr
    assert errors[0].startswith(f"{path}:4:5: error: row 0: 'status' is missing")
    assert ": error: row 2: 'figures' must be an object, not null" in result.stderr
    assert "row 2: its key \"0123456789abcdef\" is that of row 1 too" in result.stderr


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_sweep_json_that_is_not_a_regular_file_is_exit_66_at_once(kind, out):
    path = out / "residual_mlp" / "sweep.json"
    path.parent.mkdir(parents=True)
    path.mkdir() if kind == "folder" else os.mkfifo(path)
    done = subprocess.run([sys.executable, "-m", "cli", "sweep", str(SPEC), "--grid",
                           "train.steps=2", "--scheduler", CLOSED, "--resume", "--out-dir",
                           str(out)], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 66, done.stderr
    assert done.stderr.startswith(f"error: --resume: {path} is ")
    assert "Traceback" not in done.stderr


def test_what_a_sweep_writes_reads_back_and_a_kept_row_takes_its_new_place(good_row,
                                                                           out):
    failed = {**good_row, "key": "fedcba9876543210", "index": 1, "status": "failed",
              "figures": {}, "error": "boom", "exit_code": 1, "exit_class": "runtime"}
    path = _write(out, _document([good_row, failed]))
    assert read_rows(path) == [good_row, failed]
    # the same point now second in a grid listing another first
    tasks = _tasks([{"train.steps": "1"}, POINT])
    assert tasks[1].key == good_row["key"]
    kept = resume(path, tasks)
    assert kept == {good_row["key"]: {**good_row, "index": 1}}
    assert resume(out / "nothing.json", tasks) == {}
    text = path.read_text().replace('"status": "ok"', '"status": 1')
    path.write_text(text)
    with pytest.raises(SpecErrors, match=r"sweep.json:4:5: error: row 0: 'status' must be"):
        resume(path, tasks)
