"""Dead-code elimination: drop the nodes no output (and no guard) needs."""

from __future__ import annotations

from graphcore.static.ir import Graph
from graphcore.static.passes.base import PassReport, count_by_op

_SIGNATURE = ("input", "param")


def eliminate_dead_code(graph: Graph) -> tuple[Graph, PassReport]:
    """Keep only the nodes some output or guard needs, transitively; return a new graph.

    What is needed:

    - every node named in ``graph.outputs``, and what it reads;
    - every ``guard`` node (a guard is a side effect: it checks a predicate at replay time,
      even though nothing reads its result), and what it reads;
    - for a needed ``vjp`` node, its forward node (``inputs[0]``) *and that node's inputs*:
      a vjp reads its forward node's inputs and value, not only its listed inputs;
    - every ``input`` and ``param`` leaf, used or not: together they are the program's
      signature, and a caller passes (and an optimizer updates) them by name.

    Everything else is removed, impure ops included: registry ops with ``pure = False``
    (``dropout``) have no effect beyond their value, and an unused random draw can be skipped
    without changing any result. Unused ``const`` nodes go, with their arrays.

    Node ids and the order of the surviving nodes are unchanged; ``graph`` is not modified.

    Before::

        graph g {
          %0 = input x : f32[2,3]
          %1 = input unused : f32[4]
          %2 = relu(%0) : f32[2,3]
          %3 = exp(%0) : f32[2,3]
          %4 = dropout[ratio=0.5](%3) : f32[2,3]
          %5 = sum(%2) : f32[]
          return y=%5
        }

    After (``%3`` and ``%4`` are dead; ``%1`` stays, it is part of the signature)::

        graph g {
          %0 = input x : f32[2,3]
          %1 = input unused : f32[4]
          %2 = relu(%0) : f32[2,3]
          %5 = sum(%2) : f32[]
          return y=%5
        }
    """
    needed = set(graph.outputs.values())
    nodes_by_id = {n.id: n for n in graph.nodes}
    # Inputs are defined before their users, so one walk from the end settles every node.
    for node in reversed(graph.nodes):
        if node.op == "guard" or node.op in _SIGNATURE:
            needed.add(node.id)
        if node.id not in needed:
            continue
        needed.update(node.inputs)
        if node.op == "vjp":
            needed.update(nodes_by_id[node.inputs[0]].inputs)

    kept = [n for n in graph.nodes if n.id in needed]
    consts = {i: a for i, a in graph.consts.items() if i in needed}
    result = graph.copy(nodes=kept, consts=consts)
    result.slots = {i: s for i, s in graph.slots.items() if i in needed}

    removed = [n for n in graph.nodes if n.id not in needed]
    unused_leaves = _unused_leaves(graph)
    notes = [f"removed {len(removed)} dead nodes" + count_by_op(removed)]
    if unused_leaves:
        notes.append("kept unused inputs/params (the signature): " + ", ".join(unused_leaves))
    report = PassReport("dce", nodes_before=len(graph.nodes), nodes_after=len(kept),
                        bytes_before=graph.nbytes(), bytes_after=result.nbytes(), notes=notes)
    return result, report


def _unused_leaves(graph: Graph) -> list[str]:
    users = graph.users()
    outputs = set(graph.outputs.values())
    return [n.name or f"%{n.id}" for n in graph.nodes
            if n.op in _SIGNATURE and not users[n.id] and n.id not in outputs]

