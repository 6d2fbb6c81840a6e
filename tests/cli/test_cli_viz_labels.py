"""`viz` draws whatever text its labels hold: a plugin op whose name and label hold `<`, `>`,
`"`, `{`, `|` and end in a backslash, a spec folder of such a name (in the loop's cluster label),
a second spec file and a `--diff` param value of such names (in the legend) all render to PNG
(exit 0), and the SVG of each written DOT file shows the text as it was written."""

import html
import re

import pytest
from typer.testing import CliRunner

from cli.app import app
from graphcore import registry
from graphcore.commands.viz.draw import find_renderer, render_svg

pytestmark = pytest.mark.skipif(find_renderer() is None, reason="no Graphviz renderer")
runner = CliRunner()

OP_NAME = 'ho<s>t"i{l|e}\\'
OP_LABEL = 'a<b>"c{d|e}\\'
FOLDER = 'we"i<r>d{|}\\'
PARAM = 'q"<{|}>\\'

PLUGIN = f'''
import graphcore


@graphcore.register_op
class Hostile(graphcore.FunctionNode):
    name = {OP_NAME!r}
    label = {OP_LABEL!r}
    elementwise = True
    arity = 1

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        return 2 * grad_outputs[0],
'''

SPEC = """graphtool: 1
name: hostile
params: {tag: plain}
inputs:
  x: {random: normal, shape: [2, 3]}
graph:
  - repeat: 2
    body: ['OP']
  - if: mean(_) > 0
    then: [relu]
    else: [sigmoid]
loss: {op: sum}
""".replace("OP", OP_NAME.replace("'", "''"))


@pytest.fixture
def folder(tmp_path):
    folder = tmp_path / FOLDER
    folder.mkdir()
    (folder / "ops.py").write_text(PLUGIN)
    (folder / "s.yaml").write_text(SPEC)
    (folder / "other{|}<>\\.yaml").write_text(SPEC)
    yield folder
    registry._ops.pop(OP_NAME, None)


def svg_texts(dot_file):
    svg = render_svg(dot_file.read_text(encoding="utf-8"))
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def viz(folder, *args):
    result = runner.invoke(app, ["viz", str(folder / "s.yaml"), "--plugin",
                                 str(folder / "ops.py"), "--out-dir", str(folder / "out"),
                                 "--stage", "all", *args])
    assert result.exit_code == 0, result.stderr
    return folder / "out" / "hostile"


def test_hostile_op_names_labels_and_folder_names_are_drawn_as_written(folder):
    out = viz(folder)
    for name in ("graph", "ir", "ir.optimized"):
        assert (out / f"{name}.png").read_bytes().startswith(b"\x89PNG")
    executed = svg_texts(out / "graph.dot")
    assert executed.count(OP_LABEL) == 2  # one per iteration
    assert f"repeat at {folder / 's.yaml'}:7:5" in executed
    for name in ("ir", "ir.optimized"):
        texts = svg_texts(out / f"{name}.dot")
        assert f"{OP_NAME} : f32[2,3]" in texts
        assert any(t.startswith("guard mean(_) > 0 is ") for t in texts)


def test_hostile_names_in_the_diff_legend_are_drawn_as_written(folder):
    other = folder / "other{|}<>\\.yaml"
    out = viz(folder, "--diff", str(other), "--diff", f"params.tag={PARAM}")
    for name in ("graph", "ir", "ir.optimized"):
        assert (out / f"{name}.diff.png").read_bytes().startswith(b"\x89PNG")
        texts = svg_texts(out / f"{name}.diff.dot")
        assert f"only in {other.name} params.tag={PARAM}" in texts
    assert svg_texts(out / "graph.diff.dot").count(OP_LABEL) >= 2
