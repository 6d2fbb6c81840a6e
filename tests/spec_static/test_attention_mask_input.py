"""A boolean attention mask that comes from an input is part of a traced program, not a
constant of the first call's values: static mode replays it with each call's mask."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphcore.config import using_config
from graphcore.spec import build_model, load_spec_file, make_inputs, run_spec
from graphcore.spec_static.runner import StaticSpecRunner

SPEC = Path(__file__).resolve().parents[2] / "specs/transformer_block.yaml"


def test_static_mode_reads_each_calls_mask():
    spec = load_spec_file(SPEC)
    model = build_model(spec)
    inputs = make_inputs(spec.inputs, spec.seed, spec.folder)
    static = StaticSpecRunner(spec, model)
    with using_config("train", False):
        static.run(inputs, backward=False)  # traces with the file's mask
        other = dict(inputs, tokens=np.ones_like(inputs["tokens"]))  # no padding at all
        got = static.run(other, backward=False).outputs["y"]
        want = run_spec(spec, model, other, backward=False).outputs["y"].array
    assert static.stats.hits == 1  # the same plan, replayed
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    assert not np.allclose(want, run_spec(spec, model, inputs, backward=False).outputs["y"].array)
