"""Long loops stay legible: `viz` draws a loop of more than 3 iterations as its first
iteration plus one node standing for the rest (named by their range and count), with the edges
of the carried state and the loop's result ending there; `--expand` draws every iteration;
short loops are drawn in full either way."""

import re
from pathlib import Path

from typer.testing import CliRunner

from cli.app import app
from graphcore.commands.viz.diff import parse_dot
from graphcore.commands.viz.draw import draw_spec, render_png
from graphcore.spec import load_spec_file

SPECS = Path(__file__).resolve().parents[2] / "specs"
runner = CliRunner()

LONG_LOOP = """\
graphtool: 1
name: long_loop
inputs:
  x: {random: normal, shape: [2, 3]}
graph:
  - repeat: 6
    body: [tanh]
  - sum
"""


def dot_of(path, *args):
    result = runner.invoke(app, ["viz", str(path), "-o", "-", *args])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_a_long_loop_is_its_first_iteration_and_one_node_for_the_rest(tmp_path):
    spec = tmp_path / "long.yaml"
    spec.write_text(LONG_LOOP)
    collapsed, expanded = dot_of(spec), dot_of(spec, "--expand")
    assert re.search(r'label="repeat at [^"]*:6:5 \(6 iterations\)"', collapsed)
    assert 'label="i = 0"' in collapsed and 'label="i = 1"' not in collapsed
    assert 'rest0 [label="i = 1 … 5\\n5 more iterations (--expand draws them)"' in collapsed
    graph = parse_dot(collapsed)
    labels = {name: a.get("label") for name, a in graph.nodes.items()}
    assert sorted(labels.values()).count("Tanh") == 1
    # the first iteration's result feeds the rest, and the rest feed the sum
    into_rest = {labels[h] for h, t in graph.edges if t == "rest0"}
    out_of_rest = {labels[t] for h, t in graph.edges if h == "rest0"}
    assert into_rest == {"(2, 3), float32"} and out_of_rest == {"Sum"}
    assert len(graph.edges) == len(set(graph.edges))  # no repeated edges
    assert all(f'label="i = {i}"' in expanded for i in range(6))
    assert "rest0" not in expanded and sorted(
        a.get("label") for a in parse_dot(expanded).nodes.values()).count("Tanh") == 6


def test_the_rnn_over_seven_steps_draws_one_step_and_renders_smaller(tmp_path):
    collapsed = dot_of(SPECS / "rnn_sequences.yaml")
    assert "(7 iterations)" in collapsed and 'label="t = 0"' in collapsed
    assert 'label="t = 1"' not in collapsed and "t = 1 … 6" in collapsed
    assert collapsed == dot_of(SPECS / "rnn_sequences.yaml")  # byte-identical across runs
    spec = load_spec_file(SPECS / "rnn_sequences.yaml")
    small = render_png(draw_spec(spec, expand=False).dot)
    large = render_png(draw_spec(spec).dot)
    height = lambda png: int.from_bytes(png[20:24], "big")  # noqa: E731 - IHDR height
    assert height(small) * 2 < height(large)


def test_short_loops_are_drawn_in_full():
    assert dot_of(SPECS / "param_depth.yaml") == dot_of(SPECS / "param_depth.yaml", "--expand")


def test_a_layer_of_many_nodes_is_one_cluster_with_its_weights():
    dot = dot_of(SPECS / "transformer_block.yaml")
    start = dot.index('label="attention (multi_head_attention)"')
    cluster = dot[start:dot.index("}", start)]
    for name in ("W_q", "W_k", "W_v", "W_o", "b_q"):
        assert f'label="attention/{name}: ' in cluster
    assert cluster.count('label="LinearFunction"') == 4 and 'label="Attention"' in cluster
    assert 'label="ff1/W' not in cluster and dot.count("subgraph cluster_") == 1
    # a linear layer (one node) stays Chainer's plain dump: no cluster at all
    assert "cluster" not in dot_of(SPECS / "seed_static.yaml")
