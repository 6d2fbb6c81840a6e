"""What ``graphtool run`` reports, as plain data: one run of a spec, summarized.

``run_report`` loads parameters if asked, runs the spec once (forward, and backward when it has
a loss) and returns a ``RunReport`` whose ``to_dict()`` is the documented JSON document
(apart from the ``schema_version`` the CLI adds). Arrays are summarized, never dumped; the
full arrays go to ``arrays()`` for ``-o arrays.npz``.

``mode="static"`` runs the spec through a ``StaticSpecRunner`` (trace, passes, plan, replay):
the document is the dynamic one (same outputs, loss, gradient norms and path, within float
tolerance) with ``mode: "static"``, a ``static`` section (the plan cache's hits, misses,
evictions and plans; per pass what it removed: ``name``, ``nodes_removed``, ``bytes_saved``,
``notes``; the IR's node count before and after the passes) and ``timing_ms.compile`` (what
tracing, the passes and lowering cost). Every time lives under ``timing_ms``, so static
documents too are byte-identical across runs apart from ``timing_ms``. ``ir_texts()`` gives
the IR text before and after the passes (``ir.txt``, ``ir.optimized.txt``); with sequence
inputs, of the last example's plan.

Outputs and gradients may hold NaN or Inf (a finite loss can have an overflowing gradient);
the document then carries them as they are (the CLI writes them as JSON ``null``), and
``nonfinite_origin()`` names the first op that produced one, found by debug mode
(``graphcore.debug``) in a define-by-run re-run on a fresh model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from graphcore import errors
from graphcore.batching.run import run_spec
from graphcore.commands.schema import SCHEMA_VERSION
from graphcore.config import using_config
from graphcore.inputs.make import make_inputs
from graphcore.interpreter.parameters import SpecModel, build_model
from graphcore.interpreter.params_file import load_params
from graphcore.interpreter.preprocessing import prepare_inputs
from graphcore.interpreter.results import RunResult
from graphcore.language.syntax import Spec
from graphcore.spec_static.runner import StaticSpecRunner
from graphcore.static.passes import select
from graphcore.variable import Variable

MODES = ("dynamic", "static")


@dataclass
class RunReport:
    spec: Spec
    seed: int
    mode: str
    result: RunResult
    model: SpecModel
    static: Any = None  # the StaticSpecRunner of a static-mode run
    inputs: Mapping[str, Any] | None = None  # what the spec ran on (for a diagnosing re-run)
    params_file: str | None = None

    def static_summary(self) -> dict[str, Any] | None:
        """Static mode's section of the document (None in dynamic mode); no times in it."""
        if self.static is None:
            return None
        variant = self.static.last
        cache = self.static.stats.to_dict()
        cache.pop("compile_ms")
        return {
            "cache": cache,
            "passes": [{k: v for k, v in r.to_dict().items() if k != "time_ms"}
                       for r in variant.reports],
            "nodes": {"traced": len(variant.trace.graph.nodes),
                      "optimized": len(variant.plan.graph.nodes)},
        }

    def ir_texts(self) -> dict[str, str]:
        """``{"ir": traced IR text, "optimized": IR after the passes}``; empty when dynamic."""
        if self.static is None:
            return {}
        variant = self.static.last
        return {"ir": variant.trace.graph.text(), "optimized": variant.plan.graph.text()}

    def outputs(self) -> dict[str, dict[str, Any]]:
        return {name: summarize(value) for name, value in self.result.outputs.items()}

    def grads(self) -> dict[str, float]:
        """Gradient norm of each parameter that received one, keyed ``l1/W``: in float64, so
        finite gradients have a finite norm (Inf only when a gradient holds Inf)."""
        with np.errstate(all="ignore"):
            return {name.lstrip("/"): float(np.linalg.norm(p.grad.astype(np.float64)))
                    for name, p in self.model.namedparams() if p.grad is not None}

    def all_finite(self) -> bool:
        """Whether the loss, every output and every gradient are free of NaN and Inf."""
        return all(a.dtype.kind not in "fc" or bool(np.isfinite(a).all())
                   for a in self.arrays().values())

    def nonfinite_origin(self) -> str | None:
        """None when ``all_finite()``; else one line naming the first op whose forward or
        backward produced NaN or Inf (debug mode's finding in a define-by-run re-run on a
        fresh model, the same seed and inputs), or saying that no op was found."""
        if self.all_finite():
            return None
        for name, value in (self.inputs or {}).items():
            arrays = value if isinstance(value, list) else [value]
            if any(np.asarray(a).dtype.kind in "fc" and not np.isfinite(a).all()
                   for a in arrays):
                return f"input '{name}' holds NaN or Inf"
        model = build_model(self.spec, self.seed)
        if self.params_file is not None:
            load_params(self.params_file, model)
        try:
            with using_config("debug", True), np.errstate(all="ignore"):
                run_spec(self.spec, model, self.inputs or {}, seed=self.seed)
        except errors.NonFiniteError as e:
            return str(e).splitlines()[0]
        except errors.GraphcoreError:
            pass
        return "no single op was found to produce them"

    def to_dict(self) -> dict[str, Any]:
        timing = dict(self.result.timing_ms)
        if self.static is not None:
            timing["compile"] = self.static.stats.compile_ms
        doc = {
            "schema_version": SCHEMA_VERSION,
            "spec": self.spec.name,
            "seed": self.seed,
            "mode": self.mode,
            "loss": self.result.loss,
            "outputs": self.outputs(),
            "grads": self.grads(),
            "path": [entry.to_dict() for entry in self.result.path],
            "examples": self.result.examples,
            "timing_ms": {k: round(v, 3) for k, v in timing.items()},
        }
        if self.static is not None:
            doc["static"] = self.static_summary()
        if self.result.batching is not None:
            doc["batching"] = self.result.batching
        return doc

    def arrays(self) -> dict[str, np.ndarray]:
        """Outputs by value name, ``loss``, and ``grad/<param key>``, for an .npz file."""
        out = {}
        for name, value in self.result.outputs.items():
            values = value if isinstance(value, tuple) else (value,)
            for i, v in enumerate(values):
                key = name if len(values) == 1 else f"{name}/{i}"
                out[key] = np.asarray(v.array if isinstance(v, Variable) else v)
        if self.result.loss is not None:
            out["loss"] = np.asarray(self.result.loss)
        for name, p in self.model.namedparams():
            if p.grad is not None:
                out[f"grad/{name.lstrip('/')}"] = p.grad
        return out


def summarize(value: Any) -> dict[str, Any]:
    """Shape, dtype and statistics of a value (a tuple of values summarizes each)."""
    if isinstance(value, tuple):
        return {"parts": [summarize(v) for v in value]}
    array = np.asarray(value.array if isinstance(value, Variable) else value)
    stats: dict[str, Any] = {"shape": list(array.shape), "dtype": str(array.dtype)}
    if array.size and array.dtype.kind in "fiub":
        data = array.astype(np.float64)
        with np.errstate(all="ignore"):  # statistics of NaN and Inf are NaN or Inf: say so
            stats.update(mean=float(data.mean()), std=float(data.std()),
                         min=float(data.min()), max=float(data.max()))
    return stats


def run_report(spec: Spec, *, seed: int | None = None, params_file: str | None = None,
               input_overrides: Mapping[str, str] | None = None,
               stdin: BinaryIO | None = None, mode: str = "dynamic",
               passes: Sequence[str] | None = None, batching: str = "auto") -> RunReport:
    """Run ``spec`` once (loading ``params_file`` first when given) and report it.

    ``mode``: ``dynamic`` (define-by-run) or ``static`` (traced, optimized and run as a plan;
    ``passes`` selects the passes as ``graphcore.static.passes.select`` reads them, e.g.
    ``["-fuse"]``; an unknown name raises ``ValueError``). ``batching``: how per-example runs
    are batched (auto, pad, off; ``spec.batching``)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
    runner = None
    if mode == "static":
        select(passes)  # an unknown pass fails before anything runs
    seed = spec.seed if seed is None else seed
    model = build_model(spec, seed)
    inputs = make_inputs(spec.inputs, seed, spec.folder, input_overrides, stdin)
    if params_file is not None:
        load_params(params_file, model)
    inputs = prepare_inputs(spec, model, inputs)
    if mode == "static":
        runner = StaticSpecRunner(spec, model, passes=passes)
        result = runner.run(inputs, seed=seed, batching=batching)
    else:
        result = run_spec(spec, model, inputs, seed=seed, batching=batching)
    return RunReport(spec, seed, mode, result, model, runner, inputs, params_file)
