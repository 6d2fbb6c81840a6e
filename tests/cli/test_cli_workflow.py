"""The workflow from one spec: train with validation and metrics (table, train.csv,
curves.png, checkpoint.npz, best.npz), evaluate, predict, run --eval; Ctrl-C and resume in a
real subprocess; bad data gets located exit-65 answers."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import graphtool_popen as graphtool
from cli_helpers import invoke as cli

ROOT = Path(__file__).resolve().parents[2]

SPEC = """graphtool: 1
name: points
seed: 0
data:
  file: points.csv
  x: {columns: [f1, f2]}
  t: {column: label, dtype: int32}
validation: 0.25
train: {epochs: 6, batch_size: 16, optimizer: {name: adam, alpha: 0.02}, metrics: [accuracy]}
graph:
  - {op: linear, out_size: 12, from: x}
  - tanh
  - {op: linear, out_size: 2, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
outputs: [logits]
"""


def write_points(path: Path, n: int, seed: int = 0, label: bool = True) -> None:
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 2)
    t = (x[:, 0] * x[:, 1] > 0).astype(int)
    lines = ["f1,f2,label"] + [f"{a:.5f},{b:.5f},{c}" for (a, b), c in zip(x, t, strict=True)]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_points(tmp_path / "points.csv", 160)
    (tmp_path / "points.yaml").write_text(SPEC)
    return tmp_path


def test_train_reports_epochs_and_writes_its_files(folder):
    out = folder / "out"
    result = cli("train", folder / "points.yaml", "--json", "--out-dir", out)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [e["epoch"] for e in doc["log"]] == [1, 2, 3, 4, 5, 6]
    assert (doc["training_rows"], doc["validation_rows"]) == (120, 40)
    assert doc["log"][-1]["iteration"] == doc["step"] == int(np.ceil(6 * 120 / 16))
    assert doc["log"][-1]["loss"] < doc["log"][0]["loss"]
    assert {"loss", "accuracy", "validation_loss", "validation_accuracy"} <= set(doc["log"][0])
    rows = (out / "points" / "runs" / "1" / "train.csv").read_text().splitlines()
    assert rows[0] == "kind,epoch,step,loss,accuracy,validation_loss,validation_accuracy,lr," \
        "elapsed_s"
    assert {row.split(",")[-2] for row in rows[1:]} == {"0.02"}  # the spec's Adam alpha
    assert len(rows) == 7 and rows[-1].startswith("epoch,6,")
    best = doc["best"]
    assert best["metric"] == "validation_accuracy"
    assert best["value"] == max(e["validation_accuracy"] for e in doc["log"])
    with np.load(out / "points" / "runs" / "1" / "checkpoint.npz") as ckpt:
        assert int(ckpt["trainer/updater/iteration"]) == doc["step"]
        assert "trainer/updater/optimizer:main/t" in ckpt.files
        assert "trainer/_numpy_random/keys" in ckpt.files

    # evaluate reproduces the validation figures of the best epoch from best.npz
    evaluated = cli("evaluate", folder / "points.yaml", "--params",
                    out / "points" / "runs" / "1" / "best.npz", "--json")
    assert evaluated.exit_code == 0, evaluated.stderr
    figures = json.loads(evaluated.stdout)
    entry = next(e for e in doc["log"] if e["epoch"] == best["epoch"])
    assert (figures["data"], figures["rows"]) == ("validation", 40)
    assert figures["loss"] == entry["validation_loss"]
    assert figures["accuracy"] == entry["validation_accuracy"]


def test_curves_png_is_a_real_chart(folder):
    from matplotlib.image import imread

    result = cli("train", folder / "points.yaml", "--epochs", 3, "--out-dir", folder / "o")
    assert result.exit_code == 0, result.stderr
    png = folder / "o" / "points" / "runs" / "1" / "curves.png"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (960, 360)  # two panels (loss, accuracy), 4.8 x 3.6 in each
    pixels = imread(png)
    assert pixels.shape[:2] == (360, 960)
    assert len(np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0)) > 10


def test_predict_and_run_eval_agree_on_5_and_1000_rows(folder):
    trained = cli("train", folder / "points.yaml", "--epochs", 2, "--out-dir", folder / "o",
                  "--save", folder / "p.npz")
    assert trained.exit_code == 0, trained.stderr
    for n in (5, 1000):
        new = folder / f"new{n}.csv"
        write_points(new, n, seed=n)
        piped = cli("predict", folder / "points.yaml", "--params", folder / "p.npz", "--input",
                    f"x={new}", "-o", "-", "--outputs", "raw")
        assert piped.exit_code == 0, piped.stderr
        lines = piped.stdout.splitlines()
        assert lines[0] == "logits_0,logits_1" and len(lines) == n + 1
        predicted = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
        ran = cli("run", folder / "points.yaml", "--params", folder / "p.npz", "--eval",
                  "--input", f"x={new}", "--input", f"t={new}", "-o", folder / "run.npz",
                  "--out-dir", folder / "o", "-q")
        assert ran.exit_code == 0, ran.stderr
        with np.load(folder / "run.npz") as arrays:
            np.testing.assert_array_equal(predicted.astype(np.float32), arrays["logits"])
        npz = cli("predict", folder / "points.yaml", "--params", folder / "p.npz", "--input",
                  f"x={new}", "-o", folder / "preds.npz", "--batch-size", 7)
        assert npz.exit_code == 0, npz.stderr
        with np.load(folder / "preds.npz") as arrays:
            np.testing.assert_array_equal(arrays["logits"], predicted.astype(np.float32))


@pytest.mark.slow  # three training processes, one interrupted
def test_sigint_checkpoints_and_resume_equals_an_uninterrupted_run(folder):
    spec = folder / "points.yaml"
    spec.write_text(SPEC.replace("epochs: 6", "epochs: 400"))
    full = graphtool("train", spec, "--epochs", 60, "--out-dir", "full", "--save", "full.npz",
                     "-q", cwd=folder)
    interrupted = graphtool("train", spec, "--epochs", 60, "-q", cwd=folder)
    checkpoint = folder / "outputs" / "points" / "runs" / "1" / "checkpoint.npz"
    deadline = time.monotonic() + 60
    while not checkpoint.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    interrupted.send_signal(signal.SIGINT)
    _, err = interrupted.communicate(timeout=60)
    full.communicate(timeout=120)
    assert full.returncode == 0
    if interrupted.returncode == 0:
        pytest.skip("training finished before the signal arrived (a very fast machine)")
    assert interrupted.returncode == 130, err
    assert "interrupted at step" in err and str(Path("outputs/points/runs/1/checkpoint.npz")) in err
    with np.load(checkpoint) as ckpt:
        step = int(ckpt["trainer/updater/iteration"])
    assert 0 < step < 60 * 8
    resumed = graphtool("train", spec, "--epochs", 60, "--resume", "--save", "resumed.npz",
                        "-q", cwd=folder)
    _, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    with np.load(folder / "full.npz") as a, np.load(folder / "resumed.npz") as b:
        assert a.files == b.files
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    run = Path("points") / "runs" / "1"
    full_log = (folder / "full" / run / "train.csv").read_text().splitlines()
    resumed_log = (folder / "outputs" / run / "train.csv").read_text().splitlines()
    strip = [line.rsplit(",", 1)[0] for line in full_log]  # elapsed time differs
    assert [line.rsplit(",", 1)[0] for line in resumed_log] == strip


def test_sigkill_never_leaves_an_unreadable_checkpoint(folder):
    spec = folder / "points.yaml"
    spec.write_text(SPEC.replace("train: {epochs: 6,", "train: {epochs: 100000,"))
    checkpoint = folder / "outputs" / "points" / "runs" / "1" / "checkpoint.npz"
    for delay in (0.0, 0.013, 0.031, 0.047):
        process = graphtool("train", spec, "-q", cwd=folder)
        deadline = time.monotonic() + 60
        while not checkpoint.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(delay)
        process.kill()
        process.communicate(timeout=30)
        with np.load(checkpoint) as ckpt:  # complete, whatever moment the kill came
            assert int(ckpt["trainer/updater/iteration"]) > 0
            assert all(ckpt[key] is not None for key in ckpt.files)


def test_resume_with_other_settings_is_refused(folder):
    assert cli("train", folder / "points.yaml", "--epochs", 1).exit_code == 0
    result = cli("train", folder / "points.yaml", "--epochs", 2, "--resume", "--batch-size", 8)
    assert result.exit_code == 65
    assert "batch_size: 16 then, 8 now" in result.stderr


BAD_DATA = [
    ("f1,f2,label\n1,2,0\n3,4\n", None, "points.csv:3:1: error: row has 2 fields, the header "
     "has 3"),
    ("f1,f2,labl\n1,2,0\n3,4,1\n", None, "has no column 'label' (its columns: f1, f2, labl) "
     "(did you mean 'labl'?)"),
    ("f1,f2,label\n1,2,0\n3,four,1\n", None, "points.csv:3:3: error: column 'f2' holds "
     "'four', not a number"),
    ("f1,f2,label\n1,2,0\n3,4,7\n5,6,1\n2,2,1\n", None, "points.yaml:7:6: error: input 't': "
     "data row 2 has label 7, outside 0..1 for softmax_cross_entropy over 2 classes"),
    (None, ("validation: 0.25", "validation: 1.5"), "validation fraction must be in (0, 1), "
     "got 1.5"),
    (None, ("validation: 0.25", "validation: 0"), "validation fraction must be in (0, 1)"),
]


@pytest.mark.parametrize("csv_text, edit, message", BAD_DATA)
def test_bad_data_gets_a_located_answer_and_exit_65(folder, csv_text, edit, message):
    if csv_text is not None:
        (folder / "points.csv").write_text(csv_text)
    if edit is not None:
        (folder / "points.yaml").write_text((folder / "points.yaml").read_text().replace(*edit))
    result = cli("train", folder / "points.yaml", "--epochs", 1, "--batch-size", 1,
                 "--out-dir", folder / "o")
    assert result.exit_code == 65, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_batch_dimension_bound_differently_is_exit_65(folder):
    write_points(folder / "five.csv", 5)
    result = cli("run", folder / "points.yaml", "--input", f"x={folder / 'five.csv'}")
    assert result.exit_code == 65
    assert "batch dimension 'batch' is 160 for input 't' but 5 for input 'x'" in result.stderr


def test_no_shuffle_visits_rows_in_file_order(folder):
    result = cli("train", folder / "points.yaml", "--epochs", 1, "--no-shuffle", "--out-dir",
                 folder / "o")
    assert result.exit_code == 0, result.stderr
    with np.load(folder / "o" / "points" / "runs" / "1" / "checkpoint.npz") as ckpt:
        assert not any(k.startswith("trainer/updater/iterator:main/order") for k in ckpt.files)
    shuffled = cli("train", folder / "points.yaml", "--epochs", 1, "--out-dir", folder / "s")
    assert shuffled.exit_code == 0
    with np.load(folder / "s" / "points" / "runs" / "1" / "checkpoint.npz") as ckpt:
        order = ckpt["trainer/updater/iterator:main/order"]
    assert sorted(order.tolist()) == list(range(120)) and order.tolist() != list(range(120))
    legacy = cli("train", ROOT / "specs" / "residual_mlp.yaml", "--no-shuffle")
    assert legacy.exit_code == 2 and "--shuffle applies to specs with a `data:`" in legacy.stderr


def test_params_start_and_resume_from_a_named_checkpoint(folder):
    first = cli("train", folder / "points.yaml", "--epochs", 3, "--save", folder / "p.npz",
                "--json", "--out-dir", folder / "a")
    assert first.exit_code == 0, first.stderr
    fresh = json.loads(first.stdout)["log"][0]["loss"]
    warm = cli("train", folder / "points.yaml", "--epochs", 1, "--params", folder / "p.npz",
               "--json", "--out-dir", folder / "b")
    assert warm.exit_code == 0, warm.stderr
    assert json.loads(warm.stdout)["log"][0]["loss"] < fresh
    kept = folder / "kept"  # a checkpoint and its run's train.csv, moved elsewhere
    kept.mkdir()
    saved = kept / "checkpoint.npz"
    run = folder / "a" / "points" / "runs" / "1"
    saved.write_bytes((run / "checkpoint.npz").read_bytes())
    (kept / "train.csv").write_bytes((run / "train.csv").read_bytes())
    resumed = cli("train", folder / "points.yaml", "--epochs", 4, "--resume", saved, "--json",
                  "--out-dir", folder / "c")
    assert resumed.exit_code == 0, resumed.stderr
    doc = json.loads(resumed.stdout)
    assert doc["resumed_from"] == str(saved)
    assert [e["epoch"] for e in doc["log"]] == [1, 2, 3, 4]  # the log continues too
    rows = (folder / "c" / "points" / "runs" / "1" / "train.csv").read_text().splitlines()
    assert [r.split(",")[1] for r in rows[1:]] == ["1", "2", "3", "4"]
    assert cli("train", folder / "points.yaml", saved).exit_code == 2  # a checkpoint needs --resume


def test_a_checkpoint_without_its_train_csv_resumes_and_says_the_log_starts_after_it(folder):
    """The log is train.csv's (a checkpoint does not grow with it): a checkpoint moved alone
    resumes the same parameters, and train.csv holds the epochs after it."""
    full = cli("train", folder / "points.yaml", "--epochs", 4, "--save", folder / "full.npz",
               "--out-dir", folder / "a", "-q")
    assert full.exit_code == 0, full.stderr
    part = cli("train", folder / "points.yaml", "--epochs", 3, "--out-dir", folder / "b", "-q")
    assert part.exit_code == 0, part.stderr
    alone = folder / "alone.npz"
    alone.write_bytes((folder / "b" / "points" / "runs" / "1" / "checkpoint.npz").read_bytes())
    resumed = cli("train", folder / "points.yaml", "--epochs", 4, "--resume", alone, "--json",
                  "--out-dir", folder / "c", "--save", folder / "resumed.npz")
    assert resumed.exit_code == 0, resumed.stderr
    assert f"note: the log before this checkpoint is not available ({folder / 'train.csv'} " \
        "is missing)" in resumed.stderr
    assert [e["epoch"] for e in json.loads(resumed.stdout)["log"]] == [4]
    rows = (folder / "c" / "points" / "runs" / "1" / "train.csv").read_text().splitlines()
    assert rows[0].startswith("kind,epoch,step,") and [r[:8] for r in rows[1:]] == ["epoch,4,"]
    with np.load(folder / "full.npz") as a, np.load(folder / "resumed.npz") as b:
        assert all(np.array_equal(a[k], b[k]) for k in a.files)


def test_commands_on_rows_refuse_specs_without_rows_in_one_located_line(tmp_path):
    """evaluate and predict need rows (data, a named batch axis, per-example inputs): a spec
    of fixed shapes is refused at its first input, a CSV of outputs that differ in length per
    example at the step that makes the output; exit 2, one `file:line:col: error:` line."""
    fixed = ROOT / "specs" / "seed_static.yaml"
    params = tmp_path / "p.npz"
    trained = cli("train", fixed, "--steps", 1, "--save", params, "--out-dir", tmp_path, "-q")
    assert trained.exit_code == 0, trained.stderr
    for command, *more in (("evaluate",), ("predict", "--out-dir", tmp_path / "out")):
        result = cli(command, fixed, "--params", params, *more)
        assert result.exit_code == 2, result.stderr
        assert result.stderr.splitlines() == [
            f"{fixed}:10:6: error: spec 'seed_static' has no batched input to {command} over "
            "(its inputs have fixed shapes); feed them from `data:`, name their leading axis "
            "(shape: [batch, ...]) or make them per-example inputs (lengths:, examples:)"]
    tagger = ROOT / "specs" / "lstm_tagger.yaml"
    params = tmp_path / "tagger.npz"
    trained = cli("train", tagger, "--steps", 1, "--save", params, "--out-dir", tmp_path, "-q")
    assert trained.exit_code == 0, trained.stderr
    result = cli("predict", tagger, "--params", params, "-o", "-")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{tagger}:16:5: error: output 'scores' differs in shape from example to example "
        "((5, 5), (3, 5), (7, 5), ...); a CSV row per example holds outputs of one shape: "
        "write -o preds.npz (one array per example: scores/0, scores/1, ...)"]
    assert not (tmp_path / "out").exists()
