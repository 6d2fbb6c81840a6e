"""IR forward graph -> ONNX ``ModelProto``, one IR node at a time through ``mapping``.

Values are named after the IR: inputs and params keep their names (``l1/W``), other values are
``v<id>``. When a second trace at another batch size is given, the batch axis of the inputs is
the symbolic dim ``batch``, and every shape an op bakes in (reshape targets) is checked against
both traces; a shape that cannot follow the batch raises ``FixedBatch`` and the caller exports
with fixed dims instead.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from graphcore.onnx.errors import ExportError
from graphcore.onnx.mapping import CONVERTERS, NOT_EXPORTABLE
from graphcore.static.ir import Graph, Node, ancestors

DEFAULT_OPSET = 18  # LayerNormalization (17) and ReduceMean with axes as an input (18)
MIN_OPSET = 13


class FixedBatch(Exception):  # noqa: N818 - a signal between emit and export, never shown
    """A baked-in shape does not follow the batch size."""


class Emitter:
    def __init__(self, graph: Graph, opset: int, batch_shapes: Mapping[int, tuple] | None,
                 where: Mapping[int, str]) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.graph = graph
        self.by_id = {n.id: n for n in graph.nodes}
        self.opset = opset
        self.batch_shapes = batch_shapes
        self.where = where
        self.nodes: list = []
        self.initializers: list = []
        self.names: dict[int, str] = {}
        self.counter = [0]  # shared with child emitters (subgraphs): names stay unique
        self.params: set[str] = set()  # parameter initializers added (shared with children)
        # node id -> the axes whose size the exported value may change (an If's branches differ)
        self.loose: dict[int, set[int]] = {}

    def child(self, graph: Graph, batch_shapes: Mapping[int, tuple] | None,
              where: Mapping[int, str]) -> Emitter:
        """An emitter for a subgraph (If branch, Loop body): its own nodes, the same
        initializers (outer-scope values a subgraph reads) and the same name counter."""
        sub = Emitter(graph, self.opset, batch_shapes, where)
        sub.initializers, sub.counter, sub.params = self.initializers, self.counter, self.params
        sub.loose = self.loose
        return sub

    def fresh(self, stem: str = "t") -> str:
        self.counter[0] += 1
        return f"{stem}{self.counter[0]}"

    def param(self, name: str, array: np.ndarray) -> str:
        """A parameter's initializer, named after it, added once however many graphs read it."""
        if name not in self.params:
            self.params.add(name)
            self.const(np.asarray(array), name)
        return name

    def op(self, op_type: str, inputs: list[str], **attrs) -> str:
        return self.ops(op_type, inputs, 1, **attrs)[0]

    def ops(self, op_type: str, inputs: list[str], count: int, **attrs) -> list[str]:
        """An ONNX node with ``count`` outputs (Split); their names, in order."""
        outs = [self.fresh() for _ in range(count)]
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outs, **attrs))
        return outs

    def const(self, array: np.ndarray, name: str | None = None) -> str:
        name = name or self.fresh("c")
        self.initializers.append(self.numpy_helper.from_array(np.asarray(array), name))
        return name

    def shape_of(self, node_id: int) -> tuple[int, ...]:
        return self.by_id[node_id].shape

    def projections(self, node: Node) -> list[Node]:
        """A multi-output node's outputs (its ``project`` nodes), in order."""
        outs = [n for n in self.by_id.values() if n.op == "project" and n.inputs == (node.id,)]
        return sorted(outs, key=lambda n: n.attrs["index"])

    def follows_batch(self, node_id: int) -> list[bool]:
        """For each axis of the value ``node_id``, whether its size follows the batch."""
        shape = self.by_id[node_id].shape
        if self.batch_shapes is None:
            return [False] * len(shape)
        return [a != b for a, b in zip(shape, self.batch_shapes[node_id], strict=True)]

    def reshape_target(self, node: Node) -> tuple[int, ...]:
        """The node's output shape, with -1 on the one axis that follows the batch."""
        if self.batch_shapes is None:
            return tuple(node.shape)
        other = self.batch_shapes[node.id]
        moving = [i for i, (a, b) in enumerate(zip(node.shape, other, strict=True)) if a != b]
        if len(moving) > 1:
            raise FixedBatch(node.id)
        return tuple(-1 if i in moving else n for i, n in enumerate(node.shape))

    def fixed_shape(self, node: Node) -> tuple[int, ...]:
        """A shape an op bakes in that must not change with the batch."""
        if self.batch_shapes is not None and tuple(self.batch_shapes[node.id]) != node.shape:
            raise FixedBatch(node.id)
        return tuple(node.shape)

    def emit(self, node: Node) -> None:
        if node.op == "project":  # one output of a multi-output node
            self.names[node.id] = self.names[node.inputs[0]][node.attrs["index"]]
            return
        converter = CONVERTERS.get(node.op)
        at = self.where.get(node.id)  # the spec position of the step that made the node
        if converter is None:
            reason = NOT_EXPORTABLE.get(node.op, "no ONNX mapping is registered for it")
            raise ExportError(f"op '{node.op}' cannot be exported to ONNX: {reason}", at)
        if converter.min_opset > self.opset:
            raise ExportError(f"op '{node.op}' needs ONNX opset {converter.min_opset} or "
                              f"newer; --opset is {self.opset}", at)
        ins = [self.names[i] for i in node.inputs]
        try:  # a multi-output op's converter returns one name per output
            self.names[node.id] = converter.emit(self, node, ins)
        except ExportError as e:
            raise ExportError(f"op '{node.op}': {e.message}", e.loc or at) from None


def tensor_type(dtype: str) -> int:
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def build_model(graph: Graph, inputs: list[str], outputs: Mapping[str, int],
                params: Mapping[str, np.ndarray], *, opset: int, name: str,
                metadata: Mapping[str, str], batch_shapes: Mapping[int, tuple] | None = None,
                batch_inputs: tuple[str, ...] = (), where: Mapping[int, str] | None = None,
                dim_name: str = "batch", lower=None):
    """The ONNX model of ``graph``'s forward nodes that ``outputs`` need. ``dim_name``: the
    symbolic dim of the axis that follows the batch (``length`` for one sequence example);
    ``lower(emitter, node) -> bool`` emits the nodes it knows (control-flow regions)."""
    from onnx import helper

    if opset < MIN_OPSET:
        raise ExportError(f"--opset {opset} is too old: the exporter needs opset {MIN_OPSET} "
                          "or newer")
    e = Emitter(graph, opset, batch_shapes, where or {})
    needed = _needed(graph, outputs.values())
    graph_inputs = []
    for node in graph.nodes:
        if node.id not in needed:
            continue
        if node.op == "input":
            e.names[node.id] = node.name
            dims = list(node.shape)
            if batch_shapes is not None and node.name in batch_inputs:
                dims[0] = dim_name
            graph_inputs.append(helper.make_tensor_value_info(node.name,
                                                              tensor_type(node.dtype), dims))
        elif node.op == "param":
            e.names[node.id] = e.param(node.name, params[node.name])
        elif node.op == "const":
            e.names[node.id] = e.const(graph.consts[node.id])
        elif node.op == "guard":
            continue
        elif lower is None or not lower(e, node):
            e.emit(node)
    graph_outputs = []
    for key, node_id in outputs.items():
        node = e.by_id[node_id]
        e.nodes.append(helper.make_node("Identity", [e.names[node_id]], [key]))
        dims: list = list(node.shape)
        if batch_shapes is not None:
            other = batch_shapes[node_id]
            dims = [d if d == o else (dim_name if i == 0 else None)
                    for i, (d, o) in enumerate(zip(node.shape, other, strict=True))]
        dims = [None if i in e.loose.get(node_id, ()) else d for i, d in enumerate(dims)]
        graph_outputs.append(helper.make_tensor_value_info(key, tensor_type(node.dtype), dims))
    onnx_graph = helper.make_graph(e.nodes, name, graph_inputs, graph_outputs, e.initializers)
    model = helper.make_model(onnx_graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="graphtool")
    model.ir_version = min(model.ir_version, 10)  # what the pinned onnxruntime reads
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, str(value)
    return model


def _needed(graph: Graph, roots) -> set[int]:
    return ancestors(graph, roots)
