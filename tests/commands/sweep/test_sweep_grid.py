"""graphcore.sweep without a cluster: grid keys and values, expansion, sampling, task keys,
rows (sorting by any figure, CSV, the command line of a point) and run_point's failure rows."""

import pytest
from sweep_helpers import SPEC, SPECS

from graphcore.commands.sweep import (
    SweepOptionError,
    best_row,
    command_line,
    expand_grid,
    make_tasks,
    parse_grid,
    rows_csv,
    run_point,
    sample_grid,
    sort_rows,
)
from graphcore.commands.sweep.schedule import check_cluster
from graphcore.spec import load_spec_file


def test_expand_every_combination_first_axis_slowest():
    axes = parse_grid(["params.width=8,16", "train.lr=1e-3,1e-2,0.1"], "train")
    points = expand_grid(axes)
    assert len(points) == 6
    assert points[0] == {"params.width": "8", "train.lr": "1e-3"}
    assert points[1] == {"params.width": "8", "train.lr": "1e-2"}
    assert points[-1] == {"params.width": "16", "train.lr": "0.1"}


def test_schedules_and_the_gradient_hooks_are_grid_keys():
    """A schedule's settings are apart by ':' in a grid, whose values commas separate."""
    axes = parse_grid(["train.schedule=cosine,step:every=2:factor=0.5",
                       "train.weight_decay=0,1e-4", "train.warmup=0,2",
                       "train.gradient_clipping=1"], "train")
    points = expand_grid(axes)
    assert len(points) == 8
    assert points[-1] == {"train.schedule": "step:every=2:factor=0.5",
                          "train.weight_decay": "1e-4", "train.warmup": "2",
                          "train.gradient_clipping": "1"}
    row = {"command": "train", "settings": points[-1]}
    assert command_line(row, "s.yaml") == (
        "graphtool train s.yaml --schedule step:every=2:factor=0.5 --weight-decay 1e-4 "
        "--warmup 2 --gradient-clipping 1")


@pytest.mark.parametrize("item, command, message", [
    ("train.schedule=cosin", "train", "unknown schedule kind 'cosin'"),
    ("train.schedule=step", "train", "needs 'every'"),
    ("train.warmup=1.5", "train", "takes integers"),
    ("train.weight_decay=x", "train", "takes numbers"),
    ("train.lr=0.1", "bench", "does not apply to bench"),
    ("train.steps=1.5", "train", "takes integers"),
    ("train.lr=fast", "train", "takes numbers"),
    ("mode=turbo", "train", "unknown mode"),
    ("params.width", "train", "KEY=V1,V2"),
    ("params.width=8,8", "train", "twice"),
    ("train.optimizer=a:b", "train", "needs numbers"),
    ("train.lr=1:0.1", "train", "empty"),
])
def test_bad_grid_items_are_refused(item, command, message):
    with pytest.raises(SweepOptionError, match=message):
        parse_grid([item], command)


def test_a_key_named_twice_is_refused():
    with pytest.raises(SweepOptionError, match="twice"):
        parse_grid(["seed=1", "seed=2"], "train")


def test_ranges_need_random_and_sample_reproducibly():
    axes = parse_grid(["train.lr=1e-4:1e-1", "train.steps=5:50", "params.width=8,16"], "train")
    with pytest.raises(SweepOptionError, match="--random"):
        expand_grid(axes)
    points = sample_grid(axes, 5, seed=3)
    assert points == sample_grid(axes, 5, seed=3) != sample_grid(axes, 5, seed=4)
    for p in points:
        assert 1e-4 <= float(p["train.lr"]) <= 1e-1
        assert 5 <= int(p["train.steps"]) <= 50 and p["params.width"] in ("8", "16")


def _tasks(points, command="train"):
    spec = load_spec_file(SPEC)
    return make_tasks(command, str(SPEC), SPEC.read_text(), spec, points)


def test_task_keys_hash_spec_and_settings():
    a, b = _tasks([{"train.lr": "0.1"}, {"train.lr": "0.2"}])
    again, = _tasks([{"train.lr": "0.1"}])
    assert a.key == again.key != b.key
    assert _tasks([{"train.lr": "0.1"}], "run")[0].key != a.key


def test_tasks_carry_the_spec_s_input_files():
    path = SPECS / "csv_classifier.yaml"
    task, = make_tasks("train", str(path), path.read_text(), load_spec_file(path), [{}])
    assert task.spec_files == {"data/points.csv": (SPECS / "data/points.csv").read_bytes(),
                               "data/labels.csv": (SPECS / "data/labels.csv").read_bytes()}
    row = run_point(task)
    assert row["status"] == "ok" and row["worker"] == "local", row


def test_run_point_equals_train_and_records_a_failure():
    ok, bad = _tasks([{"train.steps": "3", "train.batch_size": "4"},
                      {"train.steps": "3", "train.batch_size": "100"}])
    row = run_point(ok)
    assert row["status"] == "ok" and row["exit_code"] == 0
    assert isinstance(row["figures"]["final_loss"], float)
    failed = run_point(bad)
    assert failed["status"] == "failed" and failed["exit_code"] == 2
    assert failed["exit_class"] == "usage" and "larger than the data" in failed["error"]
    spec_error = run_point(_tasks([{"params.width": "zero"}])[0])
    assert spec_error["status"] == "failed" and spec_error["exit_code"] in (1, 65)


def _row(index, figures, status="ok", **settings):
    return {"key": str(index), "index": index, "command": "train", "settings": settings,
            "figures": figures, "status": status, "error": None, "exit_code": 0,
            "exit_class": None, "seconds": 0.5, "worker": "w"}


def test_sort_by_any_figure_direction_from_its_name():
    rows = [_row(0, {"final_loss": 0.3, "val_accuracy": 0.7}),
            _row(1, {}, status="failed"),
            _row(2, {"final_loss": 0.1, "val_accuracy": 0.6}),
            _row(3, {"final_loss": 0.2, "val_accuracy": 0.9})]
    assert [r["index"] for r in sort_rows(rows, "final_loss")] == [2, 3, 0, 1]
    assert [r["index"] for r in sort_rows(rows, "val_accuracy")] == [3, 0, 2, 1]
    assert best_row(rows, "val_accuracy")["index"] == 3
    with pytest.raises(SweepOptionError, match="figures: final_loss, val_accuracy"):
        sort_rows(rows, "val_loss")


@pytest.mark.parametrize("figure", ["validation_auc", "final_r2", "validation_f1"])
def test_scores_sort_best_first(figure):
    rows = [_row(0, {figure: 0.5}), _row(1, {figure: 0.9}), _row(2, {figure: 0.7})]
    assert [r["index"] for r in sort_rows(rows, figure)] == [1, 2, 0]


def test_csv_has_a_line_per_point_and_every_figure():
    rows = [_row(1, {"b": 2.5}, lr="0.1"), _row(0, {"a": 1}, lr="0.2")]
    lines = rows_csv(rows).splitlines()
    assert lines[0] == "index,key,lr,a,b,status,seconds,worker,exit_code,exit_class,error"
    assert lines[1].startswith("0,0,0.2,1,,ok") and lines[2].startswith("1,1,0.1,,2.5,ok")


def test_command_line_of_a_point():
    row = _row(0, {}, **{"train.lr": "0.01", "params.width": "8", "mode": "static",
                          "train.steps": "5"})
    assert command_line(row, "specs/x y.yaml", {"x": "d.npy"}) == (
        "graphtool train 'specs/x y.yaml' --lr 0.01 --mode static --steps 5 "
        "--set params.width=8 --input x=d.npy")


class _NoResources:
    def scheduler_info(self):
        return {"workers": {"tcp://127.0.0.1:1": {"resources": {}}}}


def test_timing_points_need_workers_offering_the_resource():
    check_cluster(_NoResources(), "train")
    with pytest.raises(SweepOptionError, match="--resources graphtool=1"):
        check_cluster(_NoResources(), "bench")


def test_input_file_contents_travel_with_the_task(tmp_path):
    import numpy as np

    data = tmp_path / "x.npy"
    np.save(data, np.linspace(-1, 1, 80, dtype=np.float32).reshape(8, 10))
    spec = load_spec_file(SPEC)
    task, = make_tasks("train", str(SPEC), SPEC.read_text(), spec, [{"train.steps": "3"}],
                       {"x": str(data)})
    with_file = run_point(task)
    data.unlink()  # a worker elsewhere never sees the caller's file
    without_file = run_point(task)
    assert with_file["status"] == without_file["status"] == "ok", without_file
    assert with_file["figures"] == without_file["figures"]
    assert with_file["figures"] != run_point(_tasks([{"train.steps": "3"}])[0])["figures"]
