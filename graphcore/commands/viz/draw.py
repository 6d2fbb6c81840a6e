"""Draw the graph one run of a spec records, as Chainer would draw it, with loops as clusters.

``draw_spec(spec)`` runs the spec forward once (the interpreter, no backward) and returns a
``Drawing`` whose ``dot`` is ``build_computational_graph``'s DOT for the outputs and the loss:
Chainer's labels and styles, parameters named by their path (``l1/W: (5, 4), float32``) and
inputs by their name (``x: (3, 4), float32``). What a loop body computed is grouped in DOT
clusters, one per loop run (``repeat at specs/param_depth.yaml:13:5``) holding one per
iteration (``i = 0``; ``t = 0`` for ``for_each``); a loop inside a loop body nests inside that
iteration's cluster. Variables a loop created sit with the function that created them;
parameters, inputs and constants stay outside every cluster (they are shared). Without loops
the text is exactly ``build_computational_graph(...).dump()``::

    digraph graphname{rankdir=TB;...;subgraph cluster_0{label="repeat at ...";...;
    subgraph cluster_1{label="i = 0";...;3 [label="Tanh",...];}};...;1 -> 0;...}

With sequence inputs (``lengths``) the graph runs once per example; the drawing shows the
last example's graph (all examples run, so dropout draws the same numbers as ``run``).
A layer whose step made several function nodes (attention, an LSTM) is a cluster
too, named by its scope (``attention (multi_head_attention)``), holding its own weights when it
ran once outside loops. With ``expand=False`` a loop of more than ``COLLAPSE_ABOVE`` iterations
is drawn as its first iteration plus one node standing for the rest (``t = 1 … 6``), the loop's
label giving the trip count. Node and cluster ids are sequential, so the same spec, seed and
inputs give byte-identical DOT. ``render_png(dot)`` turns DOT into PNG bytes (``render_svg``
into SVG text) with Graphviz ``dot`` or ``graphviz-pure``. Nothing here prints or writes files.

``draw_stages(spec, stages)`` draws several stages from one set of inputs (read once, so an
input on stdin serves them all): ``executed`` is ``draw_spec``'s drawing; ``ir`` and
``optimized`` run the spec once in static mode (forward and, with a loss, backward) and draw
the IR the trace recorded and the IR after the passes (``passes`` selects them) with
``graphcore.static.drawing.graph_to_dot``; their ``Drawing.text`` is the IR's text form.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from graphcore import errors
from graphcore.commands.viz.clusters import COLLAPSE_ABOVE, dump_with_clusters  # noqa: F401
from graphcore.computational_graph import (
    ComputationalGraph,
    build_computational_graph,
)
from graphcore.function_node import FunctionNode
from graphcore.inputs.make import make_inputs
from graphcore.interpreter.examples import example_count, example_rows
from graphcore.interpreter.forward import ForwardPass
from graphcore.interpreter.parameters import SpecModel, build_model, seeded
from graphcore.interpreter.preprocessing import prepare_inputs
from graphcore.language.syntax import Spec
from graphcore.spec_static.runner import StaticSpecRunner
from graphcore.static.drawing import graph_to_dot
from graphcore.variable import Variable

RENDER_TIMEOUT_S = 120
STAGES = ("executed", "ir", "optimized")


@dataclass(frozen=True)
class Drawing:
    """The DOT text of one run, and what it shows."""

    spec: str  # the spec's name
    dot: str
    nodes: int  # Variables and FunctionNodes drawn
    clusters: int  # DOT clusters (loop runs and their iterations)
    example: int  # the example drawn (0-based)
    examples: int  # how many examples the run had
    text: str | None = None  # ir / optimized stages: the IR's text form
    # executed stage: DOT node id -> "line:col" of the spec step whose op made that node
    locations: Mapping[str, str] = field(default_factory=dict)


def draw_spec(spec: Spec, *, seed: int | None = None,
              input_overrides: Mapping[str, str] | None = None, stdin: BinaryIO | None = None,
              rankdir: str = "TB", expand: bool = True) -> Drawing:
    """Run ``spec`` forward once and draw the graph behind its outputs and loss.

    ``input_overrides`` and ``stdin`` are ``make_inputs``'s (``--input name=PATH``);
    ``rankdir`` is Graphviz's (TB, BT, LR, RL). Raises what loading inputs and running raise
    (``SpecError``, ``SpecRuntimeError``, ``FileNotFoundError``).

    >>> draw_spec(load_spec_file("specs/seed_static.yaml")).dot[:40]
    'digraph graphname{rankdir=TB;0 [label="f'
    """
    seed = spec.seed if seed is None else seed
    arrays = make_inputs(spec.inputs, seed, spec.folder, input_overrides, stdin)
    return _draw_executed(spec, arrays, seed, rankdir, expand)


def draw_stages(spec: Spec, stages: Sequence[str] = ("executed",), *, seed: int | None = None,
                input_overrides: Mapping[str, str] | None = None,
                stdin: BinaryIO | None = None, rankdir: str = "TB",
                passes: Sequence[str] | None = None, expand: bool = True
                ) -> dict[str, Drawing]:
    """One ``Drawing`` per stage (``executed``, ``ir``, ``optimized``), in the order asked.

    The inputs are made once and shared; ``ir`` and ``optimized`` come from one static-mode
    run (``passes`` as ``graphcore.static.passes.select`` reads them: an unknown stage or pass
    raises ``ValueError``; a spec static mode cannot trace raises ``TraceError``)."""
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise ValueError(f"unknown stage {unknown[0]!r}; stages: {', '.join(STAGES)}")
    seed = spec.seed if seed is None else seed
    arrays = make_inputs(spec.inputs, seed, spec.folder, input_overrides, stdin)
    drawings: dict[str, Drawing] = {}
    if "executed" in stages:
        drawings["executed"] = _draw_executed(spec, arrays, seed, rankdir, expand)
    if "ir" in stages or "optimized" in stages:
        drawings.update(_draw_ir(spec, arrays, seed, rankdir, passes))
    return {stage: drawings[stage] for stage in stages}


def _draw_executed(spec: Spec, arrays: Mapping[str, Any], seed: int, rankdir: str,
                   expand: bool = True) -> Drawing:
    model = build_model(spec, seed)
    inputs = _as_variables(example_rows(spec, prepare_inputs(spec, model, arrays)))
    run, roots, examples = _run_last_example(spec, model, inputs, seed)
    with _parameters_named_by_path(model):
        graph = build_computational_graph(roots, rankdir=rankdir)
        dot, clusters = dump_with_clusters(graph, run, expand)
    return Drawing(spec=spec.name, dot=dot, nodes=len(graph.nodes), clusters=clusters,
                   example=examples - 1, examples=examples, locations=_locations(run, graph))


def _locations(run: ForwardPass, graph: ComputationalGraph) -> dict[str, str]:
    """Each drawn node's spec step (``"line:col"``): a FunctionNode's is the op step that
    created it, a Variable's its creator's. Inputs and parameters have none."""
    steps = run.op_locations()
    out = {}
    for number, node in enumerate(graph.nodes):
        creator = node if isinstance(node, FunctionNode) else node.creator
        if creator is not None and id(creator) in steps:
            out[str(number)] = steps[id(creator)]
    return out


def _draw_ir(spec: Spec, arrays: Mapping[str, Any], seed: int, rankdir: str,
             passes: Sequence[str] | None) -> dict[str, Drawing]:
    """The traced IR and the optimized IR of one static-mode run (the last example's plan)."""
    model = build_model(spec, seed)
    runner = StaticSpecRunner(spec, model, passes=passes)
    result = runner.run(prepare_inputs(spec, model, arrays), seed=seed)
    variant = runner.last
    out = {}
    for stage, graph in (("ir", variant.trace.graph), ("optimized", variant.plan.graph)):
        out[stage] = Drawing(spec=spec.name, dot=graph_to_dot(graph, rankdir).rstrip("\n"),
                             nodes=len(graph.nodes), clusters=0, example=result.examples - 1,
                             examples=result.examples, text=graph.text(),
                             locations=_ir_locations(graph, variant.trace.graph,
                                                     variant.locations))
    return out


def _ir_locations(graph: Any, traced_graph: Any, traced: Mapping[int, str]) -> dict[str, str]:
    """Each IR node's spec step (``"line:col"``), by its DOT name (``n<id>``): a node as it was
    traced from an op step's function node has that step's; a ``vjp`` the step of the node it
    differentiates. A node a pass rewrote (a fusion keeps one of its sources' ids, not its op)
    and inputs and parameters have none."""
    ops = {n.id: n.op for n in traced_graph.nodes}
    out = {}
    for node in graph.nodes:
        if node.op == "vjp" and node.inputs:  # the node it differentiates, if still that op
            source, op = node.inputs[0], node.attrs.get("of")
        else:
            source, op = node.id, node.op
        at = traced.get(source) if ops.get(source) == op else None
        if at is not None:
            out[f"n{node.id}"] = at
    return out


def _as_variables(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Inputs as named Variables, so the graph records from them and labels name them.

    Only float inputs ask for a gradient (as in a training run); integer labels are drawn as
    named leaves when an op records a node over them."""

    def wrap(name: str, array: np.ndarray) -> Variable:
        array = np.asarray(array)
        return Variable(array, name=name, requires_grad=array.dtype.kind == "f")

    return {name: [wrap(name, a) for a in value] if isinstance(value, list) else
            wrap(name, value) for name, value in inputs.items()}


def _run_last_example(spec: Spec, model: SpecModel, inputs: Mapping[str, Any], seed: int
                      ) -> tuple[ForwardPass, list[Variable], int]:
    """Run every example as ``run_spec`` does (same seeding); keep the last run's graph."""
    n = example_count(spec, inputs)
    with seeded(seed + 1):
        for i in range(n):
            example = {k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()}
            run = ForwardPass(spec, model, example, [])
            outputs, loss = run.forward()
    roots: dict[int, Variable] = {}
    for value in [*outputs.values(), loss]:
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, Variable):
                roots.setdefault(id(v), v)
    return run, list(roots.values()), n


@contextlib.contextmanager
def _parameters_named_by_path(model: SpecModel) -> Iterator[None]:
    """Name each parameter ``l1/W`` (not ``W``) while the graph is drawn, then restore."""
    saved = [(p, p.name) for _, p in model.namedparams()]
    try:
        for path, p in model.namedparams():
            p.name = path.lstrip("/")
        yield
    finally:
        for p, name in saved:
            p.name = name


def find_renderer() -> list[str] | None:
    """The command that turns DOT on stdin into PNG on stdout: Graphviz ``dot`` when on PATH,
    else ``graphviz-pure`` (on PATH or next to this Python, as in a venv not activated)."""
    dot = shutil.which("dot")
    if dot is not None:
        return [dot, "-Tpng"]
    pure = shutil.which("graphviz-pure") or shutil.which(
        "graphviz-pure", path=str(Path(sys.executable).parent))
    if pure is not None:
        return [pure, "-Tpng"]
    return None


def render_svg(dot: str, timeout_s: float = RENDER_TIMEOUT_S) -> str:
    """SVG text of ``dot`` (the renderer's ``-Tsvg``); raises as ``render_png`` does."""
    return _render(dot, "svg", timeout_s).decode("utf-8")


def render_png(dot: str, timeout_s: float = RENDER_TIMEOUT_S) -> bytes:
    """PNG bytes of ``dot``. Raises ``RendererUnavailable`` when no renderer is installed and
    ``RenderError`` when the renderer fails."""
    return _render(dot, "png", timeout_s)


def _render(dot: str, fmt: str, timeout_s: float) -> bytes:
    command = find_renderer()
    if command is None:
        raise errors.RendererUnavailable(
            f"cannot draw {fmt.upper()}: neither Graphviz `dot` nor `graphviz-pure` was found")
    command = [command[0], f"-T{fmt}"]
    try:
        done = subprocess.run(command, input=dot.encode("utf-8"), capture_output=True,
                              timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise errors.RenderError(f"{Path(command[0]).name} did not finish drawing in "
                                 f"{timeout_s:g} s") from None
    except OSError as e:
        raise errors.RenderError(f"cannot run {command[0]}: {e}") from None
    signature = b"\x89PNG" if fmt == "png" else b"<"
    if done.returncode != 0 or not done.stdout.lstrip().startswith(signature):
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise errors.RenderError(f"{Path(command[0]).name} failed (exit {done.returncode})"
                                 + (f": {message[-1]}" if message else ""))
    return done.stdout
