"""``fuse_concat_linear``: a linear layer of a concat becomes ``concat_linear`` (hand-built IR
before and after), and compiled RNN cells that use it equal define-by-run, gradients included."""

import copy

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
from graphcore.static.ir import Graph, Node, verify
from graphcore.static.passes.fuse_concat_linear import fuse_concat_linear
from graphcore.variable import Parameter, Variable


def node(id, op, *inputs, shape, dtype="float32", name=None, **attrs):
    return Node(id, op, tuple(inputs), attrs, shape, dtype, name)


def cell_graph(extra=(), outputs=None, axis=1, op="linear_act"):
    """One RNN cell, ``tanh(concat([x, h]) @ W.T + b)``, and its backward to ``W``, ``b``
    and ``h`` (``x`` is data: no gradient)."""
    act = {"activation": "tanh"} if op == "linear_act" else {}
    nodes = [
        node(0, "input", shape=(4, 3), name="x"),
        node(1, "input", shape=(4, 5), name="h"),
        node(2, "param", shape=(6, 8), name="W"),
        node(3, "param", shape=(6,), name="b"),
        node(4, "concat", 0, 1, shape=(4, 8), axis=axis),
        node(5, op, 4, 2, 3, shape=(4, 6), **act),
        node(6, "input", shape=(4, 6), name="gy"),
        node(7, "vjp", 5, 6, shape=(4, 6), index=0, of="tanh"),
        node(8, "vjp", 5, 7, shape=(4, 8), index=0, of="linear"),
        node(9, "vjp", 5, 7, shape=(6, 8), index=1, of="linear"),
        node(10, "vjp", 5, 7, shape=(6,), index=2, of="linear"),
        node(11, "vjp", 4, 8, shape=(4, 5), index=1, of="concat"),
        *extra,
    ]
    outputs = outputs or {"y": 5, "gW": 9, "gb": 10, "gh": 11}
    return verify(Graph(nodes, outputs, name="cell"))


CELL_FUSED = """\
graph cell {
  %0 = input x : f32[4,3]
  %1 = input h : f32[4,5]
  %2 = param W : f32[6,8]
  %3 = param b : f32[6]
  %5 = concat_linear[activation=tanh, sizes=(3, 5)](%0, %1, %2, %3) : f32[4,6]
  %6 = input gy : f32[4,6]
  %7 = vjp[index=0, of=tanh](%5, %6) : f32[4,6]
  %9 = vjp[index=2, of=concat_linear](%5, %7) : f32[6,8]
  %10 = vjp[index=3, of=concat_linear](%5, %7) : f32[6]
  %11 = vjp[index=1, of=concat_linear](%5, %7) : f32[4,5]
  return y=%5, gW=%9, gb=%10, gh=%11
}
"""


def run(graph):
    before_text, before_nodes = graph.text(), copy.deepcopy(graph.nodes)
    fused, report = fuse_concat_linear(graph)
    verify(fused)
    assert graph.text() == before_text and graph.nodes == before_nodes  # input untouched
    return fused, report


def test_cell_fuses_and_renumbers_the_vjps():
    fused, report = run(cell_graph())
    assert fused.text() == CELL_FUSED
    assert (report.nodes_before, report.nodes_after) == (12, 10)
    assert report.bytes_saved == 2 * 4 * 8 * 4  # the joined input and its gradient
    assert report.notes == ["%4 concat + %5 linear_act -> %5 concat_linear (2 parts)"]


def test_a_plain_linear_fuses_without_an_activation():
    fused, _ = run(cell_graph(op="linear"))
    assert fused.node(5).text() == \
        "%5 = concat_linear[activation=None, sizes=(3, 5)](%0, %1, %2, %3) : f32[4,6]"


@pytest.mark.parametrize("case", ["other reader", "concat output", "joined gradient output",
                                  "joined gradient read", "first axis"])
def test_left_alone(case):
    if case == "other reader":
        graph = cell_graph(extra=[node(12, "sum", 4, shape=())],
                           outputs={"y": 5, "gW": 9, "s": 12})
    elif case == "concat output":
        graph = cell_graph(outputs={"y": 5, "gW": 9, "c": 4})
    elif case == "joined gradient output":
        graph = cell_graph(outputs={"y": 5, "gW": 9, "gc": 8})
    elif case == "joined gradient read":
        graph = cell_graph(extra=[node(12, "sum", 8, shape=())],
                           outputs={"y": 5, "gW": 9, "s": 12})
    else:  # joined along the rows: not a linear of parts
        graph = verify(Graph([
            node(0, "input", shape=(2, 8), name="x"), node(1, "input", shape=(2, 8), name="h"),
            node(2, "param", shape=(6, 8), name="W"),
            node(3, "concat", 0, 1, shape=(4, 8), axis=0),
            node(4, "linear", 3, 2, shape=(4, 6))], {"y": 4}, name="rows"))
    fused, report = run(graph)
    assert fused.text() == graph.text() and report.notes == ["nothing to fuse"]


def _rnn(W, b, Wr, steps, mask_from):
    """An unrolled tanh RNN over ``xs`` whose carry keeps its value where ``keep`` is False."""
    def fn(xs, keep, h):
        for t in range(steps):
            new = F.tanh(F.linear(F.concat([F.get_item(xs, (slice(None), t)), h], axis=-1),
                                  W, b))
            h = F.where(F.get_item(keep, (slice(None), t, None)), new, h) if mask_from else new
        return F.sum(F.linear(h, Wr))
    return fn


@pytest.mark.parametrize("dtype,bias,masked", [(np.float64, True, True), (np.float64, False, True),
                                               (np.float32, True, False)])
def test_compiled_rnn_equals_define_by_run(dtype, bias, masked):
    rng = np.random.default_rng(7)
    n, steps, size, hidden = 5, 4, 3, 6
    W = Parameter(rng.standard_normal((hidden, size + hidden)).astype(dtype), name="W")
    b = Parameter(rng.standard_normal(hidden).astype(dtype), name="b") if bias else None
    Wr = Parameter(rng.standard_normal((2, hidden)).astype(dtype), name="Wr")
    params = {"W": W, "Wr": Wr, **({"b": b} if bias else {})}
    fn = _rnn(W, b, Wr, steps, masked)
    step = graphcore.compile(fn, params=params)
    tol = {"rtol": 1e-10, "atol": 1e-12} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-6}
    for _ in range(4):  # random cases through one plan: inputs, masks and weights change
        xs = rng.standard_normal((n, steps, size)).astype(dtype)
        keep = rng.random((n, steps)) < 0.6
        h0 = rng.standard_normal((n, hidden)).astype(dtype)
        got_h = Variable(h0.copy())
        for p in params.values():
            p.cleargrad()
        got = step(xs, keep, got_h)
        got.backward()
        got_grads = {k: p.grad.copy() for k, p in params.items()}
        want_h = Variable(h0.copy())
        for p in params.values():
            p.cleargrad()
        want = fn(Variable(xs, requires_grad=False), Variable(keep, requires_grad=False), want_h)
        want.backward()
        np.testing.assert_allclose(got.array, want.array, **tol)
        np.testing.assert_allclose(got_h.grad, want_h.grad, **tol)
        for k, p in params.items():
            np.testing.assert_allclose(got_grads[k], p.grad, **tol, err_msg=k)
        for p in params.values():
            p.array[...] -= 0.1 * p.grad
    assert step.stats.misses == 1
    plan = step.last.plan
    ops = {n.op for n in plan.graph.nodes}
    assert "concat_linear" in ops and "concat" not in ops
    generic = [s for s in plan.forward_steps + plan.backward_steps if getattr(s, "generic", 0)]
    assert not generic  # slices are views, where and concat_linear have kernels
    assert all(name != "get_item" for _, name in plan.forward_tags)


def test_one_dimensional_parts():
    rng = np.random.default_rng(3)
    W = Parameter(rng.standard_normal((4, 5)), name="W")
    b = Parameter(rng.standard_normal(4), name="b")

    def fn(x, h):
        return F.sum(F.tanh(F.linear(F.concat([x, h], axis=0), W, b)))

    step = graphcore.compile(fn, params={"W": W, "b": b})
    for _ in range(2):
        x, h0 = rng.standard_normal(2), rng.standard_normal(3)
        got_h, want_h = Variable(h0.copy()), Variable(h0.copy())
        W.cleargrad(), b.cleargrad()
        got = step(x, got_h)
        got.backward()
        gW, gb = W.grad.copy(), b.grad.copy()
        W.cleargrad(), b.cleargrad()
        want = fn(Variable(x, requires_grad=False), want_h)
        want.backward()
        np.testing.assert_allclose(got.array, want.array, rtol=1e-12)
        for a, w in ((gW, W.grad), (gb, b.grad), (got_h.grad, want_h.grad)):
            np.testing.assert_allclose(a, w, rtol=1e-10, atol=1e-12)
    assert any(n.op == "concat_linear" for n in step.last.plan.graph.nodes)
