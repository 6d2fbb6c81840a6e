"""Draw the graph behind a result as Graphviz DOT text, the way Chainer draws it.

``build_computational_graph([y]).dump()`` walks backward from ``y`` and writes every Variable
and FunctionNode it reaches, with Chainer's labels (``LinearFunction``, ``(3, 5), float32``,
``W: (5, 4), float32``), styles, attribute order and edge structure, so a Chainer user sees
the picture they expect::

    digraph graphname{rankdir=TB;0 [label="float32",shape="octagon",...];1 [label="Sum",...];
    ...;1 -> 0;2 -> 1;...}

One deliberate difference from Chainer: node ids are sequential integers in traversal order
(Chainer writes ``id()``, a memory address) and nodes and edges keep traversal order (Chainer
keeps them in sets), so the same model gives byte-identical DOT in any process. Another:
labels are quoted by ``graphcore.dot_text`` (Chainer writes them as they are), so a name or a
label holding ``"``, a backslash, or, in a function's record-shaped box, ``{ } | < >`` draws
as written instead of breaking the file; ordinary labels are written exactly as Chainer does.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Mapping

from graphcore.dot_text import attribute_list
from graphcore.function_node import FunctionNode
from graphcore.variable import Variable

Node = Variable | FunctionNode
Edge = tuple[Node, Node]

# Chainer's defaults for ``variable_style='default'`` / ``function_style='default'``.
DEFAULT_VARIABLE_STYLE = {"shape": "octagon", "fillcolor": "#E0E0E0", "style": "filled"}
DEFAULT_FUNCTION_STYLE = {"shape": "record", "fillcolor": "#6495ED", "style": "filled"}
RANKDIRS = ("TB", "BT", "LR", "RL")


class ComputationalGraph:
    """The nodes and edges reachable backward from some outputs, ready to be dumped.

    ``nodes`` lists Variables and FunctionNodes in traversal order (a node's DOT id is its
    position in this list); ``edges`` lists ``(head, tail)`` pairs in the order they were
    found, each pair a Variable and a FunctionNode: ``x -> f`` (x is an input of f) or
    ``f -> y`` (f created y).

    ``variable_style`` / ``function_style`` are dicts of DOT attributes laid over Chainer's
    base shapes (``oval`` / ``box``); ``'default'`` means Chainer's filled octagons and
    records, ``None`` means no style at all (Chainer <= 1.22 drawings).
    """

    def __init__(self, nodes: list[Node], edges: list[Edge],
                 variable_style: Mapping[str, object] | str | None = "default",
                 function_style: Mapping[str, object] | str | None = "default",
                 rankdir: str = "TB", remove_variable: bool = False,
                 show_name: bool = True) -> None:
        if rankdir not in RANKDIRS:
            raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)}, got {rankdir!r}")
        self.nodes = nodes
        self.edges = edges
        self.variable_style = _resolve_style(variable_style, DEFAULT_VARIABLE_STYLE)
        self.function_style = _resolve_style(function_style, DEFAULT_FUNCTION_STYLE)
        self.rankdir = rankdir
        self.remove_variable = remove_variable
        self.show_name = show_name

    def dump(self, format: str = "dot") -> str:
        """Return the graph as text; ``'dot'`` (Graphviz) is the only format."""
        if format != "dot":
            raise ValueError(f"unsupported graph format {format!r}; only 'dot' is supported")
        return self._to_dot()

    def _to_dot(self) -> str:
        ids = {id(node): number for number, node in enumerate(self.nodes)}
        parts = [f"digraph graphname{{rankdir={self.rankdir};"]
        for node in self.nodes:
            if isinstance(node, Variable) and self.remove_variable:
                continue
            parts.append(f"{ids[id(node)]} [{attribute_list(self._attributes(node))}];")
        edges = self.function_edges() if self.remove_variable else self.edges
        for head, tail in edges:
            parts.append(f"{ids[id(head)]} -> {ids[id(tail)]};")
        parts.append("}")
        return "".join(parts)

    def _attributes(self, node: Node) -> dict[str, object]:
        """Label, then Chainer's base shape, then the style laid over it (in that order)."""
        if isinstance(node, Variable):
            label = node.label
            if self.show_name and node.name is not None:
                label = f"{node.name}: {label}"
            attributes: dict[str, object] = {"label": label, "shape": "oval"}
            attributes.update(self.variable_style)
        else:
            attributes = {"label": node.label, "shape": "box"}
            attributes.update(self.function_style)
        return attributes

    def function_edges(self) -> list[tuple[FunctionNode, FunctionNode]]:
        """Edges between functions only (``remove_variable=True``): ``f -> g`` when an output
        of ``f`` is an input of ``g``.

        Chainer derives them from both edge kinds and keeps, for ``f -> y``, only the first
        consumer of ``y``; every such pair is also found from ``y -> g``, so deriving them
        from the ``x -> g`` edges alone gives the same set.
        """
        found: dict[tuple[int, int], tuple[FunctionNode, FunctionNode]] = {}
        for head, tail in self.edges:
            if isinstance(head, Variable) and head.creator is not None:
                found.setdefault((id(head.creator), id(tail)), (head.creator, tail))
        return list(found.values())


def build_computational_graph(
        outputs: Node | Iterable[Node], remove_split: bool = True,
        variable_style: Mapping[str, object] | str | None = "default",
        function_style: Mapping[str, object] | str | None = "default",
        rankdir: str = "TB", remove_variable: bool = False,
        show_name: bool = True) -> ComputationalGraph:
    """Collect the Variables and FunctionNodes reachable backward from ``outputs``.

    ``outputs`` is a Variable, a FunctionNode, or a list of them.  The walk is Chainer's: a
    heap ordered by rank (highest first, ties by push order) visits each node, following a
    Variable to its creator and a FunctionNode to its inputs; each edge is taken once.
    ``remove_split`` is accepted for Chainer compatibility and has no effect (Chainer has no
    split nodes since v2; it raises for ``False``, graphcore ignores it).

    >>> g = build_computational_graph([y], rankdir="LR")
    >>> open("graph.dot", "w").write(g.dump())
    """
    del remove_split  # Chainer compatibility only
    if isinstance(outputs, Node):
        outputs = [outputs]
    outputs = list(outputs)
    for output in outputs:
        if not isinstance(output, Node):
            raise TypeError("each output must be a Variable or a FunctionNode, got "
                            f"{type(output).__name__}")
    nodes, edges = _walk_backward(outputs)
    return ComputationalGraph(nodes, edges, variable_style, function_style, rankdir,
                              remove_variable, show_name)


def _walk_backward(outputs: list[Node]) -> tuple[list[Node], list[Edge]]:
    """Nodes in discovery order and edges in discovery order (dicts keep both ordered)."""
    heap: list[tuple[int, int, Node]] = []
    pushes = itertools.count()
    nodes: dict[int, Node] = {}
    edges: dict[tuple[int, int], Edge] = {}

    def push(node: Node) -> None:
        # The push count breaks rank ties, so nodes themselves are never compared.
        heapq.heappush(heap, (-getattr(node, "rank", 0), next(pushes), node))
        nodes.setdefault(id(node), node)

    def add_edge(head: Node, tail: Node, new: Node) -> None:
        if (id(head), id(tail)) not in edges:
            edges[id(head), id(tail)] = (head, tail)
            push(new)

    for output in outputs:
        push(output)
    while heap:
        _, _, node = heapq.heappop(heap)
        if isinstance(node, Variable):
            if node.creator is not None:
                add_edge(node.creator, node, node.creator)
        else:
            for x in getattr(node, "inputs", ()):
                add_edge(x, node, x)
    return list(nodes.values()), list(edges.values())


def _resolve_style(style: Mapping[str, object] | str | None,
                   default: dict[str, object]) -> dict[str, object]:
    if style is None:
        return {}
    if isinstance(style, str):
        if style != "default":
            raise ValueError(f"a node style is a dict of DOT attributes, None or 'default', "
                             f"got {style!r}")
        return dict(default)
    return dict(style)
