"""graph_to_dot: one DOT node ``n<id>`` per IR node labelled with its text form (no ``%id =``,
no operands), edges from inputs, backward nodes filled apart from forward ones, fused nodes
with their program, guards as diamonds; deterministic, and rendered by graphviz-pure."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphcore import spec as gspec
from graphcore.spec_static.runner import StaticSpecRunner
from graphcore.static.drawing import BACKWARD_FILL, FORWARD_FILL, graph_to_dot, node_label
from graphcore.static.ir import Graph, Node, verify

SPECS = Path(__file__).resolve().parents[2] / "specs"
NODE = re.compile(r'^n(\d+) \[label="((?:[^"\\]|\\.)*)",(.*)\];$')
EDGE = re.compile(r"^n(\d+) -> n(\d+)( \[.*\])?;$")


def small_graph() -> Graph:
    nodes = [
        Node(0, "input", shape=(2, 3), name="x"),
        Node(1, "param", shape=(3,), name="w"),
        Node(2, "add", (0, 1), shape=(2, 3)),
        Node(3, "relu", (2,), shape=(2, 3)),
        Node(4, "guard", (0,), attrs={"predicate": "mean(x) > 0", "expect": True,
                                      "names": ["x"], "at": "s.yaml:3:4"}, shape=None),
        Node(5, "sum", (3,), attrs={"axis": None, "keepdims": False}, shape=()),
        Node(6, "const", shape=()),
        Node(7, "vjp", (5, 6), attrs={"index": 0, "of": "sum"}, shape=(2, 3)),
        Node(8, "fused", (7, 3), attrs={"program": (("vjp:relu", {}, (0, 1)),
                                                    ("scale", {"by": 2.0}, (-1,)))},
             shape=(2, 3)),
    ]
    graph = Graph(nodes, {"loss": 5, "grad/x": 8}, {6: np.array(1.0, np.float32)}, "small")
    return verify(graph)


def parse(dot: str):
    nodes, edges = {}, []
    for line in dot.splitlines():
        if m := NODE.match(line):
            nodes[int(m[1])] = (m[2].replace("\\n", "\n"), m[3])
        elif m := EDGE.match(line):
            edges.append((int(m[1]), int(m[2]), m[3] or ""))
    return nodes, edges


def test_labels_shapes_edges_and_styles_of_every_kind_of_node():
    dot = graph_to_dot(small_graph())
    assert dot.startswith('digraph "ir small" {\nrankdir=TB;\n') and dot.endswith("}\n")
    nodes, edges = parse(dot)
    assert sorted(nodes) == list(range(9))
    labels = {i: label for i, (label, _) in nodes.items()}
    assert labels[0] == "input x : f32[2,3]"
    assert labels[1] == "param w : f32[3]"
    assert labels[2] == "add : f32[2,3]"
    assert labels[3] == "relu : f32[2,3]"
    assert labels[4] == "guard mean(x) > 0 is True\nat s.yaml:3:4"
    assert labels[5] == "sum[axis=None, keepdims=False] : f32[]\n-> loss"
    assert labels[6] == "const 1.0 : f32[]"
    assert labels[7] == "vjp[index=0, of=sum] : f32[2,3]"
    assert labels[8] == "fused : f32[2,3]\nvjp:relu(in0, in1)\nscale[by=2.0](_)\n-> grad/x"
    style = {i: attrs for i, (_, attrs) in nodes.items()}
    assert 'shape="ellipse"' in style[0] and 'shape="ellipse"' in style[6]
    assert 'shape="diamond"' in style[4]
    assert 'shape="box"' in style[3] and 'peripheries="2"' in style[8]
    assert f'fillcolor="{FORWARD_FILL}"' in style[3] and f'fillcolor="{FORWARD_FILL}"' in style[5]
    assert f'fillcolor="{BACKWARD_FILL}"' in style[7] and f'fillcolor="{BACKWARD_FILL}"' in style[8]
    assert 'penwidth="2"' in style[5] and 'penwidth="2"' not in style[3]
    assert [(a, b) for a, b, _ in edges] == [(0, 2), (1, 2), (2, 3), (0, 4), (3, 5), (5, 7),
                                             (6, 7), (7, 8), (3, 8)]
    attrs = {(a, b): extra for a, b, extra in edges}
    assert 'style="dashed"' in attrs[5, 7] and attrs[6, 7] == ""  # vjp -> its forward node
    assert attrs[7, 8] == ' [headlabel="in0"]' and attrs[3, 8] == ' [headlabel="in1"]'


def test_node_label_is_the_text_form_without_id_and_operands():
    for node in small_graph().nodes:
        if node.op in ("guard", "fused", "const"):
            continue
        text = node.text().split(" = ", 1)[1]
        assert node_label(node) == re.sub(r"\(%[^)]*\)", "", text)


def test_quotes_and_backslashes_are_escaped():
    graph = small_graph()
    graph.nodes[4] = graph.nodes[4].with_(attrs={**graph.nodes[4].attrs,
                                                 "predicate": 'name == "a\\b"'})
    line = next(line for line in graph_to_dot(graph).splitlines() if line.startswith("n4 "))
    assert 'label="guard name == \\"a\\\\b\\" is True\\nat s.yaml:3:4"' in line


def traced(name: str):
    s = gspec.load_spec_file(SPECS / f"{name}.yaml")
    runner = StaticSpecRunner(s, gspec.build_model(s, s.seed))
    runner.run(gspec.make_inputs(s.inputs, s.seed, s.folder), seed=s.seed)
    return runner.last


def test_a_spec_ir_draws_forward_and_backward_and_is_deterministic():
    variant = traced("seed_static")
    dot = graph_to_dot(variant.trace.graph)
    assert dot == graph_to_dot(traced("seed_static").trace.graph)  # byte-identical
    nodes, edges = parse(dot)
    assert sorted(nodes) == [n.id for n in variant.trace.graph.nodes]
    assert len(edges) == sum(len(n.inputs) for n in variant.trace.graph.nodes)
    labels = {label.split("\n")[0]: attrs for label, attrs in nodes.values()}
    assert "relu : f32[3,5]" in labels and "param l1/W : f32[5,4]" in labels
    assert "input x : f32[3,4]" in labels
    assert f'fillcolor="{FORWARD_FILL}"' in labels["relu : f32[3,5]"]
    assert f'fillcolor="{BACKWARD_FILL}"' in labels["vjp[index=0, of=relu] : f32[3,5]"]
    optimized = graph_to_dot(variant.plan.graph)
    assert 'label="linear_act[activation=relu] : f32[3,5]"' in optimized
    assert "relu : f32[3,5]" not in optimized.replace("vjp[index=0, of=relu]", "")


def test_guards_are_diamonds_and_fused_programs_are_listed():
    guards = [line for line in graph_to_dot(traced("adaptive_depth").plan.graph).splitlines()
              if 'shape="diamond"' in line]
    assert guards and all("guard norm(_) > 2.0 is " in g and "adaptive_depth.yaml:" in g
                          for g in guards)
    fused = [line for line in graph_to_dot(traced("rnn_sequences").plan.graph).splitlines()
             if line.startswith("n") and "fused : " in line]
    # each fused node lists its program: the summed weight gradients, the carry's masked ones
    assert any("\\nadd(in0, in1)\\nadd(_, in2)" in line for line in fused)
    assert any("\\nmul(in0, in1)\\nvjp:tanh(_, in2)" in line for line in fused)
    assert all(line.split('"')[1].count("\\n") >= 2 for line in fused)  # two or more


def _graphviz_pure() -> str | None:
    return shutil.which("graphviz-pure") or shutil.which(
        "graphviz-pure", path=str(Path(sys.executable).parent))


@pytest.mark.skipif(_graphviz_pure() is None, reason="graphviz-pure is not installed")
@pytest.mark.parametrize("which", ["small", "adaptive_depth"])
def test_graphviz_pure_renders_it(which, tmp_path):
    graph = small_graph() if which == "small" else traced(which).plan.graph
    path = tmp_path / "ir.dot"
    path.write_text(graph_to_dot(graph, rankdir="LR"))
    done = subprocess.run([_graphviz_pure(), "-Tpng", str(path), "-o", str(tmp_path / "ir.png")],
                          capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert (tmp_path / "ir.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
