"""Validating a spec's ``data:``, ``validation:`` and ``train:`` sections (a mixin of the spec
loader). The loop these describe lives in ``graphcore.commands.train.session``.

    data:
      file: data/points.csv            # .csv (with a header), .npz, .npy or .jsonl
      x: {columns: [f1, f2]}           # each other key is an input fed from the file
      t: {column: label, dtype: int32}
      kind: {column: kind, encode: category}    # class names or codes -> 0..K-1
      z: {columns: [g1, g2], normalize: standard}  # or minmax; fitted on the training rows
    test: 0.1                          # held out first, evaluated once after training
    validation: 0.2                    # a seeded fraction, or {file: ..., seed: ...}
    train: {epochs: 20, batch_size: 32, optimizer: {name: adam, alpha: 0.01},
            metrics: [accuracy, f1], early_stopping: {metric: validation_loss, patience: 3},
            schedule: {kind: cosine}, warmup: 2, weight_decay: 0.0001, gradient_clipping: 5}

Every data-fed input has a named leading axis (``batch``): one spec runs on any number of rows.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from graphcore import optimizers
from graphcore.language.labels import label_input
from graphcore.language.syntax import (
    DataColumn,
    DataSpec,
    InputSpec,
    Spec,
    TrainSpec,
    ValidationSpec,
)
from graphcore.language.validation import INVALID, did_you_mean, items_of, show
from graphcore.language.yaml_source import LMap
from graphcore.training import learning_rate

DATA_SUFFIXES = (".csv", ".npz", ".npy", ".jsonl")
COLUMN_KEYS = ("columns", "column", "key", "values", "offsets", "field", "dtype", "shape",
               "whole_batch", "encode", "normalize")
ENCODINGS = ("category",)
NORMALIZATIONS = ("standard", "minmax")
# graphcore.commands.train.metrics computes them
SCALAR_METRICS = ("accuracy", "mse", "mae", "precision", "recall", "f1", "auc", "r2")
METRICS = (*SCALAR_METRICS, "confusion")  # the confusion matrix: a table, not a scalar
TRAIN_KEYS = ("epochs", "steps", "batch_size", "shuffle", "optimizer", "lr", "metrics",
              "early_stopping", "checkpoint_every", "log_every", "schedule", "warmup",
              "warmup_start", "weight_decay", "gradient_clipping")
LEARNING_RATE_WORDS = ("learning_rate", "learningrate", "learning_rate_init", "rate")
DEFAULT_BATCH_DIM = "batch"


def use_data_file(spec: Any, path: str) -> None:
    """``--data PATH``: read the spec's data-fed inputs from ``path`` (relative to the working
    directory) instead of ``data: file:``."""
    if spec.data is None:
        raise ValueError(f"spec '{spec.name}' has no `data:` section for --data to replace")
    absolute = str(Path(path).absolute())
    spec.data.file = absolute
    for column in spec.data.columns.values():
        column.file = absolute


def _learning_rate_hint(key: str) -> str | None:
    return "did you mean 'lr'?" if key.lower() in LEARNING_RATE_WORDS else None


class WorkflowReader:
    """``read_data``, ``read_validation`` (also ``test:``), ``read_train``; needs the loader's
    helpers."""

    def read_data(self, node: Any) -> DataSpec | None:
        if node is None:
            return None
        if not isinstance(node, LMap):
            self.error(node.loc, "data must be a mapping: {file: PATH, INPUT: {column: NAME}}")
            return None
        file_node = node.get("file")
        path = self.value(file_node) if file_node is not None else None
        if not isinstance(path, str) or not path:
            self.error(node.loc if file_node is None else file_node.loc,
                       "data needs 'file': the path of a .csv, .npz, .npy or .jsonl file")
            path = ""
        elif Path(path).suffix.lower() not in DATA_SUFFIXES:
            self.error(file_node.loc, f"data file must be {', '.join(DATA_SUFFIXES)}, got "
                       f"'{Path(path).suffix or path}'")
        columns: dict[str, DataColumn] = {}
        for name in node:
            if name == "file":
                continue
            self.check_value_name(name, node.key_loc(name))
            column = self.read_column(name, node[name])
            if column is not None:
                columns[name] = column
            else:  # reported; still in scope, so its uses are not reported again
                self.input_locs.setdefault(name, node[name].loc)
        if not any(name != "file" for name in node):
            self.error(node.loc, "data names no input; add one, e.g. `x: {columns: [a, b]}`")
        for column in columns.values():
            column.file = path
            column.file_loc = node.loc if file_node is None else file_node.loc
        return DataSpec(path, node.loc, columns, None if file_node is None else file_node.loc)

    def read_column(self, name: str, node: Any) -> DataColumn | None:
        if not isinstance(node, LMap):
            self.error(node.loc, f"data input '{name}' must be a mapping such as "
                       "{column: label} or {key: images}", _column_hint(name, node))
            return None
        for key in node:
            if key not in COLUMN_KEYS:
                self.error(node.key_loc(key), f"data input '{name}': unknown key '{key}'",
                           did_you_mean(key, COLUMN_KEYS))
        column = DataColumn(name, node.loc)
        if "columns" in node:
            value = self.value(node["columns"])
            if not isinstance(value, list) or not value or \
                    not all(isinstance(v, str) for v in value):
                self.error(node["columns"].loc, "columns must be a list of column names",
                           f"for one column write column: {value}" if isinstance(value, str)
                           else None)
            else:
                column.columns = tuple(value)
        for key in ("column", "key", "values", "offsets", "field"):
            if key in node:
                value = self.value(node[key])
                if not isinstance(value, str) or not value:
                    self.error(node[key].loc, f"{key} must be a name, got {show(node[key])}")
                else:
                    setattr(column, key, value)
        chosen = [k for k in ("columns", "column", "key", "values", "field") if k in node]
        if len(chosen) != 1:
            self.error(node.loc, f"data input '{name}' needs exactly one of columns, column, "
                       "key, values (+ offsets) or field")
        if (column.values is None) != (column.offsets is None) and "values" in chosen:
            self.error(node.loc, f"data input '{name}': values needs offsets (an .npz "
                       "sequence is the values array and the offsets where examples start)")
        spec = InputSpec(name=name, source="data", loc=node.loc, column=column,
                         batch_dim=DEFAULT_BATCH_DIM)
        if "dtype" in node:
            spec.dtype = self.read_dtype(node["dtype"])
            spec.dtype_given = True
        if "shape" in node:
            spec.shape = self.read_shape(node["shape"], f"input '{name}'")
            spec.shape_loc = node["shape"].loc
            if spec.shape and spec.shape[0] is not None:
                self.error(node["shape"].loc, f"input '{name}': data rows are the leading "
                           "axis; name it, e.g. shape: [batch, 4]")
            elif getattr(self, "named_dim", None):
                spec.batch_dim = self.named_dim
        self.read_whole_batch(node, spec)
        self.read_preprocessing(name, node, spec)
        self.data_inputs[name] = spec
        return column

    def read_preprocessing(self, name: str, node: Any, spec: InputSpec) -> None:
        """``encode: category`` and ``normalize: standard | minmax`` of a data input."""
        column = spec.column
        if "encode" in node:
            column.encode = self.read_choice(node["encode"], "encode", ENCODINGS, "category")
            column.encode_loc = node["encode"].loc
            if column.columns is not None or column.sequence:
                self.error(node["encode"].loc, f"data input '{name}': encode: category reads "
                           "one column of class names or codes (column: NAME, or key: NAME "
                           "of a 1-d array)")
            if spec.dtype_given and spec.dtype not in ("int32", "int64"):
                self.error(node["dtype"].loc, f"data input '{name}': encode: category gives "
                           f"class indices, so its dtype is int32 or int64, not {spec.dtype}")
            if not spec.dtype_given:
                spec.dtype = "int32"
        if "normalize" in node:
            column.normalize = self.read_choice(node["normalize"], "normalize",
                                                NORMALIZATIONS, "standard")
            column.normalize_loc = node["normalize"].loc
            if column.sequence:
                self.error(node["normalize"].loc, f"data input '{name}': normalize applies to "
                           "inputs of rows (columns:, column: or key:), not to sequences")
            elif column.encode is not None:
                self.error(node["normalize"].loc, f"data input '{name}': an encoded input "
                           "holds class indices; normalize applies to numeric features")
            elif spec.dtype_given and not spec.dtype.startswith("float"):
                self.error(node["normalize"].loc, f"data input '{name}': normalize gives "
                           f"real values, so its dtype is a float dtype, not {spec.dtype}")

    def mark_labels(self, spec: Spec) -> None:
        """The data input holding a classification loss's labels may hold class names."""
        name = label_input(spec)
        column = spec.inputs[name].column if name is not None else None
        if column is None:
            return
        column.labels = True
        if column.normalize is not None:
            self.error(column.normalize_loc, f"data input '{name}' holds the labels of "
                       f"{spec.loss.op}; normalize applies to features")

    def read_validation(self, node: Any, key: str = "validation") -> ValidationSpec | None:
        """``validation:`` (or ``test:``, ``key``): a fraction, or a mapping with a fraction or
        a file."""
        if node is None:
            return None
        value = self.value(node)
        if isinstance(value, int | float) and not isinstance(value, bool):
            spec = ValidationSpec(node.loc, fraction=float(value))
        elif isinstance(node, LMap):
            spec = ValidationSpec(node.loc)
            for name in node:
                if name not in ("fraction", "file", "seed"):
                    self.error(node.key_loc(name), f"{key}: unknown key '{name}'",
                               did_you_mean(name, ("fraction", "file", "seed")))
            if "fraction" in node:
                fraction = self.value(node["fraction"])
                if isinstance(fraction, int | float) and not isinstance(fraction, bool):
                    spec.fraction = float(fraction)
                else:
                    self.error(node["fraction"].loc, "fraction must be a number in (0, 1)")
            if "file" in node:
                path = self.value(node["file"])
                if not isinstance(path, str) or \
                        Path(path).suffix.lower() not in DATA_SUFFIXES:
                    self.error(node["file"].loc, f"{key} file must be a .csv, .npz, "
                               ".npy or .jsonl path")
                else:
                    spec.file = path
                    spec.file_loc = node["file"].loc
            if "seed" in node:
                spec.seed = self.read_int(node["seed"], "seed", 0, low=0)
            if (spec.fraction is None) == (spec.file is None):
                self.error(node.loc, f"{key} needs exactly one of fraction or file")
        else:
            percent = re.fullmatch(r"([0-9]+(?:\.[0-9]*)?)\s*%", str(value))
            self.error(node.loc, f"{key} must be a fraction in (0, 1) or {{file: PATH}}, "
                       f"got {show(node)}", f"write {float(percent.group(1)) / 100:g} for "
                       f"{percent.group(0)}" if percent else None)
            return None
        if spec.fraction is not None and not 0 < spec.fraction < 1:
            self.error(node.loc, f"{key} fraction must be in (0, 1), got {spec.fraction:g}")
        return spec

    def read_train(self, node: Any) -> TrainSpec | None:
        if node is None:
            return None
        if not isinstance(node, LMap):
            self.error(node.loc, "train must be a mapping such as {epochs: 10, batch_size: 32}")
            return None
        for key in node:
            if key not in TRAIN_KEYS:
                self.error(node.key_loc(key), f"train: unknown key '{key}'",
                           _learning_rate_hint(key) or did_you_mean(key, TRAIN_KEYS))
        spec = TrainSpec(node.loc)
        for key in ("epochs", "steps", "batch_size", "checkpoint_every", "log_every"):
            if key in node:
                setattr(spec, key, self.read_int(node[key], key, None, low=1))
        if spec.epochs is not None and spec.steps is not None:
            self.error(node.loc, "train: give epochs or steps, not both")
        if "checkpoint_every" not in node:
            spec.checkpoint_every = 1
        if "shuffle" in node:
            spec.shuffle = self.read_bool(node["shuffle"], "shuffle")
        if "optimizer" in node:
            self.read_optimizer(node["optimizer"], spec)
        if "lr" in node:
            self.read_train_lr(node, spec)
        if "metrics" in node:
            value = self.value(node["metrics"])
            items = items_of(node["metrics"], value)
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list):
                self.error(node["metrics"].loc, "metrics must be a list such as [accuracy]")
            else:
                for item, metric in zip(items, value, strict=False):
                    if metric not in METRICS:
                        self.error(item.loc, f"unknown metric {self.show(item)}; choose "
                                   f"from {', '.join(METRICS)}",
                                   did_you_mean(str(metric), METRICS))
                spec.metrics = tuple(m for m in value if m in METRICS)
        if "early_stopping" in node:
            spec.early_stopping = self.read_early_stopping(node["early_stopping"], spec)
        self.read_schedule(node, spec)
        return spec

    def read_schedule(self, node: LMap, spec: TrainSpec) -> None:
        """``schedule:`` (a kind, or ``{kind: step, every: 10, ...}``), ``warmup:``,
        ``warmup_start:``, ``weight_decay:`` and ``gradient_clipping:``."""
        if "schedule" in node:
            spec.schedule = self.read_schedule_kind(node["schedule"], spec)
        for key, low, whole in (("warmup", 0, True), ("warmup_start", 0, False),
                                ("weight_decay", 0, False), ("gradient_clipping", None, False)):
            if key not in node:
                continue
            value = self.value(node[key])
            if value is INVALID:
                continue
            number = isinstance(value, int | float) and not isinstance(value, bool) and \
                math.isfinite(value)
            if not number or (whole and not float(value).is_integer()) or \
                    (value < low if low is not None else not value > 0):
                what = "an integer >= 0 (epochs)" if whole else "a number >= 0" \
                    if low is not None else "a number > 0"
                self.error(node[key].loc, f"{key} must be {what}, got {self.show(node[key])}")
                continue
            setattr(spec, key, int(value) if whole else float(value))
        if spec.warmup == 0:
            spec.warmup = None
        if spec.weight_decay == 0:
            spec.weight_decay = None
        schedules = [k for k in ("schedule", "warmup") if k in node]
        if schedules and optimizers.learning_rate_keyword(spec.optimizer) is None:
            self.error(node.key_loc(schedules[0]), f"train: optimizer {spec.optimizer} has no "
                       f"learning rate for {schedules[0]} to change", "choose an optimizer "
                       "with one, or remove it")
        if "warmup_start" in node and spec.warmup is None:
            self.error(node.key_loc("warmup_start"), "train: warmup_start without a warm-up",
                       "add warmup: N (epochs)")
        rate = spec.lr or spec.hyperparameters.get(
            optimizers.learning_rate_keyword(spec.optimizer) or "",
            optimizers.default_learning_rate(spec.optimizer))
        if rate is None:
            return
        if spec.warmup_start is not None and not spec.warmup_start < rate:
            self.error(node["warmup_start"].loc, f"warmup_start {spec.warmup_start:g} is not "
                       f"below the learning rate {rate:g} it warms up to")
        floor = (spec.schedule or {}).get("min_lr")
        if floor is not None and spec.schedule["kind"] in ("cosine", "exponential") and \
                not floor < rate:
            where = node["schedule"]
            self.error(where["min_lr"].loc if isinstance(where, LMap) and "min_lr" in where
                       else where.loc, f"schedule {spec.schedule['kind']}: min_lr {floor:g} "
                       f"is not below the learning rate {rate:g}")

    def read_schedule_kind(self, node: Any, spec: TrainSpec) -> dict[str, Any] | None:
        value = self.value(node)
        if value is INVALID:
            return None
        if isinstance(value, str):
            given, where = {"kind": value}, {"kind": node.loc}
        elif isinstance(node, LMap):
            given = {key: self.value(node[key]) for key in node}
            if any(v is INVALID for v in given.values()):
                return None
            where = {key: node[key].loc for key in node}
        else:
            self.error(node.loc, "schedule must be a kind (cosine) or a mapping such as "
                       "{kind: step, every: 10, factor: 0.5}")
            return None
        schedule, problems = learning_rate.check_schedule(given)
        known_kind = given.get("kind") in learning_rate.KINDS
        for key, message in problems:
            loc, hint = node.loc, None
            if key == "kind":
                loc, hint = where["kind"], did_you_mean(str(given["kind"]), learning_rate.KINDS)
            elif key is not None and isinstance(node, LMap) and key in node:
                allowed = learning_rate.settings_of(given["kind"]) if known_kind else {}
                if key in allowed:
                    loc = node[key].loc
                else:
                    loc, hint = node.key_loc(key), did_you_mean(key, allowed)
            self.error(loc, message, hint)
        if schedule is None:
            return None
        if schedule["kind"] == "plateau" and schedule["metric"] is not None:
            known = [f"{prefix}{m}" for prefix in ("", "validation_")
                     for m in ("loss", *(m for m in spec.metrics if m in SCALAR_METRICS))]
            if schedule["metric"] not in known:
                self.error(where["metric"], f"schedule plateau: metric {schedule['metric']!r} "
                           f"is not reported; choose from {', '.join(known)}",
                           did_you_mean(str(schedule["metric"]), known))
                return None
        if schedule == {"kind": "constant", "per": "epoch"}:
            return None
        return schedule

    def read_optimizer(self, node: Any, spec: TrainSpec) -> None:
        value = self.value(node)
        if isinstance(value, str):
            name, hyper, name_loc = value, {}, node.loc
        elif isinstance(node, LMap) and "name" in node:
            name, name_loc = self.value(node["name"]), node["name"].loc
            hyper = {k: v for k, v in value.items() if k != "name"}
        else:
            self.error(node.loc, "optimizer must be a name (adam) or {name: adam, alpha: 0.01}")
            return
        if name not in optimizers.BY_NAME:
            self.error(name_loc, f"unknown optimizer {name!r}; choose from "
                       f"{', '.join(optimizers.BY_NAME)}",
                       did_you_mean(str(name), optimizers.BY_NAME))
            return
        allowed = optimizers.hyperparameters(name)
        for key, number in hyper.items():
            where = node.key_loc(key)
            if key not in allowed:
                hint = did_you_mean(key, allowed)
                if optimizers.learning_rate_keyword(name) is None and (
                        key == "lr" or _learning_rate_hint(key)):
                    hint = f"{name} has no learning rate: it adapts its steps from rho and eps"
                elif _learning_rate_hint(key):
                    hint = _learning_rate_hint(key)
                self.error(where, f"optimizer {name} has no hyperparameter '{key}' (it takes "
                           f"{', '.join(allowed)})", hint)
            elif isinstance(number, bool) or not isinstance(number, int | float) \
                    or not number >= 0:
                self.error(node[key].loc, f"{key} must be a non-negative number, got "
                           f"{show(node[key])}")
        spec.optimizer = name
        spec.hyperparameters = {k: float(v) for k, v in hyper.items() if k in allowed
                                and isinstance(v, int | float) and not isinstance(v, bool)}
        keyword = optimizers.learning_rate_keyword(name)
        if keyword != "lr" and "lr" in spec.hyperparameters:  # Adam's lr is its alpha
            rate = spec.hyperparameters.pop("lr")
            if spec.hyperparameters.setdefault(keyword, rate) != rate:
                self.error(node.key_loc("lr"), f"optimizer {name}: lr {rate:g} and {keyword} "
                           f"{spec.hyperparameters[keyword]:g} are two values for its one "
                           "learning rate", f"keep one: lr is another name for {name}'s "
                           f"{keyword}")

    def read_train_lr(self, node: LMap, spec: TrainSpec) -> None:
        """``train: {lr: X}``: the optimizer's learning rate, as ``--lr X`` sets it (refused
        where the optimizer has none, or gives its own different one)."""
        value = self.value(node["lr"])
        if value is INVALID:
            return
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
                value > 0 and math.isfinite(value)):
            self.error(node["lr"].loc, f"lr must be a positive number, got "
                       f"{self.show(node['lr'])}")
            return
        keyword = optimizers.learning_rate_keyword(spec.optimizer)
        if keyword is None:
            having = [n for n in optimizers.BY_NAME
                      if optimizers.learning_rate_keyword(n) is not None]
            self.error(node.key_loc("lr"), f"train: optimizer {spec.optimizer} has no "
                       "learning rate for lr to set", f"remove lr, or choose an optimizer "
                       f"that has one: {', '.join(having)}")
            return
        own = spec.hyperparameters.get(keyword)
        if own is not None and own != float(value):
            self.error(node.key_loc("lr"), f"train: lr {value:g} and the optimizer's "
                       f"{keyword} {own:g} are two values for one learning rate",
                       "keep one of them")
            return
        spec.lr = float(value)

    def read_early_stopping(self, node: Any, spec: TrainSpec) -> dict[str, Any] | None:
        if not isinstance(node, LMap):
            self.error(node.loc, "early_stopping must be {metric: validation_loss, patience: 3}")
            return None
        for key in node:
            if key not in ("metric", "patience", "mode"):
                self.error(node.key_loc(key), f"early_stopping: unknown key '{key}'",
                           did_you_mean(key, ("metric", "patience", "mode")))
        metric = self.value(node["metric"]) if "metric" in node else "validation_loss"
        known = [f"{prefix}{m}" for prefix in ("", "validation_")
                 for m in ("loss", *(m for m in spec.metrics if m in SCALAR_METRICS))]
        if metric not in known:
            self.error(node["metric"].loc if "metric" in node else node.loc,
                       f"early_stopping metric {metric!r} is not reported; choose from "
                       f"{', '.join(known)}", did_you_mean(str(metric), known))
        patience = self.read_int(node.get("patience"), "patience", 3, low=1)
        mode = self.read_choice(node.get("mode"), "mode", ("auto", "min", "max"), "auto")
        return {"metric": metric, "patience": patience, "mode": mode}


def _column_hint(name: str, node: Any) -> str | None:
    """How to write a data input given as its column names (``x: [a, b]``, ``t: label``)."""
    value = node.to_python()
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return f"write {name}: {{columns: [{', '.join(value)}]}}"
    if isinstance(value, str) and value:
        return f"write {name}: {{column: {value}}}"
    return None
