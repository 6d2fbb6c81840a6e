"""The union of two drawn graphs, coloured by which run each node and edge came from.

``diff_dots(first, second, first_name, second_name)`` reads two DOT texts as this project
writes them (``drawing.draw_spec``'s Chainer-style DOT or ``static.drawing.graph_to_dot``'s IR
DOT) and returns one DOT text: the nodes and edges both runs share drawn grey, those only in the
first run in ``FIRST_COLOUR``, those only in the second in ``SECOND_COLOUR``, and a legend
naming the two runs.

Node ids mean nothing across runs (they are sequential), so a node is matched by what it
computes: its label together with the identities of the nodes feeding it, recursively (a
Merkle key over the DAG), plus its occurrence number among equal keys. Two nodes are "shared"
when they have the same label and the same shared inputs all the way down; a node fed by a
node that differs differs too, since it computes from a different value. Labels carry shapes
and dtypes but not data, so the same op on different numbers of the same shape is shared:
the diff shows which graph was built, not which numbers flowed through it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

FIRST_COLOUR = "#D55E00"  # vermillion: only in the first run
SECOND_COLOUR = "#0072B2"  # blue: only in the second run
SHARED_COLOUR = "#A0A0A0"  # grey: in both
SHARED_FILL = "#F0F0F0"
FIRST_FILL = "#F9D9C6"
SECOND_FILL = "#CCE3F2"

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|->|[A-Za-z0-9_.]+|[{}\[\];=,]|\s+|.', re.S)


class DotSyntaxError(ValueError):
    """The text is not DOT as this project writes it."""


@dataclass
class DotGraph:
    """The nodes (id -> attributes, in declaration order), edges and graph attributes of one
    DOT text; clusters are dropped (the union has no single loop structure)."""

    nodes: dict[str, dict[str, str]] = field(default_factory=dict)
    edges: list[tuple[str, str]] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class GraphDiff:
    """The union drawing and what it holds."""

    dot: str
    only_first: list[str]  # labels of the nodes only the first run drew, in its order
    only_second: list[str]
    shared: list[str]


def parse_dot(text: str) -> DotGraph:
    """Nodes, edges and top-level graph attributes of a ``digraph`` (subgraphs flattened)."""
    tokens = [t for t in _TOKEN.findall(text) if not t.isspace()]
    if len(tokens) < 3 or tokens[0] != "digraph":
        raise DotSyntaxError("not a digraph")
    position = 1 if tokens[1] == "{" else 2
    if tokens[position] != "{":
        raise DotSyntaxError("expected '{' after the graph name")
    graph = DotGraph()
    i, depth = position + 1, 1
    while i < len(tokens) and depth:
        token = tokens[i]
        if token == "}":
            depth -= 1
            i += 1
        elif token == "subgraph":
            i += 3 if tokens[i + 2] == "{" else 2  # subgraph NAME {
            depth += 1
        elif token == ";":
            i += 1
        elif i + 1 < len(tokens) and tokens[i + 1] == "=":
            if depth == 1:
                graph.attributes[token] = _unquote(tokens[i + 2])
            i += 3
        elif i + 1 < len(tokens) and tokens[i + 1] == "->":
            graph.edges.append((_unquote(token), _unquote(tokens[i + 2])))
            i += 3
            if i < len(tokens) and tokens[i] == "[":
                _, i = _attributes(tokens, i)
        else:
            name = _unquote(token)
            attributes, i = _attributes(tokens, i + 1) if tokens[i + 1] == "[" else ({}, i + 1)
            graph.nodes.setdefault(name, {}).update(attributes)
    for head, tail in graph.edges:
        graph.nodes.setdefault(head, {})
        graph.nodes.setdefault(tail, {})
    return graph


def _attributes(tokens: list[str], i: int) -> tuple[dict[str, str], int]:
    """The ``[key=value, ...]`` list starting at ``tokens[i] == '['``; the index after it."""
    out: dict[str, str] = {}
    i += 1
    while tokens[i] != "]":
        if tokens[i] == ",":
            i += 1
            continue
        if tokens[i + 1] != "=":
            raise DotSyntaxError(f"expected '=' after {tokens[i]!r}")
        out[tokens[i]] = _unquote(tokens[i + 2])
        i += 3
    return out, i + 1


def _unquote(token: str) -> str:
    if token.startswith('"'):
        return token[1:-1].replace('\\"', '"')  # DOT escapes such as \n stay as they are
    return token


def _quote(value: str) -> str:
    return '"' + value.replace('"', '\\"') + '"'


def _label(attributes: dict[str, str]) -> str:
    return attributes.get("label", "")


def node_keys(graph: DotGraph) -> dict[str, str]:
    """Each node id's identity across runs: its label and its inputs' identities, recursively,
    numbered among equal ones in declaration order."""
    inputs: dict[str, list[str]] = {name: [] for name in graph.nodes}
    for head, tail in graph.edges:
        inputs[tail].append(head)
    structural: dict[str, str] = {}

    def key(name: str) -> str:
        stack = [(name, False)]
        while stack:
            node, ready = stack.pop()
            if node in structural:
                continue
            if not ready:
                stack.append((node, True))
                stack.extend((head, False) for head in inputs[node] if head not in structural)
                continue
            parts = sorted(structural.get(head, "?") for head in inputs[node])
            text = _label(graph.nodes[node]) + "\x00" + "\x01".join(parts)
            structural[node] = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        return structural[name]

    counts: dict[str, int] = {}
    keys: dict[str, str] = {}
    for name in graph.nodes:
        base = key(name)
        counts[base] = counts.get(base, 0) + 1
        keys[name] = f"{base}#{counts[base]}"
    return keys


def diff_dots(first: str, second: str, first_name: str, second_name: str) -> GraphDiff:
    """The union of two DOT graphs, coloured by origin, with a legend naming the runs."""
    a, b = parse_dot(first), parse_dot(second)
    keys_a, keys_b = node_keys(a), node_keys(b)
    in_a, in_b = set(keys_a.values()), set(keys_b.values())
    union: dict[str, dict[str, str]] = {}
    for graph, keys in ((a, keys_a), (b, keys_b)):
        for name, attributes in graph.nodes.items():
            union.setdefault(keys[name], attributes)
    edges_a = [(keys_a[h], keys_a[t]) for h, t in a.edges]
    edges_b = [(keys_b[h], keys_b[t]) for h, t in b.edges]
    edge_set_a, edge_set_b = set(edges_a), set(edges_b)
    ids = {key: f"n{number}" for number, key in enumerate(union)}
    rankdir = a.attributes.get("rankdir", "TB")
    parts = [f"digraph diff{{rankdir={rankdir};"]
    only_first, only_second, shared = [], [], []
    for key, attributes in union.items():
        origin = _origin(key in in_a, key in in_b)
        drawn = dict(attributes)
        drawn.pop("tooltip", None)
        drawn.update(_node_style(origin))
        parts.append(f"{ids[key]} [{_format(drawn)}];")
        {"first": only_first, "second": only_second, "shared": shared}[origin].append(
            _label(attributes))
    seen: set[tuple[str, str]] = set()
    for edge in [*edges_a, *edges_b]:
        if edge in seen:
            continue
        seen.add(edge)
        colour = _COLOURS[_origin(edge in edge_set_a, edge in edge_set_b)]
        width = "1" if colour == SHARED_COLOUR else "2"
        parts.append(f'{ids[edge[0]]} -> {ids[edge[1]]} [color="{colour}",penwidth="{width}"];')
    parts.append(_legend(first_name, second_name))
    parts.append("}")
    return GraphDiff(dot="".join(parts), only_first=only_first, only_second=only_second,
                     shared=shared)


_COLOURS = {"first": FIRST_COLOUR, "second": SECOND_COLOUR, "shared": SHARED_COLOUR}
_FILLS = {"first": FIRST_FILL, "second": SECOND_FILL, "shared": SHARED_FILL}


def _origin(in_first: bool, in_second: bool) -> str:
    if in_first and in_second:
        return "shared"
    return "first" if in_first else "second"


def _node_style(origin: str) -> dict[str, str]:
    return {"color": _COLOURS[origin], "fillcolor": _FILLS[origin], "style": "filled",
            "fontcolor": "#404040" if origin == "shared" else "#000000",
            "penwidth": "1" if origin == "shared" else "2"}


def _format(attributes: dict[str, str]) -> str:
    return ",".join(f"{key}={_quote(value)}" for key, value in attributes.items())


def _legend(first_name: str, second_name: str) -> str:
    rows = [("first", f"only in {first_name}"), ("second", f"only in {second_name}"),
            ("shared", "in both")]
    parts = ['subgraph cluster_legend{label="legend";style="rounded";color="#808080";']
    for number, (origin, text) in enumerate(rows):
        style = _node_style(origin) | {"shape": "box", "label": text}
        parts.append(f"legend{number} [{_format(style)}];")
    parts.append('legend0 -> legend1 [style="invis"];legend1 -> legend2 [style="invis"];}')
    return "".join(parts)
