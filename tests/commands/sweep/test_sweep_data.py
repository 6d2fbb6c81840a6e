"""Sweep points of specs that read files through `data:` and `validation: {file:}` (and a
`file:` input at an absolute path): each task carries every file the spec reads, so a point
runs where the caller's files are not (here: after they are moved away), and a task's key
changes with any of them. In process (``run_point``), as a worker runs it; the cluster runs
are in test_sweep_local.py and test_sweep_remote.py."""

import json
import shutil

import numpy as np
import pytest
from sweep_helpers import invoke

from graphcore.commands.sweep import SweepOptionError, make_tasks, run_point
from graphcore.commands.sweep.tasks import MAX_CARRIED_BYTES
from graphcore.spec import load_spec_file

SPEC = """graphtool: 1
name: tiny_data
seed: 0
inputs:
  offset: {{file: {offset}, shape: [3]}}
data:
  file: data/train.csv
  x: {{columns: [a, b, c]}}
  t: {{column: label, dtype: int32}}
validation: {{file: ../shared/val.csv}}
train: {{epochs: 2, batch_size: 8, metrics: [accuracy]}}
graph:
  - {{op: add, from: [x, offset]}}
  - {{op: linear, out_size: 4, name: hidden}}
  - tanh
  - {{op: linear, out_size: 2, name: out, to: logits}}
loss: {{op: softmax_cross_entropy, from: [logits, t]}}
outputs: [logits]
"""


def _csv(path, rows, seed):
    x = np.random.default_rng(seed).normal(size=(rows, 3))
    lines = ["a,b,c,label"] + [f"{a:.4f},{b:.4f},{c:.4f},{int(a + b + c > 0)}"
                               for a, b, c in x]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def project(tmp_path):
    """``tmp_path/project/spec.yaml`` reading data/train.csv (inside its folder),
    ../shared/val.csv (outside it) and an absolute shared/offset.npy."""
    _csv(tmp_path / "project" / "data" / "train.csv", 40, 0)
    _csv(tmp_path / "shared" / "val.csv", 12, 1)
    offset = tmp_path / "shared" / "offset.npy"
    np.save(offset, np.array([0.5, -0.5, 0.25], dtype=np.float32))
    spec = tmp_path / "project" / "spec.yaml"
    spec.write_text(SPEC.format(offset=offset))
    return spec


def _tasks(spec, points, command="train"):
    return make_tasks(command, str(spec), spec.read_text(), load_spec_file(spec), points)


def _away(spec):
    """Move the project and its shared files away, as on a worker that has none of them."""
    root = spec.parents[1]
    shutil.move(root / "project", root / "project-moved")
    shutil.move(root / "shared", root / "shared-moved")


def _alone(spec, tmp_path, *args):
    result = invoke(*args, "--json", *(("--out-dir", tmp_path / "alone") if args[0] != "evaluate"
                                       else ()))
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_a_task_carries_the_data_validation_and_input_files(project):
    task, = _tasks(project, [{}])
    root = project.parents[1]
    assert task.spec_files == {
        str(root / "shared" / "offset.npy"): (root / "shared" / "offset.npy").read_bytes(),
        "data/train.csv": (project.parent / "data" / "train.csv").read_bytes(),
        "../shared/val.csv": (root / "shared" / "val.csv").read_bytes()}


def test_a_data_fed_point_trains_as_graphtool_train_without_the_caller_s_files(project,
                                                                              tmp_path):
    """The row's figures are those of `graphtool train` with the point's options, its final
    parameters evaluated by `graphtool evaluate`; the point runs after the spec's files are
    gone (the spec's own epochs, batch size and validation file apply)."""
    task, = _tasks(project, [{"train.lr": "0.01", "train.batch_size": "4"}])
    saved = tmp_path / "final.npz"
    _alone(project, tmp_path, "train", project, "--lr", "0.01", "--batch-size", "4", "--save",
           saved)
    validation = _alone(project, tmp_path, "evaluate", project, "--params", saved)
    training = _alone(project, tmp_path, "evaluate", project, "--params", saved, "--data",
                      project.parent / "data" / "train.csv")
    _away(project)
    row = run_point(task)
    assert row["status"] == "ok", row
    figures = row["figures"]
    assert figures["validation_loss"] == validation["loss"]
    assert figures["validation_accuracy"] == validation["accuracy"]
    assert figures["final_loss"] == training["loss"]
    assert figures["final_accuracy"] == training["accuracy"]
    assert figures["epoch"] == 2 and figures["step"] == 20  # 40 rows, 4 a step, 2 epochs


def test_a_point_sets_the_schedule_warmup_weight_decay_and_clipping_as_train_does(project,
                                                                                  tmp_path):
    point = {"train.schedule": "step:every=1:factor=0.5", "train.warmup": "1",
             "train.weight_decay": "0.01", "train.gradient_clipping": "0.5"}
    task, = _tasks(project, [point])
    saved = tmp_path / "final.npz"
    _alone(project, tmp_path, "train", project, "--schedule", "step:every=1:factor=0.5",
           "--warmup", "1", "--weight-decay", "0.01", "--gradient-clipping", "0.5", "--save",
           saved)
    validation = _alone(project, tmp_path, "evaluate", project, "--params", saved)
    plain = run_point(_tasks(project, [{}])[0])
    row = run_point(task)
    assert row["status"] == "ok", row
    assert row["figures"]["validation_loss"] == validation["loss"]
    assert row["figures"]["validation_loss"] != plain["figures"]["validation_loss"]


def test_a_point_ending_mid_epoch_has_its_figures(project):
    row = run_point(_tasks(project, [{"train.steps": "3"}])[0])
    assert row["status"] == "ok", row
    assert row["figures"]["step"] == 3 and row["figures"]["epoch"] == 0
    assert {"final_loss", "validation_loss", "validation_accuracy"} <= set(row["figures"])


def test_batch_sizes_over_the_data_and_one_too_large(project):
    rows = [run_point(t) for t in _tasks(project, [{"train.batch_size": "4"},
                                                   {"train.batch_size": "16"},
                                                   {"train.batch_size": "41"}])]
    assert [r["status"] for r in rows] == ["ok", "ok", "failed"], rows
    assert rows[0]["figures"]["step"] == 20 and rows[1]["figures"]["step"] == 5  # 2 epochs: 80 rows
    assert rows[2]["exit_class"] == "usage"
    assert "batch size 41 is larger than the training data (40 rows)" in rows[2]["error"]


def test_run_check_and_bench_points_of_a_data_fed_spec(project, tmp_path):
    run_doc = _alone(project, tmp_path, "run", project, "--seed", "3")
    run, check, bench = (run_point(t) for t in (
        _tasks(project, [{"seed": "3"}], "run")[0],
        _tasks(project, [{}], "check")[0],
        _tasks(project, [{"mode": "dynamic"}], "bench")[0]))
    assert run["status"] == check["status"] == bench["status"] == "ok", (run, check, bench)
    assert run["figures"]["loss"] == run_doc["loss"]
    assert check["figures"]["ok"] == 1 and check["figures"]["failures"] == 0
    assert bench["figures"]["dynamic.median_ms"] > 0


def test_editing_any_file_the_spec_reads_makes_every_point_new(project):
    points = [{"train.lr": "0.01"}, {"train.lr": "0.1"}]
    before = [t.key for t in _tasks(project, points)]
    assert before == [t.key for t in _tasks(project, points)]
    train = project.parent / "data" / "train.csv"
    _csv(train, 40, 7)
    after_data = [t.key for t in _tasks(project, points)]
    val = project.parents[1] / "shared" / "val.csv"
    _csv(val, 12, 8)
    after_validation = [t.key for t in _tasks(project, points)]
    np.save(project.parents[1] / "shared" / "offset.npy", np.zeros(3, dtype=np.float32))
    after_input = [t.key for t in _tasks(project, points)]
    for i in range(2):
        assert len({before[i], after_data[i], after_validation[i], after_input[i]}) == 4


def test_an_error_names_the_caller_s_file_not_the_worker_s_copy(project):
    train = project.parent / "data" / "train.csv"
    lines = train.read_text().splitlines()
    lines[3] = "0.1,oops,0.2,1"
    train.write_text("\n".join(lines) + "\n")
    row = run_point(_tasks(project, [{"train.steps": "2"}])[0])
    assert row["status"] == "failed" and row["exit_code"] == 65, row
    assert row["error"].startswith(f"{project.parent / 'data' / 'train.csv'}:4:"), row["error"]
    assert "graphtool-sweep-" not in row["error"]


def test_files_over_the_carry_limit_are_refused_before_anything_runs(project, tmp_path):
    train = project.parent / "data" / "train.csv"
    with open(train, "r+b") as handle:  # sparse: the size is checked, nothing is read
        handle.truncate(MAX_CARRIED_BYTES + 2**20)
    limit = MAX_CARRIED_BYTES // 2**20
    with pytest.raises(SweepOptionError, match=rf"data/train.csv \({limit + 1}.0 MiB\)"):
        _tasks(project, [{}])
    result = invoke("sweep", project, "--grid", "train.steps=2", "--out-dir", tmp_path / "out")
    assert result.exit_code == 2, result.stderr
    assert f"over the limit of {limit}.0 MiB" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_missing_data_file_fails_before_any_point_runs(project, tmp_path):
    (project.parent / "data" / "train.csv").unlink()
    result = invoke("sweep", project, "--grid", "train.steps=2", "--out-dir", tmp_path / "out")
    assert result.exit_code == 66, result.stderr
    assert result.stderr.startswith("error: data file not found: ")
    assert result.stderr.rstrip().endswith("data/train.csv")
    assert not (tmp_path / "out").exists()


def test_an_input_read_from_stdin_is_refused_before_anything_runs(tmp_path):
    spec = tmp_path / "stdin.yaml"
    spec.write_text("graphtool: 1\nname: stdin_spec\nseed: 0\ninputs:\n"
                    "  x: {stdin: npy, shape: [4, 3]}\ngraph:\n"
                    "  - {op: linear, out_size: 2, name: l1}\nloss: {op: sum}\n")
    result = invoke("sweep", spec, "--command", "run", "--grid", "seed=0,1", "--out-dir",
                    tmp_path / "out")
    assert result.exit_code == 2, result.stderr
    assert f"error: {spec}:5:6: input 'x' reads stdin" in result.stderr
    assert "--input x=PATH" in result.stderr and not (tmp_path / "out").exists()
    np.save(tmp_path / "x.npy", np.ones((4, 3), dtype=np.float32))
    task, = make_tasks("run", str(spec), spec.read_text(), load_spec_file(spec), [{}],
                       {"x": str(tmp_path / "x.npy")})
    assert run_point(task)["status"] == "ok"
