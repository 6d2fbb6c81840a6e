"""`graphtool report` over hostile and malformed artifacts: markup in any field of any artifact
the page is made from stays text, and a file that is not what its command writes is made again
(when report makes it) or refused (65) at its place in the file, never an internal error.

The fields are found by walking the artifacts a real `report --bench --train` wrote (every key
and value of run.json and bench.json, the first and the last item of each array; every column
of train.csv; the IR texts), so a field added later is covered without a change here.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from report_html_check import check_page
from typer.testing import CliRunner

from cli.app import app

SPECS = Path(__file__).resolve().parents[2] / "specs"
runner = CliRunner()
MARKUP = '<img src=x onerror="alert({n})"><script>alert({n})</script>'


def markup(n: int) -> str:
    return MARKUP.format(n=n)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The artifacts of one `report --bench --train` of seed_dynamic, and its spec."""
    root = tmp_path_factory.mktemp("made")
    spec = root / "seed_dynamic.yaml"
    shutil.copy(SPECS / "seed_dynamic.yaml", spec)
    result = runner.invoke(app, ["report", str(spec), "--bench", "--train", "--out-dir",
                                 str(root / "out"), "-q"])
    assert result.exit_code == 0, result.stderr
    return root / "out" / "seed_dynamic", spec


@pytest.fixture
def workspace(made, tmp_path):
    """A copy of the artifacts beside a copy of the spec, every artifact newer than the spec."""
    folder, spec = made
    shutil.copy(spec, tmp_path / spec.name)
    os.utime(tmp_path / spec.name, (1_000_000_000, 1_000_000_000))
    shutil.copytree(folder, tmp_path / "out" / folder.name)
    return tmp_path / spec.name, tmp_path / "out" / folder.name


def report(spec, *options):
    return runner.invoke(app, ["report", str(spec), "--out-dir", str(spec.parent / "out"),
                               "-q", *options])


def artifact(folder: Path, name: str) -> Path:
    """Where report reads ``name``: train.csv in the (only) run's folder, the rest beside it."""
    return folder / "runs" / "1" / name if name == "train.csv" else folder / name


def write_fresh(path: Path, data: str | bytes) -> None:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    os.utime(path, (2_000_000_000, 2_000_000_000))


# --- walking an artifact's structure --------------------------------------------------------
def json_places(value, path=()):
    """Every place in a JSON document: each value (containers too) and each key, descending
    into every object and into the first and last item of each array."""
    yield ("value", path)
    if isinstance(value, dict):
        for key, item in value.items():
            yield ("key", (*path, key))
            yield from json_places(item, (*path, key))
    elif isinstance(value, list) and value:
        for index in sorted({0, len(value) - 1}):
            yield from json_places(value[index], (*path, index))


def with_markup(document, place, text):
    kind, path = place
    if not path:
        return text
    changed = copy.deepcopy(document)
    parent = changed
    for key in path[:-1]:
        parent = parent[key]
    if kind == "key":
        parent[text] = parent.pop(path[-1])
    else:
        parent[path[-1]] = text
    return changed


def csv_places(text):
    """Every header cell and, for each column, a cell of the first and the last row."""
    rows = list(csv.reader(io.StringIO(text)))
    for column in range(len(rows[0])):
        for row in sorted({0, 1, len(rows) - 1}):
            yield row, column


def csv_with_markup(text, place, value):
    rows = list(csv.reader(io.StringIO(text)))
    rows[place[0]][place[1]] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def assert_inert(page_text: str, *markers: str) -> None:
    """The markers appear, if at all, only as text: no element or attribute came from them."""
    for marker in markers:
        assert marker not in page_text, marker
    page = check_page(page_text)
    assert "img" not in page.tags and page.tags.get("script", 0) == 2  # the page's own two


def assert_refused_at_a_place(result, path: Path) -> None:
    assert result.exit_code == 65, (result.exit_code, result.stderr)
    # the file's name ends the path (a long one is clipped in the middle)
    assert re.match(rf"\S*/{re.escape(path.name)}:\d+:\d+: error: ", result.stderr), \
        result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.fixture
def without_drawings(monkeypatch):
    """The drawings come from the spec, not from these artifacts: leave them out, so that each
    of the hundreds of pages below takes milliseconds (test_markup_in_the_spec... draws)."""
    from cli.commands import report as report_command

    monkeypatch.setattr(report_command, "_graphs", lambda loaded, static, notes: [])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["run.json", "bench.json"])
def test_markup_in_any_field_of_a_json_artifact_stays_text(workspace, without_drawings, name):
    spec, folder = workspace
    original = json.loads(artifact(folder, name).read_text())
    places = list(json_places(original))
    assert len(places) > 40  # the walk found the artifact's fields
    outcomes = {"shown": 0, "made again": 0, "refused": 0, "not on the page": 0}
    for n, place in enumerate(places):
        marker = markup(n)
        write_fresh(artifact(folder, name), json.dumps(with_markup(original, place, marker)))
        result = report(spec)
        if name == "bench.json" and result.exit_code == 65:  # report does not make it here
            assert_refused_at_a_place(result, artifact(folder, name))
            outcomes["refused"] += 1
            continue
        assert result.exit_code == 0, (place, result.stderr)
        page = (folder / "report.html").read_text()
        assert_inert(page, marker)
        if f"alert({n})" in page:
            outcome = "shown"  # as text
        elif f"alert({n})" not in artifact(folder, name).read_text():
            outcome = "made again"  # a run.json report could not read: run again
        else:
            outcome = "not on the page"
        outcomes[outcome] += 1
    if name == "run.json":  # text fields shown; a string where a number goes: run again
        assert outcomes["shown"] > 5 and outcomes["made again"] > 5, outcomes
    else:  # the page shows only bench.json's numbers: a string in one's place is refused
        assert outcomes["refused"] > 5, outcomes


@pytest.mark.slow
def test_markup_in_any_cell_of_train_csv_and_in_the_ir_texts_stays_text(workspace,
                                                                          without_drawings):
    spec, folder = workspace
    original = (folder / "runs" / "1" / "train.csv").read_text()
    shown = 0
    for n, place in enumerate(csv_places(original)):
        marker = markup(n)
        write_fresh(folder / "runs" / "1" / "train.csv", csv_with_markup(original, place, marker))
        result = report(spec)
        assert result.exit_code == 0, (place, result.stderr)
        page = (folder / "report.html").read_text()
        assert_inert(page, marker)
        shown += "alert(" + str(n) + ")" in page  # a header cell: the column's name
    assert shown >= 1
    for name in ("ir.txt", "ir.optimized.txt"):
        text = artifact(folder, name).read_text()
        lines = text.splitlines()
        for n in range(len(lines)):
            marker = markup(1000 + n)
            write_fresh(artifact(folder, name),
                        "\n".join([*lines[:n], marker + lines[n], *lines[n + 1:]]))
            result = report(spec)
            assert result.exit_code == 0, result.stderr
            page = (folder / "report.html").read_text()
            assert_inert(page, marker)
            assert f"alert({1000 + n})" in page
        write_fresh(artifact(folder, name), text)


def test_the_reported_fields_are_escaped_or_refused(workspace):
    """The fields the first probe found in the page as markup: passes[].nodes_removed and
    static.nodes.traced (run.json: made again), bench.json's batch (refused at its place)."""
    spec, folder = workspace
    run = json.loads((folder / "run.json").read_text())
    numbers = copy.deepcopy(run)
    numbers["static"]["passes"][0]["nodes_removed"] = markup(1)
    numbers["static"]["nodes"]["traced"] = markup(2)
    write_fresh(folder / "run.json", json.dumps(numbers))
    result = report(spec)
    assert result.exit_code == 0, result.stderr
    assert_inert((folder / "report.html").read_text(), markup(1))
    assert "alert(" not in (folder / "report.html").read_text()
    assert "alert(" not in (folder / "run.json").read_text()  # run.json was made again
    texts = copy.deepcopy(run)
    texts["path"][0]["predicate"] = markup(3)
    texts["static"]["passes"][0]["name"] = markup(4)
    write_fresh(folder / "run.json", json.dumps(texts))
    result = report(spec)
    assert result.exit_code == 0, result.stderr
    page = (folder / "report.html").read_text()
    assert_inert(page, markup(3), markup(4))
    for n in (3, 4):
        assert f"&lt;script&gt;alert({n})&lt;/script&gt;" in page
    bench = json.loads((folder / "bench.json").read_text())
    bench["results"][2]["batch"] = markup(4)
    write_fresh(folder / "bench.json", json.dumps(bench, indent=2))
    refused = report(spec)
    assert_refused_at_a_place(refused, folder / "bench.json")
    line = (folder / "bench.json").read_text().splitlines().index(
        f'      "batch": {json.dumps(markup(4))},') + 1
    assert (f"bench.json:{line}:16: error: results[2].batch: expected an integer >= 1, got a "
            "string") in refused.stderr.splitlines()[0]


# --- the spec and the file names ------------------------------------------------------------
HOSTILE_SPEC = """graphtool: 1
# a comment <script>alert(1)</script>
name: hostile
params: {tag: '<img src=x onerror="alert(2)">'}
inputs:
  x: {random: normal, shape: [5]}
graph:
  - if: params.tag == '<img src=x onerror="alert(3)">' or mean(x) > 0
    then: [relu]
    else: [sigmoid]
  - repeat: 2
    body: [tanh]
loss: {op: sum}
"""


def test_markup_in_the_spec_its_folder_and_its_file_name_stays_text(tmp_path):
    folder = tmp_path / '<img src=x onerror="alert(4)">'
    folder.mkdir()
    spec = folder / '<script>alert(5)<'
    spec.write_text(HOSTILE_SPEC)
    result = runner.invoke(app, ["report", str(spec), "--out-dir", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 0, result.stderr
    page = (tmp_path / "out" / "hostile" / "report.html").read_text()
    parsed = check_page(page)
    assert "img" not in parsed.tags and parsed.tags["script"] == 2
    assert "<script>alert" not in page and "<img src=x" not in page
    text = "".join(parsed.text)
    for n in (1, 2, 3, 4, 5):
        assert f"alert({n})" in text  # shown, as text (the loop's cluster names the file)


# --- malformed artifacts --------------------------------------------------------------------
@pytest.mark.parametrize("name, data", [
    ("run.json", b"{not json"),
    ("run.json", b'{"static": {"passes": "<b>"}}'),
    ("run.json", b"\xff\xfe"),
    ("ir.txt", b"\xff"),
    ("ir.optimized.txt", b"%0 = \xc3("),
])
def test_a_malformed_run_artifact_is_made_again(workspace, name, data):
    spec, folder = workspace
    write_fresh(artifact(folder, name), data)
    result = report(spec)
    assert result.exit_code == 0, result.stderr
    assert json.loads((folder / "run.json").read_text())["static"]["nodes"]
    (folder / "ir.txt").read_text(encoding="utf-8")
    (folder / "ir.optimized.txt").read_text(encoding="utf-8")
    check_page((folder / "report.html").read_text())


@pytest.mark.parametrize("name, data, message", [
    ("bench.json", b'{"results": [{"mode": "static", "batch": "8", "median_ms": 1.0}]}',
     ':1:42: error: results[0].batch: expected an integer >= 1, got a string "8"'),
    ("bench.json", b'{"results": [{"mode": "static", "batch": 8, "median_ms": NaN}]}',
     ":1:58: error: not JSON: NaN (JSON numbers are finite)"),
    ("bench.json", b'{"results": {"mode": 1}}',
     ":1:13: error: results: expected an array, got an object"),
    ("bench.json", b"[" * 100000, ":1:65: error: nested over 64 levels deep"),
    ("bench.json", b'{"results": [1' + b"0" * 5000 + b"]}",
     ":1:14: error: a number too long to read"),
    ("train.csv", b"step,loss\n1,0.5\n2,\xff\n", ":3:3: error: not UTF-8 text: byte 0xff"),
    ("train.csv", b"step,loss\n1,0.5\n2\n", ":3:1: error: 1 cell where the header has 2"),
    ("train.csv", b'step,loss\n1,"0.5\n', ":2:1: error: not CSV: unexpected end of data"),
    ("train.csv", b"step,loss\n1," + b"9" * 200_000 + b"\n",
     ":2:1: error: not CSV: field larger than field limit"),
])
def test_a_malformed_artifact_report_does_not_make_is_refused_at_its_place(
        workspace, name, data, message):
    spec, folder = workspace
    write_fresh(artifact(folder, name), data)
    result = report(spec)
    assert_refused_at_a_place(result, artifact(folder, name))
    assert f"{name}{message}" in result.stderr.splitlines()[0], result.stderr
    option = "--bench" if name == "bench.json" else "--train"
    made_again = report(spec, option)  # report makes it: made again
    assert made_again.exit_code == 0, made_again.stderr
    check_page((folder / "report.html").read_text())


def test_a_folder_or_a_fifo_in_an_artifacts_place_is_66_at_once(workspace):
    spec, folder = workspace
    (folder / "bench.json").unlink()
    (folder / "bench.json").mkdir()
    result = report(spec)
    assert result.exit_code == 66, result.stderr
    assert "bench.json: it is a folder" in result.stderr
    (folder / "bench.json").rmdir()
    for name in ("train.csv", "run.json"):
        artifact(folder, name).unlink()
        os.mkfifo(artifact(folder, name))
        os.utime(artifact(folder, name), (2_000_000_000, 2_000_000_000))
        done = subprocess.run([sys.executable, "-m", "cli", "report", str(spec), "--out-dir",
                               str(spec.parent / "out")], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 66, done.stderr
        assert f"{name}: it is not a regular file" in done.stderr
        artifact(folder, name).unlink()


def test_every_malformed_artifact_is_said_at_once(workspace):
    spec, folder = workspace
    write_fresh(folder / "bench.json", b'{"results": 3}')
    write_fresh(folder / "runs" / "1" / "train.csv", b"step,loss\n1\n")
    result = report(spec)
    assert result.exit_code == 65
    lines = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert len(lines) == 2
    assert "bench.json:1:13: error: results: expected an array" in lines[0]
    assert "train.csv:2:1: error: 1 cell where the header has 2" in lines[1]


# --- any value of any type, through the functions report reads and draws with ---------------
REPLACEMENTS = [None, 0, -1, 2.5, 1e308, True, "", [], {}, [markup(7)], {markup(8): markup(9)},
                markup(6)]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["run.json", "bench.json"])
def test_any_value_anywhere_is_read_and_drawn_or_refused_at_its_place(made, name):
    from graphcore.commands.report.artifacts import parse_bench_json, parse_run_json
    from graphcore.commands.report.page import ReportData, render_report
    from graphcore.errors import SpecErrors

    folder, spec = made
    parse = parse_run_json if name == "run.json" else parse_bench_json
    original = json.loads(artifact(folder, name).read_text())
    outcomes = {"drawn": 0, "refused": 0}
    for place in json_places(original):
        for value in REPLACEMENTS if place[0] == "value" else [markup(5)]:
            data = json.dumps(with_markup(original, place, value), indent=1).encode()
            try:
                parsed = parse(data, name)
            except SpecErrors as e:
                for error in e.errors:
                    assert error.file == name and error.line >= 1 and error.col >= 1
                outcomes["refused"] += 1
                continue
            page = render_report(ReportData(
                name="seed_dynamic", spec_file=str(spec), source=spec.read_text(),
                **({"run": parsed} if name == "run.json" else {"bench": parsed})))
            assert_inert(page, *(markup(n) for n in range(5, 10)))
            outcomes["drawn"] += 1
    assert outcomes["drawn"] > 50 and outcomes["refused"] > 50, outcomes
