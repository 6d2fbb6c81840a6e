"""``fuse_elementwise``: single-reader elementwise chains become one ``fused`` node."""

import copy

import numpy as np

from graphcore.static.ir import Graph, Node, verify
from graphcore.static.passes.fuse_elementwise import fuse_elementwise

F32 = (3, 5)


def node(id, op, *inputs, shape=F32, dtype="float32", name=None, **attrs):
    return Node(id, op, tuple(inputs), attrs, shape, dtype, name)


def run(graph):
    before_text, before_nodes = graph.text(), copy.deepcopy(graph.nodes)
    fused, report = fuse_elementwise(graph)
    verify(fused)
    assert graph.text() == before_text and graph.nodes == before_nodes  # input untouched
    assert [n.attrs for n in graph.nodes] == [n.attrs for n in before_nodes]
    return fused, report


def forward_graph(outputs=None):
    nodes = [node(0, "input", name="x"), node(1, "param", shape=(5,), name="b"),
             node(2, "add", 0, 1), node(3, "tanh", 2), node(4, "scale", 3, by=2.0),
             node(5, "sum", 4, shape=())]
    return verify(Graph(nodes, outputs or {"y": 5}, name="fwd"))


FORWARD_FUSED = """\
graph fwd {
  %0 = input x : f32[3,5]
  %1 = param b : f32[5]
  %4 = fused[program=((add, {}, (0, 1)), (tanh, {}, (-1,)), (scale, {'by': 2.0}, (-1,)))](%0, %1) : f32[3,5]
  %5 = sum(%4) : f32[]
  return y=%5
}
"""  # noqa: E501


def test_forward_chain_add_tanh_scale_becomes_one_node():
    fused, report = run(forward_graph())
    assert fused.text() == FORWARD_FUSED
    assert (report.nodes_before, report.nodes_after) == (6, 4)
    assert report.bytes_saved == 2 * 15 * 4
    assert report.notes == ["%4 <- %2 add, %3 tanh, %4 scale"]
    program = fused.node(4).attrs["program"]
    assert program[2] == ("scale", {"by": 2.0}, (-1,))


def test_chain_broken_by_a_requested_output():
    fused, _ = run(forward_graph({"y": 5, "h": 3}))
    assert [n.text() for n in fused.nodes[2:]] == [
        "%3 = fused[program=((add, {}, (0, 1)), (tanh, {}, (-1,)))](%0, %1) : f32[3,5]",
        "%4 = scale[by=2.0](%3) : f32[3,5]",
        "%5 = sum(%4) : f32[]"]


def test_chain_broken_by_a_broadcast_of_the_running_value():
    nodes = [node(0, "input", shape=(3, 1), name="x"), node(1, "input", name="y"),
             node(2, "exp", 0, shape=(3, 1)), node(3, "mul", 2, 1), node(4, "neg", 3)]
    graph = verify(Graph(nodes, {"z": 4}, name="bc"))
    fused, _ = run(graph)
    assert [n.text() for n in fused.nodes[2:]] == [
        "%2 = exp(%0) : f32[3,1]",
        "%4 = fused[program=((mul, {}, (0, 1)), (neg, {}, (-1,)))](%2, %1) : f32[3,5]"]


def test_backward_chain_vjp_tanh_then_mul_has_gradient_and_output_operands():
    nodes = [node(0, "input", name="x"), node(1, "input", name="gy"), node(2, "input", name="w"),
             node(3, "tanh", 0), node(4, "vjp", 3, 1, index=0, of="tanh"),
             node(5, "mul", 2, 4)]
    graph = verify(Graph(nodes, {"y": 3, "gx": 5}, name="bwd"))
    fused, report = run(graph)
    assert fused.nodes[-1].text() == (
        "%5 = fused[program=((vjp:tanh, {}, (0, 1)), (mul, {}, (2, -1)))](%1, %3, %2) : f32[3,5]")
    assert report.nodes_removed == 1


def test_a_vjp_continues_a_chain_through_its_gradient():
    # gy = mul(a, b) feeds relu's vjp: the running value is the vjp's first operand.
    nodes = [node(0, "input", name="x"), node(1, "input", name="a"), node(2, "input", name="b"),
             node(3, "relu", 0), node(4, "mul", 1, 2), node(5, "vjp", 3, 4, index=0, of="relu"),
             node(6, "scale", 5, by=0.5)]
    graph = verify(Graph(nodes, {"y": 3, "gx": 6}, name="bwd"))
    fused, _ = run(graph)
    assert fused.nodes[-1].text() == (
        "%6 = fused[program=((mul, {}, (0, 1)), (vjp:relu, {}, (-1, 2)), "
        "(scale, {'by': 0.5}, (-1,)))](%1, %2, %3) : f32[3,5]")


def test_vjp_of_a_fused_linear_activation_is_fusable():
    nodes = [node(0, "input", shape=(3, 4), name="x"), node(1, "param", shape=(5, 4), name="W"),
             node(2, "input", name="gy"),
             node(3, "linear_act", 0, 1, activation="sigmoid"),
             node(4, "vjp", 3, 2, index=0, of="sigmoid"), node(5, "neg", 4)]
    fused, _ = run(verify(Graph(nodes, {"y": 3, "g": 5}, name="g")))
    assert fused.nodes[-1].text() == (
        "%5 = fused[program=((vjp:sigmoid, {}, (0, 1)), (neg, {}, (-1,)))](%2, %3) : f32[3,5]")


def test_only_output_only_vjps_of_the_first_input_qualify():
    nodes = [node(0, "input", name="x"), node(1, "input", name="gy"), node(2, "log", 0),
             node(3, "vjp", 2, 1, index=0, of="log"), node(4, "neg", 3)]
    graph = verify(Graph(nodes, {"y": 2, "g": 4}, name="g"))
    fused, report = run(graph)
    assert fused.text() == graph.text() and report.notes == ["nothing to fuse"]


def test_a_value_read_by_a_vjp_as_forward_input_is_not_fused_away():
    # %3 = tanh(%2): tanh's vjp %5 reads %3's input %2 per the conventions, so %2 stays.
    nodes = [node(0, "input", name="x"), node(1, "input", name="gy"),
             node(2, "exp", 0), node(3, "tanh", 2), node(4, "sum", 3, shape=()),
             node(5, "vjp", 3, 1, index=0, of="tanh")]
    graph = verify(Graph(nodes, {"loss": 4, "g": 5}, name="train"))
    fused, _ = run(graph)
    assert fused.text() == graph.text()


def test_a_value_with_two_readers_ends_a_chain():
    nodes = [node(0, "input", name="x"), node(1, "exp", 0), node(2, "neg", 1),
             node(3, "square", 2), node(4, "add", 1, 3)]
    graph = verify(Graph(nodes, {"y": 4}, name="g"))
    fused, _ = run(graph)
    # %1 has two readers; %2 -> %3 -> %4 is the chain (%3 is add's second operand).
    assert [n.text() for n in fused.nodes[1:]] == [
        "%1 = exp(%0) : f32[3,5]",
        "%4 = fused[program=((neg, {}, (0,)), (square, {}, (-1,)), (add, {}, (0, -1)))](%1) "
        ": f32[3,5]"]


def test_first_operand_wins_where_two_chains_meet_and_inputs_are_deduplicated():
    nodes = [node(0, "input", name="a"), node(1, "input", name="b"),
             node(2, "tanh", 0), node(3, "exp", 1), node(4, "mul", 2, 3), node(5, "mul", 4, 0)]
    graph = verify(Graph(nodes, {"y": 5}, name="g"))
    fused, _ = run(graph)
    assert [n.text() for n in fused.nodes[2:]] == [
        "%3 = exp(%1) : f32[3,5]",
        "%5 = fused[program=((tanh, {}, (0,)), (mul, {}, (-1, 1)), (mul, {}, (-1, 0)))]"
        "(%0, %3) : f32[3,5]"]


def test_non_fusable_ops_and_a_second_run_change_nothing():
    nodes = [node(0, "input", name="x"), node(1, "dropout", 0, ratio=0.5),
             node(2, "where", 0, 1, 1), node(3, "exp", 0), node(4, "neg", 3)]
    graph = verify(Graph(nodes, {"y": 4, "z": 2}, name="g"))
    once, _ = run(graph)
    assert [n.op for n in once.nodes] == ["input", "dropout", "where", "fused"]
    twice, report = run(once)
    assert twice.text() == once.text() and report.nodes_removed == 0


def test_fused_program_matches_the_unfused_numpy_result():
    """A reference interpreter of the documented semantics agrees with the unfused ops."""
    kernels = {"add": np.add, "mul": np.multiply, "neg": np.negative, "tanh": np.tanh,
               "exp": np.exp, "square": np.square,
               "scale": lambda a, by, out: np.multiply(a, by, out=out),
               "vjp:tanh": lambda gy, y, out: np.multiply(gy, 1 - y * y, out=out)}
    rng = np.random.default_rng(0)
    x, b = rng.standard_normal(F32).astype(np.float32), rng.standard_normal(5).astype(np.float32)
    fused, _ = run(forward_graph())
    out = np.empty(F32, np.float32)
    inputs = [x, b]
    for op, attrs, operands in fused.node(4).attrs["program"]:
        args = [out if k == -1 else inputs[k] for k in operands]
        kernels[op](*args, **attrs, out=out)
    np.testing.assert_allclose(out, np.tanh(x + b) * 2.0, rtol=1e-6)
