"""What ``graphtool summary`` reports, as plain data: a spec's steps, each with the output
shapes it produced and its parameter count, and the totals (Keras' ``model.summary()``).

``spec_summary`` builds the spec's model (loading ``--params`` when given), then runs it:

- **dynamic** (define-by-run): one forward pass per call, as ``run`` makes it, on the spec's
  inputs (prepared as ``run`` prepares them: class names encoded, normalization statistics
  fitted on them where the parameters hold none); a spec fed from ``data:`` runs on its first
  ``rows`` rows (examples). Each step's
  row shows every shape it produced (a step inside a loop or a per-example run produces
  several: ``(2..6, 4)`` is a leading axis from 2 to 6) and how many times it ran; a step on a
  branch not taken shows none. Lazily sized parameters get their sizes from this run.
- **static** (traced plans): the same inputs through a ``StaticSpecRunner``, with backward
  when the spec has a loss (the plan a static training step replays). Each step's row counts
  the forward IR nodes traced from it in the last plan (a loop body traced once per trip, so
  the count is per plan, not per step of the spec); the totals give the plans cached (one
  per path and input signature), the IR nodes traced and left after the passes (forward and
  backward), the guards (live predicates) and the bytes of buffers the plan allocates.

Parameters are counted per layer scope (``hidden``, ``block_0``): a layer shared by several
steps is counted on its first step, and the totals are the sum of every parameter's size
(``trainable``) and of the persistent arrays (``non_trainable``: batch normalization's running
mean and variance, an input's normalization statistics, each such input a row of its own
before the graph's steps). ``SpecSummary.to_dict()`` is the ``--json`` document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from graphcore import errors
from graphcore.commands.schema import SCHEMA_VERSION
from graphcore.commands.train.data import batched_inputs, data_origins
from graphcore.config import no_backprop_mode, using_config
from graphcore.inputs.make import make_inputs
from graphcore.interpreter.examples import example_count, example_rows, has_sequences
from graphcore.interpreter.forward import ForwardPass
from graphcore.interpreter.parameters import SpecModel, build_model, seeded
from graphcore.interpreter.params_file import load_params
from graphcore.interpreter.preprocessing import PREPROCESSING, prepare_inputs
from graphcore.language.syntax import (
    ForEachStep,
    IfStep,
    OpStep,
    RepeatStep,
    Spec,
    Step,
    WhileStep,
)
from graphcore.spec_static.runner import StaticSpecRunner
from graphcore.variable import Variable

DEFAULT_ROWS = 32  # rows (examples) of a data-fed spec the summary runs on
MAX_SHAPES = 50  # distinct shapes kept per step


@dataclass
class StepRow:
    """One step of the spec: where it is, what it is, what it produced, what it holds."""

    at: str  # line:col
    depth: int  # how many control-flow steps enclose it
    kind: str  # preprocessing | layer | op | loss | if | repeat | while | for_each
    op: str  # the op (a layer's op), or the control step's keyword
    name: str | None = None  # a layer's name
    layers: list[str] = field(default_factory=list)  # the layer scopes it uses
    shapes: list[list[tuple[int, ...]]] = field(default_factory=list)  # per run: each part
    runs: int = 0
    trainable: int | None = 0  # None: a parameter whose size no run has fixed
    non_trainable: int = 0
    shared_with: str | None = None  # the step that holds its layer's parameters
    static_ops: int | None = None

    def shape_text(self) -> str:
        return shape_text(self.shapes)

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "depth": self.depth, "kind": self.kind, "op": self.op,
                "name": self.name, "layers": self.layers,
                "output_shapes": [[list(p) for p in parts] for parts in self.shapes],
                "output_shape": self.shape_text(), "runs": self.runs,
                "params": None if self.trainable is None
                else self.trainable + self.non_trainable,
                "trainable": self.trainable, "non_trainable": self.non_trainable,
                "shared_with": self.shared_with, "static_ops": self.static_ops}


@dataclass
class SpecSummary:
    spec: Spec
    seed: int
    rows: list[StepRow]
    inputs: dict[str, str]  # each input's shape(s) as run
    examples: int  # runs of the graph (examples of a per-example spec; else 1)
    rows_run: int | None  # rows (examples) of a data-fed spec the summary ran on
    static: dict[str, Any] | None  # the static totals, or {"error": why not traced}

    @property
    def trainable(self) -> int | None:
        counts = [r.trainable for r in self.rows]
        return None if None in counts else sum(counts)

    @property
    def non_trainable(self) -> int:
        return sum(r.non_trainable for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        trainable = self.trainable
        return {
            "schema_version": SCHEMA_VERSION, "spec": self.spec.name, "seed": self.seed,
            "inputs": self.inputs, "examples": self.examples, "rows_run": self.rows_run,
            "steps": [r.to_dict() for r in self.rows],
            "params": {"total": None if trainable is None else trainable + self.non_trainable,
                       "trainable": trainable, "non_trainable": self.non_trainable},
            "static": self.static,
        }


def shape_text(shapes: list[list[tuple[int, ...]]]) -> str:
    """The shapes a step produced as one text: ``(32, 128)``; ``(2..6, 4)`` where an axis
    varied; parts of a value of several arrays joined by ``, ``; distinct ranks by `` | ``;
    ``-`` where it never ran."""
    if not shapes:
        return "-"
    parts = max(len(s) for s in shapes)
    texts = []
    for i in range(parts):
        seen = [s[i] for s in shapes if len(s) > i]
        by_rank: dict[int, list[tuple[int, ...]]] = {}
        for shape in seen:
            by_rank.setdefault(len(shape), []).append(shape)
        ranks = []
        for same in by_rank.values():
            axes = []
            for axis in zip(*same, strict=True):
                low, high = min(axis), max(axis)
                axes.append(str(low) if low == high else f"{low}..{high}")
            ranks.append("(" + ", ".join(axes) + ("," if len(axes) == 1 else "") + ")")
        texts.append(" | ".join(ranks))
    return ", ".join(texts)


class _ShapePass(ForwardPass):
    """A forward pass that records each op step's result shapes and the layer it used."""

    def call(self, step: OpStep, plan: Any, layer: Any, args: list[Any]) -> Any:
        result = super().call(step, plan, layer, args)
        parts = result if isinstance(result, tuple) else (result,)
        seen = self.__dict__.setdefault("seen", {})
        record = seen.setdefault(id(step), {"shapes": [], "runs": 0, "layers": []})
        record["runs"] += 1
        shape = [tuple(int(n) for n in np.shape(p.array if isinstance(p, Variable) else p))
                 for p in parts]
        if shape not in record["shapes"] and len(record["shapes"]) < MAX_SHAPES:
            record["shapes"].append(shape)
        if layer is not None and id(layer) not in record["layers"]:
            record["layers"].append(id(layer))
        return result


def spec_summary(spec: Spec, *, seed: int | None = None, params_file: str | None = None,
                 input_overrides: Mapping[str, str] | None = None,
                 stdin: BinaryIO | None = None, rows: int = DEFAULT_ROWS,
                 static: bool = True) -> SpecSummary:
    """The summary of ``spec`` (see the module docstring); ``static=False`` leaves static mode
    out (``static`` is then None)."""
    seed = spec.seed if seed is None else seed
    model = build_model(spec, seed)
    arrays = make_inputs(spec.inputs, seed, spec.folder, input_overrides, stdin,
                         spec.max_elements)
    if params_file is not None:
        load_params(params_file, model)
    # class names encoded, normalization statistics fitted where the parameters hold none
    arrays = prepare_inputs(spec, model, arrays, data_origins(spec, input_overrides))
    rows_run = None
    if spec.data is not None:
        batched = batched_inputs(spec, arrays)
        if batched:
            rows_run = min(rows, len(arrays[batched[0]]))
            arrays = {k: (v[:rows_run] if k in batched else v) for k, v in arrays.items()}
    seen, examples = _dynamic(spec, model, arrays, seed)
    static_ops, totals = _static(spec, model, arrays, seed) if static else ({}, None)
    step_rows = _rows(spec, model, seen, static_ops if static else None, arrays)
    inputs = {name: shape_text([[tuple(np.shape(a))] for a in value])
              if isinstance(value, list) else shape_text([[tuple(np.shape(value))]])
              for name, value in arrays.items()}
    return SpecSummary(spec, seed, step_rows, inputs, examples, rows_run, totals)


def _dynamic(spec: Spec, model: SpecModel, arrays: Mapping[str, Any], seed: int
             ) -> tuple[dict[int, dict[str, Any]], int]:
    """Each op step's record over every example's define-by-run pass (evaluation mode)."""
    inputs = example_rows(spec, arrays)
    n = example_count(spec, inputs)
    seen: dict[int, dict[str, Any]] = {}
    with using_config("train", False), no_backprop_mode(), seeded(seed + 1):
        for i in range(n):
            example = {k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()} \
                if has_sequences(inputs) else inputs
            run = _ShapePass(spec, model, example, [], record=False)
            run.__dict__["seen"] = seen
            run.forward()
    return seen, n


def _static(spec: Spec, model: SpecModel, arrays: Mapping[str, Any], seed: int
            ) -> tuple[dict[str, int], dict[str, Any]]:
    """Forward IR nodes per step ("line:col") of the last traced plan, and the totals."""
    runner = StaticSpecRunner(spec, model)
    try:
        runner.run(arrays, backward=spec.loss is not None, seed=seed, batching="off")
    except (errors.TraceError, errors.SpecRuntimeError) as e:
        return {}, {"error": str(e).splitlines()[0]}
    model.cleargrads()
    variant = runner.last
    if variant is None:  # every call ran define-by-run (the cache could take none)
        return {}, {"error": "no plan was traced"}
    per_step: dict[str, int] = {}
    traced = {node.id for node in variant.trace.graph.nodes}
    for node_id, at in variant.locations.items():
        if node_id in traced:
            per_step[at] = per_step.get(at, 0) + 1
    computed = [n for n in variant.plan.graph.nodes if n.op not in ("input", "param", "const")]
    return per_step, {
        "plans": sum(len(v) for v in runner.cache.values()),
        "nodes_traced": len(variant.trace.graph.nodes),
        "nodes_optimized": len(variant.plan.graph.nodes),
        "kernels": len(computed),
        "guards": sum(1 for n in variant.plan.graph.nodes if n.op == "guard"),
        "buffer_bytes": int(variant.plan.allocated_bytes),
        "backward": spec.loss is not None,
    }


def _rows(spec: Spec, model: SpecModel, seen: Mapping[int, dict[str, Any]],
          static_ops: Mapping[str, int] | None, arrays: Mapping[str, Any]) -> list[StepRow]:
    scopes = {id(link): path.lstrip("/") for path, link in model.namedlinks(skipself=True)}
    holder: dict[str, str] = {}  # layer scope -> the step ("line:col") counting its params
    rows: list[StepRow] = []

    def add(step: Step, depth: int, kind: str | None = None) -> None:
        at = f"{step.loc.line}:{step.loc.col}"
        if isinstance(step, OpStep):
            record = seen.get(id(step), {"shapes": [], "runs": 0, "layers": []})
            row = StepRow(at, depth, kind or ("layer" if step.layer else "op"), step.op,
                          step.name if step.layer else None,
                          runs=record["runs"], shapes=record["shapes"])
            row.static_ops = None if static_ops is None else static_ops.get(at, 0)
            if step.layer:
                _count_params(row, step, model, scopes, record["layers"], holder)
            rows.append(row)
            return
        keyword = {IfStep: "if", RepeatStep: "repeat", WhileStep: "while",
                   ForEachStep: "for_each"}[type(step)]
        rows.append(StepRow(at, depth, keyword, keyword))
        bodies = [step.then, step.otherwise] if isinstance(step, IfStep) else [step.body]
        for body in bodies:
            for inner in body:
                add(inner, depth + 1)

    rows += _preprocessing_rows(spec, model, arrays)
    for step in spec.graph:
        add(step, 0)
    if spec.loss is not None:
        add(spec.loss, 0, "loss")
    return rows


def _preprocessing_rows(spec: Spec, model: SpecModel, arrays: Mapping[str, Any]
                        ) -> list[StepRow]:
    """A row per input the model encodes or normalizes, its state not trainable: the
    statistics' sizes (a vocabulary is names, not numbers: it counts none)."""
    preprocessing = model.preprocessing
    if preprocessing is None:
        return []
    rows = []
    for name, values in preprocessing.state().items():
        column = spec.inputs[name].column
        if "shift" in values:
            at = column.normalize_loc or spec.inputs[name].loc
            op = f"normalize {column.normalize}"
        else:
            at = column.encode_loc or column.loc
            op = f"encode {len(values['classes'])} classes"
        size = sum(int(np.size(values[k])) for k in ("shift", "scale") if k in values)
        value = arrays[name]
        distinct = dict.fromkeys(tuple(np.shape(a)) for a in
                                 (value if isinstance(value, list) else [value]))
        shapes = [[shape] for shape in distinct]
        rows.append(StepRow(f"{at.line}:{at.col}", 0, "preprocessing", op, name,
                            [f"{PREPROCESSING}/{name}"], shapes[:MAX_SHAPES], 1,
                            non_trainable=size))
    return rows


def _count_params(row: StepRow, step: OpStep, model: SpecModel, scopes: Mapping[int, str],
                  used: list[int], holder: dict[str, str]) -> None:
    """The parameters of the layer scopes ``step`` used (every scope it can use where it never
    ran), each scope counted once: on the first step that holds it."""
    names = [scopes[i] for i in used if i in scopes] or _possible_scopes(step, model)
    row.layers = names
    for scope in names:
        if scope in holder:
            row.shared_with = holder[scope]
            continue
        holder[scope] = row.at
        link = model.layer(scope)
        sizes = [p.array.size if p.array is not None else None for p in link.params()]
        if None in sizes:
            row.trainable = None
        elif row.trainable is not None:
            row.trainable += int(sum(sizes))
        row.non_trainable += int(sum(np.size(v) for _, v in link.namedpersistent()
                                     if isinstance(v, np.ndarray)))


def _possible_scopes(step: OpStep, model: SpecModel) -> list[str]:
    """The scopes of ``step``'s layer: its name, or ``name_0``, ``name_1``, ... in an unrolled
    repeat."""
    names = [path.lstrip("/") for path, _ in model.namedlinks(skipself=True)
             if path.count("/") == 1]
    if step.name in names:
        return [step.name]
    prefix = f"{step.name}_"
    return [n for n in names if n.startswith(prefix) and n[len(prefix):].isdigit()]
