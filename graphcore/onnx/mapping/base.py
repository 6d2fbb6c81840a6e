"""The registries every converter family writes into: ``CONVERTERS`` (op name -> its
``Converter``: the lowest opset it needs and the function that emits its ONNX nodes) through
the ``converts`` decorator, and ``NOT_EXPORTABLE`` (op name -> why it has no mapping); and
``cast``, which several families emit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Converter:
    emit: Callable  # (emitter, node, input names) -> output name (a list: one per output)
    min_opset: int = 13


CONVERTERS: dict[str, Converter] = {}

_GRADIENT = ("a gradient op (backward programs record it; a forward model names it only by "
             "hand): not mapped")
NOT_EXPORTABLE: dict[str, str] = {
    "inv": "a matrix inverse, which ONNX has no operator for",
    "diag_einsum": f"{_GRADIENT} (einsum's backward; ONNX's Einsum cannot write a diagonal)",
    "coo_matmul": "a sparse matrix given by coordinate attributes; ONNX has no sparse product "
                  "(export the dense matrix's matmul instead)",
    "coo_matmul_grad_sp": f"{_GRADIENT} (coo_matmul's backward)",
    "embed_id_grad": _GRADIENT,
    "convolution_2d_grad_w": _GRADIENT,
    "convolution_1d_grad_w": _GRADIENT,
    "convolution_nd_grad_w": _GRADIENT,
    "im2col_grad": _GRADIENT,
    "im2col": "ONNX has no operator that gathers image patches into channels",
    "local_convolution_2d": "ONNX has no locally connected (unshared-filter) convolution",
    "shift": "not mapped yet (it would be one Pad and Slice per channel group and a Concat)",
    "sum_to": f"{_GRADIENT} (it reduces broadcast axes)",
    "scatter_add": f"{_GRADIENT} (get_item's backward)",
    "prod_others": f"{_GRADIENT} (prod's backward)",
    "sum_pooling_nd": f"{_GRADIENT} (unpooling_nd's backward)",
    "connectionist_temporal_classification": "ONNX has no CTC loss operator",
    "decorrelated_batch_normalization": "ZCA whitening by an eigendecomposition of the batch "
                                        "covariance, which ONNX has no operator for",
    "lstm_grad": f"{_GRADIENT} (lstm's backward)",
    "slstm_grad": f"{_GRADIENT} (slstm's backward)",
    "cumprodsum": f"{_GRADIENT} (cumprod's backward)",
    "cumprod": "ONNX has no cumulative product (CumSum only), and a log-sum-exp form would be "
               "wrong for zero and negative inputs",
    "arctan2": "ONNX has no two-argument arctangent; a composite of Atan, Div and Where would "
               "need care at x2 = 0 that no exported model has needed yet",
    "pad_sequence": "its padded length and row lengths come from the number and lengths of its "
                    "inputs, a list of sequences ONNX models do not take: not mapped",
    "zoneout": "a training-time random mix of two states (outside training F.zoneout records "
               "no node): not mapped",
    "simplified_dropconnect": "a training-time linear layer with a random weight mask per "
                              "sample (outside training, F.linear is the layer): not mapped",
    "accuracy": "an evaluation recorded as no graph node (it has no gradient): a traced model "
                "holds its value as a constant, so no exported model can contain it",
}


def converts(*names: str, min_opset: int = 13):
    def register(fn: Callable) -> Callable:
        for name in names:
            CONVERTERS[name] = Converter(fn, min_opset)
        return fn
    return register


def cast(e, x: str, dtype) -> str:
    """``x`` cast to the numpy ``dtype`` (an ONNX ``Cast``)."""
    from onnx import helper

    return e.op("Cast", [x], to=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
