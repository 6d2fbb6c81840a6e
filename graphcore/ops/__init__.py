"""Built-in ops, grouped by kind. Importing this package registers all of them.

Each op declares, beside its ``forward``, its ``shape_rule``: its output shapes and dtypes as
a function of its inputs' and its attributes, computing no array (``graphcore.shapes``: dims
are ints, symbols such as ``"batch"``, or unknown; a mismatch is a ``ShapeInferenceError``
naming the op and the input shapes). Families share one rule (elementwise ops
``shapes.same_as_first``/``float_like_first``, broadcasting binaries ``shapes.broadcasting``,
the reductions); ``tests/ops/test_shape_rules.py`` checks each rule against the op's forward
on its cases in ``tests/op_cases.py`` and lists the ops still without one.
"""

from graphcore.ops import (  # noqa: F401
    activation,
    arithmetic,
    array,
    attention,
    convolution,
    ctc,
    cumulative,
    elementwise,
    embed,
    evaluation,
    im2col,
    indexing,
    linalg,
    local_convolution,
    loss,
    lstm_cell,
    math,
    noise,
    normalization,
    normalization_decorrelated,
    normalization_layer,
    padding,
    pooling,
    reduction,
    shift,
)
from graphcore.registry import all_ops as _all_ops  # noqa: E402

# Every op registered so far is built in and covered by the registry-driven gradient tests, so
# the engine may skip its per-call gradient validation (user ops registered later keep it).
for _op in _all_ops().values():
    _op._checked_grads = False
