"""Fuse a matrix product with its bias and activation into one node.

Two patterns, each rewritten only when the intermediate values have no other reader:

``linear`` followed by ``relu`` / ``tanh`` / ``sigmoid`` becomes ``linear_act``. Before::

    %6 = linear(%0, %2, %3) : f32[3,5]
    %7 = relu(%6) : f32[3,5]
    %15 = vjp[index=0, of=relu](%7, %12) : f32[3,5]
    %16 = vjp[index=1, of=linear](%6, %15) : f32[5,4]

after::

    %7 = linear_act[activation=relu](%0, %2, %3) : f32[3,5]
    %15 = vjp[index=0, of=relu](%7, %12) : f32[3,5]
    %16 = vjp[index=1, of=linear](%7, %15) : f32[5,4]

The fused node takes the activation's id, so readers of the activation are unchanged; the
``linear`` node disappears. A ``vjp`` of the linear node is rewired to the fused node and keeps
``of=linear``: its backward reads the forward node's inputs, which are the same ``x, W[, b]``.
A ``vjp`` of the activation keeps ``of=relu`` (``tanh``, ``sigmoid``) and reads the fused node's
value, which is the activation's output: these activations differentiate from their output alone.

``matmul(a, B)`` followed by ``add(_, bias)`` (either operand order), ``bias`` broadcasting over
the last axis only (shape ``(n,)``, or ``(1, ..., 1, n)``), optionally followed by one of the
activations  ->  ``%k = matmul_bias[activation=None](a, B, bias)`` (or ``activation=relu``, ...),
with the id of the last node it replaces. Its value is ``act(a @ B + bias)`` (``a @ B + bias``
for ``activation=None``), as ``linear_act``'s is ``act(x @ W.T + b)``. This form is made only when
no ``vjp`` of the ``matmul`` or the ``add`` exists (inference graphs): their backwards would read
the forward node's inputs, and the fused node's inputs ``(a, B, bias)`` are not those of either.
A ``vjp`` of the activation already names the fused node's id and reads its value, as above.

A convolution (``convolution_2d``, ``convolution_1d``: a matrix product of filters and image
columns, with its bias) followed by one of the activations becomes ``convolution_act`` in the
same way as ``linear_act``: the fused node takes the activation's id, keeps the convolution's
inputs and attributes and adds ``activation``; the convolution's vjps are rewired to it and keep
``of=convolution_2d`` (they read ``x, W[, b]`` and the columns the forward kernel kept).

"No other reader" counts the implicit reads of the IR conventions (a ``vjp`` reads its forward
node's value and inputs), except two that these ops do not need: a ``linear``'s own vjps (they
read x, W only) and the activation's vjps (they read the activation's output only). A value named
in ``graph.outputs`` is always read.
"""

from __future__ import annotations

from graphcore.static.ir import Graph, Node
from graphcore.static.passes.base import PassReport

ACTIVATIONS = ("relu", "tanh", "sigmoid")
CONVOLUTIONS = ("convolution_2d", "convolution_1d")


def fuse_linear(graph: Graph) -> tuple[Graph, PassReport]:
    """Fuse ``linear`` + activation and ``matmul`` + bias (+ activation); see the module doc."""
    by_id = graph._index()
    reads = _reads(graph)
    vjps = _vjps_of(graph)
    position = {n.id: i for i, n in enumerate(graph.nodes)}
    replaced: dict[int, Node] = {}  # id -> its fused node
    removed: set[int] = set()
    forward_of: dict[int, int] = {}  # removed linear id -> the fused node's id, for its vjps
    notes: list[str] = []
    for node in graph.nodes:
        if node.id in removed or node.id in replaced:
            continue
        if node.op == "linear" or node.op in CONVOLUTIONS:
            fused = _linear_act(graph, node, by_id, reads, vjps, position)
            if fused is not None:
                replaced[fused.id] = fused
                removed.add(node.id)
                forward_of[node.id] = fused.id
                notes.append(f"%{node.id} {node.op} + %{fused.id} "
                             f"{fused.attrs['activation']} -> %{fused.id} {fused.op}")
        elif node.op == "matmul":
            found = _matmul_bias(graph, node, by_id, reads, vjps)
            if found is not None:
                fused, gone = found
                replaced[fused.id] = fused
                removed.update(gone)
                parts = " + ".join(f"%{i} {by_id[i].op}" for i in (*gone, fused.id))
                notes.append(f"{parts} -> %{fused.id} matmul_bias")
    if not replaced:
        return graph.copy(), _report(graph, graph, ["nothing to fuse"])
    nodes = []
    for node in graph.nodes:
        if node.id in removed:
            continue
        node = replaced.get(node.id, node)
        if node.op == "vjp" and node.inputs[0] in forward_of:
            node = node.with_(inputs=(forward_of[node.inputs[0]],) + node.inputs[1:])
        nodes.append(node)
    fused_graph = graph.copy(nodes)
    fused_graph.slots = {}  # a plan made for the old nodes means nothing now
    return fused_graph, _report(graph, fused_graph, notes)


def _linear_act(graph: Graph, linear: Node, by_id: dict[int, Node],
                reads: dict[int, list[tuple[int, str]]], vjps: dict[int, list[int]],
                position: dict[int, int]) -> Node | None:
    act = _single_activation(graph, linear, by_id, reads, allowed_vjps=vjps[linear.id])
    if act is None:
        return None
    # The linear's vjps are read by the fused node's position onward: they must come after it.
    if any(position[v] < position[act.id] for v in vjps[linear.id]):
        return None
    if linear.op in CONVOLUTIONS:
        return act.with_(op="convolution_act", inputs=linear.inputs,
                         attrs={**linear.attrs, "activation": act.op})
    return act.with_(op="linear_act", inputs=linear.inputs,
                     attrs={"activation": act.op})


def _matmul_bias(graph: Graph, matmul: Node, by_id: dict[int, Node],
                 reads: dict[int, list[tuple[int, str]]],
                 vjps: dict[int, list[int]]) -> tuple[Node, tuple[int, ...]] | None:
    add = _only_reader(graph, matmul, by_id, reads)
    if add is None or add.op != "add" or vjps[matmul.id] or vjps[add.id]:
        return None
    bias_id = add.inputs[1] if add.inputs[0] == matmul.id else add.inputs[0]
    if bias_id == matmul.id or not _bias_like(by_id[bias_id], matmul):
        return None
    if add.shape != matmul.shape or add.dtype != matmul.dtype:
        return None
    inputs = matmul.inputs + (bias_id,)
    act = _single_activation(graph, add, by_id, reads, allowed_vjps=[])
    if act is None:
        return add.with_(op="matmul_bias", inputs=inputs, attrs={"activation": None}), \
            (matmul.id,)
    fused = act.with_(op="matmul_bias", inputs=inputs, attrs={"activation": act.op})
    return fused, (matmul.id, add.id)


def _single_activation(graph: Graph, node: Node, by_id: dict[int, Node],
                       reads: dict[int, list[tuple[int, str]]],
                       allowed_vjps: list[int]) -> Node | None:
    """The activation that is ``node``'s only reader, or None.

    Reads that do not count: ``allowed_vjps`` reading ``node`` as their forward node, and the
    activation's vjps reading ``node`` as their forward node's input.
    """
    if node.id in graph.outputs.values():
        return None
    users = {r for r, kind in reads[node.id] if kind == "input"}
    if len(users) != 1:
        return None
    act = by_id[users.pop()]
    if act.op not in ACTIVATIONS or act.inputs != (node.id,):
        return None
    if act.shape != node.shape or act.dtype != node.dtype:
        return None
    for reader, kind in reads[node.id]:
        if kind == "input" and reader == act.id:
            continue
        if kind == "forward_value" and reader in allowed_vjps:
            continue
        if kind == "forward_input" and by_id[reader].inputs[0] == act.id:
            continue
        return None
    return act


def _only_reader(graph: Graph, node: Node, by_id: dict[int, Node],
                 reads: dict[int, list[tuple[int, str]]]) -> Node | None:
    if node.id in graph.outputs.values():
        return None
    readers = {r for r, _ in reads[node.id]}
    return by_id[readers.pop()] if len(readers) == 1 else None


def _bias_like(bias: Node, matmul: Node) -> bool:
    """``bias`` broadcasts over the last axis of ``matmul``'s value only."""
    if bias.shape is None or matmul.shape is None or bias.dtype != matmul.dtype:
        return False
    if not bias.shape or len(bias.shape) > len(matmul.shape):
        return False
    return bias.shape[-1] == matmul.shape[-1] and all(d == 1 for d in bias.shape[:-1])


def _reads(graph: Graph) -> dict[int, list[tuple[int, str]]]:
    """For each value, who reads it and how: ``input`` (listed), ``forward_value`` (a vjp's
    forward node, also listed) or ``forward_input`` (an input of a vjp's forward node)."""
    by_id = graph._index()
    reads: dict[int, list[tuple[int, str]]] = {n.id: [] for n in graph.nodes}
    for n in graph.nodes:
        for k, i in enumerate(n.inputs):
            reads[i].append((n.id, "forward_value" if n.op == "vjp" and k == 0 else "input"))
        if n.op == "vjp":
            for i in by_id[n.inputs[0]].inputs:
                reads[i].append((n.id, "forward_input"))
    return reads


def _vjps_of(graph: Graph) -> dict[int, list[int]]:
    vjps: dict[int, list[int]] = {n.id: [] for n in graph.nodes}
    for n in graph.nodes:
        if n.op == "vjp":
            vjps[n.inputs[0]].append(n.id)
    return vjps


def _report(before: Graph, after: Graph, notes: list[str]) -> PassReport:
    return PassReport("fuse_linear", len(before.nodes), len(after.nodes), before.nbytes(),
                      after.nbytes(), notes=notes)
