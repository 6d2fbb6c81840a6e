"""Per-op timing, like Chainer's ``TimerHook``: how long each op's forward and backward took.

>>> with profile_ops() as report:
...     loss = F.sum(F.relu(F.linear(x, W)))
...     loss.backward()
>>> report.ops["LinearFunction"].calls, report.ops["ReLU"].backward_ms

While the block runs, the ``forward`` and ``backward`` methods of every ``FunctionNode``
subclass (the registered ops, user ops, and any class first seen in ``apply`` inside the block)
are replaced by timing wrappers; the originals are put back when the block ends, even on an
exception, so code outside the block runs exactly as before (no hooks, no checks, no cost).

Times are *self* times: an op whose forward or backward calls other ops (a double-backprop
backward, a composite op) is charged only for its own work, so the shares add up to 100%.
Ops are keyed by class name, as Chainer's ``TimerHook`` keys them (``Add``, not ``_ + _``).
Blocks may nest: each report sees the ops run inside it. The timing stack is per thread.

Static-mode plans have no op objects to wrap: while a block is active, a plan runs its steps
through ``run_steps``, one row per IR op (``linear_act(relu)``, ``fused(...)``; a gradient
step under the op it differentiates, as backward). Outside a block a plan checks one flag
per half and runs its bare step loop.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from graphcore.function_node import FunctionNode
from graphcore.registry import all_ops

PHASES = ("forward", "backward")


@dataclass
class OpTiming:
    """What one op (class) cost inside a profiled block. ``calls`` counts forward calls."""

    op: str
    calls: int = 0
    backward_calls: int = 0
    forward_ms: float = 0.0
    backward_ms: float = 0.0

    @property
    def total_ms(self) -> float:
        return self.forward_ms + self.backward_ms


@dataclass
class ProfileReport:
    """Per-op timings of one ``profile_ops()`` block; ``wall_ms`` is the block's wall time."""

    ops: dict[str, OpTiming] = field(default_factory=dict)
    wall_ms: float = 0.0

    @property
    def total_ms(self) -> float:
        """Time spent inside ops (the sum of their self times)."""
        return sum(t.total_ms for t in self.ops.values())

    def share(self, op: str) -> float:
        """The fraction of the profiled (in-op) time that ``op`` took, 0..1."""
        total = self.total_ms
        return self.ops[op].total_ms / total if total > 0 else 0.0

    def rows(self) -> list[OpTiming]:
        """The ops, most expensive first (ties by name, so the order is stable)."""
        return sorted(self.ops.values(), key=lambda t: (-t.total_ms, t.op))

    def to_dict(self, digits: int = 4) -> dict[str, Any]:
        return {
            "total_ms": round(self.total_ms, digits),
            "wall_ms": round(self.wall_ms, digits),
            "ops": [{"op": t.op, "calls": t.calls, "backward_calls": t.backward_calls,
                     "forward_ms": round(t.forward_ms, digits),
                     "backward_ms": round(t.backward_ms, digits),
                     "total_ms": round(t.total_ms, digits),
                     "share": round(self.share(t.op), digits)} for t in self.rows()],
        }

    def _add(self, op: str, phase: str, seconds: float) -> None:
        timing = self.ops.get(op)
        if timing is None:
            timing = self.ops[op] = OpTiming(op)
        if phase == "forward":
            timing.calls += 1
            timing.forward_ms += seconds * 1e3
        else:
            timing.backward_calls += 1
            timing.backward_ms += seconds * 1e3


# --- the wrappers, installed while at least one block is active ------------------------------
_lock = threading.Lock()
_record_lock = threading.Lock()
_active: list[ProfileReport] = []
_originals: dict[tuple[type, str], Callable[..., Any]] = {}
_seen: set[type] = set()  # op classes whose forward/backward are wrapped (or inherited)
_local = threading.local()


@contextlib.contextmanager
def profile_ops() -> Iterator[ProfileReport]:
    """Time every op's forward and backward run inside the block; yields the report."""
    report = ProfileReport()
    with _lock:
        if not _active:
            _install()
        _active.append(report)
    start = time.perf_counter()
    try:
        yield report
    finally:
        report.wall_ms = (time.perf_counter() - start) * 1e3
        with _lock:
            _active.remove(report)
            if not _active:
                _uninstall()


def is_profiling() -> bool:
    return bool(_active)


def _install() -> None:
    classes = set(_subclasses(FunctionNode)) | set(all_ops().values())
    for cls in classes:
        _wrap_class(cls)
    _wrap(FunctionNode, "apply", _seeing_apply)


def _uninstall() -> None:
    for (cls, name), original in _originals.items():
        setattr(cls, name, original)
    _originals.clear()
    _seen.clear()


def _subclasses(root: type) -> Iterator[type]:
    stack = list(root.__subclasses__())
    seen = set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        yield cls
        stack.extend(cls.__subclasses__())


def _wrap_class(cls: type) -> None:
    """Wrap the forward/backward that ``cls`` itself defines (inherited ones are wrapped where
    they are defined; the wrapper names the op by the instance's class)."""
    _seen.add(cls)
    for klass in cls.__mro__:
        if klass is FunctionNode or not issubclass(klass, FunctionNode):
            continue
        for phase in PHASES:
            _wrap(klass, phase, functools.partial(_timed, phase=phase))


def _wrap(cls: type, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]
          ) -> None:
    original = cls.__dict__.get(name)
    if not isinstance(original, types.FunctionType) or (cls, name) in _originals:
        return
    _originals[(cls, name)] = original
    setattr(cls, name, make(original))


def _seeing_apply(apply: Callable[..., Any]) -> Callable[..., Any]:
    """``FunctionNode.apply`` that wraps an op class the first time it is used (a class
    defined after the block began)."""

    @functools.wraps(apply)
    def wrapper(self: FunctionNode, inputs: Any) -> Any:
        cls = type(self)
        if cls not in _seen and _active:
            with _lock:
                if _active:
                    _wrap_class(cls)
        return apply(self, inputs)

    return wrapper


def run_steps(steps: list[Callable[[], Any]], op: str, phase: str) -> None:
    """Run a static plan's steps for one IR node, charged to ``op`` as one call (self time,
    like an op's method: ops it falls back to are charged to themselves)."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    frame = [(op, phase), 0.0]
    stack.append(frame)
    start = time.perf_counter()
    try:
        for step in steps:
            step()
    finally:
        elapsed = time.perf_counter() - start
        stack.pop()
        if stack:
            stack[-1][1] += elapsed
        own = elapsed - frame[1]
        with _record_lock:
            for report in _active:
                report._add(op, phase, own)


def _timed(method: Callable[..., Any], phase: str) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: FunctionNode, *args: Any, **kwargs: Any) -> Any:
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        key = (id(self), phase)
        if stack and stack[-1][0] == key:  # super().forward() of a wrapped parent class
            return method(self, *args, **kwargs)
        frame = [key, 0.0]  # the key and the time spent in nested ops
        stack.append(frame)
        start = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            elapsed = time.perf_counter() - start
            stack.pop()
            if stack:
                stack[-1][1] += elapsed
            own = elapsed - frame[1]
            with _record_lock:  # other threads may finish ops at the same time
                for report in _active:
                    report._add(type(self).__name__, phase, own)

    return wrapper
