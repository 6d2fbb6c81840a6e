"""``mask_grads``: the vjps of a ``where`` on a mask slice become products with factors cast
once from the whole mask (hand-built IR before and after); equality of compiled and
define-by-run RNNs that use it is in ``test_pass_fuse_concat_linear.py``."""

import copy

import numpy as np

import graphcore
import graphcore.functions as F
from graphcore.static.ir import Graph, Node, verify
from graphcore.static.passes.mask_grads import mask_select_grads
from graphcore.variable import Parameter, Variable


def node(id, op, *inputs, shape, dtype="float32", name=None, **attrs):
    return Node(id, op, tuple(inputs), attrs, shape, dtype, name)


def carry_graph(index=(slice(None), 0, None), cond_dtype="bool", y_shape=(4, 3)):
    nodes = [
        node(0, "input", shape=(4, 5), dtype=cond_dtype, name="mask"),
        node(1, "input", shape=(4, 3), name="x"),
        node(2, "input", shape=y_shape, name="y"),
        node(3, "get_item", 0, shape=(4, 1), dtype=cond_dtype, index=index),
        node(4, "where", 3, 1, 2, shape=(4, 3)),
        node(5, "input", shape=(4, 3), name="gy"),
        node(6, "vjp", 4, 5, shape=(4, 3), index=1, of="where"),
        node(7, "vjp", 4, 5, shape=y_shape, index=2, of="where"),
    ]
    return verify(Graph(nodes, {"w": 4, "gx": 6, "gy": 7}, name="carry"))


CARRY = """\
graph carry {
  %0 = input mask : b1[4,5]
  %1 = input x : f32[4,3]
  %2 = input y : f32[4,3]
  %3 = get_item[index=(None:None:None, 0, None)](%0) : b1[4,1]
  %4 = where(%3, %1, %2) : f32[4,3]
  %5 = input gy : f32[4,3]
  %8 = cast[dtype=float32](%0) : f32[4,5]
  %9 = get_item[index=(None:None:None, 0, None)](%8) : f32[4,1]
  %6 = mul(%5, %9) : f32[4,3]
  %10 = rsub_scalar[value=1.0](%8) : f32[4,5]
  %11 = get_item[index=(None:None:None, 0, None)](%10) : f32[4,1]
  %7 = mul(%5, %11) : f32[4,3]
  return w=%4, gx=%6, gy=%7
}
"""


def run(graph):
    before_text, before_nodes = graph.text(), copy.deepcopy(graph.nodes)
    new, report = mask_select_grads(graph)
    verify(new)
    assert graph.text() == before_text and graph.nodes == before_nodes  # input untouched
    return new, report


def test_both_gradients_become_products():
    new, report = run(carry_graph())
    assert new.text() == CARRY
    assert report.notes == ["2 where vjps -> mul by 2 factor(s) of 1 mask(s)"]


def test_left_alone_when_the_condition_is_an_advanced_index():
    graph = carry_graph(index=(np.array([0, 1, 2, 3]), 0, None))
    new, report = run(graph)
    assert new.text() == graph.text() and report.notes == ["nothing to rewrite"]


def test_a_broadcast_input_keeps_its_vjp():
    new, report = run(carry_graph(y_shape=(3,)))  # y's gradient sums over rows: left alone
    assert [n.op for n in new.nodes if n.id in (6, 7)] == ["mul", "vjp"]
    assert report.notes == ["1 where vjps -> mul by 1 factor(s) of 1 mask(s)"]


def test_products_equal_the_ops_gradients_nan_included():
    a = Parameter(np.array([[1.0, 2.0], [3.0, 4.0]]), name="a")
    b = Parameter(np.array([[5.0, 6.0], [7.0, 8.0]]), name="b")

    def fn(mask, gy):
        w = F.where(F.get_item(mask, (slice(None), 1, None)), a, b)
        return F.sum(w * gy)

    step = graphcore.compile(fn, params={"a": a, "b": b})
    mask = np.array([[True, False, True], [False, True, False]])
    gy = np.array([[np.nan, 1.0], [np.inf, -2.0]])
    for m in (mask, ~mask):
        grads = []
        for call in (step, fn):
            a.cleargrad(), b.cleargrad()
            args = (m, gy) if call is step else (Variable(m, requires_grad=False),
                                                  Variable(gy, requires_grad=False))
            with np.errstate(invalid="ignore"):
                call(*args).backward()
            grads.append((a.grad.copy(), b.grad.copy()))
        np.testing.assert_array_equal(grads[0][0], grads[1][0])
        np.testing.assert_array_equal(grads[0][1], grads[1][1])
    assert any(r.name == "mask_grads" and r.notes[0].startswith("2 where")
               for r in step.last.reports)
