"""``F.identity(*xs)``: its inputs, through one node (Chainer's ``Identity``).

A node that changes nothing: Chainer code uses it to give a Variable a creator (a point to
unchain, hook or draw). Not a registered op: it has no attributes and nothing for a spec to
do, and the gradient is the identity at every order.
"""

from __future__ import annotations

from typing import Any

from graphcore.function_node import FunctionNode


class Identity(FunctionNode):
    """Returns its inputs; backward returns the output gradients."""

    label = "Identity"

    def forward(self, inputs):
        return tuple(inputs)

    def backward(self, indexes, grad_outputs):
        return tuple(grad_outputs[i] for i in indexes)


def identity(*inputs: Any) -> Any:
    """The inputs as Variables through one ``Identity`` node (one, or a tuple of them)."""
    ys = Identity().apply(inputs)
    return ys[0] if len(ys) == 1 else ys
