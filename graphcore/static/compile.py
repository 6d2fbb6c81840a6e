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
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.config import config
from graphcore.links.link import Link
from graphcore.static.arguments import check_call_inputs, check_compile_arguments
from graphcore.static.call_node import Compiled, run_call
from graphcore.static.lower import Plan
from graphcore.static.passes import run_passes, select
from graphcore.static.trace import trace
from graphcore.variable import Parameter, Variable


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
        ys = run_call(compiled, compiled.acquire(), arrays,
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
