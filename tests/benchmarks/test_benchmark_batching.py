"""The numpy floors of benchmarks/batching.py compute the spec runs' gradients (the check the
benchmark makes before timing), for both specs, batched static and define-by-run, and one
example at a time; no timing here."""

import importlib.util
import sys
from pathlib import Path

import pytest

from graphcore.commands.bench import RUNNERS
from graphcore.inputs.make import make_inputs
from graphcore.language.loader import load_spec_text

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "batching.py"


def _load():
    name = "graphtool_benchmarks_batching"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


bench = _load()


@pytest.mark.parametrize("which", ["rnn", "branch"])
@pytest.mark.parametrize("side", [("static", "auto"), ("dynamic", "auto"), ("static", "off")])
def test_floors_compute_the_specs_gradients(which, side):
    text, floor_of = {"rnn": (bench.RNN, bench.rnn_floor),
                      "branch": (bench.BRANCH, bench.branch_floor)}[which]
    spec = load_spec_text(text, "bench.yaml")
    inputs = make_inputs(spec.inputs, spec.seed, spec.folder)
    runner = RUNNERS[side[0]](spec, inputs, spec.seed, None, side[1])
    runner.step()  # sizes a define-by-run model's lazy layers
    seqs = next(v for v in inputs.values() if isinstance(v, list))
    floor = floor_of(bench._params(runner), seqs)
    result = runner.step()
    assert result.batching["applied"] is (side[1] != "off")
    if which == "branch" and side[1] != "off":
        assert result.batching["partitions"] == 1  # both branches in one pass
    bench._check(floor, runner, f"{which} {side}")
