"""Live control flow exported as ONNX If / Loop: every trip count from 0 to the cap, every
branch, sequences of many lengths, nesting (an if in a while in a for_each), and the forms
refused with their position. ONNX Runtime is compared with graphtool run at rtol 1e-5 /
atol 1e-6 (specs/ as a whole: test_export_specs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.app import app
from graphcore.spec import build_model, load_spec_file, load_spec_text, make_inputs

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

from onnx_helpers import assert_equal, assert_runs_equal, onnx_outputs, ort_session, run  # noqa: E402, I001

from graphcore.onnx import ExportError, export_spec  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

NESTED = """graphtool: 1
name: nested
kind: dynamic
seed: 0
inputs:
  s: {random: normal, shape: [null, 4], lengths: [3, 5, 1]}
graph:
  - for_each: s
    as: x_t
    carry: {h: {zeros: [1, 4]}}
    body:
      - {op: reshape, from: x_t, shape: [1, 4]}
      - {op: add, from: [_, h]}
      - while: norm(_) > 1.0
        max_iters: 3
        body:
          - {op: linear, out_size: 4, name: shrink}
          - if: mean(_) > 0
            then: [tanh]
            else: [{op: scale, by: 0.5}]
      - {op: copy, to: h}
    collect: h
    to: hs
outputs: [hs, h]
"""

COUNTER = """graphtool: 1
name: counter
kind: dynamic
seed: 0
inputs:
  x: {random: normal, shape: [3, 4]}
graph:
  - while: loop.i < 2 or max(_) > 0.5
    max_iters: 5
    body:
      - {op: linear, out_size: 4, name: l}
      - tanh
outputs: [_]
"""

NO_COLLECT = """graphtool: 1
name: no_collect
kind: dynamic
seed: 0
inputs:
  s: {random: normal, shape: [null, 3], lengths: [4, 2]}
  h0: {random: normal, shape: [1, 5]}
graph:
  - for_each: s
    as: x_t
    carry: {h: h0}
    body:
      - {op: reshape, from: x_t, shape: [1, 3]}
      - {op: concat, from: [_, h], axis: 1}
      - {op: linear, out_size: 5, name: cell}
      - {op: tanh, to: h}
  - {op: add, from: [_, h]}
outputs: [_]
"""

TWICE = """graphtool: 1
name: twice
kind: dynamic
seed: 0
inputs:
  x: {random: normal, shape: [3]}
graph:
  - repeat: 2
    body:
      - if: sum(_) > 0
        then: [tanh]
        else: [{op: add_scalar, value: 1.0}]
outputs: [_]
"""

RECURRENT = """graphtool: 1
name: recurrent
kind: dynamic
seed: 0
inputs:
  s: {random: normal, shape: [null, 3], lengths: [4, 2, 7]}
graph:
  - {op: gru, out_size: 5, n_layers: 2, name: enc}
  - {op: lstm, out_size: 4, n_layers: 2, name: enc2}
outputs: [_]
"""

BATCHED_LSTM = """graphtool: 1
name: batched_lstm
kind: dynamic
seed: 0
inputs:
  x: {random: normal, shape: [3, 6, 4]}
graph:
  - repeat: 2
    unroll: true
    body:
      - {op: lstm, out_size: 4, name: enc}
outputs: [_]
"""


def _load(text: str, name: str):
    spec = load_spec_text(text, f"{name}.yaml", str(ROOT / "specs"))
    return spec, build_model(spec)


def _exported(spec, model):
    proto = export_spec(spec, model, make_inputs(spec.inputs, spec.seed, spec.folder))
    onnx.checker.check_model(proto, full_check=True)
    return proto, ort_session(proto)


def _decisions(result, kind: str) -> list:
    key = {"while": "trips", "if": "branch", "for_each": "length"}[kind]
    return [p.detail[key] for p in result.path if p.kind == kind
            and not p.detail.get("at_load", False)]


def test_adaptive_depth_every_trip_count_from_0_to_the_cap():
    """The while (norm(_) > 2.0, max_iters 6) is an ONNX Loop: scaled inputs at several batch
    sizes (none of them the spec's 4 but one) make 0, 1, ... 6 trips, and reach the cap."""
    spec = load_spec_file(ROOT / "specs/adaptive_depth.yaml")
    model = build_model(spec)
    proto, session = _exported(spec, model)
    assert [n.op_type for n in proto.graph.node].count("Loop") == 1
    assert session.get_inputs()[0].shape == ["batch", 6]
    rng = np.random.default_rng(0)
    trips, capped = set(), False
    for rows, scale in ((1, 0.01), (1, 1.0), (4, 3.0), (16, 3.0), (64, 0.3), (64, 3.0),
                        (256, 3.0), (4096, 10.0), (16384, 10.0), (65536, 10.0)):
        x = (scale * rng.standard_normal((rows, 6))).astype(np.float32)
        result = assert_runs_equal(session, spec, model, {"x": x})
        (entry,) = [p.detail for p in result.path if p.kind == "while"]
        trips.add(entry["trips"])
        capped |= entry["limit_reached"]
    assert trips == set(range(7)) and capped


def test_rnn_sequences_any_length():
    """for_each over s is a Loop over its time axis; the model takes one example."""
    spec = load_spec_file(ROOT / "specs/rnn_sequences.yaml")
    model = build_model(spec)
    proto, session = _exported(spec, model)
    assert session.get_inputs()[0].shape == ["length", 8]
    assert session.get_outputs()[0].shape == ["length", 1, 12]
    rng = np.random.default_rng(1)
    lengths = [1, 2, 5, 9, 40]
    s = [rng.standard_normal((n, 8)).astype(np.float32) for n in lengths]
    result = assert_runs_equal(session, spec, model, {"s": s})
    assert _decisions(result, "for_each") == lengths


def test_an_if_in_a_while_in_a_for_each():
    spec, model = _load(NESTED, "nested")
    proto, session = _exported(spec, model)
    (loop,) = [n for n in proto.graph.node if n.op_type == "Loop"]
    inner = [n.op_type for n in loop.attribute[0].g.node]
    assert "Loop" in inner  # the while, with its If inside
    trips, branches = set(), set()
    for seed in range(5):
        result = assert_runs_equal(session, spec, model, make_inputs(spec.inputs, seed, "."))
        trips |= set(_decisions(result, "while"))
        branches |= set(_decisions(result, "if"))
    assert trips == {0, 1, 2, 3} and branches == {"then", "else"}


def test_loop_counter_in_a_while_predicate():
    """`loop.i` in the predicate is the trip count (0 before the first trip)."""
    spec, model = _load(COUNTER, "counter")
    _, session = _exported(spec, model)
    trips = set()
    for rows, seed in ((3, 0), (3, 4), (1, 0), (7, 2), (2, 5)):
        x = np.random.default_rng(seed).standard_normal((rows, 4)).astype(np.float32) * 2
        trips |= set(_decisions(assert_runs_equal(session, spec, model, {"x": x}), "while"))
    assert len(trips) >= 2 and min(trips) >= 2


def test_for_each_without_collect_carries_the_last_value():
    """`_` after a for_each without collect is the body's last value (its shape changes on the
    first trip: a loop-carried value declared without a shape)."""
    spec, model = _load(NO_COLLECT, "no_collect")
    _, session = _exported(spec, model)
    for seed in range(3):
        assert_runs_equal(session, spec, model, make_inputs(spec.inputs, seed, "."))


def test_a_live_if_evaluated_on_each_unrolled_trip():
    """repeat: 2 is unrolled; each trip's live if is its own ONNX If."""
    spec, model = _load(TWICE, "twice")
    proto, session = _exported(spec, model)
    assert [n.op_type for n in proto.graph.node].count("If") == 2
    paths = set()
    for x in ([1.0, 2.0, 0.5], [-3.0, 1.0, 0.5], [-9.0, 0.0, 1.0], [-9.0, -1.0, -1.0],
              [0.1, 0.2, 0.3, -1.0, 4.0]):  # the last: another length
        inputs = {"x": np.asarray(x, np.float32)}
        paths.add(tuple(_decisions(assert_runs_equal(session, spec, model, inputs), "if")))
    assert paths >= {("then", "then"), ("else", "then"), ("else", "else")}


def test_recurrent_layers_export_whole_for_any_length_and_batch():
    """lstm / gru layers (stacked, unrolled repeats with their own weights) are ONNX LSTM /
    GRU nodes: one example of any length, or a batch of sequences of any size."""
    spec, model = _load(RECURRENT, "recurrent")
    proto, session = _exported(spec, model)
    assert [n.op_type for n in proto.graph.node].count("GRU") == 2
    rng = np.random.default_rng(3)
    s = [rng.standard_normal((n, 3)).astype(np.float32) for n in (1, 3, 12)]
    assert_runs_equal(session, spec, model, {"s": s})
    spec, model = _load(BATCHED_LSTM, "batched_lstm")
    proto, session = _exported(spec, model)
    assert {i.name for i in proto.graph.initializer} >= {"enc_0/0/W", "enc_1/0/R"}
    for shape in ((3, 6, 4), (1, 6, 4), (5, 6, 4)):  # the length of a batch is fixed
        x = rng.standard_normal(shape).astype(np.float32)
        assert_runs_equal(session, spec, model, {"x": x})


@pytest.mark.parametrize(("edit", "where", "message"), [
    (("max_iters: 3\n", "max_iters: 3\n        on_limit: error\n"), "nested.yaml:14:9",
     "on_limit: error"),
    (("if: mean(_) > 0", "if: mean(_) > loop.t"), "nested.yaml:18:17",
     "reads loop.t inside a loop exported as ONNX Loop"),
])
def test_forms_without_an_onnx_equivalent_are_refused_with_their_position(edit, where,
                                                                          message):
    spec, model = _load(NESTED.replace(*edit), "nested")
    with pytest.raises(ExportError) as info:
        export_spec(spec, model, make_inputs(spec.inputs, spec.seed, "."))
    assert where in str(info.value) and message in str(info.value)


def test_cli_exports_a_while_and_matches_graphtool_run(tmp_path):
    spec_file = str(ROOT / "specs/adaptive_depth.yaml")
    out, arrays = tmp_path / "m.onnx", tmp_path / "run.npz"
    result = runner.invoke(app, ["export", spec_file, "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["run", spec_file, "-o", str(arrays), "--out-dir",
                                 str(tmp_path / "outputs"), "-q"])
    assert result.exit_code == 0, result.output
    spec = load_spec_file(spec_file)
    inputs = make_inputs(spec.inputs, spec.seed, spec.folder)
    with np.load(arrays) as saved:
        key = next(k for k in saved.files if k.endswith("_"))
        want = saved[key]
    got = onnx_outputs(ort.InferenceSession(str(out)), inputs)
    assert_equal({"_": got["_"]}, {"_": want})
    assert run(spec, build_model(spec), inputs).path  # graphtool made its own trips
