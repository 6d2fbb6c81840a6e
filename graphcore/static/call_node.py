"""One call of a compiled function as the graph sees it: ``Compiled`` (a cached program: its
trace, optimized IR, plans and buffer sets) and ``StaticCall`` (the graph node of one call,
whose backward replays the plan's backward half); ``run_call`` replays the forward half and
records the node.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.config import config
from graphcore.debug import check_forward
from graphcore.function_node import FunctionNode
from graphcore.static.lower import Plan
from graphcore.static.passes import PassReport
from graphcore.static.trace import Trace
from graphcore.variable import Parameter, Variable, constant


@dataclass
class Compiled:
    """One cached program: its trace, the optimized IR, its plans, and what compiling cost.

    ``plan`` is the first buffer set; a call made while every buffer set still awaits the
    backward of an earlier call lowers another one (``plans``), so no call overwrites the
    values another call's backward will read."""

    trace: Trace
    plan: Plan
    reports: list[PassReport]
    compile_ms: float
    plans: list[list] = field(default_factory=list)  # [plan, weakref to its StaticCall]
    param_list: list[Parameter] = field(default_factory=list)  # the plan's, in IR order
    grad_keys: list[str | None] = field(default_factory=list)  # per StaticCall input
    wanted: tuple[str, ...] = ()  # the inputs differentiated (Variables requiring grad)
    host_calls: list = field(default_factory=list)  # @static_code calls, replayed on each hit

    def __post_init__(self) -> None:
        self.plans = [[self.plan, None]]
        keys = self.trace.output_keys
        # what a call returns: the one Variable, a tuple of them, or a dict by name
        self.output_kind = Variable if keys == ["out"] else tuple if all(
            k.startswith("out") and k[3:].isdigit() for k in keys) else dict
        self.seed_names = [f"gy/{k}" if f"gy/{k}" in self.plan.seeds else None
                           for k in self.trace.output_keys]

    def buffers(self, plan: Plan) -> tuple[dict, list, list, tuple]:
        """``plan``'s outputs, its seed buffers by output (None: no gradient), its gradient
        buffers by ``StaticCall`` input, and the call's outputs in order, cached until the
        plan is lowered again."""
        cached = plan.call_buffers
        if cached is None or cached[0] is not plan.outputs:
            outputs = plan.outputs
            cached = plan.call_buffers = (
                outputs, [None if n is None else plan.seeds[n] for n in self.seed_names],
                [None if k is None else outputs[k] for k in self.grad_keys],
                tuple([outputs[k] for k in self.trace.output_keys]))
        return cached

    def acquire(self) -> list:
        """A buffer set no pending backward still needs (lowering a new one if none is).

        Sets no call needs any more are dropped beyond the first and the one handed out, so
        memory follows the number of calls awaiting backward, as in define-by-run."""
        first = self.plans[0]
        free = first if _free(first) else next((e for e in self.plans if _free(e)), None)
        if free is None:
            free = [Plan(self.plan.graph, self.trace.params, self.trace.instances), None]
            self.plans.append(free)
        if len(self.plans) > 2:
            self.plans = [e for e in self.plans if e is first or e is free or not _free(e)]
        return free

    @property
    def ir(self) -> str:
        return self.trace.graph.text()

    @property
    def optimized_ir(self) -> str:
        return self.plan.graph.text()


class StaticCall(FunctionNode):
    """The graph node of one call of a compiled function: its inputs are the call's inputs
    that need a gradient, then the parameters the plan reads; its outputs are the plan's.
    Its backward replays the plan's backward half with the gradients arriving at the
    outputs, so a loss computed from the outputs (outside the compiled function) reaches the
    parameters and the input Variables exactly as define-by-run would; the engine
    accumulates them into ``.grad``.

    Until its backward has run (or the node is freed), the node holds its plan's buffers
    (``_saved``): the compiled function gives the next call another buffer set."""

    __slots__ = ("compiled",)

    _checked_grads = False  # one gradient per input, of its shape, by construction
    lends_buffers = True  # parameter gradients are the plan's buffers (see ``backward``)
    higher_order = False

    def __init__(self, compiled: Compiled, plan: Plan) -> None:
        self.compiled = compiled
        self._saved = plan

    @property
    def label(self) -> str:
        return f"StaticCall({self.compiled.trace.graph.name})"

    def forward(self, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        plan = self._saved
        plan.run_arrays(inputs)
        return self.compiled.buffers(plan)[3]

    def walk_leaves(self, gy: np.ndarray | None) -> bool:
        """``backward()`` from this call's output when the node's inputs are all parameters
        (leaves): replay the backward half and hand each trained parameter its gradient,
        exactly as the engine's walk would (lent buffers, accumulation, release), without
        the walk's generic bookkeeping; a compiled training step is this and a forward."""
        compiled = self.compiled
        plan = self._saved
        if compiled.wanted or plan is None or config.debug or len(self.outputs) != 1 or (
                gy is not None and type(gy) is not np.ndarray):
            return False
        _, seed_buffers, grad_buffers, _ = compiled.buffers(plan)
        seed = seed_buffers[0]
        if seed is not None:
            seed[...] = 1.0 if gy is None else gy
        params = self.inputs
        for x, buf in zip(params, grad_buffers, strict=True):
            if buf is not None and x._grad is buf:  # still lent from an earlier backward
                x._grad = buf.copy()
        plan.run_backward()
        self._saved = None  # release the buffer set for the next call
        for x, buf in zip(params, grad_buffers, strict=True):
            if buf is None or not x.requires_grad:
                continue
            g = x._grad
            if g is not None:
                x._grad = g + buf  # a new sum, never in place: the caller may hold g
            else:  # lent, as the engine lends it (a view of another buffer is copied)
                x._grad = buf if buf.base is None else buf.copy()
        return True

    def backward(self, target_input_indexes: tuple[int, ...],
                 grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        if config.double_backprop:
            raise errors.GraphError(
                f"{self.label}: a compiled call gives first-order gradients only; "
                "differentiate define-by-run code for double backprop")
        plan = self._saved
        if plan is None:
            raise errors.GraphError(
                f"{self.label}: the values saved for backward were freed by an earlier "
                "backward(); call backward(retain_grad=True) to backpropagate twice")
        _, seed_buffers, grad_buffers, _ = self.compiled.buffers(plan)
        for buf, gy in zip(seed_buffers, grad_outputs, strict=True):
            if buf is not None:
                buf[...] = 0.0 if gy is None else gy  # a third of np.copyto's cost
        inputs = self.inputs
        n_inputs = len(self.compiled.wanted)  # node inputs: differentiated inputs, then params
        # A parameter whose .grad is still this plan's buffer from an earlier backward (no
        # cleargrads() since) gets its own copy before the buffer is overwritten: it is
        # accumulated into, as define-by-run would.
        for i in range(n_inputs, len(inputs)):
            buf = grad_buffers[i]
            if buf is not None and inputs[i]._grad is buf:
                inputs[i]._grad = buf.copy()
        plan.run_backward()
        # parameters: the plan's buffers, lent to .grad (a training step allocates nothing);
        # inputs: copies, since their gradients flow on into other nodes (the engine reads
        # only the targets' entries)
        if not n_inputs:
            return grad_buffers
        gxs = list(grad_buffers)
        for i in range(n_inputs):
            if gxs[i] is not None:
                gxs[i] = gxs[i].copy()
        return gxs


def _free(entry: list) -> bool:
    """Whether a ``[plan, weakref to StaticCall]`` entry's buffers are free: no call recorded
    on it, or its node is gone, or its backward ran (which releases ``_saved``)."""
    ref = entry[1]
    if ref is None:
        return True
    node = ref()
    return node is None or node._saved is not entry[0]


def run_call(compiled: Compiled, entry: list, arrays: list[np.ndarray],
              wanted: list[Variable]) -> tuple[Variable, ...]:
    """Replay the forward half on ``entry``'s buffers; when some input or parameter needs a
    gradient, record a ``StaticCall`` node (as ``FunctionNode.apply`` would, without wrapping
    data arrays in Variables: only differentiated inputs and the parameters are its inputs)."""
    node = StaticCall(compiled, entry[0])
    ys = node.forward(arrays)
    if config.debug:
        check_forward(node, tuple(arrays), ys)
    if config.enable_backprop:
        inputs = wanted + compiled.param_list if wanted else compiled.param_list
        for x in inputs:
            if x.requires_grad:
                entry[1] = weakref.ref(node)  # the buffers are this call's until its backward
                return node._record(tuple(inputs), ys)
    return tuple([constant(y) for y in ys])
