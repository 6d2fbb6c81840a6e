"""``FunctionNode``: the one way to declare an op, and the graph node each call creates.

Every op (built-in or user-defined) subclasses ``FunctionNode`` with ``forward(inputs)`` on
numpy arrays and ``backward(target_input_indexes, grad_outputs)`` written once against the
array-generic functions of ``graphcore.generic`` (or operators, which work on both).  The
engine runs that same backward on raw numpy arrays for first-order gradients (fast, no graph)
and on Variables when double backprop is on (it records a graph, so grads can be differentiated
again).  ``get_retained_inputs()`` / ``get_retained_outputs()`` hand backward the right kind.

Class attributes declare what the rest of the system reads (registry, validator, passes):
``name`` (registry key), ``label`` (Chainer's node label), ``elementwise``, ``pure``,
``higher_order``, ``arity`` and ``attributes`` (``Attr`` declarations, checked when the op is
constructed, see ``graphcore.attributes``).

Chainer's other forms work too: ``forward_cpu`` instead of ``forward``, ``backward_accumulate``
instead of ``backward``, ``check_type_forward`` (``graphcore.utils.type_check``; called by
``apply`` only for ops that define one), and the old-style ``Function`` (forward and backward
on tuples of arrays), run by a ``FunctionAdapter`` node.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np

from graphcore import errors
from graphcore.attributes import Attr, checked_init
from graphcore.config import config
from graphcore.debug import check_forward, creation_stack
from graphcore.utils import type_check
from graphcore.variable import Variable, constant, new_output

# The lists of the open ``recording()`` blocks, innermost last.
_recordings: list[list[FunctionNode]] = []


@contextlib.contextmanager
def recording() -> Iterator[list[FunctionNode]]:
    """Yield a list that gets every node recorded inside the block, in creation order (the
    order define-by-run ran the ops, which random ops must keep; static mode's trace reads
    it). A nested block sees its own nodes and hands them to the enclosing block on exit."""
    created: list[FunctionNode] = []
    _recordings.append(created)
    try:
        yield created
    finally:
        _recordings.pop()
        if _recordings:
            _recordings[-1].extend(created)


def _no_type_check(in_types: tuple) -> None:
    """Every input is taken."""


class _TypeCheck:
    """``FunctionNode.check_type_forward``, Chainer's input check: an op defines
    ``check_type_forward(self, in_types)`` with ``type_check.expect(...)`` on ``in_types`` (a
    ``TypeInfoTuple``) and raises ``type_check.InvalidType`` for inputs it does not take;
    ``apply`` calls it when ``config.type_check`` is on. Without one, every input is taken.
    A node given one of its own (``node.check_type_forward = check``) has that called."""

    def __get__(self, node: FunctionNode | None, owner: type) -> Any:
        if node is None:
            return self
        return node.__dict__.get("check_type_forward", _no_type_check)

    def __set__(self, node: FunctionNode, check: Any) -> None:
        node.__dict__["check_type_forward"] = check
        node.__dict__["_checks_types"] = True


class FunctionNode:
    """Base of every op. Subclass it, define ``forward`` and ``backward``, call ``apply``.

    >>> class Square(FunctionNode):
    ...     def forward(self, inputs):
    ...         x, = inputs
    ...         return x * x,
    ...     def backward(self, indexes, grad_outputs):
    ...         x, = self.get_retained_inputs()
    ...         gy, = grad_outputs
    ...         return 2 * x * gy,
    >>> y, = Square().apply((x,))
    """

    # ``__dict__``: Chainer's ops keep what backward needs as attributes, and tests replace
    # methods of one node (``node.forward_cpu = mock``); built-in ops declare slots and never
    # fill it.
    __slots__ = ("inputs", "outputs", "rank", "_ys", "_saved", "_out_meta", "stack",
                 "__weakref__", "__dict__")

    name: ClassVar[str | None] = None
    elementwise: ClassVar[bool] = False  # output[i] depends on input[i] only (fusable)
    pure: ClassVar[bool] = True  # no side effects, no randomness: safe to CSE / fold
    higher_order: ClassVar[bool] = True  # backward is itself differentiable
    arity: ClassVar[int | None] = None  # number of inputs, None = variadic
    attributes: ClassVar[dict[str, Attr]] = {}
    # ``(op, input TensorTypes) -> output TensorTypes``, no array computed (``graphcore.shapes``);
    # None: the op's shapes are known only when it runs.
    shape_rule: ClassVar[Any] = None
    # The engine validates each gradient a backward returns (count, shape, kind). Built-in ops
    # turn this off: the test suite gradient-checks every one of them.
    _checked_grads: ClassVar[bool] = True
    # Output indexes whose arrays backward reads; built-ins set it, users call retain_outputs.
    _out_keep: ClassVar[tuple[int, ...] | None] = None
    _in_keep: ClassVar[tuple[int, ...] | None] = None
    # A node that can do a whole first-order ``backward()`` from its one output itself (a
    # compiled call): ``walk_leaves(gy) -> bool`` (``gy`` None: ones), False when the engine
    # should walk instead.
    walk_leaves: ClassVar[Any] = None
    # Backward returns buffers this node reuses on its next call (a compiled call's plan): a
    # caller that keeps a gradient beyond the walk copies it.
    lends_buffers: ClassVar[bool] = False
    # Whether ``apply`` calls ``check_type_forward`` (an op that defines one, or a node given
    # one): the ops that do not pay nothing for it.
    _checks_types: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Validate declared attributes where they arrive: in the constructor, once per op.
        super().__init_subclass__(**kwargs)
        if "check_type_forward" in cls.__dict__:
            cls._checks_types = True
        if "__init__" not in cls.__dict__ and "attributes" not in cls.__dict__:
            return  # inherits a constructor already checked against the same declarations
        init = cls.__init__
        init = getattr(init, "unchecked", init)
        if init is object.__init__ or not cls.attributes:
            return
        cls.__init__ = checked_init(init, cls.attributes)

    @property
    def label(self) -> str:
        """The name drawn in graph dumps (Chainer: the class name)."""
        return type(self).__name__

    # --- to be defined by each op -----------------------------------------------------------
    def forward(self, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        """The outputs' arrays. Chainer's default: ``forward_cpu`` (every array is numpy)."""
        return self.forward_cpu(inputs)

    def forward_cpu(self, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        raise NotImplementedError(f"{type(self).__name__} defines no forward")

    def forward_gpu(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        raise NotImplementedError(f"{type(self).__name__} defines no forward_gpu")

    check_type_forward = _TypeCheck()

    def backward(self, target_input_indexes: tuple[int, ...],
                 grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        if type(self).backward_accumulate is not FunctionNode.backward_accumulate:
            # Chainer's other form: the engine sums what it returns with what arrived before.
            return tuple(self.backward_accumulate(
                target_input_indexes, grad_outputs, (None,) * len(target_input_indexes)))
        raise NotImplementedError(f"{type(self).__name__} defines no backward")

    def backward_accumulate(self, target_input_indexes: tuple[int, ...],
                            grad_outputs: tuple[Any, ...],
                            grad_inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        """Chainer's form of backward that adds each input's gradient to ``grad_inputs`` (the
        gradient already there, or ``None``); defining it instead of ``backward`` works."""
        gxs = self.backward(target_input_indexes, grad_outputs)
        return tuple(gx if g is None else g if gx is None else gx + g
                     for gx, g in zip(gxs, grad_inputs, strict=True))

    def op_attrs(self) -> dict[str, Any]:
        """The declared attributes' values: ``type(self)(**node.op_attrs())`` rebuilds the op."""
        return {key: getattr(self, key) for key in self.attributes}

    def check_inputs(self, inputs: tuple[np.ndarray, ...]) -> None:
        """Raise a ShapeError/DTypeError explaining why ``forward`` failed (called on failure)."""

    # --- retention (Chainer API) ------------------------------------------------------------
    def retain_inputs(self, indexes: Sequence[int]) -> None:
        self._in_keep = tuple(indexes)

    def retain_outputs(self, indexes: Sequence[int]) -> None:
        self._out_keep = tuple(indexes)

    def get_retained_inputs(self) -> tuple[Any, ...]:
        """Inputs for backward: arrays for a first-order backward, Variables for double."""
        inputs = self.inputs
        if self._in_keep is not None:
            inputs = tuple(inputs[i] for i in self._in_keep)
        if config.double_backprop:
            return inputs
        return tuple(x._array for x in inputs)

    def output_array(self, index: int) -> np.ndarray:
        """The array of a retained output, for constants such as masks (either walk kind)."""
        ys = self._ys
        if ys is None:
            self.get_retained_outputs()  # raises the explanation
        return ys[index]

    def get_retained_outputs(self) -> tuple[Any, ...]:
        """Outputs for backward: arrays for a first-order backward, Variables for double."""
        ys = self._ys
        if ys is None:
            raise errors.GraphError(
                f"{self.label}: the values saved for backward were freed by an earlier "
                "backward(); call backward(retain_grad=True) to backpropagate twice")
        keep = self._out_keep or ()
        if not config.double_backprop:
            return tuple(ys[i] for i in keep)
        outs = []
        refs = list(self.outputs)
        for i in keep:
            v = refs[i]()
            if v is None:  # the user dropped it; rebuild one attached to this node
                v = new_output(ys[i], self, i, self.rank)
                refs[i] = weakref.ref(v)
            outs.append(v)
        self.outputs = tuple(refs)
        return tuple(outs)

    # --- calling ----------------------------------------------------------------------------
    def apply(self, inputs: Sequence[Variable | np.ndarray]) -> tuple[Variable, ...]:
        """Run forward on ``inputs`` and, when a gradient may be asked for, record the node."""
        xs = []
        arrays = []
        needs_grad = False
        for x in inputs:
            if isinstance(x, Variable):
                if x.requires_grad:
                    needs_grad = True
                arrays.append(x._array)
            else:
                x = constant(_to_array(x, self))
                arrays.append(x._array)
            xs.append(x)
        arrays = tuple(arrays)
        if self._checks_types and config.type_check:
            self._check_data_type_forward(arrays)
        try:
            ys = self.forward(arrays)
        except (errors.GraphcoreError, Warning):  # a numpy warning made an error stays one
            raise
        except Exception as e:
            explained = self._explain(arrays, e)
            if explained is e:
                raise
            raise explained from e
        for y in ys:
            if type(y) is not np.ndarray:  # numpy computes a 0-d result as a scalar
                ys = tuple([np.asarray(y) for y in ys])
                break
        if config.debug:
            check_forward(self, arrays, ys)
        if needs_grad and config.enable_backprop:
            return self._record(tuple(xs), ys)
        return tuple([constant(y) for y in ys])

    def _check_data_type_forward(self, arrays: tuple[np.ndarray, ...]) -> None:
        """``check_type_forward`` on the inputs: fast, on the arrays themselves (light mode),
        and again on expressions only when that fails, for a message naming the condition."""
        try:
            with type_check.light_mode:
                self.check_type_forward(type_check.get_light_types(arrays))
            return
        except type_check.InvalidType:
            pass
        in_types = type_check.get_types(arrays, "in_types", False)
        with type_check.get_function_check_context(self):
            self.check_type_forward(in_types)

    def _record(self, xs: tuple[Variable, ...], ys: tuple[np.ndarray, ...]) -> tuple:
        if _recordings:
            _recordings[-1].append(self)
        rank = 0
        for x in xs:
            if x.rank > rank:
                rank = x.rank
        rank += 1
        self.inputs = xs
        self.rank = rank
        self._ys = ys if self._out_keep is not None else ()
        if config.debug:
            self.stack = creation_stack()
        if len(ys) == 1:
            y = new_output(ys[0], self, 0, rank)
            self.outputs = (weakref.ref(y),)
            return (y,)
        self._out_meta = tuple((y.shape, y.dtype) for y in ys)
        outs = tuple([new_output(y, self, i, rank) for i, y in enumerate(ys)])
        self.outputs = tuple([weakref.ref(v) for v in outs])
        return outs

    def _explain(self, arrays: tuple[np.ndarray, ...], cause: Exception) -> Exception:
        """Turn a numpy failure inside a built-in op's forward into an error naming the op and
        the shapes. A user's op keeps its own exception (as in Chainer) unless its
        ``check_inputs`` finds the inputs wrong."""
        try:
            self.check_inputs(arrays)
        except errors.GraphcoreError as e:
            return e
        if not type(self).__module__.startswith("graphcore."):
            return cause
        shapes = ", ".join(f"{a.shape} {a.dtype}" for a in arrays)
        kind = errors.DTypeError if isinstance(cause, TypeError) else errors.ShapeError
        return kind(f"{self.label}: cannot apply to inputs {shapes}: {cause}")

    def unchain(self) -> None:
        """Drop this node's edges: its inputs go, its live outputs become leaves."""
        for ref in self.outputs:
            y = ref()
            if y is not None:
                y.unchain()
        self.inputs = ()
        self._ys = None

    def output_meta(self, index: int) -> tuple[tuple[int, ...], np.dtype]:
        """Shape and dtype of output ``index`` (to zero-fill a gradient nobody sent)."""
        if len(self.outputs) == 1:
            v = self.outputs[0]()
            if v is not None:
                return v.shape, v.dtype
        return self._out_meta[index]


def _to_array(x: object, node: FunctionNode) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, np.generic | int | float | bool):
        return np.asarray(x)
    raise errors.DTypeError(
        f"{node.label}: inputs must be Variables or numpy arrays, got {type(x).__name__}")


def unchain_graph(root: Variable) -> None:
    """Cut every edge behind ``root`` (iteratively, so deep graphs do not recurse)."""
    stack = [root.creator] if root.creator is not None else []
    seen = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for x in n.inputs:
            if x.creator is not None:
                stack.append(x.creator)
        n.unchain()


class FunctionAdapter(FunctionNode):
    """The node of one call of an old-style ``Function``: forward and backward on tuples of
    arrays, as the ``Function`` defines them. Its backward is not differentiable (as in
    Chainer): the gradients it returns are constants to a double-backprop walk."""

    higher_order = False

    def __init__(self, function: Function) -> None:
        self._function = function

    @property
    def function(self) -> Function:
        return self._function

    @property
    def label(self) -> str:
        return self._function.label

    def check_type_forward(self, in_types: tuple) -> None:
        self._function.check_type_forward(in_types)

    def forward(self, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        self.retain_inputs(range(len(inputs)))  # the function's forward may retain fewer
        return self._function.forward(inputs)

    def backward(self, target_input_indexes: tuple[int, ...],
                 grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        count = len(self.inputs)
        in_data: list[np.ndarray | None] = [None] * count
        for i in self._in_keep if self._in_keep is not None else range(count):
            in_data[i] = self.inputs[i]._array
        grads = tuple(g._array if isinstance(g, Variable) else g for g in grad_outputs)
        gxs = self._function.backward(tuple(in_data), grads)
        if not isinstance(gxs, tuple | list) or len(gxs) != count:
            raise errors.GraphError(
                f"{self.label}: backward must return a tuple of one gradient (or None) per "
                f"input, {count} here, got {gxs!r:.80}")
        picked = [gxs[i] for i in target_input_indexes]
        if config.double_backprop:
            return tuple(None if g is None else constant(g) for g in picked)
        return tuple(picked)

    @property
    def output_data(self) -> tuple[np.ndarray | None, ...]:
        """The outputs' arrays kept by ``retain_outputs`` (``None`` for the others)."""
        ys = self._ys
        if ys is None:
            self.get_retained_outputs()  # raises the explanation
        keep = self._out_keep or ()
        return tuple(ys[i] if i in keep else None for i in range(len(self.outputs)))


class Function:
    """Chainer's old-style function: ``forward(inputs)`` and ``backward(inputs,
    grad_outputs)`` on tuples of arrays (``forward_cpu``/``backward_cpu`` by default;
    ``backward``'s inputs are ``None`` where ``retain_inputs`` left one out), an optional
    ``check_type_forward``. Calling it runs a ``FunctionAdapter`` node and returns a Variable
    (a tuple for several outputs).

    >>> class Square(Function):
    ...     def forward(self, inputs):
    ...         return inputs[0] ** 2,
    ...     def backward(self, inputs, grad_outputs):
    ...         return 2 * inputs[0] * grad_outputs[0],
    >>> y = Square()(x)
    """

    _node: FunctionAdapter | None = None

    def __call__(self, *inputs: Variable | np.ndarray) -> Variable | tuple[Variable, ...]:
        node = FunctionAdapter(self)
        self._node = node
        outputs = node.apply(inputs)
        return outputs[0] if len(outputs) == 1 else outputs

    @property
    def node(self) -> FunctionAdapter:
        """The node of the latest call (one not yet called gets a node of its own)."""
        if self._node is None:
            self._node = FunctionAdapter(self)
        return self._node

    @property
    def inputs(self) -> tuple[Variable, ...]:
        return self.node.inputs

    @property
    def outputs(self) -> tuple:
        return self.node.outputs

    @property
    def label(self) -> str:
        return type(self).__name__

    @property
    def output_data(self) -> tuple[np.ndarray | None, ...]:
        return self.node.output_data

    @property
    def rank(self) -> int:
        return self.node.rank

    @property
    def stack(self) -> Any:
        return self.node.stack

    def check_type_forward(self, in_types: tuple) -> None:
        """Every input is taken unless a subclass says otherwise (see ``type_check``)."""

    def forward(self, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        return self.forward_cpu(inputs)

    def forward_cpu(self, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        raise NotImplementedError(f"{self.label} defines no forward")

    def forward_gpu(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        raise NotImplementedError(f"{self.label} defines no forward_gpu")

    def backward(self, inputs: tuple, grad_outputs: tuple) -> tuple:
        return self.backward_cpu(inputs, grad_outputs)

    def backward_cpu(self, inputs: tuple, grad_outputs: tuple) -> tuple:
        """No gradient for any input, unless a subclass defines one."""
        return tuple(None for _ in inputs)

    def backward_gpu(self, inputs: tuple, grad_outputs: tuple) -> tuple:
        return tuple(None for _ in inputs)

    def unchain(self) -> None:
        self.node.unchain()

    def retain_inputs(self, indexes: Sequence[int]) -> None:
        """Keep only these inputs for ``backward`` (the others reach it as ``None``)."""
        self.node.retain_inputs(indexes)

    def retain_outputs(self, indexes: Sequence[int], retain_after_backward: bool = False,
                       ) -> None:
        """Keep these outputs for ``backward`` (``output_data``)."""
        self.node.retain_outputs(indexes)
