"""graphcore: define-by-run autodiff on numpy with a Chainer-compatible API.

>>> import graphcore
>>> import graphcore.functions as F
>>> x = graphcore.Variable(np.ones((2, 3), np.float32))
>>> y = F.sum(F.relu(x))
>>> y.backward()
"""

from graphcore import errors, functions, generic  # noqa: F401
from graphcore import ops as _ops  # noqa: F401  (registers every built-in op)
from graphcore.backprop import grad
from graphcore.config import config, force_backprop_mode, no_backprop_mode, using_config
from graphcore.function_node import Attr, FunctionNode
from graphcore.ops.operators import install_operators as _install_operators
from graphcore.registry import all_ops, get_op, register_op
from graphcore.variable import Parameter, Variable, as_array, as_variable

_install_operators()

from graphcore import (  # noqa: E402
    computational_graph,
    dataset,
    datasets,
    gradient_check,
    initializers,
    iterators,
    links,
    optimizers,
    reporter,
    serializers,
    training,
)
from graphcore.links.link import Chain, ChainList, Link, Sequential  # noqa: E402
from graphcore.reporter import Reporter, report, report_scope  # noqa: E402
from graphcore.static import compile, static_code, static_graph  # noqa: E402

__all__ = [
    "Attr", "Chain", "ChainList", "FunctionNode", "Link", "Parameter", "Reporter", "Sequential",
    "Variable", "dataset", "datasets", "iterators", "report", "report_scope", "reporter",
    "training",
    "all_ops", "as_array", "as_variable", "compile", "computational_graph", "config", "errors",
    "force_backprop_mode", "functions", "get_op", "grad", "gradient_check", "initializers",
    "links", "no_backprop_mode", "optimizers", "register_op", "serializers", "static_graph",
    "dataset", "report", "reporter", "static_code",
    "using_config",
]
