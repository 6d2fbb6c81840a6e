"""Dead-code elimination on hand-built IR, compared as text with golden strings."""

from __future__ import annotations

import numpy as np

from graphcore.static.ir import Graph, Node, verify
from graphcore.static.passes.dce import eliminate_dead_code

F = "float32"
GUARD = {"predicate": "gt", "expect": True, "names": ("s",), "at": "spec.yaml:3"}


def run(graph: Graph):
    """Run the pass; check the result verifies and the input graph did not change."""
    before_text, before_nodes = graph.text(), list(graph.nodes)
    before_consts, before_slots = dict(graph.consts), dict(graph.slots)
    result, report = eliminate_dead_code(verify(graph))
    verify(result)
    assert graph.text() == before_text
    assert all(a is b for a, b in zip(graph.nodes, before_nodes, strict=True))
    assert graph.consts == before_consts and graph.slots == before_slots
    assert result is not graph and result.nodes is not graph.nodes
    assert report.name == "dce"
    assert (report.nodes_before, report.nodes_after) == (len(graph.nodes), len(result.nodes))
    assert (report.bytes_before, report.bytes_after) == (graph.nbytes(), result.nbytes())
    return result, report


def test_docstring_example():
    graph = Graph([
        Node(0, "input", shape=(2, 3), name="x"),
        Node(1, "input", shape=(4,), name="unused"),
        Node(2, "relu", (0,), shape=(2, 3)),
        Node(3, "exp", (0,), shape=(2, 3)),
        Node(4, "dropout", (3,), {"ratio": 0.5}, shape=(2, 3)),
        Node(5, "sum", (2,), shape=()),
    ], {"y": 5}, name="g")
    assert graph.text() == """\
graph g {
  %0 = input x : f32[2,3]
  %1 = input unused : f32[4]
  %2 = relu(%0) : f32[2,3]
  %3 = exp(%0) : f32[2,3]
  %4 = dropout[ratio=0.5](%3) : f32[2,3]
  %5 = sum(%2) : f32[]
  return y=%5
}
"""
    result, report = run(graph)
    assert result.text() == """\
graph g {
  %0 = input x : f32[2,3]
  %1 = input unused : f32[4]
  %2 = relu(%0) : f32[2,3]
  %5 = sum(%2) : f32[]
  return y=%5
}
"""
    assert (report.nodes_before, report.nodes_after, report.nodes_removed) == (6, 4, 2)
    assert (report.bytes_before, report.bytes_after) == (24 + 16 + 24 * 3 + 4, 24 + 16 + 24 + 4)
    assert report.bytes_saved == 48
    assert report.notes == ["removed 2 dead nodes (1 exp, 1 dropout)",
                            "kept unused inputs/params (the signature): unused"]


def test_vjp_keeps_its_forward_node_and_that_nodes_inputs():
    graph = Graph([
        Node(0, "input", shape=(3,), name="x"),
        Node(1, "param", shape=(3,), name="/l/W"),
        Node(2, "exp", (0,), shape=(3,)),
        Node(3, "mul", (2, 1), shape=(3,)),
        Node(4, "sum", (3,), shape=()),
        Node(5, "input", shape=(3,), name="gy"),
        Node(6, "vjp", (3, 5), {"index": 1, "of": "mul"}, shape=(3,)),
        Node(7, "tanh", (2,), shape=(3,)),
    ], {"gW": 6})
    result, report = run(graph)
    assert result.text() == """\
graph graph {
  %0 = input x : f32[3]
  %1 = param /l/W : f32[3]
  %2 = exp(%0) : f32[3]
  %3 = mul(%2, %1) : f32[3]
  %5 = input gy : f32[3]
  %6 = vjp[index=1, of=mul](%3, %5) : f32[3]
  return gW=%6
}
"""
    assert report.nodes_removed == 2
    assert report.notes == ["removed 2 dead nodes (1 sum, 1 tanh)"]


def test_vjp_forward_inputs_kept_even_when_only_the_vjp_reads_them():
    # %3's forward node %2 is kept as inputs[0]; what %2 reads (%1) must survive with it.
    graph = Graph([
        Node(0, "input", shape=(3,), name="x"),
        Node(1, "square", (0,), shape=(3,)),
        Node(2, "relu", (1,), shape=(3,)),
        Node(3, "vjp", (2, 0), {"index": 0, "of": "relu"}, shape=(3,)),
    ], {"g": 3})
    result, report = run(graph)
    assert [n.id for n in result.nodes] == [0, 1, 2, 3]
    assert report.nodes_removed == 0
    assert report.notes == ["removed 0 dead nodes"]


def test_guard_is_kept_with_what_it_reads():
    graph = Graph([
        Node(0, "input", shape=(2,), name="x"),
        Node(1, "sum", (0,), shape=()),
        Node(2, "guard", (1,), dict(GUARD), shape=None),
        Node(3, "neg", (0,), shape=(2,)),
        Node(4, "abs", (0,), shape=(2,)),
    ], {"y": 3})
    result, report = run(graph)
    assert result.text() == """\
graph graph {
  %0 = input x : f32[2]
  %1 = sum(%0) : f32[]
  %2 = guard[at=spec.yaml:3, expect=True, names=(s,), predicate=gt](%1) : ()
  %3 = neg(%0) : f32[2]
  return y=%3
}
"""
    assert report.notes == ["removed 1 dead nodes (1 abs)"]


def test_unused_leaves_kept_unused_consts_dropped_with_their_arrays():
    graph = Graph([
        Node(0, "input", shape=(2,), name="x"),
        Node(1, "param", shape=(5,), name="/unused/b"),
        Node(2, "const", shape=(2,)),
        Node(3, "const", shape=(7,)),
        Node(4, "add", (0, 2), shape=(2,)),
    ], {"y": 4}, consts={2: np.ones(2, F), 3: np.zeros(7, F)}, slots={3: 0, 4: 1})
    result, report = run(graph)
    assert result.text() == """\
graph graph {
  %0 = input x : f32[2]
  %1 = param /unused/b : f32[5]
  %2 = const() : f32[2]
  %4 = add(%0, %2) : f32[2]
  return y=%4
}
"""
    assert list(result.consts) == [2] and result.consts[2] is graph.consts[2]
    assert result.slots == {4: 1}
    assert report.bytes_saved == 28
    assert report.notes == ["removed 1 dead nodes (1 const)",
                            "kept unused inputs/params (the signature): /unused/b"]


def test_impure_op_removed_when_unused_kept_when_used():
    graph = Graph([
        Node(0, "input", shape=(4,), name="x"),
        Node(1, "dropout", (0,), {"ratio": 0.25}, shape=(4,)),
        Node(2, "dropout", (0,), {"ratio": 0.5}, shape=(4,)),
    ], {"y": 2})
    result, _ = run(graph)
    assert [n.id for n in result.nodes] == [0, 2]


def test_multi_output_node_kept_through_a_used_projection():
    graph = Graph([
        Node(0, "input", shape=(4, 2), name="x"),
        Node(1, "split_axis", (0,), {"indices_or_sections": 2, "axis": 0}, shape=None),
        Node(2, "project", (1,), {"index": 0}, shape=(2, 2)),
        Node(3, "project", (1,), {"index": 1}, shape=(2, 2)),
    ], {"a": 2})
    result, report = run(graph)
    assert result.text() == """\
graph graph {
  %0 = input x : f32[4,2]
  %1 = split_axis[axis=0, indices_or_sections=2](%0) : tuple
  %2 = project[index=0](%1) : f32[2,2]
  return a=%2
}
"""
    assert report.bytes_saved == 16


def test_output_that_is_a_leaf_and_an_all_dead_body():
    graph = Graph([
        Node(0, "input", shape=(1,), name="x"),
        Node(1, "exp", (0,), shape=(1,)),
        Node(2, "log", (1,), shape=(1,)),
    ], {"x": 0})
    result, report = run(graph)
    assert result.text() == "graph graph {\n  %0 = input x : f32[1]\n  return x=%0\n}\n"
    assert report.notes == ["removed 2 dead nodes (1 exp, 1 log)"]
