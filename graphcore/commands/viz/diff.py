"""The union of two drawn graphs, coloured by which run each node and edge came from.

``diff_dots(first, second, first_name, second_name)`` reads two DOT texts as this project
writes them (``drawing.draw_spec``'s Chainer-style DOT with its loop clusters, or
``static.drawing.graph_to_dot``'s IR DOT) and returns one DOT text with a legend naming the
two runs. Nodes are matched by structure, not by shape (``graph_alignment``):

- grey: in both runs, the same op on the same inputs;
- grey, dashed outline: in both runs, the same op at the same place of the graph, fed a
  different value (downstream of a difference: what it computes may differ);
- orange (``FIRST_COLOUR``): only in the first run; blue (``SECOND_COLOUR``): only in the second.
  An op replaced by another (``ReLU`` in one run, ``Sigmoid`` in the other) is one of each;
- a node in both whose label differs (a shape: inputs of another length or batch size) shows
  ``first → second``: ``s: (7, 8) → (9, 8), float32``.

Edges are coloured the same way. Clusters are kept: one in both runs (a loop matched by its
kind and position in the spec, not its file or trip count; anything else by its label, inside
the same clusters) is drawn once. With ``collapse``, a loop of more than ``COLLAPSE_ABOVE``
iterations in either run is drawn as its first iteration plus one node for the rest, as
``viz`` draws one run: the runs are aligned on every iteration first, so that node is grey only
when every node it stands for is in both; it names each run's trip count (``t = 1 … 6 → 8``)
and counts the nodes only one run has. Labels carry shapes and dtypes but not data: the diff
shows which graph was built, not the numbers that flowed through it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from graphcore.commands.viz.alignment import SHAPE, align
from graphcore.commands.viz.clusters import COLLAPSE_ABOVE, collapsed_label
from graphcore.commands.viz.dot_reader import DotGraph, DotSyntaxError, parse_dot  # noqa: F401 - parse_dot is this module's too
from graphcore.dot_text import attribute_list, quote

FIRST_COLOUR = "#D55E00"  # vermillion: only in the first run
SECOND_COLOUR = "#0072B2"  # blue: only in the second run
SHARED_COLOUR = "#A0A0A0"  # grey: in both
FED_COLOUR = "#606060"  # dark grey, dashed: in both, fed a different value
SHARED_FILL = "#F0F0F0"
FIRST_FILL = "#F9D9C6"
SECOND_FILL = "#CCE3F2"
ARROW = " → "

# A loop run's cluster label (drawing_clusters): "for_each at specs/x.yaml:13:5 (7 iterations)"
_LOOP = re.compile(r"(?P<head>\S+ at )(?P<file>.*?)(?P<where>:\d+:\d+)"
                   r"(?: \((?P<trips>\d+) iterations\))?")
_ITERATION = re.compile(r"(?P<var>[it]) = (?P<index>\d+)")
_LABEL_TOKEN = re.compile(SHAPE.pattern + r"|\\.|\w+|\s+|.", re.S)
_CHANGE = re.compile(rf"(?:{SHAPE.pattern}|\w+){ARROW}(?:{SHAPE.pattern}|\w+)")

Key = tuple[str, str]  # a union node: ("a", first-run id), ("b", second-run id), ("rest", n)


@dataclass(frozen=True)
class GraphDiff:
    """The union drawing and what it holds: the labels of every node of both runs, collapsed
    or not, in order (a label that differs between the runs as ``first → second``)."""

    dot: str
    only_first: list[str]
    only_second: list[str]
    shared: list[str]  # in both: the same op on the same inputs
    fed_differently: list[str] = field(default_factory=list)  # in both, other inputs
    changed: list[str] = field(default_factory=list)  # in both, with a label that differs
    clusters: int = 0  # loop and layer clusters drawn (the legend's not counted)


def diff_dots(first: str, second: str, first_name: str, second_name: str, *,
              both: str = "", collapse: bool = False) -> GraphDiff:
    """The union of two DOT graphs, coloured by origin, with a legend naming the runs (and
    ``both``, what the two runs share, in its title); ``collapse`` draws long loops as their
    first iteration and one node for the rest."""
    a, b = parse_dot(first), parse_dot(second)
    alignment = align(a, b)
    first_of = {g: h for h, g in alignment.pairs.items()}
    union = _Union(a, b)
    changed: list[str] = []
    for name, attributes in a.nodes.items():
        partner = alignment.pairs.get(name)
        if partner is None:
            union.add(("a", name), attributes, _label(attributes), "first", a.placement[name])
            continue
        label = changed_label(_label(attributes), _label(b.nodes[partner]))
        if label != _label(attributes):
            changed.append(label)
        origin = "shared" if name in alignment.exact else "fed"
        union.add(("a", name), attributes, label, origin, a.placement[name])
    for name, attributes in b.nodes.items():
        if name not in first_of:
            union.add(("b", name), attributes, _label(attributes), "second", b.placement[name])
    labels = {origin: [label for label, o in union.labels() if o == origin]
              for origin in _COLOURS}
    for head, tail in a.edges:
        union.add_edge(("a", head), ("a", tail), "a")
    for head, tail in b.edges:
        union.add_edge(_in_union(head, first_of), _in_union(tail, first_of), "b")
    if collapse:
        union.collapse()
    parts = [f"digraph diff{{rankdir={a.attributes.get('rankdir', 'TB')};"]
    clusters = union.write(parts)
    drawn = union.drawn_labels()
    parts.append(_legend(first_name, second_name, both,
                         has_fed=any(o == "fed" for _, o in drawn),
                         change=_example_change([label for label, _ in drawn])))
    parts.append("}")
    return GraphDiff(dot="".join(parts), only_first=labels["first"],
                     only_second=labels["second"], shared=labels["shared"],
                     fed_differently=labels["fed"], changed=changed, clusters=clusters)


def changed_label(first: str, second: str) -> str:
    """One label for a node in both runs: the first's, with each part that differs written
    ``first → second`` (shapes are single parts: ``(7, 8) → (9, 8), float32``)."""
    if first == second:
        return first
    tokens_a, tokens_b = _LABEL_TOKEN.findall(first), _LABEL_TOKEN.findall(second)
    out = []
    matcher = difflib.SequenceMatcher(None, tokens_a, tokens_b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        part_a, part_b = "".join(tokens_a[i1:i2]), "".join(tokens_b[j1:j2])
        out.append(part_a if op == "equal" else f"{part_a}{ARROW}{part_b}")
    return "".join(out)


def _example_change(labels: list[str]) -> str | None:
    """The legend's example of a label that differs: a shape if one does, else the first."""
    changes = [m.group(0) for label in labels for m in _CHANGE.finditer(label)]
    shapes = [c for c in changes if SHAPE.match(c)]
    return (shapes or changes or [None])[0]


def _in_union(name: str, first_of: dict[str, str]) -> Key:
    return ("a", first_of[name]) if name in first_of else ("b", name)


def _label(attributes: dict[str, str]) -> str:
    return attributes.get("label", "")


def _both(first: int | None, second: int | None) -> str:
    """``6``, or ``6 → 8`` where the runs differ (``None``: a run without it)."""
    if first is None or second is None or first == second:
        return str(first if second is None else second)
    return f"{first}{ARROW}{second}"


@dataclass
class _Node:
    attributes: dict[str, str]
    origin: str  # first, second, shared, fed


class _Union:
    """The union's nodes in a tree of the two runs' clusters (merged where both runs have the
    same cluster in the same place) and its edges, each with the runs that have it."""

    def __init__(self, a: DotGraph, b: DotGraph) -> None:
        self.nodes: dict[Key, _Node] = {}
        self.edges: dict[tuple[Key, Key], set[str]] = {}
        self.root = _Cluster({})
        self.cluster_of: dict[tuple[str, str | None], _Cluster] = {}
        for run, graph in (("a", a), ("b", b)):
            self.cluster_of[run, None] = self.root
            trips = _trip_counts(graph)
            for name, attributes in graph.clusters.items():  # a parent before its children
                parent = self.cluster_of[run, graph.cluster_parent[name]]
                key = _cluster_key(_label(attributes))
                child = parent.children.setdefault(key, _Cluster(dict(attributes)))
                child.trips[run] = trips.get(name)
                self.cluster_of[run, name] = child

    def add(self, key: Key, attributes: dict[str, str], label: str, origin: str,
            cluster: str | None) -> None:
        drawn = {k: v for k, v in attributes.items() if k != "tooltip"}
        drawn["label"] = label
        self.nodes[key] = _Node(drawn, origin)
        self.cluster_of[key[0], cluster].nodes.append(key)

    def add_edge(self, head: Key, tail: Key, run: str) -> None:
        self.edges.setdefault((head, tail), set()).add(run)

    def labels(self) -> list[tuple[str, str]]:
        return [(_label(n.attributes), n.origin) for n in self.nodes.values()]

    def drawn_labels(self) -> list[tuple[str, str]]:
        return [(_label(self.nodes[k].attributes), self.nodes[k].origin)
                for k in self.root.all_nodes()]

    def collapse(self) -> None:
        """Each loop of more than ``COLLAPSE_ABOVE`` iterations (in either run) as its first
        iteration and one node standing for the others; edges to and from the nodes it stands
        for end there (once each, the runs of all those edges together)."""
        standing_for: dict[Key, Key] = {}
        self.root.collapse(self, standing_for)
        edges: dict[tuple[Key, Key], set[str]] = {}
        for (head, tail), runs in self.edges.items():
            edge = (standing_for.get(head, head), standing_for.get(tail, tail))
            if edge[0] != edge[1]:
                edges.setdefault(edge, set()).update(runs)
        self.edges = edges

    def write(self, parts: list[str]) -> int:
        """Nodes, the clusters that hold any, then edges; the number of clusters written."""
        ids = {key: f"n{number}" for number, key in enumerate(self.nodes)}
        clusters = self.root.write(parts, 0, self.nodes, ids)
        for (head, tail), runs in self.edges.items():
            origin = _origin("a" in runs, "b" in runs)
            width = "1" if origin == "shared" else "2"
            parts.append(f'{ids[head]} -> {ids[tail]} [color="{_COLOURS[origin]}",'
                         f'penwidth="{width}"];')
        return clusters


class _Cluster:
    def __init__(self, attributes: dict[str, str]) -> None:
        self.attributes = attributes
        self.nodes: list[Key] = []
        self.children: dict[str, _Cluster] = {}
        self.trips: dict[str, int | None] = {}  # run ("a"/"b") -> its trip count (loops)
        self.collapsed = False

    def all_nodes(self) -> list[Key]:
        return [*self.nodes, *(k for c in self.children.values() for k in c.all_nodes())]

    def iterations(self) -> list[tuple[int, _Cluster]]:
        """A loop cluster's iterations that hold nodes, by index."""
        found = [(int(m.group("index")), child) for key, child in self.children.items()
                 if (m := _ITERATION.fullmatch(key)) and child.all_nodes()]
        return sorted(found, key=lambda item: item[0])

    def collapse(self, union: _Union, standing_for: dict[Key, Key]) -> None:
        for key, child in self.children.items():
            iterations = child.iterations()
            if _LOOP.fullmatch(key) and len(iterations) > COLLAPSE_ABOVE:
                rest_key = ("rest", str(sum(k[0] == "rest" for k in union.nodes)))
                hidden = [k for _, c in iterations[1:] for k in c.all_nodes()]
                for k in hidden:
                    standing_for[k] = rest_key
                union.nodes[rest_key] = child.rest_node(iterations, hidden, union.nodes)
                child.nodes.append(rest_key)
                for _, iteration in iterations[1:]:
                    iteration.nodes.clear()
                    iteration.children.clear()
                child.collapsed = True
            child.collapse(union, standing_for)

    def rest_node(self, iterations: list[tuple[int, _Cluster]], hidden: list[Key],
                  nodes: dict[Key, _Node]) -> _Node:
        """The node standing for ``iterations[1:]``: each run's range and count in its label,
        with how many of its nodes only one run has; grey when all are in both."""
        origins = [nodes[k].origin for k in hidden]
        var = _ITERATION.fullmatch(_label(iterations[1][1].attributes)).group("var")
        trips = {run: n for run, n in self.trips.items() if n is not None}
        last = {run: n - 1 for run, n in trips.items() if n > 1}
        label = collapsed_label(f"{var} = {iterations[1][0]}",
                                _both(last.get("a"), last.get("b")),
                                _both(*(trips[r] - 1 if r in trips else None for r in "ab")))
        only = [f"{origins.count(o)} nodes only in the {which} run"
                for o, which in (("first", "first"), ("second", "second")) if o in origins]
        if only:
            label += "\n" + ", ".join(only)
        # one origin for all: that one; a mix: in both, with what differs counted above
        origin = origins[0] if all(o == origins[0] for o in origins) else "fed"
        return _Node({"label": label, "shape": "note"}, origin)

    def write(self, parts: list[str], number: int, nodes: dict[Key, _Node],
              ids: dict[Key, str]) -> int:
        for key in self.nodes:
            node = nodes[key]
            drawn = node.attributes | _node_style(node.origin)
            parts.append(f"{ids[key]} [{attribute_list(drawn)}];")
        for child in self.children.values():
            if not child.all_nodes():
                continue
            parts.append(f"subgraph cluster_{number}{{")
            number += 1
            attributes = dict(child.attributes)
            attributes["label"] = child.label()
            parts.extend(f"{k}={quote(v)};" for k, v in attributes.items())
            number = child.write(parts, number, nodes, ids)
            parts.append("}")
        return number

    def label(self) -> str:
        """The cluster's label; a loop's gives each run's trip count where they differ, and
        its trip count when it is drawn collapsed."""
        label = _label(self.attributes)
        match = _LOOP.fullmatch(label)
        trips_a, trips_b = self.trips.get("a"), self.trips.get("b")
        differ = None not in (trips_a, trips_b) and trips_a != trips_b
        if match is None or not (self.collapsed or differ):
            return label
        return f"{label[:match.end('where')]} ({_both(trips_a, trips_b)} iterations)"


def _cluster_key(label: str) -> str:
    """What identifies a cluster across runs: a loop by its kind and position in the spec
    (not the spec file, not the trip count), anything else by its label."""
    match = _LOOP.fullmatch(label)
    return label if match is None else match.group("head") + match.group("where")


def _trip_counts(graph: DotGraph) -> dict[str, int]:
    """Each loop cluster's trip count: the one its label gives (a collapsed loop), else its
    iteration clusters counted."""
    iterations: dict[str | None, int] = {}
    for name, parent in graph.cluster_parent.items():
        if _ITERATION.fullmatch(_label(graph.clusters[name])):
            iterations[parent] = iterations.get(parent, 0) + 1
    counts = {}
    for name, attributes in graph.clusters.items():
        match = _LOOP.fullmatch(_label(attributes))
        if match is not None:
            trips = match.group("trips")
            counts[name] = int(trips) if trips else iterations.get(name, 0)
    return counts


_COLOURS = {"first": FIRST_COLOUR, "second": SECOND_COLOUR, "shared": SHARED_COLOUR,
            "fed": FED_COLOUR}
_FILLS = {"first": FIRST_FILL, "second": SECOND_FILL, "shared": SHARED_FILL,
          "fed": SHARED_FILL}


def _origin(in_first: bool, in_second: bool) -> str:
    if in_first and in_second:
        return "shared"
    return "first" if in_first else "second"


def _node_style(origin: str) -> dict[str, str]:
    return {"color": _COLOURS[origin], "fillcolor": _FILLS[origin],
            "style": "filled,dashed" if origin == "fed" else "filled",
            "fontcolor": "#404040" if origin in ("shared", "fed") else "#000000",
            "penwidth": {"shared": "1", "fed": "1.5"}.get(origin, "2")}


def _legend(first_name: str, second_name: str, both: str, *, has_fed: bool,
            change: str | None) -> str:
    rows = [("first", f"only in {first_name}"), ("second", f"only in {second_name}"),
            ("shared", "in both")]
    if has_fed:
        rows.append(("fed", "in both, fed a different value\n(what it computes may differ)"))
    if change is not None:
        rows.append(("shared", f"{change}: in both, differs\n(first run{ARROW}second run)"))
    title = "legend" if not both else f"legend (both runs: {both})"
    parts = [f'subgraph cluster_legend{{label={quote(title)};style="rounded";color="#808080";']
    for number, (origin, text) in enumerate(rows):
        style = _node_style(origin) | {"shape": "box", "label": text}
        parts.append(f"legend{number} [{attribute_list(style)}];")
    parts.extend(f'legend{n} -> legend{n + 1} [style="invis"];' for n in range(len(rows) - 1))
    parts.append("}")
    return "".join(parts)
