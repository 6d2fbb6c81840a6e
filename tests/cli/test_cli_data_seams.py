"""Where the data path crosses other features: a `data:` input's declared shape (train,
evaluate, predict, --data, --input, the validation file), a missing data file and float
labels (located answers), CSV from stdin read by its header, predictions printed as their own
dtype, and predict refusing parameters or rows that do not fit the spec."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.app import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

SPEC = """graphtool: 1
name: four
seed: 0
data:
  file: four.csv
  x: {columns: [a, b, c, d], shape: [batch, 4]}
  t: {column: label, dtype: int32}
train: {epochs: 1, batch_size: 8}
graph:
  - {op: linear, out_size: 2, from: x, name: l1, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
outputs: [logits]
"""


def write_four(path: Path, n: int = 24, seed: int = 0, order: str = "a,b,c,d,label") -> None:
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 4)
    rows = {"a": x[:, 0], "b": x[:, 1], "c": x[:, 2], "d": x[:, 3],
            "label": (x[:, 0] > 0).astype(int)}
    names = order.split(",")
    lines = [order] + [",".join(f"{rows[k][i]:.5f}" if k != "label" else str(rows[k][i])
                                for k in names) for i in range(n)]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    """The working directory, holding four.yaml and four.csv: messages name short paths."""
    write_four(tmp_path / "four.csv")
    (tmp_path / "four.yaml").write_text(SPEC)
    monkeypatch.chdir(tmp_path)
    return Path(".")


def cli(*args, **kwargs):
    return runner.invoke(app, [*map(str, args)], **kwargs)


def trained(folder: Path) -> Path:
    result = cli("train", folder / "four.yaml", "--out-dir", folder / "o", "--save",
                 folder / "p.npz", "-q")
    assert result.exit_code == 0, result.stderr
    return folder / "p.npz"


# ------------------------------------------------------------------ declared shapes

@pytest.mark.parametrize("shape", ["[batch, 5]", "[batch, 2, 2]", "[batch]"])
def test_a_data_input_whose_shape_does_not_fit_its_columns_is_refused(folder, shape):
    spec = folder / "four.yaml"
    spec.write_text(SPEC.replace("shape: [batch, 4]", f"shape: {shape}"))
    result = cli("train", spec, "--out-dir", folder / "o")
    assert result.exit_code == 65, result.stderr
    assert f"four.yaml:6:37: error: data input 'x': four.csv gives an array of shape [24, 4], " \
        f"but the spec declares shape {shape}" in result.stderr
    assert "declare shape [batch, 4]" in result.stderr  # the hint: the data's own shape
    assert not (folder / "o").exists()  # refused before anything was written


def test_the_declared_shape_is_checked_on_every_data_path(folder):
    params = trained(folder)
    write_four(folder / "five.csv", n=5, seed=1)
    (folder / "wide.csv").write_text("a,b,c,d,e,label\n1,2,3,4,5,0\n")
    spec = folder / "four.yaml"
    # the same columns, a wrong declared shape: every command that reads the data refuses it
    spec.write_text(SPEC.replace("shape: [batch, 4]", "shape: [batch, 3]"))
    for args in (["evaluate", spec, "--params", params],
                 ["evaluate", spec, "--params", params, "--data", folder / "five.csv"],
                 ["predict", spec, "--params", params, "-o", "-"],
                 ["predict", spec, "--params", params, "--input", f"x={folder / 'five.csv'}",
                  "-o", "-"],
                 ["train", spec, "--data", folder / "five.csv", "--out-dir", folder / "o2"]):
        result = cli(*args)
        assert result.exit_code == 65, (args, result.stderr)
        assert "four.yaml:6:37: error: data input 'x':" in result.stderr, args
        assert "but the spec declares shape [batch, 3]" in result.stderr
    # an .npy for a data input: the shape its columns give, located at --input
    np.save(folder / "flat.npy", np.ones(4, np.float32))
    spec.write_text(SPEC)
    result = cli("predict", spec, "--params", params, "--input", f"x={folder / 'flat.npy'}",
                 "-o", "-")
    assert result.exit_code == 65, result.stderr
    assert "--input:1:1: error: input 'x': " in result.stderr
    assert "holds an array of shape [4], but the spec declares shape [batch, 4]" in \
        result.stderr
    np.save(folder / "rows.npy", np.ones((3, 4), np.float32))
    ok = cli("predict", spec, "--params", params, "--input", f"x={folder / 'rows.npy'}", "-o",
             "-")
    assert ok.exit_code == 0, ok.stderr
    assert len(ok.stdout.splitlines()) == 4


def test_the_validation_file_is_checked_against_the_declared_shape(folder):
    (folder / "val.csv").write_text("a,b,c,label\n1,2,3,0\n")
    text = SPEC.replace("x: {columns: [a, b, c, d], shape: [batch, 4]}",
                        "x: {columns: [a, b, c], shape: [batch, 3]}")
    (folder / "four.yaml").write_text(text.replace("train:", "validation: {file: val.csv}\n"
                                                   "train:"))
    (folder / "val.csv").write_text("a,b,c\n1,2,3\n")
    result = cli("train", folder / "four.yaml", "--out-dir", folder / "o")
    assert result.exit_code == 65  # no label column in the validation file
    write_four(folder / "val.csv", n=4)
    npz = folder / "x.npz"
    np.savez(npz, x=np.ones((4, 3), np.float32), t=np.zeros(4, np.int32))
    keyed = text.replace("file: four.csv", "file: x.npz").replace(
        "x: {columns: [a, b, c], shape: [batch, 3]}", "x: {key: x, shape: [batch, 3]}").replace(
        "t: {column: label, dtype: int32}", "t: {key: t}")
    np.savez(folder / "val.npz", x=np.ones((4, 2), np.float32), t=np.zeros(4, np.int32))
    (folder / "four.yaml").write_text(keyed.replace("train:", "validation: {file: val.npz}\n"
                                                    "train:"))
    result = cli("train", folder / "four.yaml", "--out-dir", folder / "o")
    assert result.exit_code == 65, result.stderr
    assert "four.yaml:6:22: error: data input 'x': val.npz gives an array of shape [4, 2], " \
        "but the spec declares shape [batch, 3]" in result.stderr


def test_an_npz_key_over_an_array_of_another_shape_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tmp_path = Path(".")
    np.savez(tmp_path / "a.npz", x=np.ones((4, 3), np.float32), t=np.array([0, 1, 0, 1]))
    text = SPEC.replace("file: four.csv", "file: a.npz").replace(
        "x: {columns: [a, b, c, d], shape: [batch, 4]}", "x: {key: x, shape: [batch, 2]}"
    ).replace("t: {column: label, dtype: int32}", "t: {key: t}").replace("batch_size: 8",
                                                                         "batch_size: 2")
    (tmp_path / "a.yaml").write_text(text)
    result = cli("train", tmp_path / "a.yaml", "--out-dir", tmp_path / "o")
    assert result.exit_code == 65, result.stderr
    assert "a.yaml:6:22: error: data input 'x': a.npz gives an array of shape [4, 3], but " \
        "the spec declares shape [batch, 2]" in result.stderr


def test_digits_declared_with_65_pixels_is_refused(tmp_path):
    text = (ROOT / "specs" / "digits_mlp.yaml").read_text()
    assert "shape: [batch, 64]" in text and "file: data/digits.npz" in text
    spec = tmp_path / "digits.yaml"
    spec.write_text(text.replace("shape: [batch, 64]", "shape: [batch, 65]").replace(
        "file: data/digits.npz", f"file: {ROOT / 'specs' / 'data' / 'digits.npz'}"))
    result = cli("train", spec, "--epochs", 1, "--out-dir", tmp_path / "o")
    assert result.exit_code == 65, result.stderr
    assert "error: data input 'x': digits.npz gives an array of shape [1797, 64], but the " \
        "spec declares shape [batch, 65]" in result.stderr


# ------------------------------------------------------------------ messages

def test_a_missing_data_file_is_located_at_its_name_and_exits_66(folder):
    (folder / "four.yaml").write_text(SPEC.replace("file: four.csv", "file: nope.csv"))
    result = cli("train", folder / "four.yaml", "--out-dir", folder / "o")
    assert result.exit_code == 66
    assert f"four.yaml:5:9: error: data file not found: {folder / 'nope.csv'}" in result.stderr
    assert "file: nope.csv\n" in result.stderr and "^~~~~~~~" in result.stderr
    (folder / "four.yaml").write_text(SPEC.replace("train:", "validation: {file: gone.csv}\n"
                                                   "train:"))
    result = cli("train", folder / "four.yaml", "--out-dir", folder / "o")
    assert result.exit_code == 66
    assert "four.yaml:8:20: error: data file not found: " in result.stderr
    assert "Traceback" not in result.stderr


def test_float_labels_for_a_classification_loss_are_refused_before_training(folder):
    spec = folder / "four.yaml"
    spec.write_text(SPEC.replace("t: {column: label, dtype: int32}", "t: {column: label}"))
    result = cli("train", spec, "--out-dir", folder / "o")
    assert result.exit_code == 65, result.stderr
    assert "four.yaml:7:6: error: input 't': softmax_cross_entropy takes integer class " \
        "labels, but the data gives float32 values (add dtype: int32 to the input)" in \
        result.stderr
    assert not (folder / "o").exists()
    np.savez(folder / "p.npz", **{"l1/W": np.zeros((2, 4), np.float32),
                                  "l1/b": np.zeros(2, np.float32)})
    evaluated = cli("evaluate", spec, "--params", folder / "p.npz")
    assert evaluated.exit_code == 65 and "add dtype: int32" in evaluated.stderr
    (folder / "four.csv").write_text((folder / "four.csv").read_text().replace(",1\n",
                                                                               ",0.5\n", 1))
    result = cli("train", spec, "--out-dir", folder / "o")
    assert result.exit_code == 65
    assert "gives float32 values that are not integers" in result.stderr
    assert "add dtype" not in result.stderr


# ------------------------------------------------------------------ predict

def test_csv_on_stdin_selects_columns_by_its_header_as_a_file_does(folder):
    params = trained(folder)
    new = folder / "new.csv"
    write_four(new, n=6, seed=3, order="label,d,b,a,c")  # other order, an extra column
    from_file = cli("predict", folder / "four.yaml", "--params", params, "--input", f"x={new}",
                    "-o", "-")
    assert from_file.exit_code == 0, from_file.stderr
    piped = cli("predict", folder / "four.yaml", "--params", params, "--input", "x=-", "-o",
                "-", input=new.read_bytes())
    assert piped.exit_code == 0, piped.stderr
    assert piped.stdout == from_file.stdout and len(piped.stdout.splitlines()) == 7
    missing = cli("predict", folder / "four.yaml", "--params", params, "--input", "x=-",
                  "-o", "-", input=b"a,b,c\n1,2,3\n")
    assert missing.exit_code == 65
    assert "data input 'x': stdin has no column 'd' (its columns: a, b, c)" in missing.stderr
    empty = cli("predict", folder / "four.yaml", "--params", params, "--input", "x=-", "-o",
                "-", input=b"")
    assert empty.exit_code == 65
    assert "stdin:1:1: error: stdin is empty (a CSV needs a header line)" in empty.stderr
    np.save(folder / "rows.npy", np.ones((2, 4), np.float32))
    npy = cli("predict", folder / "four.yaml", "--params", params, "--input", "x=-", "-o",
              "-", input=(folder / "rows.npy").read_bytes())
    assert npy.exit_code == 0 and len(npy.stdout.splitlines()) == 3


def test_predictions_print_the_shortest_text_of_their_own_dtype(folder):
    params = trained(folder)
    printed = cli("predict", folder / "four.yaml", "--params", params, "-o", "-",
                  "--outputs", "raw")
    assert printed.exit_code == 0, printed.stderr
    saved = cli("predict", folder / "four.yaml", "--params", params, "-o", folder / "preds.npz")
    assert saved.exit_code == 0, saved.stderr
    with np.load(folder / "preds.npz") as arrays:
        logits = arrays["logits"]
    assert logits.dtype == np.float32
    lines = printed.stdout.splitlines()
    fields = [line.split(",") for line in lines[1:]]
    assert fields == [[str(v) for v in row] for row in logits]  # numpy's shortest float32
    assert np.array_equal(np.array(fields, dtype=np.float32), logits)  # and it reads back
    assert max(len(f) for row in fields for f in row) <= 15  # not float64's 17 digits
    written = (folder / "o" / "p.csv")
    again = cli("predict", folder / "four.yaml", "--params", params, "-o", written,
                "--outputs", "raw")
    assert again.exit_code == 0 and written.read_text() == printed.stdout


def test_predict_refuses_parameters_that_do_not_fit_the_spec(folder):
    params = trained(folder)
    with np.load(params) as arrays:
        bad = dict(arrays)
    bad["l1/W"] = np.zeros((7, 4), np.float32)
    np.savez(folder / "bad.npz", **bad)
    for command in ("predict", "evaluate"):
        result = cli(command, folder / "four.yaml", "--params", folder / "bad.npz", "-o", "-") \
            if command == "predict" else cli(command, folder / "four.yaml", "--params",
                                             folder / "bad.npz")
        assert result.exit_code == 65, result.stderr
        assert "l1/W has shape (7, 4) in the file, but the spec declares (2, any)" in \
            result.stderr, command
        assert result.stdout == ""
    nobias = """graphtool: 1
name: rows
inputs:
  x: {file: x.npy, shape: [rows, 2]}
graph:
  - {op: linear, out_size: 3, name: l1, nobias: true}
outputs: [_]
"""
    (folder / "rows.yaml").write_text(nobias)
    np.save(folder / "x.npy", np.ones((4, 2), np.float32))
    np.savez(folder / "w7.npz", **{"l1/W": np.ones((7, 2), np.float32)})
    result = cli("predict", folder / "rows.yaml", "--params", folder / "w7.npz", "-o", "-")
    assert result.exit_code == 65 and "l1/W has shape (7, 2)" in result.stderr
    assert result.stdout == ""
    ran = cli("run", folder / "rows.yaml", "--params", folder / "w7.npz")
    assert ran.exit_code == 65  # the same refusal as run's
    np.savez(folder / "w3.npz", **{"l1/W": np.ones((3, 2), np.float32)})
    np.save(folder / "flat.npy", np.ones(2, np.float32))
    flat = cli("predict", folder / "rows.yaml", "--params", folder / "w3.npz", "--input",
               f"x={folder / 'flat.npy'}", "-o", "-")
    assert flat.exit_code == 65, flat.stdout
    assert "--input:1:1: error: input 'x': " in flat.stderr
    assert "holds an array of shape [2], but the spec declares shape [rows, 2]" in flat.stderr


def test_a_checkpoint_still_loads_as_predict_parameters(folder):
    trained(folder)
    result = cli("predict", folder / "four.yaml", "--params",
                 folder / "o" / "four" / "runs" / "1" / "checkpoint.npz", "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert len(result.stdout.splitlines()) == 25


def test_bench_batch_sizes_still_cut_a_data_input_with_a_declared_shape(folder):
    """bench --batch asks for the data's first rows; the shape check leaves the leading axis
    (the rows) free, so it never refuses them."""
    result = cli("bench", folder / "four.yaml", "--batch", "3,30", "--repeat", 1, "--warmup", 0,
                 "--modes", "dynamic", "--json", "--out-dir", folder / "o")
    assert result.exit_code == 0, result.stderr
    assert "declares shape" not in result.stderr
    (folder / "four.yaml").write_text(SPEC.replace(", shape: [batch, 4]", ""))
    undeclared = cli("bench", folder / "four.yaml", "--batch", "3", "--repeat", 1, "--warmup",
                     0, "--modes", "dynamic", "--json", "--out-dir", folder / "o")
    assert undeclared.exit_code == 0, undeclared.stderr
