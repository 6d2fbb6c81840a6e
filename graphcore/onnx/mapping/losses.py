"""Converters of the losses, for a model whose output is a loss (a Python model returning
one, a spec output naming one; ``export_spec`` leaves the spec's own ``loss:`` out).

Chainer's divisors are kept: ``normalize`` divides the summed loss by the number of counted
labels (at least 1), otherwise by the batch size ``N`` (read from the input's shape, so it
follows a symbolic batch); ``class_weight`` scales each term without changing the divisor,
which is why ONNX's ``mean`` reduction (it divides by the summed weights) is not used.
"""

from __future__ import annotations

import numpy as np

from graphcore.onnx.mapping.base import cast, converts


def _counted(e, node, t: str) -> str:
    """1 where the label counts (is not ``ignore_label``), else 0, in the node's dtype."""
    t_dtype = np.dtype(e.by_id[node.inputs[1]].dtype)
    ignored = e.op("Equal", [t, e.const(np.asarray(node.attrs.get("ignore_label", -1),
                                                   t_dtype))])
    return cast(e, e.op("Not", [ignored]), node.dtype)


def _reduced(e, node, losses: str, counted: str, t: str) -> str:
    """``losses`` as the op returns them: per element (``reduce='no'``) or their sum over
    the divisor."""
    if node.attrs.get("reduce", "mean") == "no":
        return losses
    total = e.op("ReduceSum", [losses], keepdims=0)
    if node.attrs.get("normalize", True):
        count = e.op("ReduceSum", [counted], keepdims=0)
    else:
        batch = e.op("Gather", [e.op("Shape", [t]), e.const(np.asarray(0, np.int64))])
        count = cast(e, batch, node.dtype)
    count = e.op("Max", [count, e.const(np.asarray(1, node.dtype))])
    return e.op("Div", [total, count])


@converts("softmax_cross_entropy")
def _softmax_cross_entropy(e, node, ins):
    """ONNX's ``SoftmaxCrossEntropyLoss`` per label (ignored labels give 0), then Chainer's
    divisor."""
    x, t = ins
    weight = node.attrs.get("class_weight")
    inputs = [x, t] if weight is None else [x, t, e.const(np.asarray(weight, node.dtype))]
    losses = e.op("SoftmaxCrossEntropyLoss", inputs, reduction="none",
                  ignore_index=int(node.attrs.get("ignore_label", -1)))
    return _reduced(e, node, losses, _counted(e, node, t), t)


@converts("sigmoid_cross_entropy")
def _sigmoid_cross_entropy(e, node, ins):
    """``max(x, 0) - x t + log(1 + exp(-|x|))`` where the label counts, else 0."""
    x, t = ins
    counted = _counted(e, node, t)
    labels = cast(e, t, node.dtype)
    softplus = e.op("Softplus", [e.op("Neg", [e.op("Abs", [x])])])
    terms = e.op("Add", [e.op("Sub", [e.op("Relu", [x]), e.op("Mul", [x, labels])]), softplus])
    return _reduced(e, node, e.op("Mul", [terms, counted]), counted, x)


@converts("mean_absolute_error")
def _mean_absolute_error(e, node, ins):
    return e.op("ReduceMean", [e.op("Abs", [e.op("Sub", ins)])], keepdims=0)


@converts("mean_squared_error")
def _mean_squared_error(e, node, ins):
    diff = e.op("Sub", ins)
    return e.op("ReduceMean", [e.op("Mul", [diff, diff])], keepdims=0)
