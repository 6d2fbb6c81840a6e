"""Common-subexpression elimination on hand-built IR, compared as text with golden strings."""

from __future__ import annotations

import numpy as np
import pytest

from graphcore.static.ir import Graph, Node, verify
from graphcore.static.passes.cse import canonical, eliminate_common_subexpressions

F = "float32"


def run(graph: Graph):
    """Run the pass; check the result verifies and the input graph did not change."""
    before_text, before_nodes = graph.text(), list(graph.nodes)
    before_consts, before_outputs = dict(graph.consts), dict(graph.outputs)
    result, report = eliminate_common_subexpressions(verify(graph))
    verify(result)
    assert graph.text() == before_text
    assert all(a is b for a, b in zip(graph.nodes, before_nodes, strict=True))
    assert graph.consts == before_consts and graph.outputs == before_outputs
    assert result is not graph
    assert report.name == "cse"
    assert (report.nodes_before, report.nodes_after) == (len(graph.nodes), len(result.nodes))
    assert (report.bytes_before, report.bytes_after) == (graph.nbytes(), result.nbytes())
    return result, report


def x_input(shape=(2, 3)) -> Node:
    return Node(0, "input", shape=shape, name="x")


def test_chain_where_one_merge_enables_the_next():
    graph = Graph([
        x_input(),
        Node(1, "relu", (0,), shape=(2, 3)),
        Node(2, "relu", (0,), shape=(2, 3)),
        Node(3, "exp", (1,), shape=(2, 3)),
        Node(4, "exp", (2,), shape=(2, 3)),
        Node(5, "add", (3, 4), shape=(2, 3)),
    ], {"y": 5}, name="g")
    result, report = run(graph)
    assert result.text() == """\
graph g {
  %0 = input x : f32[2,3]
  %1 = relu(%0) : f32[2,3]
  %3 = exp(%1) : f32[2,3]
  %5 = add(%3, %3) : f32[2,3]
  return y=%5
}
"""
    assert (report.nodes_before, report.nodes_after) == (6, 4)
    assert report.bytes_saved == 48
    assert report.notes == ["merged 2 duplicate nodes (1 relu, 1 exp)"]


def test_outputs_are_rewired_to_the_kept_node():
    graph = Graph([
        x_input((3,)),
        Node(1, "tanh", (0,), shape=(3,)),
        Node(2, "tanh", (0,), shape=(3,)),
        Node(3, "sum", (2,), shape=()),
    ], {"a": 1, "b": 2, "s": 3}, slots={2: 0, 3: 1})
    result, _ = run(graph)
    assert result.text() == """\
graph graph {
  %0 = input x : f32[3]
  %1 = tanh(%0) : f32[3]
  %3 = sum(%1) : f32[]
  return a=%1, b=%1, s=%3
}
"""
    assert result.slots == {3: 1}


def test_attrs_compared_canonically():
    idx = np.array([0, 1, 1], np.int64)
    graph = Graph([
        x_input(),
        Node(1, "transpose", (0,), {"axes": (1, 0)}, shape=(3, 2)),
        Node(2, "transpose", (0,), {"axes": (1, 0)}, shape=(3, 2)),
        Node(3, "transpose", (0,), {"axes": [1, 0]}, shape=(3, 2)),  # a list is not a tuple
        Node(4, "sum", (0,), {"axis": (0,), "keepdims": False}, shape=(3,)),
        Node(5, "sum", (0,), {"keepdims": False, "axis": (0,)}, shape=(3,)),
        Node(6, "sum", (0,), {"axis": (0,), "keepdims": 0}, shape=(3,)),  # 0 is not False
        Node(7, "get_item", (0,), {"index": (slice(0, 1, None), idx)}, shape=(1, 3)),
        Node(8, "get_item", (0,), {"index": (slice(0, 1, None), idx.copy())}, shape=(1, 3)),
        Node(9, "get_item", (0,), {"index": (slice(0, 1, None), idx[::-1].copy())},
             shape=(1, 3)),
        Node(10, "get_item", (0,), {"index": (slice(0, 1, 1), idx)}, shape=(1, 3)),
        Node(11, "cast", (0,), {"dtype": np.float64}, shape=(2, 3), dtype="float64"),
        Node(12, "cast", (0,), {"dtype": np.dtype("float64")}, shape=(2, 3), dtype="float64"),
        Node(13, "scale", (0,), {"by": 0.0}, shape=(2, 3)),
        Node(14, "scale", (0,), {"by": -0.0}, shape=(2, 3)),
        Node(15, "scale", (0,), {"by": 0}, shape=(2, 3)),
        Node(16, "scale", (0,), {"by": 0.0}, shape=(2, 3)),
    ], {f"o{i}": i for i in range(1, 17)})
    result, report = run(graph)
    assert [n.id for n in result.nodes] == [0, 1, 3, 4, 6, 7, 9, 10, 11, 13, 14, 15]
    assert result.outputs == {"o1": 1, "o2": 1, "o3": 3, "o4": 4, "o5": 4, "o6": 6, "o7": 7,
                              "o8": 7, "o9": 9, "o10": 10, "o11": 11, "o12": 11, "o13": 13,
                              "o14": 14, "o15": 15, "o16": 13}
    assert report.notes == ["merged 5 duplicate nodes (1 transpose, 1 sum, 1 get_item, "
                            "1 cast, 1 scale)"]


def test_canonical_forms():
    assert canonical((1, 2)) != canonical([1, 2])
    assert canonical(1) != canonical(1.0) != canonical(True)
    assert canonical(float("nan")) == canonical(float("nan"))
    assert canonical(np.zeros(2, np.float32)) != canonical(np.zeros(2, np.int32))
    assert canonical(np.zeros((2, 1))) != canonical(np.zeros((1, 2)))
    assert canonical(np.float32(1)) != canonical(np.float64(1))
    assert canonical({"b": 1, "a": (2,)}) == canonical({"a": (2,), "b": 1})
    assert canonical(slice(None, 3)) == canonical(slice(None, 3, None))
    with pytest.raises(TypeError):
        canonical(object())


def test_uncomparable_attr_is_never_merged():
    marker = object()
    graph = Graph([
        x_input((2,)),
        Node(1, "get_item", (0,), {"index": marker}, shape=(2,)),
        Node(2, "get_item", (0,), {"index": marker}, shape=(2,)),
    ], {"a": 1, "b": 2})
    result, report = run(graph)
    assert len(result.nodes) == 3 and report.notes == ["merged 0 duplicate nodes"]


def test_equal_consts_merged_unequal_not():
    consts = {
        1: np.arange(3, dtype=F),
        2: np.arange(3, dtype=F),               # equal to %1: merged
        3: np.arange(3, dtype=F)[::-1].copy(),  # other values
        4: np.zeros(3, F),
        5: np.zeros(3, np.int32),               # same bytes, other dtype
        6: np.zeros((3, 1), F),                 # same bytes, other shape
        7: -np.zeros(3, F),                     # -0.0 differs from 0.0 in its bytes
    }
    nodes = [x_input((3,))]
    for i, value in consts.items():
        nodes.append(Node(i, "const", shape=value.shape, dtype=value.dtype.name))
    nodes.append(Node(8, "add", (0, 2), shape=(3,)))
    nodes.append(Node(9, "mul", (8, 1), shape=(3,)))
    graph = Graph(nodes, {"y": 9, "c": 2, "z": 4}, consts=consts)
    result, report = run(graph)
    assert result.text() == """\
graph graph {
  %0 = input x : f32[3]
  %1 = const() : f32[3]
  %3 = const() : f32[3]
  %4 = const() : f32[3]
  %5 = const() : i32[3]
  %6 = const() : f32[3,1]
  %7 = const() : f32[3]
  %8 = add(%0, %1) : f32[3]
  %9 = mul(%8, %1) : f32[3]
  return y=%9, c=%1, z=%4
}
"""
    assert sorted(result.consts) == [1, 3, 4, 5, 6, 7]
    assert result.consts[1] is graph.consts[1]
    assert report.notes == ["merged 1 duplicate nodes (1 const)"]


def test_leaves_guards_and_impure_ops_never_merged():
    guard = {"predicate": "gt", "expect": True, "names": ("s",), "at": "spec.yaml:1"}
    graph = Graph([
        Node(0, "input", shape=(2,), name="x"),
        Node(1, "input", shape=(2,), name="x2"),
        Node(2, "param", shape=(2,), name="/W"),
        Node(3, "param", shape=(2,), name="/V"),
        Node(4, "dropout", (0,), {"ratio": 0.5}, shape=(2,)),
        Node(5, "dropout", (0,), {"ratio": 0.5}, shape=(2,)),
        Node(6, "sum", (0,), shape=()),
        Node(7, "guard", (6,), dict(guard), shape=None),
        Node(8, "guard", (6,), dict(guard), shape=None),
        Node(9, "fused", (0,), {"program": ("relu",)}, shape=(2,)),
        Node(10, "fused", (0,), {"program": ("relu",)}, shape=(2,)),
    ], {"a": 4, "b": 5, "c": 9, "d": 10})
    result, report = run(graph)
    assert result.text() == graph.text()
    assert report.nodes_removed == 0 and report.bytes_saved == 0


def test_vjp_of_pure_forward_and_projects_merged():
    graph = Graph([
        Node(0, "input", shape=(4, 2), name="x"),
        Node(1, "input", shape=(2, 2), name="gy"),
        Node(2, "split_axis", (0,), {"indices_or_sections": 2, "axis": 0}, shape=None),
        Node(3, "project", (2,), {"index": 0}, shape=(2, 2)),
        Node(4, "project", (2,), {"index": 0}, shape=(2, 2)),
        Node(5, "project", (2,), {"index": 1}, shape=(2, 2)),
        Node(6, "sigmoid", (3,), shape=(2, 2)),
        Node(7, "sigmoid", (4,), shape=(2, 2)),
        Node(8, "vjp", (6, 1), {"index": 0, "of": "sigmoid"}, shape=(2, 2)),
        Node(9, "vjp", (7, 1), {"index": 0, "of": "sigmoid"}, shape=(2, 2)),
        Node(10, "add", (8, 9), shape=(2, 2)),
        Node(11, "add", (5, 5), shape=(2, 2)),
    ], {"g": 10, "h": 11})
    result, report = run(graph)
    assert result.text() == """\
graph graph {
  %0 = input x : f32[4,2]
  %1 = input gy : f32[2,2]
  %2 = split_axis[axis=0, indices_or_sections=2](%0) : tuple
  %3 = project[index=0](%2) : f32[2,2]
  %5 = project[index=1](%2) : f32[2,2]
  %6 = sigmoid(%3) : f32[2,2]
  %8 = vjp[index=0, of=sigmoid](%6, %1) : f32[2,2]
  %10 = add(%8, %8) : f32[2,2]
  %11 = add(%5, %5) : f32[2,2]
  return g=%10, h=%11
}
"""
    assert report.notes == ["merged 3 duplicate nodes (1 project, 1 sigmoid, 1 vjp)"]


def test_vjp_of_impure_forward_not_merged():
    graph = Graph([
        Node(0, "input", shape=(2,), name="x"),
        Node(1, "input", shape=(2,), name="gy"),
        Node(2, "dropout", (0,), {"ratio": 0.5}, shape=(2,)),
        Node(3, "vjp", (2, 1), {"index": 0, "of": "dropout"}, shape=(2,)),
        Node(4, "vjp", (2, 1), {"index": 0, "of": "dropout"}, shape=(2,)),
        Node(5, "vjp", (3, 1), {"index": 0, "of": "vjp"}, shape=(2,)),
        Node(6, "vjp", (4, 1), {"index": 0, "of": "vjp"}, shape=(2,)),
    ], {"a": 5, "b": 6})
    result, report = run(graph)
    assert result.text() == graph.text() and report.nodes_removed == 0


def test_second_order_vjp_of_pure_forward_merged():
    graph = Graph([
        Node(0, "input", shape=(2,), name="x"),
        Node(1, "input", shape=(2,), name="gy"),
        Node(2, "tanh", (0,), shape=(2,)),
        Node(3, "vjp", (2, 1), {"index": 0, "of": "tanh"}, shape=(2,)),
        Node(4, "vjp", (3, 1), {"index": 0, "of": "vjp"}, shape=(2,)),
        Node(5, "vjp", (3, 1), {"index": 0, "of": "vjp"}, shape=(2,)),
    ], {"a": 4, "b": 5})
    result, _ = run(graph)
    assert [n.id for n in result.nodes] == [0, 1, 2, 3, 4]
    assert result.outputs == {"a": 4, "b": 4}


def test_different_shapes_or_dtypes_not_merged():
    graph = Graph([
        x_input((2, 3)),
        Node(1, "sum", (0,), {"axis": None, "keepdims": False}, shape=()),
        Node(2, "sum", (0,), {"axis": None, "keepdims": False}, shape=(), dtype="float64"),
    ], {"a": 1, "b": 2})
    result, _ = run(graph)
    assert len(result.nodes) == 3
