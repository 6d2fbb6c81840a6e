"""``graphcore.links`` (imported as ``L``): layers with parameters, Chainer's names."""

from graphcore.links.batch_norm import BatchNormalization
from graphcore.links.classifier import Classifier
from graphcore.links.convolution import (
    Convolution1D,
    Convolution2D,
    Deconvolution1D,
    Deconvolution2D,
)
from graphcore.links.embed import EmbedID
from graphcore.links.linear import Linear
from graphcore.links.link import Chain, ChainList, Link, Sequential
from graphcore.links.rnn import LSTM, RNN

__all__ = ["LSTM", "RNN", "BatchNormalization", "Chain", "ChainList", "EmbedID", "Link",
           "Linear", "Sequential",
           "Classifier", "Convolution1D", "Convolution2D", "Deconvolution1D", "Deconvolution2D"]
