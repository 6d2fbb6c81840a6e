"""One self-contained HTML page about a spec: its source, its graphs, the path it took, what
the passes removed, how long it took, how training went.

``render_report(ReportData(...))`` returns the page as text. Everything is inline (CSS, SVG,
one small script for pan, zoom and the links between the spec's lines and the graphs' nodes),
so the page works from a file URL with no network. The data comes from the artifacts the other
commands write, as ``report_artifacts`` reads and checks them: ``run.json`` (path, passes),
``ir.txt``/``ir.optimized.txt``, ``bench.json`` (the timing chart), ``train.csv`` (any numeric
columns besides ``step``, one curve each), and SVG drawings of the graphs. Nothing here runs a
spec, reads or writes a file, or prints.

Every value from an artifact, the spec or a file name reaches the page through ``text``
(markup characters escaped, in text and attribute values alike) or ``number`` (a number checked
to be one, then formatted); nothing else is interpolated but this module's own constants.
The page's one script is allowed by its SHA-256 in the Content-Security-Policy, computed as the
page is written, so no other script can run: not an inline event handler, not a
``javascript:`` link, not a ``<script>`` that escaping missed. The policy also forbids every
fetch, form submission, ``<base>`` and plugin.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MODE_COLOURS = {"dynamic": "#D55E00", "static": "#0072B2"}
# Nothing leaves the page: a browser refuses (and reports) any fetch, even one a future edit
# adds by mistake, and runs no script but the page's own (``script_hash_source``).
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src {script}; img-src data:; "
       "form-action 'none'; base-uri 'none'; object-src 'none'")
MAX_VIEWPORT = 560  # px
CURVE_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")


@dataclass(frozen=True)
class GraphView:
    """One drawing in the page: its heading, its SVG, and which spec line made each node."""

    title: str
    svg: str
    note: str = ""
    node_lines: Mapping[str, int] = field(default_factory=dict)  # DOT node id -> spec line


@dataclass(frozen=True)
class ReportData:
    name: str
    spec_file: str
    source: str  # the spec's text
    graphs: Sequence[GraphView] = ()
    run: Mapping[str, Any] | None = None  # run.json
    ir_before: str | None = None
    ir_after: str | None = None
    bench: Mapping[str, Any] | None = None  # bench.json
    train: Mapping[str, Sequence[float]] | None = None  # train.csv's numeric columns
    notes: Sequence[str] = ()  # what the page could not show, and why


def text(value: object) -> str:
    """The one way a value reaches the page as text: ``str(value)`` with ``&``, ``<``, ``>``
    and both quotes escaped (safe in element content and in quoted attribute values), lone
    surrogates (which no UTF-8 page can hold) as U+FFFD."""
    return html.escape(_SURROGATE.sub("\ufffd", str(value)), quote=True)


def number(value: object, spec: str = "g") -> str:
    """A number formatted by ``spec``; anything but an int or a finite float (a string in a
    number's place) raises ``TypeError``: the artifacts are checked before they get here."""
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            isinstance(value, float) and not math.isfinite(value)):
        raise TypeError(f"not a finite number: {value!r}")
    return format(value, spec)


_SURROGATE = re.compile("[\ud800-\udfff]")


def script_hash_source(script: str) -> str:
    """The CSP source allowing exactly the inline ``<script>`` whose text is ``script``."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def render_report(data: ReportData) -> str:
    """The page's HTML text."""
    step_lines = sorted({line for g in data.graphs for line in g.node_lines.values()}
                        | set(_path_lines(data.run)))
    sections = [
        _section("spec", f"Spec <code>{text(data.spec_file)}</code>",
                 _source(data.source, step_lines)),
        *(_section(f"graph{k}", text(g.title), _graph(k, g)) for k, g in enumerate(data.graphs)),
        _section("path", "Path taken", _path(data.run)),
        _section("passes", "What each pass removed", _passes(data.run, data.ir_before,
                                                             data.ir_after)),
        _section("timing", "Dynamic versus static, per batch size", _timing(data.bench)),
        _section("training", "Training", _training(data.train)),
    ]
    notes = "".join(f"<li>{text(n)}</li>" for n in data.notes)
    nav = "".join(f'<a href="#{anchor}">{text(title)}</a>' for anchor, title in
                  [("spec", "spec"), *((f"graph{k}", g.title) for k, g in
                                       enumerate(data.graphs)),
                   ("path", "path"), ("passes", "passes"), ("timing", "timing"),
                   ("training", "training")])
    links = {str(k): {node: line for node, line in g.node_lines.items()}
             for k, g in enumerate(data.graphs)}
    policy = CSP.format(script=script_hash_source(_SCRIPT))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        f"<title>{text(data.name)} — graphtool report</title>\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<header><h1>{text(data.name)}</h1><nav>{nav}</nav></header>\n<main>\n"
        + (f'<ul class="notes">{notes}</ul>\n' if notes else "")
        + "\n".join(sections)
        + "\n</main>\n"
        f'<script type="application/json" id="node-lines">{_json_in_html(links)}</script>\n'
        f"<script>{_SCRIPT}</script>\n</body>\n</html>\n")


def _json_in_html(value: Any) -> str:
    """JSON for a ``<script type="application/json">`` block: no ``<``, ``>`` or ``&`` in it
    (written as JSON escapes), so no text can end the block or open a comment in it."""
    return (json.dumps(value, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026"))


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{title}</h2>\n{body}\n</section>'


# --- the spec's source --------------------------------------------------------------------
_YAML_TOKEN = re.compile(
    r"(?P<comment>#.*$)|(?P<key>[A-Za-z_][\w.]*(?=\s*:(\s|$)))|(?P<string>\"(?:[^\"\\]|\\.)*\"|"
    r"'[^']*')|(?P<number>(?<![\w.])-?\d+(\.\d+)?([eE][-+]?\d+)?(?![\w.]))|"
    r"(?P<word>\b(true|false|null|yes|no)\b)")


def _highlight(line: str) -> str:
    out, last = [], 0
    for match in _YAML_TOKEN.finditer(line):
        kind = match.lastgroup
        if kind == "comment" and _inside_quotes(line, match.start()):
            continue
        out.append(text(line[last:match.start()]))
        css = {"comment": "c", "key": "k", "string": "s", "number": "n", "word": "w"}[kind]
        out.append(f'<span class="{css}">{text(match.group())}</span>')
        last = match.end()
    out.append(text(line[last:]))
    return "".join(out)


def _inside_quotes(line: str, position: int) -> bool:
    before = line[:position]
    return before.count('"') % 2 == 1 or before.count("'") % 2 == 1


def _source(source: str, step_lines: Sequence[int]) -> str:
    steps = set(step_lines)
    rows = []
    for line_number, line in enumerate(source.splitlines(), 1):
        css = "line step" if line_number in steps else "line"
        title = ' title="show the nodes this step made"' if line_number in steps else ""
        shown = number(line_number, "d")
        rows.append(f'<span class="{css}" id="L{shown}" data-line="{shown}"{title}>'
                    f'<span class="ln">{shown}</span>{_highlight(line)}</span>')
    return f'<pre class="source">{"".join(rows)}</pre>'


# --- graphs -------------------------------------------------------------------------------
def _graph(index: int, view: GraphView) -> str:
    note = f"<p>{text(view.note)}</p>" if view.note else ""
    if not view.svg:
        return note or "<p>Not drawn.</p>"
    svg = _inline_svg(view.svg, f"g{index}_")
    return (f'{note}<div class="viewer" data-graph="{index}">'
            '<div class="tools"><button type="button" data-zoom="in">+</button>'
            '<button type="button" data-zoom="out">−</button>'
            '<button type="button" data-zoom="fit">fit</button>'
            '<span>drag to pan, wheel to zoom</span></div>'
            f'<div class="viewport" style="height:{_viewport_height(svg)}px">'
            f'<div class="canvas">{svg}</div></div></div>')


def _viewport_height(svg: str) -> int:
    """Room for the drawing at its natural size, up to a screenful (then pan and zoom)."""
    found = re.search(r'<svg[^>]*\bheight="([\d.]+)pt"', svg)
    natural = float(found.group(1)) * 4 / 3 if found else MAX_VIEWPORT
    return int(min(MAX_VIEWPORT, max(160, natural + 16)))


def _inline_svg(svg: str, prefix: str) -> str:
    """The renderer's SVG as an element inside HTML: no XML prolog or DOCTYPE, ids prefixed
    so several drawings in one page stay unique."""
    start = svg.find("<svg")
    if start < 0:
        raise ValueError("not SVG: no <svg> element")
    body = re.sub(r"<!--.*?-->", "", svg[start:], flags=re.S)
    body = re.sub(r'\bid="([^"]*)"', lambda m: f'id="{prefix}{m.group(1)}"', body)
    body = re.sub(r'(xlink:href|href)="#([^"]*)"',
                  lambda m: f'{m.group(1)}="#{prefix}{m.group(2)}"', body)
    return body.strip()


# --- path and passes ----------------------------------------------------------------------
def _path_lines(run: Mapping[str, Any] | None) -> list[int]:
    return [line for entry in (run or {}).get("path", []) or []
            if (line := _line_of(entry.get("at"))) is not None]


_AT = re.compile(r".*:([0-9]{1,9}):[0-9]{1,9}", re.S)


def _line_of(at: Any) -> int | None:
    """The line number in ``"file:line:col"``."""
    found = _AT.fullmatch(at) if isinstance(at, str) else None
    return int(found.group(1)) if found else None


def _path(run: Mapping[str, Any] | None) -> str:
    if not run:
        return "<p>No run.json.</p>"
    entries = run.get("path") or []
    if not entries:
        return "<p>This spec has no branch or loop: every run takes the same path.</p>"
    rows = []
    for entry in entries:
        line = _line_of(entry.get("at"))
        at = text(entry.get("at", ""))
        where = (f'<a href="#L{number(line, "d")}" data-line="{number(line, "d")}">{at}</a>'
                 if line else at)
        details = ", ".join(f"{text(k)}={text(v)}"
                            for k, v in entry.items() if k not in ("at", "kind"))
        rows.append(f"<tr><td>{where}</td><td>{text(entry.get('kind', ''))}</td>"
                    f"<td>{details}</td></tr>")
    return ("<table><thead><tr><th>at</th><th>step</th><th>taken</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _passes(run: Mapping[str, Any] | None, before: str | None, after: str | None) -> str:
    static = (run or {}).get("static")
    if not static:
        return "<p>No static-mode run (run.json has no <code>static</code> section).</p>"
    nodes = static.get("nodes") or {}
    rows = "".join(
        f"<tr><td>{text(p.get('name'))}</td><td>{_count(p.get('nodes_removed'), 0)}</td>"
        f"<td>{_count(p.get('bytes_saved'), 0)}</td>"
        f"<td>{text('; '.join(map(str, p.get('notes') or [])))}</td></tr>"
        for p in static.get("passes") or [])
    parts = [f"<p>IR nodes: {_count(nodes.get('traced'))} traced, "
             f"{_count(nodes.get('optimized'))} after the passes.</p>",
             "<table><thead><tr><th>pass</th><th>nodes removed</th><th>bytes saved</th>"
             f"<th>notes</th></tr></thead><tbody>{rows}</tbody></table>"]
    for title, ir in (("IR before the passes", before), ("IR after the passes", after)):
        if ir:
            parts.append(f"<details><summary>{title}</summary><pre>{text(ir)}</pre>"
                         "</details>")
    return "\n".join(parts)


def _count(value: object, missing: object = "?") -> str:
    """A count from run.json; what was not recorded as ``missing``."""
    return text(missing) if value is None else number(value, "d")


# --- charts -------------------------------------------------------------------------------
def _timing(bench: Mapping[str, Any] | None) -> str:
    if not bench:
        return "<p>No bench.json: run <code>graphtool report SPEC --bench</code>.</p>"
    modes = [m for m in MODE_COLOURS if any(r["mode"] == m for r in bench.get("results") or [])]
    results = [r for r in bench.get("results") or [] if r["mode"] in modes]
    if not results:
        return "<p>bench.json holds no timings.</p>"
    batches = sorted({r["batch"] for r in results})
    top = max(r["median_ms"] for r in results) or 1.0
    width, height, left, bottom = 120 + 110 * len(batches), 260, 60, 40
    bar = 80 / max(1, len(modes))
    parts = [f'<svg class="chart" width="{width}" height="{height}" role="img" '
             f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
             f'<text x="4" y="14" class="axis">median ms</text>']
    plot = height - bottom - 24
    parts.append(_axis(left, 24, plot, top, width - 10))
    for i, batch in enumerate(batches):
        x0 = left + 20 + 110 * i
        for j, mode in enumerate(modes):
            found = [r for r in results if r["batch"] == batch and r["mode"] == mode]
            if not found:
                continue
            value = found[0]["median_ms"]
            h = plot * value / top
            x = x0 + j * bar
            parts.append(f'<rect x="{x:.1f}" y="{24 + plot - h:.1f}" width="{bar - 4:.1f}" '
                         f'height="{h:.1f}" fill="{MODE_COLOURS[mode]}">'
                         f"<title>{mode}, batch {number(batch, 'd')}: {number(value)} ms"
                         "</title></rect>")
            parts.append(f'<text x="{x + (bar - 4) / 2:.1f}" y="{24 + plot - h - 3:.1f}" '
                         f'class="value">{number(value, ".3g")}</text>')
        parts.append(f'<text x="{x0 + 40:.1f}" y="{height - bottom + 16}" class="axis" '
                     f'text-anchor="middle">batch {number(batch, "d")}</text>')
    for j, mode in enumerate(modes):
        parts.append(f'<rect x="{left + 110 * j}" y="{height - 14}" width="10" height="10" '
                     f'fill="{MODE_COLOURS[mode]}"/><text x="{left + 110 * j + 14}" '
                     f'y="{height - 5}" class="axis">{mode}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _axis(left: int, top_y: int, plot: float, top: float, right: int) -> str:
    parts = [f'<line x1="{left}" y1="{top_y}" x2="{left}" y2="{top_y + plot}" class="grid"/>',
             f'<line x1="{left}" y1="{top_y + plot}" x2="{right}" y2="{top_y + plot}" '
             'class="grid"/>']
    for k in range(5):
        value = top * k / 4
        y = top_y + plot - plot * k / 4
        parts.append(f'<text x="{left - 4}" y="{y + 4:.1f}" class="axis" '
                     f'text-anchor="end">{value:.3g}</text>')
    return "".join(parts)


def _training(columns: Mapping[str, Sequence[float]] | None) -> str:
    if columns is None:
        return "<p>No train.csv: run <code>graphtool report SPEC --train</code>.</p>"
    rows = max((len(values) for values in columns.values()), default=0)
    steps = columns.get("step") or [float(i + 1) for i in range(rows)]
    charts = [_curve(name, list(zip(steps, values, strict=False)), k)
              for k, (name, values) in enumerate((c, v) for c, v in columns.items()
                                                 if c != "step")]
    return "".join(charts) or "<p>train.csv has no numeric columns.</p>"


def _curve(name: str, points: list[tuple[float, float]], index: int) -> str:
    finite = [(x, y) for x, y in points if math.isfinite(x) and math.isfinite(y)]
    if not finite:
        return f"<p>{text(name)}: no finite values.</p>"
    width, height, left, top_y = 520, 220, 60, 24
    plot_w, plot_h = width - left - 16, height - top_y - 36
    xs, ys = [x for x, _ in finite], [y for _, y in finite]
    x_lo, x_hi = min(xs), max(xs)
    y_lo, y_hi = min(0.0, min(ys)), max(ys)
    x_span, y_span = (x_hi - x_lo) or 1.0, (y_hi - y_lo) or 1.0
    if not math.isfinite(x_span) or not math.isfinite(y_span):
        return f"<p>{text(name)}: values too far apart to draw (over the float range).</p>"
    line = " ".join(f"{left + plot_w * (x - x_lo) / x_span:.1f},"
                    f"{top_y + plot_h - plot_h * (y - y_lo) / y_span:.1f}" for x, y in finite)
    colour = CURVE_COLOURS[index % len(CURVE_COLOURS)]
    return (f'<svg class="chart" width="{width}" height="{height}" role="img" '
            f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
            f'<text x="4" y="14" class="axis">{text(name)} (last {number(ys[-1], ".4g")})</text>'
            + _axis(left, top_y, plot_h, y_hi, width - 10)
            + f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>'
            f'<text x="{left + plot_w}" y="{height - 8}" class="axis" text-anchor="end">'
            f"step {number(x_hi)}</text></svg>")


# --- CSS and script -----------------------------------------------------------------------
_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#202020;
background:#FAFAFA}
header{background:#24292F;color:#FFF;padding:10px 20px;position:sticky;top:0;z-index:2}
header h1{margin:0;font-size:20px;display:inline-block;margin-right:20px}
nav a{color:#CFE3FF;margin-right:12px;font-size:14px}
main{padding:10px 20px;max-width:1400px}
section{background:#FFF;border:1px solid #DDD;border-radius:6px;padding:8px 16px;margin:14px 0}
h2{font-size:17px}
pre{font-size:13px;overflow:auto}
.source{background:#F6F8FA;padding:8px;border-radius:4px}
.source .line{display:block;padding-left:4px}
.source .ln{display:inline-block;width:3em;color:#999;user-select:none}
.source .step{cursor:pointer;border-left:3px solid #0072B2}
.source .step:hover,.source .hl{background:#FFF3C4}
.c{color:#6A737D;font-style:italic}.k{color:#005CC5;font-weight:600}.s{color:#032F62}
.n{color:#B31D28}.w{color:#6F42C1}
.viewer{border:1px solid #CCC;border-radius:4px}
.tools{padding:4px;border-bottom:1px solid #EEE;font-size:12px;color:#666}
.tools button{margin-right:4px;min-width:32px}
.viewport{overflow:hidden;position:relative;cursor:grab;background:#FFF}
.canvas{transform-origin:0 0;position:absolute;left:0;top:0}
.canvas svg{display:block}
g.node.hl polygon,g.node.hl ellipse,g.node.hl path{stroke:#F0B400;stroke-width:4px}
g.node.linked{cursor:pointer}
table{border-collapse:collapse;font-size:14px}
td,th{border:1px solid #DDD;padding:3px 8px;text-align:left}
.chart .axis{font-size:11px;fill:#444}.chart .value{font-size:10px;fill:#222;text-anchor:middle}
.chart .grid{stroke:#888;stroke-width:1}
.notes{background:#FFF8E1;border:1px solid #F0D080;padding:8px 24px}
"""

_SCRIPT = """
(function () {
  "use strict";
  var links = JSON.parse(document.getElementById("node-lines").textContent);
  function clearMarks() {
    document.querySelectorAll(".hl").forEach(function (e) { e.classList.remove("hl"); });
  }
  function nodesOfLine(line) {
    var found = [];
    document.querySelectorAll(".viewer").forEach(function (viewer) {
      var map = links[viewer.dataset.graph] || {};
      viewer.querySelectorAll("g.node").forEach(function (g) {
        var title = g.querySelector("title");
        if (title && map[title.textContent] === line) { found.push(g); }
      });
    });
    return found;
  }
  function markLine(line) {
    clearMarks();
    var row = document.getElementById("L" + line);
    if (row) { row.classList.add("hl"); }
    nodesOfLine(line).forEach(function (g) { g.classList.add("hl"); });
  }
  document.querySelectorAll(".source .step, a[data-line]").forEach(function (e) {
    e.addEventListener("click", function () { markLine(Number(e.dataset.line)); });
  });
  document.querySelectorAll(".viewer").forEach(function (viewer) {
    var map = links[viewer.dataset.graph] || {};
    viewer.querySelectorAll("g.node").forEach(function (g) {
      var title = g.querySelector("title");
      var line = title ? map[title.textContent] : undefined;
      if (line === undefined) { return; }
      g.classList.add("linked");
      g.addEventListener("click", function () {
        markLine(line);
        var row = document.getElementById("L" + line);
        if (row) { row.scrollIntoView({block: "center"}); }
      });
    });
    var port = viewer.querySelector(".viewport");
    var canvas = viewer.querySelector(".canvas");
    var svg = canvas.querySelector("svg");
    var view = {x: 0, y: 0, k: 1};
    function apply() {
      canvas.style.transform = "translate(" + view.x + "px," + view.y + "px) scale(" +
        view.k + ")";
    }
    function fit() {
      var w = svg.width.baseVal.value || svg.getBoundingClientRect().width;
      var h = svg.height.baseVal.value || svg.getBoundingClientRect().height;
      var k = Math.min(port.clientWidth / w, port.clientHeight / h, 1);
      view = {k: k, x: (port.clientWidth - w * k) / 2, y: Math.max(0, (port.clientHeight -
        h * k) / 2)};
      apply();
    }
    function zoom(factor, cx, cy) {
      view.x = cx - (cx - view.x) * factor;
      view.y = cy - (cy - view.y) * factor;
      view.k *= factor;
      apply();
    }
    port.addEventListener("wheel", function (event) {
      event.preventDefault();
      var box = port.getBoundingClientRect();
      zoom(event.deltaY < 0 ? 1.15 : 1 / 1.15, event.clientX - box.left,
           event.clientY - box.top);
    }, {passive: false});
    var drag = null;
    port.addEventListener("mousedown", function (event) {
      drag = {x: event.clientX - view.x, y: event.clientY - view.y};
    });
    window.addEventListener("mousemove", function (event) {
      if (!drag) { return; }
      view.x = event.clientX - drag.x;
      view.y = event.clientY - drag.y;
      apply();
    });
    window.addEventListener("mouseup", function () { drag = null; });
    viewer.querySelectorAll("button[data-zoom]").forEach(function (button) {
      button.addEventListener("click", function () {
        var mode = button.dataset.zoom;
        if (mode === "fit") { fit(); return; }
        zoom(mode === "in" ? 1.25 : 0.8, port.clientWidth / 2, port.clientHeight / 2);
      });
    });
    fit();
  });
}());
"""
