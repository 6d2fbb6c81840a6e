"""Dropout draws the same masks in static mode as define-by-run, with the same seed.

Tracing runs the function once (define-by-run): the replay that follows reuses the traced
run's draws instead of drawing again, and later replays draw in the order the ops ran. So
`graphtool run --mode static` and `--mode dynamic` give identical outputs and gradients, and a
compiled model with dropout trains as its define-by-run twin.
"""

import copy
import json

import numpy as np
from typer.testing import CliRunner

import graphcore
import graphcore.functions as F
import graphcore.links as L
from cli.app import app
from graphcore import Chain
from graphcore import spec as gspec
from graphcore.spec_static.runner import StaticSpecRunner

# Two dropouts on one value, added in the other order than they ran: a trace ordered by the
# graph's structure alone would draw b's mask first. l1's input size is inferred, so its
# weights are drawn lazily inside the seeded run, between the input and the dropouts.
DROPOUT_SPEC = """\
graphtool: 1
name: dropouts
seed: 3
inputs:
  x: {random: normal, shape: [4, 5]}
  t: {random: randint, low: 0, high: 3, shape: [4]}
graph:
  - {op: linear, out_size: 8, name: l1, to: h}
  - {op: dropout, ratio: 0.5, to: a}
  - {op: dropout, ratio: 0.3, from: h, to: b}
  - {op: add, from: [b, a]}
  - {op: linear, out_size: 3, name: l2, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
outputs: [logits]
"""


def test_cli_run_dynamic_and_static_are_identical_with_dropout(tmp_path):
    path = tmp_path / "dropouts.yaml"
    path.write_text(DROPOUT_SPEC)
    docs = {}
    for mode in ("dynamic", "static"):
        result = CliRunner().invoke(app, ["run", str(path), "--mode", mode, "--json",
                                          "--out-dir", str(tmp_path / mode)])
        assert result.exit_code == 0, result.stderr
        docs[mode] = json.loads(result.stdout)
    dynamic, static = docs["dynamic"], docs["static"]
    assert static["outputs"] == dynamic["outputs"]
    assert static["grads"] == dynamic["grads"]
    assert static["loss"] == dynamic["loss"]


def test_static_spec_runs_draw_what_dynamic_runs_draw_call_after_call(tmp_path):
    path = tmp_path / "dropouts.yaml"
    path.write_text(DROPOUT_SPEC)
    s = gspec.load_spec_file(path)
    inputs = gspec.make_inputs(s.inputs, s.seed, s.folder)
    dynamic_model, static_model = gspec.build_model(s), gspec.build_model(s)
    runner = StaticSpecRunner(s, static_model)
    for call in range(3):
        np.random.seed(call)  # the runs seed themselves; this must not matter
        want = gspec.run_spec(s, dynamic_model, inputs, seed=10 + call)
        got = runner.run(inputs, seed=10 + call)
        assert got.loss == want.loss, f"call {call}"
        np.testing.assert_array_equal(np.asarray(got.outputs["logits"]),
                                      want.outputs["logits"].array)
        for (name, p), (_, q) in zip(sorted(static_model.namedparams()),
                                     sorted(dynamic_model.namedparams()), strict=True):
            np.testing.assert_array_equal(p.grad, q.grad, err_msg=f"call {call}: {name}")


class Dropper(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(None, 8)  # drawn lazily, inside the first (traced) call
            self.l2 = L.Linear(8, 3)

    def forward(self, x):
        h = self.l1(x)
        a = F.dropout(h, 0.5)
        b = F.dropout(h, 0.2)
        return self.l2(b + a)


def test_compiled_model_with_dropout_trains_as_define_by_run():
    dynamic = Dropper()
    static = copy.deepcopy(dynamic)
    step = graphcore.compile(static)
    x = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
    t = np.array([0, 1, 2, 0, 1, 2], np.int32)
    opt_d = graphcore.optimizers.SGD(lr=0.1).setup(dynamic)
    opt_s = graphcore.optimizers.SGD(lr=0.1).setup(static)
    for call in range(4):
        losses = []
        for model, forward, opt in ((dynamic, dynamic, opt_d), (static, step, opt_s)):
            np.random.seed(100 + call)
            model.cleargrads()
            loss = F.softmax_cross_entropy(forward(x), t)
            loss.backward()
            opt.update()
            losses.append(float(loss.array))
            losses.append(np.random.random_sample())  # the generator's state afterwards
        assert losses[0] == losses[2], f"call {call}: loss"
        assert losses[1] == losses[3], f"call {call}: numbers drawn"
        np.testing.assert_array_equal(static.l1.W.array, dynamic.l1.W.array)


# How many times the loop runs depends on the masks drawn: replays stopped by a guard, and
# the traces of new paths, must leave the draws as define-by-run makes them.
GUARDED_SPEC = """\
graphtool: 1
name: guarded_dropouts
kind: dynamic
seed: 0
inputs:
  x: {random: normal, shape: [3, 4]}
graph:
  - {op: linear, out_size: 4, name: l1}
  - {op: dropout, ratio: 0.5}
  - while: norm(_) > 1.5
    max_iters: 5
    body:
      - {op: dropout, ratio: 0.4}
      - {op: scale, by: 0.8}
  - {op: linear, out_size: 2, name: head}
loss: {op: sum}
"""


def test_guard_misses_and_new_paths_keep_the_draws_of_define_by_run(tmp_path):
    path = tmp_path / "guarded.yaml"
    path.write_text(GUARDED_SPEC)
    s = gspec.load_spec_file(path)
    inputs = gspec.make_inputs(s.inputs, s.seed, s.folder)
    dynamic_model, static_model = gspec.build_model(s), gspec.build_model(s)
    runner = StaticSpecRunner(s, static_model)
    trips = set()
    for call in range(12):
        want = gspec.run_spec(s, dynamic_model, inputs, seed=call)
        got = runner.run(inputs, seed=call)
        assert [e.to_dict() for e in got.path] == [e.to_dict() for e in want.path]
        assert got.loss == want.loss, f"call {call}"
        for (name, p), (_, q) in zip(sorted(static_model.namedparams()),
                                     sorted(dynamic_model.namedparams()), strict=True):
            np.testing.assert_array_equal(p.grad, q.grad, err_msg=f"call {call}: {name}")
        trips.add(want.path[0].to_dict()["trips"])
    assert len(trips) > 1 and runner.stats.hits > 0  # paths changed, and some replayed


def test_cli_train_dynamic_and_static_lose_the_same_with_dropout(tmp_path):
    path = tmp_path / "dropouts.yaml"
    path.write_text(DROPOUT_SPEC)
    losses = {}
    for mode in ("dynamic", "static"):
        result = CliRunner().invoke(app, ["train", str(path), "--mode", mode, "--steps", "5",
                                          "--json", "--out-dir", str(tmp_path / mode)])
        assert result.exit_code == 0, result.stderr
        losses[mode] = json.loads(result.stdout)["losses"]
    assert losses["static"] == losses["dynamic"]
