"""The gradients of a ``where`` whose condition is a slice of a mask: products with 0/1
factors made once per replay from the whole mask.

``where(c, x, y)``'s gradients are ``gy * c`` (for ``x``) and ``gy * (not c)`` (for ``y``). A
batched recurrence selects its carry by ``c = mask[:, t, None]`` at every step ``t``: each
step's vjps would multiply by a boolean slice (numpy casts it on every call) and negate it.
This pass casts the mask once, ``%f = cast(mask)``, and when a ``y`` gradient is needed once
more, ``%n = rsub_scalar[value=1](%f)``; each vjp becomes a ``mul`` of its incoming gradient
by a slice of those (a view: ``get_item`` with the condition's basic index). Before::

    %9 = get_item[index=(:, 0, None)](%1) : b1[100,1]
    %11 = where(%9, %8, %10) : f32[100,32]
    ...
    %40 = vjp[index=1, of=where](%11, %39) : f32[100,32]
    %41 = vjp[index=2, of=where](%11, %39) : f32[100,32]

after::

    %60 = cast[dtype=float32](%1) : f32[100,49]
    %61 = get_item[index=(:, 0, None)](%60) : f32[100,1]
    %40 = mul(%39, %61) : f32[100,32]
    %62 = rsub_scalar[value=1.0](%60) : f32[100,49]
    %63 = get_item[index=(:, 0, None)](%62) : f32[100,1]
    %41 = mul(%39, %63) : f32[100,32]

Each ``mul`` keeps its vjp's id; the new nodes get fresh ids and stand just before the first
gradient that reads them (the backward half: a forward replay never runs them). The values
are the vjps' own: the op's backward multiplies by the boolean condition, which numpy casts to
exactly 0 or 1, NaN and infinities included. A ``mul`` can join an elementwise chain
(``fuse_elementwise``), e.g. with the activation's vjp that reads it.

Applies to a ``vjp`` of ``where`` for ``x`` or ``y`` whose value has the incoming gradient's
shape and floating dtype (no broadcast to sum back), where the condition is a ``get_item`` with
a basic index (ints, slices, None, ...) of a boolean value.
"""

from __future__ import annotations

from graphcore.static.ir import Graph, Node, basic_index
from graphcore.static.passes.base import PassReport


def mask_select_grads(graph: Graph) -> tuple[Graph, PassReport]:
    """Turn the vjps of ``where`` on mask slices into products; see the module doc."""
    by_id = graph._index()
    next_id = graph.next_id()
    factors: dict[tuple[int, str, int], int] = {}  # (mask, dtype, index) -> factor id
    nodes: list[Node] = []
    rewritten = 0
    for node in graph.nodes:
        found = _condition(node, by_id)
        if found is None:
            nodes.append(node)
            continue
        cond, mask = found
        index = node.attrs["index"]
        key = (mask.id, node.dtype, index)
        if key not in factors:
            ones = factors.get((mask.id, node.dtype, 1))
            if ones is None:
                ones = next_id
                next_id += 1
                nodes.append(Node(ones, "cast", (mask.id,), {"dtype": node.dtype}, mask.shape,
                                  node.dtype))
                factors[(mask.id, node.dtype, 1)] = ones
            if index == 2:
                factors[key] = next_id
                next_id += 1
                nodes.append(Node(factors[key], "rsub_scalar", (ones,), {"value": 1.0},
                                  mask.shape, node.dtype))
        view = Node(next_id, "get_item", (factors[key],), dict(cond.attrs), cond.shape,
                    node.dtype)
        next_id += 1
        nodes.append(view)
        nodes.append(node.with_(op="mul", inputs=(node.inputs[1], view.id), attrs={}))
        rewritten += 1
    if not rewritten:
        return graph.copy(), _report(graph, graph, ["nothing to rewrite"])
    new = graph.copy(nodes)
    new.slots = {}
    masks = len({k[0] for k in factors})
    return new, _report(graph, new, [f"{rewritten} where vjps -> mul by {len(factors)} "
                                     f"factor(s) of {masks} mask(s)"])


def _condition(node: Node, by_id: dict[int, Node]) -> tuple[Node, Node] | None:
    """For a vjp this pass rewrites: the condition (a ``get_item``) and the mask it slices."""
    if node.op != "vjp" or node.attrs.get("of") != "where" or len(node.inputs) != 2:
        return None
    if node.attrs.get("index") not in (1, 2):
        return None
    forward, gy = by_id[node.inputs[0]], by_id[node.inputs[1]]
    if forward.op != "where" or node.shape != forward.shape or gy.shape != node.shape \
            or gy.dtype != node.dtype or not node.dtype.startswith("float"):
        return None
    cond = by_id[forward.inputs[0]]
    if cond.op != "get_item" or cond.dtype != "bool" or not basic_index(cond.attrs.get("index")):
        return None
    mask = by_id[cond.inputs[0]]
    if mask.shape is None or mask.dtype != "bool":
        return None
    return cond, mask


def _report(before: Graph, after: Graph, notes: list[str]) -> PassReport:
    return PassReport("mask_grads", len(before.nodes), len(after.nodes), before.nbytes(),
                      after.nbytes(), notes=notes)
