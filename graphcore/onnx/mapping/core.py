"""Converters of the elementwise ops, shapes, reductions, linear algebra and the layers with
one ONNX operator (``linear``, ``embed_id``, ``layer_normalization``, ``attention``)."""

from __future__ import annotations

import numpy as np

from graphcore.onnx.mapping.base import cast, converts

# --- elementwise --------------------------------------------------------------------------

_UNARY = {"relu": "Relu", "tanh": "Tanh", "sigmoid": "Sigmoid", "exp": "Exp", "log": "Log",
          "sqrt": "Sqrt", "abs": "Abs", "neg": "Neg", "copy": "Identity",
          "sin": "Sin", "cos": "Cos", "tan": "Tan", "arcsin": "Asin", "arccos": "Acos",
          "arctan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "arctanh": "Atanh", "erf": "Erf"}
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
           "maximum": "Max", "minimum": "Min"}


@converts(*_UNARY)
def _unary(e, node, ins):
    return e.op(_UNARY[node.op], ins)


@converts(*_BINARY)
def _binary(e, node, ins):
    return e.op(_BINARY[node.op], ins)


@converts("expm1")
def _expm1(e, node, ins):
    return e.op("Sub", [e.op("Exp", ins), _scalar(e, node, 1)])


@converts("log1p")
def _log1p(e, node, ins):
    return e.op("Log", [e.op("Add", [ins[0], _scalar(e, node, 1)])])


@converts("log2", "log10")
def _log_base(e, node, ins):
    base = 2.0 if node.op == "log2" else 10.0
    return e.op("Mul", [e.op("Log", ins), _scalar(e, node, 1 / np.log(base))])


@converts("erfc")
def _erfc(e, node, ins):
    return e.op("Sub", [_scalar(e, node, 1), e.op("Erf", ins)])


@converts("ndtr")
def _ndtr(e, node, ins):  # (1 + erf(x / sqrt(2))) / 2
    scaled = e.op("Mul", [ins[0], _scalar(e, node, np.sqrt(0.5))])
    return e.op("Mul", [e.op("Add", [e.op("Erf", [scaled]), _scalar(e, node, 1)]),
                        _scalar(e, node, 0.5)])


@converts("fmod")
def _fmod(e, node, ins):
    return e.op("Mod", ins, fmod=1)


@converts("cumsum")
def _cumsum(e, node, ins):
    axis = node.attrs.get("axis")
    x = ins[0]
    if axis is None:  # numpy's cumsum of the flattened input
        x, axis = e.op("Reshape", [x, e.const(np.asarray([-1], np.int64))]), 0
    return e.op("CumSum", [x, e.const(np.asarray(axis, np.int64))])


@converts("multi_add")
def _multi_add(e, node, ins):
    return e.op("Sum", ins)


@converts("square")
def _square(e, node, ins):
    return e.op("Mul", [ins[0], ins[0]])


def _scalar(e, node, value):
    return e.const(np.asarray(value, dtype=node.dtype))


@converts("add_scalar")
def _add_scalar(e, node, ins):
    return e.op("Add", [ins[0], _scalar(e, node, node.attrs["value"])])


@converts("scale")
def _scale(e, node, ins):
    return e.op("Mul", [ins[0], _scalar(e, node, node.attrs["by"])])


@converts("rsub_scalar")
def _rsub_scalar(e, node, ins):
    return e.op("Sub", [_scalar(e, node, node.attrs["value"]), ins[0]])


@converts("rdiv_scalar")
def _rdiv_scalar(e, node, ins):
    return e.op("Div", [_scalar(e, node, node.attrs["value"]), ins[0]])


@converts("pow_scalar")
def _pow_scalar(e, node, ins):
    return e.op("Pow", [ins[0], _scalar(e, node, node.attrs["exponent"])])


@converts("rpow_scalar")
def _rpow_scalar(e, node, ins):
    return e.op("Pow", [_scalar(e, node, node.attrs["base"]), ins[0]])


@converts("leaky_relu")
def _leaky_relu(e, node, ins):
    return e.op("LeakyRelu", ins, alpha=float(node.attrs["slope"]))


@converts("softplus")
def _softplus(e, node, ins):
    beta = float(node.attrs.get("beta", 1.0))
    if beta == 1.0:
        return e.op("Softplus", ins)
    scaled = e.op("Mul", [ins[0], _scalar(e, node, beta)])
    return e.op("Div", [e.op("Softplus", [scaled]), _scalar(e, node, beta)])


@converts("clip")
def _clip(e, node, ins):
    bounds = [node.attrs.get(key) for key in ("x_min", "x_max")]  # None: that side is open
    return e.op("Clip", [ins[0], *("" if b is None else _scalar(e, node, b) for b in bounds)])


@converts("dropout")
def _dropout(e, node, ins):  # exported models are for inference: dropout is the identity
    return e.op("Identity", ins[:1])


@converts("cast")
def _cast(e, node, ins):
    return cast(e, ins[0], node.attrs["dtype"])


# --- shapes ---------------------------------------------------------------------------------

@converts("reshape")
def _reshape(e, node, ins):
    return e.op("Reshape", [ins[0], e.const(np.asarray(e.reshape_target(node), np.int64))])


@converts("transpose")
def _transpose(e, node, ins):
    axes = node.attrs.get("axes")
    if axes is None:
        axes = tuple(reversed(range(len(node.shape))))
    return e.op("Transpose", ins, perm=[int(a) % len(node.shape) for a in axes])


@converts("swapaxes")
def _swapaxes(e, node, ins):
    rank = len(node.shape)
    perm = list(range(rank))
    a, b = node.attrs["axis1"] % rank, node.attrs["axis2"] % rank
    perm[a], perm[b] = perm[b], perm[a]
    return e.op("Transpose", ins, perm=perm)


@converts("broadcast_to")
def _broadcast_to(e, node, ins):
    return e.op("Expand", [ins[0], e.const(np.asarray(node.shape, np.int64))])


@converts("concat")
def _concat(e, node, ins):
    return e.op("Concat", ins, axis=int(node.attrs.get("axis", 1)))


@converts("stack")
def _stack(e, node, ins):
    axis = int(node.attrs.get("axis", 0)) % len(node.shape)
    where = e.const(np.asarray([axis], np.int64))
    return e.op("Concat", [e.op("Unsqueeze", [x, where]) for x in ins], axis=axis)


# --- reductions -----------------------------------------------------------------------------

def _axes(e, node):
    axis = node.attrs.get("axis")
    rank = len(e.shape_of(node.inputs[0]))
    axes = range(rank) if axis is None else (axis if isinstance(axis, tuple | list) else [axis])
    return [int(a) % rank for a in axes]


def _reduce(onnx_op: str):
    def emit(e, node, ins):
        axes = e.const(np.asarray(_axes(e, node), np.int64))
        return e.op(onnx_op, [ins[0], axes], keepdims=int(bool(node.attrs.get("keepdims"))))
    return emit


converts("sum")(_reduce("ReduceSum"))
for _name, _op in (("mean", "ReduceMean"), ("max", "ReduceMax"), ("min", "ReduceMin"),
                   ("prod", "ReduceProd")):
    converts(_name, min_opset=18)(_reduce(_op))


@converts("softmax")
def _softmax(e, node, ins):
    return e.op("Softmax", ins, axis=int(node.attrs.get("axis", 1)))


@converts("log_softmax")
def _log_softmax(e, node, ins):
    return e.op("LogSoftmax", ins, axis=int(node.attrs.get("axis", 1)))


# --- linear algebra, layers -----------------------------------------------------------------

@converts("matmul")
def _matmul(e, node, ins):
    a, b = ins
    if node.attrs.get("transa"):
        a = e.op("Transpose", [a], perm=_swap_last(len(e.shape_of(node.inputs[0]))))
    if node.attrs.get("transb"):
        b = e.op("Transpose", [b], perm=_swap_last(len(e.shape_of(node.inputs[1]))))
    return e.op("MatMul", [a, b])


def _swap_last(rank: int) -> list[int]:
    return [*range(rank - 2), rank - 1, rank - 2]


@converts("einsum")
def _einsum(e, node, ins):
    in_subs, out_sub = node.attrs["in_subs"], node.attrs["out_sub"]
    if "@" not in out_sub:  # forward refuses to sum a non-empty ellipsis: this one is empty
        in_subs = in_subs.replace("@", "")
    return e.op("Einsum", ins, equation=f"{in_subs}->{out_sub}".replace("@", "..."))


@converts("det")
def _det(e, node, ins):
    return e.op("Det", ins)


@converts("linear")
def _linear(e, node, ins):
    x_shape = e.shape_of(node.inputs[0])
    x = ins[0]
    if len(x_shape) == 2:
        return e.op("Gemm", ins, transB=1)
    y = e.op("MatMul", [x, e.op("Transpose", [ins[1]], perm=[1, 0])])
    return e.op("Add", [y, ins[2]]) if len(ins) > 2 else y


@converts("embed_id")
def _embed_id(e, node, ins):
    rows = e.op("Gather", [ins[1], ins[0]], axis=0)
    ignore = node.attrs.get("ignore_label")
    if ignore is None:
        return rows
    ids_dtype = np.dtype(e.by_id[node.inputs[0]].dtype)
    ignored = e.op("Unsqueeze", [e.op("Equal", [ins[0], e.const(np.asarray(ignore, ids_dtype))]),
                                 e.const(np.asarray([-1], np.int64))])
    return e.op("Where", [ignored, e.const(np.zeros((), node.dtype)), rows])


@converts("layer_normalization", min_opset=17)
def _layer_normalization(e, node, ins):
    return e.op("LayerNormalization", ins, axis=-1, epsilon=float(node.attrs["eps"]))


@converts("attention")
def _attention(e, node, ins):
    q, k, v = ins[:3]
    d = e.shape_of(node.inputs[0])[-1]
    scale = node.attrs.get("scale")
    scale = scale if scale is not None else 1.0 / float(np.sqrt(d))
    rank = len(e.shape_of(node.inputs[1]))
    scores = e.op("Mul", [e.op("MatMul", [q, e.op("Transpose", [k], perm=_swap_last(rank))]),
                          _scalar(e, node, scale)])
    if len(ins) > 3:  # masked keys get -inf; a row with no key left gets zeros (as graphcore)
        neg = e.const(np.asarray(-np.inf, node.dtype))
        scores = e.op("Where", [ins[3], scores, neg])
        weights = e.op("Softmax", [scores], axis=-1)
        weights = e.op("Where", [e.op("IsNaN", [weights]), e.const(np.zeros((), node.dtype)),
                                 weights])
    else:
        weights = e.op("Softmax", [scores], axis=-1)
    return e.op("MatMul", [weights, v])
