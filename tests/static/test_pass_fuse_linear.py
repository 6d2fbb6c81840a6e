"""``fuse_linear``: linear + activation and matmul + bias (+ activation) on hand-built IR."""

import copy

import numpy as np

from graphcore.static.ir import Graph, Node, verify
from graphcore.static.passes.fuse_linear import fuse_linear


def node(id, op, *inputs, shape, dtype="float32", name=None, **attrs):
    return Node(id, op, tuple(inputs), attrs, shape, dtype, name)


def mlp_graph(outputs=None, extra=()):
    """Forward and backward of ``softmax_cross_entropy(linear(relu(linear(x))), t)``."""
    nodes = [
        node(0, "input", shape=(3, 4), name="x"),
        node(1, "input", shape=(3,), dtype="int32", name="t"),
        node(2, "param", shape=(5, 4), name="/l1/W"),
        node(3, "param", shape=(5,), name="/l1/b"),
        node(4, "param", shape=(2, 5), name="/l2/W"),
        node(5, "param", shape=(2,), name="/l2/b"),
        node(6, "linear", 0, 2, 3, shape=(3, 5)),
        node(7, "relu", 6, shape=(3, 5)),
        node(8, "linear", 7, 4, 5, shape=(3, 2)),
        node(9, "softmax_cross_entropy", 8, 1, shape=()),
        node(10, "const", shape=()),
        node(11, "vjp", 9, 10, shape=(3, 2), index=0, of="softmax_cross_entropy"),
        node(12, "vjp", 8, 11, shape=(3, 5), index=0, of="linear"),
        node(13, "vjp", 8, 11, shape=(2, 5), index=1, of="linear"),
        node(14, "vjp", 8, 11, shape=(2,), index=2, of="linear"),
        node(15, "vjp", 7, 12, shape=(3, 5), index=0, of="relu"),
        node(16, "vjp", 6, 15, shape=(5, 4), index=1, of="linear"),
        node(17, "vjp", 6, 15, shape=(5,), index=2, of="linear"),
        *extra,
    ]
    outputs = outputs or {"loss": 9, "gW1": 16, "gb1": 17, "gW2": 13, "gb2": 14}
    return verify(Graph(nodes, outputs, {10: np.ones((), np.float32)}, name="mlp"))


MLP_FUSED = """\
graph mlp {
  %0 = input x : f32[3,4]
  %1 = input t : i32[3]
  %2 = param /l1/W : f32[5,4]
  %3 = param /l1/b : f32[5]
  %4 = param /l2/W : f32[2,5]
  %5 = param /l2/b : f32[2]
  %7 = linear_act[activation=relu](%0, %2, %3) : f32[3,5]
  %8 = linear(%7, %4, %5) : f32[3,2]
  %9 = softmax_cross_entropy(%8, %1) : f32[]
  %10 = const() : f32[]
  %11 = vjp[index=0, of=softmax_cross_entropy](%9, %10) : f32[3,2]
  %12 = vjp[index=0, of=linear](%8, %11) : f32[3,5]
  %13 = vjp[index=1, of=linear](%8, %11) : f32[2,5]
  %14 = vjp[index=2, of=linear](%8, %11) : f32[2]
  %15 = vjp[index=0, of=relu](%7, %12) : f32[3,5]
  %16 = vjp[index=1, of=linear](%7, %15) : f32[5,4]
  %17 = vjp[index=2, of=linear](%7, %15) : f32[5]
  return loss=%9, gW1=%16, gb1=%17, gW2=%13, gb2=%14
}
"""


def run(graph):
    before_text, before_nodes = graph.text(), copy.deepcopy(graph.nodes)
    fused, report = fuse_linear(graph)
    verify(fused)
    assert graph.text() == before_text and graph.nodes == before_nodes  # input untouched
    assert [n.attrs for n in graph.nodes] == [n.attrs for n in before_nodes]
    return fused, report


def test_mlp_forward_backward_fuses_first_layer_and_rewires_its_vjps():
    fused, report = run(mlp_graph())
    assert fused.text() == MLP_FUSED
    assert (report.nodes_before, report.nodes_after) == (18, 17)
    assert report.bytes_saved == 3 * 5 * 4  # the linear's own value
    assert report.notes == ["%6 linear + %7 relu -> %7 linear_act"]


def test_second_linear_feeds_a_loss_so_it_is_left_alone():
    fused, _ = run(mlp_graph())
    assert fused.node(8).op == "linear" and fused.node(9).inputs == (8, 1)


def test_no_fusion_when_the_linear_output_has_two_users():
    extra = [node(18, "sum", 6, shape=())]
    graph = mlp_graph(extra=extra, outputs={"loss": 9, "s": 18})
    fused, report = run(graph)
    assert fused.text() == graph.text()
    assert report.nodes_removed == 0 and report.notes == ["nothing to fuse"]


def test_no_fusion_when_the_linear_output_is_requested():
    graph = mlp_graph(outputs={"loss": 9, "h": 6})
    fused, _ = run(graph)
    assert fused.text() == graph.text()


def small(activation, extra=(), outputs=None):
    nodes = [node(0, "input", shape=(3, 4), name="x"), node(1, "param", shape=(5, 4), name="W"),
             node(2, "input", shape=(3, 5), name="gy"),
             node(3, "linear", 0, 1, shape=(3, 5)), node(4, activation, 3, shape=(3, 5)),
             node(5, "vjp", 4, 2, shape=(3, 5), index=0, of=activation),
             node(6, "vjp", 3, 5, shape=(3, 4), index=0, of="linear"), *extra]
    return verify(Graph(nodes, outputs or {"y": 4, "gx": 6}, name="g"))


def test_tanh_and_sigmoid_fuse_without_a_bias():
    for activation in ("tanh", "sigmoid"):
        fused, _ = run(small(activation))
        assert [n.text() for n in fused.nodes[3:]] == [
            f"%4 = linear_act[activation={activation}](%0, %1) : f32[3,5]",
            f"%5 = vjp[index=0, of={activation}](%4, %2) : f32[3,5]",
            "%6 = vjp[index=0, of=linear](%4, %5) : f32[3,4]"]


def test_other_activations_are_not_fused():
    graph = small("exp")
    fused, _ = run(graph)
    assert fused.text() == graph.text()


def test_a_vjp_reading_the_linear_output_as_a_gradient_blocks_fusion():
    graph = small("relu", extra=[node(7, "vjp", 4, 3, shape=(3, 5), index=0, of="relu")],
                  outputs={"y": 4, "gx": 6, "odd": 7})
    fused, _ = run(graph)
    assert fused.text() == graph.text()


def test_a_vjp_of_another_reader_blocks_fusion():
    # %8 = scale's vjp reads scale's input %3 (the linear) implicitly, and %7 reads it directly.
    extra = [node(7, "scale", 3, shape=(3, 5), by=2.0),
             node(8, "vjp", 7, 2, shape=(3, 5), index=0, of="scale")]
    graph = small("relu", extra=extra, outputs={"y": 4, "gx": 6, "g": 8})
    fused, _ = run(graph)
    assert fused.text() == graph.text()


INFERENCE = """\
graph infer {
  %0 = input x : f32[8,4]
  %1 = param W : f32[4,6]
  %2 = param b : f32[6]
  %3 = matmul(%0, %1) : f32[8,6]
  %4 = add(%2, %3) : f32[8,6]
  %5 = tanh(%4) : f32[8,6]
  %6 = matmul(%5, %1) : f32[8,6]
  %7 = add(%6, %2) : f32[8,6]
  return y=%7
}
"""

INFERENCE_FUSED = """\
graph infer {
  %0 = input x : f32[8,4]
  %1 = param W : f32[4,6]
  %2 = param b : f32[6]
  %5 = matmul_bias[activation=tanh](%0, %1, %2) : f32[8,6]
  %7 = matmul_bias[activation=None](%5, %1, %2) : f32[8,6]
  return y=%7
}
"""


def inference_graph():
    nodes = [node(0, "input", shape=(8, 4), name="x"), node(1, "param", shape=(4, 6), name="W"),
             node(2, "param", shape=(6,), name="b"),
             node(3, "matmul", 0, 1, shape=(8, 6)), node(4, "add", 2, 3, shape=(8, 6)),
             node(5, "tanh", 4, shape=(8, 6)),
             node(6, "matmul", 5, 1, shape=(8, 6)), node(7, "add", 6, 2, shape=(8, 6))]
    return verify(Graph(nodes, {"y": 7}, name="infer"))


def test_matmul_add_activation_fuses_in_an_inference_graph():
    graph = inference_graph()
    assert graph.text() == INFERENCE
    fused, report = run(graph)
    assert fused.text() == INFERENCE_FUSED
    assert (report.nodes_before, report.nodes_after) == (8, 5)
    assert report.bytes_saved == 3 * 8 * 6 * 4
    assert report.notes == ["%3 matmul + %4 add + %5 tanh -> %5 matmul_bias",
                            "%6 matmul + %7 add -> %7 matmul_bias"]


def test_matmul_add_is_not_fused_when_a_vjp_of_either_exists():
    graph = inference_graph()
    for forward in (3, 7):
        g = graph.copy(graph.nodes + [node(8, "input", shape=(8, 6), name="gy"),
                                      node(9, "vjp", forward, 8, shape=(8, 4), index=0,
                                           of=graph.node(forward).op)])
        g.outputs = {"y": 7, "g": 9}
        fused, _ = run(verify(g))
        assert fused.node(forward).op == graph.node(forward).op


def test_matmul_add_needs_a_bias_over_the_last_axis_only():
    nodes = [node(0, "input", shape=(8, 4), name="x"), node(1, "param", shape=(4, 6), name="W"),
             node(2, "param", shape=(8, 1), name="c"),
             node(3, "matmul", 0, 1, shape=(8, 6)), node(4, "add", 3, 2, shape=(8, 6))]
    graph = verify(Graph(nodes, {"y": 4}, name="g"))
    fused, _ = run(graph)
    assert fused.text() == graph.text()
    ok = graph.copy([*nodes[:2], node(2, "param", shape=(1, 6), name="c"), *nodes[3:]])
    fused, _ = run(verify(ok))
    assert fused.node(4).op == "matmul_bias" and fused.node(4).inputs == (0, 1, 2)


def test_matmul_with_two_users_is_not_fused():
    graph = inference_graph()
    g = graph.copy(graph.nodes + [node(8, "sum", 3, shape=())])
    g.outputs = {"y": 7, "s": 8}
    fused, _ = run(verify(g))
    assert [n.op for n in fused.nodes[3:6]] == ["matmul", "add", "tanh"]
    assert fused.node(7).op == "matmul_bias"
