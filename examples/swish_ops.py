"""A plugin: one op, registered by name, for `graphtool ... --plugin examples/swish_ops.py`.

Swish (Ramachandran et al., 2017): ``x * sigmoid(x)``. Its backward is written with
operators on what ``get_retained_inputs`` returns, so it works on arrays (first order) and on
Variables (double backprop) alike, as every built-in op's does.
"""

import graphcore
from graphcore import generic


@graphcore.register_op
class Swish(graphcore.FunctionNode):
    """x * sigmoid(x), elementwise."""

    name = "swish"
    elementwise = True
    arity = 1

    def forward(self, inputs):
        (x,) = inputs
        self.retain_inputs((0,))
        return (x * generic.sigmoid(x),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        s = generic.sigmoid(x)
        return (grad_outputs[0] * (s + x * s * (1 - s)),)


def swish(x):
    """The op as a function, as ``F.*`` wrappers are: ``y = swish(x)``."""
    return Swish().apply((x,))[0]
