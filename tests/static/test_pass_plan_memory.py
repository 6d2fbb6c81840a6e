"""``plan_memory``: slots by first/last use, greedy reuse, safe in-place, never for leaves,
aliases or outputs; checked against an independent simulation of the execution order."""

import copy

import numpy as np
import pytest

from graphcore.static.ir import ALIASING, LEAVES, Graph, Node, verify
from graphcore.static.passes.fuse_elementwise import fuse_elementwise
from graphcore.static.passes.fuse_linear import fuse_linear
from graphcore.static.passes.plan_memory import plan_memory

F32 = (3, 4)
NBYTES = 3 * 4 * 4


def node(id, op, *inputs, shape=F32, dtype="float32", name=None, **attrs):
    return Node(id, op, tuple(inputs), attrs, shape, dtype, name)


# --- the independent checker --------------------------------------------------------------

def live_ranges(graph):
    """(first, last) position of every value, by brute force: a node reads its inputs, a vjp
    also its forward node's inputs; reading an alias reads everything it is a view of; an
    output is read after the last node."""
    nodes = graph.nodes
    by_id = {n.id: n for n in nodes}

    def viewed(i):  # i and every value i may be a view of
        seen = [i]
        while by_id[seen[-1]].op in ALIASING:
            seen.append(by_id[seen[-1]].inputs[0])
        return seen

    reads = {k: set() for k in range(len(nodes) + 1)}
    for k, n in enumerate(nodes):
        direct = list(n.inputs) + (list(by_id[n.inputs[0]].inputs) if n.op == "vjp" else [])
        for i in direct:
            reads[k].update(viewed(i))
    for i in graph.outputs.values():
        reads[len(nodes)].update(viewed(i))
    ranges = {}
    for k, n in enumerate(nodes):
        uses = [p for p, values in reads.items() if n.id in values]
        ranges[n.id] = (k, max(uses, default=k))
    return ranges, viewed


def check_plan(graph):
    """No two values live at the same time share a slot, except a consumer computed in place
    over a listed input whose last use it is; slot kinds agree; the never-slotted stay so."""
    ranges, views = live_ranges(graph)
    by_id = {n.id: n for n in graph.nodes}
    for n in graph.nodes:
        if n.op in LEAVES or n.op in ALIASING or n.op == "guard" or n.shape is None \
                or n.id in graph.outputs.values():
            assert n.id not in graph.slots, n.text()
    order = [graph.slots[n.id] for n in graph.nodes if n.id in graph.slots]
    firsts = list(dict.fromkeys(order))
    assert firsts == list(range(len(firsts)))  # numbered from 0 in order of first use
    for a, slot_a in graph.slots.items():
        for b, slot_b in graph.slots.items():
            if a == b or slot_a != slot_b:
                continue
            na, nb = by_id[a], by_id[b]
            assert (na.shape, na.dtype) == (nb.shape, nb.dtype)
            (a_first, a_last), (b_first, _) = ranges[a], ranges[b]
            if a_first > b_first:
                continue
            if a_last < b_first:
                continue
            assert b_first == a_last and a in nb.inputs, f"%{a}, %{b} share slot {slot_a} live"
            check_in_place(graph, nb, a, views)
    return True


IN_PLACE_OK = ("add", "sub", "mul", "neg", "exp", "tanh", "scale", "fused")


def check_in_place(graph, consumer, value, views):
    """``consumer`` overwrites ``value``: an elementwise kernel that reads ``value`` directly
    only (no view of it), and, for a fused program, in its first instruction only."""
    assert consumer.op in IN_PLACE_OK, consumer.text()
    for i in consumer.inputs:
        assert i == value or value not in views(i), f"{consumer.text()} reads a view of %{value}"
    if consumer.op == "fused":
        ks = {k for k, i in enumerate(consumer.inputs) if i == value}
        assert all(not ks & set(ops) for _, _, ops in consumer.attrs["program"][1:])


def plan(graph):
    before_text, before_nodes = graph.text(), copy.deepcopy(graph.nodes)
    planned, report = plan_memory(graph)
    verify(planned)
    assert graph.text() == before_text and graph.nodes == before_nodes and graph.slots == {}
    assert planned.text() == graph.text()  # the plan is data beside the nodes
    check_plan(planned)
    return planned, report


# --- tests ---------------------------------------------------------------------------------

def test_elementwise_chain_runs_in_place_in_one_slot():
    nodes = [node(0, "input", name="x"), node(1, "exp", 0), node(2, "tanh", 1),
             node(3, "scale", 2, by=2.0), node(4, "sum", 3, shape=())]
    planned, report = plan(verify(Graph(nodes, {"y": 4}, name="chain")))
    assert planned.slots == {1: 0, 2: 0, 3: 0}
    assert report.bytes_before == 3 * NBYTES + 4
    assert report.bytes_after == NBYTES + 4
    assert report.notes == ["3 values in 1 slots", "2 in place", f"bytes {3 * NBYTES + 4} -> "
                            f"{NBYTES + 4}"]


def test_matmuls_reuse_freed_slots_but_never_in_place():
    nodes = [node(0, "input", shape=(3, 3), name="x"), node(1, "param", shape=(3, 3), name="W"),
             node(2, "matmul", 0, 1, shape=(3, 3)), node(3, "matmul", 2, 1, shape=(3, 3)),
             node(4, "matmul", 3, 1, shape=(3, 3)), node(5, "matmul", 4, 1, shape=(3, 3)),
             node(6, "sum", 5, shape=())]
    planned, report = plan(verify(Graph(nodes, {"y": 6}, name="mm")))
    assert planned.slots == {2: 0, 3: 1, 4: 0, 5: 1}
    assert report.notes[:2] == ["4 values in 2 slots", "0 in place"]
    assert report.bytes_saved == 2 * 36


def test_outputs_and_leaves_get_no_slot_and_are_never_reused():
    nodes = [node(0, "input", name="x"), node(1, "const"), node(2, "exp", 0),
             node(3, "add", 2, 1), node(4, "tanh", 3), node(5, "neg", 4)]
    graph = verify(Graph(nodes, {"h": 3, "y": 5}, {1: np.ones(F32, np.float32)}, name="g"))
    planned, report = plan(graph)
    # %3 and %5 are outputs: their own buffers, so %3 does not run in place over %2 nor %4
    # over %3; %2's slot is free once %3 has run, and %4 takes it.
    assert planned.slots == {2: 0, 4: 0}
    assert report.notes[:2] == ["2 values in 1 slots", "0 in place"]
    assert 0 not in planned.slots and 1 not in planned.slots


def test_an_alias_keeps_its_source_alive():
    nodes = [node(0, "input", name="x"), node(1, "exp", 0),
             node(2, "reshape", 1, shape=(4, 3)),
             node(3, "tanh", 0),  # would take %1's slot if %2 did not keep %1 alive
             node(4, "transpose", 2, shape=(3, 4)),  # an alias of an alias
             node(5, "add", 3, 4), node(6, "sum", 5, shape=())]
    planned, _ = plan(verify(Graph(nodes, {"y": 6}, name="alias")))
    assert planned.slots == {1: 0, 3: 1, 5: 1}  # %5 in place over %3, never over %1's views


def test_a_value_read_through_an_alias_at_the_same_node_is_not_overwritten():
    nodes = [node(0, "input", shape=(4, 4), name="x"), node(1, "exp", 0, shape=(4, 4)),
             node(2, "transpose", 1, shape=(4, 4)), node(3, "add", 1, 2, shape=(4, 4)),
             node(4, "sum", 3, shape=())]
    planned, report = plan(verify(Graph(nodes, {"y": 4}, name="g")))
    assert planned.slots == {1: 0, 3: 1} and report.notes[1] == "0 in place"


def test_an_output_viewed_through_an_alias_keeps_its_source_alive_to_the_end():
    nodes = [node(0, "input", name="x"), node(1, "exp", 0),
             node(2, "reshape", 1, shape=(12,)), node(3, "tanh", 0), node(4, "neg", 3)]
    planned, _ = plan(verify(Graph(nodes, {"flat": 2, "y": 4}, name="g")))
    assert planned.slots == {1: 0, 3: 1}


def test_a_forward_activation_stays_alive_until_its_vjp():
    nodes = [node(0, "input", name="x"), node(1, "input", name="gy"),
             node(2, "exp", 0),        # tanh's input: its vjp reads it too (conventions)
             node(3, "tanh", 2),       # so not in place over %2, which lives until %6
             node(4, "sum", 3, shape=()),
             node(5, "neg", 1),        # no free slot yet: %2 and %3 are still needed
             node(6, "vjp", 3, 5, index=0, of="tanh"),
             node(7, "mul", 6, 6),     # in place over %6
             node(8, "sum", 7, shape=())]
    planned, report = plan(verify(Graph(nodes, {"loss": 4, "gx": 8}, name="train")))
    assert planned.slots == {2: 0, 3: 1, 5: 2, 6: 3, 7: 3}
    assert report.notes[:2] == ["5 values in 4 slots", "1 in place"]


def test_fused_runs_in_place_only_over_inputs_its_first_instruction_alone_reads():
    program_once = (("tanh", {}, (0,)), ("mul", {}, (-1, 1)))
    program_twice = (("tanh", {}, (0,)), ("mul", {}, (-1, 0)))
    for program, in_place in ((program_once, True), (program_twice, False)):
        nodes = [node(0, "input", name="x"), node(1, "input", name="w"), node(2, "exp", 0),
                 node(3, "fused", 2, 1, program=program), node(4, "sum", 3, shape=())]
        planned, _ = plan(verify(Graph(nodes, {"y": 4}, name="g")))
        assert (planned.slots[3] == planned.slots[2]) is in_place


def test_linear_act_never_runs_in_place_but_frees_and_reuses():
    nodes = [node(0, "input", shape=(3, 3), name="x"), node(1, "param", shape=(3, 3), name="W"),
             node(2, "exp", 0, shape=(3, 3)),
             node(3, "linear_act", 2, 1, shape=(3, 3), activation="relu"),
             node(4, "neg", 3, shape=(3, 3)), node(5, "exp", 4, shape=(3, 3)),
             node(6, "sum", 5, shape=())]
    planned, report = plan(verify(Graph(nodes, {"y": 6}, name="g")))
    assert planned.slots == {2: 0, 3: 1, 4: 1, 5: 1} and report.notes[1] == "2 in place"


def test_vjps_never_run_in_place():
    nodes = [node(0, "input", name="x"), node(1, "input", name="gy"), node(2, "exp", 0),
             node(3, "neg", 1), node(4, "vjp", 2, 3, index=0, of="exp"),
             node(5, "sum", 4, shape=())]
    planned, report = plan(verify(Graph(nodes, {"y": 5}, name="g")))
    assert planned.slots == {2: 0, 3: 1, 4: 2} and report.notes[1] == "0 in place"


def mlp_training_graph(depth=4, width=6, batch=5):
    """Forward + backward of a tanh MLP ending in a sum, as a tracer would record it."""
    nodes, n = [node(0, "input", shape=(batch, width), name="x")], 1
    acts, layers = [0], []
    for layer in range(depth):
        W = node(n, "param", shape=(width, width), name=f"/l{layer}/W")
        b = node(n + 1, "param", shape=(width,), name=f"/l{layer}/b")
        lin = node(n + 2, "linear", acts[-1], n, n + 1, shape=(batch, width))
        act = node(n + 3, "tanh", n + 2, shape=(batch, width))
        nodes += [W, b, lin, act]
        layers.append((lin.id, act.id, W.id))
        acts.append(act.id)
        n += 4
    nodes.append(node(n, "sum", acts[-1], shape=()))
    loss, n = n, n + 1
    nodes.append(node(n, "const", shape=()))
    nodes.append(node(n + 1, "vjp", loss, n, shape=(batch, width), index=0, of="sum"))
    grad, n = n + 1, n + 2
    outputs = {"loss": loss}
    for lin, act, W in reversed(layers):
        nodes.append(node(n, "vjp", act, grad, shape=(batch, width), index=0, of="tanh"))
        nodes.append(node(n + 1, "vjp", lin, n, shape=(width, width), index=1, of="linear"))
        nodes.append(node(n + 2, "vjp", lin, n, shape=(width,), index=2, of="linear"))
        outputs[f"gW{W}"], outputs[f"gb{W}"] = n + 1, n + 2
        if lin != layers[0][0]:
            nodes.append(node(n + 3, "vjp", lin, n, shape=(batch, width), index=0, of="linear"))
            grad, n = n + 3, n + 4
        else:
            n += 3
    consts = {loss + 1: np.ones((), np.float32)}
    return verify(Graph(nodes, outputs, consts, name="mlp"))


def test_training_mlp_plans_are_sound_before_and_after_fusion():
    graph = mlp_training_graph()
    planned, report = plan(graph)
    assert report.bytes_saved > 0
    fused, _ = fuse_linear(graph)
    fused, _ = fuse_elementwise(fused)
    planned_fused, report_fused = plan(fused)
    assert report_fused.bytes_after < report.bytes_after
    assert len(set(planned_fused.slots.values())) < len(planned_fused.slots)


def random_graph(rng, name, size=30):
    """Elementwise ops, matmuls, transposes (views), exp vjps and fused nodes, at random."""
    nodes = [node(0, "input", shape=(2, 3), name="a"), node(1, "input", shape=(3, 2), name="b")]
    for i in range(2, size):
        pick = rng.integers(6)
        a = nodes[rng.integers(len(nodes))]
        same = [m for m in nodes if m.shape == a.shape]
        b = same[rng.integers(len(same))]
        if pick == 0:
            nodes.append(node(i, "add", a.id, b.id, shape=a.shape))
        elif pick == 1:
            nodes.append(node(i, "tanh", a.id, shape=a.shape))
        elif pick == 2:
            nodes.append(node(i, "transpose", a.id, shape=a.shape[::-1]))
        elif pick == 3:
            other = [m for m in nodes if m.shape[0] == a.shape[1]]
            c = other[rng.integers(len(other))]
            nodes.append(node(i, "matmul", a.id, c.id, shape=(a.shape[0], c.shape[1])))
        elif pick == 4:
            forward = [m for m in nodes if m.op == "exp" and m.shape == a.shape]
            if forward:
                f = forward[rng.integers(len(forward))]
                nodes.append(node(i, "vjp", f.id, b.id, shape=a.shape, index=0, of="exp"))
            else:
                nodes.append(node(i, "exp", a.id, shape=a.shape))
        else:
            program = (("tanh", {}, (0,)), ("add", {}, (-1, int(rng.integers(2)))))
            nodes.append(node(i, "fused", a.id, b.id, shape=a.shape, program=program))
    outputs = {f"o{k}": int(rng.integers(2, size)) for k in range(3)}
    return verify(Graph(nodes, outputs, name=name))


def execute(graph, inputs, shared):
    """Run ``graph`` with numpy ``out=`` kernels; with ``shared``, nodes of one slot write into
    one buffer (as the lowering does), otherwise each value has its own."""
    values, buffers = {}, {}
    by_id = {n.id: n for n in graph.nodes}
    for n in graph.nodes:
        ins = [values[i] for i in n.inputs]
        if n.op == "input":
            values[n.id] = inputs[n.name]
            continue
        if n.op == "transpose":
            values[n.id] = ins[0].T
            continue
        slot = graph.slots.get(n.id) if shared else None
        out = buffers.setdefault(slot, np.empty(n.shape)) if slot is not None \
            else np.empty(n.shape)
        if n.op == "fused":
            for op, _, operands in n.attrs["program"]:
                args = [out if k == -1 else ins[k] for k in operands]
                getattr(np, {"tanh": "tanh", "add": "add"}[op])(*args, out=out)
        elif n.op == "vjp":
            np.multiply(ins[1], values[by_id[n.inputs[0]].id], out=out)
        else:
            getattr(np, n.op)(*ins, out=out)
        values[n.id] = out
    return {k: values[i].copy() for k, i in graph.outputs.items()}


def test_random_graphs_never_share_a_slot_between_live_values():
    rng = np.random.default_rng(7)
    for trial in range(150):
        planned, _ = plan(random_graph(rng, f"random{trial}"))
        inputs = {"a": rng.standard_normal((2, 3)), "b": rng.standard_normal((3, 2))}
        with np.errstate(all="ignore"):
            alone, shared = execute(planned, inputs, False), execute(planned, inputs, True)
        for key in alone:
            np.testing.assert_array_equal(shared[key], alone[key])


def test_the_checker_catches_a_slot_shared_while_live():
    nodes = [node(0, "input", name="x"), node(1, "exp", 0), node(2, "tanh", 0),
             node(3, "add", 1, 2), node(4, "sum", 3, shape=())]
    planned, _ = plan(verify(Graph(nodes, {"y": 4}, name="g")))
    assert planned.slots == {1: 0, 2: 1, 3: 0}
    planned.slots = {1: 0, 2: 0, 3: 1}  # %1 is still needed when %2 is written
    with pytest.raises(AssertionError, match="share slot"):
        check_plan(planned)
    inputs = {"x": np.arange(12.0).reshape(F32) / 12}
    assert not np.array_equal(execute(planned, inputs, True)["y"],
                              execute(planned, inputs, False)["y"])
