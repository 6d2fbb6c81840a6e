"""The batching a training run chooses when none is named
(graphcore.commands.train.batching_choice): which ones apply, that the measurement changes
nothing that is computed (the updates, the shuffled order, numpy's generator), that a
checkpoint keeps the choice, and that a batched run computing another loss stops the run."""

import numpy as np
import pytest
from sequence_training import BODY_IF, DROPOUT, write_sequences

from graphcore.commands.train import batching_choice
from graphcore.commands.train.batching_choice import BatchingMismatch, MeasuredRuns, candidates
from graphcore.commands.train.session import TrainingSession, load_spec_data, settings_for
from graphcore.spec import load_spec_file


def session(path, out, batching=None, mode="dynamic", **settings):
    spec = load_spec_file(str(path))
    s = settings_for(spec, mode=mode, **settings)
    return TrainingSession(spec, s, load_spec_data(spec, s.seed), out, batching=batching)


def params(s):
    return {name: np.array(p.array) for name, p in s.model.namedparams()}


def force(monkeypatch, times):
    """Make the measurement find ``times`` (ms per step per batching), whatever it timed."""
    monkeypatch.setattr(MeasuredRuns, "_medians",
                        lambda self: {k: v for k, v in times.items() if k in self.times})


def test_the_candidates_are_the_batchings_that_apply(tmp_path):
    def of(body):
        spec = load_spec_file(str(write_sequences(tmp_path, body=body)))
        return candidates(spec, load_spec_data(spec, 0).train)

    assert of("") == (["off", "auto", "pad"], {})
    names, left_out = of(BODY_IF)
    assert names == ["off", "auto"]
    assert left_out["pad"].endswith("the for_each body has live control flow, which padded "
                                    "steps would decide on padding")
    assert left_out["pad"].startswith(str(tmp_path / "seqs.yaml") + ":")
    names, left_out = of(DROPOUT)
    assert names == ["off"] and "draws random numbers" in left_out["auto"]


@pytest.mark.parametrize("mode", ["dynamic", "static"])
def test_a_measured_choice_is_one_that_applies_and_computes_what_the_others_do(tmp_path, mode):
    path = write_sequences(tmp_path)
    measured = session(path, tmp_path / "m", mode=mode)
    log = measured.run().log
    choice = measured.batching
    assert choice.how == "measured" and choice.batching in ("off", "auto", "pad")
    assert set(choice.step_ms) <= {"off", "auto", "pad"} and "auto" in choice.step_ms
    for batching in ("off", "auto", "pad"):
        given = session(path, tmp_path / batching, batching=batching, mode=mode)
        assert given.batching.how == "given"
        given_log = given.run().log
        for a, b in zip(log, given_log, strict=True):
            assert a["main/loss"] == pytest.approx(b["main/loss"], rel=1e-5)
        for name, value in params(given).items():
            np.testing.assert_allclose(params(measured)[name], value, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("chosen", ["auto", "pad", "off"])
def test_the_measured_steps_update_as_batching_auto_does_whatever_is_chosen(tmp_path,
                                                                           monkeypatch, chosen):
    """The timing decides only what runs after it: the measured steps are batching auto's
    bit for bit (parameters, the shuffled order's generator, numpy's global one), then the
    chosen batching runs."""
    path = write_sequences(tmp_path)
    force(monkeypatch, {"off": 3.0, "auto": 2.0, "pad": 1.0} if chosen == "pad" else
          {"off": 1.0, "auto": 2.0, "pad": 3.0} if chosen == "off" else
          {"off": 3.0, "auto": 1.0, "pad": 2.0})
    measured, auto = (session(path, tmp_path / "m", steps=12),
                      session(path, tmp_path / "a", batching="auto", steps=12))
    states = []
    for s in (measured, auto):
        before = np.random.get_state()[1].copy()
        for _ in range(batching_choice.ROUNDS):
            s.trainer.updater.update()
        assert np.array_equal(np.random.get_state()[1], before)
        states.append(s.trainer.updater.get_iterator("main").order_sampler.rng.get_state()[1])
    assert measured.batching.how == "measured" and measured.batching.batching == chosen
    assert np.array_equal(*states)
    for name, value in params(auto).items():
        assert np.array_equal(params(measured)[name], value), name
    given = session(path, tmp_path / "g", batching=chosen, steps=12)
    for _ in range(12):
        given.trainer.updater.update()
    for _ in range(12 - batching_choice.ROUNDS):
        measured.trainer.updater.update()
    for name, value in params(given).items():
        np.testing.assert_allclose(params(measured)[name], value, rtol=1e-4, atol=1e-6)


def test_a_resumed_run_keeps_the_measured_choice_and_ends_where_an_uninterrupted_one_does(
        tmp_path, monkeypatch):
    path = write_sequences(tmp_path, epochs=4)
    force(monkeypatch, {"off": 3.0, "auto": 2.0, "pad": 1.0})
    whole = session(path, tmp_path / "whole")
    whole.run()
    assert whole.batching.batching == "pad"
    first = session(path, tmp_path / "part", epochs=2)
    first.run()
    force(monkeypatch, {"off": 1.0, "auto": 2.0, "pad": 3.0})  # would choose off now
    resumed = session(path, tmp_path / "part")
    resumed.resume(tmp_path / "part" / "checkpoint.npz")
    resumed.run()
    assert resumed.batching.how == "resumed" and resumed.batching.batching == "pad"
    for name, value in params(whole).items():
        assert np.array_equal(params(resumed)[name], value), name


def test_no_measurement_where_there_is_nothing_to_choose(tmp_path):
    only = session(write_sequences(tmp_path, body=DROPOUT), tmp_path / "d")
    assert only.batching.how == "only" and only.batching.batching == "off"
    assert "draws random numbers" in only.batching.reason
    short = session(write_sequences(tmp_path), tmp_path / "s", steps=2 * batching_choice.ROUNDS
                    - 1)
    assert short.batching.how == "short" and short.batching.batching == "off"
    (tmp_path / "p.csv").write_text("a,b\n" + "".join(f"{i},{2 * i}\n" for i in range(8)))
    (tmp_path / "p.yaml").write_text("""graphtool: 1
data: {file: p.csv, x: {columns: [a]}, y: {columns: [b]}}
train: {epochs: 2, batch_size: 2}
graph: [{op: linear, out_size: 1, from: x, to: p}]
loss: {op: mean_squared_error, from: [p, y]}
""")
    plain = session(tmp_path / "p.yaml", tmp_path / "n")
    assert plain.batching.how == "none" and plain.batching.batching is None


def test_a_batched_run_with_another_loss_stops_the_step(tmp_path, monkeypatch):
    path = write_sequences(tmp_path)
    s = session(path, tmp_path / "m")
    runs = s.trainer.updater.run
    real = runs.runs["pad"]

    class Wrong:
        compile_ms = 0.0

        def __call__(self, inputs, seed):
            result = real(inputs, seed=seed)
            result.loss = float(result.loss) * 1.01
            return result

    runs.runs["pad"] = Wrong()
    with pytest.raises(BatchingMismatch, match="batching pad computed the loss .* where one "
                       "example at a time computes"):
        s.run()
