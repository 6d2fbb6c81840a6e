"""``graphcore.compile`` and ``@graphcore.static_graph``: static mode for Python models.

The first call with a given input signature (shapes, dtypes, ``config.train``, whether
gradients are wanted, of which inputs and parameters) traces the function, runs the passes
and lowers a plan; later calls with that signature replay the plan. Each call is a
``StaticCall`` node of the graph, so backward from anything computed from its outputs
replays the plan's backward half. What tracing freezes (Python constants, branches on
Python values, buffers reused across calls) is listed in ``tests/test_static_footguns.py``.

>>> step = graphcore.compile(model)          # or @graphcore.static_graph on forward
>>> loss = F.softmax_cross_entropy(step(x), t)   # traced on the first call, replayed after
>>> loss.backward()                          # gradients accumulate in the parameters' .grad
"""

from __future__ import annotations

import functools
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.config import config
from graphcore.function_node import FunctionNode, _double
from graphcore.links.link import Link
from graphcore.static.arguments import check_call_inputs, check_compile_arguments
from graphcore.static.lower import Plan
from graphcore.static.passes import PassReport, run_passes, select
from graphcore.static.trace import Trace, trace
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


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    compile_ms: float = 0.0
    evictions: int = 0
    keys: list = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"hits": self.hits, "misses": self.misses, "evictions": self.evictions,
                "compile_ms": round(self.compile_ms, 3), "plans": len(self.keys)}


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
        if _double[0]:
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


def compile(target: Callable[..., Any] | Link, *, params: Link | dict | None = None,  # noqa: A001
            passes: Sequence[str] | None = None, cache_size: int = 16,
            name: str | None = None) -> CompiledFunction:
    """Static mode for a Chain (its ``forward``) or a function of arrays/Variables.

    ``params`` names the parameters a plain function reads (a Link, or ``{name: Parameter}``);
    for a Link they are its own. ``passes`` selects passes (``["-fuse"]`` turns one off).
    Arguments are arrays, Variables, or (nested) lists and tuples of them.
    """
    check_compile_arguments("compile", target, params, passes, cache_size, name)
    if isinstance(target, Link):
        return CompiledFunction(target, target if params is None else params, passes,
                                cache_size, name or type(target).__name__)
    return CompiledFunction(target, params, passes, cache_size,
                            name or getattr(target, "__name__", "fn"))


class CompiledFunction:
    def __init__(self, fn: Callable[..., Any], params: Link | dict | None,
                 passes: Sequence[str] | None, cache_size: int, name: str) -> None:
        self.fn = fn
        self.params = params
        self.passes = select(passes)
        self.cache_size = cache_size
        self.name = name
        self.cache: OrderedDict[tuple, Compiled] = OrderedDict()
        self.stats = CacheStats()
        self.last: Compiled | None = None
        self._param_objects: list[Parameter] | None = None

    def _named_params(self) -> dict[str, Parameter]:
        if self.params is None:
            return {}
        if isinstance(self.params, Link):
            return {n.lstrip("/"): p for n, p in self.params.namedparams()}
        return dict(self.params)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves: Sequence[Any] = args
        layout: tuple = (None,) * len(args)
        if kwargs or any([isinstance(a, list | tuple) for a in args]):
            leaves = []
            layout = tuple([_flatten(a, leaves) for a in args])
            if kwargs:
                layout += tuple([(k, _flatten(v, leaves)) for k, v in kwargs.items()])
        backprop = config.enable_backprop
        # one pass over the leaves (this runs on every call): arrays, signature, gradients
        arrays, signature, wanted = [], [], []
        for i, v in enumerate(leaves):
            if type(v) is np.ndarray:
                a = v
            elif isinstance(v, Variable):
                a = v._array
                if backprop and v.requires_grad:
                    wanted.append(i)
            else:
                a = np.asarray(v)
            arrays.append(a)
            signature.append((a.shape, a.dtype))
        params = self._param_objects
        if params is None:
            params = self._param_objects = list(self._named_params().values())
        # which parameters are trained decides which gradients the plan computes
        trained = tuple([p.requires_grad for p in params]) if backprop else ()
        wanted = tuple(wanted)
        key = (tuple(signature), layout, config.train, backprop, wanted, trained)
        compiled = self.cache.get(key)
        if compiled is None:
            self.stats.misses += 1
            compiled = self._compile(arrays, layout, backprop, wanted)
            self.cache[key] = compiled
            self.stats.keys = list(self.cache)
            if len(self.cache) > self.cache_size:
                self.cache.popitem(last=False)
                self.stats.evictions += 1
        else:
            self.stats.hits += 1
            self.cache.move_to_end(key)
            for fn, fn_args, fn_kwargs in compiled.host_calls:  # @static_code, every replay
                fn(*fn_args, **fn_kwargs)
        self.last = compiled
        ys = _run_call(compiled, compiled.acquire(), arrays,
                       [leaves[i] for i in wanted] if wanted else [])
        kind = compiled.output_kind
        if kind is Variable:
            return ys[0]
        if kind is tuple:
            return ys
        return dict(zip(compiled.trace.output_keys, ys, strict=True))

    def _compile(self, arrays: list[np.ndarray], layout: tuple, grads: bool,
                 wanted: tuple[int, ...]) -> Compiled:
        start = time.perf_counter()
        params = self._named_params()
        names: list[str] = []
        named_layout = tuple([_name(f"x{i}", item, names) if not _is_keyword(item)
                              else (item[0], _name(item[0], item[1], names))
                              for i, item in enumerate(layout)])
        if len(set(names)) != len(names):
            raise errors.TraceError(f"a compiled function's keyword arguments must not be "
                                    f"named like its positional ones (x0, x1, ...): {names}")
        inputs = dict(zip(names, arrays, strict=True))
        check_call_inputs(self.name, inputs)  # on a cache miss only: replay stays lean
        wanted_names = tuple([names[i] for i in wanted])

        def call(variables: dict[str, Variable]) -> Any:
            positional, named = [], {}
            for item in named_layout:
                if _is_keyword(item):
                    named[item[0]] = _rebuild(item[1], variables)
                else:
                    positional.append(_rebuild(item, variables))
            return self.fn(*positional, **named)

        host_calls: list = []  # @static_code calls made while tracing, replayed on each hit
        _recording.append(host_calls)
        try:
            traced = trace(self.fn, inputs, params, name=self.name, grads=grads, call=call,
                           seed_outputs=True, grad_inputs=wanted_names)
        finally:
            _recording.pop()
        frozen = {n: p.array for n, p in traced.params.items()
                  if not p.requires_grad and not grads}
        graph, reports = run_passes(traced.graph, self.passes, frozen=frozen)
        plan = Plan(graph, traced.params, traced.instances, after_trace=True)
        if list(plan.inputs) != names:
            raise errors.TraceError(f"static plan: inputs {list(plan.inputs)} are not the "
                                    f"call's {names}")
        compile_ms = (time.perf_counter() - start) * 1e3
        self.stats.compile_ms += compile_ms
        outputs = graph.outputs
        # the node's inputs: the differentiated inputs, then every parameter the plan reads
        grad_keys = [f"gin/{k}" if f"gin/{k}" in outputs else None for k in wanted_names] + \
            [f"grad/{n}" if f"grad/{n}" in outputs else None for n in traced.params]
        return Compiled(traced, plan, reports, compile_ms,
                        param_list=list(traced.params.values()), grad_keys=grad_keys,
                        wanted=wanted_names, host_calls=host_calls)


_recording: list[list] = []  # the host-call lists of the traces in progress, innermost last


def static_code(fn: Callable) -> Callable:
    """Chainer's ``@static_code``: Python code inside a static-graph function that runs on
    every call, not only while tracing (a counter, a log line). It runs in order before the
    replayed computation, so it may not read values the graph computes: a Variable argument
    is a TraceError."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _recording:
            if any(isinstance(a, Variable) for a in (*args, *kwargs.values())):
                raise errors.TraceError(f"static_code {fn.__name__}: it runs before each "
                                        "replay, so it cannot take a Variable the graph "
                                        "computes")
            _recording[-1].append((fn, args, kwargs))
        return fn(*args, **kwargs)

    return wrapper


def static_graph(method: Callable | None = None, **options: Any):
    """Decorator for a Chain's ``forward`` (Chainer's name): each instance gets its own
    compiled program over its own parameters."""
    check_compile_arguments("static_graph", method, None, options.get("passes"),
                            options.get("cache_size", 16), None)

    if options.get("enable_double_backprop"):
        raise NotImplementedError("static_graph: a replayed plan differentiates once; "
                                  "enable_double_backprop=True is not supported")

    def wrap(m: Callable) -> Callable:
        attr = f"_static_{m.__name__}"
        if options.get("force_test_define_by_run"):  # Chainer's switch for testing: no plan
            return m

        @functools.wraps(m)
        def wrapper(self, *args: Any, **kwargs: Any) -> Any:
            compiled = self.__dict__.get(attr)
            if compiled is None:
                compiled = CompiledFunction(functools.partial(m, self), self,
                                            options.get("passes"), options.get("cache_size", 16),
                                            type(self).__name__)
                object.__setattr__(self, attr, compiled)
            return compiled(*args, **kwargs)

        wrapper.static = True  # type: ignore[attr-defined]
        return wrapper

    return wrap(method) if method is not None else wrap


def _free(entry: list) -> bool:
    """Whether a ``[plan, weakref to StaticCall]`` entry's buffers are free: no call recorded
    on it, or its node is gone, or its backward ran (which releases ``_saved``)."""
    ref = entry[1]
    if ref is None:
        return True
    node = ref()
    return node is None or node._saved is not entry[0]


def _run_call(compiled: Compiled, entry: list, arrays: list[np.ndarray],
              wanted: list[Variable]) -> tuple[Variable, ...]:
    """Replay the forward half on ``entry``'s buffers; when some input or parameter needs a
    gradient, record a ``StaticCall`` node (as ``FunctionNode.apply`` would, without wrapping
    data arrays in Variables: only differentiated inputs and the parameters are its inputs)."""
    node = StaticCall(compiled, entry[0])
    ys = node.forward(arrays)
    if config.debug:
        from graphcore.debug import check_forward

        check_forward(node, tuple(arrays), ys)
    if config.enable_backprop:
        inputs = wanted + compiled.param_list if wanted else compiled.param_list
        for x in inputs:
            if x.requires_grad:
                entry[1] = weakref.ref(node)  # the buffers are this call's until its backward
                return node._record(tuple(inputs), ys)
    return tuple([constant(y) for y in ys])


def _is_keyword(item: Any) -> bool:
    return isinstance(item, tuple) and isinstance(item[0], str)


def _flatten(value: Any, leaves: list[Any]) -> Any:
    """Append the arrays/Variables in ``value`` to ``leaves``; return its layout: ``None`` for
    a leaf, else ``(list or tuple, item layouts)``."""
    if isinstance(value, list | tuple):
        return (type(value), tuple([_flatten(v, leaves) for v in value]))
    leaves.append(value)
    return None


def _name(name: str, layout: Any, names: list[str]) -> Any:
    """The layout with each leaf replaced by its input name (``x0``, ``x0.1``, ``h.0``)."""
    if layout is None:
        names.append(name)
        return name
    kind, items = layout
    return (kind, tuple([_name(f"{name}.{i}", item, names) for i, item in enumerate(items)]))


def _rebuild(layout: Any, variables: dict[str, Variable]) -> Any:
    if isinstance(layout, str):
        return variables[layout]
    kind, items = layout
    return kind([_rebuild(item, variables) for item in items])
