"""A plugin: a Python file that registers ops, loaded with ``--plugin`` by any command.

    graphtool ops --plugin examples/plugin_ops.py      # lists 'cube', marked with this file
"""

import graphcore


class Cube(graphcore.FunctionNode):
    """x ** 3, elementwise."""

    elementwise = True
    arity = 1

    def forward(self, inputs):
        x, = inputs
        return x * x * x,

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()  # arrays, or Variables when differentiating twice
        return 3 * x * x * grad_outputs[0],


graphcore.register_op("cube", Cube)
