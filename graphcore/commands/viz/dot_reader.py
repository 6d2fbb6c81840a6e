"""DOT text as this project writes it, read back: nodes, edges, graph attributes and clusters.

``parse_dot(text)`` reads ``drawing.draw_spec``'s Chainer-style DOT (clusters for loop runs,
iterations and layers) and ``static.drawing.graph_to_dot``'s IR DOT. It is no general DOT
parser: statements are ``NAME [attributes]``, ``A -> B [attributes]``, ``key=value`` and
``subgraph NAME { ... }``. Quoted strings are read back to the text they were written from
(``graphcore.dot_text.unquote``: a ``\\n`` is a newline again), so what reads a label here sees
the characters it holds, and writing it again with ``dot_text`` gives the same DOT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from graphcore.dot_text import unquote

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|->|[A-Za-z0-9_.]+|[{}\[\];=,]|\s+|.', re.S)


class DotSyntaxError(ValueError):
    """The text is not DOT as this project writes it."""


@dataclass
class DotGraph:
    """One DOT text: nodes (id -> attributes, in declaration order), edges (in order), the
    top-level graph attributes, and the clusters: each one's attributes, the cluster it sits
    in (``None``: the graph itself) and the cluster each node is declared in."""

    nodes: dict[str, dict[str, str]] = field(default_factory=dict)
    edges: list[tuple[str, str]] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    clusters: dict[str, dict[str, str]] = field(default_factory=dict)
    cluster_parent: dict[str, str | None] = field(default_factory=dict)
    placement: dict[str, str | None] = field(default_factory=dict)

    def inputs(self) -> dict[str, list[str]]:
        """Each node's heads, in edge order (an op's operands in their order)."""
        out: dict[str, list[str]] = {name: [] for name in self.nodes}
        for head, tail in self.edges:
            out[tail].append(head)
        return out

    def consumers(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {name: [] for name in self.nodes}
        for head, tail in self.edges:
            out[head].append(tail)
        return out

    def cluster_path(self, node: str) -> list[str]:
        """The clusters around ``node``, outermost first."""
        path: list[str] = []
        cluster = self.placement.get(node)
        while cluster is not None:
            path.append(cluster)
            cluster = self.cluster_parent[cluster]
        return path[::-1]


def parse_dot(text: str) -> DotGraph:
    """Nodes, edges, top-level graph attributes and clusters of a ``digraph``."""
    tokens = [t for t in _TOKEN.findall(text) if not t.isspace()]
    if len(tokens) < 3 or tokens[0] != "digraph":
        raise DotSyntaxError("not a digraph")
    position = 1 if tokens[1] == "{" else 2
    if tokens[position] != "{":
        raise DotSyntaxError("expected '{' after the graph name")
    graph = DotGraph()
    stack: list[str | None] = [None]  # the clusters open at this point (None: the graph)
    i = position + 1
    while i < len(tokens) and stack:
        token = tokens[i]
        if token == "}":
            stack.pop()
            i += 1
        elif token == "subgraph":
            named = tokens[i + 1] != "{"
            name = unquote(tokens[i + 1]) if named else f"subgraph{len(graph.clusters)}"
            i += 3 if named else 2  # subgraph NAME {
            graph.clusters[name] = {}
            graph.cluster_parent[name] = stack[-1]
            stack.append(name)
        elif token == ";":
            i += 1
        elif i + 1 < len(tokens) and tokens[i + 1] == "=":
            target = graph.attributes if stack[-1] is None else graph.clusters[stack[-1]]
            target[token] = unquote(tokens[i + 2])
            i += 3
        elif i + 1 < len(tokens) and tokens[i + 1] == "->":
            graph.edges.append((unquote(token), unquote(tokens[i + 2])))
            i += 3
            if i < len(tokens) and tokens[i] == "[":
                _, i = _attributes(tokens, i)
        else:
            name = unquote(token)
            attributes, i = _attributes(tokens, i + 1) if tokens[i + 1] == "[" else ({}, i + 1)
            graph.nodes.setdefault(name, {}).update(attributes)
            graph.placement.setdefault(name, stack[-1])
    for head, tail in graph.edges:
        for name in (head, tail):
            graph.nodes.setdefault(name, {})
            graph.placement.setdefault(name, None)
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
        out[tokens[i]] = unquote(tokens[i + 2])
        i += 3
    return out, i + 1
