"""What `graphtool predict` writes for a classifier: the predicted class and each class's
probability beside the raw logits (`--outputs` chooses), columns of the data file passed
through (`--keep`), and a regressor's outputs under their own names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.app import app

runner = CliRunner()

FLOWERS = """graphtool: 1
name: flowers
seed: 0
data:
  file: flowers.csv
  x: {columns: [a, b, c, d], shape: [batch, 4]}
  species: {column: species, dtype: int32}
train: {epochs: 3, batch_size: 8, optimizer: {name: adam, alpha: 0.05}}
graph:
  - {op: linear, out_size: 8, from: x, name: hidden}
  - tanh
  - {op: linear, out_size: 3, name: out, to: logits}
loss: {op: softmax_cross_entropy, from: [logits, species]}
outputs: [logits]
"""


def cli(*args, input=None):
    return runner.invoke(app, [str(a) for a in args], input=input)


def write_flowers(path: Path, n: int = 30, seed: int = 0) -> None:
    """Three classes of 4 features, an id column the spec never reads."""
    rng = np.random.RandomState(seed)
    species = np.arange(n) % 3
    x = rng.randn(n, 4) + species[:, None]
    lines = ["id,a,b,c,d,species"] + [
        f"f{i:03d}," + ",".join(f"{v:.4f}" for v in x[i]) + f",{species[i]}" for i in range(n)]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def flowers(tmp_path):
    write_flowers(tmp_path / "flowers.csv")
    spec = tmp_path / "flowers.yaml"
    spec.write_text(FLOWERS)
    trained = cli("train", spec, "--out-dir", tmp_path / "out", "--save", tmp_path / "p.npz",
                  "-q")
    assert trained.exit_code == 0, trained.stderr
    return spec, tmp_path / "p.npz"


def table(text: str) -> tuple[list[str], list[list[str]]]:
    lines = text.splitlines()
    return lines[0].split(","), [line.split(",") for line in lines[1:]]


def column(header, rows, name):
    return [row[header.index(name)] for row in rows]


def softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_a_classifier_predicts_the_class_and_the_probabilities_of_its_logits(flowers):
    spec, params = flowers
    result = cli("predict", spec, "--params", params, "-o", "-")
    assert result.exit_code == 0, result.stderr
    header, rows = table(result.stdout)
    assert header == ["species_predictions", "species_probability",
                      "species_probabilities_0", "species_probabilities_1",
                      "species_probabilities_2", "logits_0", "logits_1", "logits_2"]
    assert len(rows) == 30
    logits = np.array([column(header, rows, f"logits_{k}") for k in range(3)],
                      dtype=np.float32).T
    texts = [column(header, rows, f"species_probabilities_{k}") for k in range(3)]
    probabilities = np.array(texts, dtype=np.float32).T
    np.testing.assert_allclose(probabilities, softmax(logits), rtol=2e-6, atol=1e-7)
    assert [int(v) for v in column(header, rows, "species_predictions")] == \
        list(np.argmax(softmax(logits), axis=1))
    assert np.array_equal(np.array(column(header, rows, "species_probability"),
                                   dtype=np.float32), probabilities.max(axis=1))
    # float32 values in their shortest text that reads back as float32
    assert all(str(np.float32(t)) == t for values in texts for t in values)
    labels = np.arange(30) % 3
    assert np.mean(np.argmax(logits, axis=1) == labels) > 0.6  # it learnt something

    saved = cli("predict", spec, "--params", params, "-o", spec.parent / "p.npz", "-q")
    assert saved.exit_code == 0, saved.stderr
    with np.load(spec.parent / "p.npz") as arrays:
        assert sorted(arrays.files) == ["logits", "species_predictions", "species_probabilities",
                                        "species_probability"]
        assert arrays["species_probabilities"].shape == (30, 3)
        assert arrays["species_probabilities"].dtype == np.float32
        np.testing.assert_allclose(arrays["species_probabilities"], softmax(arrays["logits"]),
                                   rtol=2e-6, atol=1e-7)
        assert np.array_equal(arrays["species_predictions"],
                              np.argmax(arrays["logits"], axis=1))
        assert np.array_equal(arrays["logits"], logits)


def test_outputs_chooses_the_columns_in_one_order(flowers):
    spec, params = flowers
    cases = {"class": ["species_predictions"],
             "raw": ["logits_0", "logits_1", "logits_2"],
             "raw,probability,class": ["species_predictions", "species_probability",
                                       "logits_0", "logits_1", "logits_2"],
             "probabilities": [f"species_probabilities_{k}" for k in range(3)]}
    for given, want in cases.items():
        result = cli("predict", spec, "--params", params, "-o", "-", "--outputs", given)
        assert result.exit_code == 0, (given, result.stderr)
        assert table(result.stdout)[0] == want, given
    wrong = cli("predict", spec, "--params", params, "-o", "-", "--outputs", "class,probs")
    assert wrong.exit_code == 2 and wrong.stdout == ""
    assert "--outputs class,probs: unknown 'probs'; choose from class, probability, " \
        "probabilities, raw" in wrong.stderr


def test_keep_passes_an_id_column_through_row_by_row(flowers, tmp_path):
    spec, params = flowers
    from_data = cli("predict", spec, "--params", params, "-o", "-", "--keep", "id",
                    "--outputs", "class")
    assert from_data.exit_code == 0, from_data.stderr
    header, rows = table(from_data.stdout)
    assert header == ["id", "species_predictions"]
    assert [r[0] for r in rows] == [f"f{i:03d}" for i in range(30)]

    new = tmp_path / "new.csv"  # new rows: another order of columns, no label
    write_flowers(new, n=7, seed=5)
    text = new.read_text().splitlines()
    new.write_text("\n".join(",".join(line.split(",")[:5][::-1]) for line in text) + "\n")
    args = ("predict", spec, "--params", params, "-o", "-", "--keep", "id", "--outputs",
            "class,raw")
    from_file = cli(*args, "--input", f"x={new}")
    assert from_file.exit_code == 0, from_file.stderr
    header, rows = table(from_file.stdout)
    assert header[:2] == ["id", "species_predictions"]
    assert [r[0] for r in rows] == [f"f{i:03d}" for i in range(7)]
    piped = cli(*args, "--input", "x=-", input=new.read_bytes())
    assert piped.exit_code == 0, piped.stderr
    assert piped.stdout == from_file.stdout

    saved = cli("predict", spec, "--params", params, "--keep", "id", "--input", f"x={new}",
                "-o", tmp_path / "kept.npz", "-q")
    assert saved.exit_code == 0, saved.stderr
    with np.load(tmp_path / "kept.npz") as arrays:
        assert list(arrays["id"]) == [f"f{i:03d}" for i in range(7)]

    missing = cli("predict", spec, "--params", params, "-o", "-", "--keep", "ident")
    assert missing.exit_code == 2 and missing.stdout == ""
    assert "--keep ident: flowers.csv has no column 'ident' (its columns: id, a, b, c, d, " \
        "species)" in missing.stderr


SIGMOID = """graphtool: 1
name: binary
seed: 0
data:
  file: binary.csv
  x: {columns: [a, b], shape: [batch, 2]}
  t: {columns: [label], dtype: int32, shape: [batch, 1]}
train: {epochs: 2, batch_size: 8}
graph:
  - {op: linear, out_size: 4, from: x, name: hidden}
  - relu
  - {op: linear, out_size: 1, name: out, to: score}
  - {op: scale, by: 1.0, to: hidden_score}
loss: {op: sigmoid_cross_entropy, from: [score, t]}
outputs: [hidden_score]
"""


def test_a_sigmoid_loss_predicts_class_one_with_the_sigmoid_of_its_logit(tmp_path):
    rng = np.random.RandomState(1)
    x = rng.randn(20, 2)
    lines = ["a,b,label"] + [f"{a:.4f},{b:.4f},{int(a > 0)}" for a, b in x]
    (tmp_path / "binary.csv").write_text("\n".join(lines) + "\n")
    spec = tmp_path / "binary.yaml"
    spec.write_text(SIGMOID)
    trained = cli("train", spec, "--out-dir", tmp_path / "out", "--save", tmp_path / "p.npz",
                  "-q")
    assert trained.exit_code == 0, trained.stderr
    result = cli("predict", spec, "--params", tmp_path / "p.npz", "-o", "-")
    assert result.exit_code == 0, result.stderr
    header, rows = table(result.stdout)
    # the logits (score) are no declared output: computed for the class all the same
    assert header == ["t_predictions", "t_probability", "t_probabilities_0",
                      "t_probabilities_1", "hidden_score"]
    score = np.array(column(header, rows, "hidden_score"), dtype=np.float32)
    one = np.array(column(header, rows, "t_probabilities_1"), dtype=np.float32)
    zero = np.array(column(header, rows, "t_probabilities_0"), dtype=np.float32)
    np.testing.assert_allclose(one, 1 / (1 + np.exp(-score.astype(np.float64))), rtol=2e-6)
    np.testing.assert_allclose(zero, 1 - one, rtol=1e-5, atol=1e-7)
    assert [int(v) for v in column(header, rows, "t_predictions")] == list((score > 0) * 1)


REGRESSION = """graphtool: 1
name: line
seed: 0
data:
  file: line.csv
  x: {columns: [a], shape: [batch, 1]}
  y: {columns: [target], shape: [batch, 1]}
train: {epochs: 1, batch_size: 4}
graph:
  - {op: linear, out_size: 1, from: x, name: fit, to: estimate}
loss: {op: mean_squared_error, from: [estimate, y]}
outputs: [estimate]
"""


def test_a_regressor_keeps_its_output_names_and_refuses_a_class(tmp_path):
    (tmp_path / "line.csv").write_text("a,target\n" + "".join(f"{i},{2 * i}\n"
                                                              for i in range(8)))
    spec = tmp_path / "line.yaml"
    spec.write_text(REGRESSION)
    trained = cli("train", spec, "--out-dir", tmp_path / "out", "--save", tmp_path / "p.npz",
                  "-q")
    assert trained.exit_code == 0, trained.stderr
    result = cli("predict", spec, "--params", tmp_path / "p.npz", "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert table(result.stdout)[0] == ["estimate"]
    refused = cli("predict", spec, "--params", tmp_path / "p.npz", "-o", "-", "--outputs",
                  "class")
    assert refused.exit_code == 2 and refused.stdout == ""
    first = refused.stderr.splitlines()[0]
    assert first.startswith(f"{spec}:11:7: error: --outputs class: spec 'line' has loss "
                            "mean_squared_error"), refused.stderr


def test_class_names_of_the_data_come_back_as_predictions_named_by_class(tmp_path):
    """specs/iris.yaml: species names as labels; predictions name the species, the label
    column passed through beside them (--keep) to compare."""
    spec = Path(__file__).resolve().parents[2] / "specs" / "iris.yaml"
    trained = cli("train", spec, "--out-dir", tmp_path, "--save", tmp_path / "p.npz", "-q")
    assert trained.exit_code == 0, trained.stderr
    result = cli("predict", spec, "--params", tmp_path / "p.npz", "-o", "-", "--keep",
                 "species", "--outputs", "class,probabilities")
    assert result.exit_code == 0, result.stderr
    header, rows = table(result.stdout)
    names = ["setosa", "versicolor", "virginica"]
    assert header == ["species", "species_predictions",
                      *(f"species_probabilities_{n}" for n in names)]
    predicted = column(header, rows, "species_predictions")
    assert set(predicted) <= set(names) and len(rows) == 150
    assert np.mean([p == t for p, t in zip(predicted, column(header, rows, "species"),
                                             strict=True)]) > 0.9
    probabilities = np.array([[float(v) for v in row[2:]] for row in rows])
    assert [names[k] for k in probabilities.argmax(axis=1)] == predicted
    saved = cli("predict", spec, "--params", tmp_path / "p.npz", "-o", tmp_path / "p2.npz",
                "-q")
    assert saved.exit_code == 0, saved.stderr
    with np.load(tmp_path / "p2.npz") as arrays:
        assert list(arrays["species_predictions"]) == predicted
