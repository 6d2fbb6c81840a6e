"""Numerical gradient checks with Chainer's semantics: ``check_backward``,
``check_double_backward`` and the finite-difference helper ``numerical_grad``.

``check_backward`` does not compare whole gradient arrays element by element (that costs two
forward passes per input element).  It draws one random unit vector ``r`` over every input and
parameter it checks and compares two numbers:

- **backward**: ``sum_i <grad_i, r_i>``, the gradients from one backward pass started from
  ``y_grad``, projected on ``r``;
- **numeric**: the derivative of ``g(delta) = <func(x + delta * r), y_grad>`` at ``delta = 0``,
  by a central finite difference (two forward passes, or five with
  ``detect_nondifferentiable``).

A wrong gradient passes only if its error happens to be orthogonal to a random direction, which
has probability zero.  ``check_double_backward`` runs the same check on the function that maps
``(x, y_grad)`` to the first-order gradients computed with ``enable_double_backprop=True``.

>>> x = np.random.uniform(0.5, 2.0, (3, 4))
>>> gy = np.random.normal(size=(3, 4))
>>> check_backward(F.log, x, gy, eps=1e-6, atol=1e-7, rtol=1e-6, dtype=np.float64)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graphcore import errors
from graphcore.backprop import grad
from graphcore.variable import Parameter, Variable, as_array, constant


class NondifferentiableError(errors.GradientCheckError):
    """``numerical_grad`` sampled the function across a kink, a jump or a NaN boundary."""


# --- finite differences ---------------------------------------------------------------------

def numerical_grad(f: Callable[[], Any], inputs: Sequence[np.ndarray],
                   grad_outputs: Sequence[Any], eps: float = 1e-3,
                   detect_nondifferentiable: bool = False, diff_atol: float = 0.0,
                   diff_rtol: float = 1e-2) -> tuple[np.ndarray, ...]:
    """Gradient of ``sum_k <f()[k], grad_outputs[k]>`` with respect to each array of ``inputs``.

    ``f`` takes no arguments: it reads the arrays of ``inputs``, which this function perturbs
    in place one element at a time (and restores).  ``f`` returns an array or a tuple of arrays;
    a ``None`` output or grad_output counts for nothing.  Each element costs two calls of ``f``
    (a central difference); with ``detect_nondifferentiable`` it costs four plus one, the
    derivative is estimated to third order in ``eps``, and a quadratic fitted to the five
    samples must explain them to within ``diff_atol + diff_rtol * (max - min)``, or
    ``NondifferentiableError`` is raised.  Gradients come back in each input's dtype.

    >>> x = np.array([1.0, 2.0])
    >>> numerical_grad(lambda: x * x, (x,), (np.ones(2),), eps=1e-6)
    (array([2., 4.]),)
    """
    if eps <= 0:
        raise ValueError(f"numerical_grad: eps must be positive, got {eps}")
    for x in inputs:
        if x.dtype.kind != "f":
            raise errors.DTypeError(
                f"numerical_grad: inputs must be floating-point arrays, got {x.dtype}")
    gys = tuple(None if gy is None else np.asarray(gy, np.float64) for gy in grad_outputs)
    if detect_nondifferentiable:
        offsets = (-eps, -eps / 2, 0.0, eps / 2, eps)
        weights = np.array([1.0, -8.0, 0.0, 8.0, -1.0]) / (6 * eps)
    else:
        offsets = (-eps, eps)
        weights = np.array([-1.0, 1.0]) / (2 * eps)
    # Looking for a NaN boundary means sampling across it: numpy's warnings there are expected.
    quiet = {"all": "ignore"} if detect_nondifferentiable else {}
    grads = []
    for i_in, x in enumerate(inputs):
        gx = np.zeros(x.shape, np.float64)
        for index in np.ndindex(x.shape):
            with np.errstate(**quiet):
                samples = _sample_outputs(f, x, index, offsets, len(gys))
            if detect_nondifferentiable:
                _check_differentiable(samples, diff_atol, diff_rtol, i_in, index, eps)
            gx[index] = _weighted_dot(samples, weights, gys)
        grads.append(gx.astype(x.dtype, copy=False))
    return tuple(grads)


def _sample_outputs(f: Callable[[], Any], x: np.ndarray, index: tuple[int, ...],
                    offsets: Sequence[float], n_outputs: int) -> list[tuple]:
    """Outputs of ``f`` (as float64 copies) with ``x[index]`` moved by each offset."""
    orig = x[index].copy()
    samples = []
    try:
        for offset in offsets:
            x[index] = orig + offset
            ys = _as_tuple(f())
            if len(ys) != n_outputs:
                raise errors.ShapeError(f"numerical_grad: f returned {len(ys)} outputs for "
                                        f"{n_outputs} grad_outputs")
            samples.append(tuple(None if y is None else np.array(as_array(y), np.float64)
                                 for y in ys))
    finally:
        x[index] = orig
    return samples


def _weighted_dot(samples: list[tuple], weights: np.ndarray, gys: tuple) -> float:
    """``sum_k <sum_s weights[s] * samples[s][k], gys[k]>``: the finite-difference slope."""
    total = 0.0
    for k, gy in enumerate(gys):
        if gy is None or samples[0][k] is None:
            continue
        slope = sum(w * ys[k] for w, ys in zip(weights, samples, strict=True) if w != 0)
        total += float((slope * gy).sum())
    return total


_ROUNDING_ULPS = 8


def _check_differentiable(samples: list[tuple], diff_atol: float, diff_rtol: float,
                          i_in: int, index: tuple[int, ...], eps: float) -> None:
    """Raise ``NondifferentiableError`` unless five equispaced samples look smooth."""
    for k in range(len(samples[0])):
        if samples[0][k] is None or samples[0][k].size == 0:
            continue
        stack = np.stack([ys[k] for ys in samples]).reshape(len(samples), -1)
        finite = np.isfinite(stack)
        where = f"input {i_in} at index {index}, output {k}, eps={eps}"
        if (finite != finite[0]).any():
            raise NondifferentiableError(
                f"numerical_grad: the function turns non-finite within eps of the point "
                f"({where}); samples at x-eps, x-eps/2, x, x+eps/2, x+eps:\n{stack}")
        if not finite.all():
            continue  # consistently non-finite (like log below zero): nothing to fit
        _, (residuals, *_) = np.polynomial.polynomial.polyfit(
            np.arange(len(samples)), stack, deg=2, full=True)
        misfit = np.sqrt(residuals / len(samples))
        spread = stack.max(axis=0) - stack.min(axis=0)
        # An output that barely moves is rounded to a few units in the last place of its
        # value; that staircase is rounding, not a kink.
        rounding = _ROUNDING_ULPS * np.finfo(np.float64).eps * np.abs(stack).max(axis=0)
        bad = (misfit > diff_atol + diff_rtol * spread + rounding) & (spread > 0)
        if bad.any():
            j = int(np.argmax(bad))
            raise NondifferentiableError(
                f"numerical_grad: tried to differentiate at a non-differentiable point "
                f"({where}, element {j} of the output): a quadratic misses the samples by "
                f"{misfit[j]:.3g} > diff_atol + diff_rtol * spread + rounding = "
                f"{diff_atol + diff_rtol * spread[j] + rounding[j]:.3g}; samples at x-eps, "
                f"x-eps/2, x, x+eps/2, x+eps: {stack[:, j]}")


# --- check_backward -------------------------------------------------------------------------

def check_backward(func: Callable[..., Any], x_data: Any, y_grad: Any,
                   params: Any = (), eps: float = 1e-3, atol: float = 1e-5,
                   rtol: float = 1e-4, no_grads: Sequence[bool] | None = None,
                   dtype: Any = None, detect_nondifferentiable: bool = False) -> None:
    """Check ``func``'s backward against finite differences along a random direction.

    ``func`` takes one Variable per array of ``x_data`` (one array or a tuple) and returns a
    Variable or a tuple of them.  ``y_grad`` holds one array per output (or ``None`` for a
    one-element output such as a loss, meaning a gradient of ones).  ``params`` are Variables
    or Parameters that ``func`` uses; their gradients are checked too, and their arrays are
    perturbed in place during the numeric pass and restored afterwards.

    ``no_grads`` flags inputs that are not differentiable (default: the non-float ones, such
    as labels and ids); they are left out of the direction, and backward must not return a
    gradient for them.  ``dtype`` (a float dtype, usually ``np.float64``) casts float inputs,
    ``y_grad`` and params for the numeric pass only, so a float32 op is checked against
    accurate finite differences; backward runs on the arrays as given.

    The check passes when ``|numeric - backward| <= atol + rtol * |backward|``; otherwise it
    raises ``GradientCheckError`` naming ``func``, both values and each argument's share.
    ``func`` is called several times, so it must be deterministic (fix dropout masks).

    >>> check_backward(F.softmax_cross_entropy, (x, t), None, dtype=np.float64)
    """
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise errors.DTypeError(f"check_backward: dtype must be a float type, got {dtype}")
    xs = _check_arguments("check_backward", func, x_data, eps, atol, rtol)
    params = _as_tuple(params)
    no_grads = _no_grads(xs, no_grads)
    variables = [Variable(x, requires_grad=x.dtype.kind == "f") for x in xs]
    ys = _as_tuple(func(*variables))
    gys = _grad_outputs(ys, y_grad)
    if no_grads.count(False) + len(params) == 0:
        return  # nothing differentiable to check
    backward_grads = _backward_grads(variables, ys, gys, params, no_grads)
    directions = _sample_directions(
        [x.shape for x, skip in zip(xs, no_grads, strict=True) if not skip]
        + [p.shape for p in params])
    backward = sum(float((g * d).sum()) for g, d in zip(backward_grads, directions, strict=True)
                   if g is not None)
    numeric = _directional_numeric(func, xs, params, gys, no_grads, directions, eps, dtype,
                                   detect_nondifferentiable, rtol)
    if abs(numeric - backward) <= atol + rtol * abs(backward):
        return
    shares = _shares(func, xs, params, gys, no_grads, directions, backward_grads, eps, dtype)
    raise errors.GradientCheckError(_failure_message(
        func, numeric, backward, eps, atol, rtol, xs, params, no_grads, shares))


def _check_arguments(api: str, func: Any, x_data: Any, eps: Any, atol: Any,
                     rtol: Any) -> tuple[np.ndarray, ...]:
    """The arguments both checks share; returns ``x_data`` as a tuple of arrays."""
    if not callable(func):
        raise errors.ArgumentTypeError(f"{api}: func must be callable, got "
                                       f"{type(func).__name__}")
    xs = []
    for i, x in enumerate(_as_tuple(x_data)):
        a = as_array(x) if isinstance(x, Variable) else x
        if not isinstance(a, np.ndarray | np.generic | int | float | list):
            raise errors.ArgumentTypeError(f"{api}: x_data[{i}] must be a numpy array, got "
                                           f"{type(x).__name__}")
        a = np.asarray(a)
        if a.dtype.kind not in "biuf":
            raise errors.ArgumentTypeError(f"{api}: x_data[{i}] must hold numbers, got dtype "
                                           f"{a.dtype}")
        xs.append(a)
    for name, value in (("eps", eps), ("atol", atol), ("rtol", rtol)):
        if isinstance(value, bool) or not isinstance(value, int | float | np.floating):
            raise errors.ArgumentTypeError(f"{api}: {name} must be a number, got "
                                           f"{type(value).__name__}")
        if not (value > 0 if name == "eps" else value >= 0):  # NaN fails both
            raise errors.ArgumentValueError(f"{api}: {name} must be "
                                            f"{'positive' if name == 'eps' else 'at least 0'}, "
                                            f"got {value}")
    return tuple(xs)


def _as_tuple(x: Any) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _no_grads(xs: tuple[np.ndarray, ...], no_grads: Sequence[bool] | None) -> list[bool]:
    if no_grads is None:
        return [x.dtype.kind != "f" for x in xs]
    if len(no_grads) != len(xs):
        raise errors.ShapeError(f"check_backward: no_grads has {len(no_grads)} flags for "
                                f"{len(xs)} inputs")
    for skip, x in zip(no_grads, xs, strict=True):
        if not skip and x.dtype.kind != "f":
            raise errors.DTypeError(f"check_backward: an input of dtype {x.dtype} cannot be "
                                    "differentiated; flag it in no_grads")
    return [bool(skip) for skip in no_grads]


def _grad_outputs(ys: tuple, y_grad: Any) -> tuple:
    """``y_grad`` as one array (or None) per output, validated against the outputs."""
    if y_grad is None:
        if len(ys) != 1 or ys[0].size != 1:
            shapes = ", ".join(str(y.shape) for y in ys)
            raise errors.ShapeError(
                f"check_backward: y_grad may be None only for a function with one "
                f"one-element output (a loss); outputs have shapes {shapes}")
        return (np.ones_like(as_array(ys[0])),)
    gys = tuple(None if gy is None else np.asarray(as_array(gy)) for gy in _as_tuple(y_grad))
    if len(gys) != len(ys):
        raise errors.ShapeError(f"check_backward: {len(gys)} output gradients for "
                                f"{len(ys)} outputs")
    for k, (y, gy) in enumerate(zip(ys, gys, strict=True)):
        if gy is None:
            continue
        if gy.shape != y.shape:
            raise errors.ShapeError(f"check_backward: y_grad[{k}] has shape {gy.shape}, "
                                    f"output {k} has shape {y.shape}")
        if gy.dtype != y.dtype:
            raise errors.DTypeError(f"check_backward: y_grad[{k}] has dtype {gy.dtype}, "
                                    f"output {k} has dtype {y.dtype}")
    return gys


def _backward_grads(variables: list[Variable], ys: tuple, gys: tuple, params: tuple,
                    no_grads: list[bool]) -> list[np.ndarray | None]:
    """One backward pass; gradients of the checked inputs, then of the params."""
    outputs = [y for y, gy in zip(ys, gys, strict=True) if gy is not None]
    seeds = [gy for gy in gys if gy is not None]
    grads = grad(outputs, variables + list(params), grad_outputs=seeds) if outputs else (
        (None,) * (len(variables) + len(params)))
    checked = []
    for i, (skip, g) in enumerate(zip(no_grads, grads[:len(variables)], strict=True)):
        if not skip:
            checked.append(None if g is None else g.array)
        elif g is not None:
            raise errors.GradientCheckError(
                f"check_backward: input {i} is flagged in no_grads (not differentiable), "
                "yet backward returned a gradient for it")
    return checked + [None if g is None else g.array for g in grads[len(variables):]]


def _sample_directions(shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    """A standard-normal vector over all the arrays, scaled to unit length (numpy's global
    generator, so ``np.random.seed`` makes a check repeatable)."""
    directions = [np.random.normal(size=shape) for shape in shapes]
    norm = math.sqrt(sum(float(np.square(d).sum()) for d in directions))
    if norm == 0:  # only zero-size arrays
        return directions
    return [d / norm for d in directions]


def _directional_numeric(func: Callable[..., Any], xs: tuple[np.ndarray, ...], params: tuple,
                         gys: tuple, no_grads: list[bool], directions: list[np.ndarray],
                         eps: float, dtype: Any, detect_nondifferentiable: bool = False,
                         diff_rtol: float = 1e-2) -> float:
    """d/d(delta) of ``<func(x + delta * direction), gys>`` at 0, by finite differences."""
    cast = (lambda a: a) if dtype is None else (
        lambda a: a.astype(dtype, copy=False) if a.dtype.kind == "f" else a)
    data = [cast(x) for x in xs]
    originals = [p.array for p in params]
    param_data = [cast(a) for a in originals]
    delta = np.zeros((), np.float64)

    def perturbed(a: np.ndarray, direction: np.ndarray) -> np.ndarray:
        return np.asarray(a.astype(np.float64) + delta * direction).astype(a.dtype)

    def forward() -> tuple:
        moving = iter(directions)
        args = []
        for a, skip in zip(data, no_grads, strict=True):
            a = a if skip else perturbed(a, next(moving))
            args.append(Variable(a, requires_grad=a.dtype.kind == "f"))
        for p, a in zip(params, param_data, strict=True):
            p.array = perturbed(a, next(moving))
        try:
            ys = _as_tuple(func(*args))
        finally:
            for p, a in zip(params, originals, strict=True):
                p.array = a
        return tuple(None if y is None else as_array(y) for y in ys)

    numeric, = numerical_grad(forward, (delta,), gys, eps=eps,
                              detect_nondifferentiable=detect_nondifferentiable,
                              diff_atol=0.0, diff_rtol=diff_rtol)
    return float(numeric)


def _shares(func: Callable[..., Any], xs: tuple, params: tuple, gys: tuple,
            no_grads: list[bool], directions: list[np.ndarray], grads: list,
            eps: float, dtype: Any) -> list[tuple[str, float, float]]:
    """Per checked argument: its (name, backward share, numeric share), to point at the
    culprit once the total disagrees (one more numeric pass per argument)."""
    names = [f"inputs[{i}]" for i, skip in enumerate(no_grads) if not skip]
    names += [f"params[{j}]" + (f" {p.name!r}" if p.name else "") for j, p in enumerate(params)]
    shares = []
    for k, name in enumerate(names):
        only_k = [d if j == k else np.zeros_like(d) for j, d in enumerate(directions)]
        g = grads[k]
        backward = 0.0 if g is None else float((g * directions[k]).sum())
        numeric = _directional_numeric(func, xs, params, gys, no_grads, only_k, eps, dtype)
        shares.append((name, backward, numeric))
    return shares


def _failure_message(func: Callable[..., Any], numeric: float, backward: float, eps: float,
                     atol: float, rtol: float, xs: tuple, params: tuple, no_grads: list[bool],
                     shares: list[tuple[str, float, float]]) -> str:
    name = getattr(func, "__qualname__", None) or repr(func)
    lines = [
        f"check_backward failed for {name} (eps={eps}, atol={atol}, rtol={rtol}): the "
        "directional derivative along a random unit vector disagrees",
        f"  numeric  (finite difference): {numeric!r}",
        f"  backward (sum <grad, dir>):   {backward!r}",
        f"  |difference| = {abs(numeric - backward):.3g} > atol + rtol * |backward| = "
        f"{atol + rtol * abs(backward):.3g}",
        "  arguments:",
    ]
    for i, (x, skip) in enumerate(zip(xs, no_grads, strict=True)):
        note = " (not checked)" if skip else ""
        lines.append(f"    inputs[{i}]: {x.shape} {x.dtype}{note}")
    for j, p in enumerate(params):
        lines.append(f"    params[{j}]: {p.name or ''} {p.shape} {p.dtype}")
    lines.append("  share of each argument, backward vs numeric:")
    for arg, b, n in shares:
        mark = "" if abs(n - b) <= atol + rtol * abs(b) else "   <-- disagrees"
        lines.append(f"    {arg}: {b!r} vs {n!r}{mark}")
    return "\n".join(lines)


# --- check_double_backward ------------------------------------------------------------------

def _check_backward_with_params(func: Callable[..., Any], x_data: Any, y_grad: Any,
                                params: Any = (), eps: float = 1e-3, atol: float = 1e-5,
                                rtol: float = 1e-4, no_grads: Sequence[bool] | None = None,
                                dtype: Any = None, detect_nondifferentiable: bool = False
                                ) -> None:
    """Chainer's form of ``check_backward`` for links (its ``LinkTestCase`` calls it):
    ``params`` are arrays, and ``func(inputs, parameters)`` takes the input Variables and
    Parameters over those arrays. The arrays are perturbed in place for the numeric pass and
    restored, as ``check_backward``'s params are."""
    parameters = tuple(Parameter(np.asarray(p)) for p in _as_tuple(params))
    if not all(isinstance(p, np.ndarray) for p in _as_tuple(params)):
        raise errors.ArgumentTypeError("_check_backward_with_params: params must be arrays")
    check_backward(lambda *xs: func(xs, parameters), x_data, y_grad, params=parameters,
                   eps=eps, atol=atol, rtol=rtol, no_grads=no_grads, dtype=dtype,
                   detect_nondifferentiable=detect_nondifferentiable)


def check_double_backward(func: Callable[..., Any], x_data: Any, y_grad: Any,
                          x_grad_grad: Any, params: Any = (), params_grad_grad: Any = (),
                          eps: float = 1e-3, atol: float = 1e-4, rtol: float = 1e-3,
                          no_grads: Sequence[bool] | None = None, dtype: Any = None,
                          detect_nondifferentiable: bool = False) -> None:
    """Check the gradient of ``func``'s first-order gradient (second-order differentiation).

    The first-order gradients of ``func`` with respect to its float inputs and ``params`` are
    computed by ``graphcore.grad(..., enable_double_backprop=True)`` as functions of
    ``(x_data, y_grad)``; ``check_backward`` then checks that function, with
    ``x_grad_grad`` (one array per float input) and ``params_grad_grad`` (one per param) as
    its output gradients.  Its numeric pass differentiates the recorded first-order gradients,
    so this does not re-check first-order values: run ``check_backward`` first.  ``no_grads``,
    when given, covers ``x_data`` followed by ``y_grad``.  Tolerances default looser than
    ``check_backward``'s, as Chainer's do, since second differences are less accurate.
    """
    xs = _check_arguments("check_double_backward", func, x_data, eps, atol, rtol)
    params = _as_tuple(params)
    # a None in y_grad (as Chainer's): that output gets no gradient, and is left out
    given = () if y_grad is None else _as_tuple(y_grad)
    kept = [k for k, gy in enumerate(given) if gy is not None]
    gys = tuple(np.asarray(given[k]) for k in kept)
    differentiable = [x.dtype.kind == "f" for x in xs]
    n_x = len(xs)
    if no_grads is not None and len(no_grads) == n_x + len(given):
        no_grads = list(no_grads[:n_x]) + [no_grads[n_x + k] for k in kept]

    def first_order_grad(*inputs: Variable) -> tuple[Variable, ...]:
        x_vars, gy_vars = inputs[:n_x], inputs[n_x:]
        ys = _as_tuple(func(*x_vars))
        if given:
            ys = tuple(ys[k] for k in kept)
        targets = [x for x, ok in zip(x_vars, differentiable, strict=True) if ok]
        targets += list(params)
        grads = grad(list(ys), targets, grad_outputs=list(gy_vars) if gy_vars else None,
                     enable_double_backprop=True)
        # An input the outputs do not depend on has a zero gradient, not a missing one.
        return tuple(constant(np.zeros_like(t.array)) if g is None else g
                     for t, g in zip(targets, grads, strict=True))

    name = getattr(func, "__qualname__", None) or repr(func)
    first_order_grad.__qualname__ = f"the first-order gradient of {name}"
    grad_grad = _as_tuple(x_grad_grad) + _as_tuple(params_grad_grad)
    try:
        check_backward(first_order_grad, xs + gys, grad_grad, params=params, eps=eps,
                       atol=atol, rtol=rtol, no_grads=no_grads, dtype=dtype,
                       detect_nondifferentiable=detect_nondifferentiable)
    except NondifferentiableError:
        raise
    except errors.GradientCheckError as e:
        raise errors.GradientCheckError(
            f"check_double_backward failed: the second-order gradient disagrees with finite "
            f"differences of the first-order gradient. Below, inputs[:{n_x}] are x_data and "
            f"inputs[{n_x}:] are y_grad; the outputs are the first-order gradients of the "
            f"float inputs, then of the params.\n{e}") from None
