"""The report in a real browser: headless Chromium opens report.html from a file URL with the
network off, and finds no console error, no uncaught exception, no failed or outside request;
the script links spec lines to nodes and zooms; the screenshot shows the graphs drawn (their
node colours), not a blank page. A page that does fetch or fail is caught (the control).

Needs the Debian package ``chromium`` (``.ci/run`` installs it when missing)."""

import json
from pathlib import Path

import numpy as np
import pytest
from chromium_page import decode_png, find_chromium, open_page
from typer.testing import CliRunner

from cli.app import app

SPECS = Path(__file__).resolve().parents[2] / "specs"
pytestmark = pytest.mark.skipif(find_chromium() is None, reason="no chromium: install the "
                                "Debian package `chromium` (.ci/run does)")

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
