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
from graphcore.computational_graph import (
    ComputationalGraph,
    _escape,
    _format_attributes,
    build_computational_graph,
)
from graphcore.function_node import FunctionNode
from graphcore.spec.inputs import make_inputs
from graphcore.spec.interpreter import SpecModel, _example_count, _Run, build_model, seeded
from graphcore.spec.model import ForEachStep, RepeatStep, Spec, Step
from graphcore.variable import Parameter, Variable

Scope = tuple[tuple[Step, int], ...]  # the loop iterations around an op, outermost first
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
    inputs = _as_variables(arrays)
    run, roots, examples = _run_last_example(spec, model, inputs, seed)
    with _parameters_named_by_path(model):
        graph = build_computational_graph(roots, rankdir=rankdir)
        dot, clusters = _dump_with_clusters(graph, run, expand)
    return Drawing(spec=spec.name, dot=dot, nodes=len(graph.nodes), clusters=clusters,
                   example=examples - 1, examples=examples, locations=_locations(run, graph))


def _locations(run: _Run, graph: ComputationalGraph) -> dict[str, str]:
    """Each drawn node's spec step (``"line:col"``): a FunctionNode's is the op step that
    created it, a Variable's its creator's. Inputs and parameters have none."""
    steps: dict[int, str] = {}
    for step, result, args, _ in run.produced:
        stop = {id(a) for a in args}
        stack = [v for v in (result if isinstance(result, tuple) else (result,))
                 if isinstance(v, Variable)]
        while stack:
            v = stack.pop()
            node = v.creator
            if id(v) in stop or node is None or id(node) in steps:
                continue
            steps[id(node)] = f"{step.loc.line}:{step.loc.col}"
            stack.extend(node.inputs)
    out = {}
    for number, node in enumerate(graph.nodes):
        creator = node if isinstance(node, FunctionNode) else node.creator
        if creator is not None and id(creator) in steps:
            out[str(number)] = steps[id(creator)]
    return out


def _draw_ir(spec: Spec, arrays: Mapping[str, Any], seed: int, rankdir: str,
             passes: Sequence[str] | None) -> dict[str, Drawing]:
    """The traced IR and the optimized IR of one static-mode run (the last example's plan)."""
    from graphcore.static.drawing import graph_to_dot
    from graphcore.static.spec_mode import StaticSpecRunner

    runner = StaticSpecRunner(spec, build_model(spec, seed), passes=passes)
    result = runner.run(arrays, seed=seed)
    variant = runner.last
    out = {}
    for stage, graph in (("ir", variant.trace.graph), ("optimized", variant.plan.graph)):
        out[stage] = Drawing(spec=spec.name, dot=graph_to_dot(graph, rankdir).rstrip("\n"),
                             nodes=len(graph.nodes), clusters=0, example=result.examples - 1,
                             examples=result.examples, text=graph.text())
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
                      ) -> tuple[_Run, list[Variable], int]:
    """Run every example as ``run_spec`` does (same seeding); keep the last run's graph."""
    n = _example_count(spec, inputs)
    with seeded(seed + 1):
        for i in range(n):
            example = {k: (v[i] if isinstance(v, list) else v) for k, v in inputs.items()}
            run = _Run(spec, model, example, [])
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


def _scopes(run: _Run, graph: ComputationalGraph) -> dict[int, Scope]:
    """The loop iterations each FunctionNode was created in, keyed by ``id(node)``.

    An op created exactly the nodes between its result and its inputs. The few nodes the
    interpreter makes outside any op (``for_each``'s slice ``x_t = s[t]`` and the stack of
    collected values) join the innermost iteration shared by all their consumers: the slice
    lands in its iteration, the stack (used after the loop, or by nothing) outside it."""
    scopes = _op_scopes(run)
    consumers: dict[int, list[FunctionNode]] = {}
    for head, tail in graph.edges:
        if isinstance(head, Variable) and head.creator is not None:
            consumers.setdefault(id(head.creator), []).append(tail)
    made_outside_ops = [node for node in graph.nodes
                        if isinstance(node, FunctionNode) and id(node) not in scopes]
    for node in sorted(made_outside_ops, key=lambda n: -n.rank):  # consumers first
        shared = [scopes.get(id(c), ()) for c in consumers.get(id(node), [])]
        scopes[id(node)] = _common_prefix(shared) if shared else ()
    return scopes


def _common_prefix(scopes: list[Scope]) -> Scope:
    prefix = scopes[0]
    for scope in scopes[1:]:
        n = 0
        while (n < min(len(prefix), len(scope)) and prefix[n][0] is scope[n][0]
               and prefix[n][1] == scope[n][1]):
            n += 1
        prefix = prefix[:n]
    return prefix


def _op_scopes(run: _Run) -> dict[int, Scope]:
    """The scope of every FunctionNode an op step created (see ``_scopes``). A layer whose
    one step made several function nodes (attention, layer normalization, an LSTM) adds a
    ``(step, LAYER)`` level, so its nodes are drawn in one cluster named by its scope; a layer
    of one node (a linear layer) adds none, keeping Chainer's plain dump."""
    scopes: dict[int, Scope] = {}
    for step, result, args, enclosing in run.produced:
        stop = {id(a) for a in args}
        stack = [v for v in (result if isinstance(result, tuple) else (result,))
                 if isinstance(v, Variable)]
        made: list[int] = []
        while stack:
            v = stack.pop()
            node = v.creator
            if id(v) in stop or node is None or id(node) in scopes:
                continue
            scopes[id(node)] = enclosing
            made.append(id(node))
            stack.extend(node.inputs)
        if getattr(step, "layer", False) and len(made) > 1:
            for key in made:
                scopes[key] = (*enclosing, (step, LAYER))
    return scopes


@dataclass
class _Cluster:
    label: str | None
    style: dict[str, str] = field(default_factory=dict)
    nodes: list[int] = field(default_factory=list)  # DOT ids
    children: dict[tuple[int, int], _Cluster] = field(default_factory=dict)
    placeholder: tuple[str, str] | None = None  # (DOT id, label) of collapsed iterations


LOOP_STYLE = {"style": "rounded", "color": "#808080"}
LAYER_STYLE = {"style": "rounded,filled", "color": "#7FA7D9", "fillcolor": "#F3F7FC"}
LAYER = -2  # the iteration index a layer's scope level carries (loops' are 0, 1, ...)
ITERATION_STYLE = {"style": "dashed", "color": "#A0A0A0"}


def _dump_with_clusters(graph: ComputationalGraph, run: _Run,
                        expand: bool = True) -> tuple[str, int]:
    """``graph.dump()`` with each node declared inside its loop iteration's cluster, and the
    number of clusters. Clusters come in the order the loops ran. Unless ``expand``, a loop
    that ran more than ``COLLAPSE_ABOVE`` iterations is drawn with its first iteration and one
    node standing for the rest (see ``_collapse``)."""
    root = _Cluster(None)
    for *_, enclosing in run.produced:
        _cluster_for(root, enclosing)
    scopes = _scopes(run, graph)
    for number, node in enumerate(graph.nodes):
        creator = node if isinstance(node, FunctionNode) else node.creator
        scope = scopes.get(id(creator), ()) if creator is not None else ()
        _cluster_for(root, scope).nodes.append(number)
    _move_weights_into_layers(root, graph)
    if not any(_drawn(child) for child in root.children.values()):
        return graph.dump(), 0
    standing_for: dict[int, str] = {}  # a node of a collapsed iteration -> the node drawn
    if not expand:
        _collapse(root, standing_for)
    parts = [f"digraph graphname{{rankdir={graph.rankdir};"]
    clusters = _write_cluster(root, graph, parts, 0)
    ids = {id(node): number for number, node in enumerate(graph.nodes)}
    seen: set[tuple[str, str]] = set()
    for head, tail in graph.edges:
        h, t = ids[id(head)], ids[id(tail)]
        edge = (standing_for.get(h, str(h)), standing_for.get(t, str(t)))
        if edge[0] == edge[1] or edge in seen:
            continue
        seen.add(edge)
        parts.append(f"{edge[0]} -> {edge[1]};")
    parts.append("}")
    return "".join(parts), clusters


def _move_weights_into_layers(root: _Cluster, graph: ComputationalGraph) -> None:
    """Draw a layer's parameters (``attention/W_q``) inside its cluster when the layer ran once
    outside any loop; inside a loop they stay outside, shared by every iteration."""
    layers = {child.label.split(" ")[0]: child for key, child in root.children.items()
              if key[1] == LAYER}
    kept = []
    for number in root.nodes:
        node = graph.nodes[number]
        scope = node.name.split("/")[0] if isinstance(node, Parameter) and node.name else None
        if scope in layers:
            layers[scope].nodes.append(number)
        else:
            kept.append(number)
    root.nodes[:] = kept


COLLAPSE_ABOVE = 3  # loops with more iterations are drawn collapsed unless expand
COLLAPSED_STYLE = 'shape="note",style="dashed,filled",fillcolor="#F4F4F4",color="#808080"'


def _collapse(cluster: _Cluster, standing_for: dict[int, str]) -> None:
    """Draw each long loop as its first iteration plus one node for the other iterations
    (their label names them and the trip count); every node of those iterations maps, in
    ``standing_for``, to that node's DOT id, so edges into and out of them (the carried state,
    the loop's result) end there. Loops inside the kept iteration are collapsed too."""
    for key, child in list(cluster.children.items()):
        iterations = [c for k, c in child.children.items() if k[1] >= 0 and _drawn(c)]
        if key[1] == -1 and len(iterations) > COLLAPSE_ABOVE:
            rest = iterations[1:]
            name = f"rest{len(set(standing_for.values()))}"  # sequential: stable DOT
            first_label, last_label = rest[0].label, rest[-1].label
            child.label = f"{child.label} ({len(iterations)} iterations)"
            child.placeholder = (name, f"{first_label} … {last_label.split(' = ')[1]}\\n"
                                       f"{len(rest)} more iterations (--expand draws them)")
            for iteration in rest:
                for number in _all_nodes(iteration):
                    standing_for[number] = name
                iteration.nodes.clear()
                iteration.children.clear()
        _collapse(child, standing_for)


def _all_nodes(cluster: _Cluster) -> list[int]:
    return [*cluster.nodes, *(n for c in cluster.children.values() for n in _all_nodes(c))]


def _cluster_for(root: _Cluster, scope: Scope) -> _Cluster:
    """The iteration cluster for ``scope``, creating the loop and iteration clusters on the
    way down. Iterations are keyed by index, loop runs by the loop step's identity."""
    cluster = root
    for loop, index in scope:
        if index == LAYER:
            if (id(loop), LAYER) not in cluster.children:
                cluster.children[id(loop), LAYER] = _Cluster(f"{loop.name} ({loop.op})",
                                                             LAYER_STYLE)
            cluster = cluster.children[id(loop), LAYER]
            continue
        run_key = (id(loop), -1)
        if run_key not in cluster.children:
            cluster.children[run_key] = _Cluster(f"{_loop_kind(loop)} at {loop.loc}",
                                                 LOOP_STYLE)
        cluster = cluster.children[run_key]
        if (id(loop), index) not in cluster.children:
            var = "t" if isinstance(loop, ForEachStep) else "i"
            cluster.children[id(loop), index] = _Cluster(f"{var} = {index}", ITERATION_STYLE)
        cluster = cluster.children[id(loop), index]
    return cluster


def _write_cluster(cluster: _Cluster, graph: ComputationalGraph, parts: list[str],
                   next_id: int) -> int:
    """Declare the cluster's nodes, then its sub-clusters that draw anything; return the next
    free cluster id (clusters are numbered in the order they are written)."""
    for number in cluster.nodes:
        parts.append(f"{number} [{_format_attributes(graph._attributes(graph.nodes[number]))}];")
    for child in cluster.children.values():
        if not _drawn(child):
            continue
        parts.append(f'subgraph cluster_{next_id}{{label="{_escape(child.label)}";')
        parts.extend(f'{key}="{value}";' for key, value in child.style.items())
        next_id = _write_cluster(child, graph, parts, next_id + 1)
        if child.placeholder is not None:
            name, label = child.placeholder
            parts.append(f'{name} [label="{_escape(label)}",{COLLAPSED_STYLE}];')
        parts.append("}")
    return next_id


def _drawn(cluster: _Cluster) -> bool:
    """Whether the cluster holds a node, directly or in a sub-cluster."""
    return bool(cluster.nodes) or any(_drawn(child) for child in cluster.children.values())


def _loop_kind(loop: Step) -> str:
    if isinstance(loop, RepeatStep):
        return "repeat"
    return "for_each" if isinstance(loop, ForEachStep) else "while"


# --- PNG ----------------------------------------------------------------------------------
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
