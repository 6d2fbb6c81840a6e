"""Convolution links (Chainer's constructors, lazy input channels) and ``Classifier``."""

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore.computational_graph import build_computational_graph
from graphcore.gradient_check import check_backward


def test_convolution_2d_forms_of_the_constructor():
    full = L.Convolution2D(3, 8, 3, stride=2, pad=1)
    assert full.W.shape == (8, 3, 3, 3) and full.b.shape == (8,)
    lazy = L.Convolution2D(None, 8, (3, 2))
    short = L.Convolution2D(8, 3)  # Chainer's two-argument form: out_channels, ksize
    assert lazy.W.array is None and short.W.array is None
    x = np.zeros((2, 5, 9, 9), np.float32)
    assert lazy(x).shape == (2, 8, 7, 8) and lazy.W.shape == (8, 5, 3, 2)
    assert short(x).shape == (2, 8, 7, 7) and short.W.shape == (8, 5, 3, 3)
    assert full(np.zeros((1, 3, 9, 9), np.float32)).shape == (1, 8, 5, 5)


def test_convolution_2d_options_reach_the_op():
    conv = L.Convolution2D(4, 6, 3, pad=2, nobias=True, dilate=2, groups=2)
    assert conv.b is None and conv.W.shape == (6, 2, 3, 3)
    x = np.random.rand(1, 4, 7, 7).astype(np.float32)
    want = F.convolution_2d(x, conv.W.array, pad=2, dilate=2, groups=2).array
    np.testing.assert_array_equal(conv(x).array, want)


def test_initial_values_are_used():
    W = np.arange(2 * 1 * 2 * 2, dtype=np.float32).reshape(2, 1, 2, 2)
    conv = L.Convolution2D(1, 2, 2, initialW=W, initial_bias=0.5)
    np.testing.assert_array_equal(conv.W.array, W)
    np.testing.assert_array_equal(conv.b.array, [0.5, 0.5])
    with pytest.raises(graphcore.errors.ShapeError, match="initialW has shape"):
        L.Convolution2D(3, 2, 2, initialW=W)


def test_groups_must_divide_channels():
    with pytest.raises(ValueError, match="divisible by groups"):
        L.Convolution2D(4, 5, 3, groups=2)
    with pytest.raises(graphcore.errors.ShapeError, match="not divisible by groups"):
        L.Convolution2D(None, 4, 3, groups=2)(np.zeros((1, 3, 5, 5), np.float32))


def test_convolution_1d_and_deconvolutions():
    c1 = L.Convolution1D(None, 4, 3, pad=1)
    assert c1(np.zeros((2, 3, 10), np.float32)).shape == (2, 4, 10)
    assert c1.W.shape == (4, 3, 3)
    d2 = L.Deconvolution2D(None, 3, 4, stride=2, pad=1)
    assert d2(np.zeros((2, 5, 6, 6), np.float32)).shape == (2, 3, 12, 12)
    assert d2.W.shape == (5, 3, 4, 4)
    d2_out = L.Deconvolution2D(5, 3, 3, stride=2, outsize=(12, 12))
    assert d2_out(np.zeros((1, 5, 6, 6), np.float32)).shape == (1, 3, 12, 12)
    d1 = L.Deconvolution1D(3, 2, 3, stride=2)
    assert d1(np.zeros((1, 3, 4), np.float32)).shape == (1, 2, 9)


def test_convolution_link_gradients_match_finite_differences():
    conv = L.Convolution2D(2, 3, 3, pad=1, stride=2)
    x = np.random.rand(2, 2, 5, 5).astype(np.float32)
    gy = np.random.rand(2, 3, 3, 3).astype(np.float32)
    check_backward(conv, x, gy, params=(conv.W, conv.b), dtype=np.float64, eps=1e-3,
                   atol=1e-4, rtol=1e-3)


class LeNet(graphcore.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.conv1 = L.Convolution2D(None, 4, 3)
            self.conv2 = L.Convolution2D(4, 6, 3)
            self.fc = L.Linear(None, 3)

    def forward(self, x):
        h = F.max_pooling_2d(F.relu(self.conv1(x)), 2)
        h = F.max_pooling_2d(F.relu(self.conv2(h)), 2)
        return self.fc(F.reshape(h, (h.shape[0], -1)))


def _data(n=12):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 1, 12, 12)).astype(np.float32)
    t = (x[:, 0, :6].sum(axis=(1, 2)) > 0).astype(np.int32) + (x[:, 0, 6:].mean() > 0)
    return x, t.astype(np.int32)


def test_classifier_reports_loss_and_accuracy_as_attributes():
    model = L.Classifier(LeNet())
    x, t = _data()
    loss = model(x, t)
    assert model.loss is loss and model.y.shape == (12, 3)
    np.testing.assert_allclose(loss.array, F.softmax_cross_entropy(model.y, t).array)
    assert float(model.accuracy.array) == float(F.accuracy(model.y, t).array)
    model.compute_accuracy = False
    model(x, t)
    assert model.accuracy is None


def test_classifier_label_key():
    model = L.Classifier(LeNet(), label_key="t")
    x, t = _data()
    model(x, t=t)
    assert model.y.shape == (12, 3)
    with pytest.raises(ValueError, match='Label key "t" is not found'):
        model(x)
    with pytest.raises(ValueError, match="out of bounds"):
        L.Classifier(LeNet(), label_key=3)(x, t)
    with pytest.raises(TypeError, match="label_key"):
        L.Classifier(LeNet(), label_key=1.5)


def test_a_small_lenet_trains_and_draws_chainer_labels():
    np.random.seed(0)
    model = L.Classifier(LeNet())
    optimizer = graphcore.optimizers.Adam(0.01).setup(model)
    x, t = _data()
    losses = []
    for _ in range(15):
        model.cleargrads()
        loss = model(x, t)
        loss.backward()
        optimizer.update()
        losses.append(float(loss.array))
    assert losses[-1] < losses[0] * 0.5
    names = [name for name, _ in model.namedparams()]
    assert names == ["/predictor/conv1/W", "/predictor/conv1/b", "/predictor/conv2/W",
                     "/predictor/conv2/b", "/predictor/fc/W", "/predictor/fc/b"]
    dot = build_computational_graph([model(x, t)]).dump()
    for label in ("Convolution2DFunction", "MaxPooling2D", "ReLU", "LinearFunction",
                  "SoftmaxCrossEntropy"):
        assert f'label="{label}"' in dot
    assert "Accuracy" not in dot  # no graph node: accuracy has no gradient


def test_classifier_reports_loss_and_accuracy_as_chainers_does():
    from graphcore import reporter

    model = L.Classifier(L.Linear(3, 2))
    r = reporter.Reporter()
    r.add_observer("main", model)
    observation = {}
    x = np.ones((4, 3), np.float32)
    t = np.array([0, 1, 1, 0], np.int32)
    with r.scope(observation):
        loss = model(x, t)
    assert set(observation) == {"main/loss", "main/accuracy"}
    assert float(observation["main/loss"]) == float(loss.array)
