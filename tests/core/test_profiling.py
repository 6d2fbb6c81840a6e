"""``profile_ops()``: exact per-op counts, self times that add up, methods put back after the
block (also after an exception), nested blocks, and op classes defined inside a block."""

import threading

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
from graphcore import FunctionNode, Variable
from graphcore.ops.activation import ReLU
from graphcore.ops.arithmetic import Add, _Binary
from graphcore.ops.linalg import LinearFunction
from graphcore.ops.reduction import Sum
from graphcore.profiling import is_profiling, profile_ops


def small_graph():
    """linear -> relu -> sum, then backward: one forward and one backward per op."""
    rng = np.random.default_rng(0)
    x = Variable(rng.standard_normal((3, 4)))
    W = Variable(rng.standard_normal((5, 4)))
    loss = F.sum(F.relu(F.linear(x, W)))
    loss.backward()
    return loss


def methods():
    """Every forward/backward/apply a class defines itself, by identity."""
    classes = [FunctionNode, _Binary, *graphcore.all_ops().values()]
    return {(cls, name): cls.__dict__[name] for cls in classes
            for name in ("forward", "backward", "apply") if name in cls.__dict__}


def test_counts_are_exact_for_a_small_graph():
    with profile_ops() as report:
        small_graph()
    assert set(report.ops) == {"LinearFunction", "ReLU", "Sum"}
    for op in report.ops.values():
        assert (op.calls, op.backward_calls) == (1, 1)
        assert op.forward_ms > 0 and op.backward_ms > 0
    assert sum(report.share(op) for op in report.ops) == pytest.approx(1.0)
    assert report.wall_ms >= report.total_ms > 0
    doc = report.to_dict()
    assert [row["op"] for row in doc["ops"]] == [t.op for t in report.rows()]
    assert {"op", "calls", "backward_calls", "forward_ms", "backward_ms", "total_ms",
            "share"} <= set(doc["ops"][0])


def test_calls_scale_with_iterations_and_inherited_methods_name_the_subclass():
    with profile_ops() as report:
        for _ in range(3):
            small_graph()
        a = Variable(np.ones(2))
        F.sum(a + a).backward()  # Add inherits forward from _Binary
    assert report.ops["LinearFunction"].calls == 3
    assert report.ops["Add"].calls == 1 and report.ops["Add"].backward_calls == 1
    assert "_Binary" not in report.ops


def test_methods_are_restored_and_outside_the_block_nothing_is_recorded():
    before = methods()
    with profile_ops() as report:
        assert LinearFunction.__dict__["forward"] is not before[(LinearFunction, "forward")]
        assert is_profiling()
    assert methods() == before
    assert not is_profiling()
    small_graph()
    assert report.ops == {}


def test_an_exception_restores_the_methods_and_the_block_still_reports():
    before = methods()

    class Boom(FunctionNode):
        def forward(self, inputs):
            raise ZeroDivisionError("boom")

    with pytest.raises(ZeroDivisionError), profile_ops() as report:  # a user op keeps its error
        y = F.relu(Variable(np.ones(2)))
        Boom().apply((y,))
    assert methods() == before
    assert Boom.__dict__["forward"].__name__ == "forward" and not is_profiling()
    assert report.ops["ReLU"].calls == 1 and report.ops["Boom"].calls == 1
    # the timing stack was unwound: a later block measures normally
    with profile_ops() as again:
        small_graph()
    assert again.ops["ReLU"].calls == 1


def test_nested_blocks_each_see_their_own_ops():
    before = methods()
    with profile_ops() as outer:
        small_graph()
        with profile_ops() as inner:
            F.relu(Variable(np.ones(2)))
        assert methods() != before  # the outer block still profiles
        F.relu(Variable(np.ones(2)))
    assert methods() == before
    assert inner.ops["ReLU"].calls == 1 and set(inner.ops) == {"ReLU"}
    assert outer.ops["ReLU"].calls == 3 and outer.ops["LinearFunction"].calls == 1


def test_an_op_class_defined_inside_the_block_is_profiled_then_restored():
    with profile_ops() as report:
        class Twice(FunctionNode):
            def forward(self, inputs):
                return inputs[0] * 2,

            def backward(self, indexes, grad_outputs):
                return grad_outputs[0] * 2,

        original = Twice.__dict__["forward"]
        x = Variable(np.ones(3))
        F.sum(Twice().apply((x,))[0]).backward()
        F.sum(Twice().apply((x,))[0]).backward()
        assert Twice.__dict__["forward"] is not original
    assert Twice.__dict__["forward"] is original
    assert (report.ops["Twice"].calls, report.ops["Twice"].backward_calls) == (2, 2)


def test_times_are_self_times_when_an_op_calls_other_ops():
    class Composite(FunctionNode):
        """A forward that applies other ops (Add, Sum) and a parent's forward via super()."""

        def forward(self, inputs):
            x, = inputs
            inner = F.sum(Add().apply((x, x))[0])
            return np.asarray(inner.array),

    class Child(Composite):
        def forward(self, inputs):
            return super().forward(inputs)

    with profile_ops() as report:
        Child().apply((np.ones(4),))
    assert report.ops["Child"].calls == 1  # the super() call is not counted twice
    assert "Composite" not in report.ops
    assert report.ops["Add"].calls == 1 and report.ops["Sum"].calls == 1
    assert sum(report.share(op) for op in report.ops) == pytest.approx(1.0)
    assert report.total_ms <= report.wall_ms


def test_double_backprop_counts_the_ops_its_backward_runs():
    x = Variable(np.array([1.0, 2.0]))
    with profile_ops() as report:
        y = F.sum(x * x * x)
        gx, = graphcore.grad([y], [x], enable_double_backprop=True)
        F.sum(gx).backward()
    assert report.ops["Mul"].backward_calls >= 2
    assert report.ops["Mul"].calls > 2  # the first backward recorded more multiplications
    np.testing.assert_allclose(x.grad, 6 * x.array)


def test_other_threads_keep_their_own_timing_stack():
    errors = []

    def work():
        try:
            small_graph()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    with profile_ops() as report:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        small_graph()
        for t in threads:
            t.join()
    assert not errors
    assert report.ops["LinearFunction"].calls == 5
    assert report.ops[Sum.__name__].backward_calls == 5 and ReLU.__name__ in report.ops


def test_static_plans_report_their_steps_per_op():
    """A compiled call has no op objects to wrap: its plan charges each IR node's steps to
    its op, forward steps as forward and gradient steps as backward (issue: empty tables)."""
    import graphcore.links as L

    layer = L.Linear(4, 5)
    step = graphcore.compile(lambda x: F.sum(F.relu(layer(x))), params=layer)
    x = np.ones((3, 4), np.float32)
    step(x).backward()  # compiled outside the block
    with profile_ops() as report:
        for _ in range(4):
            layer.cleargrads()
            step(x).backward()
    rows = {t.op: t for t in report.rows()}
    assert rows["linear_act(relu)"].calls == 4  # linear + relu, fused by the passes
    assert rows["sum"].calls == 4 and rows["sum"].backward_calls == 4
    assert rows["linear"].backward_calls == 8  # the gradients of W and of b
    assert rows["relu"].backward_calls == 4
    assert all(t.total_ms > 0 for t in rows.values() if t.op != "StaticCall")
    assert report.total_ms > 0
    assert report.total_ms <= report.wall_ms
    with profile_ops() as outside:
        pass
    step(x).backward()  # after the block: nothing recorded
    assert outside.ops == {}
