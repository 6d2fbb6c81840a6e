"""Automatic batching of per-example runs against hand-written numpy floors (issue 13).

1. The tanh RNN (input 16, hidden 32) over 100 sequences of lengths 5..49, forward and
   backward (BPTT), loss the mean over examples of a linear readout of the final state. Floor:
   numpy that pads all sequences into one batch and masks the carried state. Target: the spec
   auto-batched in static mode within 2x of it.
2. A spec with a per-example branch (``mean(x) > 0``: about half the examples take each side),
   256 examples of 64 features, forward and backward. Floor: numpy that processes the two
   groups as two batches. Target: auto-batched within 1.5x.

Both spec sides run exactly as ``graphtool bench`` runs them (``graphcore.spec.bench``'s
runners); their gradients are checked against the floor's before timing. One BLAS thread;
warm-up, then rounds alternating the sides in one process; medians.

    python benchmarks/batching.py            # 15 rounds
    python benchmarks/batching.py --quick    # 5 rounds, noisier
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # one BLAS thread for every side; must precede the numpy import
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import engine  # noqa: E402  (its batch timing)

from graphcore.spec.bench import RUNNERS  # noqa: E402
from graphcore.spec.inputs import make_inputs  # noqa: E402
from graphcore.spec.loader import load_spec_text  # noqa: E402

LENGTHS = [5 + (7 * i) % 45 for i in range(100)]  # 100 sequences, every length 5..49
RNN = f"""
graphtool: 1
name: rnn_100
seed: 0
inputs:
  s: {{random: normal, shape: [null, 16], lengths: {LENGTHS}}}
graph:
  - for_each: s
    as: x_t
    carry: {{h: {{zeros: [32]}}}}
    body:
      - {{op: concat, from: [x_t, h], axis: 0}}
      - {{op: linear, out_size: 32, name: cell}}
      - {{op: tanh, to: h}}
  - {{op: linear, from: h, out_size: 1, name: readout}}
loss: {{op: sum}}
"""
BRANCH = """
graphtool: 1
name: branch_256
seed: 0
inputs:
  x: {random: normal, shape: [64], examples: 256}
graph:
  - if: mean(x) > 0
    then: [{op: linear, out_size: 128, name: a}, tanh, {op: linear, out_size: 1, name: a_out}]
    else: [{op: linear, out_size: 128, name: b}, relu, {op: linear, out_size: 1, name: b_out}]
loss: {op: sum}
"""
TARGETS = {"rnn": 2.0, "branch": 1.5}
BATCH_S = 0.02  # seconds of calls per timed batch


def _params(runner) -> dict[str, np.ndarray]:
    return {name.lstrip("/"): p.array for name, p in runner.model.namedparams()}


def _grads(runner) -> dict[str, np.ndarray]:
    return {name.lstrip("/"): p.grad for name, p in runner.model.namedparams()}


def rnn_floor(params: dict[str, np.ndarray], seqs: list[np.ndarray]) -> Callable:
    """Pad every sequence into one batch, mask the carry, BPTT by hand."""
    W, b = params["cell/W"], params["cell/b"]
    Wr, br = params["readout/W"], params["readout/b"]
    n, longest, hidden = len(seqs), max(len(s) for s in seqs), W.shape[0]
    X = np.zeros((n, longest, seqs[0].shape[1]), np.float32)
    for i, s in enumerate(seqs):
        X[i, :len(s)] = s
    lengths = np.array([len(s) for s in seqs])
    mask = (np.arange(longest)[None, :] < lengths[:, None]).astype(np.float32)[..., None]
    Wx, Wh = W[:, :16], W[:, 16:]
    grads = {}

    def step() -> None:
        h = np.zeros((n, hidden), np.float32)
        hs, zs = [h], []
        for t in range(longest):
            z = np.tanh(X[:, t] @ Wx.T + h @ Wh.T + b)
            m = mask[:, t]
            h = m * z + (1 - m) * h
            hs.append(h)
            zs.append(z)
        y = h @ Wr.T + br
        loss = float(y.sum()) / n  # noqa: F841  (the mean over examples)
        gy = np.full_like(y, 1.0 / n)
        gWr, gbr = gy.T @ h, gy.sum(0)
        gh = gy * Wr  # one output unit: an outer product, numpy's fastest as a broadcast
        gW = np.zeros_like(W)
        gb = np.zeros_like(b)
        for t in range(longest - 1, -1, -1):
            m = mask[:, t]
            ga = gh * m * (1 - zs[t] ** 2)
            gW[:, :16] += ga.T @ X[:, t]
            gW[:, 16:] += ga.T @ hs[t]
            gb += ga.sum(0)
            gh = gh * (1 - m) + ga @ Wh
        grads.update({"cell/W": gW, "cell/b": gb, "readout/W": gWr, "readout/b": gbr})

    step.grads = grads
    return step


def branch_floor(params: dict[str, np.ndarray], xs: list[np.ndarray]) -> Callable:
    """The two groups as two batches, forward and backward by hand."""
    X = np.stack(xs)
    n = len(X)
    take = X.mean(axis=1) > 0
    grads = {}

    def side(rows, first, out, act, dact):
        W1, b1, W2, b2 = (params[f"{first}/W"], params[f"{first}/b"], params[f"{out}/W"],
                          params[f"{out}/b"])
        a = rows @ W1.T + b1
        h = act(a)
        y = h @ W2.T + b2
        gy = np.full_like(y, 1.0 / n)
        gh = gy * W2  # one output unit: an outer product, numpy's fastest as a broadcast
        ga = gh * dact(a, h)
        grads.update({f"{out}/W": gy.T @ h, f"{out}/b": gy.sum(0), f"{first}/W": ga.T @ rows,
                      f"{first}/b": ga.sum(0)})
        return float(y.sum())

    def step() -> None:
        side(X[take], "a", "a_out", np.tanh, lambda a, h: 1 - h * h)
        side(X[~take], "b", "b_out", lambda a: np.maximum(a, 0), lambda a, h: a > 0)

    step.grads = grads
    return step


def _check(floor: Callable, runner, name: str) -> None:
    floor()
    got = _grads(runner)
    for key, want in floor.grads.items():
        np.testing.assert_allclose(got[key], want, rtol=2e-4, atol=2e-5, err_msg=f"{name} {key}")


def _timed(fn: Callable, n: int) -> float:
    """Seconds per call over ``n`` calls in a row (collection off: a pause would land on
    whichever side happened to allocate last)."""
    gc.disable()
    try:
        return engine._time_batch(fn, n) / n
    finally:
        gc.enable()


def measure(text: str, floor_of: Callable, rounds: int, sides: list[tuple[str, str]]):
    spec = load_spec_text(text, "bench.yaml")
    inputs = make_inputs(spec.inputs, spec.seed, spec.folder)
    runners = {}
    for mode, batching in sides:
        runner = RUNNERS[mode](spec, inputs, spec.seed, None, batching)
        runner.step()
        runners[(mode, batching)] = runner
    first = runners[sides[0]]
    # one parameter set for every side: copy the first side's into the others
    for runner in runners.values():
        for (_, p), (_, q) in zip(runner.model.namedparams(), first.model.namedparams(),
                                  strict=True):
            p.array[...] = q.array
    seqs = next(v for v in inputs.values() if isinstance(v, list))
    floor = floor_of(_params(first), seqs)
    infos = {}
    for key, runner in runners.items():
        result = runner.step()
        infos[key] = result.batching
        _check(floor, runner, f"{spec.name} {key}")
    # engine.py's timing: each side timed over a batch of calls lasting about BATCH_S
    # (warm caches, as a training loop runs it), the sides alternating round by round
    sides_fn = {"numpy floor": floor, **{f"{mode} {batching}": runner.step
                                         for (mode, batching), runner in runners.items()}}
    for fn in sides_fn.values():
        fn()
        fn()
    sizes = {name: engine._batch_size(fn, BATCH_S) for name, fn in sides_fn.items()}
    times: dict[str, list[float]] = {name: [] for name in sides_fn}
    order = list(sides_fn)
    for r in range(rounds):
        for name in (order if r % 2 == 0 else order[::-1]):
            times[name].append(_timed(sides_fn[name], sizes[name]))
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}, infos


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 rounds instead of 15")
    rounds = 5 if parser.parse_args().quick else 15
    sides = [("static", "auto"), ("dynamic", "auto"), ("static", "pad"), ("dynamic", "off"),
             ("static", "off")]
    for name, text, floor in (("rnn", RNN, rnn_floor), ("branch", BRANCH, branch_floor)):
        use = sides if name == "rnn" else [s for s in sides if s[1] != "pad"]
        medians, infos = measure(text, floor, rounds, use)
        base = medians["numpy floor"]
        print(f"\n{name}: median ms per forward + backward ({rounds} rounds); target "
              f"auto-batched within {TARGETS[name]}x of the floor")
        for key, ms in medians.items():
            info = infos.get(tuple(key.split(" "))) or {}
            extra = ""
            if info.get("applied"):
                extra = (f"  groups {info['groups']}  padding waste "
                         f"{100 * info['padding_waste']:.1f}%")
            print(f"  {key:<16} {ms:9.3f} ms  {ms / base:6.2f}x floor{extra}")


if __name__ == "__main__":
    main()
