"""Every model of Chainer's examples, unchanged (``chainer_suite/chainer_examples/``, Chainer
7.8.1's ``examples/``, MIT), imported after ``chainer_compat.install()`` and trained a few
steps on synthetic data of the example's shapes: the loss must be finite and must fall.

A script's imports of libraries that are not Chainer's (nltk's BLEU and POS corpora,
progressbar, gym) are given empty stand-in modules: the model code does not use them, and the
data they would load is what the synthetic data replaces."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from graphcore import chainer_compat

EXAMPLES = Path(__file__).resolve().parents[2] / "chainer_suite" / "chainer_examples"
NOT_CHAINER = ("nltk", "nltk.translate", "nltk.translate.bleu_score", "progressbar", "gym")


@pytest.fixture
def chainer(monkeypatch):
    for name in NOT_CHAINER:
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    sys.modules["nltk.translate"].bleu_score = sys.modules["nltk.translate.bleu_score"]
    chainer_compat.install()
    import chainer as module

    yield module
    chainer_compat.uninstall()


def example(relative: str, monkeypatch=None):
    """Import an example's file as a module, its folder first on sys.path (its siblings)."""
    path = EXAMPLES / relative
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def train(chainer, model, loss_of, steps=4, optimizer=None):
    """``steps`` updates of ``loss_of(model)``; the losses. numpy's generator is reseeded
    before each loss, so dropout and the DCGAN's noise draw the same each step: each loss is
    then a deterministic function of the parameters, which the steps must make fall."""
    optimizer = optimizer or chainer.optimizers.Adam(alpha=1e-3)
    optimizer.setup(model)
    losses = []
    for _ in range(steps):
        np.random.seed(0)
        loss = loss_of(model)
        model.cleargrads()
        loss.backward()
        optimizer.update()
        losses.append(float(loss.array))
    assert np.isfinite(losses).all(), losses
    assert losses[-1] < losses[0], losses
    return losses


RNG = np.random.default_rng(0)


def images(n, c, h, w):
    return RNG.standard_normal((n, c, h, w)).astype(np.float32)


def labels(n, k):
    return RNG.integers(0, k, n).astype(np.int32)


def test_mnist_mlp(chainer):
    import chainer.links as L

    mlp = example("mnist/train_mnist.py").MLP(30, 10)
    x, t = RNG.random((16, 784)).astype(np.float32), labels(16, 10)
    train(chainer, L.Classifier(mlp), lambda m: m(x, t))


def test_cifar_vgg(chainer):
    import chainer.links as L

    vgg = example("cifar/models/VGG.py").VGG(10)
    x, t = images(8, 3, 32, 32), labels(8, 10)
    train(chainer, L.Classifier(vgg), lambda m: m(x, t), steps=8)


def test_ptb_rnnlm(chainer):
    import chainer.functions as F
    import chainer.links as L

    ptb = example("ptb/train_ptb.py")
    model = L.Classifier(ptb.RNNForLM(50, 16))
    words = RNG.integers(0, 50, (5, 8)).astype(np.int32)  # 5 steps of a batch of 8

    def bptt(m):
        m.predictor.reset_state()
        loss = 0
        for step in range(4):
            loss += m(words[step], words[step + 1])
        return F.sum(loss) / 4 if loss.ndim else loss / 4

    train(chainer, model, bptt)


def test_dcgan_generator_and_discriminator(chainer):
    import chainer.functions as F

    net = example("dcgan/net.py")
    gen, dis = net.Generator(n_hidden=10), net.Discriminator()
    z = gen.make_hidden(4)
    x_real = chainer.Variable(images(4, 3, 32, 32))  # as the example's updater passes it

    def dis_loss(d):
        real, fake = d(x_real), d(chainer.Variable(gen(z).array))  # gen left out
        return F.sum(F.softplus(-real)) / 4 + F.sum(F.softplus(fake)) / 4

    def gen_loss(g):
        return F.sum(F.softplus(-dis(g(z)))) / 4

    # the example's optimizer (train_dcgan.py's make_optimizer)
    adam = lambda: chainer.optimizers.Adam(alpha=0.0002, beta1=0.5)  # noqa: E731
    train(chainer, dis, dis_loss, optimizer=adam())
    train(chainer, gen, gen_loss, optimizer=adam())


def test_vae(chainer):
    net = example("vae/net.py")
    encoder, decoder, prior = net.make_encoder(20, 3, 16), net.make_decoder(20, 3, 16), \
        net.make_prior(3)
    model = net.AvgELBOLoss(encoder, decoder, prior, beta=1.0, k=1)
    x = (RNG.random((8, 20)) > 0.5).astype(np.float32)
    train(chainer, model, lambda m: m(x), steps=6)


@pytest.mark.parametrize("architecture", ["ContinuousBoW", "SkipGram"])
def test_word2vec(chainer, architecture):
    import chainer.links as L

    w2v = example("word2vec/train_word2vec.py")
    counts = np.arange(1, 31)
    loss_func = L.NegativeSampling(12, counts, 3)
    model = getattr(w2v, architecture)(30, 12, loss_func)
    context = RNG.integers(0, 30, (8, 4)).astype(np.int32)
    center = RNG.integers(0, 30, 8).astype(np.int32)
    train(chainer, model, lambda m: m(center, context), steps=6)


def test_seq2seq(chainer):
    s2s = example("seq2seq/seq2seq.py")
    model = s2s.Seq2seq(2, 20, 20, 16)
    xs = [RNG.integers(3, 20, n).astype(np.int32) for n in (5, 3, 4)]
    ys = [RNG.integers(3, 20, n).astype(np.int32) for n in (4, 6, 2)]
    train(chainer, model, lambda m: m(xs, ys))
    assert len(model.translate(xs, max_length=5)) == 3


def test_memnn(chainer):
    memnn = example("memnn/memnn.py")
    model = memnn.MemNN(8, 25, memnn.make_encoder("bow"), max_memory=6, hops=2)
    sentences = RNG.integers(1, 25, (4, 6, 5)).astype(np.int32)  # batch, memory, words
    question = RNG.integers(1, 25, (4, 5)).astype(np.int32)
    answer = labels(4, 25)

    import chainer.functions as F

    train(chainer, model, lambda m: F.softmax_cross_entropy(m(sentences, question), answer))


def test_pos_crf(chainer):
    pos = example("pos/postagging.py")
    model = pos.CRF(30, 5)
    xs = [RNG.integers(0, 30, n).astype(np.int32) for n in (6, 4, 3)]
    ys = [RNG.integers(0, 5, n).astype(np.int32) for n in (6, 4, 3)]
    train(chainer, model, lambda m: m(xs, ys))


def test_sentiment_recursive_net(chainer):
    sentiment = example("sentiment/train_sentiment.py")
    model = sentiment.RecursiveNet(20, 8, 5)
    leaf = lambda w, label: {"node": w, "label": label}  # noqa: E731
    trees = [{"node": (leaf(3, 1), {"node": (leaf(5, 2), leaf(7, 0)), "label": 4}), "label": 3},
             {"node": (leaf(1, 0), leaf(2, 1)), "label": 2}]
    train(chainer, model, lambda m: m(trees))


def test_glance_mlp(chainer):
    import chainer.functions as F
    import chainer.links as L

    path = EXAMPLES / "glance" / "glance.py"
    source = path.read_text(encoding="utf-8")
    namespace: dict = {}
    # the model definition of the script, its lines unchanged (the rest reads mushrooms.csv
    # and trains for 50 epochs)
    start = source.index("# Network definition")
    exec(compile(source[:source.index("mushroomsfile")] + source[start:source.index(
        "# Setup an optimizer")], str(path), "exec"), namespace)
    model = namespace["model"]
    assert isinstance(model, L.Classifier)
    x, t = RNG.random((16, 22)).astype(np.float32), labels(16, 2)[:, None]
    train(chainer, model, lambda m: m(x, t))
    assert F.binary_accuracy is model.accfun


def test_dqn_q_function(chainer):
    dqn = example("reinforcement_learning/dqn_cartpole.py")
    q, target_q = dqn.QFunction(4, 2, n_units=16), dqn.QFunction(4, 2, n_units=16)
    opt = chainer.optimizers.Adam(1e-3)
    opt.setup(q)
    samples = [(RNG.standard_normal(4), int(RNG.integers(2)), 1.0, False,
                RNG.standard_normal(4)) for _ in range(16)]
    before = q.l0.W.array.copy()
    for _ in range(3):
        dqn.update(q, target_q, opt, samples)
    assert not np.array_equal(q.l0.W.array, before)
    assert dqn.get_greedy_action(q, samples[0][0]) in (0, 1)


@pytest.mark.slow
@pytest.mark.parametrize(("file", "name"), [
    ("alex.py", "Alex"), ("nin.py", "NIN"), ("googlenet.py", "GoogLeNet"),
    ("googlenetbn.py", "GoogLeNetBN"), ("resnet50.py", "ResNet50"),
    ("resnext50.py", "ResNeXt50")])
def test_imagenet_nets(chainer, file, name):
    net = getattr(example(f"imagenet/{file}"), name)()
    x, t = images(2, 3, net.insize, net.insize), labels(2, 1000)
    train(chainer, net, lambda m: m(x, t), steps=2,
          optimizer=chainer.optimizers.MomentumSGD(lr=0.01))
