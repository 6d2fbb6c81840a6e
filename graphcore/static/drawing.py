"""Draw a static-mode IR ``Graph`` as Graphviz DOT (what ``graphtool viz --stage ir`` writes).

One DOT node per IR node, ``n<id>``, labelled with the node's text form without its ``%id =``
prefix and without its operands (the edges show those)::

    input x : f32[3,4]          param l1/W : f32[5,4]          relu : f32[3,5]
    vjp[index=0, of=relu] : f32[3,5]                           const 1.0 : f32[]

A ``fused`` node lists its program, one instruction a line (``_`` is the running value,
``inK`` its K-th input); the edge from that input carries ``inK`` as a head label (an edge
label would take a rank of its own and make Graphviz's layout many times slower). A
``guard`` is a diamond labelled with its predicate, the outcome the trace saw and where the
predicate sits in the spec. Leaves (inputs, parameters, constants) are ellipses, computations
boxes, fused nodes double boxes. The backward half (``vjp`` nodes and everything computed
from a gradient) is filled orange, the forward half blue; a value the graph returns has a
bold border and a last label line ``-> <output key>``. Edges run from each input to its
reader, in operand order; the edge from a ``vjp`` to the forward node it differentiates is
dashed. Output is a pure function of the graph: byte-identical for equal
graphs. Nothing here prints or writes files.

>>> print(graph_to_dot(graph).splitlines()[2])
n0 [label="input x : f32[3,4]",shape="ellipse",style="filled",fillcolor="#F2F2F2",tooltip="%0"];
"""

from __future__ import annotations

import numpy as np

from graphcore.dot_text import attribute_list, quote
from graphcore.static.ir import LEAVES, Graph, Node, attrs_text

FORWARD_FILL = "#DCE8F5"
BACKWARD_FILL = "#FBE3D0"
LEAF_FILL = "#F2F2F2"
GUARD_FILL = "#FFF2CC"


def graph_to_dot(graph: Graph, rankdir: str = "TB") -> str:
    """The DOT text of ``graph`` (see the module docstring); ends with a newline."""
    backward = _backward_nodes(graph)
    returned: dict[int, list[str]] = {}
    for key, node_id in graph.outputs.items():
        returned.setdefault(node_id, []).append(key)
    lines = [f"digraph {quote('ir ' + graph.name)} {{", f"rankdir={rankdir};"]
    for node in graph.nodes:
        attrs = _style(node, node.id in backward)
        label = node_label(node, graph)
        if node.id in returned:
            label += "\n-> " + ", ".join(returned[node.id])
            attrs["penwidth"] = "2"
        fields = {"label": label, **attrs, "tooltip": f"%{node.id}"}
        lines.append(f"n{node.id} [{attribute_list(fields)}];")
    for node in graph.nodes:
        for position, source in enumerate(node.inputs):
            edge = {}
            if node.op == "vjp" and position == 0:
                edge["style"] = "dashed"
            if node.op == "fused":
                edge["headlabel"] = f"in{position}"
            lines.append(f"n{source} -> n{node.id}"
                         + (f" [{attribute_list(edge)}]" if edge else "") + ";")
    lines.append("}")
    return "\n".join(lines) + "\n"


def node_label(node: Node, graph: Graph | None = None) -> str:
    """The label of ``node``: its text form without ``%id =`` and operands (``\\n`` between
    lines of a fused program or a guard)."""
    type_text = node.type_text()
    if node.op in ("input", "param"):
        return f"{node.op} {node.name} : {type_text}"
    if node.op == "const":
        value = None if graph is None else graph.consts.get(node.id)
        if value is not None and np.size(value) == 1:
            return f"const {np.asarray(value).reshape(()).item()!r} : {type_text}"
        return f"const : {type_text}"
    if node.op == "guard":
        a = node.attrs
        return f"guard {a.get('predicate')} is {a.get('expect')}\nat {a.get('at')}"
    if node.op == "fused":
        lines = [f"fused : {type_text}"]
        for op, attrs, operands in node.attrs.get("program", ()):
            args = ", ".join("_" if k == -1 else f"in{k}" for k in operands)
            lines.append(f"{op}{attrs_text(dict(attrs))}({args})")
        return "\n".join(lines)
    return f"{node.op}{attrs_text(node.attrs)} : {type_text}"


def _backward_nodes(graph: Graph) -> set[int]:
    """Ids of the backward half: ``vjp`` nodes, fused programs of vjps, and every non-leaf
    node that reads one of those."""
    backward: set[int] = set()
    for node in graph.nodes:
        if node.op == "vjp" or (node.op == "fused" and any(
                str(op).startswith("vjp") for op, _, _ in node.attrs.get("program", ()))):
            backward.add(node.id)
        elif node.op not in LEAVES and node.op != "guard" and any(
                i in backward for i in node.inputs):
            backward.add(node.id)
    return backward


def _style(node: Node, backward: bool) -> dict[str, str]:
    if node.op in LEAVES:
        return {"shape": "ellipse", "style": "filled", "fillcolor": LEAF_FILL}
    if node.op == "guard":
        return {"shape": "diamond", "style": "filled", "fillcolor": GUARD_FILL}
    style = {"shape": "box", "style": "filled",
             "fillcolor": BACKWARD_FILL if backward else FORWARD_FILL}
    if node.op == "fused":
        style["peripheries"] = "2"
    return style
