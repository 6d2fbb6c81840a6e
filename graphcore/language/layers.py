"""Parameterized layers usable as spec steps (``{op: linear, out_size: 5, name: l1}``).

A spec step names either a registry op (stateless, ``graphcore.all_ops()``) or one of these
layers, which own parameters: the interpreter creates one ``Link`` per layer scope ``name``
and calls it on the step's inputs. A layer's attributes are declared here with the same
``Attr`` records ops use, so the validator checks both the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphcore import links as L
from graphcore.errors import ShapeError
from graphcore.function_node import Attr
from graphcore.language import layer_shapes
from graphcore.links.batch_norm import ChannelBatchNormalization
from graphcore.links.link import Link
from graphcore.ops.array import stack
from graphcore.shapes import Shape, TensorType


@dataclass(frozen=True)
class Layer:
    name: str
    doc: str
    attributes: dict[str, Attr]
    arity: int | None  # None: a variable number of inputs (the layer checks them)
    make: Callable[[dict[str, Any]], Link]
    # (step, attrs, inputs) -> (outputs, parameter shapes): what the layer makes of inputs'
    # TensorTypes, and the shapes its parameters take from them (a lazily sized layer is
    # sized by its first use; every later use of the scope must agree). See ``layer_shapes``.
    shape_rule: Callable[[str, dict[str, Any], tuple[TensorType, ...]],
                         tuple[tuple[TensorType, ...], dict[str, Shape]]] | None = None


def _linear(attrs: dict[str, Any]) -> Link:
    link = L.Linear(attrs.get("in_size"), attrs["out_size"], nobias=attrs.get("nobias", False))
    # None: map the last axis (docs/spec.md); n: flatten after the first n axes (Chainer's)
    link.n_batch_axes = attrs.get("n_batch_axes")
    return link


def _convolution(link: type[Link]) -> Callable[[dict[str, Any]], Link]:
    def make(attrs: dict[str, Any]) -> Link:
        options = {k: tuple(v) if isinstance(v, list) else v for k, v in attrs.items()
                   if k not in ("in_channels", "out_channels", "ksize")}
        ksize = attrs["ksize"]
        return link(attrs.get("in_channels"), attrs["out_channels"],
                    tuple(ksize) if isinstance(ksize, list) else ksize, **options)

    return make


def _conv_attributes(transposed: bool) -> dict[str, Attr]:
    ints = (int, tuple)
    attrs = {
        "out_channels": Attr(int, required=True, low=1, doc="output channels"),
        "ksize": Attr(ints, required=True, low=1, doc="filter size (one per axis or one)"),
        "in_channels": Attr((int, type(None)), None, low=1,
                            doc="input channels (null: taken from the first input's axis 1)"),
        "stride": Attr(ints, 1, low=1, doc="step between windows"),
        "pad": Attr(ints, 0, low=0, doc="zeros added on both sides of each axis"),
        "dilate": Attr(ints, 1, low=1, doc="spacing between filter taps"),
        "groups": Attr(int, 1, low=1, doc="channel groups convolved separately"),
        "nobias": Attr(bool, False, doc="no bias parameter"),
    }
    if transposed:
        attrs["outsize"] = Attr((int, tuple, type(None)), None, low=1,
                                doc="output spatial size (null: the smallest)")
    return attrs


def _embed(attrs: dict[str, Any]) -> Link:
    return L.EmbedID(attrs["in_size"], attrs["out_size"], ignore_label=attrs.get("ignore_label"))


def _batch_norm(attrs: dict[str, Any]) -> Link:
    decay, eps = attrs.get("decay", 0.9), attrs.get("eps", 2e-5)
    if attrs.get("size") is None:
        return ChannelBatchNormalization(decay=decay, eps=eps)
    return L.BatchNormalization(attrs["size"], decay=decay, eps=eps)


class _SequenceInput:
    """``x`` of shape ``(length, in)`` (one sequence) or ``(batch, length, in)`` (a batch of
    equal-length sequences) as the N-step links' list of sequences, and their outputs back.
    Errors name no op: the interpreter prefixes the step's."""

    def _sequences(self, x):
        if x.ndim not in (2, 3):
            raise ShapeError(f"expected a sequence (length, features) or a batch of them "
                             f"(batch, length, features), got {x.shape}")
        return [x] if x.ndim == 2 else [x[i] for i in range(x.shape[0])]

    def _outputs(self, x, ys):
        return ys[0] if x.ndim == 2 else stack(list(ys), axis=0)


class SequenceLSTM(_SequenceInput, L.NStepLSTM):
    """The spec layer ``lstm``: an ``NStepLSTM`` from zero states, returning every step's
    hidden state of the last layer."""

    def forward(self, x):
        _, _, ys = super().forward(None, None, self._sequences(x))
        return self._outputs(x, ys)


class SequenceGRU(_SequenceInput, L.NStepGRU):
    """The spec layer ``gru``: an ``NStepGRU`` from a zero state (see ``SequenceLSTM``)."""

    def forward(self, x):
        _, ys = super().forward(None, self._sequences(x))
        return self._outputs(x, ys)


class SpecMultiHeadAttention(L.MultiHeadAttention):
    """The spec layer ``multi_head_attention``: ``from: x`` (self-attention), ``[x, mask]``
    or ``[x, kv, mask]``; the mask is boolean, True where a query may attend to a key."""

    def forward(self, *inputs):
        if len(inputs) not in (1, 2, 3):
            raise ShapeError(f"takes x, [x, mask] or [x, kv, mask], got {len(inputs)} inputs")
        x, kv, mask = inputs[0], None, None
        if len(inputs) == 2:
            mask = inputs[1]
        elif len(inputs) == 3:
            kv, mask = inputs[1], inputs[2]
        if mask is not None and np.dtype(mask.dtype) != np.bool_:
            raise ShapeError(f"the mask (the last of several inputs) must be boolean, got "
                             f"{mask.dtype}; for cross-attention give [x, kv, mask]")
        return super().forward(x, kv, mask)


def _n_step(cls):
    def make(attrs: dict[str, Any]) -> Link:
        return cls(attrs.get("n_layers", 1), attrs.get("in_size"), attrs["out_size"],
                   attrs.get("dropout", 0.0))

    return make


def _layer_norm(attrs: dict[str, Any]) -> Link:
    return L.LayerNormalization(attrs.get("size"), eps=attrs.get("eps", 1e-6))


def _attention(attrs: dict[str, Any]) -> Link:
    return SpecMultiHeadAttention(attrs["n_heads"], attrs.get("in_size"), attrs.get("out_size"),
                                  dropout=attrs.get("dropout", 0.0),
                                  nobias=attrs.get("nobias", False))


def _recurrent(kind: str, cls) -> Layer:
    return Layer(kind, f"stacked {kind.upper()} over a sequence from zero states: (length, in) "
                 f"or (batch, length, in) -> every step's output (..., length, out); "
                 f"parameters of Chainer's NStep{kind.upper()} (<name>/0/w0, ...)",
                 {"out_size": Attr(int, required=True, low=1, doc="hidden units"),
                  "in_size": Attr((int, type(None)), None, low=1,
                                  doc="input features (null: taken from the first input)"),
                  "n_layers": Attr(int, 1, low=1, doc="stacked layers"),
                  "dropout": Attr(float, 0.0, low=0.0, high=1.0,
                                  doc="dropout between layers (training only)")},
                 1, _n_step(cls), layer_shapes.recurrent)


LAYERS: dict[str, Layer] = {
    layer.name: layer for layer in (
        Layer("linear", "fully connected layer over the last axis: (..., in) -> (..., out); "
              "parameters W: (out, in), b: (out,)",
              {"out_size": Attr(int, required=True, low=1, doc="output features"),
               "in_size": Attr((int, type(None)), None, low=1,
                               doc="input features (null: taken from the first input)"),
               "nobias": Attr(bool, False, doc="no bias parameter"),
               "n_batch_axes": Attr((int, type(None)), None, low=1,
                                    doc="null: map the last axis; n: flatten the axes after "
                                    "the first n into one (as Chainer's n_batch_axes)")},
              1, _linear, layer_shapes.linear),
        Layer("embed_id", "rows of W: (in_size, out_size) picked by integer ids",
              {"in_size": Attr(int, required=True, low=1, doc="vocabulary size"),
               "out_size": Attr(int, required=True, low=1, doc="embedding size"),
               "ignore_label": Attr((int, type(None)), None, doc="id that maps to zeros")},
              1, _embed, layer_shapes.embed_id),
        Layer("batch_normalization", "normalize by batch statistics (running averages in "
              "inference), then scale by gamma and shift by beta",
              {"size": Attr((int, type(None)), None, low=1,
                            doc="channels (null: taken from the input's axis 1)"),
               "decay": Attr(float, 0.9, low=0.0, high=1.0, doc="running average decay"),
               "eps": Attr(float, 2e-5, low=0.0, doc="added to the variance")},
              1, _batch_norm, layer_shapes.batch_normalization),
        _recurrent("lstm", SequenceLSTM),
        _recurrent("gru", SequenceGRU),
        Layer("layer_normalization", "normalize each sample over its last axis, then scale by "
              "gamma and shift by beta (Chainer's LayerNormalization); parameters gamma, beta: "
              "(size,)",
              {"size": Attr((int, type(None)), None, low=1,
                            doc="features (null: taken from the input's last axis)"),
               "eps": Attr(float, 1e-6, low=0.0, doc="added to the variance")},
              1, _layer_norm, layer_shapes.layer_normalization),
        Layer("multi_head_attention", "multi-head scaled dot-product attention: from x "
              "(self-attention), [x, mask] or [x, kv, mask]; x: (batch, Lq, in) or (Lq, in), "
              "mask: boolean, True where a query may attend to a key; parameters W_q, W_k, "
              "W_v: (in, in), W_o: (out, in) and biases",
              {"n_heads": Attr(int, required=True, low=1, doc="attention heads (divide in_size)"),
               "in_size": Attr((int, type(None)), None, low=1,
                               doc="model size (null: taken from the first input)"),
               "out_size": Attr((int, type(None)), None, low=1,
                                doc="output features (null: in_size)"),
               "dropout": Attr(float, 0.0, low=0.0, high=1.0,
                               doc="dropout on the output (training only)"),
               "nobias": Attr(bool, False, doc="no bias parameters")},
              None, _attention, layer_shapes.multi_head_attention),
        Layer("convolution_2d", "2-d convolution of (N, C, H, W); parameters W: (out_channels, "
              "in_channels / groups, kh, kw), b: (out_channels,)",
              _conv_attributes(transposed=False), 1, _convolution(L.Convolution2D),
              layer_shapes.convolution(transposed=False)),
        Layer("convolution_1d", "1-d convolution of (N, C, W); parameters W: (out_channels, "
              "in_channels / groups, k), b: (out_channels,)",
              _conv_attributes(transposed=False), 1, _convolution(L.Convolution1D),
              layer_shapes.convolution(transposed=False)),
        Layer("deconvolution_2d", "2-d transposed convolution of (N, C, H, W); parameters W: "
              "(in_channels, out_channels / groups, kh, kw), b: (out_channels,)",
              _conv_attributes(transposed=True), 1, _convolution(L.Deconvolution2D),
              layer_shapes.convolution(transposed=True)),
        Layer("deconvolution_1d", "1-d transposed convolution of (N, C, W); parameters W: "
              "(in_channels, out_channels / groups, k), b: (out_channels,)",
              _conv_attributes(transposed=True), 1, _convolution(L.Deconvolution1D),
              layer_shapes.convolution(transposed=True)),
    )
}
