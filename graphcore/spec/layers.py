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

from graphcore import links as L
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
    return L.Linear(attrs.get("in_size"), attrs["out_size"], nobias=attrs.get("nobias", False))


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
               "nobias": Attr(bool, False, doc="no bias parameter")},
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
    )
}
