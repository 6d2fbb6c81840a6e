"""Sequence models and transformers in specs: the lstm, gru, layer_normalization and
multi_head_attention layers against their Python links, ``from: name[i]`` parts, located
errors, the two example specs checked and drawn, and ``graphtool ops`` listing the new names."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import graphcore.links as L
from cli.app import app
from graphcore import spec
from graphcore.errors import SpecErrors

SPECS = Path(__file__).resolve().parents[2] / "specs"
runner = CliRunner()


def load(text):
    return spec.load_spec_text(text, "t.yaml")


def run(text):
    loaded = load(text)
    result, model = spec.run(loaded)
    return result, model, loaded


# --- parts ---------------------------------------------------------------------------------

PARTS = """graphtool: 1
inputs:
  x: {random: normal, shape: [2, 6]}
graph:
  - {op: split_axis, indices_or_sections: 3, axis: 1, to: parts}
  - {op: mul, from: ["parts[0]", "parts[-1]"], to: y}
  - {op: add, from: [_, "parts[1]"]}
loss: {op: sum}
outputs: [y, _]
"""


def test_from_takes_one_part_of_a_value_of_several_arrays():
    result, _, loaded = run(PARTS)
    x = spec.make_inputs(loaded.inputs, 0)["x"]
    np.testing.assert_allclose(result.outputs["y"].array, x[:, 0:2] * x[:, 4:6], rtol=1e-6)
    np.testing.assert_allclose(result.outputs["_"].array, x[:, 0:2] * x[:, 4:6] + x[:, 2:4],
                               rtol=1e-6)


@pytest.mark.parametrize("step, message", [
    ('{op: relu, from: "parts[3]"}', "'parts[3]' is out of range: 'parts' has 3 parts"),
    ('{op: relu, from: "x[0]"}', "'x' is one array of shape (2, 6)"),
])
def test_a_bad_part_is_a_located_error_at_load(step, message):
    text = PARTS.replace('  - {op: add, from: [_, "parts[1]"]}', f"  - {step}")
    with pytest.raises(SpecErrors) as info:
        load(text)
    error, = info.value.errors
    assert message in error.message
    assert error.line == 7


def test_a_malformed_part_is_a_load_error():
    text = PARTS.replace('"parts[-1]"', '"parts[a]"')
    with pytest.raises(SpecErrors) as info:
        load(text)
    assert "t.yaml:6" in str(info.value) and "'parts[a]' is not a value name" in str(
        info.value)
    with pytest.raises(SpecErrors, match="no value named 'nope'"):
        load(PARTS.replace('"parts[-1]"', '"nope[1]"'))


# --- layers equal their links --------------------------------------------------------------

@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_recurrent_layer_equals_the_n_step_link(kind):
    text = f"""graphtool: 1
inputs:
  s: {{random: normal, shape: [null, 3], lengths: [4, 2]}}
  b: {{random: normal, shape: [2, 5, 3]}}
graph:
  - {{op: {kind}, out_size: 4, n_layers: 2, name: rnn, to: one}}
  - {{op: {kind}, from: b, out_size: 4, n_layers: 2, name: rnn, to: batch}}
loss: {{op: sum}}
outputs: [one, batch]
"""
    result, model, loaded = run(text)
    inputs = spec.make_inputs(loaded.inputs, 0)
    link = (L.NStepLSTM if kind == "lstm" else L.NStepGRU)(2, 3, 4, 0.0)
    link.copyparams(model.rnn)
    call = (lambda xs: link(None, None, xs)) if kind == "lstm" else (lambda xs: link(None, xs))
    expected = call([inputs["s"][-1]])[-1][0].array
    np.testing.assert_allclose(result.outputs["one"].array, expected, rtol=1e-5)
    per_sequence = call(list(inputs["b"]))[-1]
    np.testing.assert_allclose(result.outputs["batch"].array,
                               np.stack([y.array for y in per_sequence]), rtol=1e-5)
    assert [n for n, _ in model.namedparams()][:2] == ["/rnn/0/w0", "/rnn/0/b0"]


def test_attention_and_layer_norm_layers_equal_their_links():
    text = """graphtool: 1
inputs:
  x: {random: normal, shape: [2, 4, 6]}
  kv: {random: normal, shape: [2, 3, 6]}
  keep: {random: randint, high: 2, dtype: bool, shape: [2, 4, 3]}
graph:
  - {op: multi_head_attention, from: [x, kv, keep], n_heads: 3, name: att, to: a}
  - {op: layer_normalization, name: norm, to: y}
loss: {op: sum}
outputs: [a, y]
"""
    result, model, loaded = run(text)
    inputs = spec.make_inputs(loaded.inputs, 0)
    mha = L.MultiHeadAttention(3, 6)
    mha.copyparams(model.att)
    a = mha(inputs["x"], inputs["kv"], mask=inputs["keep"]).array
    np.testing.assert_allclose(result.outputs["a"].array, a, rtol=1e-5, atol=1e-6)
    norm = L.LayerNormalization(6)
    np.testing.assert_allclose(result.outputs["y"].array, norm(a).array, rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("graph, message", [
    ("  - {op: multi_head_attention, from: [x, x], n_heads: 2}",
     "the mask (the last of several inputs) must be boolean, got float32"),
    ("  - {op: multi_head_attention, n_heads: 3}", "in_size 4 is not divisible by n_heads 3"),
    ("  - {op: lstm, from: v, out_size: 2}", "expected a sequence (length, features)"),
])
def test_layer_shape_problems_are_located_errors_at_load(graph, message):
    text = ("graphtool: 1\ninputs:\n  x: {random: normal, shape: [2, 3, 4]}\n"
            "  v: {random: normal, shape: [4]}\ngraph:\n" + graph + "\nloss: {op: sum}\n")
    with pytest.raises(SpecErrors) as info:
        load(text)
    error, = info.value.errors
    assert message in error.message and error.line == 6


def test_layer_attributes_are_checked_at_load():
    text = ("graphtool: 1\ninputs:\n  x: {random: normal, shape: [2, 3, 4]}\ngraph:\n"
            "  - {op: multi_head_attention, heads: 2}\n")
    with pytest.raises(SpecErrors) as info:
        load(text)
    assert "no attribute 'heads'" in str(info.value)
    assert "needs attribute 'n_heads'" in str(info.value)


# --- the example specs ---------------------------------------------------------------------

@pytest.mark.parametrize("name, labels", [
    ("lstm_tagger", ["EmbedIDFunction", "LinearFunction", "LSTM", "TransposeSequence"]),
    ("transformer_block", ["Attention", "LayerNormalization", "Swapaxes", "ReLU"]),
])
def test_example_specs_pass_check_and_are_drawn(name, labels, tmp_path):
    path = SPECS / f"{name}.yaml"
    checked = runner.invoke(app, ["check", str(path)])
    assert checked.exit_code == 0, checked.output
    assert "gradient check passed" in checked.output
    first = runner.invoke(app, ["viz", str(path), "-o", "-"])
    assert first.exit_code == 0, first.output
    for label in labels:
        assert f'label="{label}"' in first.stdout
    again = runner.invoke(app, ["viz", str(path), "-o", "-"])
    assert again.stdout == first.stdout  # byte-identical


def test_transformer_block_never_attends_to_padding():
    loaded = spec.load_spec_file(SPECS / "transformer_block.yaml")
    inputs = spec.make_inputs(loaded.inputs, loaded.seed, loaded.folder)
    changed = dict(inputs)
    x = inputs["x"].copy()
    x[1, 4:] += 100.0  # the padded positions of example 1
    changed["x"] = x
    model = spec.build_model(loaded)
    before = spec.run_spec(loaded, model, inputs).outputs["y"].array
    after = spec.run_spec(loaded, model, changed).outputs["y"].array
    np.testing.assert_allclose(after[1, :4], before[1, :4], rtol=1e-5)
    assert not np.allclose(after[1, 4:], before[1, 4:])


def test_ops_lists_the_new_ops_and_layers():
    result = runner.invoke(app, ["ops", "--json"])
    assert result.exit_code == 0
    entries = {e["name"]: e for e in json.loads(result.stdout)["ops"]}
    for name in ("lstm", "gru", "layer_normalization", "multi_head_attention"):
        assert entries[name]["kind"] == "layer"
    for name in ("attention", "swapaxes", "copy", "transpose_sequence"):
        assert entries[name]["kind"] == "op"
    assert entries["multi_head_attention"]["inputs"] == "any"
