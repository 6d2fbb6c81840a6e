"""Check a spec's gradients: for every parameter, backward against finite differences.

``check_spec`` builds the model and inputs as ``graphtool run`` does, runs once (so lazily
sized parameters get their shapes), casts the parameters and the float inputs to float64, and
checks each parameter along a random unit direction ``d`` over all its elements (drawn from a
generator keyed by the seed and the parameter's name, so a check is repeatable): backward's
``<grad, d>`` against the derivative of ``L(p + t d)`` at ``t = 0`` from five samples
``t = -2 eps .. 2 eps``. A wrong gradient passes only if its error happens to be orthogonal
to a random direction. Inputs with rows (a named batch axis, sequences) are checked on at most
``batch_size`` rows drawn by the seed: a check of backward needs a batch, not the data set.

The error is ``|a - n| / max(|a|, |n|, atol / rtol)``: relative, with an absolute floor so
that derivatives near zero (where finite differences are all rounding) do not fail; the
check passes when it is at most ``rtol``.

Where the loss has no derivative (relu or abs at 0, ties in max pooling, clip at a bound:
integer pixels and zero-initialized biases put many units exactly there), finite differences
measure nothing, and backward cannot be judged at that point. The five samples tell it (see
``check_kinks``): then the ops at a kink are located in the spec, and the parameter is checked
again at a nearby point, every parameter moved by a small random amount (the loss's kinks
are a set of measure zero in parameter space, so a random nearby point is off them). Each
parameter gets a verdict:

- ``passed`` / ``failed``: at the spec's own point;
- ``passed_nearby`` / ``failed`` (with ``nearby_scale``): at a nearby point, the spec's own
  being non-differentiable;
- ``not_checked``: no nearby point tried was differentiable either (a forward with jumps);
- ``skipped``: the parameter was never initialized (its layer did not run).

Only ``failed`` is a disagreement of backward with the forward: ``report.ok`` is False then.

>>> report = check_spec(spec)
>>> report.ok, {c.name: c.verdict for c in report.params}

With ``mode="static"`` the gradients checked are the compiled plan's (traced in float64, with
the selected ``passes``, its backward half replayed): the same finite differences of the spec's
loss judge them, so a plan whose forward or backward departs from the spec fails.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from graphcore.batching.run import run_spec
from graphcore.commands.kinks import SAMPLES, Kink, locate_kinks, record, slopes
from graphcore.commands.schema import SCHEMA_VERSION
from graphcore.commands.train.steps import require_loss
from graphcore.config import no_backprop_mode
from graphcore.inputs.make import make_inputs
from graphcore.interpreter.calls import loss_function
from graphcore.interpreter.parameters import SpecModel, build_model, seeded
from graphcore.interpreter.preprocessing import prepare_inputs
from graphcore.language.syntax import Spec
from graphcore.spec_static.runner import StaticSpecRunner
from graphcore.static.passes import select
from graphcore.variable import Parameter

EPS = 1e-6
RTOL = 1e-4
ATOL = 1e-7
BATCH_SIZE = 16
# How far the nearby points are, as fractions of each parameter's scale (its RMS, at least 1),
# tried in turn until the loss is differentiable there.
NEARBY_SCALES = (1e-3, 1e-2, 1e-1)

PASSED, FAILED, PASSED_NEARBY, NOT_CHECKED, SKIPPED = (
    "passed", "failed", "passed_nearby", "not_checked", "skipped")
VERDICTS = (PASSED, PASSED_NEARBY, NOT_CHECKED, SKIPPED, FAILED)


@dataclass
class ParamCheck:
    """The check of one parameter: its ``verdict`` (see the module docstring), the two
    directional derivatives compared (backward's and the finite difference), their error,
    the kinks the loss meets at the spec's own point (for ``not_checked``, also those at the
    last nearby point tried), and, when the verdict was reached at a nearby point, how far it
    was (``nearby_scale``; the figures are that point's)."""

    name: str  # "l1/W", as save_npz writes it
    shape: tuple[int, ...] | None
    verdict: str
    backward: float | None = None
    numeric: float | None = None
    rel_error: float | None = None
    abs_error: float | None = None
    kinks: list[Kink] = field(default_factory=list)
    nearby_scale: float | None = None

    @property
    def ok(self) -> bool:
        return self.verdict != FAILED

    @property
    def size(self) -> int:
        return 0 if self.shape is None else math.prod(self.shape)

    def to_dict(self) -> dict[str, Any]:
        return {"shape": None if self.shape is None else list(self.shape),
                "verdict": self.verdict, "ok": self.ok, "backward": _finite(self.backward),
                "numeric": _finite(self.numeric), "rel_error": _finite(self.rel_error),
                "abs_error": _finite(self.abs_error),
                "kinks": [k.to_dict() for k in self.kinks], "nearby_scale": self.nearby_scale}


@dataclass
class CheckReport:
    spec: Spec
    seed: int
    loss: float
    params: list[ParamCheck]
    eps: float
    rtol: float
    atol: float
    rows: tuple[int, int] | None = None  # (rows checked, rows the inputs have)

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.params)

    def failures(self) -> list[str]:
        return [p.name for p in self.params if not p.ok]

    def with_verdict(self, verdict: str) -> list[ParamCheck]:
        return [p for p in self.params if p.verdict == verdict]

    def to_dict(self, mode: str = "dynamic") -> dict[str, Any]:
        counts = {v: len(self.with_verdict(v)) for v in VERDICTS}
        rows = None if self.rows is None else {"checked": self.rows[0], "of": self.rows[1]}
        return {"schema_version": SCHEMA_VERSION, "spec": self.spec.name, "seed": self.seed,
                "mode": mode, "ok": self.ok, "loss": self.loss, "eps": self.eps,
                "rtol": self.rtol, "atol": self.atol, "rows": rows, "verdicts": counts,
                "params": {p.name: p.to_dict() for p in self.params}}


def check_spec(spec: Spec, seed: int | None = None,
               input_overrides: Mapping[str, str] | None = None,
               stdin: BinaryIO | None = None, eps: float = EPS, rtol: float = RTOL,
               atol: float = ATOL, batch_size: int | None = BATCH_SIZE, mode: str = "dynamic",
               passes: Sequence[str] | None = None) -> CheckReport:
    """Gradient-check every parameter of ``spec``; see the module docstring.

    ``mode``: whose gradients are checked, define-by-run's (``dynamic``) or the compiled
    plan's (``static``, with ``passes`` as ``graphcore.static.passes.select`` reads them).
    ``batch_size``: the most rows of the batched inputs to check on (None: all of them).
    Raises ``NoLossError`` for a spec without a loss, ``SpecRuntimeError`` when a run fails,
    ``ValueError`` for an unknown mode or pass or a batch size below 1.
    """
    if mode not in ("dynamic", "static"):
        raise ValueError(f"unknown mode {mode!r}; modes: dynamic, static")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if mode == "static":
        select(passes)  # an unknown pass fails before anything runs
    require_loss(spec, "differentiate")
    seed = spec.seed if seed is None else seed
    model = build_model(spec, seed)
    inputs = prepare_inputs(spec, model, make_inputs(spec.inputs, seed, spec.folder,
                                                     input_overrides, stdin))
    inputs, rows = _some_rows(spec, inputs, batch_size, seed)
    run_spec(spec, model, inputs, backward=False, seed=seed)  # gives lazy parameters a shape
    for p in model.params(include_uninit=False):
        p.array = p.array.astype(np.float64)
    inputs = {k: _float64(v) for k, v in inputs.items()}
    loss = _Loss(spec, model, inputs, seed, mode, passes)
    value = loss.gradients()
    named = [(name.lstrip("/"), p) for name, p in model.namedparams()]
    params = {name: p for name, p in named if p.array is not None}
    directions = {name: _direction(name, p.shape, seed) for name, p in params.items()}
    checks = {name: ParamCheck(name, None, SKIPPED) for name, p in named if p.array is None}
    kinked: list[str] = []
    center = loss.value()
    for name, p in params.items():
        comparison = _compare(loss, p, directions[name], center, eps, rtol, atol)
        if comparison.smooth:
            checks[name] = comparison.verdict(name, p.shape, PASSED)
        else:
            kinks = locate_kinks(_recorder(loss, p, directions[name], eps))
            checks[name] = comparison.verdict(name, p.shape, NOT_CHECKED, kinks)
            kinked.append(name)
    if kinked:
        _check_nearby(loss, params, directions, kinked, checks, seed, eps, rtol, atol)
    return CheckReport(spec, seed, value, [checks[name] for name, _ in named], eps, rtol, atol,
                       rows)


def _check_nearby(loss: _Loss, params: dict[str, Parameter], directions: dict[str, np.ndarray],
                  kinked: list[str], checks: dict[str, ParamCheck], seed: int, eps: float,
                  rtol: float, atol: float) -> None:
    """Check the parameters named in ``kinked`` again at nearby points (every parameter moved
    by ``NEARBY_SCALES`` of its scale in turn) until the loss is differentiable there; the
    parameters are back at the spec's point afterwards."""
    base = {name: p.array.copy() for name, p in params.items()}
    pending = list(kinked)
    try:
        for attempt, scale in enumerate(NEARBY_SCALES):
            rng = np.random.default_rng(np.random.SeedSequence([int(seed), 1 + attempt]))
            for name, p in params.items():
                b = base[name]
                size = max(float(np.sqrt(np.mean(np.square(b)))) if b.size else 0.0, 1.0)
                np.copyto(p.array, b + scale * size * rng.standard_normal(b.shape))
            loss.gradients()
            center = loss.value()
            still = []
            for name in pending:
                p = params[name]
                comparison = _compare(loss, p, directions[name], center, eps, rtol, atol)
                if comparison.smooth:
                    kinks = checks[name].kinks
                    checks[name] = comparison.verdict(name, p.shape, PASSED_NEARBY, kinks, scale)
                else:
                    still.append(name)
            pending = still
            if not pending:
                break
        for name in pending:  # what bends at the last point tried, too (a jumpy forward)
            kinks = checks[name].kinks
            places = {(k.op, k.loc) for k in kinks}
            kinks += [k for k in locate_kinks(_recorder(loss, params[name], directions[name],
                                                        eps)) if (k.op, k.loc) not in places]
    finally:
        for name, p in params.items():
            np.copyto(p.array, base[name])


@dataclass
class _Comparison:
    backward: float
    numeric: float
    smooth: bool
    rtol: float
    atol: float

    def verdict(self, name: str, shape: tuple[int, ...], verdict: str,
                kinks: list[Kink] | None = None, scale: float | None = None) -> ParamCheck:
        """A ``ParamCheck`` of this comparison: ``verdict`` when backward agrees or the
        comparison is not ``smooth`` (nothing to judge), ``failed`` when it disagrees."""
        difference = abs(self.backward - self.numeric)
        floor = self.atol / self.rtol if self.rtol > 0 else 0.0
        scale_of = max(abs(self.backward), abs(self.numeric), floor)
        relative = difference / scale_of if scale_of > 0 else 0.0
        if self.smooth and not relative <= self.rtol:  # NaN fails too
            verdict = FAILED
        return ParamCheck(name, tuple(shape), verdict, self.backward, self.numeric, relative,
                          difference, list(kinks or []), scale)


def _compare(loss: _Loss, param: Parameter, direction: np.ndarray, center: float, eps: float,
             rtol: float, atol: float) -> _Comparison:
    """Backward's ``<grad, direction>`` against finite differences along ``direction``."""
    grad = param.grad
    backward = 0.0 if grad is None else float(np.vdot(grad, direction))
    original = param.array.copy()
    samples = []
    try:
        for k in SAMPLES:
            if k == 0:
                samples.append(center)
                continue
            np.copyto(param.array, original + (k * eps) * direction)
            samples.append(loss.value())
    finally:
        np.copyto(param.array, original)
    s = slopes(np.array(samples), eps)
    numeric = float(s.numeric)
    floor = atol / rtol if rtol > 0 else 0.0
    # A kink is a disagreement of the one-sided derivatives that could fail the comparison by
    # itself; a smaller one cannot, and leaves the check standing.
    tolerance = 0.5 * rtol * max(abs(backward), abs(numeric) if math.isfinite(numeric) else 0.0,
                                 floor)
    return _Comparison(backward, numeric, bool(s.smooth(tolerance)), rtol, atol)


def _recorder(loss: _Loss, param: Parameter, direction: np.ndarray, eps: float):
    """``sample(k)`` for ``locate_kinks``: the spec recorded at ``param + k eps direction``."""
    def sample(k: int):
        original = param.array.copy()
        try:
            np.copyto(param.array, original + (k * eps) * direction)
            return record(loss.spec, loss.model, loss.inputs, loss.seed)
        finally:
            np.copyto(param.array, original)
    return sample


def _direction(name: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """A random unit vector over a parameter, repeatable by seed and name."""
    key = zlib.crc32(name.encode("utf-8"))
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), key]))
    d = rng.standard_normal(shape)
    norm = float(np.sqrt(np.square(d).sum()))
    return d / norm if norm > 0 else d


class _Loss:
    """The spec's loss as a function of the model's parameters, evaluated repeatably (the
    global generator is seeded for every evaluation, so dropout draws the same masks)."""

    def __init__(self, spec: Spec, model: SpecModel, inputs: Mapping[str, Any], seed: int,
                 mode: str, passes: Sequence[str] | None) -> None:
        self.spec, self.model, self.inputs, self.seed = spec, model, inputs, seed
        self.mode, self.passes = mode, passes

    def gradients(self) -> float:
        """Backward's gradients (define-by-run's or, in static mode, the compiled plan's) at
        the parameters' current values into their ``grad``; returns the loss."""
        if self.mode == "static":
            # A fresh runner: its plan is traced at these parameter values.
            runner = StaticSpecRunner(self.spec, self.model, passes=self.passes)
            result = runner.run(self.inputs, seed=self.seed)  # seeds seed + 1, as below
            return float(result.loss)
        self.model.cleargrads()
        with seeded(self.seed + 1):
            loss = loss_function(self.spec, self.model, self.inputs)
        loss.backward()
        return float(loss.array)

    def value(self) -> float:
        with seeded(self.seed + 1), no_backprop_mode():
            return float(np.asarray(loss_function(self.spec, self.model, self.inputs).array,
                                    np.float64))


def _some_rows(spec: Spec, inputs: dict[str, Any], batch_size: int | None, seed: int
               ) -> tuple[dict[str, Any], tuple[int, int] | None]:
    """At most ``batch_size`` rows of the inputs that have rows (a named batch axis, or a
    list of sequences), the same rows of each, drawn by the seed and kept in order."""
    names = [name for name, s in spec.inputs.items()
             if s.batch_dim is not None or isinstance(inputs.get(name), list)]
    if not names:
        return inputs, None
    total = len(inputs[names[0]])
    if batch_size is None or total <= batch_size:
        return inputs, (total, total)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(b"check rows")]))
    index = np.sort(rng.choice(total, batch_size, replace=False))
    out = dict(inputs)
    for name in names:
        value = inputs[name]
        out[name] = [value[int(i)] for i in index] if isinstance(value, list) else value[index]
    return out, (batch_size, total)


def _finite(x: float | None) -> float | None:
    """``x``, or None for NaN and Inf (a backward that produced them), which JSON lacks."""
    return x if x is None or math.isfinite(x) else None


def _float64(value: Any) -> Any:
    if isinstance(value, list):
        return [_float64(v) for v in value]
    return value.astype(np.float64) if value.dtype.kind == "f" else value
