"""Constant folding on hand-built IR, compared as text with golden strings and by value."""

from __future__ import annotations

import numpy as np
import pytest

from graphcore import errors
from graphcore.static.ir import Graph, Node, verify
from graphcore.static.passes.constant_fold import fold_constants

F = "float32"


def run(graph: Graph, frozen=None, **options):
    """Run the pass; check the result verifies and the input graph did not change."""
    before_text, before_nodes = graph.text(), list(graph.nodes)
    before_consts = {i: a.copy() for i, a in graph.consts.items()}
    result, report = fold_constants(verify(graph), frozen, **options)
    verify(result)
    assert graph.text() == before_text
    assert all(a is b for a, b in zip(graph.nodes, before_nodes, strict=True))
    assert graph.consts.keys() == before_consts.keys()
    assert all(np.array_equal(graph.consts[i], a) for i, a in before_consts.items())
    assert result is not graph
    assert report.name == "fold"
    assert (report.nodes_before, report.nodes_after) == (len(graph.nodes), len(result.nodes))
    assert (report.bytes_before, report.bytes_after) == (graph.nbytes(), result.nbytes())
    for node in result.nodes:  # every const value has the node's own type and owns its data
        if node.op == "const":
            value = result.consts[node.id]
            assert value.shape == node.shape and value.dtype == np.dtype(node.dtype)
            assert value.flags.c_contiguous
    return result, report


def test_chain_const_transpose_reshape():
    c = np.arange(6, dtype=F).reshape(2, 3)
    graph = Graph([
        Node(0, "input", shape=(3, 2), name="x"),
        Node(1, "const", shape=(2, 3)),
        Node(2, "transpose", (1,), {"axes": (1, 0)}, shape=(3, 2)),
        Node(3, "reshape", (2,), {"shape": (6,)}, shape=(6,)),
        Node(4, "reshape", (3,), {"shape": (3, 2)}, shape=(3, 2)),
        Node(5, "add", (0, 4), shape=(3, 2)),
    ], {"y": 5}, consts={1: c}, name="g")
    result, report = run(graph)
    assert result.text() == """\
graph g {
  %0 = input x : f32[3,2]
  %4 = const() : f32[3,2]
  %5 = add(%0, %4) : f32[3,2]
  return y=%5
}
"""
    np.testing.assert_array_equal(result.consts[4], c.T.reshape(6).reshape(3, 2))
    assert result.consts[4].base is None  # a copy, not a view of the dropped const
    assert (report.nodes_before, report.nodes_after) == (6, 3)
    assert (report.bytes_before, report.bytes_after) == (24 * 6, 24 * 3)
    assert report.notes == ["folded 3 nodes into constants (72 bytes of constants created)",
                            "dropped 3 nodes that only fed folded nodes"]


def test_frozen_params_fold_for_inference():
    W = np.arange(12, dtype=F).reshape(3, 4)
    graph = Graph([
        Node(0, "input", shape=(2, 3), name="x"),
        Node(1, "param", shape=(3, 4), name="W"),
        Node(2, "transpose", (1,), {"axes": (1, 0)}, shape=(4, 3)),
        Node(3, "reshape", (2,), {"shape": (2, 6)}, shape=(2, 6)),
        Node(4, "matmul", (0, 1), shape=(2, 4)),
    ], {"a": 3, "b": 4}, name="g")
    result, report = run(graph, {"W": W, "/unused/b": np.zeros(1, F)})
    assert result.text() == """\
graph g {
  %0 = input x : f32[2,3]
  %1 = const() : f32[3,4]
  %3 = const() : f32[2,6]
  %4 = matmul(%0, %1) : f32[2,4]
  return a=%3, b=%4
}
"""
    np.testing.assert_array_equal(result.consts[1], W)
    np.testing.assert_array_equal(result.consts[3], W.T.reshape(2, 6))
    W[...] = -1  # the const holds a copy
    assert result.consts[1][0, 0] == 0
    assert report.notes == ["folded 2 nodes into constants (96 bytes of constants created)",
                            "froze 1 params into constants",
                            "frozen names with no param in this graph: /unused/b",
                            "dropped 1 nodes that only fed folded nodes"]


def test_without_frozen_params_nothing_folds():
    graph = Graph([
        Node(0, "param", shape=(2,), name="W"),
        Node(1, "exp", (0,), shape=(2,)),
    ], {"y": 1})
    result, report = run(graph)
    assert result.text() == graph.text()
    assert report.notes == ["folded 0 nodes into constants (0 bytes of constants created)"]


def test_frozen_param_of_wrong_type_raises():
    graph = Graph([Node(0, "param", shape=(2,), name="W")], {"W": 0})
    with pytest.raises(errors.TraceError, match="declares f32\\[2\\]"):
        fold_constants(graph, {"W": np.zeros(3, F)})
    with pytest.raises(errors.TraceError, match="float64"):
        fold_constants(graph, {"W": np.zeros(2)})


def test_impure_op_never_folded():
    graph = Graph([
        Node(0, "const", shape=(4,)),
        Node(1, "dropout", (0,), {"ratio": 0.5}, shape=(4,)),
        Node(2, "exp", (1,), shape=(4,)),
    ], {"y": 2}, consts={0: np.ones(4, F)})
    result, report = run(graph)
    assert result.text() == graph.text()
    assert report.nodes_removed == 0


def test_multi_output_node_folds_through_its_projections():
    c = np.arange(8, dtype=F).reshape(4, 2)
    graph = Graph([
        Node(0, "const", shape=(4, 2)),
        Node(1, "split_axis", (0,), {"indices_or_sections": 2, "axis": 0}, shape=None),
        Node(2, "project", (1,), {"index": 0}, shape=(2, 2)),
        Node(3, "project", (1,), {"index": 1}, shape=(2, 2)),
        Node(4, "sub", (3, 2), shape=(2, 2)),
    ], {"d": 4, "top": 2}, consts={0: c})
    result, report = run(graph)
    assert result.text() == """\
graph graph {
  %2 = const() : f32[2,2]
  %4 = const() : f32[2,2]
  return d=%4, top=%2
}
"""
    np.testing.assert_array_equal(result.consts[2], c[:2])
    np.testing.assert_array_equal(result.consts[4], c[2:] - c[:2])
    assert report.notes == ["folded 3 nodes into constants (48 bytes of constants created)",
                            "dropped 3 nodes that only fed folded nodes"]


def test_multi_output_node_read_by_a_vjp_stays():
    graph = Graph([
        Node(0, "const", shape=(4,)),
        Node(1, "input", shape=(2,), name="gy"),
        Node(2, "split_axis", (0,), {"indices_or_sections": 2}, shape=None),
        Node(3, "project", (2,), {"index": 0}, shape=(2,)),
        Node(4, "vjp", (2, 1, 1), {"index": 0, "of": "split_axis"}, shape=(4,)),
    ], {"a": 3, "g": 4}, consts={0: np.ones(4, F)})
    result, _ = run(graph)
    assert result.text() == graph.text()  # the vjp reads split_axis's op and inputs


def test_vjp_and_its_forward_node_not_folded_but_their_inputs_are():
    graph = Graph([
        Node(0, "const", shape=(3,)),
        Node(1, "const", shape=(3,)),
        Node(2, "neg", (0,), shape=(3,)),
        Node(3, "tanh", (2,), shape=(3,)),
        Node(4, "vjp", (3, 1), {"index": 0, "of": "tanh"}, shape=(3,)),
    ], {"g": 4}, consts={0: np.ones(3, F), 1: np.ones(3, F)})
    result, report = run(graph)
    assert result.text() == """\
graph graph {
  %1 = const() : f32[3]
  %2 = const() : f32[3]
  %3 = tanh(%2) : f32[3]
  %4 = vjp[index=0, of=tanh](%3, %1) : f32[3]
  return g=%4
}
"""
    np.testing.assert_array_equal(result.consts[2], -np.ones(3, F))


def test_guard_and_unregistered_ops_not_folded():
    guard = {"predicate": "gt", "expect": True, "names": ("s",), "at": "spec.yaml:1"}
    graph = Graph([
        Node(0, "const", shape=()),
        Node(1, "guard", (0,), guard, shape=None),
        Node(2, "fused", (0,), {"program": ("relu",)}, shape=()),
    ], {"y": 2}, consts={0: np.array(1.0, F)})
    result, _ = run(graph)
    assert result.text() == graph.text()


def test_value_over_the_limit_not_folded():
    graph = Graph([
        Node(0, "const", shape=(4,)),
        Node(1, "exp", (0,), shape=(4,)),
        Node(2, "sum", (1,), shape=()),
    ], {"y": 2}, consts={0: np.zeros(4, F)})
    result, report = run(graph, max_fold_bytes=8)
    assert [n.op for n in result.nodes] == ["const", "exp", "sum"]
    assert report.notes == ["folded 0 nodes into constants (0 bytes of constants created)",
                            "not folded: 1 values over 8 bytes"]


def test_evaluation_error_left_to_run_time():
    graph = Graph([
        Node(0, "const", shape=(2,)),
        Node(1, "log", (0,), shape=(2,)),
    ], {"y": 1}, consts={0: np.array([-1.0, 0.0], F)})
    result, report = run(graph)
    assert result.text() == graph.text()
    assert report.notes[-1] == "not folded: 1 nodes whose evaluation raised (left to run time)"


def test_result_of_another_type_raises():
    graph = Graph([
        Node(0, "const", shape=(2, 3)),
        Node(1, "sum", (0,), {"axis": 0}, shape=(2,)),  # really (3,)
    ], {"y": 1}, consts={0: np.ones((2, 3), F)})
    with pytest.raises(errors.TraceError, match=r"float32\[3\], the node declares f32\[2\]"):
        fold_constants(graph)


def test_consts_still_read_elsewhere_and_slots_survive():
    graph = Graph([
        Node(0, "input", shape=(2,), name="x"),
        Node(1, "const", shape=(2,)),
        Node(2, "square", (1,), shape=(2,)),
        Node(3, "mul", (0, 1), shape=(2,)),
        Node(4, "add", (3, 2), shape=(2,)),
    ], {"y": 4}, consts={1: np.array([2.0, 3.0], F)}, slots={2: 0, 4: 1})
    result, report = run(graph)
    assert result.text() == """\
graph graph {
  %0 = input x : f32[2]
  %1 = const() : f32[2]
  %2 = const() : f32[2]
  %3 = mul(%0, %1) : f32[2]
  %4 = add(%3, %2) : f32[2]
  return y=%4
}
"""
    np.testing.assert_array_equal(result.consts[2], [4.0, 9.0])
    assert result.slots == {2: 0, 4: 1}
    assert report.nodes_removed == 0
