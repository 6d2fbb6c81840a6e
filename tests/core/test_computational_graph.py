"""``build_computational_graph`` draws what Chainer 7.8.1 drew, with stable node ids.

The reference DOT files (``tests/data/reference/chainer_dot/``, copied from ``../shared``)
were written by Chainer for the seed's two examples; their node ids are memory addresses and
their node/edge order is a set's order, so they are compared with ours as graphs: an
isomorphism that preserves every node's attributes (label, shape, styles, in Chainer's order)
and every edge.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import graphcore.functions as F
import graphcore.links as L
from graphcore import Chain, FunctionNode, Variable
from graphcore.computational_graph import ComputationalGraph, build_computational_graph

# Copied from ../shared/reference/chainer_dot/ (see tests/data/README.md).
SHARED = Path(__file__).resolve().parents[1] / "data"


# --- a strict parser for the DOT subset Chainer writes --------------------------------------
@dataclass
class Dot:
    rankdir: str
    nodes: dict[str, tuple[tuple[str, str], ...]]  # id -> attributes in written order
    edges: list[tuple[str, str]]

    def label(self, node_id: str) -> str:
        return dict(self.nodes[node_id])["label"]


HEADER = re.compile(r"digraph graphname\{rankdir=(TB|BT|LR|RL);(.*)\}", re.DOTALL)
NODE = re.compile(r'(\w+) \[((?:\w+="(?:[^"\\]|\\.)*")(?:,\w+="(?:[^"\\]|\\.)*")*)\];')
ATTRIBUTE = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
EDGE = re.compile(r"(\w+) -> (\w+);")


def parse_dot(text: str) -> Dot:
    """Parse Chainer's one-line DOT: every node statement, then every edge statement."""
    header = HEADER.fullmatch(text)
    assert header, f"not Chainer's DOT layout: {text[:60]!r}"
    body = header.group(2)
    dot = Dot(header.group(1), {}, [])
    position = 0
    while position < len(body):
        if node := NODE.match(body, position):
            assert not dot.edges, "node statement after an edge statement"
            assert node.group(1) not in dot.nodes, f"node {node.group(1)} written twice"
            dot.nodes[node.group(1)] = tuple(ATTRIBUTE.findall(node.group(2)))
            position = node.end()
        elif edge := EDGE.match(body, position):
            dot.edges.append((edge.group(1), edge.group(2)))
            position = edge.end()
        else:
            raise AssertionError(f"cannot parse DOT at {body[position:position + 60]!r}")
    for head, tail in dot.edges:
        assert head in dot.nodes and tail in dot.nodes, f"edge {head} -> {tail} to no node"
    return dot


def find_isomorphism(a: Dot, b: Dot) -> dict[str, str] | None:
    """A bijection of ``a``'s nodes onto ``b``'s that keeps attributes and edges, or None."""
    a_edges, b_edges = set(a.edges), set(b.edges)
    order = list(a.nodes)
    mapping: dict[str, str] = {}

    def consistent(n: str, m: str) -> bool:
        return all(((n, p) in a_edges) == ((m, q) in b_edges)
                   and ((p, n) in a_edges) == ((q, m) in b_edges) for p, q in mapping.items())

    def extend() -> bool:
        if len(mapping) == len(order):
            return True
        n = order[len(mapping)]
        for m in b.nodes:
            if m not in mapping.values() and b.nodes[m] == a.nodes[n] and consistent(n, m):
                mapping[n] = m
                if extend():
                    return True
                del mapping[n]
        return False

    return dict(mapping) if extend() else None


def assert_same_graph(ours: Dot, reference: Dot) -> None:
    assert ours.rankdir == reference.rankdir
    assert Counter(ours.nodes.values()) == Counter(reference.nodes.values())
    assert len(set(ours.edges)) == len(ours.edges), "an edge is written twice"
    assert len(ours.edges) == len(reference.edges)
    labelled = Counter((ours.label(h), ours.label(t)) for h, t in ours.edges)
    assert labelled == Counter((reference.label(h), reference.label(t))
                               for h, t in reference.edges)
    assert find_isomorphism(ours, reference) is not None, "same labels, different structure"


def reference(name: str) -> Dot:
    return parse_dot((SHARED / "reference" / "chainer_dot" / name).read_text())


# --- the seed's two models ------------------------------------------------------------------
class StaticGraphModel(Chain):
    def __init__(self) -> None:
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(None, 5)
            self.l2 = L.Linear(5, 2)

    def forward(self, x: Variable) -> Variable:
        return self.l2(F.relu(self.l1(x)))


def static_output(seed: int = 0) -> Variable:
    rng = np.random.default_rng(seed)
    return StaticGraphModel().forward(Variable(rng.random((3, 4)).astype(np.float32)))


def dynamic_relu_output() -> Variable:
    x = Variable(np.array([0.5, -0.2, 1.0, 0.3, -0.1], np.float32))  # mean > 0: Sum
    return F.sum(F.relu(x))


# --- against Chainer's files ----------------------------------------------------------------
def test_static_graph_matches_chainer() -> None:
    ours = parse_dot(build_computational_graph([static_output()]).dump())
    assert_same_graph(ours, reference("static_graph.dot"))


def test_static_graph_keeps_each_linear_with_its_own_parameters() -> None:
    ours = parse_dot(build_computational_graph([static_output()]).dump())
    mapping = find_isomorphism(ours, reference("static_graph.dot"))
    inputs_of = {n: sorted(ours.label(h) for h, t in ours.edges if t == n) for n in ours.nodes}
    linear_inputs = sorted(v for n, v in inputs_of.items() if ours.label(n) == "LinearFunction")
    assert linear_inputs == [["(3, 4), float32", "W: (5, 4), float32", "b: (5), float32"],
                             ["(3, 5), float32", "W: (2, 5), float32", "b: (2), float32"]]
    assert mapping is not None


def test_dynamic_relu_graph_matches_chainer() -> None:
    ours = parse_dot(build_computational_graph([dynamic_relu_output()]).dump())
    assert_same_graph(ours, reference("dynamic_graph_relu.dot"))


def test_remove_variable_matches_chainer() -> None:
    graph = build_computational_graph([static_output()], remove_variable=True)
    assert_same_graph(parse_dot(graph.dump()), reference("static_graph_remove_variable.dot"))


def test_rankdir_and_custom_styles_match_chainer() -> None:
    graph = build_computational_graph(
        [static_output()], rankdir="LR", show_name=False,
        variable_style={"shape": "ellipse", "color": "darkgreen"})
    assert_same_graph(parse_dot(graph.dump()), reference("static_graph_styled_LR.dot"))


# --- stable, deterministic output -----------------------------------------------------------
DYNAMIC_DOT = (
    'digraph graphname{rankdir=TB;'
    '0 [label="float32",shape="octagon",fillcolor="#E0E0E0",style="filled"];'
    '1 [label="Sum",shape="record",fillcolor="#6495ED",style="filled"];'
    '2 [label="(5), float32",shape="octagon",fillcolor="#E0E0E0",style="filled"];'
    '3 [label="ReLU",shape="record",fillcolor="#6495ED",style="filled"];'
    '4 [label="(5), float32",shape="octagon",fillcolor="#E0E0E0",style="filled"];'
    '1 -> 0;2 -> 1;3 -> 2;4 -> 3;}')


def test_ids_are_sequential_in_traversal_order() -> None:
    assert build_computational_graph([dynamic_relu_output()]).dump() == DYNAMIC_DOT
    ours = parse_dot(build_computational_graph([static_output()]).dump())
    assert list(ours.nodes) == [str(i) for i in range(11)]


def test_same_model_gives_the_same_bytes_in_one_process() -> None:
    y = static_output(seed=0)
    graph = build_computational_graph([y])
    first = graph.dump()
    assert graph.dump() == first
    assert build_computational_graph([y]).dump() == first
    assert build_computational_graph([static_output(seed=1)]).dump() == first


STABILITY_SCRIPT = textwrap.dedent("""
    import numpy as np
    import graphcore.functions as F
    import graphcore.links as L
    from graphcore import Chain, Variable
    from graphcore.computational_graph import build_computational_graph

    class StaticGraphModel(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.l1 = L.Linear(None, 5)
                self.l2 = L.Linear(5, 2)

        def forward(self, x):
            return self.l2(F.relu(self.l1(x)))

    rng = np.random.default_rng(0)
    y = StaticGraphModel().forward(Variable(rng.random((3, 4)).astype(np.float32)))
    x = Variable(rng.random(4).astype(np.float32), name="x")
    h = F.relu(x)
    z = h * h + F.sigmoid(h) + x
    for g in (build_computational_graph([y]), build_computational_graph([z, h]),
              build_computational_graph([y, z], remove_variable=True)):
        print(g.dump())
""")


def test_two_processes_give_byte_identical_dot() -> None:
    dumps = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", STABILITY_SCRIPT], env=env,
                              capture_output=True, text=True, timeout=60, check=True)
        dumps.append(done.stdout)
    assert dumps[0] == dumps[1]
    assert dumps[0].splitlines()[0] == build_computational_graph([static_output()]).dump()


# --- Chainer's behaviour in the corners -----------------------------------------------------
def test_shared_input_and_diamond_draw_each_edge_once() -> None:
    x = Variable(np.ones(3, np.float32))
    h = F.relu(x)
    z = h * h + F.sigmoid(h)
    dot = parse_dot(build_computational_graph(z).dump())
    edges = Counter((dot.label(a), dot.label(b)) for a, b in dot.edges)
    assert edges[("(3), float32", "_ * _")] == 1
    assert sorted(dot.label(n) for n in dot.nodes) == sorted(
        ["(3), float32"] * 5 + ["ReLU", "_ * _", "Sigmoid", "_ + _"])
    functions = parse_dot(build_computational_graph(z, remove_variable=True).dump())
    assert sorted((functions.label(a), functions.label(b)) for a, b in functions.edges) == [
        ("ReLU", "Sigmoid"), ("ReLU", "_ * _"), ("Sigmoid", "_ + _"), ("_ * _", "_ + _")]


def test_remove_variable_keeps_the_ids_of_the_full_dump() -> None:
    y = static_output()
    full = parse_dot(build_computational_graph([y]).dump())
    functions = parse_dot(build_computational_graph([y], remove_variable=True).dump())
    assert functions.nodes == {n: a for n, a in full.nodes.items() if dict(a)["shape"] == "record"}


def test_show_name_prefixes_variable_names_only() -> None:
    x = Variable(np.ones((2, 3), np.float32), name="x")
    y = F.relu(x)
    y.name = "y"
    named = parse_dot(build_computational_graph(y).dump())
    assert sorted(named.label(n) for n in named.nodes) == [
        "ReLU", "x: (2, 3), float32", "y: (2, 3), float32"]
    plain = parse_dot(build_computational_graph(y, show_name=False).dump())
    assert sorted(plain.label(n) for n in plain.nodes) == ["(2, 3), float32"] * 2 + ["ReLU"]


def test_style_none_draws_chainer_legacy_shapes() -> None:
    dot = build_computational_graph(F.relu(Variable(np.ones(2, np.float32))),
                                    variable_style=None, function_style=None).dump()
    assert dot == ('digraph graphname{rankdir=TB;0 [label="(2), float32",shape="oval"];'
                   '1 [label="ReLU",shape="box"];2 [label="(2), float32",shape="oval"];'
                   '1 -> 0;2 -> 1;}')


def test_function_style_is_laid_over_the_base_shape_in_order() -> None:
    dot = parse_dot(build_computational_graph(
        F.relu(Variable(np.ones(2, np.float32))),
        function_style={"color": "red", "shape": "diamond", "penwidth": 2}).dump())
    assert dot.nodes["1"] == (("label", "ReLU"), ("shape", "diamond"), ("color", "red"),
                              ("penwidth", "2"))


def test_outputs_may_be_one_variable_a_function_node_or_a_leaf() -> None:
    x = Variable(np.ones(2, np.float32))
    y = F.relu(x)
    assert build_computational_graph(y).dump() == build_computational_graph([y]).dump()
    from_function = parse_dot(build_computational_graph([y.creator]).dump())
    assert [from_function.label(n) for n in from_function.nodes] == ["ReLU", "(2), float32"]
    assert from_function.edges == [("1", "0")]
    leaf = parse_dot(build_computational_graph([x]).dump())
    assert len(leaf.nodes) == 1 and leaf.edges == []


def test_multiple_outputs_of_one_function() -> None:
    first, second = F.split_axis(Variable(np.ones(4, np.float32)), 2, axis=0)
    both = parse_dot(build_computational_graph([first, second]).dump())
    assert Counter(both.label(t) for h, t in both.edges if both.label(h) == "SplitAxis") == {
        "(2), float32": 2}
    one = parse_dot(build_computational_graph([first]).dump())
    assert len(one.nodes) == 3


def test_unchain_backward_stops_the_walk() -> None:
    h = F.relu(Variable(np.ones(2, np.float32)))
    h.unchain_backward()
    dot = parse_dot(build_computational_graph(F.sum(h)).dump())
    assert sorted(dot.label(n) for n in dot.nodes) == ["(2), float32", "Sum", "float32"]


def test_user_defined_function_node_is_drawn_with_its_class_name() -> None:
    class Square(FunctionNode):
        def forward(self, inputs):
            (x,) = inputs
            return (x * x,)

    (y,) = Square().apply((Variable(np.ones(2, np.float32)),))
    assert 'label="Square"' in build_computational_graph(y).dump()


def test_quotes_in_names_are_escaped() -> None:
    x = Variable(np.ones(2, np.float32), name='say "hi"')
    dot = parse_dot(build_computational_graph(F.relu(x)).dump())
    assert r'say \"hi\": (2), float32' in [dot.label(n) for n in dot.nodes]


def test_remove_split_is_accepted_and_ignored() -> None:
    y = static_output()
    assert (build_computational_graph([y], remove_split=False).dump()
            == build_computational_graph([y]).dump())


def test_invalid_arguments_raise() -> None:
    y = F.relu(Variable(np.ones(2, np.float32)))
    with pytest.raises(ValueError, match="rankdir"):
        build_computational_graph([y], rankdir="XY")
    with pytest.raises(ValueError, match="only 'dot'"):
        build_computational_graph([y]).dump(format="png")
    with pytest.raises(ValueError, match="style"):
        build_computational_graph([y], variable_style="fancy")
    with pytest.raises(TypeError, match="Variable or a FunctionNode"):
        build_computational_graph([y.array])


def test_graph_exposes_nodes_and_edges() -> None:
    x = Variable(np.ones(2, np.float32))
    y = F.relu(x)
    graph = build_computational_graph([y])
    assert isinstance(graph, ComputationalGraph)
    assert graph.nodes == [y, y.creator, x]
    assert graph.edges == [(y.creator, y), (x, y.creator)]
