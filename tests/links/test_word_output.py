"""NegativeSampling and BinaryHierarchicalSoftmax (word2vec's output layers) against loops
written here from the definitions, plus their gradients."""

import numpy as np
import pytest

import graphcore.functions as F
import graphcore.links as L
from graphcore.gradient_check import check_backward


def _log_sigmoid(z):
    return -np.log1p(np.exp(-z))


def test_negative_sampling_matches_a_loop_and_ignores_label_minus_one():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    W = rng.standard_normal((6, 4))
    t = np.array([2, -1, 5], np.int32)
    negatives = rng.integers(0, 6, (3, 2)).astype(np.int32)

    def sampler(shape):
        assert shape == (3, 2)
        return negatives

    loss, samples = F.negative_sampling(x, t, W, sampler, 2, reduce="no", return_samples=True)
    expect = np.zeros(3)
    for i in (0, 2):
        expect[i] = -_log_sigmoid(x[i] @ W[t[i]])
        for s in negatives[i]:
            expect[i] -= _log_sigmoid(-(x[i] @ W[s]))
    np.testing.assert_allclose(loss.array, expect)
    np.testing.assert_array_equal(samples[:, 1:], negatives)
    total = F.negative_sampling(x, t, W, sampler, 2)
    np.testing.assert_allclose(total.array, expect.sum())
    check_backward(lambda xx, ww: F.negative_sampling(xx, t, ww, sampler, 2), (x, W), None)


def test_negative_sampling_link_draws_by_counts_to_the_power():
    np.random.seed(0)
    ns = L.NegativeSampling(3, [0, 5, 1], sample_size=200, power=1.0)
    assert np.all(ns.W.array == 0)
    _, samples = ns(np.ones((2, 3), np.float32), np.array([1, 2], np.int32),
                    return_samples=True)
    drawn = samples[:, 1:]
    assert not (drawn == 0).any()  # count 0: never drawn
    assert 0.75 < (drawn == 1).mean() < 0.92  # about 5/6


def test_huffman_tree_merges_the_rarest_first():
    tree = L.BinaryHierarchicalSoftmax.create_huffman_tree({0: 5, 1: 1, 2: 2, 3: 9})
    assert tree == (((1, 2), 0), 3)  # 1+2, then +0 (count 5), then +3 (count 9)
    with pytest.raises(ValueError, match="empty"):
        L.BinaryHierarchicalSoftmax.create_huffman_tree({})


def test_hierarchical_softmax_matches_a_loop_over_each_words_path():
    rng = np.random.default_rng(1)
    tree = ((0, 1), (2, (3, 4)))  # inner nodes in pre-order: root 0, (0,1) 1, (2,(3,4)) 2, 3
    hsm = L.BinaryHierarchicalSoftmax(4, tree)
    W = rng.standard_normal((4, 4))
    hsm.W.array = W
    paths = {0: [(0, 1), (1, 1)], 1: [(0, 1), (1, -1)], 2: [(0, -1), (2, 1)],
             3: [(0, -1), (2, -1), (3, 1)], 4: [(0, -1), (2, -1), (3, -1)]}
    x = rng.standard_normal((5, 4))
    t = np.array([0, 4, 2, 3, 1], np.int32)
    expect = sum(-_log_sigmoid(code * (x[i] @ W[node]))
                 for i, word in enumerate(t) for node, code in paths[int(word)])
    np.testing.assert_allclose(hsm(x, t).array, expect)
    # the probabilities of all words sum to one for any x
    probs = [np.exp(-hsm(x[:1], np.array([w], np.int32)).array) for w in range(5)]
    np.testing.assert_allclose(sum(probs), 1.0)
    check_backward(lambda xx: hsm(xx, t), x, None)
    with pytest.raises(ValueError, match="labels"):
        hsm(x[:1], np.array([5], np.int32))
