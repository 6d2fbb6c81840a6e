"""Specs whose graph runs once per example (sequence inputs) fed from data: each example gets
its own row of every per-row input (a label column), a `whole_batch: true` input is seen
whole, and anything else is refused at the input. Training (the loss a mean over examples),
evaluation (per-example metrics) and prediction (one row per example) agree with a direct
computation, in both modes and under every batching choice."""

from __future__ import annotations

import numpy as np
import pytest
from sequence_data import JSONL, SEQUENCES, write_sequences

from graphcore.commands.train.session import (
    TrainingSession,
    evaluate_arrays,
    load_spec_data,
    predict_arrays,
    settings_for,
)
from graphcore.commands.train.steps import train_spec
from graphcore.errors import SpecError, SpecErrors
from graphcore.spec import build_model, load_spec_text, make_inputs, run_spec
from graphcore.spec_static.runner import StaticSpecRunner

N = 24

def load(folder, text=SEQUENCES):
    return load_spec_text(text, str(folder / "seq.yaml"), str(folder))


def direct(model, feats, t):
    """Each example's logits, loss and correctness computed with numpy alone."""
    w, b = model.proj.W.array.astype(np.float64), model.proj.b.array.astype(np.float64)
    logits = np.stack([(f @ w.T + b).sum(axis=0) for f in feats])
    top = logits.max(axis=1, keepdims=True)
    log_z = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
    losses = log_z - logits[np.arange(len(t)), t]
    return logits, losses, logits.argmax(axis=1) == t


@pytest.mark.parametrize("text", [SEQUENCES, JSONL], ids=["npz", "jsonl"])
def test_each_example_gets_its_own_label_row(tmp_path, text):
    feats, t = write_sequences(tmp_path)
    spec = load(tmp_path, text)
    arrays = make_inputs(spec.inputs, 0, tmp_path)
    model = build_model(spec, 0)
    run_spec(spec, model, arrays, backward=False)  # sizes the lazy weight
    logits, losses, correct = direct(model, feats, t)
    for batching in ("off", "auto", "pad"):
        for result in (run_spec(spec, model, arrays, backward=False, batching=batching),
                       StaticSpecRunner(spec, model).run(arrays, backward=False,
                                                         batching=batching)):
            assert result.examples == N
            assert result.loss == pytest.approx(losses.mean(), rel=1e-5)
            got = np.concatenate([np.asarray(getattr(o["logits"], "array", o["logits"]))
                                  for o in result.example_outputs])
            np.testing.assert_allclose(got, logits, rtol=1e-5, atol=1e-5)
    rows = {"s": arrays["s"], "t": arrays["t"]}
    scores = evaluate_arrays(spec, model, rows, batch_size=7, metrics=("accuracy",))
    assert scores["loss"] == pytest.approx(losses.mean(), rel=1e-5)
    assert scores["accuracy"] == pytest.approx(correct.mean())
    predicted = predict_arrays(spec, model, rows, batch_size=5)
    assert predicted["logits"].shape == (N, 2)  # one row per example, stacked
    np.testing.assert_allclose(predicted["logits"], logits, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["dynamic", "static"])
def test_training_and_evaluation_agree_across_batching_choices(tmp_path, mode):
    write_sequences(tmp_path)
    spec = load(tmp_path)
    spec.train.log_every = 1
    logs = {}
    for batching in ("off", "auto", "pad"):
        settings = settings_for(spec, mode=mode)
        data = load_spec_data(spec, settings.seed)
        session = TrainingSession(spec, settings, data, tmp_path / batching, batching=batching)
        outcome = session.run()
        logs[batching] = ([e["main/loss"] for e in session.step_log.log],
                          [e["validation/main/accuracy"] for e in outcome.log],
                          [e["validation/main/loss"] for e in outcome.log],
                          [e["main/accuracy"] for e in session.step_log.log])
    steps, accuracy, validation_loss, step_accuracy = logs["off"]
    assert len(steps) == 6  # 18 training rows, batches of 6, 2 epochs
    for batching in ("auto", "pad"):
        np.testing.assert_allclose(logs[batching][0], steps, rtol=1e-5)
        np.testing.assert_allclose(logs[batching][2], validation_loss, rtol=1e-5)
        assert logs[batching][1] == accuracy and logs[batching][3] == step_accuracy
    assert validation_loss[-1] < validation_loss[0]


def test_a_whole_batch_input_is_seen_whole_by_every_example(tmp_path):
    write_sequences(tmp_path)
    text = SEQUENCES.replace("  t: {key: t}\n", "  t: {key: t}\n  w: {key: t, whole_batch: true}\n"
                             ).replace("outputs: [logits]", "outputs: [logits, w, t]")
    spec = load(tmp_path, text)
    arrays = make_inputs(spec.inputs, 0, tmp_path)
    model = build_model(spec, 0)
    for batching in ("off", "auto"):
        result = run_spec(spec, model, arrays, backward=False, batching=batching)
        for k, outputs in enumerate(result.example_outputs):
            whole = np.asarray(getattr(outputs["w"], "array", outputs["w"]))
            row = np.asarray(getattr(outputs["t"], "array", outputs["t"]))
            assert whole.shape == (N,) and np.array_equal(whole, arrays["t"])
            assert row.shape == () and row == arrays["t"][k]


def test_inputs_with_a_named_axis_beside_sequences_give_each_example_its_row(tmp_path):
    np.save(tmp_path / "t.npy", np.array([0, 1, 1], np.int32))
    text = """graphtool: 1
inputs:
  s: {random: normal, shape: [null, 3], lengths: [2, 4, 3]}
  t: {file: t.npy, shape: [rows]}
graph:
  - {op: linear, from: s, out_size: 2, name: proj}
  - {op: sum, axis: 0}
  - {op: reshape, shape: [1, 2], to: logits}
  - {op: reshape, from: t, shape: [1], to: label}
loss: {op: softmax_cross_entropy, from: [logits, label]}
"""
    spec = load_spec_text(text, str(tmp_path / "r.yaml"), str(tmp_path))
    arrays = make_inputs(spec.inputs, 0, tmp_path)
    model = build_model(spec, 0)
    result = run_spec(spec, model, arrays, backward=False, batching="off")
    _, losses, _ = direct(model, arrays["s"], arrays["t"])
    assert result.loss == pytest.approx(losses.mean(), rel=1e-5)
    assert StaticSpecRunner(spec, model).run(arrays, backward=False).loss == \
        pytest.approx(losses.mean(), rel=1e-5)
    trained = train_spec(spec, steps=3, batch_size=2, optimizer="sgd", lr=0.5)
    assert len(trained.losses) == 3  # batches of 2 examples, each with its 2 label rows
    _, losses, _ = direct(trained.model, arrays["s"], arrays["t"])
    assert trained.final_loss == pytest.approx(losses.mean(), rel=1e-5)
    np.save(tmp_path / "t.npy", np.array([0, 1, 1, 0, 1], np.int32))
    five = make_inputs(spec.inputs, 0, tmp_path)
    with pytest.raises(SpecError) as caught:
        run_spec(spec, model, five)
    error = caught.value
    assert (error.line, error.col) == (4, 6)
    assert error.message == ("input 't' has 5 rows along its leading axis 'rows', but the "
                             "graph runs once per example over 3 examples, and each example "
                             "takes its own row")
    assert "whole_batch: true" in error.hint
    whole = text.replace("shape: [rows]}", "shape: [rows], whole_batch: true}").replace(
        "shape: [1], to: label", "shape: [5, 1], to: label")
    with pytest.raises(SpecErrors, match="softmax_cross_entropy"):  # now whole: (5,) labels
        load_spec_text(whole, str(tmp_path / "r.yaml"), str(tmp_path))


@pytest.mark.parametrize("edit, message", [
    ("  s: {values: feats, offsets: starts, whole_batch: true}",
     "input 's' is a sequence, one per example; whole_batch applies to an input of rows"),
    ("  s: {values: feats, offsets: starts}\n  t: {key: t, whole_batch: 3}",
     "whole_batch must be true or false"),
])
def test_whole_batch_is_validated(tmp_path, edit, message):
    write_sequences(tmp_path)
    text = SEQUENCES.replace("  s: {values: feats, offsets: starts}\n  t: {key: t}", edit)
    if "t: {key" not in edit:
        text = text.replace("  s: {values: feats, offsets: starts, whole_batch: true}",
                            edit + "\n  t: {key: t}")
    with pytest.raises(SpecErrors, match=message):
        load(tmp_path, text)
    with pytest.raises(SpecErrors, match="whole_batch applies to an input with a named "
                       "leading axis"):
        load_spec_text("graphtool: 1\ninputs:\n  x: {file: x.npy, whole_batch: true}\n"
                       "graph: [relu]\n")


def test_padded_batches_carry_each_examples_row_beside_its_sequence(tmp_path):
    np.save(tmp_path / "t.npy", np.arange(8, dtype=np.int32) % 2)
    text = """graphtool: 1
inputs:
  s: {random: normal, shape: [null, 3], lengths: [5, 3, 7, 2, 4, 6, 1, 3]}
  t: {file: t.npy, shape: [rows]}
graph:
  - for_each: s
    as: x_t
    carry: {h: {zeros: [1, 4]}}
    body:
      - {op: reshape, from: x_t, shape: [1, 3]}
      - {op: concat, from: [_, h], axis: 1}
      - {op: linear, out_size: 4, name: cell}
      - {op: tanh, to: h}
  - {op: linear, from: h, out_size: 2, name: readout, to: logits}
  - {op: reshape, from: t, shape: [1], to: label}
loss: {op: softmax_cross_entropy, from: [logits, label]}
"""
    spec = load_spec_text(text, str(tmp_path / "p.yaml"), str(tmp_path))
    arrays = make_inputs(spec.inputs, 0, tmp_path)
    model = build_model(spec, 0)
    reference = run_spec(spec, model, arrays, batching="off")
    grads = {name: p.grad.copy() for name, p in model.namedparams()}
    for mode in ("dynamic", "static"):
        runner = StaticSpecRunner(spec, model) if mode == "static" else None
        result = (runner.run(arrays, batching="pad") if runner else
                  run_spec(spec, model, arrays, batching="pad"))
        assert result.batching["applied"] and result.batching["padding_waste"] > 0
        assert result.loss == pytest.approx(reference.loss, rel=1e-6)
        for name, p in model.namedparams():
            np.testing.assert_allclose(p.grad, grads[name], rtol=1e-5, atol=1e-7)
