"""`graphtool train`: lowers the loss, writes train.csv and --save params that `run --params`
loads; a batch size larger than the data is a usage error (exit 2), as is a bad option."""

import io
import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

from cli import output
from cli.app import app
from cli.commands.train import table_steps

SPECS = Path(__file__).resolve().parents[2] / "specs"
runner = CliRunner()


def train(*args):
    return runner.invoke(app, ["train", *map(str, args)])


@pytest.mark.parametrize("name", ["residual_mlp", "csv_classifier"])
def test_train_lowers_the_loss(name, tmp_path):
    result = train(SPECS / f"{name}.yaml", "--steps", 30, "--optimizer", "adam", "--lr", 0.01,
                   "--json", "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) == {"schema_version", "spec", "seed", "mode", "optimizer", "lr", "steps",
                        "batch_size", "losses", "final_loss", "run", "run_folder"}
    assert (doc["spec"], doc["seed"], doc["mode"], doc["optimizer"], doc["lr"], doc["steps"]) \
        == (name, 0, "dynamic", "adam", 0.01, 30)
    assert len(doc["losses"]) == 30
    assert doc["final_loss"] < doc["losses"][0] and doc["losses"][-1] < doc["losses"][0]
    csv = tmp_path / name / "runs" / "1" / "train.csv"
    assert (doc["run"], doc["run_folder"]) == (1, str(csv.parent))
    assert result.stderr == f"wrote {csv}\n"  # off a terminal: no progress bar
    lines = csv.read_text().splitlines()
    assert lines[0] == "step,loss" and len(lines) == 31
    rows = [line.split(",") for line in lines[1:]]
    assert [int(step) for step, _ in rows] == list(range(1, 31))
    assert [float(loss) for _, loss in rows] == doc["losses"]


def test_human_output_is_a_loss_table(tmp_path):
    result = train(SPECS / "residual_mlp.yaml", "--steps", 25, "--optimizer", "sgd",
                   "--batch-size", 4, "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "residual_mlp  mode dynamic  seed 0  sgd lr 0.01  25 steps  batch 4"
    assert lines[1].split() == ["step", "loss"]
    steps = [int(line.split()[0]) for line in lines[2:-1]]
    assert steps == table_steps(25) == [1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 25]
    assert lines[-1].startswith("final loss ")


def test_save_then_run_params_reproduces_the_trained_loss(tmp_path):
    params = tmp_path / "nested" / "params.npz"
    trained = train(SPECS / "residual_mlp.yaml", "--steps", 10, "--save", params, "--json",
                    "--out-dir", tmp_path)
    assert trained.exit_code == 0, trained.stderr
    assert f"wrote {params}" in trained.stderr
    with np.load(params) as saved:
        assert set(saved.files) == {f"{layer}/{p}" for layer in
                                    ("inp", "block1", "block2", "out") for p in "Wb"}
    assert not [p for p in params.parent.iterdir() if p.name != "params.npz"]  # no temp files
    ran = runner.invoke(app, ["run", str(SPECS / "residual_mlp.yaml"), "--params", str(params),
                              "--json", "--out-dir", str(tmp_path)])
    assert ran.exit_code == 0, ran.stderr
    assert json.loads(ran.stdout)["loss"] == pytest.approx(
        json.loads(trained.stdout)["final_loss"], rel=1e-6)


def test_batch_size_larger_than_the_data_is_a_usage_error(tmp_path):
    result = train(SPECS / "residual_mlp.yaml", "--batch-size", 9, "--out-dir", tmp_path)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == ("error: batch size 9 is larger than the data: 8 rows along the "
                             "leading axis of x, t\n")
    assert not (tmp_path / "residual_mlp").exists()


@pytest.mark.parametrize("args", [["--optimizer", "lbfgs"], ["--lr", "0"], ["--steps", "0"],
                                  ["--batch-size", "0"], ["--input", "nonsense"]])
def test_bad_options_exit_2(args, tmp_path):
    result = train(SPECS / "seed_static.yaml", *args, "--out-dir", tmp_path)
    assert result.exit_code == 2, result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr


def test_spec_failures_have_their_exit_codes(tmp_path):
    assert train(tmp_path / "missing.yaml").exit_code == 66
    bad = tmp_path / "bad.yaml"
    bad.write_text("graphtool: 1\ninputs: {x: {zeros: [2, 3]}}\ngraph: [rellu]\n"
                   "loss: {op: sum}\n")
    result = train(bad, "--out-dir", tmp_path)
    assert result.exit_code == 65 and "did you mean 'relu'" in result.stderr
    no_loss = tmp_path / "no_loss.yaml"
    no_loss.write_text("graphtool: 1\ninputs: {x: {zeros: [2, 3]}}\ngraph: [relu]\n")
    result = train(no_loss, "--out-dir", tmp_path)
    assert result.exit_code == 1 and "has no loss" in result.stderr


def test_quiet_and_stdin_spec(tmp_path):
    text = (SPECS / "seed_static.yaml").read_text()
    result = runner.invoke(app, ["train", "-", "--steps", "3", "-q", "--json", "--out-dir",
                                 str(tmp_path)], input=text)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    assert json.loads(result.stdout)["spec"] == "seed_static"
    assert (tmp_path / "seed_static" / "runs" / "1" / "train.csv").exists()


def test_progress_bar_only_on_a_terminal(monkeypatch, tmp_path):
    screen = io.StringIO()
    monkeypatch.setattr(output, "stderr_console",
                        lambda: Console(file=screen, force_terminal=True, width=100))
    result = train(SPECS / "seed_static.yaml", "--steps", 5, "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "5/5" in screen.getvalue() and "loss" in screen.getvalue()
    assert "5/5" not in result.stdout


def test_a_diverging_run_names_the_step_and_exits_1(tmp_path):
    result = train(SPECS / "residual_mlp.yaml", "--optimizer", "sgd", "--lr", 1000, "--steps",
                   50, "--out-dir", tmp_path)
    assert result.exit_code == 1 and result.stdout == ""
    assert "error: training step" in result.stderr and "produced NaN or Inf" in result.stderr
    assert "Warning" not in result.stderr


@pytest.mark.parametrize("name", ["sgd", "momentum", "nesterov", "adagrad", "rmsprop", "adam"])
def test_every_optimizer_lowers_the_loss(name, tmp_path):
    result = train(SPECS / "residual_mlp.yaml", "--steps", "20", "--optimizer", name,
                   "--json", "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    losses = json.loads(result.stdout)["losses"]
    assert losses[-1] < losses[0]


def test_a_plain_spec_takes_every_optimizer_a_train_section_takes(tmp_path):
    """One optimizer table: `--optimizer adadelta` (no learning rate) and `momentum_sgd` were
    refused for specs without `train:`."""
    result = train(SPECS / "residual_mlp.yaml", "--steps", "3", "--optimizer", "adadelta",
                   "--json", "--out-dir", tmp_path)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (doc["optimizer"], doc["lr"], len(doc["losses"])) == ("adadelta", None, 3)
    result = train(SPECS / "residual_mlp.yaml", "--steps", "3", "--optimizer", "momentum_sgd",
                   "--json", "--out-dir", tmp_path)
    assert result.exit_code == 0 and json.loads(result.stdout)["lr"] == 0.01, result.stderr
    result = train(SPECS / "residual_mlp.yaml", "--steps", "3", "--optimizer", "adadelta",
                   "--lr", "0.1", "--out-dir", tmp_path)
    assert result.exit_code == 2 and "optimizer adadelta has no learning rate" in result.stderr


LR_DATA_SPEC = """graphtool: 1
name: lr_line
data:
  file: line.csv
  x: {columns: [a]}
  y: {columns: [b]}
train: {epochs: 1, batch_size: 4, lr: 0.05}
graph:
  - {op: linear, out_size: 1, from: x, to: p}
loss: {op: mean_squared_error, from: [p, y]}
"""


def test_train_lr_in_the_spec_is_what_dash_dash_lr_sets(tmp_path):
    (tmp_path / "line.csv").write_text("a,b\n" + "".join(f"{i},{2 * i}\n" for i in range(8)))
    spec = tmp_path / "line.yaml"
    spec.write_text(LR_DATA_SPEC)

    def hyperparameters(*args):
        result = train(spec, *args, "--json", "-q", "--out-dir", tmp_path)
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)["hyperparameters"]

    assert hyperparameters() == {"alpha": 0.05}
    assert hyperparameters("--lr", "0.2") == {"alpha": 0.2}
    assert hyperparameters("--optimizer", "sgd") == {"lr": 0.05}
    spec.write_text(LR_DATA_SPEC.replace("lr: 0.05", "optimizer: {name: adam, alpha: 0.05}"))
    assert hyperparameters() == {"alpha": 0.05}


def test_first_contact_mistakes_are_all_located_with_hints_and_exit_65(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("graphtool: 1\ninputs:\n  x: {random: normal, shape: [4, 3]}\n"
                   "  t: {random: randint, high: 2, shape: [4]}\n"
                   "graph:\n  - {op: linear, out_size: 2}\n  - relu\n    - tanh\n"
                   "loss: {op: softmax_cross_entropy, from: [_, t]}\n"
                   "train: {optimizer: {name: adam, alpha: 1e-2}, metrics: [acc]}\n")
    result = train(bad, "--out-dir", tmp_path)
    assert result.exit_code == 65 and result.stdout == ""
    headlines = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert headlines == [
        f"{bad}:7:5: error: unknown op 'relu - tanh' (this reads as one text 'relu - tanh' "
        "because '- tanh' on line 8 is indented more than '- relu' on line 7; put list items "
        "at the same indentation)",
        f"{bad}:10:40: error: alpha must be a non-negative number, got '1e-2' (YAML 1.1 reads "
        "1e-2 as text, not a number; write 1.0e-2)",
        f"{bad}:10:57: error: unknown metric 'acc'; choose from accuracy, mse, mae, precision, "
        "recall, f1, auc, r2, confusion (did you mean 'accuracy'?)",
    ]
    assert "Traceback" not in result.stderr and not (tmp_path / "bad").exists()


def test_a_mis_indented_then_is_one_located_line_in_words(tmp_path):
    bad = tmp_path / "then.yaml"
    bad.write_text("graphtool: 1\ninputs: {x: {zeros: [2, 3]}}\ngraph:\n"
                   "  - if: mean(x) > 0\n  then: [relu]\nloss: {op: sum}\n")
    result = train(bad, "--out-dir", tmp_path)
    assert result.exit_code == 65 and result.stdout == ""
    assert result.stderr.splitlines()[0] == (
        f"{bad}:5:3: error: invalid YAML: 'then:' lines up with the '- ' on line 4, so it is "
        "outside that list item (indent it 4 spaces, like 'if:' on line 4)")
    assert "found '?'" not in result.stderr and "<block end>" not in result.stderr
