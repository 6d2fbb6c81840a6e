"""`graphtool viz`: Chainer-style DOT of the executed graph (parameters named by path, loop
bodies as clusters), byte-identical across runs; PNG through a renderer or exit 69; -o -
prints the DOT; a bad spec exits 65, a missing one 66."""

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.app import app
from graphcore.commands.viz import draw as drawing
from graphcore.spec import load_spec_file

SPECS = Path(__file__).resolve().parents[2] / "specs"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
runner = CliRunner()

NESTED_SPEC = """\
graphtool: 1
name: nested
inputs:
  x: {random: normal, shape: [2, 3]}
graph:
  - repeat: 2
    body:
      - repeat: 2
        body: [tanh]
  - sum
"""


def viz(*args):
    return runner.invoke(app, ["viz", *map(str, args)])


def dot_of(spec, *args):
    """The DOT ``-o -`` prints for ``spec`` (a file under specs/ or a path)."""
    path = spec if isinstance(spec, Path) else SPECS / spec
    result = viz(path, "-o", "-", *args)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_dot_names_parameters_and_inputs_and_writes_graph_dot(tmp_path):
    result = viz(SPECS / "seed_static.yaml", "--format", "dot", "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    path = tmp_path / "seed_static" / "graph.dot"
    assert result.stderr.strip() == f"wrote {path}"
    dot = path.read_text()
    assert dot.startswith("digraph graphname{rankdir=TB;") and dot.endswith("}\n")
    for label in ("l1/W: (5, 4), float32", "l1/b: (5), float32", "l2/W: (2, 5), float32",
                  "x: (3, 4), float32", "LinearFunction", "ReLU", "Sum"):
        assert f'label="{label}"' in dot
    assert "cluster" not in dot
    assert list(tmp_path.rglob("*")) == [tmp_path / "seed_static", path]  # no temp files left


def test_without_loops_the_dot_is_chainers_dump():
    s = load_spec_file(SPECS / "seed_static.yaml")
    d = drawing.draw_spec(s, rankdir="LR")
    assert d.clusters == 0 and d.examples == 1
    assert d.dot.startswith("digraph graphname{rankdir=LR;")
    assert d.dot.count(" -> ") == 12 and d.nodes == 13
    assert 'label="W: ' not in d.dot  # every parameter is named by its path


@pytest.mark.parametrize("name", ["seed_static", "param_depth", "rnn_sequences"])
def test_same_spec_seed_and_inputs_give_byte_identical_dot(name, tmp_path):
    first = dot_of(f"{name}.yaml", "--seed", "3")
    assert first == dot_of(f"{name}.yaml", "--seed", "3")
    viz(SPECS / f"{name}.yaml", "--seed", "3", "--format", "dot", "--out-dir", tmp_path)
    assert (tmp_path / name / "graph.dot").read_text() == first


def test_set_picks_the_branch_that_is_drawn():
    assert 'label="ReLU"' in dot_of("seed_dynamic.yaml")
    dot = dot_of("seed_dynamic.yaml", "--set", "params.apply_relu=false")
    assert 'label="Sigmoid"' in dot and "ReLU" not in dot


def test_input_picks_the_data_and_so_the_path(tmp_path):
    import numpy as np

    negative = tmp_path / "x.npy"
    np.save(negative, -np.ones(5, np.float32))
    dot = dot_of("seed_dynamic.yaml", "--set", "params.apply_relu=false",
                 "--input", f"x={negative}")
    assert 'label="Prod"' in dot and 'label="x: (5), float32"' in dot


def test_output_dash_prints_dot_and_writes_nothing(tmp_path):
    result = viz(SPECS / "seed_static.yaml", "-o", "-", "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("digraph graphname{") and result.stdout.endswith("}\n")
    assert result.stderr == ""
    assert not any(tmp_path.iterdir())


def test_rankdir_lr():
    assert dot_of("seed_static.yaml", "--rankdir", "LR").startswith(
        "digraph graphname{rankdir=LR;")


def test_repeat_bodies_are_clusters_per_iteration():
    dot = dot_of("param_depth.yaml")
    assert dot.count("subgraph cluster_") == 4  # the repeat, then its three iterations
    assert re.search(r'subgraph cluster_0\{label="repeat at [^"]*param_depth\.yaml:\d+:\d+";',
                     dot)
    for i in range(3):
        assert f'label="i = {i}";' in dot
    # Shared leaves (inputs, parameters) stay outside; each iteration holds its own ops.
    outside = dot[:dot.index("subgraph")]
    assert 'label="x: (4, 8), float32"' in outside and 'label="block_0/W: (8, 8)' in outside
    first_iteration = dot[dot.index('label="i = 0"'):dot.index('label="i = 1"')]
    assert first_iteration.count('label="LinearFunction"') == 1
    assert first_iteration.count('label="Tanh"') == 1


def test_for_each_bodies_are_clusters_and_the_last_example_is_drawn():
    result = viz(SPECS / "rnn_sequences.yaml", "-o", "-", "--expand")  # 7 steps: unrolled
    assert result.exit_code == 0, result.stderr
    dot = result.stdout
    assert 'label="for_each at ' in dot
    assert 'label="t = 6"' in dot and 'label="t = 7"' not in dot  # lengths 5, 3, 7: the last
    assert "drew example 3 of 3" in result.stderr
    outside = dot[:dot.index("subgraph")]
    assert 'label="Stack"' in outside  # collected after the loop
    step = dot[dot.index('label="t = 0"'):dot.index('label="t = 1"')]
    assert 'label="GetItem"' in step and 'label="Concat"' in step  # x_t = s[t] is in step t


def test_nested_loops_nest_clusters(tmp_path):
    path = tmp_path / "nested.yaml"
    path.write_text(NESTED_SPEC)
    dot = dot_of(path)
    # The outer loop, its 2 iterations, an inner loop in each, 2 iterations in each of those.
    assert dot.count("subgraph cluster_") == 1 + 2 + 2 + 4
    outer = re.findall(r'label="repeat at [^"]*nested\.yaml:6:5"', dot)
    inner = re.findall(r'label="repeat at [^"]*nested\.yaml:8:9"', dot)
    assert len(outer) == 1 and len(inner) == 2
    assert dot.count('label="Tanh"') == 4
    assert _balanced(dot)
    if drawing.find_renderer() is not None:  # the renderer accepts nested clusters
        assert drawing.render_png(dot).startswith(PNG_SIGNATURE)


def test_png_written_via_graphviz_pure(tmp_path, monkeypatch):
    real_which = drawing.shutil.which
    monkeypatch.setattr(drawing.shutil, "which",
                        lambda name, **kw: None if name == "dot" else real_which(name, **kw))
    command = drawing.find_renderer()
    if command is None:
        pytest.skip("graphviz-pure is not installed")
    assert "graphviz-pure" in Path(command[0]).name
    result = viz(SPECS / "param_depth.yaml", "--out-dir", tmp_path)  # clusters render too
    assert result.exit_code == 0, result.stderr
    folder = tmp_path / "param_depth"
    assert (folder / "graph.png").read_bytes().startswith(PNG_SIGNATURE)
    assert (folder / "graph.dot").is_file()
    assert result.stderr.splitlines() == [f"wrote {folder / 'graph.dot'}",
                                          f"wrote {folder / 'graph.png'}"]
    explicit = tmp_path / "drawn.png"
    result = viz(SPECS / "seed_static.yaml", "-o", explicit, "--out-dir", tmp_path / "none")
    assert result.exit_code == 0, result.stderr
    assert explicit.read_bytes().startswith(PNG_SIGNATURE)
    assert not (tmp_path / "none").exists()


def test_no_renderer_exits_69_with_a_hint_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(drawing, "find_renderer", lambda: None)
    result = viz(SPECS / "seed_static.yaml", "--out-dir", tmp_path)
    assert result.exit_code == 69
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: ") and "graphviz-pure" in lines[0]
    assert lines[1].startswith("hint: ") and len(lines) == 2
    assert "Traceback" not in result.output
    assert not (tmp_path / "seed_static" / "graph.dot").exists()
    # DOT alone needs no renderer.
    assert viz(SPECS / "seed_static.yaml", "--format", "dot", "--out-dir", tmp_path
               ).exit_code == 0


def test_no_renderer_found_anywhere(monkeypatch, tmp_path):
    monkeypatch.setattr(drawing.shutil, "which", lambda name, **kw: None)
    assert drawing.find_renderer() is None


def test_bad_spec_exits_65(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("graphtool: 1\ngraph: [{op: nosuch_op}]\n")
    result = viz(bad, "-o", "-")
    assert result.exit_code == 65
    assert f"{bad}:2:14: error: unknown op 'nosuch_op'" in result.stderr
    assert result.stdout == ""


def test_missing_spec_exits_66(tmp_path):
    result = viz(tmp_path / "missing.yaml")
    assert result.exit_code == 66
    assert "missing.yaml" in result.stderr and "Traceback" not in result.output


def test_unknown_format_is_a_usage_error(tmp_path):
    result = viz(SPECS / "seed_static.yaml", "--format", "dot,svg", "--out-dir", tmp_path)
    assert result.exit_code == 2
    assert "svg" in result.stderr and not any(tmp_path.iterdir())


def _balanced(dot: str) -> bool:
    depth = 0
    for ch in re.sub(r'"(\\.|[^"\\])*"', "", dot):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0
