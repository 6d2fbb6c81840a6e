"""End to end through the Python API: an MLP trained with Adam learns a 3-class spiral."""

import numpy as np

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import optimizers


def spiral(points_per_class=60, classes=3, seed=0):
    """Three interleaved spiral arms (the classic toy problem no linear model can solve)."""
    rng = np.random.default_rng(seed)
    xs, ts = [], []
    for k in range(classes):
        r = np.linspace(0.05, 1.0, points_per_class)
        theta = np.linspace(k * 4.0, (k + 1) * 4.0, points_per_class) + rng.normal(
            0, 0.2, points_per_class)
        xs.append(np.stack([r * np.sin(theta), r * np.cos(theta)], axis=1))
        ts.append(np.full(points_per_class, k))
    return np.concatenate(xs).astype(np.float32), np.concatenate(ts).astype(np.int32)


def test_adam_trains_an_mlp_on_a_spiral():
    np.random.seed(0)  # initializers draw from numpy's global generator
    x, t = spiral()
    model = L.Sequential(L.Linear(None, 64), F.relu, L.Linear(64, 64), F.relu, L.Linear(64, 3))
    opt = optimizers.Adam(alpha=0.01).setup(model)

    def loss_of(x, t):
        return F.softmax_cross_entropy(model(x), t)

    initial = float(loss_of(x, t).array)
    for _ in range(200):
        opt.update(loss_of, x, t)

    with graphcore.no_backprop_mode():
        logits = model(x).array
    final = float(F.softmax_cross_entropy(logits, t).array)
    accuracy = float((logits.argmax(axis=1) == t).mean())
    assert final < 0.3 * initial, (initial, final)
    assert accuracy > 0.9, accuracy
    assert opt.t == 200
