"""Spec interpreter overhead: the W1 seed spec run define-by-run through the spec interpreter
against the same model written in Python against graphcore.

The spec side is ``specs/seed_static.yaml`` run exactly as ``graphtool bench`` runs it in
dynamic mode (``graphcore.commands.bench``'s runner: ``run_spec`` with its argument checks,
seeding, path and timings); the Python side is ``benchmarks/engine.py``'s W1 step (cleargrads,
``sum(l2(relu(l1(x))))``, backward) on the same parameter values and input; the numpy floor
is W1's. Before timing, both graphcore sides' gradients are checked equal. Timing is
``engine.py``'s: warm-up, then rounds alternating the sides in one process, medians.

    python benchmarks/spec_interpreter.py            # 31 rounds
    python benchmarks/spec_interpreter.py --quick    # 7 rounds, noisier
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # one BLAS thread for every side; must precede the numpy import
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import engine  # noqa: E402

from graphcore.commands.bench import RUNNERS  # noqa: E402
from graphcore.language.loader import load_spec_file  # noqa: E402

SEED_SPEC = Path(__file__).resolve().parent.parent / "specs" / "seed_static.yaml"
TARGET = 1.3  # spec interpreter / Python, define-by-run


def build_sides() -> dict[str, Callable[[], None]]:
    """The three sides, checked: the spec and the Python model give the same gradients."""
    spec = load_spec_file(str(SEED_SPEC))
    from graphcore.inputs.make import make_inputs

    inputs = make_inputs(spec.inputs, spec.seed, spec.folder)
    runner = RUNNERS["dynamic"](spec, inputs, spec.seed)
    runner.step()
    python = engine.build_w1()
    net = python.model
    for scope in ("l1", "l2"):
        for name in ("W", "b"):
            getattr(getattr(net, scope), name).array[...] = getattr(
                runner.model.layer(scope), name).array
    x = np.asarray(inputs["x"], dtype=np.float32)
    python.units = [(x, None)]
    python.gc_iteration()()
    for scope in ("l1", "l2"):
        for name in ("W", "b"):
            ours = getattr(runner.model.layer(scope), name).grad
            theirs = getattr(getattr(net, scope), name).grad
            if not np.allclose(ours, theirs, rtol=1e-5, atol=1e-6):
                raise SystemExit(f"spec and Python gradients differ at {scope}/{name}")
    return {"spec": runner.step, "python": python.gc_iteration(),
            "floor": python.floor_iteration()}


def measure(sides: dict[str, Callable[[], None]], rounds: int, batch_s: float,
            warmup_s: float) -> dict[str, Any]:
    deadline = time.perf_counter() + warmup_s
    while time.perf_counter() < deadline:
        for fn in sides.values():
            fn()
    sizes = {name: engine._batch_size(fn, batch_s) for name, fn in sides.items()}
    times: dict[str, list[float]] = {name: [] for name in sides}
    order = list(sides)
    for r in range(rounds):
        for name in (order if r % 2 == 0 else order[::-1]):
            times[name].append(engine._time_batch(sides[name], sizes[name]) / sizes[name])
    result: dict[str, Any] = {name: statistics.median(t) * 1e6 for name, t in times.items()}
    result["ratio_paired"] = statistics.median(
        a / b for a, b in zip(times["spec"], times["python"], strict=True))
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="7 shorter rounds (noisier)")
    args = ap.parse_args()
    rounds, batch_s, warmup_s = (7, 0.05, 0.2) if args.quick else (31, 0.1, 1.0)
    r = measure(build_sides(), rounds, batch_s, warmup_s)
    print("| workload | spec interpreter | Python + graphcore | numpy floor | spec / Python "
          "| target |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| W1 seed spec (specs/seed_static.yaml), define-by-run | {r['spec']:.1f} us | "
          f"{r['python']:.1f} us | {r['floor']:.1f} us | {r['ratio_paired']:.2f}x | "
          f"{TARGET}x |")


if __name__ == "__main__":
    main()
