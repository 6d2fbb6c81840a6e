"""Fuse chains of elementwise nodes into one ``fused`` node that runs in one buffer.

Before (an inference graph)::

    %3 = add(%0, %1) : f32[3,5]
    %4 = tanh(%3) : f32[3,5]
    %5 = scale[by=2.0](%4) : f32[3,5]

after::

    %5 = fused[program=((add, {}, (0, 1)), (tanh, {}, (-1,)), (scale, {'by': 2.0}, (-1,)))](
        %0, %1) : f32[3,5]

A chain is a run of fusable nodes ``n1 -> n2 -> ... -> nk`` where each ``n(i+1)`` reads ``ni`` and
nothing else does: ``ni`` has exactly one reader, counting the implicit reads of the IR
conventions (a ``vjp`` reads its forward node's value and inputs), and is not named in
``graph.outputs``. Every node of a chain has the chain output's shape and dtype, so the running
value is never broadcast (a binary op that would broadcast it ends the chain). Where a node could
continue two chains, the first operand wins. Chains are maximal; one of length 1 is left alone.
A chain of values over ``SPAN_LIMIT_BYTES`` never spans a non-fusable computed node (``n(i+1)``
may not come after one that ``ni`` precedes): fusing across it would keep the chain's inputs
alive through it, e.g. every step's term of a large gradient summed over many steps, where
adding each term as it comes (in place) is faster.
The fused node takes the id of the chain's last node and stands where it stood; the other nodes
of the chain disappear. Its inputs are the chain's external values in first-use order.

Fusable nodes: the registry ops in ``FUSABLE_OPS``, and a ``vjp`` with ``index=0``, two inputs
``(forward, gy)`` and ``of`` in ``FUSABLE_VJPS``, whose forward node is that op (or a
``linear_act`` / ``matmul_bias`` / ``concat_linear`` with that ``activation``).

Program semantics (what the lowering implements). ``attrs["program"]`` is a tuple of
instructions ``(op, attrs, operands)``; ``attrs`` is the original node's attribute dict;
``operands`` is a tuple of ints: ``-1`` is the running value (the previous instruction's result),
``k >= 0`` is ``inputs[k]`` of the fused node. The first instruction has no ``-1``. With ``out``
the fused node's buffer (its shape and dtype)::

    for op, attrs, operands in program:
        args = [out if k == -1 else inputs[k] for k in operands]
        out[...] = KERNEL[op](*args, **attrs)    # numpy, written with out=out
    # the fused node's value is out

``inputs[k]`` are read-only and may broadcast to ``out``'s shape; ``-1`` always has it. An
instruction reads all its operands before it writes ``out``: a kernel of several numpy calls
must not clobber an operand that is ``out`` (``-1``, or an input that memory planning placed in
``out``'s buffer, see ``plan_memory``) before it has read it. Kernels, ``a, b`` the operands::

    add a + b         sub a - b           mul a * b              div a / b
    neg -a            abs |a|             square a * a           sqrt, exp, log, tanh
    scale[by] a * by                      add_scalar[value] a + value
    rsub_scalar[value] value - a          rdiv_scalar[value] value / a
    pow_scalar[exponent] a ** exponent    relu max(a, 0)
    sigmoid tanh(a / 2) / 2 + 1/2         (the registry's stable form)
    vjp:relu(gy, y)    gy * (y > 0)       vjp:tanh(gy, y)    gy * (1 - y * y)
    vjp:sigmoid(gy, y) gy * y * (1 - y)   vjp:exp(gy, y)     gy * y

where a vjp's operands are the incoming gradient ``gy`` and the forward node's output ``y``
(never its input), in that order.
"""

from __future__ import annotations

import numpy as np

from graphcore.static.ir import Graph, Node
from graphcore.static.passes.base import PassReport

FUSABLE_OPS = {
    "add": 2, "sub": 2, "mul": 2, "div": 2,
    "neg": 1, "abs": 1, "square": 1, "sqrt": 1, "exp": 1, "log": 1,
    "scale": 1, "add_scalar": 1, "rsub_scalar": 1, "rdiv_scalar": 1, "pow_scalar": 1,
    "relu": 1, "tanh": 1, "sigmoid": 1,
}  # op name -> number of inputs
FUSABLE_VJPS = ("relu", "tanh", "sigmoid", "exp")  # backward from the output alone


def fuse_elementwise(graph: Graph) -> tuple[Graph, PassReport]:
    """Fuse maximal single-reader elementwise chains; see the module doc for the program form."""
    by_id = graph._index()
    readers = _readers(graph)
    previous = _chain_links(graph, by_id, readers)  # node id -> the chain node before it
    continued = set(previous.values())
    fused: dict[int, Node] = {}
    removed: set[int] = set()
    notes = []
    for node in graph.nodes:
        if node.id not in previous or node.id in continued:
            continue  # not the last node of a chain of 2 or more
        chain = [node]
        while chain[-1].id in previous:
            chain.append(by_id[previous[chain[-1].id]])
        chain.reverse()
        fused[node.id] = _fuse(chain, by_id)
        removed.update(n.id for n in chain[:-1])
        notes.append(f"%{node.id} <- " + ", ".join(f"%{n.id} {_instruction_op(n)}"
                                                      for n in chain))
    if not fused:
        return graph.copy(), _report(graph, graph, ["nothing to fuse"])
    nodes = [fused.get(n.id, n) for n in graph.nodes if n.id not in removed]
    new = graph.copy(nodes)
    new.slots = {}  # a plan made for the old nodes means nothing now
    return new, _report(graph, new, notes)


def _chain_links(graph: Graph, by_id: dict[int, Node],
                 readers: dict[int, set[int]]) -> dict[int, int]:
    """For each fusable node that continues a chain, the id of the node whose value it runs on."""
    outputs = set(graph.outputs.values())
    previous: dict[int, int] = {}
    # how many non-fusable computations precede each node: a link across one would keep the
    # chain's inputs alive through it (a gradient summed over many steps would hold every
    # step's term until the last one instead of adding each as it comes)
    barriers: dict[int, int] = {}
    count = 0
    for node in graph.nodes:
        barriers[node.id] = count
        if node.op not in ("input", "param", "const") and not _fusable(node, by_id):
            count += 1
    for node in graph.nodes:
        if not _fusable(node, by_id):
            continue
        for i in _operands(node):
            before = by_id[i]
            if (_fusable(before, by_id) and readers[i] == {node.id} and i not in outputs
                    and before.shape == node.shape and before.dtype == node.dtype
                    and (barriers[i] == barriers[node.id] or _small(node))):
                previous[node.id] = i
                break
    return previous


# Below this size the values a chain keeps alive across other nodes stay cache-sized, and
# one fused pass beats a pass per term.
SPAN_LIMIT_BYTES = 256 * 1024


def _small(node: Node) -> bool:
    return int(np.prod(node.shape)) * np.dtype(node.dtype).itemsize <= SPAN_LIMIT_BYTES


def _fuse(chain: list[Node], by_id: dict[int, Node]) -> Node:
    """The ``fused`` node for a chain (first to last), with the last node's id."""
    inputs: list[int] = []
    program = []
    for k, node in enumerate(chain):
        operands = []
        for i in _operands(node):
            if k > 0 and i == chain[k - 1].id:
                operands.append(-1)
                continue
            if i not in inputs:
                inputs.append(i)
            operands.append(inputs.index(i))
        attrs = {} if node.op == "vjp" else dict(sorted(node.attrs.items()))
        program.append((_instruction_op(node), attrs, tuple(operands)))
    last = chain[-1]
    return last.with_(op="fused", inputs=tuple(inputs), attrs={"program": tuple(program)})


def _fusable(node: Node, by_id: dict[int, Node]) -> bool:
    if node.op in FUSABLE_OPS:
        return len(node.inputs) == FUSABLE_OPS[node.op] and node.shape is not None
    if node.op != "vjp" or len(node.inputs) != 2:
        return False
    of = node.attrs.get("of")
    if of not in FUSABLE_VJPS or node.attrs.get("index") != 0:
        return False
    forward = by_id[node.inputs[0]]
    if forward.op in ("linear_act", "matmul_bias", "convolution_act", "concat_linear"):
        made_by = forward.attrs.get("activation")
    else:
        made_by = forward.op
    return made_by == of and forward.shape == node.shape and forward.dtype == node.dtype


def _operands(node: Node) -> tuple[int, ...]:
    """Value ids in instruction-operand order: a vjp reads ``(gy, y)``."""
    if node.op == "vjp":
        return node.inputs[1], node.inputs[0]
    return node.inputs


def _instruction_op(node: Node) -> str:
    return f"vjp:{node.attrs['of']}" if node.op == "vjp" else node.op


def _readers(graph: Graph) -> dict[int, set[int]]:
    """Who reads each value: listed inputs, plus each vjp's forward node's inputs."""
    by_id = graph._index()
    readers: dict[int, set[int]] = {n.id: set() for n in graph.nodes}
    for n in graph.nodes:
        for i in n.inputs:
            readers[i].add(n.id)
        if n.op == "vjp":
            for i in by_id[n.inputs[0]].inputs:
                readers[i].add(n.id)
    return readers


def _report(before: Graph, after: Graph, notes: list[str]) -> PassReport:
    return PassReport("fuse_elementwise", len(before.nodes), len(after.nodes), before.nbytes(),
                      after.nbytes(), notes=notes)
