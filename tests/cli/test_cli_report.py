"""`graphtool report`: one offline HTML page per spec, built from the artifacts the other
commands write (running only what is missing or older than the spec), checked with a strict
HTML parser."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from report_html_check import check_page
from typer.testing import CliRunner

from cli.app import app

SPECS = Path(__file__).resolve().parents[2] / "specs"
runner = CliRunner()


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "seed_dynamic.yaml"
    shutil.copy(SPECS / "seed_dynamic.yaml", path)
    return path


def report(*args):
    return runner.invoke(app, ["report", *map(str, args)])


def test_report_with_bench_and_train_shows_every_part(spec, tmp_path):
    out = tmp_path / "out"
    result = report(spec, "--bench", "--train", "--out-dir", out)
    assert result.exit_code == 0, result.stderr
    folder = out / "seed_dynamic"
    assert result.stderr.strip() == f"wrote {folder / 'report.html'}"
    assert result.stdout == ""  # the commands it ran printed nothing
    assert {p.name for p in folder.iterdir()} >= {"run.json", "ir.txt", "ir.optimized.txt",
                                                   "bench.json", "runs", "report.html"}
    assert (folder / "runs" / "1" / "train.csv").exists()  # the run --train made
    text = (folder / "report.html").read_text()
    page = check_page(text)
    assert page.tags["svg"] == 4 + 1 + 1  # 4 graphs, the timing chart, the loss curve
    titles = re.findall(r"<h2>(.*?)</h2>", text)
    assert titles[1:5] == ["Executed graph (define-by-run)", "Static IR, as traced",
                           "Static IR after the passes", "What the passes changed"]
    # the spec, highlighted, its step lines marked
    assert '<span class="k">graph</span>:' in text
    assert re.search(r'class="line step" id="L13"', text)  # then: [relu] made ReLU
    links = json.loads(re.search(r'id="node-lines">(.*?)</script>', text).group(1))
    assert sorted(set(links["0"].values())) == [13, 16, 18]
    # IR nodes link to the steps they were traced from (a vjp to the step it differentiates);
    # after the passes, only nodes they left as traced
    assert sorted(set(links["1"].values())) == [13, 16, 18]
    assert set(links["2"]) <= set(links["1"]) and links["2"]
    assert links["3"] == {}  # the passes' difference links nothing
    # the path taken, linked to its lines
    assert '<a href="#L15" data-line="15">' in text and "predicate=mean(x) &gt; 0" in text
    # what each pass removed
    for name in ("dce", "cse", "fold"):
        assert f"<td>{name}</td>" in text
    # the timing chart: one bar per mode and batch size
    bars = re.findall(r"<title>(dynamic|static), batch (\d+): ", text)
    assert sorted(bars) == sorted((m, b) for m in ("dynamic", "static") for b in ("1", "8", "32"))
    # the loss curve, 100 steps
    points = re.search(r'<polyline points="([^"]*)"', text).group(1).split()
    assert len(points) == 100


def test_report_reuses_fresh_artifacts_and_reruns_stale_ones(spec, tmp_path):
    out = tmp_path / "out"
    assert report(spec, "--out-dir", out).exit_code == 0
    run_json = out / "seed_dynamic" / "run.json"
    first = run_json.stat().st_mtime_ns
    assert report(spec, "--out-dir", out).exit_code == 0
    assert run_json.stat().st_mtime_ns == first  # fresh: read, not run again
    past = run_json.stat().st_mtime - 100
    os.utime(run_json, (past, past))  # now older than the spec
    assert report(spec, "--out-dir", out).exit_code == 0
    assert run_json.stat().st_mtime > past + 50


def test_without_bench_or_train_the_page_says_how_to_get_them(spec, tmp_path):
    result = report(spec, "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    text = (tmp_path / "seed_dynamic" / "report.html").read_text()
    check_page(text)
    assert "No bench.json" in text and "No train.csv" in text
    assert not (tmp_path / "seed_dynamic" / "bench.json").exists()


def test_train_csv_is_read_tolerantly(spec, tmp_path):
    folder = tmp_path / "seed_dynamic"
    (folder / "runs" / "1").mkdir(parents=True)
    (folder / "runs" / "1" / "train.csv").write_text("step,loss,accuracy,phase\n1,2.0,0.5,train\n"
                                      "2,1.0,0.75,train\n3,nan,0.8,train\n")
    result = report(spec, "--train", "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    text = (folder / "report.html").read_text()
    check_page(text)
    assert "loss (last 1)" in text and "accuracy (last 0.8)" in text and "phase" not in text
    assert len(re.findall("<polyline", text)) == 2


def test_a_spec_on_stdin_is_a_usage_error_and_a_missing_one_66(tmp_path):
    result = runner.invoke(app, ["report", "-", "--out-dir", str(tmp_path)], input="x")
    assert result.exit_code == 2
    assert report(tmp_path / "missing.yaml", "--out-dir", tmp_path).exit_code == 66


def test_a_spec_without_a_loss_cannot_train_and_says_so(tmp_path):
    spec = tmp_path / "noloss.yaml"
    spec.write_text("graphtool: 1\nname: noloss\ninputs:\n  x: {random: normal, shape: [3]}\n"
                    "graph: [relu]\n")
    result = report(spec, "--train", "--out-dir", tmp_path)
    assert result.exit_code != 0 and "error" in result.stderr
    assert not (tmp_path / "noloss" / "report.html").exists()


def test_the_checker_catches_what_it_must():
    with pytest.raises(AssertionError):
        check_page("<!DOCTYPE html><html><body><div><span></div></body></html>")
    with pytest.raises(AssertionError):
        check_page('<!DOCTYPE html><html><body><img src="http://example.com/a.png"></body>'
                   "</html>")
    with pytest.raises(AssertionError):
        check_page('<!DOCTYPE html><html><body><p id="a"></p><p id="a"></p></body></html>')
    with pytest.raises(AssertionError):
        check_page('<!DOCTYPE html><html><body><svg onload="f()"></svg></body></html>')


def test_an_ir_too_large_to_lay_out_is_a_note_not_a_wait(tmp_path, monkeypatch):
    from cli.commands import report as report_command

    # lstm_tagger's IRs have over 100 nodes (fewer than 300 since F.lstm is one op)
    monkeypatch.setitem(report_command.MAX_DRAWN_NODES, "ir", 100)
    shutil.copytree(SPECS, tmp_path / "specs")
    result = report(tmp_path / "specs" / "lstm_tagger.yaml", "--out-dir", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    text = (tmp_path / "out" / "lstm_tagger" / "report.html").read_text()
    check_page(text)
    assert text.count("too many to lay out here (over 100)") == 3  # the IRs and their diff
    assert text.count('<div class="viewer"') == 1  # the executed graph is drawn


def test_a_spec_with_a_plugin_op_is_reported_with_the_plugin_loaded(tmp_path):
    """``report --plugin FILE`` loads the op module, and so do the run, bench and train it
    starts for missing artifacts (without the option, a plugin op's spec had no report)."""
    examples = SPECS.parent / "examples"
    plugin = tmp_path / "swish_ops_for_report.py"  # its own path: a plugin runs once per file
    shutil.copy(examples / "swish_ops.py", plugin)
    out = tmp_path / "out"
    result = report(examples / "swish.yaml", "--plugin", plugin, "--bench", "--train",
                    "--out-dir", out)
    assert result.exit_code == 0, result.stderr
    folder = out / "swish_mlp"
    assert {"run.json", "bench.json", "runs", "report.html"} <= \
        {p.name for p in folder.iterdir()}
    assert (folder / "runs" / "1" / "train.csv").exists()
    page = check_page((folder / "report.html").read_text())
    assert page.tags["svg"] == 4 + 1 + 1
    assert "swish" in (folder / "ir.txt").read_text()


def test_the_policy_allows_only_the_pages_own_script_and_forbids_posts(spec, tmp_path):
    import base64
    import hashlib

    result = report(spec, "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    text = (tmp_path / "seed_dynamic" / "report.html").read_text()
    policy = dict(part.strip().split(" ", 1) for part in re.search(
        r'http-equiv="Content-Security-Policy" content="([^"]*)"', text).group(1).split(";"))
    scripts = re.findall(r"<script>(.*?)</script>", text, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert policy["script-src"] == f"'sha256-{digest}'"
    assert policy["default-src"] == policy["form-action"] == policy["base-uri"] == \
        policy["object-src"] == "'none'"
    # the policy comes before anything it guards
    assert text.index("Content-Security-Policy") < text.index("<title>")


def test_the_page_draws_numbers_only_from_numbers():
    from graphcore.commands.report.page import ReportData, render_report

    run = {"static": {"passes": [{"name": "dce", "nodes_removed": "<b>1</b>"}]}}
    with pytest.raises(TypeError, match="not a finite number"):
        render_report(ReportData(name="s", spec_file="s.yaml", source="", run=run))
    bench = {"results": [{"mode": "static", "batch": 1, "median_ms": float("nan")}]}
    with pytest.raises(TypeError, match="not a finite number"):
        render_report(ReportData(name="s", spec_file="s.yaml", source="", bench=bench))


def test_training_curves_of_odd_columns_say_what_they_could_not_draw():
    from graphcore.commands.report.page import ReportData, render_report

    def page(train):
        return render_report(ReportData(name="s", spec_file="s.yaml", source="", train=train))

    assert "No train.csv" in page(None)
    assert "train.csv has no numeric columns" in page({}) and "No train.csv" not in page({})
    assert "loss: values too far apart to draw" in page({"loss": [1e308, -1e308]})
    assert "loss: no finite values" in page({"loss": [float("nan")]})
    check_page(page({"step": [1.0, 2.0], "loss": [2.0, 1.0]}))
