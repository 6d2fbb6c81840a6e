"""The product matrix: every command over one spec of each family, in both modes where the
command takes a mode. ``graphcore.commands.support`` says which cells are supported; a
supported cell must succeed and write what it says (files that parse, outputs of the right
shapes and values, ONNX Runtime giving run's outputs), a refused cell must refuse as the table
says (its exit code, one located ``file:line:col: error:`` line with the table's message,
nothing written).

Cells that fail because of a seam being fixed elsewhere are ``xfail(strict=True)`` with the
seam named (``SEAMS``): when the fix lands, the cell passes and the mark must go.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest
from matrix_helpers import FAMILY_SPECS, ROWS_TAKEN, STATE, read_csv, read_npz, spec_path

from graphcore.commands.support import COMMANDS, FAMILIES, refusal
from graphcore.commands.train.predictions import classification_head
from graphcore.commands.viz.diff import FIRST_COLOUR, SECOND_COLOUR, SHARED_COLOUR, parse_dot

MODES = ("dynamic", "static")
LOCATED = re.compile(r"^\S+:\d+:\d+: error: ")
# Cells that take long (a local Dask cluster, a page of drawings, finite differences over a
# convolution or 1,797 rows): `pytest -m "not slow"` leaves them out.
SLOW = {
    ("*", "sweep"), ("*", "report"),
    ("data_npz", "check"), ("convolution", "check"), ("convolution", "bench"),
    ("lstm", "check"),
}
# Cells failing because of a known seam: {(family, command): "the seam: what happens"}; a cell
# listed here is xfail(strict=True), so it fails once the seam is fixed and the entry must go.
SEAMS: dict[tuple[str, str], str] = {}


def _cells():
    for fam in FAMILIES:
        for cmd in COMMANDS:
            for mode in (MODES if cmd.modes else (None,)):
                marks = []
                if (fam.name, cmd.name) in SLOW or ("*", cmd.name) in SLOW:
                    marks.append(pytest.mark.slow)
                seam = SEAMS.get((fam.name, cmd.name))
                if seam is not None:
                    marks.append(pytest.mark.xfail(strict=True, reason=seam))
                ident = "-".join(filter(None, (fam.name, cmd.name.replace(" ", "_"), mode)))
                yield pytest.param(fam.name, cmd.name, mode, id=ident, marks=marks)


@pytest.mark.parametrize(("family", "command", "mode"), list(_cells()))
def test_cell(matrix, family, command, mode, tmp_path):
    refused = refusal(family, command)
    cell = CELLS[command]
    if refused is None:
        cell(matrix, family, mode, tmp_path)
        return
    result = cell(matrix, family, mode, tmp_path, refused=True)
    assert result.exit_code == refused.code, (result.exit_code, result.stderr)
    assert_one_located_error(result.stderr, refused.message, spec_path(family))
    assert result.stdout == ""
    assert not any(p.is_file() for p in tmp_path.rglob("*")), "a refused command wrote a file"


def assert_one_located_error(stderr: str, message: str, spec) -> None:
    """One ``file:line:col: error: ...`` line in ``spec`` holding ``message`` (then, at most,
    the source line and a caret under the position), no traceback."""
    lines = stderr.rstrip("\n").splitlines()
    assert lines and LOCATED.match(lines[0]) and lines[0].startswith(f"{spec}:"), stderr
    assert message in lines[0], stderr
    assert len(lines) in (1, 3), stderr
    if len(lines) == 3:
        assert set(lines[2].strip()) <= {"^", "~"}, stderr
    assert "Traceback" not in stderr


def ok(result) -> None:
    assert result.exit_code == 0, (result.exit_code, result.stderr[-2000:])
    assert "Traceback" not in result.stderr


def assert_close(got, want, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if want.dtype.kind == "U":  # class names
        np.testing.assert_array_equal(got.astype(str), want, err_msg=what)
        return
    if got.dtype.kind == "U":  # a CSV column of numbers beside columns of names
        got = got.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)


def last(expected):
    """The outputs `run` reports: a per-example spec's last example's."""
    return expected[-1] if isinstance(expected, list) else expected


# --- run, run --eval ------------------------------------------------------------------------

def cell_run(matrix, family, mode, tmp_path):
    done = matrix.shipped.run(spec_path(family), mode)  # the session's run, read-only
    result, arrays, out = done.result, done.arrays, done.out_dir
    ok(result)
    doc = json.loads(result.stdout)
    assert {"schema_version", "spec", "seed", "mode", "loss", "outputs", "grads", "path",
            "timing_ms"} <= set(doc)
    assert doc["mode"] == mode and doc["spec"] == matrix.spec(family).name
    want = FAMILY_SPECS[family].outputs
    assert {k: tuple(v["shape"]) for k, v in doc["outputs"].items()} == want
    assert math.isfinite(doc["loss"])
    params = matrix.param_shapes(family)
    assert set(doc["grads"]) == set(params)
    saved = read_npz(arrays)
    assert set(saved) == {*want, "loss", *(f"grad/{k}" for k in params)}
    assert all(saved[k].shape == shape for k, shape in want.items())
    assert all(saved[f"grad/{k}"].shape == shape for k, shape in params.items())
    folder = out / doc["spec"]
    assert json.loads((folder / "run.json").read_text())["loss"] == doc["loss"]
    if mode == "static":
        assert "%" in (folder / "ir.txt").read_text()
        assert "%" in (folder / "ir.optimized.txt").read_text()
        dynamic = matrix.shipped.run(spec_path(family), "dynamic").result
        ok(dynamic)
        assert doc["loss"] == pytest.approx(json.loads(dynamic.stdout)["loss"], rel=1e-5,
                                            abs=1e-6)


def cell_run_eval(matrix, family, mode, tmp_path):
    arrays = tmp_path / "arrays.npz"
    result = matrix.cli(family, "run", "--eval", "--mode", mode, "--params",
                        matrix.trained(family), "-o", arrays, "--out-dir", tmp_path / "out",
                        "-q")
    ok(result)
    saved = read_npz(arrays)
    for name, want in last(matrix.expected(family)).items():
        assert_close(saved[name], want, name)


# --- train, evaluate ------------------------------------------------------------------------

def cell_train(matrix, family, mode, tmp_path):
    target = tmp_path / "params.npz"
    result = matrix.cli(family, "train", "--steps", 3, "--mode", mode, "--save", target,
                        "--json", "--out-dir", tmp_path / "out", "-q")
    ok(result)
    doc = json.loads(result.stdout)
    assert doc["mode"] == mode and doc["steps"] == 3
    if "losses" in doc:  # a spec without data: a loss per optimizer step
        assert len(doc["losses"]) == 3 and all(math.isfinite(v) for v in doc["losses"])
    else:  # a spec with data: epochs of batches, a log row per finished epoch
        assert doc["step"] == 3 and all(math.isfinite(e["loss"]) for e in doc["log"])
    trained = {k: v for k, v in read_npz(target).items() if not k.startswith(STATE)}
    assert {k: v.shape for k, v in trained.items()} == matrix.param_shapes(family)
    assert all(np.isfinite(v).all() for v in trained.values())
    initial = matrix.initial_params(family)
    assert any(not np.array_equal(trained[k], initial[k]) for k in trained), "nothing trained"
    if mode == "static":
        dynamic = read_npz(matrix.trained(family))
        for key, value in trained.items():  # static steps = define-by-run steps
            np.testing.assert_allclose(value, dynamic[key], rtol=1e-4, atol=1e-6, err_msg=key)


def cell_evaluate(matrix, family, mode, tmp_path, refused=False):
    result = matrix.cli(family, "evaluate", "--params", matrix.trained(family), "--json")
    if refused:
        return result
    ok(result)
    doc = json.loads(result.stdout)
    assert doc["rows"] == FAMILY_SPECS[family].evaluated_rows
    assert math.isfinite(doc["loss"])
    metrics = matrix.spec(family).train.metrics if matrix.spec(family).train else []
    for metric in metrics:
        if metric != "confusion":  # a table
            assert 0.0 <= doc[metric] <= 1.0
    spec = matrix.spec(family)
    if spec.data is not None and spec.loss.op == "softmax_cross_entropy":
        # every row of the data, counted once in the confusion matrix and its picture
        picture = tmp_path / "confusion.png"
        whole = matrix.cli(family, "evaluate", "--params", matrix.trained(family), "--split",
                           "all", "--confusion", picture, "--json")
        ok(whole)
        figures = json.loads(whole.stdout)
        assert figures["data"] == "all" and figures["rows"] >= doc["rows"]
        assert sum(map(sum, figures["confusion"]["matrix"])) == figures["rows"]
        assert picture.read_bytes()[:4] == b"\x89PNG"


# --- predict --------------------------------------------------------------------------------

def expected_rows(matrix, family, taken=None):
    """``{output: (rows, ...)}``: what predict must give for the spec's rows (or examples),
    or for those of ``taken``; a per-example output of varying length as a list."""
    expected = matrix.expected(family)
    if isinstance(expected, list):
        chosen = expected if taken is None else [expected[i] for i in taken]
        out = {}
        for name in chosen[0]:
            arrays = [e[name] for e in chosen]
            same = len({a.shape for a in arrays}) == 1
            # as predict joins them: an example's own batch axis of one is its row
            rows = same and arrays[0].shape[:1] == (1,)
            out[name] = np.concatenate(arrays) if rows else np.stack(arrays) if same else arrays
        return out
    return {k: v if taken is None else v[taken] for k, v in expected.items()}


def expected_classes(spec, want, names=None):
    """``{column: values}`` a classification spec's predictions must hold besides its raw
    outputs (the probabilities: softmax or sigmoid of the logits; the class: their argmax),
    computed here from the logits ``want`` holds; empty for other specs."""
    head = classification_head(spec)
    if head is None or head.logits not in want:
        return {}
    logits = want[head.logits]
    examples = logits if isinstance(logits, list) else [logits]
    probabilities = []
    for z in map(np.asarray, examples):
        z = z.astype(np.float64)
        if head.loss == "softmax_cross_entropy":
            e = np.exp(z - z.max(axis=1, keepdims=True))
            probabilities.append(e / e.sum(axis=1, keepdims=True))
        else:
            p = 1 / (1 + np.exp(-z))
            probabilities.append(np.stack([1 - p, p], axis=1))
    classes = [p.argmax(axis=1) if names is None else np.asarray(names)[p.argmax(axis=1)]
               for p in probabilities]
    top = [p.max(axis=1) for p in probabilities]

    def joined(parts):
        return parts if isinstance(logits, list) else parts[0]

    return {f"{head.label}_predictions": joined(classes),
            f"{head.label}_probability": joined(top),
            f"{head.label}_probabilities": joined(probabilities)}


def assert_predictions_npz(saved, want, spec, names=None):
    derived = expected_classes(spec, want, names)
    for name, value in {**want, **derived}.items():
        if isinstance(value, list):  # lengths differ: one array per example, NAME/k
            assert {k for k in saved if k.startswith(f"{name}/")} == \
                {f"{name}/{i}" for i in range(len(value))}
            for i, array in enumerate(value):
                assert_close(saved[f"{name}/{i}"], array, f"{name}/{i}")
        else:  # one array, a row per example (stacked or its rows concatenated)
            assert name in saved, sorted(saved)
            assert len(saved[name]) == len(value)
            assert_close(saved[name].reshape(len(value), -1), value.reshape(len(value), -1),
                         name)


def assert_predictions_csv(text, want, spec, names=None):
    """The CSV holds the raw outputs (``NAME`` or ``NAME_k``) and, for a classification
    spec, the class and probabilities, and nothing else."""
    header, values = read_csv(text)
    by_name = dict(zip(header, values.T, strict=True))
    expected = {}
    for name, value in want.items():
        flat = value.reshape(len(value), -1)
        columns = [name] if flat.shape[1] == 1 else [f"{name}_{i}" for i in range(flat.shape[1])]
        expected.update(zip(columns, flat.T, strict=True))
    head = classification_head(spec)
    for name, value in expected_classes(spec, want, names).items():
        if name.endswith("_probabilities"):
            moved = np.moveaxis(value, 1, -1)
            positions = int(np.prod(moved.shape[1:-1], dtype=np.int64))
            flat = moved.reshape(len(value), -1)
            columns = [f"{name}{'' if positions == 1 else f'_{k}'}_{c}"
                       for k in range(positions)
                       for c in (names or range(moved.shape[-1]))]
        else:
            flat = value.reshape(len(value), -1)
            columns = [name] if flat.shape[1] == 1 else [f"{name}_{k}"
                                                         for k in range(flat.shape[1])]
        expected.update(zip(columns, flat.T, strict=True))
    assert head is None or f"{head.label}_predictions" in header, header
    assert sorted(header) == sorted(expected), (header, sorted(expected))
    for name, column in expected.items():
        assert_close(by_name[name], column, name)


def _predict(matrix, family, tmp_path, *args, stdin=None):
    return matrix.cli(family, "predict", "--params", matrix.trained(family), *args,
                      "--out-dir", tmp_path / "out", "-q", stdin=stdin)


def cell_predict_npz(matrix, family, mode, tmp_path, refused=False):
    target = tmp_path / "preds.npz"
    result = _predict(matrix, family, tmp_path, "-o", target)
    if refused:
        return result
    ok(result)
    assert_predictions_npz(read_npz(target), expected_rows(matrix, family),
                           matrix.spec(family), matrix.class_names(family))


def cell_predict_csv(matrix, family, mode, tmp_path, refused=False):
    target = tmp_path / "preds.csv"
    result = _predict(matrix, family, tmp_path, "-o", target)
    if refused:
        return result
    ok(result)
    assert_predictions_csv(target.read_text(), expected_rows(matrix, family),
                           matrix.spec(family), matrix.class_names(family))


def cell_predict_stdout(matrix, family, mode, tmp_path, refused=False):
    result = _predict(matrix, family, tmp_path, "-o", "-")
    if refused:
        return result
    ok(result)
    assert_predictions_csv(result.stdout, expected_rows(matrix, family), matrix.spec(family),
                           matrix.class_names(family))


def _predict_rows(matrix, family, tmp_path, refused, from_stdin):
    path, data, taken = matrix.row_file(family)
    name = FAMILY_SPECS[family].row_input
    target = tmp_path / "out.npz"
    source = "-" if from_stdin else path
    result = _predict(matrix, family, tmp_path, "--input", f"{name}={source}", "-o", target,
                      stdin=data if from_stdin else None)
    if refused:
        return result
    ok(result)
    assert_predictions_npz(read_npz(target), expected_rows(matrix, family, taken),
                           matrix.spec(family), matrix.class_names(family))


def cell_predict_file(matrix, family, mode, tmp_path, refused=False):
    return _predict_rows(matrix, family, tmp_path, refused, from_stdin=False)


def cell_predict_stdin(matrix, family, mode, tmp_path, refused=False):
    return _predict_rows(matrix, family, tmp_path, refused, from_stdin=True)


# --- summary --------------------------------------------------------------------------------

def cell_summary(matrix, family, mode, tmp_path):
    result = matrix.cli(family, "summary", "--json")
    ok(result)
    doc = json.loads(result.stdout)
    sizes = [int(np.prod(shape, dtype=np.int64)) for shape in matrix.param_shapes(family).values()]
    assert doc["params"]["trainable"] == sum(sizes), doc["params"]
    assert sum(s["trainable"] for s in doc["steps"]) == sum(sizes)
    ran = [s for s in doc["steps"] if s["runs"]]
    assert ran and all(s["output_shapes"] and s["output_shape"] != "-" for s in ran)
    static = doc["static"]  # static mode traced a plan of every family's spec
    assert "error" not in static and static["plans"] >= 1 and static["buffer_bytes"] > 0
    assert sum(s["static_ops"] for s in doc["steps"] if s["static_ops"]) > 0


# --- viz, viz --diff ------------------------------------------------------------------------

def _record_nodes(graph, colour=None):
    return [n for n in graph.nodes.values() if n.get("shape") == "record"
            and (colour is None or n.get("color") == colour)]


def cell_viz(matrix, family, mode, tmp_path):
    result = matrix.cli(family, "viz", "--out-dir", tmp_path)
    ok(result)
    folder = tmp_path / matrix.spec(family).name
    graph = parse_dot((folder / "graph.dot").read_text())
    assert len(_record_nodes(graph)) >= 2 and graph.edges
    assert (folder / "graph.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# families whose --diff replaces an op (relu by tanh, a live `if` taking its other branch)
OP_REPLACED = {"static_mlp", "live_branch", "data_csv", "data_named", "data_sequences"}


def cell_viz_diff(matrix, family, mode, tmp_path):
    diffs = [w for value in matrix.diff_args(family) for w in ("--diff", value)]
    result = matrix.cli(family, "viz", *diffs, "--format", "dot", "--out-dir", tmp_path)
    ok(result)
    graph = parse_dot((tmp_path / matrix.spec(family).name / "graph.diff.dot").read_text())
    # the two runs share ops (not only their parameters), matched by structure, not shape
    assert _record_nodes(graph, SHARED_COLOUR)
    only_one_run = _record_nodes(graph, FIRST_COLOUR) + _record_nodes(graph, SECOND_COLOUR)
    reshaped = [n for n in graph.nodes.values() if " → " in n.get("label", "")]
    if family in OP_REPLACED:  # an op of one run is another op in the other: both coloured
        assert _record_nodes(graph, FIRST_COLOUR) and _record_nodes(graph, SECOND_COLOUR)
    else:  # the same ops on other sizes or trip counts: shapes shown changed, or extra trips
        assert only_one_run or reshaped


# --- bench, check ---------------------------------------------------------------------------

def cell_bench(matrix, family, mode, tmp_path):
    result = matrix.cli(family, "bench", "--modes", "dynamic,static", "--repeat", 2,
                        "--warmup", 1, "--json", "--out-dir", tmp_path, "-q")
    ok(result)
    doc = json.loads(result.stdout)
    rows = doc["results"]
    assert {r["mode"] for r in rows} == set(MODES)
    assert all(r["median_ms"] > 0 and r["forward_median_ms"] > 0 for r in rows)
    static = next(r for r in rows if r["mode"] == "static")
    assert static["compile_ms"] is not None and static["compile_ms"] > 0
    folder = tmp_path / matrix.spec(family).name
    assert json.loads((folder / "bench.json").read_text())["results"] == rows
    assert (folder / "bench.csv").read_text().count("\n") == len(rows) + 1
    assert (folder / "bench.txt").read_text().strip()


def cell_check(matrix, family, mode, tmp_path):
    result = matrix.shipped.check(spec_path(family), mode)  # also read by tests/cli
    ok(result)
    doc = json.loads(result.stdout)
    assert doc["ok"] is True and doc["mode"] == mode
    shapes = matrix.param_shapes(family)
    assert {k: tuple(v["shape"]) for k, v in doc["params"].items()} == shapes
    # every parameter checked, at the spec's point or, past a kink, at a nearby one
    assert all(v["ok"] and v["verdict"] in ("passed", "passed_nearby")
               for v in doc["params"].values()), doc["params"]


# --- export ---------------------------------------------------------------------------------

def cell_export(matrix, family, mode, tmp_path, refused=False):
    target = tmp_path / "model.onnx"
    result = matrix.cli(family, "export", "--params", matrix.trained(family), "-o", target,
                        "-q")
    if refused:
        return result
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    ok(result)
    onnx.checker.check_model(onnx.load(str(target)), full_check=True)
    session = ort.InferenceSession(str(target))
    inputs = matrix.inputs(family)
    count = next((len(v) for v in inputs.values() if isinstance(v, list)), None)
    examples = [inputs] if count is None else [
        {k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()}
        for i in range(count)]
    expected = matrix.expected(family)
    expected = [expected] if count is None else expected
    names = [o.name for o in session.get_outputs()]
    assert set(names) == set(FAMILY_SPECS[family].outputs)
    for example, want in zip(examples, expected, strict=True):  # every example, of any length
        feed = {i.name: np.asarray(example[i.name]) for i in session.get_inputs()}
        got = dict(zip(names, session.run(None, feed), strict=True))
        for name in names:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=3e-6,
                                       err_msg=name)


# --- report, sweep --------------------------------------------------------------------------

def cell_report(matrix, family, mode, tmp_path):
    result = matrix.cli(family, "report", "--out-dir", tmp_path, "-q")
    ok(result)
    name = matrix.spec(family).name
    page = (tmp_path / name / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and name in page
    assert "Content-Security-Policy" in page


def cell_sweep(matrix, family, mode, tmp_path):
    result = matrix.cli(family, "sweep", "--grid", "mode=dynamic,static", "--grid",
                        "train.steps=2", "--scheduler", matrix.scheduler(), "--json",
                        "--out-dir", tmp_path, "-q")
    ok(result)
    rows = json.loads(result.stdout)["rows"]
    assert [r["status"] for r in rows] == ["ok", "ok"], rows
    assert {r["settings"]["mode"] for r in rows} == set(MODES)
    assert all(math.isfinite(r["figures"]["final_loss"]) for r in rows)
    losses = [r["figures"]["final_loss"] for r in rows]  # static steps = define-by-run steps
    assert losses[0] == pytest.approx(losses[1], rel=1e-4, abs=1e-6)
    lines = (tmp_path / matrix.spec(family).name / "sweep.csv").read_text().splitlines()
    assert len(lines) == 3


CELLS = {
    "run": cell_run, "run --eval": cell_run_eval, "train": cell_train,
    "evaluate": cell_evaluate, "predict file": cell_predict_file,
    "predict stdin": cell_predict_stdin, "predict -o -": cell_predict_stdout,
    "predict .npz": cell_predict_npz, "predict .csv": cell_predict_csv,
    "summary": cell_summary, "viz": cell_viz,
    "viz --diff": cell_viz_diff, "bench": cell_bench, "check": cell_check,
    "export": cell_export, "report": cell_report, "sweep": cell_sweep,
}


# --- a few cells in real processes: bytes piped into stdin, the exit code a shell sees -------

def _process(matrix, family, *args, stdin=None):
    words = [str(a) for a in args]
    command = [sys.executable, "-m", "cli", words[0], str(spec_path(family)), *words[1:]]
    return subprocess.run(command, input=stdin, capture_output=True, timeout=300)


@pytest.mark.slow  # a process; the predict cells read the same rows in-process
def test_predict_reads_npy_rows_piped_into_a_process(matrix):
    """`cat rows.npy | graphtool predict SPEC --params P --input x=- -o -`."""
    family = "data_npz"
    _, data, taken = matrix.row_file(family)
    done = _process(matrix, family, "predict", "--params", matrix.trained(family), "--input",
                    "x=-", "-o", "-", "-q", stdin=data)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b""
    assert_predictions_csv(done.stdout.decode(), expected_rows(matrix, family, taken),
                           matrix.spec(family), matrix.class_names(family))


@pytest.mark.slow  # a process; the refused cells show the same in-process
def test_a_refusal_in_a_process_is_one_located_line_and_its_exit_code(matrix, tmp_path):
    family, command = "for_each", "predict -o -"
    done = _process(matrix, family, "predict", "--params", matrix.trained(family), "-o", "-",
                    "--out-dir", tmp_path)
    refused = refusal(family, command)
    assert done.returncode == refused.code and done.stdout == b""
    assert_one_located_error(done.stderr.decode(), refused.message, spec_path(family))
    assert not any(tmp_path.iterdir())


def test_every_command_has_a_cell_and_every_family_a_spec():
    assert set(CELLS) == {c.name for c in COMMANDS}
    assert set(FAMILY_SPECS) == {f.name for f in FAMILIES}
    assert all(spec_path(f.name).is_file() for f in FAMILIES)
    assert ROWS_TAKEN > 1
