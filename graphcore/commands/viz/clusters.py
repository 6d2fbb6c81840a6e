"""The clusters of an executed spec's drawing: each function node's scope (the loop bodies and
iterations it ran in, the multi-node layer it belongs to), the cluster tree built from those
scopes, loops of more than ``COLLAPSE_ABOVE`` iterations collapsed to their first iteration
plus one node standing for the rest, and the DOT text with the clusters written in
(``dump_with_clusters``). ``drawing`` documents what a drawing shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graphcore.computational_graph import ComputationalGraph
from graphcore.dot_text import attribute_list, quote
from graphcore.function_node import FunctionNode
from graphcore.interpreter.forward import ForwardPass
from graphcore.language.syntax import ForEachStep, RepeatStep, Step
from graphcore.variable import Parameter, Variable

Scope = tuple[tuple[Step, int], ...]  # the loop iterations around an op, outermost first


def _scopes(run: ForwardPass, graph: ComputationalGraph) -> dict[int, Scope]:
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


def _op_scopes(run: ForwardPass) -> dict[int, Scope]:
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


def dump_with_clusters(graph: ComputationalGraph, run: ForwardPass,
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
COLLAPSED_PREFIX = "rest"  # DOT id of a node standing for collapsed iterations: rest0, rest1
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
            name = f"{COLLAPSED_PREFIX}{len(set(standing_for.values()))}"  # sequential: stable
            first_label, last_label = rest[0].label, rest[-1].label
            child.label = f"{child.label} ({len(iterations)} iterations)"
            child.placeholder = (name, collapsed_label(first_label, last_label.split(" = ")[1],
                                                       str(len(rest))))
            for iteration in rest:
                for number in _all_nodes(iteration):
                    standing_for[number] = name
                iteration.nodes.clear()
                iteration.children.clear()
        _collapse(child, standing_for)


def collapsed_label(first: str, last: str, more: str) -> str:
    """The label of the node standing for collapsed iterations, two lines:
    ``collapsed_label("t = 1", "6", "6")`` is ``"t = 1 … 6\\n6 more iterations (--expand draws
    them)"``."""
    return f"{first} … {last}\n{more} more iterations (--expand draws them)"


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
        parts.append(f"{number} [{attribute_list(graph._attributes(graph.nodes[number]))}];")
    for child in cluster.children.values():
        if not _drawn(child):
            continue
        parts.append(f"subgraph cluster_{next_id}{{label={quote(child.label)};")
        parts.extend(f"{key}={quote(value)};" for key, value in child.style.items())
        next_id = _write_cluster(child, graph, parts, next_id + 1)
        if child.placeholder is not None:
            name, label = child.placeholder
            parts.append(f"{name} [label={quote(label)},{COLLAPSED_STYLE}];")
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
