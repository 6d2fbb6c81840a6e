"""Runs are kept: every `train` writes a new outputs/NAME/runs/N/, runs/latest names the newest,
evaluate/predict/report read the latest (or --run N), --resume continues a run in its folder;
`train --tensorboard` writes train.csv's rows as TensorBoard scalars, read back with
TensorBoard's own event reader."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import invoke as cli
from test_cli_workflow import SPEC, write_points


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    """The spec and its data in the current folder (paths in messages stay short)."""
    write_points(tmp_path / "points.csv", 160)
    (tmp_path / "points.yaml").write_text(SPEC)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def train(folder: Path, *args):
    result = cli("train", Path("points.yaml"), "--out-dir", Path("out"), "-q", *args)
    assert result.exit_code == 0, result.stderr
    return result


def runs(folder: Path) -> Path:
    return Path("out") / "points" / "runs"


def listed(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if not p.name.startswith("."))


def epochs_of(path: Path) -> list[int]:
    with open(path, newline="") as f:
        return [int(row["epoch"]) for row in csv.DictReader(f) if row["kind"] == "epoch"]


def test_two_trains_leave_two_runs_and_evaluate_and_predict_read_the_latest(folder):
    first = json.loads(train(folder, "--epochs", 2, "--seed", 1, "--json").stdout)
    second = json.loads(train(folder, "--epochs", 3, "--seed", 2, "--json").stdout)
    assert (first["run"], second["run"]) == (1, 2)
    assert second["run_folder"] == str(runs(folder) / "2")
    assert listed(runs(folder)) == ["1", "2", "latest"]
    assert (runs(folder) / "latest").read_text() == "2\n"
    for n, epochs in ((1, [1, 2]), (2, [1, 2, 3])):  # the first run's files are all still there
        assert {"train.csv", "curves.png", "checkpoint.npz", "best.npz"} <= \
            {p.name for p in (runs(folder) / str(n)).iterdir()}
        assert epochs_of(runs(folder) / str(n) / "train.csv") == epochs

    def evaluated(*args):
        result = cli("evaluate", Path("points.yaml"), "--out-dir", Path("out"), "--json",
                     *args)
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    latest, of_first = evaluated(), evaluated("--run", 1)
    assert latest["params"] == str(runs(folder) / "2" / "best.npz")
    assert of_first["params"] == str(runs(folder) / "1" / "best.npz")
    for doc, run in ((latest, second), (of_first, first)):  # each run's own best epoch
        entry = next(e for e in run["log"] if e["epoch"] == run["best"]["epoch"])
        assert doc["accuracy"] == entry["validation_accuracy"]
        assert doc["loss"] == entry["validation_loss"]

    def predicted(*args):
        result = cli("predict", Path("points.yaml"), "--out-dir", Path("out"),
                     "--data", Path("points.csv"), *args)
        assert result.exit_code == 0, result.stderr
        return result

    # without -o, the predictions go into the folder of the run they come from
    assert predicted().stderr == f"wrote {runs(folder) / '2' / 'predictions.csv'}\n"
    predicted("--run", 1)
    by_params = predicted("--params", runs(folder) / "1" / "best.npz", "-o", "-").stdout
    assert (runs(folder) / "1" / "predictions.csv").read_text() == by_params
    assert (runs(folder) / "2" / "predictions.csv").read_text() != by_params


def test_resume_continues_a_run_in_its_own_folder(folder):
    train(folder, "--epochs", 2)
    train(folder, "--epochs", 2, "--seed", 7)
    latest = cli("train", Path("points.yaml"), "--out-dir", Path("out"), "--resume",
                 "--epochs", 3, "--json")
    assert latest.exit_code == 0, latest.stderr
    doc = json.loads(latest.stdout)
    assert (doc["run"], doc["resumed_from"]) == (2, str(runs(folder) / "2" / "checkpoint.npz"))
    first = cli("train", Path("points.yaml"), "--out-dir", Path("out"), "--resume",
                "--run", 1, "--epochs", 4, "--json")
    assert first.exit_code == 0, first.stderr
    assert json.loads(first.stdout)["run"] == 1
    assert epochs_of(runs(folder) / "1" / "train.csv") == [1, 2, 3, 4]
    assert epochs_of(runs(folder) / "2" / "train.csv") == [1, 2, 3]
    assert listed(runs(folder)) == ["1", "2", "latest"]
    assert (runs(folder) / "latest").read_text() == "2\n"  # the newest run, not the last resumed
    # a checkpoint named by path continues in the run folder that holds it
    named = cli("train", Path("points.yaml"), "--out-dir", Path("out"), "--resume",
                runs(folder) / "1" / "checkpoint.npz", "--epochs", 5, "--json")
    assert named.exit_code == 0, named.stderr
    assert json.loads(named.stdout)["run"] == 1
    assert epochs_of(runs(folder) / "1" / "train.csv") == [1, 2, 3, 4, 5]
    missing = cli("train", Path("points.yaml"), "--out-dir", Path("out"), "--resume",
                  "--run", 9)
    assert missing.exit_code == 66
    assert missing.stderr == f"error: no run 9 in {runs(folder)} (runs there: 1-2)\n"


def test_without_a_run_each_command_says_which_command_makes_one(folder):
    spec, out = "points.yaml", Path("out")
    hint = f"hint: `graphtool train {spec} --out-dir {out}` makes a run\n"
    for command in (["evaluate", spec], ["predict", spec], ["train", spec, "--resume"],
                    ["report", spec, "--run", 1]):
        result = cli(*command, "--out-dir", out)
        assert result.exit_code == 66, (command, result.stderr)
        assert result.stderr == f"error: no training run in {out / 'points' / 'runs'} yet: " \
            f"spec 'points' has not been trained\n{hint}", command
    assert not (out / "points" / "runs").exists()


def test_a_train_that_fails_before_writing_leaves_no_run_and_latest_stays(folder):
    train(folder, "--epochs", 1)
    too_big = cli("train", Path("points.yaml"), "--out-dir", Path("out"),
                  "--batch-size", 1000)
    assert too_big.exit_code == 2, too_big.stderr
    assert "larger than the training data" in too_big.stderr
    assert listed(runs(folder)) == ["1", "latest"]
    assert (runs(folder) / "latest").read_text() == "1\n"
    assert train(folder, "--epochs", 1, "--json").stdout.count('"run": 2') == 1


def test_run_options_that_cannot_apply_are_usage_errors(folder):
    spec = Path("points.yaml")
    checkpoint = "x.npz"
    for args, message in (
            (["train", spec, "--run", 1], "error: --run names the run --resume continues"),
            (["train", spec, "--resume", checkpoint, "--run", 1],
             "error: --run and a CHECKPOINT both name the checkpoint to resume; give one"),
            (["evaluate", spec, "--run", 1, "--params", checkpoint],
             "error: --params and --run both name the parameters; give one"),
            (["predict", spec, "--run", 1, "--params", checkpoint],
             "error: --params and --run both name the parameters; give one")):
        result = cli(*args)
        assert result.exit_code == 2, (args, result.stderr)
        assert result.stderr.startswith(message), result.stderr


def test_a_run_without_best_npz_names_its_checkpoint(folder):
    train(folder, "--epochs", 1)
    best = runs(folder) / "1" / "best.npz"
    best.unlink()
    result = cli("evaluate", Path("points.yaml"), "--out-dir", Path("out"))
    assert result.exit_code == 66
    assert result.stderr == (
        f"error: run 1 of 'points' has no best.npz ({runs(folder) / '1'}): it has not "
        f"finished an epoch\nhint: give --params {runs(folder) / '1' / 'checkpoint.npz'} for "
        "the parameters of its checkpoint\n")


def test_a_damaged_latest_is_refused_not_guessed_around(folder):
    train(folder, "--epochs", 1)
    (runs(folder) / "latest").write_text("7\n")
    result = cli("evaluate", Path("points.yaml"), "--out-dir", Path("out"))
    assert result.exit_code == 65
    assert result.stderr.startswith(f"error: {runs(folder) / 'latest'} names run 7, which is "
                                    "not there; runs there: 1")
    assert cli("evaluate", Path("points.yaml"), "--out-dir", Path("out"), "--run",
               1).exit_code == 0


def test_a_spec_without_data_writes_its_loss_log_in_a_run_folder_too(tmp_path):
    spec = Path(__file__).resolve().parents[2] / "specs" / "residual_mlp.yaml"
    for n in (1, 2):
        result = cli("train", spec, "--steps", 3, "--out-dir", tmp_path, "--json")
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["run"] == n
        lines = (tmp_path / "residual_mlp" / "runs" / str(n) / "train.csv").read_text()
        assert lines.splitlines()[0] == "step,loss" and len(lines.splitlines()) == 4
    refused = cli("train", spec, "--steps", 3, "--out-dir", tmp_path, "--tensorboard")
    assert refused.exit_code == 2
    assert "--tensorboard applies to specs with a `data:` or `train:` section" in refused.stderr


def test_report_shows_the_latest_runs_curves_or_run_n(folder):
    train(folder, "--epochs", 2)
    train(folder, "--epochs", 5)
    out = Path("out")

    def curve_points(*args):
        result = cli("report", Path("points.yaml"), "--out-dir", out, "-q", *args)
        assert result.exit_code == 0, result.stderr
        import re
        text = (out / "points" / "report.html").read_text()
        return len(re.search(r'<polyline points="([^"]*)"', text).group(1).split())

    assert curve_points() == 5  # a row per epoch: the latest run's five
    assert curve_points("--run", 1) == 2


# --- TensorBoard --------------------------------------------------------------------------

def scalars(logdir: Path) -> dict[str, list[tuple[int, float]]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(logdir))
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)]
            for tag in events.Tags()["scalars"]}


def csv_scalars(path: Path) -> dict[str, list[tuple[int, float]]]:
    """train.csv's rows as the scalars TensorBoard should hold (float32, as events keep)."""
    out: dict[str, list[tuple[int, float]]] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            for column, value in row.items():
                if column not in ("kind", "epoch", "step", "elapsed_s") and value != "":
                    out.setdefault(f"{row['kind']}/{column}", []).append(
                        (int(row["step"]), float(np.float32(value))))
    return out


def test_tensorboard_events_hold_train_csvs_rows(folder):
    Path("points.yaml").write_text(SPEC.replace(
        "metrics: [accuracy]", "metrics: [accuracy], log_every: 5, schedule: cosine"))
    train(folder, "--epochs", 3, "--tensorboard")
    run = runs(folder) / "1"
    got, want = scalars(run / "tensorboard"), csv_scalars(run / "train.csv")
    assert {"epoch/loss", "epoch/accuracy", "epoch/validation_loss",
            "epoch/validation_accuracy", "step/loss", "step/accuracy"} <= set(want)
    rates = [rate for _, rate in want["epoch/lr"]]  # the schedule's learning rate too
    assert rates == sorted(rates, reverse=True) and len(set(rates)) == 3
    assert got == want
    assert len(got["epoch/loss"]) == 3 and len(got["step/loss"]) == 23 // 5  # 23 steps


def test_tensorboard_is_kept_for_resume_and_the_resumed_steps_replace_later_ones(folder):
    train(folder, "--epochs", 2, "--tensorboard")
    run = runs(folder) / "1"
    train(folder, "--resume", "--epochs", 4)  # --tensorboard, as the run was started
    got = scalars(run / "tensorboard")
    assert got == csv_scalars(run / "train.csv")
    assert [step for step, _ in got["epoch/loss"]] == [8, 15, 23, 30]
    train(folder, "--resume", "--epochs", 5, "--no-tensorboard")
    assert scalars(run / "tensorboard")["epoch/loss"] == got["epoch/loss"]  # none added


def test_tensorboard_without_its_extra_is_a_usage_error_naming_the_install(folder,
                                                                          monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)  # an import of it now fails
    result = cli("train", Path("points.yaml"), "--out-dir", Path("out"), "--epochs", 1,
                 "--tensorboard")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: --tensorboard: TensorBoard event files are written by "
                               "the tensorboardX package, which is not installed")
    assert lines[1] == "hint: pip install -e '.[tensorboard]' (the tensorboardX package)"
    assert not Path("out").exists()  # refused before any run
