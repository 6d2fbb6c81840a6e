"""What the product matrix shares: the spec of each family
(``graphcore.commands.support.FAMILIES``), what a run of it reports, the files predict and
viz --diff read, and ``Matrix``, one session's state: each family's parameters trained once,
what its outputs must be, a local Dask cluster.

Expensive results are computed on first use inside a test, not in fixtures, so that a cell
marked xfail fails as a test (a fixture error would be an error, not an expected failure).
"""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from typer.testing import CliRunner

from cli.app import app
from graphcore import registry, using_config
from graphcore.commands.support import FAMILIES
from graphcore.interpreter.params_file import load_params
from graphcore.plugins import load_plugin
from graphcore.spec import build_model, load_spec_file, make_inputs, prepare_inputs, run_spec

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "swish_ops.py"


@dataclass(frozen=True)
class FamilySpec:
    """A family's spec and what the matrix expects of it."""

    outputs: dict[str, tuple[int, ...]]  # what `run` reports: each output's shape
    row_input: str  # the input `predict --input NAME=FILE` gives rows (or one example) of
    diff: tuple[str, ...]  # --diff values: {file} its input's scratch file, {spec} a second spec
    plugin: bool = False
    evaluated_rows: int | None = None  # rows `evaluate` reports (None: it refuses)
    # what the scratch files of --diff hold: an input's first rows ("rows"), the input scaled
    # up ("scaled": another trip count), a constant input taking the live `if`'s then ("then")
    diff_input: dict[str, str] = field(default_factory=dict)
    second_spec: tuple[str, str] | None = None  # {spec}: the family's, this text replaced


HEAD_OF_3 = ("out_size: 2,", "out_size: 3,")  # a second spec: the last layer gives 3 values
FAMILY_SPECS: dict[str, FamilySpec] = {
    "static_mlp": FamilySpec({"y": (3, 2)}, "x", ("{spec}",), second_spec=("- relu", "- tanh")),
    "param_branch": FamilySpec({"_": (4, 1)}, "x", ("params.act=relu",)),
    "live_branch": FamilySpec({"y": (4, 2)}, "x", ("x={file}",), diff_input={"x": "then"}),
    "repeat": FamilySpec({"logits": (4, 3)}, "x", ("params.depth=2",)),
    "while": FamilySpec({"_": (4, 2)}, "x", ("x={file}",), diff_input={"x": "scaled"}),
    "for_each": FamilySpec({"hs": (7, 1, 12)}, "s", ("params.hidden=6",), evaluated_rows=3),
    "per_example_branch": FamilySpec({"y": (2,)}, "x", ("{spec}",), evaluated_rows=8,
                                     second_spec=HEAD_OF_3),
    "data_csv": FamilySpec({"logits": (48, 2)}, "x", ("{spec}",), evaluated_rows=12,
                           second_spec=("- tanh", "- sigmoid")),
    "data_named": FamilySpec({"logits": (150, 3)}, "x", ("{spec}",), evaluated_rows=30,
                             second_spec=("- tanh", "- sigmoid")),
    "data_npz": FamilySpec({"logits": (1797, 10)}, "x", ("x={file}", "t={file}"),
                           evaluated_rows=359, diff_input={"x": "rows", "t": "rows"}),
    "data_sequences": FamilySpec({"logits": (1, 2)}, "s", ("{spec}",), evaluated_rows=6,
                                 second_spec=("- tanh", "- sigmoid")),
    "convolution": FamilySpec({"logits": (1797, 10)}, "x", ("x={file}", "t={file}"),
                              evaluated_rows=359, diff_input={"x": "rows", "t": "rows"}),
    "lstm": FamilySpec({"scores": (7, 5)}, "words", ("params.hidden=8",), evaluated_rows=3),
    "attention": FamilySpec({"y": (2, 6, 16)}, "x", ("params.heads=2",)),
    "plugin": FamilySpec({"_": (4, 2)}, "x", ("{spec}",), plugin=True, second_spec=HEAD_OF_3),
}
STATE = "_preprocessing/"  # what a params file holds beside the parameters: fitted state
ROWS_TAKEN = 5  # rows of a data-fed spec that `predict --input` reads from a file


def spec_path(family: str) -> Path:
    return ROOT / next(f.example for f in FAMILIES if f.name == family)


def outputs_of(result) -> dict[str, np.ndarray]:
    return {k: np.asarray(getattr(v, "array", v)) for k, v in result.items()}


class Matrix:
    """One pytest session's families: the CLI, scratch folders, trained parameters and the
    outputs the library computes for them (evaluation mode), each made once."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.runner = CliRunner()
        self._cache: dict[tuple, Any] = {}
        self._cluster: Any = None
        self._plugin: Path | None = None
        self._plugins = 0

    # --- the CLI --------------------------------------------------------------------------
    def cli(self, family: str, *args: Any, stdin: bytes | None = None):
        """``graphtool COMMAND SPEC ARGS...`` in-process; the family's plugin loaded first."""
        command, *rest = [str(a) for a in args]
        words = [command, str(spec_path(family)), *self.plugin_args(family), *rest]
        return self.runner.invoke(app, words, input=stdin)

    def plugin_args(self, family: str) -> list[str]:
        if not FAMILY_SPECS[family].plugin:
            return []
        # the registry is restored after every test, and a plugin file runs once per process:
        # a test that finds the op gone loads a fresh copy of the file, which registers it
        if self._plugin is None or "swish" not in registry.all_ops():
            self._plugin = self.folder(family, "plugin") / f"swish_ops_{self._plugins}.py"
            self._plugins += 1
            shutil.copy(PLUGIN, self._plugin)
            load_plugin(self._plugin)
        return ["--plugin", str(self._plugin)]

    def folder(self, family: str, *parts: str) -> Path:
        path = self.scratch.joinpath(family, *parts)
        path.mkdir(parents=True, exist_ok=True)
        return path

    # --- what a cell starts from ----------------------------------------------------------
    def spec(self, family: str):
        if FAMILY_SPECS[family].plugin:
            self.plugin_args(family)
        return load_spec_file(spec_path(family))

    def trained(self, family: str) -> Path:
        """Parameters after `train --steps 3 --save` (dynamic mode), made once."""
        key = ("trained", family)
        if key not in self._cache:
            target = self.folder(family, "trained") / "params.npz"
            result = self.cli(family, "train", "--steps", 3, "--save", target, "--out-dir",
                              self.folder(family, "trained"), "-q")
            assert result.exit_code == 0, result.stderr
            self._cache[key] = target
        return self._cache[key]

    def initial_params(self, family: str) -> dict[str, np.ndarray]:
        """The parameters a run starts from (lazily sized layers sized by one forward pass)."""
        key = ("initial", family)
        if key not in self._cache:
            spec = self.spec(family)
            model = build_model(spec, spec.seed)
            inputs = prepare_inputs(spec, model, make_inputs(spec.inputs, spec.seed,
                                                             spec.folder))
            run_spec(spec, model, inputs, seed=spec.seed, backward=False)
            self._cache[key] = {n.lstrip("/"): p.array.copy() for n, p in model.namedparams()}
        return self._cache[key]

    def scheduler(self) -> str:
        """The address of a local Dask cluster of two workers, started on first use."""
        if self._cluster is None:
            from graphcore.commands.sweep import local_cluster

            self._cluster = local_cluster(2)
        return self._cluster.scheduler_address

    def close(self) -> None:
        if self._cluster is not None:
            self._cluster.close()

    def param_shapes(self, family: str) -> dict[str, tuple[int, ...]]:
        """The trained parameters' shapes (not the state fitted on the data beside them)."""
        with np.load(self.trained(family)) as saved:
            return {k: saved[k].shape for k in saved.files if not k.startswith(STATE)}

    def class_names(self, family: str) -> list[str] | None:
        """The label vocabulary saved with the trained parameters (labels given as names)."""
        with np.load(self.trained(family)) as saved:
            found = [k for k in saved.files if k.startswith(STATE) and k.endswith("/classes")]
            return saved[found[0]].tolist() if found else None

    def expected(self, family: str, overrides: dict[str, str] | None = None
                 ) -> list[dict[str, np.ndarray]] | dict[str, np.ndarray]:
        """What the spec's outputs must be with the trained parameters, in evaluation mode,
        computed by the library (`run_spec`): per example (a list) for per-example specs,
        else one dict of whole-batch arrays. ``overrides``: --input NAME=PATH."""
        key = ("expected", family, tuple(sorted((overrides or {}).items())))
        if key not in self._cache:
            spec = self.spec(family)
            model = build_model(spec, spec.seed)
            load_params(str(self.trained(family)), model)
            inputs = prepare_inputs(spec, model, make_inputs(spec.inputs, spec.seed,
                                                             spec.folder, overrides))
            forward_only = replace(spec, loss=None)
            with using_config("train", False):
                result = run_spec(forward_only, model, inputs, backward=False)
            per_example = any(isinstance(v, list) for v in inputs.values())
            self._cache[key] = ([outputs_of(o) for o in result.example_outputs]
                                if per_example else outputs_of(result.outputs))
        return self._cache[key]

    def inputs(self, family: str) -> dict[str, Any]:
        spec = self.spec(family)
        return make_inputs(spec.inputs, spec.seed, spec.folder)

    # --- files the cells read -------------------------------------------------------------
    def row_file(self, family: str) -> tuple[Path, bytes, list[int]]:
        """A file of the spec's own data for `predict --input NAME=FILE`, its bytes (for
        stdin) and which rows (or examples) of the spec's data it holds."""
        name = FAMILY_SPECS[family].row_input
        value = self.inputs(family)[name]
        folder = self.folder(family, "rows")
        if family == "data_csv":  # a CSV with the data's column names, as predict reads them
            path = folder / "rows.csv"
            lines = ["f1,f2"] + [f"{a!r},{b!r}" for a, b in value[:ROWS_TAKEN].tolist()]
            path.write_text("\n".join(lines) + "\n")
            return path, path.read_bytes(), list(range(ROWS_TAKEN))
        path = folder / "rows.npy"
        if isinstance(value, list):  # a per-example input: a file holds one example
            np.save(path, np.asarray(value[1]))
            taken = [1]
        else:
            np.save(path, np.asarray(value[:ROWS_TAKEN]))
            taken = list(range(ROWS_TAKEN))
        return path, path.read_bytes(), taken

    def diff_args(self, family: str) -> list[str]:
        """The viz --diff values of the family, with their scratch files written."""
        info = FAMILY_SPECS[family]
        folder = self.folder(family, "diff")
        files: dict[str, Path] = {}
        inputs = self.inputs(family)
        if info.second_spec is not None:
            text = spec_path(family).read_text()
            assert info.second_spec[0] in text, info.second_spec
            files["spec"] = _scratch_spec(folder, spec_path(family),
                                          text.replace(*info.second_spec, 1))
        for name, how in info.diff_input.items():
            value = np.asarray(inputs[name])
            if how == "rows":
                array = value[:ROWS_TAKEN]
            elif how == "scaled":
                array = value * 4.0
            else:
                array = self._then_side(family, value)
            files[name] = folder / f"{name}.npy"
            np.save(files[name], array)
        values = []
        for item in info.diff:
            if item == "{spec}":
                values.append(str(files["spec"]))
            else:
                name = item.split("=", 1)[0]
                values.append(item.replace("{file}", str(files.get(name, ""))))
        return values

    def _then_side(self, family: str, value: np.ndarray) -> np.ndarray:
        for sign in (1.0, -1.0):
            candidate = np.full_like(value, 3.0 * sign)
            path = self.folder(family, "diff") / "candidate.npy"
            np.save(path, candidate)
            result = self.cli(family, "run", "--input", f"x={path}", "--json", "--out-dir",
                              self.folder(family, "diff", "out"), "-q")
            assert result.exit_code == 0, result.stderr
            branches = [p["branch"] for p in json.loads(result.stdout)["path"]
                        if p["kind"] == "if"]
            if branches == ["then"]:
                return candidate
        raise AssertionError("no constant input takes the live branch's `then`")


def _scratch_spec(folder: Path, original: Path, text: str) -> Path:
    """A second spec beside copies of the first one's data files (paths in a spec are
    relative to its folder)."""
    for data in [*original.parent.iterdir(), *original.parent.glob("data/*")]:
        target = folder / data.relative_to(original.parent)
        if data.suffix in (".csv", ".npz") and not target.exists():
            target.parent.mkdir(exist_ok=True)
            shutil.copy(data, target)
    path = folder / f"other_{original.name}"
    path.write_text(text)
    return path


def read_npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as saved:
        return {k: saved[k] for k in saved.files}


def read_csv(text: str) -> tuple[list[str], np.ndarray]:
    lines = [line for line in text.splitlines() if line]
    header = lines[0].split(",")
    values = np.loadtxt(io.StringIO("\n".join(lines[1:])), delimiter=",", ndmin=2, dtype=str)
    try:
        return header, values.astype(np.float64)
    except ValueError:  # class names: the columns that are numbers compared as numbers
        return header, values
