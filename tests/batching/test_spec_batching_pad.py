"""Padding per-example runs: a data file's sequences pad as `lengths` inputs do, `pad` that
cannot pad says why (located), and static mode rounds a padded bucket's time axis so that
shuffled batches, whose longest examples differ, share a few plans."""

import numpy as np
import pytest
from batch_helpers import run_mode, same_as_reference
from sequence_training import BODY_IF, write_sequences

from graphcore.batching.analysis import analysis_of
from graphcore.batching.batcher import padded_steps
from graphcore.spec import build_model, load_spec_file, load_spec_text, make_inputs, run_spec
from graphcore.spec_static.runner import StaticSpecRunner


def data_sequences(tmp_path, body=""):
    spec = load_spec_file(str(write_sequences(tmp_path, body=body)))
    inputs = make_inputs(spec.inputs, 0, spec.folder)
    return spec, {"s": [a.astype(np.float64) for a in inputs["s"][:8]]}


@pytest.mark.parametrize("static", [False, True])
def test_a_data_files_sequences_are_padded_and_give_the_per_example_results(tmp_path, static):
    spec, inputs = data_sequences(tmp_path)
    assert analysis_of(spec).pad_reason is None
    reference, reference_grads = run_mode(spec, inputs, "off", static)
    for mode in ("auto", "pad"):
        result, grads = run_mode(spec, inputs, mode, static)
        assert result.batching["applied"] and result.batching["groups"] == 1, result.batching
        assert result.batching["padding_waste"] > 0
        assert result.batching["pad_refused"] is None
        same_as_reference(result, grads, reference, reference_grads)


@pytest.mark.parametrize("static", [False, True])
def test_pad_that_cannot_pad_says_why_with_the_position(tmp_path, static):
    spec, inputs = data_sequences(tmp_path, BODY_IF)
    result, _ = run_mode(spec, inputs, "pad", static)
    assert result.batching["applied"] and result.batching["padding_waste"] == 0
    assert result.batching["pad_refused"] == (
        f"{tmp_path / 'seqs.yaml'}:11:5: the for_each body has live control flow, which padded "
        "steps would decide on padding")
    assert run_mode(spec, inputs, "auto", static)[0].batching["pad_refused"] is None


def test_pad_says_why_an_empty_sequence_cannot_be_padded(tmp_path):
    np.savez(tmp_path / "e.npz", v=np.ones((5, 2), np.float32), o=np.array([0, 3, 3]))
    text = ("graphtool: 1\ndata: {file: e.npz, s: {values: v, offsets: o}}\ngraph:\n"
            "  - for_each: s\n    as: x\n    carry: {h: {zeros: [2]}}\n    body:\n"
            "      - {op: add, from: [x, h], to: h}\nloss: {op: sum, from: h}\n")
    spec = load_spec_text(text, str(tmp_path / "e.yaml"), str(tmp_path))
    inputs = make_inputs(spec.inputs, 0, spec.folder)
    assert [len(a) for a in inputs["s"]] == [3, 0, 2]
    result = run_spec(spec, build_model(spec), inputs, batching="pad")
    assert result.batching["pad_refused"] == ("example 1 has an empty sequence, which has no "
                                              "last step to pad with")


def test_padded_steps_are_four_sizes_per_octave():
    assert [padded_steps(n) for n in (1, 7, 8, 9, 11, 16, 17, 21, 33, 40, 41, 100)] == \
        [1, 7, 8, 10, 12, 16, 20, 24, 40, 40, 48, 112]
    for n in range(1, 2000):
        assert n <= padded_steps(n) <= n * 1.25


def test_static_buckets_of_other_longest_lengths_share_a_plan(tmp_path):
    """Shuffled batches of 4 whose longest examples are 17, 18, 19 and 20 steps: one padded
    plan of 20 steps (before the rounding, one plan per longest length), results as
    define-by-run gives them."""
    spec, _ = data_sequences(tmp_path)
    rng = np.random.RandomState(0)
    runner = StaticSpecRunner(spec, build_model(spec))
    dynamic = build_model(spec)
    for longest in (17, 18, 19, 20, 17, 20):
        batch = {"s": [rng.randn(n, 1).astype(np.float32) for n in (5, 9, 12, longest)]}
        result = runner.run(batch, batching="pad")
        want = run_spec(spec, dynamic, batch, batching="off")
        assert result.loss == pytest.approx(want.loss, rel=1e-5)
    assert runner.stats.misses == 1 and len(runner.cache) == 1
