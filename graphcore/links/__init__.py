"""``graphcore.links`` (imported as ``L``): layers with parameters, Chainer's names."""

from graphcore.links.link import Chain, ChainList, Link, Sequential
from graphcore.links.linear import Linear

__all__ = ["Chain", "ChainList", "Link", "Linear", "Sequential"]
