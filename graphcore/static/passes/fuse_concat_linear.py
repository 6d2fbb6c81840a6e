"""Turn a ``linear`` of a ``concat`` into one ``concat_linear`` node: no joined copy.

``concat([a, b], axis=-1) @ W.T + bias`` equals ``a @ Wa.T + b @ Wb.T + bias``, where ``Wa``
and ``Wb`` are column blocks of ``W`` (views, never copied). An RNN cell that joins its input
with the carried state before one matrix product (``concat [x_t, h] -> linear``) copies both
into a new array at every step, and its backward computes the joined input's whole gradient
and then splits it; the fused node reads the parts where they are. Before (after
``fuse_linear``)::

    %4 = concat[axis=1](%2, %3) : f32[100,48]
    %8 = linear_act[activation=tanh](%4, %5, %6) : f32[100,32]
    ...
    %20 = vjp[index=0, of=linear](%8, %19) : f32[100,48]
    %21 = vjp[index=1, of=linear](%8, %19) : f32[32,48]
    %22 = vjp[index=2, of=linear](%8, %19) : f32[32]
    %23 = vjp[index=1, of=concat](%4, %20) : f32[100,32]

after::

    %8 = concat_linear[activation=tanh, sizes=(16, 32)](%2, %3, %5, %6) : f32[100,32]
    ...
    %21 = vjp[index=2, of=concat_linear](%8, %19) : f32[32,48]
    %22 = vjp[index=3, of=concat_linear](%8, %19) : f32[32]
    %23 = vjp[index=1, of=concat_linear](%8, %19) : f32[100,32]

The node's inputs are the parts, then ``W`` and the bias if any; ``sizes`` are the parts'
widths and ``activation`` is the ``linear_act``'s (None for a ``linear``). Its value is
``act(sum_k part_k @ W[:, o_k:o_k + n_k].T + bias)`` with ``o_k`` the offset of part ``k``:
the same sum as the joined product, taken in ``len(parts)`` pieces, so it equals it up to
float rounding. Gradients, by input index ``i`` of the node (``gy`` the incoming gradient):
a part, ``gy @ W[:, o_i:o_i + n_i]``; ``W``, each column block ``gy.T @ part_k`` written in
place; the bias, ``gy`` summed over the rows. A vjp of the activation (``of=tanh``) reads the
node's value, as with ``linear_act``.

The rewrite keeps each ``vjp`` id: the concat's vjps become the parts' (reading the linear's
incoming gradient), the linear's own vjps of ``W`` and the bias are renumbered, and the
concat and the vjp of the joined input (the gradient the concat's vjps split) disappear.
A gradient no part needed (a data input's) was never in the program, so it costs nothing.

Applies when: the concat joins 1-D or 2-D values of one dtype along their last axis, its
only readers are the linear (as its first input), that linear's vjps and its own vjps, and it
is no output; the linear's weight is 2-D; the vjp of the joined input, if any, is read only by
the concat's vjps and is no output.
"""

from __future__ import annotations

from graphcore.static.ir import Graph, Node
from graphcore.static.passes.base import PassReport

LINEARS = ("linear", "linear_act")


def fuse_concat_linear(graph: Graph) -> tuple[Graph, PassReport]:
    """Fuse ``concat`` + ``linear`` (``linear_act``) into ``concat_linear``; see the doc."""
    by_id = graph._index()
    readers: dict[int, list[Node]] = {n.id: [] for n in graph.nodes}
    for n in graph.nodes:
        for i in dict.fromkeys(n.inputs):
            readers[i].append(n)
    outputs = set(graph.outputs.values())
    replaced: dict[int, Node] = {}
    removed: set[int] = set()
    notes: list[str] = []
    for node in graph.nodes:
        if node.op not in LINEARS or not node.inputs:
            continue
        found = _match(node, by_id, readers, outputs)
        if found is None:
            continue
        concat, joined_grads = found
        parts = concat.inputs
        sizes = tuple(by_id[p].shape[-1] for p in parts)
        fused = node.with_(op="concat_linear", inputs=parts + node.inputs[1:],
                           attrs={"activation": node.attrs.get("activation"), "sizes": sizes})
        replaced[node.id] = fused
        k = len(parts)
        for v in readers[node.id]:
            if v.op == "vjp" and v.inputs[0] == node.id and v.attrs["of"] == "linear" \
                    and v.attrs["index"] > 0:
                replaced[v.id] = v.with_(attrs={"of": "concat_linear",
                                                "index": k + v.attrs["index"] - 1})
        for g in joined_grads:
            for v in readers[g.id]:  # the concat's vjps: one part's gradient each
                replaced[v.id] = v.with_(inputs=(node.id, g.inputs[1]),
                                         attrs={"of": "concat_linear", "index": v.attrs["index"]})
        removed.add(concat.id)
        removed.update(g.id for g in joined_grads)
        notes.append(f"%{concat.id} concat + %{node.id} {node.op} -> %{node.id} concat_linear "
                     f"({k} parts)")
    if not replaced:
        return graph.copy(), _report(graph, graph, ["nothing to fuse"])
    nodes = [replaced.get(n.id, n) for n in graph.nodes if n.id not in removed]
    new = graph.copy(nodes)
    new.slots = {}  # a plan made for the old nodes means nothing now
    return new, _report(graph, new, notes)


def _match(linear: Node, by_id: dict[int, Node], readers: dict[int, list[Node]],
           outputs: set[int]) -> tuple[Node, list[Node]] | None:
    """The concat ``linear`` reads and the vjps of the joined input, if the rewrite applies."""
    concat = by_id[linear.inputs[0]]
    W = by_id[linear.inputs[1]]
    if concat.op != "concat" or concat.id in outputs or len(concat.inputs) < 2:
        return None
    if concat.shape is None or len(concat.shape) not in (1, 2) or W.shape is None \
            or len(W.shape) != 2 or W.shape[1] != concat.shape[-1]:
        return None
    if concat.attrs.get("axis", 1) % len(concat.shape) != len(concat.shape) - 1:
        return None
    parts = [by_id[p] for p in concat.inputs]
    if any(p.shape is None or len(p.shape) != len(concat.shape) or p.dtype != concat.dtype
           for p in parts) or W.dtype != concat.dtype:
        return None
    if concat.inputs.count(concat.id) or linear.inputs[1:].count(concat.id):
        return None
    joined_grads = []
    for r in readers[concat.id]:
        if r.id == linear.id:
            continue
        if r.op == "vjp" and r.inputs[0] == concat.id and r.attrs["of"] == "concat":
            continue  # checked below, through the joined gradient it reads
        return None
    for v in readers[linear.id]:
        if v.op == "vjp" and v.inputs[0] == linear.id and v.attrs["of"] == "linear" \
                and v.attrs["index"] == 0:
            if v.id in outputs or len(v.inputs) != 2:
                return None
            if any(r.op != "vjp" or r.inputs != (concat.id, v.id) for r in readers[v.id]):
                return None
            joined_grads.append(v)
    for r in readers[concat.id]:  # every concat vjp must read one of those joined gradients
        if r.op == "vjp" and r.inputs[1:] not in [(g.id,) for g in joined_grads]:
            return None
    return concat, joined_grads


def _report(before: Graph, after: Graph, notes: list[str]) -> PassReport:
    return PassReport("fuse_concat_linear", len(before.nodes), len(after.nodes),
                      before.nbytes(), after.nbytes(), notes=notes)
