"""The report in a real browser: headless Chromium opens report.html from a file URL with the
network off, and finds no console error, no uncaught exception, no failed or outside request;
the script links spec lines to nodes and zooms; the screenshot shows the graphs drawn (their
node colours), not a blank page. A page that does fetch or fail is caught (the control).

Needs the Debian package ``chromium`` (``.ci/run`` installs it when missing)."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from chromium_page import decode_png, find_chromium, open_page
from typer.testing import CliRunner

from cli.app import app

SPECS = Path(__file__).resolve().parents[2] / "specs"
pytestmark = [pytest.mark.skipif(find_chromium() is None, reason="no chromium: install the "
                                 "Debian package `chromium` (.ci/run does)"),
              pytest.mark.slow]  # a headless browser per test

EXECUTED_FILL = (0x64, 0x95, 0xED)  # Chainer's function-node blue in the executed graph
IR_FILL = (0xDC, 0xE8, 0xF5)  # static IR op boxes
GUARD_FILL = (0xFF, 0xF2, 0xCC)

PROBE = """JSON.stringify((function () {
  var before = document.querySelector('.canvas').style.transform;
  document.querySelector('button[data-zoom="in"]').click();
  var after = document.querySelector('.canvas').style.transform;
  document.getElementById('L13').click();
  var lit = Array.from(document.querySelectorAll('g.node.hl title')).map(t => t.textContent);
  return {nodes: document.querySelectorAll('g.node').length, before: before, after: after,
          lit: lit, line: document.getElementById('L13').classList.contains('hl')};
}()))"""


def pixels_of(image, colour):
    return int(np.all(image[..., :3] == np.array(colour, np.uint8), axis=-1).sum())


def test_the_report_opens_offline_without_errors_and_draws_its_graphs(tmp_path):
    spec = tmp_path / "seed_dynamic.yaml"
    spec.write_text((SPECS / "seed_dynamic.yaml").read_text())
    result = CliRunner().invoke(app, ["report", str(spec), "--bench", "--train",
                                      "--out-dir", str(tmp_path)])
    assert result.exit_code == 0, result.stderr
    page = tmp_path / "seed_dynamic" / "report.html"
    visit = open_page(page.as_uri(), expression=PROBE)
    assert visit.problems() == []
    probe = json.loads(visit.value)
    assert probe["nodes"] > 20
    assert probe["before"] != probe["after"] and "scale(" in probe["after"]
    # relu's node and its output in the executed graph, and its IR node as traced and after
    # the passes (n1 in both: the passes leave it as traced)
    assert sorted(probe["lit"]) == ["4", "5", "n1", "n1"] and probe["line"]
    image = decode_png(visit.screenshot)
    assert image.shape[:2] == (1000, 640)
    assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 100  # not blank
    assert pixels_of(image, EXECUTED_FILL) > 200
    assert pixels_of(image, IR_FILL) > 200
    assert pixels_of(image, GUARD_FILL) > 200


def test_the_harness_catches_errors_fetches_and_exceptions(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://example.com/a.png">'
                    '<img src="missing.png"><script>console.error("boom");'
                    'setTimeout(function () { throw new Error("thrown"); }, 0);</script>'
                    "</body></html>")
    visit = open_page(page.as_uri())
    assert visit.console_errors == ["boom"]
    assert any("thrown" in e for e in visit.exceptions)
    assert any("missing.png" in r or "FILE_NOT_FOUND" in r for r in visit.failed_requests)
    assert visit.outside_requests == ["request to http://example.com/a.png"]
    image = decode_png(visit.screenshot)
    assert all(pixels_of(image, c) == 0 for c in (EXECUTED_FILL, IR_FILL, GUARD_FILL))


# What markup that escaped escaping could try: each, if it ran, says so on the console.
INJECTED = ('<img src="x" onerror="console.error(\'ran: onerror\')">'
            '<script>console.error("ran: script")</script>'
            '<a id="injected-link" href="javascript:console.error(\'ran: link\')">link</a>'
            '<form id="injected-form" action="http://example.com/steal" method="post">'
            '<input name="secret" value="1"></form>'
            '<object data="http://example.com/plugin"></object>')
SUBMIT = """(function () {
  document.getElementById('injected-link').click();
  document.getElementById('injected-form').submit();
  return document.querySelectorAll('g.node').length;
}())"""


def test_the_policy_runs_no_script_but_the_pages_own_and_posts_no_form(tmp_path):
    spec = tmp_path / "seed_dynamic.yaml"
    spec.write_text((SPECS / "seed_dynamic.yaml").read_text())
    result = CliRunner().invoke(app, ["report", str(spec), "--out-dir", str(tmp_path)])
    assert result.exit_code == 0, result.stderr
    text = (tmp_path / "seed_dynamic" / "report.html").read_text()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', text).group(1)
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    for directive in ("form-action 'none'", "base-uri 'none'", "object-src 'none'"):
        assert directive in policy
    page = tmp_path / "injected.html"
    page.write_text(text.replace("</main>", INJECTED + "</main>"))
    visit = open_page(page.as_uri(), expression=SUBMIT, settle_s=1.0)
    assert visit.value > 20  # the page's own script drew its viewers
    assert not any("ran:" in e for e in visit.console_errors), visit.console_errors
    assert visit.outside_requests == [] and visit.exceptions == []
    refused = " ".join(visit.log_errors)
    assert "Content Security Policy" in refused and "form-action" in refused


def test_markup_in_the_artifacts_is_text_in_the_browser(tmp_path):
    spec = tmp_path / "seed_dynamic.yaml"
    spec.write_text((SPECS / "seed_dynamic.yaml").read_text())
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["report", str(spec), "--train", "--out-dir",
                                    str(out)]).exit_code == 0
    folder = out / "seed_dynamic"
    run = json.loads((folder / "run.json").read_text())
    run["path"][1]["predicate"] = INJECTED
    run["static"]["passes"][0]["name"] = INJECTED
    run["static"]["passes"][0]["notes"] = [INJECTED]
    (folder / "run.json").write_text(json.dumps(run))
    train_csv = folder / "runs" / "1" / "train.csv"
    csv_text = train_csv.read_text()
    train_csv.write_text(csv_text.replace("loss", '"' + INJECTED.replace('"', '""') + '"', 1))
    result = CliRunner().invoke(app, ["report", str(spec), "--train", "--out-dir", str(out)])
    assert result.exit_code == 0, result.stderr
    visit = open_page((folder / "report.html").as_uri(),
                      expression="document.querySelectorAll('img, object, form').length")
    assert visit.value == 0
    assert visit.problems() == []  # nothing ran, nothing was even refused
