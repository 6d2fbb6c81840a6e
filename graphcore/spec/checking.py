"""Check a spec's gradients: for every parameter, backward against finite differences.

``check_spec`` builds the model and inputs as ``graphtool run`` does, runs once (so lazily
sized parameters get their shapes), casts the parameters and the float inputs to float64, and
compares, element by element, the gradient that backward gives for the spec's loss
(``loss_function``) with a central difference ``(L(p + eps) - L(p - eps)) / 2 eps``.
Small parameters are compared in every element; larger ones on a sample of
``max_elements`` elements drawn from a generator keyed by the seed and the parameter's name,
so a check is repeatable.

The error of one element is ``|a - n| / max(|a|, |n|, atol / rtol)``: relative, with an
absolute floor so that gradients near zero (where finite differences are all rounding) do not
fail; an element passes when it is at most ``rtol``.

>>> report = check_spec(spec)
>>> report.ok, {c.name: c.max_rel_error for c in report.params}

With ``mode="static"`` the gradients checked are the compiled plan's (traced in float64, with
the selected ``passes``, its backward half replayed): the same finite differences of the spec's
loss judge them, so a plan whose forward or backward departs from the spec fails.

Unlike ``gradient_check.check_backward`` (one random direction, fine for an op), this points at
the parameter, and its table gives a number per parameter.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from graphcore.config import no_backprop_mode
from graphcore.gradient_check import numerical_grad
from graphcore.spec.inputs import make_inputs
from graphcore.spec.interpreter import SpecModel, build_model, loss_function, run_spec, seeded
from graphcore.spec.model import Spec
from graphcore.spec.training import require_loss
from graphcore.variable import Parameter

EPS = 1e-6
RTOL = 1e-4
ATOL = 1e-7
MAX_ELEMENTS = 64


@dataclass
class ParamCheck:
    """The check of one parameter. ``checked`` is 0 when the parameter was never initialized
    (its layer did not run: a branch or loop the data skipped); such a parameter passes."""

    name: str  # "l1/W", as save_npz writes it
    shape: tuple[int, ...] | None
    checked: int
    max_rel_error: float
    max_abs_error: float
    ok: bool

    def to_dict(self) -> dict[str, Any]:
        return {"shape": None if self.shape is None else list(self.shape),
                "checked": self.checked, "max_rel_error": _finite(self.max_rel_error),
                "max_abs_error": _finite(self.max_abs_error), "ok": self.ok}

    @property
    def size(self) -> int:
        return 0 if self.shape is None else int(np.prod(self.shape))


@dataclass
class CheckReport:
    spec: Spec
    seed: int
    loss: float
    params: list[ParamCheck]
    eps: float
    rtol: float
    atol: float

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.params)

    def failures(self) -> list[str]:
        return [p.name for p in self.params if not p.ok]

    def to_dict(self, mode: str = "dynamic") -> dict[str, Any]:
        from graphcore.spec.report import SCHEMA_VERSION

        return {"schema_version": SCHEMA_VERSION, "spec": self.spec.name, "seed": self.seed,
                "mode": mode, "ok": self.ok, "loss": self.loss, "eps": self.eps,
                "rtol": self.rtol, "atol": self.atol,
                "params": {p.name: p.to_dict() for p in self.params}}


def check_spec(spec: Spec, seed: int | None = None,
               input_overrides: Mapping[str, str] | None = None,
               stdin: BinaryIO | None = None, eps: float = EPS, rtol: float = RTOL,
               atol: float = ATOL, max_elements: int = MAX_ELEMENTS, mode: str = "dynamic",
               passes: Sequence[str] | None = None) -> CheckReport:
    """Gradient-check every parameter of ``spec``; see the module docstring.

    ``mode``: whose gradients are checked, define-by-run's (``dynamic``) or the compiled
    plan's (``static``, with ``passes`` as ``graphcore.static.passes.select`` reads them).
    Raises ``NoLossError`` for a spec without a loss, ``SpecRuntimeError`` when a run fails,
    ``ValueError`` for an unknown mode or pass.
    """
    if mode not in ("dynamic", "static"):
        raise ValueError(f"unknown mode {mode!r}; modes: dynamic, static")
    if mode == "static":
        from graphcore.static.passes import select

        select(passes)  # an unknown pass fails before anything runs
    require_loss(spec, "differentiate")
    seed = spec.seed if seed is None else seed
    model = build_model(spec, seed)
    inputs = make_inputs(spec.inputs, seed, spec.folder, input_overrides, stdin)
    run_spec(spec, model, inputs, backward=False, seed=seed)  # gives lazy parameters a shape
    for p in model.params(include_uninit=False):
        p.array = p.array.astype(np.float64)
    inputs = {k: _float64(v) for k, v in inputs.items()}
    loss = _Loss(spec, model, inputs, seed)
    value = loss.backward() if mode == "dynamic" else loss.static_backward(passes)
    checks = [_check_param(name.lstrip("/"), p, loss, seed, eps, rtol, atol, max_elements)
              for name, p in model.namedparams()]
    return CheckReport(spec, seed, value, checks, eps, rtol, atol)


class _Loss:
    """The spec's loss as a function of the model's parameters, evaluated repeatably (the
    global generator is seeded for every evaluation, so dropout draws the same masks)."""

    def __init__(self, spec: Spec, model: SpecModel, inputs: Mapping[str, Any],
                 seed: int) -> None:
        self.spec, self.model, self.inputs, self.seed = spec, model, inputs, seed

    def backward(self) -> float:
        """Analytic gradients into the parameters' ``grad``; returns the loss."""
        self.model.cleargrads()
        with seeded(self.seed + 1):
            loss = loss_function(self.spec, self.model, self.inputs)
        loss.backward()
        return float(loss.array)

    def static_backward(self, passes: Sequence[str] | None) -> float:
        """The compiled plan's gradients into the parameters' ``grad``; returns the loss."""
        from graphcore.static.spec_mode import StaticSpecRunner

        runner = StaticSpecRunner(self.spec, self.model, passes=passes)
        result = runner.run(self.inputs, seed=self.seed)  # seeds seed + 1, as below
        return float(result.loss)

    def value(self) -> np.ndarray:
        with seeded(self.seed + 1), no_backprop_mode():
            return np.asarray(loss_function(self.spec, self.model, self.inputs).array,
                              np.float64)


def _check_param(name: str, param: Parameter, loss: _Loss, seed: int, eps: float, rtol: float,
                 atol: float, max_elements: int) -> ParamCheck:
    if param.array is None:
        return ParamCheck(name, None, 0, 0.0, 0.0, True)
    array = param.array
    flat = array.reshape(-1)  # a view: writing it moves the parameter
    index = _sample(name, array.size, seed, max_elements)
    analytic = (np.zeros(index.size) if param.grad is None
                else param.grad.reshape(-1)[index].astype(np.float64))
    original = array.copy()
    chosen = flat[index].copy()  # numerical_grad moves these; f writes them into the param

    def f() -> np.ndarray:
        flat[index] = chosen
        return loss.value()

    try:
        numeric, = numerical_grad(f, (chosen,), (np.ones(()),), eps=eps)
    finally:
        np.copyto(array, original)
    difference = np.abs(analytic - numeric)
    scale = np.maximum(np.maximum(np.abs(analytic), np.abs(numeric)), atol / rtol)
    errors = difference / scale
    max_rel = float(errors.max()) if errors.size else 0.0
    max_abs = float(difference.max()) if difference.size else 0.0
    ok = bool(np.all(errors <= rtol))
    return ParamCheck(name, array.shape, int(index.size), max_rel, max_abs, ok)


def _sample(name: str, size: int, seed: int, max_elements: int) -> np.ndarray:
    """Flat indices to compare: all of them, or a repeatable sample of ``max_elements``."""
    if size <= max_elements:
        return np.arange(size)
    key = zlib.crc32(name.encode("utf-8"))
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), key]))
    return np.sort(rng.choice(size, max_elements, replace=False))


def _finite(x: float) -> float | None:
    """``x``, or None for NaN and Inf (a backward that produced them), which JSON lacks."""
    return x if np.isfinite(x) else None


def _float64(value: Any) -> Any:
    if isinstance(value, list):
        return [_float64(v) for v in value]
    return value.astype(np.float64) if value.dtype.kind == "f" else value
