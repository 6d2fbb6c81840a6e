"""The batching rules of ``multi_head_attention`` (a layer) and ``sigmoid_cross_entropy`` (an
op): batched runs equal one-example-at-a-time runs (outputs, loss, every gradient, path) in
float64 to rtol 1e-10, batching off, auto and pad, define-by-run and static, for each mask
form the layer takes and each ``normalize``/``reduce``/``ignore_label`` of the loss; and the
cases they cannot express run one example at a time, with the per-example run's results or
its located error.
"""

from __future__ import annotations

import numpy as np
import pytest
from batch_helpers import float64_inputs, run_mode, same_as_reference

from graphcore.config import using_config
from graphcore.errors import SpecErrors, SpecRuntimeError
from graphcore.spec import build_model, load_spec_text, make_inputs, run_spec
from graphcore.spec_static.runner import StaticSpecRunner

# Self-attention over each example's own sequence: (L, 6) tokens, L differing between examples,
# so the examples run in groups of one length, each fed as the layer's batch axis.
SELF_ATTENTION = """graphtool: 1
name: self_attention
seed: 0
inputs:
  s: {random: normal, shape: [null, 6], lengths: [4, 2, 5, 4, 3, 5, 2, 4]}
graph:
  - {op: linear, out_size: 8, name: embed, to: e}
  - {op: multi_head_attention, n_heads: 2, name: att, to: a}
  - {op: add, from: [_, e]}
  - {op: layer_normalization, name: norm}
  - {op: sum, axis: 0, to: pooled}
  - {op: linear, out_size: 2, name: head}
  - {op: sum}
loss: {op: square}
outputs: [a, pooled]
"""

MASKED = """graphtool: 1
name: masked_attention
seed: 0
inputs:
  x: {random: normal, shape: X}
  kv: KV
  keep: {random: randint, high: 2, dtype: bool, MASK}
graph:
  - {op: multi_head_attention, from: FROM, n_heads: 2, name: att, to: a}
  - {op: tanh}
  - {op: sum}
loss: {op: square}
outputs: [a]
"""

# (id, x's shape, kv, the mask's shape, from), ", N" marking a value per example: every mask
# form the layer takes, shared or per example, over one sequence per example (Lq, in) or a
# batch of its own (b, Lq, in), self- and cross-attention with shared or per-example memory.
MASK_CASES = [
    ("shared_key_mask", "[5, 8], N", None, "[1, 5]", "[x, keep]"),
    ("shared_square_mask", "[5, 8], N", None, "[5, 5]", "[x, keep]"),
    ("own_key_mask", "[5, 8], N", None, "[5], N", "[x, keep]"),
    ("own_square_mask", "[5, 8], N", None, "[1, 5, 5], N", "[x, keep]"),
    ("shared_x_own_mask", "[5, 8]", None, "[5], N", "[x, keep]"),
    ("own_batch_own_mask", "[3, 5, 8], N", None, "[3, 1, 5], N", "[x, keep]"),
    ("own_batch_one_mask", "[3, 5, 8], N", None, "[1, 5], N", "[x, keep]"),
    ("own_batch_shared_mask", "[3, 5, 8], N", None, "[3, 5, 5]", "[x, keep]"),
    ("shared_batch_own_mask", "[3, 5, 8]", None, "[3, 1, 5], N", "[x, keep]"),
    ("cross_own_memory", "[5, 8], N", "[7, 8], N", "[5, 7], N", "[x, kv, keep]"),
    ("cross_shared_memory", "[5, 8], N", "[7, 8]", "[7]", "[x, kv, keep]"),
    ("shared_x_own_memory", "[5, 8]", "[7, 8], N", "[1, 7]", "[x, kv, keep]"),
    ("batch_cross_shared_memory", "[3, 5, 8], N", "[1, 7, 8]", "[7], N", "[x, kv, keep]"),
    ("batch_cross_own_memory", "[3, 5, 8], N", "[1, 7, 8], N", "[1, 1, 7]", "[x, kv, keep]"),
]


def _masked(x, kv, mask, source) -> str:
    def shape(text):
        return text.replace(", N", ", examples: 6")
    text = MASKED.replace("X", shape(x)).replace("MASK", f"shape: {shape(mask)}")
    text = text.replace("FROM", source)
    if kv is None:
        return text.replace("  kv: KV\n", "")
    return text.replace("KV", f"{{random: normal, shape: {shape(kv)}}}")


SIGMOID = """graphtool: 1
name: sigmoid_loss
seed: 0
inputs:
  x: {random: normal, shape: [4, 3], examples: 7}
  t: TARGETS
graph:
  - {op: linear, out_size: 3, name: score, to: logits}
loss: {op: sigmoid_cross_entropy, from: [logits, t]ATTRS}
outputs: [logits]
"""

OWN_TARGETS = "{random: randint, low: -1, high: 2, shape: [4, 3], examples: 7}"
SIGMOID_CASES = [
    ("normalize", OWN_TARGETS, ""),
    ("by_axis_0", OWN_TARGETS, ", normalize: false"),
    ("ignore_0", OWN_TARGETS, ", ignore_label: 0"),
    ("by_axis_0_ignore_1", OWN_TARGETS, ", normalize: false, ignore_label: 1"),
    ("shared_targets", "{random: randint, low: -1, high: 2, shape: [4, 3]}", ""),
]

# reduce: no inside the graph, each element's loss, summed per example afterwards
SIGMOID_NO_REDUCE = """graphtool: 1
name: sigmoid_elements
seed: 0
inputs:
  x: {random: normal, shape: [5], examples: 6}
  t: {random: randint, low: -1, high: 2, shape: [5], examples: 6}
graph:
  - {op: linear, out_size: 5, name: score}
  - {op: sigmoid_cross_entropy, from: [_, t], reduce: 'no', to: each}
  - {op: sum}
loss: {op: square}
outputs: [each]
"""


def _specs():
    found = [pytest.param(load_spec_text(SELF_ATTENTION, "self_attention.yaml"),
                          id="self_attention")]
    found += [pytest.param(load_spec_text(_masked(*case[1:]), f"{case[0]}.yaml"), id=case[0])
              for case in MASK_CASES]
    found += [pytest.param(load_spec_text(SIGMOID.replace("TARGETS", t).replace("ATTRS", a),
                                          f"{name}.yaml"), id=name)
              for name, t, a in SIGMOID_CASES]
    found.append(pytest.param(load_spec_text(SIGMOID_NO_REDUCE, "elements.yaml"),
                              id="sigmoid_no_reduce"))
    return found


def _same_in_every_mode(spec, inputs, static):
    reference, reference_grads = run_mode(spec, inputs, "off", False)
    assert reference.batching["applied"] is False
    for mode in ("auto", "pad"):
        result, grads = run_mode(spec, inputs, mode, static)
        assert result.batching["applied"], result.batching
        same_as_reference(result, grads, reference, reference_grads)


@pytest.mark.parametrize("spec", _specs())
@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
def test_batched_equals_per_example(spec, static):
    _same_in_every_mode(spec, float64_inputs(make_inputs(spec.inputs, 0)), static)


def test_sequences_of_several_lengths_run_in_one_group_per_length():
    spec = load_spec_text(SELF_ATTENTION, "self_attention.yaml")
    result, _ = run_mode(spec, float64_inputs(make_inputs(spec.inputs, 0)), "auto", False)
    assert result.batching["groups"] == 4  # lengths 2, 3, 4, 5


@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
def test_an_example_whose_labels_are_all_ignored_divides_by_one(static):
    """The count of an example's labels is at least 1, as the op's own."""
    for name, _, attrs in SIGMOID_CASES[:3]:
        spec = load_spec_text(SIGMOID.replace("TARGETS", OWN_TARGETS).replace("ATTRS", attrs),
                              f"{name}.yaml")
        inputs = float64_inputs(make_inputs(spec.inputs, 0))
        ignore = 0 if "ignore_label: 0" in attrs else -1
        inputs["t"] = [np.full_like(t, ignore) if i == 2 else t
                       for i, t in enumerate(inputs["t"])]
        _same_in_every_mode(spec, inputs, static)


def _replayed_for_other_labels(spec) -> None:
    """A static plan traced from one draw of the inputs, replayed for another of the same
    shapes (other labels), equals one example at a time on the second draw."""
    first, other = (float64_inputs(make_inputs(spec.inputs, seed)) for seed in (0, 1))
    reference, reference_grads = run_mode(spec, other, "off", False)
    with using_config("dtype", np.float64):
        model = build_model(spec)
        runner = StaticSpecRunner(spec, model)
        for _ in range(3):
            runner.run(first)
        result = runner.run(other)  # the same shapes: the plan traced from `first` replays
        grads = {name: np.array(p.grad) for name, p in model.namedparams()
                 if p.grad is not None}
    assert result.batching["applied"], result.batching
    same_as_reference(result, grads, reference, reference_grads)


def test_a_static_plan_counts_the_labels_it_replays():
    """The divisor is made from the labels by ops in the plan: a plan traced from some
    labels, replayed for others of the same shapes, divides by the new count."""
    spec = load_spec_text(SIGMOID.replace("TARGETS", OWN_TARGETS).replace("ATTRS", ""), "n.yaml")
    _replayed_for_other_labels(spec)


def test_an_ignore_label_beyond_int64_runs_one_example_at_a_time():
    """The batched count subtracts the ignore_label in int64: one beyond it cannot be, so the
    examples run one at a time, as the op's own comparison handles it."""
    text = SIGMOID.replace("TARGETS", OWN_TARGETS).replace("ATTRS", f", ignore_label: {2**63}")
    spec = load_spec_text(text, "big.yaml")
    inputs = float64_inputs(make_inputs(spec.inputs, 0))
    reference, reference_grads = run_mode(spec, inputs, "off", False)
    result, grads = run_mode(spec, inputs, "auto", False)
    assert "ignore_label beyond int64" in result.batching["reason"], result.batching
    same_as_reference(result, grads, reference, reference_grads)


def test_attention_with_dropout_in_training_runs_one_example_at_a_time():
    text = _masked("[5, 8], N", None, "[5], N", "[x, keep]").replace(
        "name: att,", "name: att, dropout: 0.25,")
    spec = load_spec_text(text, "dropout.yaml")
    inputs = float64_inputs(make_inputs(spec.inputs, 0))
    reference, reference_grads = run_mode(spec, inputs, "off", False)
    result, grads = run_mode(spec, inputs, "auto", False)
    assert "draws random numbers" in result.batching["reason"], result.batching
    same_as_reference(result, grads, reference, reference_grads)


@pytest.mark.parametrize("x, mask", [
    ("[5, 8], N", "[6, 5, 5]"),  # one row per example: the batch would broadcast it
    ("[3, 5, 8], N", "[18, 1, 5]"),  # as many rows as the folded batch
    ("[5, 8], N", "[1, 1, 5, 5], N"),  # four axes per example
    ("[3, 5, 8], N", "[2, 1, 5], N"),  # axis 0 neither 1 nor x's
])
@pytest.mark.parametrize("batching", ["auto", "pad"])
def test_a_mask_the_layer_refuses_is_refused_batched_too(x, mask, batching):
    """A mask that broadcasts for no example is refused as the per-example run refuses it,
    at the step, even where a batch of that many rows would broadcast it. (``in_size`` is
    given: a lazily sized layer's first call would size it one example at a time, which
    reports the error before any batch runs.)"""
    text = _masked(x, None, mask, "[x, keep]").replace("n_heads: 2", "n_heads: 2, in_size: 8")
    if x.startswith("[3"):
        # examples of one length: shape inference refuses the mask when the spec loads
        with pytest.raises(SpecErrors) as refused:
            load_spec_text(text, "bad.yaml")
        error, = refused.value.errors
        assert (error.line, error.col) == (8, 5) and "keep is" in error.message
        return
    spec = load_spec_text(text, "bad.yaml")
    inputs = make_inputs(spec.inputs, 0)
    errors = []
    for mode in ("off", batching):
        with pytest.raises(SpecRuntimeError) as info:
            run_spec(spec, build_model(spec), inputs, batching=mode)
        errors.append((info.value.line, info.value.col, info.value.message))
    assert errors[0] == errors[1]
    assert errors[0][:2] == (8, 5)  # the attention step


SOFTMAX = """graphtool: 1
name: softmax_loss
seed: 0
inputs:
  x: {random: normal, shape: [6, 4], examples: 5}
  t: {random: randint, low: -1, high: 3, shape: [6], examples: 5}
graph:
  - {op: linear, out_size: 3, name: score, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]ATTRS}
outputs: [logits]
"""


@pytest.mark.parametrize("attrs", ["", ", normalize: false", ", ignore_label: 0"])
def test_a_static_plan_counts_the_softmax_labels_it_replays(attrs):
    """softmax_cross_entropy divides each example's loss by its own count of kept labels; a
    plan traced from some labels, replayed for others (other ignored positions, the same
    shapes), divides by theirs (a count read from the traced labels' values was frozen in)."""
    text = SOFTMAX.replace("ATTRS", attrs)
    if "ignore_label: 0" in attrs:  # labels 0..2, 0 ignored (-1 would be out of range)
        text = text.replace("low: -1", "low: 0")
    spec = load_spec_text(text, "s.yaml")
    _replayed_for_other_labels(spec)
