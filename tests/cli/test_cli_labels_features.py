"""Labels and features as they come: a label column of class names (iris' species) is encoded
with a vocabulary fitted on the training rows, saved with the parameters and decoded by
predict; ``encode: category`` turns any column of names or codes into class indices;
``normalize: standard | minmax`` fits its statistics on the training rows alone, saves them in
every parameters file and applies them in evaluate, predict, run and the ONNX export."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import invoke as cli
from cli_helpers import invoke_json, invoke_ok

from graphcore.commands.train.data import load_spec_data
from graphcore.interpreter.params_file import load_params
from graphcore.interpreter.preprocessing import class_names
from graphcore.language.loader import load_spec_file
from graphcore.spec import build_model

ROOT = Path(__file__).resolve().parents[2]
IRIS = ROOT / "specs" / "data" / "iris.csv"
FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]

SPEC = """graphtool: 1
name: flowers
seed: 0
data:
  file: iris.csv
  x: {columns: [sepal_length, sepal_width, petal_length, petal_width], normalize: standard}
  species: {column: species}
validation: 0.2
train: {epochs: 25, batch_size: 16, optimizer: {name: adam, alpha: 0.05}, metrics: [accuracy]}
graph:
  - {op: linear, out_size: 3, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, species]}
outputs: [logits]
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copy(IRIS, tmp_path / "iris.csv")
    (tmp_path / "flowers.yaml").write_text(SPEC)
    return tmp_path


def _train(folder: Path, spec: str = "flowers.yaml", *extra) -> Path:
    saved = folder / "params.npz"
    invoke_ok("train", folder / spec, "--out-dir", folder / "out", "--save", saved, "-q",
              *extra)
    return saved


def _iris_rows() -> list[dict[str, str]]:
    with IRIS.open() as f:
        return list(csv.DictReader(f))


def test_string_labels_round_trip_to_predict(folder):
    saved = _train(folder)
    with np.load(saved, allow_pickle=False) as npz:
        assert npz["_preprocessing/species/classes"].tolist() == \
            ["setosa", "versicolor", "virginica"]
    result = invoke_ok("predict", folder / "flowers.yaml", "--params", saved, "-o", "-")
    table = list(csv.DictReader(io.StringIO(result.stdout)))
    truth = [row["species"] for row in _iris_rows()]
    assert len(table) == 150
    predicted = [row["species_predictions"] for row in table]
    assert set(predicted) <= {"setosa", "versicolor", "virginica"}
    assert np.mean(np.array(predicted) == np.array(truth)) > 0.9


def test_normalization_statistics_come_from_the_training_rows_only(folder):
    # the validation rows are shifted far away: with them the statistics would differ
    spec = load_spec_file(str(folder / "flowers.yaml"))
    data = load_spec_data(spec, 0)
    rows = _iris_rows()
    features = np.array([[float(r[k]) for k in FEATURES] for r in rows])
    for i in data.validation_index:
        rows[i].update({k: str(float(rows[i][k]) + 100) for k in FEATURES})
    with (folder / "iris.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, [*FEATURES, "species"])
        writer.writeheader()
        writer.writerows(rows)
    saved = _train(folder)
    train = features[data.train_index]
    with np.load(saved, allow_pickle=False) as npz:
        shift, scale = npz["_preprocessing/x/shift"], npz["_preprocessing/x/scale"]
    np.testing.assert_allclose(shift, train.mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(scale, train.std(axis=0), rtol=1e-6)
    every_row = np.array([[float(r[k]) for k in FEATURES] for r in rows])
    assert np.all(np.abs(every_row.mean(axis=0) - shift) > 10)


def test_best_and_checkpoint_hold_the_state_and_evaluate_agrees_with_train(folder):
    doc = invoke_json("train", folder / "flowers.yaml", "--out-dir", folder / "out", "--json")
    run = folder / "out" / "flowers"
    last = doc["log"][-1]
    for name in ("best.npz", "checkpoint.npz"):
        found = next(run.rglob(name))
        with np.load(found, allow_pickle=False) as npz:
            assert any(k.endswith("_preprocessing/x/shift") for k in npz.files), name
            assert any(k.endswith("_preprocessing/species/classes") for k in npz.files), name
    checkpoint = next(run.rglob("checkpoint.npz"))
    result = invoke_json("evaluate", folder / "flowers.yaml", "--params", checkpoint, "--json")
    assert result["rows"] == 30
    assert result["loss"] == pytest.approx(last["validation_loss"], rel=1e-5)
    assert result["accuracy"] == pytest.approx(last["validation_accuracy"])


def test_evaluate_on_string_labelled_data(folder):
    saved = _train(folder)
    (folder / "few.csv").write_text(
        "sepal_length,sepal_width,petal_length,petal_width,species\n"
        "5.1,3.5,1.4,0.2,setosa\n7.0,3.2,4.7,1.4,versicolor\n6.3,3.3,6.0,2.5,virginica\n"
        "4.9,3.0,1.4,0.2,setosa\n")
    result = invoke_json("evaluate", folder / "flowers.yaml", "--params", saved, "--data",
                         folder / "few.csv", "--json")
    assert (result["data"], result["rows"]) == ("all", 4)
    assert result["accuracy"] == 1.0


def test_an_unknown_label_is_an_error_at_its_row(folder):
    saved = _train(folder)
    (folder / "typo.csv").write_text(
        "sepal_length,sepal_width,petal_length,petal_width,species\n"
        "5.1,3.5,1.4,0.2,setosa\n\n4.9,3.0,1.4,0.2,  setosaa\n")
    result = cli("evaluate", folder / "flowers.yaml", "--params", saved, "--data",
                 folder / "typo.csv")
    assert result.exit_code == 65, result.stderr
    assert f"{folder / 'typo.csv'}:4:17: error: input 'species': class 'setosaa' is not one " \
        "of the 3 classes the parameters were trained on (setosa, versicolor, virginica)" \
        in result.stderr
    assert "did you mean 'setosa'?" in result.stderr


def test_a_validation_file_with_a_class_the_training_rows_lack_is_located(folder):
    spec = SPEC.replace("validation: 0.2", "validation: {file: held_out.jsonl}")
    (folder / "file_split.yaml").write_text(spec)
    lines = ['{"sepal_length": 5.0, "sepal_width": 3.4, "petal_length": 1.5, '
             '"petal_width": 0.2, "species": "setosa"}',
             '{"sepal_length": 5.0, "sepal_width": 3.4, "petal_length": 1.5, '
             '"petal_width": 0.2, "species": "iris-nova"}']
    (folder / "held_out.jsonl").write_text("\n".join(lines) + "\n")
    result = cli("train", folder / "file_split.yaml", "--out-dir", folder / "out")
    assert result.exit_code == 65, result.stderr
    assert "held_out.jsonl:2:95: error" in result.stderr
    assert "class 'iris-nova' is not one of the 3 classes the training rows hold" \
        in result.stderr


def test_onnx_runtime_on_raw_features_equals_predict(folder):
    ort = pytest.importorskip("onnxruntime")
    saved = _train(folder)
    model = folder / "flowers.onnx"
    invoke_ok("export", folder / "flowers.yaml", "--params", saved, "-o", model, "-q")
    import onnx  # noqa: PLC0415  (optional, as the export is)

    ops = [node.op_type for node in onnx.load(str(model)).graph.node]
    assert ops[:2] == ["Sub", "Div"]
    predictions = folder / "preds.npz"
    invoke_ok("predict", folder / "flowers.yaml", "--params", saved, "-o", predictions, "-q")
    raw = np.array([[float(r[k]) for k in FEATURES] for r in _iris_rows()], dtype=np.float32)
    session = ort.InferenceSession(str(model))
    (got,) = session.run(None, {"x": raw})
    with np.load(predictions, allow_pickle=False) as npz:
        np.testing.assert_allclose(got, npz["logits"], rtol=1e-6, atol=1e-6)


def test_run_eval_with_params_normalizes_in_both_modes(folder):
    saved = _train(folder)
    losses = [invoke_json("run", folder / "flowers.yaml", "--params", saved, "--eval",
                          "--mode", mode, "--json", "--out-dir", folder / "out")["loss"]
              for mode in ("dynamic", "static")]
    evaluated = invoke_json("evaluate", folder / "flowers.yaml", "--params", saved,
                            "--data", folder / "iris.csv", "--json")["loss"]
    assert losses[0] == pytest.approx(losses[1], rel=1e-6)
    assert losses[0] == pytest.approx(evaluated, rel=1e-5)


def test_params_without_the_statistics_are_refused(folder):
    plain = SPEC.replace(", normalize: standard", "")
    (folder / "plain.yaml").write_text(plain)
    saved = _train(folder, "plain.yaml")
    result = cli("evaluate", folder / "flowers.yaml", "--params", saved)
    assert result.exit_code != 0
    assert "the normalize statistics of input 'x'" in result.stderr
    assert "train the spec again" in result.stderr


CODES = """graphtool: 1
name: codes
data:
  file: codes.csv
  x: {columns: [f], normalize: minmax}
  t: {column: kind, encode: category}
train: {epochs: 60, batch_size: 8, optimizer: {name: adam, alpha: 0.1}}
graph:
  - {op: linear, out_size: 3}
loss: {op: softmax_cross_entropy, from: [_, t]}
outputs: [_]
"""


def _trained_model(spec_path: Path, params: Path):
    spec = load_spec_file(str(spec_path))
    model = build_model(spec)
    load_params(params, model)
    return model


def test_category_codes_become_class_indices_by_value_and_predict_writes_them(tmp_path):
    rows = [(f, code) for f, code in ((1.0, 7), (2.0, 3), (3.0, 10))] * 8
    (tmp_path / "codes.csv").write_text(
        "f,kind\n" + "".join(f"{f},{code}\n" for f, code in rows))
    (tmp_path / "codes.yaml").write_text(CODES)
    saved = tmp_path / "p.npz"
    invoke_ok("train", tmp_path / "codes.yaml", "--out-dir", tmp_path / "out", "--save",
              saved, "-q")
    with np.load(saved, allow_pickle=False) as npz:
        assert npz["_preprocessing/t/classes"].tolist() == ["3", "7", "10"]  # by value
        assert npz["_preprocessing/x/shift"].tolist() == [1.0]  # min
        assert npz["_preprocessing/x/scale"].tolist() == [2.0]  # max - min
    assert class_names(_trained_model(tmp_path / "codes.yaml", saved)) == ("3", "7", "10")
    table = invoke_ok("predict", tmp_path / "codes.yaml", "--params", saved, "-o", "-").stdout
    predicted = [r["t_predictions"] for r in csv.DictReader(io.StringIO(table))]
    assert predicted[:3] == ["7", "3", "10"]


def test_a_column_of_names_not_declared_is_refused_with_the_key_to_add(folder):
    spec = SPEC.replace("species: {column: species}", "species: {column: species}\n"
                        "  kind: {column: species}")
    (folder / "extra.yaml").write_text(spec)
    result = cli("run", folder / "extra.yaml")
    assert result.exit_code == 65
    assert "iris.csv:2:17: error: column 'species' holds 'setosa', not a number" \
        in result.stderr
    assert "add encode: category to data input 'kind'" in result.stderr


def test_a_constant_feature_is_shifted_not_scaled(tmp_path):
    (tmp_path / "codes.csv").write_text("f,kind\n" + "".join(
        f"5.0,{k}\n" for k in (1, 2, 1, 2, 1, 2, 1, 2)))
    (tmp_path / "codes.yaml").write_text(CODES.replace("minmax", "standard"))
    saved = tmp_path / "p.npz"
    invoke_ok("train", tmp_path / "codes.yaml", "--out-dir", tmp_path / "out", "--save",
              saved, "-q", "--epochs", "1")
    with np.load(saved, allow_pickle=False) as npz:
        assert npz["_preprocessing/x/shift"].tolist() == [5.0]
        assert npz["_preprocessing/x/scale"].tolist() == [1.0]


@pytest.mark.parametrize("key, message", [
    ("x: {columns: [f], encode: category}",
     "encode: category reads one column of class names or codes"),
    ("x: {columns: [f], normalize: zscore}", "normalize must be one of standard, minmax"),
    ("x: {columns: [f], normalize: standard, dtype: int32}",
     "normalize gives real values, so its dtype is a float dtype"),
    ("x: {columns: [f]}\n  t: {column: kind, normalize: standard}",
     "data input 't' holds the labels of softmax_cross_entropy; normalize applies to "
     "features"),
])
def test_preprocessing_keys_are_checked_where_they_are_written(tmp_path, key, message):
    spec = CODES.replace("x: {columns: [f], normalize: minmax}\n  t: {column: kind, "
                         "encode: category}", key)
    if "t:" not in key:
        spec = spec.replace("  x:", "  t: {column: kind, dtype: int32}\n  x:")
    (tmp_path / "codes.yaml").write_text(spec)
    result = cli("check", tmp_path / "codes.yaml")
    assert result.exit_code == 65, result.stderr
    assert "codes.yaml:" in result.stderr and message in result.stderr


COLORS = """graphtool: 1
name: colors
data:
  file: colors.csv
  color: {column: color, encode: category}
  t: {column: label, dtype: int32}
train: {epochs: 40, batch_size: 6, optimizer: {name: adam, alpha: 0.1}}
graph:
  - {op: embed_id, from: color, in_size: 3, out_size: 2, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, t]}
outputs: [logits]
"""


def test_a_feature_of_class_names_is_encoded_in_predict_and_an_unknown_one_located(tmp_path):
    (tmp_path / "colors.csv").write_text("color,label\n" + "red,1\nblue,0\ngreen,1\n" * 4)
    (tmp_path / "colors.yaml").write_text(COLORS)
    saved = tmp_path / "p.npz"
    invoke_ok("train", tmp_path / "colors.yaml", "--out-dir", tmp_path / "out", "--save",
              saved, "-q")
    with np.load(saved, allow_pickle=False) as npz:
        assert npz["_preprocessing/color/classes"].tolist() == ["blue", "green", "red"]
    (tmp_path / "new.csv").write_text("color\nred\nblue\n")
    table = invoke_ok("predict", tmp_path / "colors.yaml", "--params", saved, "--input",
                      f"color={tmp_path / 'new.csv'}", "-o", "-").stdout
    assert len(list(csv.DictReader(io.StringIO(table)))) == 2
    (tmp_path / "odd.csv").write_text("color\nred\npurple\n")
    result = cli("predict", tmp_path / "colors.yaml", "--params", saved, "--input",
                 f"color={tmp_path / 'odd.csv'}", "-o", "-")
    assert result.exit_code == 65, result.stderr
    assert "odd.csv:3:1: error: input 'color': class 'purple' is not one of the 3 classes " \
        "the parameters were trained on (blue, green, red)" in result.stderr
