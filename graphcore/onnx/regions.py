"""Tracing a spec for export with its live control flow kept as regions.

A plain trace records the path one run took: a live ``if`` as one branch, a ``while`` or a
``for_each`` as as many copies of its body as the run made trips. ``ExportRun`` (the spec
interpreter, with ``if``/``while``/``for_each`` steps overridden) keeps them instead: at a step
whose predicate reads live values (or any ``for_each``), it traces each body once on its own
(``trace_body``: the body's IR, what it reads and what it writes), runs the step for real (so the
rest of the run sees graphtool's values), and puts one ``Region`` node in the enclosing trace
whose inputs are the values the step reads and whose outputs are the values it rewrites. The
emitter (``control``) turns each region into an ONNX ``If`` or ``Loop`` whose subgraphs are the
body traces. Regions nest: a body is traced by the same interpreter.

Predicates that read only params and known loop counters (a ``repeat``'s) are resolved while
tracing, as graphtool resolves them; ``repeat`` counts are known at load (params), so a
``repeat`` is traced unrolled. Inside a body exported as an ONNX ``Loop``, ``loop.i``/``loop.t``
are not known at export: a predicate reading them there is refused with its position.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcore.config import config
from graphcore.function_node import FunctionNode, recording
from graphcore.interpreter.forward import ForwardPass
from graphcore.language.syntax import PREVIOUS, ForEachStep, IfStep, WhileStep
from graphcore.onnx.errors import ExportError
from graphcore.static.ir import ancestors
from graphcore.static.trace import Trace, trace
from graphcore.variable import Variable

RECURRENT = ("lstm", "gru")  # spec layers exported whole (``recurrent``)


class _Symbolic:
    """``loop.i`` / ``loop.t`` of a loop exported as ONNX Loop: not known at export."""

    def __repr__(self) -> str:
        return "<symbolic loop counter>"


SYMBOLIC = _Symbolic()


@dataclass
class Body:
    """One traced body: its IR (input nodes named after the values it reads, outputs named
    after the values it writes), the names it reads, the IR id -> spec position map."""

    trace: Trace
    reads: list[str]
    writes: list[str]
    where: dict[int, str]


@dataclass
class Region:
    """A live ``if`` (bodies: then, else), ``while`` (body) or ``for_each`` (body) step, or a
    recurrent layer (``rnn``: no body; ``constants`` hold its kind and link).
    ``inputs``: the names whose values (at the step) the region node reads, in order;
    ``outputs``: the names it rebinds, in order (``for_each`` with ``collect``: the stacked
    value last); ``constants``: the predicate's params and known loop counters."""

    kind: str
    step: Any
    bodies: list[Body]
    inputs: list[str]
    outputs: list[str]
    constants: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:  # IR attrs are compared as text (export's structure checks)
        return f"Region({self.kind} at {self.step.loc})"


class RegionNode(FunctionNode):
    """The region in the enclosing trace: its forward returns the values the real run made."""

    name = "region"

    def __init__(self, region: Region, arrays: list[np.ndarray]) -> None:
        self.region = region
        self.arrays = arrays

    def forward(self, inputs):
        return tuple(self.arrays)


def live_names(predicate) -> list[str]:
    """The values (not params, not loop counters) a predicate reads, in order, once each."""
    names = [r.name for r in predicate.name_refs() if not r.name.startswith(("params.", "loop."))]
    return list(dict.fromkeys(names))


class ExportRun(ForwardPass):
    """The spec interpreter for export: live control flow becomes regions (module doc).
    ``by_node`` (id of an op object -> spec position) is shared by every (body) run."""

    def __init__(self, spec, model, inputs, params: dict, by_node: dict) -> None:
        super().__init__(spec, model, inputs, [], record=False)
        self.params = params
        self.by_node = by_node

    def op(self, step, suffix):
        with recording() as created:
            result = super().op(step, suffix)
        for fnode in created:
            self.by_node.setdefault(id(fnode), str(step.loc))
        if step.layer and step.op in RECURRENT and isinstance(result, Variable):
            # traced, the layer is one op per time step: kept whole, it exports as ONNX
            # LSTM / GRU over a sequence of any length
            layer = getattr(self.model, step.name + suffix)
            region = Region("rnn", step, [], ["x"], [PREVIOUS],
                            {"kind": step.op, "layer": layer, "scope": step.name + suffix})
            (result,) = RegionNode(region, [result.array]).apply([self.last_args[0]])
            self.env[PREVIOUS] = result
            if step.to:
                self.env[step.to] = result
        return result

    def predicate(self, predicate, loc):
        self._check_counters(predicate, loc)
        return super().predicate(predicate, loc)

    def _check_counters(self, predicate, loc) -> None:
        scope = self.loops[-1] if self.loops else {}
        for ref in predicate.name_refs():
            if ref.name.startswith("loop.") and scope.get(ref.name[5:]) is SYMBOLIC:
                raise ExportError(f"'{predicate}' reads {ref.name} inside a loop exported as "
                                  "ONNX Loop; exporting that is not implemented", loc)

    def _constants(self, predicate) -> dict[str, Any]:
        scope = self.loops[-1] if self.loops else {}
        out: dict[str, Any] = {}
        for ref in predicate.name_refs():
            if ref.name.startswith("params."):
                out[ref.name] = self.spec.params[ref.name[7:]]
            elif ref.name.startswith("loop.") and ref.name[5:] in scope:
                out[ref.name] = scope[ref.name[5:]]
        return out

    def _plain(self) -> ForwardPass:
        """graphtool's own interpreter over this run's state: the step's real values."""
        plain = ForwardPass(self.spec, self.model, self.env, self.path, record=False)
        plain.env, plain.loops, plain.enclosing = self.env, self.loops, self.enclosing
        return plain

    # --- the steps exported as regions --------------------------------------------------------
    def if_(self, step: IfStep, suffix: str) -> None:
        live = live_names(step.predicate) if step.resolved is None else []
        if not live:
            return super().if_(step, suffix)
        self._check_counters(step.predicate, step.predicate_loc)
        entry = dict(self.env)
        bodies = [self.trace_body(branch, entry, suffix)
                  for branch in (step.then, step.otherwise)]
        written = [n for b in bodies for n in b.writes]
        both = set(bodies[0].writes) & set(bodies[1].writes)
        outputs = [n for n in dict.fromkeys(written) if n in entry or n in both]
        reads = [n for b in bodies for n in b.reads] + live + [n for n in outputs if n in entry]
        self._plain().if_(step, suffix)
        self._close(Region("if", step, bodies, self._inputs(reads, entry, step), outputs,
                           self._constants(step.predicate)), entry, written)

    def while_(self, step: WhileStep, suffix: str) -> None:
        live = live_names(step.predicate)
        if not live:
            return super().while_(step, suffix)
        if step.on_limit == "error":
            raise ExportError("a `while` with on_limit: error; an ONNX Loop cannot fail at "
                              "its cap (use on_limit: stop to export it)", step.loc)
        outer = self.loops[-1] if self.loops else {}
        for ref in step.predicate.name_refs():
            if ref.name.startswith("loop.") and ref.name != "loop.i" \
                    and outer.get(ref.name[5:]) is SYMBOLIC:
                raise ExportError(f"'{step.predicate}' reads {ref.name} inside a loop "
                                  "exported as ONNX Loop; exporting that is not implemented",
                                  step.predicate_loc)
        entry = dict(self.env)
        body = self.trace_body(step.body, entry, suffix, counters=True)
        outputs = [n for n in body.writes if n in entry]
        reads = body.reads + live + outputs
        self._plain().while_(step, suffix)
        constants = {k: v for k, v in self._constants(step.predicate).items() if k != "loop.i"}
        self._close(Region("while", step, [body], self._inputs(reads, entry, step), outputs,
                           constants), entry, body.writes)

    def for_each(self, step: ForEachStep, suffix: str) -> None:
        entry = dict(self.env)
        seq = entry.get(step.sequence)
        if getattr(seq, "ndim", 0) < 1 or seq.shape[0] == 0:
            return super().for_each(step, suffix)  # graphtool's own error / nothing to trace
        dtype = seq.dtype if seq.dtype.kind == "f" else config.dtype
        start = dict(entry)
        for carry in step.carry:
            if carry.fill == "value":
                start[carry.name] = entry[carry.value]
            else:
                start[carry.name] = (np.zeros if carry.fill == "zeros" else np.ones)(
                    carry.shape, dtype)
        first = seq[0] if isinstance(seq, np.ndarray) else seq.array[0]
        start[step.item] = first
        body = self.trace_body(step.body, start, suffix, counters=True, item=step.item)
        carries = [c.name for c in step.carry]
        outputs = list(dict.fromkeys(carries + [
            n for n in body.writes if n in entry and n != step.item
            and not (n == PREVIOUS and step.collect)]))
        reads = [n for n in body.reads if n != step.item] + [step.sequence] + outputs
        if step.collect and step.collect not in body.writes and step.collect != step.item:
            reads.append(step.collect)
        self._plain().for_each(step, suffix)
        if step.collect:
            outputs = [*outputs, step.to or PREVIOUS]
        region = Region("for_each", step, [body], self._inputs(reads, start, step), outputs)
        self._close(region, start, [*body.writes, step.item])
        if step.collect:
            self.env[PREVIOUS] = self.env[outputs[-1]]

    # --- helpers ------------------------------------------------------------------------------
    def _inputs(self, reads: list[str], entry: dict, step) -> list[str]:
        names = list(dict.fromkeys(reads))
        for name in names:
            value = entry.get(name)
            if not isinstance(value, Variable | np.ndarray):
                what = "no value" if value is None else "a value of several arrays"
                raise ExportError(f"the step reads '{name}', {what} here; only single arrays "
                                  "flow into an exported If/Loop", step.loc)
        return names

    def _close(self, region: Region, entry: dict, written: list[str]) -> None:
        """Replace the values the real run made by the region node's outputs."""
        for name in written:  # values made inside the step and not given back: unbound
            if name not in region.outputs and self.env.get(name) is not entry.get(name):
                self.env.pop(name, None)
        arrays = []
        for name in region.outputs:
            value = self.env[name]
            arrays.append(np.asarray(value.array if isinstance(value, Variable) else value))
        node = RegionNode(region, arrays)
        outs = node.apply([entry[n] for n in region.inputs])
        for name, value in zip(region.outputs, outs, strict=True):
            self.env[name] = value

    def trace_body(self, steps: list, entry: dict, suffix: str, *, counters: bool = False,
                   item: str | None = None) -> Body:
        """Trace ``steps`` once, alone, from the values in ``entry``."""
        arrays = {k: (v.array if isinstance(v, Variable) else v) for k, v in entry.items()
                  if isinstance(v, Variable | np.ndarray) and not (item and k == PREVIOUS)}
        holder: dict[str, Any] = {}

        def call(variables):
            run = ExportRun(self.spec, self.model, dict(entry), self.params, self.by_node)
            run.env = dict(variables)
            if item is not None:
                run.env[PREVIOUS] = run.env[item]
            run.loops = [*self.loops, {"i": SYMBOLIC, "t": SYMBOLIC}] if counters \
                else list(self.loops)
            try:
                run.steps(steps, suffix)
            except KeyError as e:
                raise ExportError(f"a step reads {e}, which is not a single array before the "
                                  "control-flow step it is in") from None
            out = {}
            for name, value in run.env.items():
                if value is variables.get(name) or isinstance(value, tuple):
                    continue
                if item is not None and name == PREVIOUS and value is variables[item]:
                    continue
                out[name] = value if isinstance(value, Variable) else \
                    Variable(np.asarray(value), requires_grad=False)
            holder["writes"] = list(out)
            return out

        with np.errstate(all="ignore"):
            traced = trace(None, arrays, self.params, name="body", grads=False, call=call)
        graph = traced.graph
        used = ancestors(graph, graph.outputs.values())
        reads = [n.name for n in graph.nodes if n.op == "input" and n.id in used]
        where = {i: self.by_node[id(f)] for i, f in traced.instances.items()
                 if id(f) in self.by_node}
        return Body(traced, reads, holder["writes"], where)
