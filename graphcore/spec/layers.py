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

from graphcore import functions as F
from graphcore import links as L
from graphcore.errors import ShapeError
from graphcore.function_node import Attr
from graphcore.links.link import Link


@dataclass(frozen=True)
class Layer:
    name: str
    doc: str
    attributes: dict[str, Attr]
    arity: int
    make: Callable[[dict[str, Any]], Link]


def _linear(attrs: dict[str, Any]) -> Link:
    n_batch_axes = attrs.get("n_batch_axes")
    if n_batch_axes is None:
        return L.Linear(attrs.get("in_size"), attrs["out_size"],
                        nobias=attrs.get("nobias", False))
    return _FlatteningLinear(n_batch_axes, attrs.get("in_size"), attrs["out_size"],
                             nobias=attrs.get("nobias", False))


class _FlatteningLinear(L.Linear):
    """``linear`` with ``n_batch_axes``: the axes after the first ``n_batch_axes`` are
    flattened into one feature axis first (Chainer's ``n_batch_axes``), e.g. a convolution's
    ``(N, C, H, W)`` output becomes ``(N, C * H * W)``."""

    def __init__(self, n_batch_axes: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.n_batch_axes = n_batch_axes

    def forward(self, x):
        n = self.n_batch_axes
        if x.ndim < n:
            raise ShapeError(f"linear: n_batch_axes is {n} but the input has shape {x.shape}")
        if x.ndim != n + 1:
            x = F.reshape(x, tuple(x.shape[:n]) + (-1,))
        return super().forward(x)


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
    return L.BatchNormalization(attrs.get("size"), decay=attrs.get("decay", 0.9),
                                eps=attrs.get("eps", 2e-5))


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
              1, _linear),
        Layer("embed_id", "rows of W: (in_size, out_size) picked by integer ids",
              {"in_size": Attr(int, required=True, low=1, doc="vocabulary size"),
               "out_size": Attr(int, required=True, low=1, doc="embedding size"),
               "ignore_label": Attr((int, type(None)), None, doc="id that maps to zeros")},
              1, _embed),
        Layer("batch_normalization", "normalize by batch statistics (running averages in "
              "inference), then scale by gamma and shift by beta",
              {"size": Attr((int, type(None)), None, low=1,
                            doc="channels (null: taken from the input's axis 1)"),
               "decay": Attr(float, 0.9, low=0.0, high=1.0, doc="running average decay"),
               "eps": Attr(float, 2e-5, low=0.0, doc="added to the variance")},
              1, _batch_norm),
        Layer("convolution_2d", "2-d convolution of (N, C, H, W); parameters W: (out_channels, "
              "in_channels / groups, kh, kw), b: (out_channels,)",
              _conv_attributes(transposed=False), 1, _convolution(L.Convolution2D)),
        Layer("convolution_1d", "1-d convolution of (N, C, W); parameters W: (out_channels, "
              "in_channels / groups, k), b: (out_channels,)",
              _conv_attributes(transposed=False), 1, _convolution(L.Convolution1D)),
        Layer("deconvolution_2d", "2-d transposed convolution of (N, C, H, W); parameters W: "
              "(in_channels, out_channels / groups, kh, kw), b: (out_channels,)",
              _conv_attributes(transposed=True), 1, _convolution(L.Deconvolution2D)),
        Layer("deconvolution_1d", "1-d transposed convolution of (N, C, W); parameters W: "
              "(in_channels, out_channels / groups, k), b: (out_channels,)",
              _conv_attributes(transposed=True), 1, _convolution(L.Deconvolution1D)),
    )
}
