"""Lowering: an optimized IR becomes a ``Plan`` — buffers allocated once, a flat list of steps.

Each step is a zero-argument callable bound to its buffers, so a replay is one loop over
steps that creates no Variable, no graph object and (for ops with dedicated kernels) no
array. Forward steps and backward steps are kept apart so a call that needs no gradient
skips the backward half.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from graphcore import errors, profiling
from graphcore.config import config
from graphcore.static import kernels
from graphcore.static.guards import guard_step, partition_step
from graphcore.static.ir import ALIASING, Graph, Node, ancestors, basic_index
from graphcore.static.kernels import concat_linear as concat_linear_kernels
from graphcore.variable import Parameter


class Plan:
    """A lowered program. ``run(inputs, backward)`` replays it and returns the output buffers
    (reused by the next call: copy what you keep)."""

    def __init__(self, graph: Graph, params: Mapping[str, Parameter],
                 instances: Mapping[int, Any], *, after_trace: bool = False) -> None:
        """``after_trace``: the next replay follows the traced run of the same inputs, and
        its random ops reuse the traced run's draws (see ``kernels.generic_forward``)."""
        self.graph = graph
        self.params = dict(params)
        self.instances = dict(instances)
        self._after_trace = after_trace
        self.call_buffers: Any = None  # a caller's view of the buffers (call_node.StaticCall)
        self._lower()

    def _lower(self) -> None:
        graph = self.graph
        by_id = {n.id: n for n in graph.nodes}
        # the arrays the kernels are bound to; `stale` notices a parameter given a new one
        self._bound = [(p, p.array) for p in self.params.values()]
        values: dict[int, Any] = {}
        slot_buffers: dict[int, np.ndarray] = {}
        self.inputs: dict[str, np.ndarray] = {}
        self.seeds: dict[str, np.ndarray] = {}  # ``gy/<output>``: gradients from outside
        forward_ids = _forward_set(graph)
        # Memory planning assumed node order; running the forward half first keeps that
        # order only if no forward node comes after a backward one.
        computed = [n for n in graph.nodes if n.op not in ("input", "param", "const")]
        positions = [k for k, n in enumerate(computed) if n.id in forward_ids]
        if positions and positions[-1] >= len(positions):
            raise errors.TraceError("static plan: a forward node follows a backward node")
        ctx = kernels.Context(self.instances, first_replay=self._after_trace)
        self._after_trace = False
        self.forward_steps: list = []
        self.backward_steps: list = []
        # per step: (node id, what a profile calls it); read only while profiling
        self.forward_tags: list[tuple[int, str]] = []
        self.backward_tags: list[tuple[int, str]] = []
        self.allocated_bytes = 0
        for node in graph.nodes:
            if node.op == "input":
                table = self.seeds if node.name.startswith("gy/") else self.inputs
                values[node.id] = table[node.name] = np.empty(node.shape, node.dtype)
                continue
            if node.op == "param":
                values[node.id] = self.params[node.name].array
                continue
            if node.op == "const":
                values[node.id] = graph.consts[node.id]
                continue
            ins = [values[i] for i in node.inputs]
            if node.op in ALIASING:
                view = _alias(node, ins)
                if view is not None:
                    values[node.id] = view
                    continue
            if node.op == "guard":
                step = guard_step(node, graph, values)
            elif node.op == "partition":  # a batched if split by rows (static/guards.py)
                out = self._buffer(node, slot_buffers)
                values[node.id] = out
                step = partition_step(ins, out, self.instances[node.id])
            else:
                out = self._buffer(node, slot_buffers)
                values[node.id] = out
                step = self._kernel(node, by_id, values, ins, out, ctx)
            if step is not None:
                forward = node.id in forward_ids
                target = self.forward_steps if forward else self.backward_steps
                tags = self.forward_tags if forward else self.backward_tags
                steps = step if isinstance(step, kernels.Steps) else [step]
                target.extend(steps)
                tags.extend([(node.id, _profile_name(node))] * len(steps))
        self.outputs = {key: values[i] for key, i in graph.outputs.items()}
        # (parameter name, buffer) of each ``grad/<name>`` output: what a caller hands out
        self.grad_outputs = [(key[5:], buf) for key, buf in self.outputs.items()
                             if key.startswith("grad/")]
        # a half whose steps are all kernels never reads the config: no switching around it
        self._generic = {"forward": any(getattr(s, "generic", False)
                                        for s in self.forward_steps),
                         "backward": any(getattr(s, "generic", False)
                                         for s in self.backward_steps)}

    def _buffer(self, node: Node, slots: dict[int, np.ndarray]) -> Any:
        if node.shape is None:  # a tuple-valued node: one buffer per projected output
            outs = []
            for proj in (n for n in self.graph.nodes if n.op == "project"
                         and n.inputs == (node.id,)):
                while len(outs) <= proj.attrs["index"]:
                    outs.append(None)
                outs[proj.attrs["index"]] = np.empty(proj.shape, proj.dtype)
            return outs
        slot = self.graph.slots.get(node.id)
        if slot is not None and slot in slots:
            return slots[slot]
        buf = np.empty(node.shape, node.dtype)
        self.allocated_bytes += buf.nbytes
        if slot is not None:
            slots[slot] = buf
        return buf

    def _kernel(self, node: Node, by_id: dict[int, Node], values: dict[int, Any], ins: list,
                out: Any, ctx: kernels.Context):
        if node.op == "vjp":
            fwd = by_id[node.inputs[0]]
            fwd_ins = [values[i] for i in fwd.inputs]
            fwd_out = values[fwd.id]
            gys = ins[1:]
            builder = kernels.VJP.get(node.attrs["of"])
            if fwd.op in ("linear_act", "matmul_bias", "convolution_act"):
                builder = kernels.vjp_linear_act
            elif fwd.op == "concat_linear":  # no op of its own to fall back to
                builder = concat_linear_kernels.vjp_concat_linear
            step = builder(node, fwd, fwd_ins, fwd_out, gys, out, ctx) if builder else None
            if step is None:
                outs = fwd_out if isinstance(fwd_out, list) else [fwd_out]
                step = kernels.generic_vjp(node, fwd, fwd_ins, outs, gys, out, ctx)
            return step
        builder = kernels.FORWARD.get(node.op)
        step = builder(node, ins, out, ctx) if builder else None
        if step is None and node.op == "matmul" and all(a.ndim >= 2 for a in ins):
            step = kernels.partial(np.matmul, ins[0], ins[1], out=out)
        if step is None and not isinstance(out, list):
            step = kernels.elementwise_step(node.op, dict(node.attrs), ins, out,
                                            kernels.scratch(out))
        if step is None:
            step = kernels.generic_forward(node, ins, out if isinstance(out, list) else [out],
                                           ctx)
        return step

    # --- replay -----------------------------------------------------------------------------
    def stale(self) -> bool:
        """True when a parameter's array was replaced (not updated in place) since lowering."""
        for p, array in self._bound:
            if p._array is not array:
                return True
        return False

    def run(self, inputs: Mapping[str, np.ndarray], backward: bool = True) -> dict[str, Any]:
        """Copy ``inputs`` in, run the forward half (and the backward half if asked)."""
        for p, bound in self._bound:  # stale(), inlined: this is every replay
            if p._array is not bound:
                self._lower()
                break
        for name, buf in self.inputs.items():
            np.copyto(buf, inputs[name])
        self._steps(self.forward_steps, self.forward_tags, "forward")
        if backward:
            self._steps(self.backward_steps, self.backward_tags, "backward")
        return self.outputs

    def run_arrays(self, arrays: Sequence[np.ndarray]) -> dict[str, Any]:
        """``run(inputs, backward=False)`` with the inputs in the order of ``self.inputs``."""
        for p, bound in self._bound:  # stale(), inlined: this is every replay
            if p._array is not bound:
                self._lower()
                break
        for buf, array in zip(self.inputs.values(), arrays, strict=True):
            buf[...] = array  # a third of np.copyto's cost on small arrays; same dtype
        self._steps(self.forward_steps, self.forward_tags, "forward")
        return self.outputs

    def run_backward(self, seeds: Mapping[str, np.ndarray] | None = None) -> dict[str, Any]:
        """Run the backward half on the values the last ``run`` left in the buffers, with
        ``seeds`` (``gy/<output>`` -> array) as the outputs' gradients when it has seeds."""
        if seeds:
            for name, buf in self.seeds.items():
                np.copyto(buf, seeds[name])
        self._steps(self.backward_steps, self.backward_tags, "backward")
        return self.outputs

    def _steps(self, steps: list, tags: list[tuple[int, str]], phase: str) -> None:
        if not (self._generic[phase] or profiling.is_profiling()):
            for step in steps:  # kernels only: they never read the config
                step()
            return
        # Ops that fall back to their own backward run it on arrays (first order, no graph).
        old_backprop, old_double = config.enable_backprop, config.double_backprop
        config.enable_backprop = False
        config.double_backprop = False
        try:
            if profiling.is_profiling():  # one check per half; the loop below stays bare
                self._profiled_steps(steps, tags, phase)
            else:
                for step in steps:
                    step()
        finally:
            config.enable_backprop = old_backprop
            config.double_backprop = old_double

    def _profiled_steps(self, steps: list, tags: list[tuple[int, str]], phase: str) -> None:
        """Run ``steps``, charging each node's steps, as one call, to its op in the active
        profiles (``phase``: the forward half, or the backward half)."""
        start = 0
        while start < len(steps):
            node_id, name = tags[start]
            end = start + 1
            while end < len(steps) and tags[end][0] == node_id:
                end += 1
            profiling.run_steps(steps[start:end], name, phase)
            start = end


def _profile_name(node: Node) -> str:
    """A plan step's row in a profile: its op (``vjp`` steps under the op they differentiate,
    fused ops with their activation or program)."""
    if node.op == "vjp":
        return node.attrs["of"]
    if node.op in ("linear_act", "matmul_bias", "concat_linear"):
        activation = node.attrs.get("activation")
        return f"{node.op}({activation})" if activation else node.op
    if node.op == "fused":
        return "fused(" + ",".join(op for op, _, _ in node.attrs["program"]) + ")"
    return node.op


def is_gradient_key(key: str) -> bool:
    """Whether an output of a plan is a gradient (of a parameter or of an input)."""
    return key.startswith(("grad/", "gin/"))


def _forward_set(graph: Graph) -> set[int]:
    """Nodes the non-gradient outputs (and guards) need: the forward half of the program."""
    roots = [i for key, i in graph.outputs.items() if not is_gradient_key(key)]
    roots += [n.id for n in graph.nodes if n.op == "guard"]
    seen = ancestors(graph, roots)
    # a multi-output op's projections are views of its buffers: they belong with the op even
    # when no forward output reads them (an LSTM's last cell state, read only by backward)
    seen.update(n.id for n in graph.nodes if n.op == "project" and n.inputs[0] in seen)
    return seen


def _alias(node: Node, ins: list) -> Any:
    x = ins[0]
    if node.op == "project":
        return x[node.attrs["index"]]
    if node.op == "reshape":
        view = x.reshape(node.shape)
        return view if np.shares_memory(view, x) else None  # not viewable: copied by a step
    if node.op == "transpose":
        return x.transpose(node.attrs.get("axes"))
    if node.op == "broadcast_to":
        return np.broadcast_to(x, node.shape)
    if node.op == "get_item":  # basic indexing (ints, slices, None, ...) is a view
        if not basic_index(node.attrs["index"]):
            return None
        view = x[node.attrs["index"]]
        if isinstance(view, np.ndarray) and view.shape == node.shape and view.size \
                and np.shares_memory(view, x):
            return view
        return None  # advanced indexing, a scalar or an empty result: a copying step
    raise errors.TraceError(f"no alias rule for {node.text()}")
