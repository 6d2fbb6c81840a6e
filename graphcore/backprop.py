"""Reverse-mode differentiation: walk the recorded graph in rank order, without recursion.

The walk pops the node of highest rank from a heap (so a node runs only after every consumer
of its outputs has sent its gradient), sums the gradients that reach the same output, and
stops at leaves.  Pending gradients are keyed by the node that will consume them, so the walk
needs no weak references.  A first-order walk runs every backward on raw numpy arrays; a
double-backprop walk runs the same backward on Variables and so records a differentiable
graph of the gradients.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.config import config
from graphcore.debug import check_backward
from graphcore.function_node import FunctionNode
from graphcore.variable import Variable, constant


def backward_from(y: Variable, retain_grad: bool, double: bool) -> None:
    """``y.backward()``: accumulate gradients into every leaf that requires one."""
    gy = y._grad
    node = y.creator
    if node is not None and node.walk_leaves is not None and not (double or retain_grad) \
            and (gy is not None or y._array.size == 1) and node.walk_leaves(gy):
        return  # the node did the whole walk itself (a compiled call over parameters)
    if gy is None:
        if y._array.size != 1:
            raise errors.GraphError(
                f"backward() from an output of shape {y.shape} needs y.grad set first "
                "(only a one-element output gets a gradient of ones by default)")
        gy = _ones(y._array.shape, y._array.dtype)
    if double and not isinstance(gy, Variable):
        gy = constant(gy)
    elif not double and isinstance(gy, Variable):
        gy = gy._array
    if node is None:
        return
    _walk([(y, gy)], retain_grad=retain_grad, double=double, capture=None)


_ONES: dict[tuple, np.ndarray] = {}


def _ones(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A fresh array of ones (copying a cached one costs a seventh of ``np.ones``)."""
    key = (shape, dtype)
    one = _ONES.get(key)
    if one is None:
        one = _ONES[key] = np.ones(shape, dtype)
    return one.copy()


def grad(outputs: Sequence[Variable] | Variable, inputs: Sequence[Variable] | Variable,
         grad_outputs: Sequence[Any] | None = None, enable_double_backprop: bool = False,
         ) -> tuple[Variable | None, ...] | Variable | None:
    """Gradients of ``outputs`` with respect to ``inputs``, without touching any ``.grad``.

    ``inputs`` may be leaves or intermediate Variables.  Returns Variables (``None`` where an
    input does not affect the outputs).  With ``enable_double_backprop=True`` the results carry
    a graph, so ``grad`` can be applied to them again (Hessian-vector products, penalties).
    """
    single = isinstance(inputs, Variable)
    outputs = _variables("outputs", outputs)
    inputs = _variables("inputs", inputs)
    grad_outputs = _grad_outputs(outputs, grad_outputs)
    roots = []
    for y, gy in zip(outputs, grad_outputs, strict=True):
        if gy is None:
            if y.size != 1:
                raise errors.GraphError(
                    f"grad(): output of shape {y.shape} needs an explicit grad_output")
            gy = np.ones_like(y._array)
        if isinstance(gy, Variable):
            gy = gy if enable_double_backprop else gy._array
        elif enable_double_backprop:
            gy = constant(np.asarray(gy))
        roots.append((y, gy))
    capture: dict[int, Any] = {id(x): None for x in inputs}
    for y, gy in roots:  # an output that is itself an input
        if id(y) in capture:
            capture[id(y)] = _add(capture[id(y)], gy)
    _walk([r for r in roots if r[0].creator is not None], retain_grad=False,
          double=enable_double_backprop, capture=(capture, _needed_nodes(outputs, inputs)),
          free=False)
    result = tuple(_as_variable(capture[id(x)]) for x in inputs)
    return result[0] if single else result


def _variables(what: str, values: Any) -> list[Variable]:
    """``grad``'s ``outputs``/``inputs``: a Variable or a sequence of them."""
    if isinstance(values, Variable):
        return [values]
    if isinstance(values, list | tuple):
        for i, v in enumerate(values):
            if not isinstance(v, Variable):
                raise errors.ArgumentTypeError(
                    f"grad(): {what}[{i}] must be a Variable, got {type(v).__name__}")
        return list(values)
    raise errors.ArgumentTypeError(f"grad(): {what} must be a Variable or a list of "
                                   f"Variables, got {type(values).__name__}")


def _grad_outputs(outputs: list[Variable], grad_outputs: Any) -> list[Any]:
    """One gradient per output (None, an array or a Variable), of the output's shape."""
    if grad_outputs is None:
        return [None] * len(outputs)
    if isinstance(grad_outputs, np.ndarray | Variable):
        grad_outputs = [grad_outputs]
    if not isinstance(grad_outputs, list | tuple):
        raise errors.ArgumentTypeError(f"grad(): grad_outputs must be a list with one array "
                                       f"per output, got {type(grad_outputs).__name__}")
    if len(grad_outputs) != len(outputs):
        raise errors.ArgumentValueError(f"grad(): {len(grad_outputs)} grad_outputs for "
                                        f"{len(outputs)} outputs")
    for i, (y, gy) in enumerate(zip(outputs, grad_outputs, strict=True)):
        if gy is None:
            continue
        if not isinstance(gy, np.ndarray | Variable):
            raise errors.ArgumentTypeError(f"grad(): grad_outputs[{i}] must be a numpy array, a "
                                           f"Variable or None, got {type(gy).__name__}")
        if gy.shape != y.shape:
            raise errors.ShapeError(f"grad(): grad_outputs[{i}] has shape {gy.shape}, its "
                                    f"output has shape {y.shape}")
    return list(grad_outputs)


def _walk(roots: list[tuple[Variable, Any]], retain_grad: bool, double: bool,
          capture: tuple[dict[int, Any], set[FunctionNode]] | None, free: bool = True) -> None:
    pending: dict[FunctionNode, list] = {}
    heap: list = []
    count = 0
    for y, gy in roots:
        node = y.creator
        slot = pending.get(node)
        if slot is None:
            pending[node] = slot = [None] * len(node.outputs)
            heapq.heappush(heap, (-node.rank, count, node))
            count += 1
        slot[y._index] = _add(slot[y._index], gy)
    captured, needed = capture if capture is not None else (None, None)
    free = free and not (retain_grad or double)
    old_backprop, old_double = config.enable_backprop, config.double_backprop
    config.enable_backprop = double
    config.double_backprop = double
    copied: set[int] = set()
    owned: dict[int, np.ndarray] = {}  # leaf-gradient sums this walk allocated (kept alive)
    try:
        while heap:
            node = heapq.heappop(heap)[2]
            gys = pending.pop(node)
            if len(gys) > 1:  # a multi-output op may get gradients for only some outputs
                _fill_zeros(node, gys, double)
            if retain_grad:
                _store_output_grads(node, gys)
            if captured is not None:
                _capture_outputs(node, gys, captured)
            inputs = node.inputs
            if needed is not None:
                targets = tuple([i for i, x in enumerate(inputs) if x.requires_grad and (
                    id(x) in captured or x.creator in needed)])
            elif len(inputs) == 1:
                targets = (0,) if inputs[0].requires_grad else ()
            else:
                targets = tuple([i for i, x in enumerate(inputs) if x.requires_grad])
            if not targets:
                continue
            try:
                gxs = node.backward(targets, tuple(gys))
            except errors.GraphcoreError:
                raise
            except Exception as e:
                raise errors.BackwardError(_describe(node, f"{type(e).__name__}: {e}")) from e
            if double or node._checked_grads or config.debug:
                gxs = _checked(node, targets, gxs, double)
            if free:  # release what forward saved for backward
                node._ys = None
                node._saved = None
            for i in targets:
                gx = gxs[i]
                if gx is None:
                    continue
                x = inputs[i]
                creator = x.creator
                if creator is None:
                    if captured is not None:
                        if id(x) in captured:
                            if node.lends_buffers:
                                gx = gx.copy()  # a compiled call's buffer, reused next call
                            captured[id(x)] = _add(captured[id(x)], gx)
                    else:
                        _accumulate_leaf(x, gx, copied, owned)
                    continue
                slot = pending.get(creator)
                if slot is None:
                    pending[creator] = slot = [None] * len(creator.outputs)
                    heapq.heappush(heap, (-creator.rank, count, creator))
                    count += 1
                j = x._index
                slot[j] = gx if slot[j] is None else slot[j] + gx
    finally:
        config.enable_backprop = old_backprop
        config.double_backprop = old_double


def _checked(node: FunctionNode, targets: tuple[int, ...], gxs: tuple, double: bool) -> list:
    """Validate what a backward returned: one gradient per input, of the input's shape, of the
    kind this walk carries. Built-in ops skip this in first-order walks: the test suite
    gradient-checks every one of them, and the check would cost more than some ops do."""
    n = len(node.inputs)
    if len(gxs) != n:
        if len(gxs) != len(targets):
            raise errors.BackwardError(_describe(
                node, f"backward returned {len(gxs)} gradients for {n} inputs"))
        full = [None] * n
        for i, g in zip(targets, gxs, strict=True):
            full[i] = g
        gxs = full
    else:
        gxs = list(gxs)
    for i in targets:
        gxs[i] = _normalize(gxs[i], node.inputs[i], node, double)
    if config.debug:
        check_backward(node, gxs)
    return gxs


def _normalize(g: Any, x: Variable, node: FunctionNode, double: bool) -> Any:
    """Check a gradient's shape and make it the kind this walk carries (array or Variable)."""
    if g is None:
        return None
    if double:
        if not isinstance(g, Variable):
            g = constant(np.asarray(g))
        garray = g._array
    else:
        if isinstance(g, Variable):  # a user op whose backward called F.* functions
            g = g._array
        garray = g
    if garray.shape != x._array.shape:
        raise errors.BackwardError(_describe(
            node, f"gradient of shape {garray.shape} for an input of shape {x._array.shape}"))
    return g


def _describe(node: FunctionNode, what: str) -> str:
    shapes = ", ".join(str(x.shape) for x in node.inputs)
    text = f"in backward of {node.label} (forward inputs {shapes}): {what}"
    stack = getattr(node, "stack", None)
    if stack:
        text += "\nforward op created at:\n" + stack
    return text


def _accumulate_leaf(x: Variable, gx: Any, copied: set[int], owned: dict[int, Any]) -> None:
    g = x._grad
    if g is not None:
        if id(g) in owned and type(gx) is np.ndarray and gx.shape == g.shape \
                and gx.dtype == g.dtype:
            g += gx  # a sum this walk allocated for x alone: nobody else sees it
        else:  # the first sum: a fresh array, never one a caller or another slot may hold
            x._grad = g = g + gx
            owned[id(g)] = g
        return
    if type(gx) is np.ndarray and (gx.base is not None or id(gx) in copied
                                   or not gx.flags.writeable):
        gx = gx.copy()  # a leaf's grad must be its own writable array, never a view
    copied.add(id(gx))
    x._grad = gx


def _fill_zeros(node: FunctionNode, gys: list, double: bool) -> None:
    for i, g in enumerate(gys):
        if g is None:
            shape, dtype = node.output_meta(i)
            z = np.zeros(shape, dtype)
            gys[i] = constant(z) if double else z


def _store_output_grads(node: FunctionNode, gys: list) -> None:
    for ref, g in zip(node.outputs, gys, strict=True):
        y = ref()
        if y is not None:
            y._grad = g


def _capture_outputs(node: FunctionNode, gys: list, captured: dict[int, Any]) -> None:
    for ref, g in zip(node.outputs, gys, strict=True):
        y = ref()
        if y is not None and id(y) in captured:
            captured[id(y)] = _add(captured[id(y)], g)


def _needed_nodes(outputs: Iterable[Variable], inputs: Iterable[Variable]) -> set:
    """Nodes on some path from ``outputs`` back to ``inputs`` (so ``grad`` skips the rest)."""
    targets = {id(x) for x in inputs}
    order: list[FunctionNode] = []
    seen: set[int] = set()
    stack = [y.creator for y in outputs if y.creator is not None]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        order.append(n)
        stack.extend(x.creator for x in n.inputs if x.creator is not None)
    needed: set = set()
    for n in sorted(order, key=lambda n: n.rank):  # inputs before consumers
        if any(id(x) in targets or x.creator in needed for x in n.inputs):
            needed.add(n)
    return needed


def _add(a: Any, b: Any) -> Any:
    return b if a is None else a + b


def _as_variable(g: Any) -> Variable | None:
    if g is None or isinstance(g, Variable):
        return g
    return constant(g)
