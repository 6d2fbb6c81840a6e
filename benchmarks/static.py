"""Static-mode benchmark: compiled replay vs define-by-run vs the hand-written numpy floor.

The same four workloads as ``benchmarks/engine.py`` (and its floors, measured beside, in the
same process, alternating rounds, medians). Static replay runs ``graphcore.compile(model)``;
for the RNN, one compiled function over a whole sequence, so each length's plan is cached
after its first call. Also reported: compile time, the passes' effect, and the memory a
steady-state training step allocates (tracemalloc) for static replay and for the floor.

    python benchmarks/static.py [--quick] [--json] [--workloads W1,W3]
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # one BLAS thread for a fair comparison (before numpy loads)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse
import importlib.util
import json
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

import graphcore
import graphcore.functions as F

TARGETS = {"W1": 1.5, "W3": 1.15, "W4": 1.05, "W5": 1.5, "W6": 1.1, "W7": 1.1}


def _engine():
    path = Path(__file__).with_name("engine.py")
    spec = importlib.util.spec_from_file_location("benchmarks_engine", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("benchmarks_engine", module)
    spec.loader.exec_module(module)
    return module


engine = _engine()


def static_step(wl: Any) -> tuple[Callable[[Any], Any], Any]:
    """A step function running ``wl``'s model in static mode, and the compiled object."""
    model = wl.model
    if wl.key == "W5":
        def sequence_loss(*xs):
            h = np.zeros((1, model.lh.W.shape[0]), np.float32)
            for x in xs:
                h = model(x, h)
            return F.sum(h)

        compiled = graphcore.compile(sequence_loss, params=model, name="rnn")

        def step(xs):
            model.cleargrads()
            loss = compiled(*xs)
            loss.backward()
            return loss

        return step, compiled
    if wl.key == "W7":
        return _lstm_window_step(model)
    compiled = graphcore.compile(model)

    def step(unit):
        x, t = unit
        model.cleargrads()
        loss = compiled(x) if t is None else compiled(x, t)
        loss.backward()
        return loss

    return step, compiled


def _lstm_window_step(model: Any) -> tuple[Callable[[Any], Any], Any]:
    """W7: one compiled function per truncated-BPTT window, ``(h0, c0, *xs, *ts) -> (loss, h,
    c)``; the state is data between windows (zeros at the first), as define-by-run's
    ``unchain_backward`` leaves it."""
    lstm = model.lstm

    def window_loss(h0, c0, *tokens):
        n = len(tokens) // 2
        lstm.set_state(c0, h0)
        loss = 0
        for x, t in zip(tokens[:n], tokens[n:], strict=True):
            loss += model(x, t)
        return loss, lstm.h, lstm.c

    compiled = graphcore.compile(window_loss, params=model, name="lstm_window")
    state: list[np.ndarray] = []

    def step(unit):
        first, xs, ts = unit
        if first:
            zeros = np.zeros((len(xs[0]), lstm.state_size), np.float32)
            state[:] = [zeros, zeros]
        model.cleargrads()
        loss, h, c = compiled(state[0], state[1], *xs, *ts)
        state[:] = [h.array.copy(), c.array.copy()]  # the plan reuses its output buffers
        loss.backward()
        return loss

    return step, compiled


def compile_ms(build: Callable[[], Any]) -> float:
    """Wall time of the first call (trace + passes + lowering + one replay), median of 5."""
    times = []
    for _ in range(5):
        wl = build()
        step, compiled = static_step(wl)
        step(wl.units[0])
        times.append(compiled.stats.compile_ms)
    return float(np.median(times))


def step_allocations(wl: Any, step: Callable[[Any], Any], runs: int = 3) -> int:
    """Peak bytes traced by tracemalloc during one steady-state step (after warm-up)."""
    for _ in range(2):
        step(wl.units[0])
    peaks = []
    for _ in range(runs):
        tracemalloc.start()
        step(wl.units[0])
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return min(peaks)


def run(keys: Sequence[str], rounds: int, batch_s: float, warmup_s: float) -> list[dict]:
    rows = []
    for key in keys:
        build = engine.WORKLOADS[key]
        wl = build()
        step, compiled = static_step(wl)
        static = replace(wl, gc_step=step)
        problems = engine.compare_gradients(static)
        if problems:
            raise SystemExit(f"{key}: static gradients differ from the floor: {problems}")
        timing = engine.measure(static, rounds, batch_s, warmup_s)
        dynamic = engine.measure(build(), max(3, rounds // 3), batch_s, warmup_s / 2)
        row = {"key": key, "title": wl.title, "target": TARGETS[key],
               "static_us": timing["graphcore"]["median_us"],
               "floor_us": timing["floor"]["median_us"], "ratio": timing["ratio"],
               "ratio_paired": timing["ratio_paired"],
               "dynamic_us": dynamic["graphcore"]["median_us"],
               "compile_ms": compile_ms(build), "cache": compiled.stats.to_dict(),
               "passes": [r.to_dict() for r in (compiled.last.reports if compiled.last else [])]}
        if key == "W4":
            row["static_step_bytes"] = step_allocations(wl, _with_update(wl, step))
            row["floor_step_bytes"] = step_allocations(wl, _floor_with_update(wl))
        rows.append(row)
    return rows


def _with_update(wl: Any, step: Callable[[Any], Any]) -> Callable[[Any], Any]:
    optimizer = graphcore.optimizers.Adam().setup(wl.model)

    def train(unit):
        step(unit)
        optimizer.update()

    return train


def _floor_with_update(wl: Any) -> Callable[[Any], Any]:
    params = [p.array.copy() for p in wl.gc_params]

    def train(unit):
        _, grads = engine.mlp_floor(params, unit[0], unit[1], "sce")
        for p, g in zip(params, grads, strict=True):
            p -= 0.001 * g

    return train


def table(rows: list[dict]) -> str:
    header = ["workload", "static us", "define-by-run us", "floor us", "static/floor", "target",
              "compile ms"]
    lines = ["  ".join(header)]
    for r in rows:
        lines.append("  ".join([
            f"{r['key']} {r['title']}", f"{r['static_us']:.1f}", f"{r['dynamic_us']:.1f}",
            f"{r['floor_us']:.1f}", f"{r['ratio']:.2f}x", f"{r['target']:.2f}x",
            f"{r['compile_ms']:.1f}"]))
    for r in rows:
        if "static_step_bytes" in r:
            lines.append(f"{r['key']} training step allocations: static "
                         f"{r['static_step_bytes'] / 1e6:.2f} MB, floor "
                         f"{r['floor_step_bytes'] / 1e6:.2f} MB")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--workloads", default="W1,W3,W4,W5,W6,W7")
    args = ap.parse_args(argv)
    keys = [k.strip().upper() for k in args.workloads.split(",") if k.strip()]
    rounds, batch_s, warmup_s = (7, 0.005, 0.05) if args.quick else (21, 0.03, 0.3)
    start = time.perf_counter()
    rows = run(keys, rounds, batch_s, warmup_s)
    if args.json:
        print(json.dumps({"numpy": np.__version__, "results": rows}, indent=2, sort_keys=True))
    else:
        print(f"numpy {np.__version__}, python {sys.version.split()[0]}, "
              f"{time.perf_counter() - start:.0f} s")
        print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
