"""``graphcore.links`` (imported as ``L``): layers with parameters, Chainer's names."""

from graphcore.links.attention import MultiHeadAttention
from graphcore.links.batch_norm import BatchNormalization, BatchRenormalization
from graphcore.links.bilinear import Bias, Bilinear, Scale
from graphcore.links.classifier import Classifier
from graphcore.links.convolution import (
    Convolution1D,
    Convolution2D,
    Convolution3D,
    ConvolutionND,
    Deconvolution1D,
    Deconvolution2D,
    Deconvolution3D,
    DeconvolutionND,
    DeformableConvolution2D,
    DeformableConvolution2DSampler,
    DepthwiseConvolution2D,
    DilatedConvolution2D,
    LocalConvolution2D,
    MLPConvolution2D,
)
from graphcore.links.decorrelated_batch_norm import DecorrelatedBatchNormalization
from graphcore.links.embed import EmbedID
from graphcore.links.group_norm import GroupNormalization
from graphcore.links.inception import Inception, InceptionBN
from graphcore.links.layer_norm import LayerNormalization
from graphcore.links.linear import Linear
from graphcore.links.link import Chain, ChainList, Link, Sequential
from graphcore.links.n_step_rnn import (
    NStepBiGRU,
    NStepBiLSTM,
    NStepBiRNNReLU,
    NStepBiRNNTanh,
    NStepGRU,
    NStepLSTM,
    NStepRNNReLU,
    NStepRNNTanh,
)
from graphcore.links.rnn import (
    GRU,
    LSTM,
    RNN,
    MGUBase,
    StatefulGRU,
    StatefulMGU,
    StatefulPeepholeLSTM,
    StatelessGRU,
    StatelessLSTM,
    StatelessMGU,
)

__all__ = ["GRU", "LSTM", "RNN", "BatchNormalization", "Chain", "ChainList", "EmbedID",
           "LayerNormalization", "Link", "Linear", "MultiHeadAttention", "NStepGRU",
           "NStepLSTM", "Sequential", "StatefulGRU", "StatelessGRU", "StatelessLSTM",
           "Classifier", "Convolution1D", "Convolution2D", "Deconvolution1D", "Deconvolution2D",
           "Convolution3D", "ConvolutionND", "Deconvolution3D", "DeconvolutionND",
           "DepthwiseConvolution2D", "DilatedConvolution2D", "LocalConvolution2D",
           "MLPConvolution2D", "DeformableConvolution2D", "DeformableConvolution2DSampler",
           "Inception", "InceptionBN"]

from graphcore.links.crf1d import CRF1d  # noqa: E402
from graphcore.links.word_output import (  # noqa: E402
    BinaryHierarchicalSoftmax,
    BlackOut,
    NegativeSampling,
)

__all__ += ["BinaryHierarchicalSoftmax", "BlackOut", "CRF1d", "NegativeSampling"]
__all__ += ["BatchRenormalization", "DecorrelatedBatchNormalization", "GroupNormalization"]

from graphcore.links.highway import Highway  # noqa: E402
from graphcore.links.tree_lstm import ChildSumTreeLSTM, NaryTreeLSTM  # noqa: E402

__all__ += ["ChildSumTreeLSTM", "NaryTreeLSTM", "NStepBiGRU", "NStepBiLSTM", "NStepBiRNNReLU",
            "NStepBiRNNTanh", "NStepRNNReLU", "NStepRNNTanh", "Highway", "MGUBase", "StatefulMGU",
            "StatefulPeepholeLSTM", "StatelessMGU"]

from graphcore.links.activation import (  # noqa: E402
    Maxout,
    PReLU,
    SimplifiedDropconnect,
    Swish,
)

__all__ += ["Maxout", "PReLU", "SimplifiedDropconnect", "Swish"]
__all__ += ["Bias", "Bilinear", "Scale"]
