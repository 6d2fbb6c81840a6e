"""``graphcore.compile`` and ``@graphcore.static_graph``: static mode for Python models.

The first call with a given input signature (shapes, dtypes, ``config.train``, whether
gradients are wanted) traces the function, runs the passes and lowers a plan; later calls
with that signature replay the plan. What tracing freezes (Python constants, branches on
Python values, buffers reused across calls) is listed in ``tests/test_static_footguns.py``.

>>> step = graphcore.compile(model)          # or @graphcore.static_graph on forward
>>> loss = step(x, t)                        # traced on the first call, replayed after
>>> loss.backward()                          # gradients land in the parameters' .grad
"""

from __future__ import annotations

import functools
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcore.config import config
from graphcore.errors import GraphError, TraceError
from graphcore.function_node import FunctionNode
from graphcore.links.link import Link
from graphcore.static.lower import Plan
from graphcore.static.passes import PassReport, run_passes, select
from graphcore.static.trace import Trace, trace
from graphcore.variable import Parameter, Variable


@dataclass
class Compiled:
    """One cached program: its trace, the optimized IR, the plan, and what compiling cost."""

    trace: Trace
    plan: Plan
    reports: list[PassReport]
    compile_ms: float

    def __post_init__(self) -> None:
        plan = self.plan
        pairs = [(plan.params[k[5:]], k) for k in plan.outputs if k.startswith("grad/")]

        def publish_grads() -> None:
            out = plan.run_backward()
            for param, key in pairs:
                param._grad = out[key]

        self.publish_grads = publish_grads if pairs else None
        self.host_calls: list = []  # @static_code calls seen while tracing, replayed each call
        self.replays = 0  # forward runs so far: a _PlanCall's backward needs its own run's buffers
        self.trained_params = tuple(p for p, _ in pairs)
        self.grad_keys = tuple(k for _, k in pairs)

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


class StaticOutput(Variable):
    """An output of a replayed plan. ``backward()`` runs the plan's backward half and sets
    every trained parameter's ``.grad`` (overwriting it: the buffers are reused)."""

    __slots__ = ("_run_backward",)

    def backward(self, retain_grad: bool = False, enable_double_backprop: bool = False) -> None:
        run = getattr(self, "_run_backward", None)
        if run is None:
            raise RuntimeError("this static-mode output has no gradient program "
                               "(traced without a scalar loss or trainable parameters)")
        run()


def compile(target: Callable[..., Any] | Link, *, params: Link | dict | None = None,  # noqa: A001
            passes: Sequence[str] | None = None, cache_size: int = 16,
            name: str | None = None) -> CompiledFunction:
    """Static mode for a Chain (its ``forward``) or a function of arrays/Variables.

    ``params`` names the parameters a plain function reads (a Link, or ``{name: Parameter}``);
    for a Link they are its own. ``passes`` selects passes (``["-fuse"]`` turns one off).
    """
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

    def _named_params(self) -> dict[str, Parameter]:
        if self.params is None:
            return {}
        if isinstance(self.params, Link):
            return {n.lstrip("/"): p for n, p in self.params.namedparams()}
        return dict(self.params)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        inputs = {f"x{i}": _array(a) for i, a in enumerate(args)}
        if kwargs:
            inputs.update({k: _array(v) for k, v in kwargs.items()})
        grads = config.enable_backprop and config.train
        key = (tuple([(k, a.shape, a.dtype) for k, a in inputs.items()]), config.train, grads)
        compiled = self.cache.get(key)
        if compiled is None:
            self.stats.misses += 1
            compiled = self._compile(inputs, len(args), grads)
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
        plan = compiled.plan
        values = plan.run(inputs, backward=False)
        return self._outputs(compiled, values)

    def _compile(self, inputs: dict[str, np.ndarray], n_positional: int, grads: bool) -> Compiled:
        start = time.perf_counter()
        params = self._named_params()

        def call(variables: dict[str, Variable]) -> Any:
            positional = [variables[f"x{i}"] for i in range(n_positional)]
            named = {k: v for k, v in variables.items() if not k.startswith("x")
                     or not k[1:].isdigit()}
            return self.fn(*positional, **named)

        host_calls: list = []
        _recording.append(host_calls)
        try:
            traced = trace(self.fn, inputs, params, name=self.name, grads=grads, call=call)
        finally:
            _recording.pop()
        frozen = {n: p.array for n, p in traced.params.items()
                  if not p.requires_grad and not grads}
        graph, reports = run_passes(traced.graph, self.passes, frozen=frozen)
        plan = Plan(graph, traced.params, traced.instances)
        if grads and not any(k.startswith("grad/") for k in plan.outputs) and any(
                p.requires_grad for p in traced.params.values()):
            # its outputs would be constants: a loss computed from them would silently train
            # nothing
            raise TraceError(f"{self.name}: gradients are wanted but no output carries them: "
                             "return the scalar loss (first, or named 'loss') or a single "
                             "output; or call it under no_backprop_mode() or train=False")
        compile_ms = (time.perf_counter() - start) * 1e3
        self.stats.compile_ms += compile_ms
        compiled = Compiled(traced, plan, reports, compile_ms)
        compiled.host_calls = host_calls
        return compiled

    def _outputs(self, compiled: Compiled, values: dict[str, Any]) -> Any:
        keys = compiled.trace.output_keys
        compiled.replays += 1
        if compiled.plan.seeds:  # one output, not a scalar loss: gradients flow through a node
            return _PlanCall(compiled, keys[0]).apply(compiled.trained_params)[0]
        run_backward = compiled.publish_grads
        outs = {}
        for key in keys:
            v = StaticOutput.__new__(StaticOutput)
            v._array, v._grad, v.creator, v.name = values[key], None, None, None
            v.requires_grad, v.rank, v._index = False, 0, 0
            v._run_backward = run_backward
            outs[key] = v
        if keys == ["out"]:
            return outs["out"]
        if all(k.startswith("out") and k[3:].isdigit() for k in keys):
            return tuple(outs[k] for k in keys)
        return outs


class _PlanCall(FunctionNode):
    """A replayed plan's output inside an enclosing define-by-run graph (e.g. a compiled
    predictor under a loss computed outside it): its backward seeds the plan's backward with
    the incoming gradient and returns the trained parameters' gradients. Valid only until the
    plan is replayed again (its buffers are reused): a later backward is an error."""

    __slots__ = ("compiled", "key", "replay")
    label = "StaticGraph"

    def __init__(self, compiled: Compiled, key: str) -> None:
        self.compiled, self.key, self.replay = compiled, key, compiled.replays

    def forward(self, inputs):
        return self.compiled.plan.outputs[self.key].copy(),  # the next replay reuses the buffer

    def backward(self, indexes, grad_outputs):
        compiled = self.compiled
        if compiled.replays != self.replay:
            raise GraphError("backward through a static-graph output after its plan was run "
                             "again: call backward before the next call of the compiled function "
                             "(its buffers are reused)")
        plan = compiled.plan
        np.copyto(plan.seeds["gy/" + self.key], grad_outputs[0])
        out = plan.run_backward()
        return tuple(out[k].copy() for k in compiled.grad_keys)


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
                raise TraceError(f"static_code {fn.__name__}: it runs before each replay, so "
                                 "it cannot take a Variable the graph computes")
            _recording[-1].append((fn, args, kwargs))
        return fn(*args, **kwargs)

    return wrapper


def static_graph(method: Callable | None = None, **options: Any):
    """Decorator for a Chain's ``forward`` (Chainer's name): each instance gets its own
    compiled program over its own parameters."""

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


def _array(value: Any) -> np.ndarray:
    return value.array if isinstance(value, Variable) else np.asarray(value)
