"""Optimizers: each update rule against the same step computed by hand in numpy."""

import math

import numpy as np
import pytest

import graphcore
import graphcore.functions as F
import graphcore.links as L
from graphcore import optimizers


class Pair(graphcore.Chain):
    """Two parameters with gradients we set by hand."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.a = graphcore.Parameter(np.array([1.0, -2.0, 3.0], np.float32))
            self.b = graphcore.Parameter(np.array([[0.5, 0.25]], np.float32))


GRAD_A = np.array([0.1, -0.3, 0.5], np.float32)
GRAD_B = np.array([[-1.0, 2.0]], np.float32)


def set_grads(model, scale=1.0):
    model.a.grad = GRAD_A * np.float32(scale)
    model.b.grad = GRAD_B * np.float32(scale)


def test_sgd_step():
    model = Pair()
    a0 = model.a.array.copy()
    held = model.a.array  # the update is in place: this reference sees it
    opt = optimizers.SGD(lr=0.1).setup(model)
    set_grads(model)
    opt.update()
    np.testing.assert_allclose(held, a0 - 0.1 * GRAD_A, rtol=1e-6)
    assert model.a.array is held
    assert opt.t == 1 and model.a.update_rule.t == 1


def test_momentum_sgd_two_steps():
    model = Pair()
    b0 = model.b.array.copy()
    opt = optimizers.MomentumSGD(lr=0.1, momentum=0.9).setup(model)
    v = np.zeros_like(b0)
    b = b0.copy()
    for scale in (1.0, 0.5):
        set_grads(model, scale)
        opt.update()
        v = 0.9 * v - 0.1 * GRAD_B * scale
        b = b + v
    np.testing.assert_allclose(model.b.array, b, rtol=1e-6)
    np.testing.assert_allclose(model.b.update_rule.state["v"], v, rtol=1e-6)


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_matches_formula_over_three_steps(amsgrad):
    model = Pair()
    alpha, beta1, beta2, eps = 0.01, 0.8, 0.95, 1e-7
    opt = optimizers.Adam(alpha, beta1, beta2, eps, amsgrad=amsgrad).setup(model)
    p = model.a.array.astype(np.float64)
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    vhat = np.zeros_like(p)
    for t, scale in enumerate((1.0, -2.0, 0.5), start=1):
        set_grads(model, scale)
        opt.update()
        g = GRAD_A.astype(np.float64) * scale
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        vhat = np.maximum(vhat, v)
        # Chainer folds the bias correction into lr, so eps is added to the uncorrected sqrt(v).
        lr = alpha * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        p = p - lr * m / (np.sqrt(vhat if amsgrad else v) + eps)
        assert opt.lr == pytest.approx(lr)
    np.testing.assert_allclose(model.a.array, p, rtol=1e-5)
    np.testing.assert_allclose(model.a.update_rule.state["m"], m, rtol=1e-5)
    np.testing.assert_allclose(model.a.update_rule.state["v"], v, rtol=1e-5)


def test_adam_weight_decay_rate_and_eta():
    model = Pair()
    opt = optimizers.Adam(alpha=0.1, eta=0.5, weight_decay_rate=0.01).setup(model)
    a0 = model.a.array.astype(np.float64)
    set_grads(model)
    opt.update()
    g = GRAD_A.astype(np.float64)
    m, v = 0.1 * g, 0.001 * g * g
    lr = 0.1 * math.sqrt(1 - 0.999) / (1 - 0.9)
    expected = a0 - 0.5 * (lr * m / (np.sqrt(v) + 1e-8) + 0.01 * a0)
    np.testing.assert_allclose(model.a.array, expected, rtol=1e-5)


def test_adam_lr_is_undefined_before_the_first_step():
    opt = optimizers.Adam().setup(Pair())
    with pytest.raises(RuntimeError, match="first update"):
        _ = opt.lr


def test_frozen_parameters_are_skipped_and_gradless_ones_get_a_zero_gradient():
    model = Pair()
    a0, b0 = model.a.array.copy(), model.b.array.copy()
    opt = optimizers.MomentumSGD().setup(model)
    model.a.grad = GRAD_A.copy()
    model.b.grad = None
    model.a.requires_grad = False
    opt.update()
    np.testing.assert_array_equal(model.a.array, a0)
    assert model.a.update_rule.state is None and model.a.update_rule.t == 0
    # Chainer's rule: b had no gradient, so it is updated with zeros (its state starts)
    np.testing.assert_array_equal(model.b.array, b0)
    assert model.b.update_rule.t == 1
    np.testing.assert_array_equal(model.b.update_rule.state["v"], 0)
    model.b.grad = GRAD_B.copy()
    opt.update()  # momentum from this step carries into the next gradless one
    model.b.grad = None
    moved = model.b.array.copy()
    opt.update()
    assert not np.array_equal(model.b.array, moved)


def test_without_zero_missing_grads_a_gradless_parameter_is_left_alone():
    model = Pair()
    opt = optimizers.MomentumSGD().setup(model)
    opt.zero_missing_grads = False
    model.b.grad = GRAD_B.copy()
    opt.update()
    model.b.grad = None
    b1 = model.b.array.copy()
    opt.update()
    np.testing.assert_array_equal(model.b.array, b1)
    assert model.b.update_rule.t == 1


def test_update_with_lossfun_clears_backprops_and_steps():
    model = L.Linear(2, 1)
    model.W.array[...] = [[1.0, -1.0]]
    x = np.array([[1.0, 2.0]], np.float32)
    opt = optimizers.SGD(lr=0.5).setup(model)
    model.W.grad = np.full((1, 2), 100.0, np.float32)  # stale: must be cleared, not added to
    opt.update(lambda x: F.sum(model(x)), x)
    np.testing.assert_allclose(model.W.array, [[0.5, -2.0]])
    np.testing.assert_allclose(model.b.array, [-0.5])


def test_lazy_parameters_get_state_on_first_update():
    model = L.Linear(None, 2)
    opt = optimizers.Adam().setup(model)
    opt.update(lambda: F.sum(model(np.ones((1, 3), np.float32))))
    assert model.W.update_rule.state["m"].shape == (2, 3)


def test_hyperparameters_are_shared_and_overridable_per_parameter():
    model = Pair()
    opt = optimizers.SGD(lr=0.1).setup(model)
    opt.lr = 0.2
    model.b.update_rule.hyperparam.lr = 0.0
    a0, b0 = model.a.array.copy(), model.b.array.copy()
    set_grads(model)
    opt.update()
    np.testing.assert_allclose(model.a.array, a0 - 0.2 * GRAD_A, rtol=1e-6)
    np.testing.assert_array_equal(model.b.array, b0)


def test_weight_decay_hook():
    model = Pair()
    opt = optimizers.SGD(lr=0.1).setup(model)
    opt.add_hook(optimizers.WeightDecay(0.5))
    a0 = model.a.array.copy()
    set_grads(model)
    opt.update()
    np.testing.assert_allclose(model.a.array, a0 - 0.1 * (GRAD_A + 0.5 * a0), rtol=1e-6)


def test_gradient_clipping_hook_scales_the_global_norm():
    model = Pair()
    opt = optimizers.SGD(lr=1.0).setup(model)
    opt.add_hook(optimizers.GradientClipping(1.0))
    a0 = model.a.array.copy()
    set_grads(model)
    norm = math.sqrt(np.sum(GRAD_A ** 2) + np.sum(GRAD_B ** 2))
    opt.update()
    np.testing.assert_allclose(model.a.array, a0 - GRAD_A / (norm + 1e-6), rtol=1e-5)


def test_gradient_clipping_leaves_small_gradients_alone():
    model = Pair()
    opt = optimizers.SGD(lr=1.0).setup(model)
    opt.add_hook(optimizers.GradientClipping(100.0))
    a0 = model.a.array.copy()
    set_grads(model)
    opt.update()
    np.testing.assert_allclose(model.a.array, a0 - GRAD_A, rtol=1e-6)


def test_hooks_need_unique_names_and_can_be_removed():
    model = Pair()
    opt = optimizers.SGD(lr=0.1).setup(model)
    opt.add_hook(optimizers.WeightDecay(0.5))
    with pytest.raises(KeyError, match="WeightDecay"):
        opt.add_hook(optimizers.WeightDecay(0.1))
    opt.remove_hook("WeightDecay")
    a0 = model.a.array.copy()
    set_grads(model)
    opt.update()
    np.testing.assert_allclose(model.a.array, a0 - 0.1 * GRAD_A, rtol=1e-6)


def test_update_before_setup_is_an_error():
    with pytest.raises(RuntimeError, match="setup"):
        optimizers.SGD().update()


# --- the optimizers Chainer's examples use beyond SGD and Adam: each against its equations ---


def _reference_steps(name, hp, p, grads):
    """Chainer's update equations for ``name``, in float64, over ``grads``."""
    state = {k: np.zeros_like(p) for k in ("v", "h", "ms", "msg", "msdx", "n", "g", "delta",
                                            "g2", "m")}
    state["mem"] = np.ones_like(p)
    beta_power = hp.get("beta")
    for g in grads:
        if name == "NesterovAG":
            state["v"] = hp["momentum"] * state["v"] - hp["lr"] * g
            p = p + hp["momentum"] ** 2 * state["v"] - (1 + hp["momentum"]) * hp["lr"] * g
        elif name == "AdaGrad":
            state["h"] = state["h"] + g * g
            p = p - hp["lr"] * g / (np.sqrt(state["h"]) + hp["eps"])
        elif name == "RMSprop":
            state["ms"] = hp["alpha"] * state["ms"] + (1 - hp["alpha"]) * g * g
            denom = (np.sqrt(state["ms"] + hp["eps"]) if hp.get("eps_inside_sqrt")
                     else np.sqrt(state["ms"]) + hp["eps"])
            p = p - hp["lr"] * g / denom
        elif name == "AdaDelta":
            state["msg"] = hp["rho"] * state["msg"] + (1 - hp["rho"]) * g * g
            dx = np.sqrt((state["msdx"] + hp["eps"]) / (state["msg"] + hp["eps"])) * g
            state["msdx"] = hp["rho"] * state["msdx"] + (1 - hp["rho"]) * dx * dx
            p = p - dx
        elif name == "CorrectedMomentumSGD":
            state["v"] = hp["momentum"] * state["v"] - g
            p = p + hp["lr"] * state["v"]
        elif name == "RMSpropGraves":
            state["n"] = hp["alpha"] * state["n"] + (1 - hp["alpha"]) * g * g
            state["g"] = hp["alpha"] * state["g"] + (1 - hp["alpha"]) * g
            state["delta"] = (hp["momentum"] * state["delta"]
                              - hp["lr"] * g / np.sqrt(state["n"] - state["g"] ** 2 + hp["eps"]))
            p = p + state["delta"]
        elif name == "SMORMS3":
            r = 1 / (state["mem"] + 1)
            state["g"] = (1 - r) * state["g"] + r * g
            state["g2"] = (1 - r) * state["g2"] + r * g * g
            x = state["g"] ** 2 / (state["g2"] + hp["eps"])
            p = p - g * np.minimum(x, hp["lr"]) / (np.sqrt(state["g2"]) + hp["eps"])
            state["mem"] = 1 + state["mem"] * (1 - x)
        elif name == "MSVAG":
            b = hp["beta"]
            rho = min((1 - b) ** 2 * (1 - beta_power ** 2) / ((1 - beta_power) ** 2 * (1 - b * b)),
                      0.9999)
            state["m"] = state["m"] + (1 - b) * (g - state["m"])
            state["v"] = state["v"] + (1 - b) * (g * g - state["v"])
            mt, vt = state["m"] / (1 - beta_power), state["v"] / (1 - beta_power)
            factor = np.clip(mt ** 2 / (mt ** 2 + rho * (vt - mt ** 2) / (1 - rho)), 0, 1)
            p = p - hp["lr"] * mt * factor
            beta_power *= b
    return p


OTHER_OPTIMIZERS = [
    ("NesterovAG", {"lr": 0.05, "momentum": 0.8}),
    ("AdaGrad", {"lr": 0.1, "eps": 1e-6}),
    ("RMSprop", {"lr": 0.02, "alpha": 0.9, "eps": 1e-6}),
    ("RMSprop", {"lr": 0.02, "alpha": 0.9, "eps": 1e-3, "eps_inside_sqrt": True}),
    ("AdaDelta", {"rho": 0.9, "eps": 1e-4}),
    ("CorrectedMomentumSGD", {"lr": 0.05, "momentum": 0.8}),
    ("RMSpropGraves", {"lr": 0.01, "alpha": 0.9, "momentum": 0.5, "eps": 1e-4}),
    ("SMORMS3", {"lr": 0.01, "eps": 1e-16}),
    ("MSVAG", {"lr": 0.1, "beta": 0.8}),
]


@pytest.mark.parametrize(("name", "hp"), OTHER_OPTIMIZERS)
def test_other_optimizers_match_chainers_equations_over_three_steps(name, hp):
    model = Pair()
    opt = getattr(optimizers, name)(**hp).setup(model)
    p = model.a.array.astype(np.float64)
    scales = (1.0, -2.0, 0.5)
    for scale in scales:
        set_grads(model, scale)
        opt.update()
    expected = _reference_steps(name, hp, p, [GRAD_A.astype(np.float64) * s for s in scales])
    np.testing.assert_allclose(model.a.array, expected, rtol=1e-5)
    assert not np.allclose(model.a.array, p)  # it moved


@pytest.mark.parametrize(("name", "defaults"), [
    ("NesterovAG", {"lr": 0.01, "momentum": 0.9}),
    ("AdaGrad", {"lr": 0.001, "eps": 1e-8}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.99, "eps": 1e-8, "eps_inside_sqrt": False}),
    ("AdaDelta", {"rho": 0.95, "eps": 1e-6}),
    ("CorrectedMomentumSGD", {"lr": 0.01, "momentum": 0.9}),
    ("RMSpropGraves", {"lr": 1e-4, "alpha": 0.95, "momentum": 0.9, "eps": 1e-4}),
    ("SMORMS3", {"lr": 0.001, "eps": 1e-16}),
    ("MSVAG", {"lr": 0.1, "beta": 0.9, "eta": 1.0, "weight_decay_rate": 0}),
    ("AdamW", {"alpha": 0.001, "weight_decay_rate": 0, "amsgrad": False}),
    ("AMSGrad", {"alpha": 0.001, "amsgrad": True, "adabound": False}),
    ("AdaBound", {"final_lr": 0.1, "gamma": 1e-3, "adabound": True, "amsgrad": False}),
    ("AMSBound", {"final_lr": 0.1, "gamma": 1e-3, "adabound": True, "amsgrad": True}),
])
def test_other_optimizers_have_chainers_defaults_and_proxies(name, defaults):
    opt = getattr(optimizers, name)()
    for key, value in defaults.items():
        assert getattr(opt, key) == value
    first = next(iter(defaults))
    setattr(opt, first, 0.5)
    assert opt.hyperparam.get_dict()[first] == 0.5


@pytest.mark.parametrize(("name", "hp"), OTHER_OPTIMIZERS)
def test_other_optimizers_state_round_trips_through_save_npz(name, hp, tmp_path):
    model = Pair()
    opt = getattr(optimizers, name)(**hp).setup(model)
    set_grads(model)
    opt.update()
    graphcore.serializers.save_npz(tmp_path / "opt.npz", opt)
    graphcore.serializers.save_npz(tmp_path / "model.npz", model)
    again = Pair()
    graphcore.serializers.load_npz(tmp_path / "model.npz", again)
    resumed = getattr(optimizers, name)(**hp).setup(again)
    graphcore.serializers.load_npz(tmp_path / "opt.npz", resumed)
    for m, o in ((model, opt), (again, resumed)):
        set_grads(m, -1.5)
        o.update()
    np.testing.assert_array_equal(again.a.array, model.a.array)
    np.testing.assert_array_equal(again.b.array, model.b.array)
    with np.load(tmp_path / "opt.npz") as saved:
        assert "a/t" in saved.files and "t" in saved.files


def test_rmsprop_refuses_an_eps_that_vanishes_in_the_dtype():
    model = Pair()
    opt = optimizers.RMSprop(eps=1e-50).setup(model)
    set_grads(model)
    with pytest.raises(ValueError, match="eps"):
        opt.update()


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adabound_clips_adams_step_to_its_bounds(amsgrad):
    alpha, b1, b2, eps, final_lr, gamma = 0.01, 0.9, 0.999, 1e-8, 0.1, 1e-3
    model = Pair()
    opt = optimizers.Adam(alpha=alpha, amsgrad=amsgrad, adabound=True, final_lr=final_lr,
                          gamma=gamma).setup(model)
    p = model.a.array.astype(np.float64)
    m = v = vhat = np.zeros_like(p)
    for t, scale in enumerate((1.0, -2.0, 0.5), start=1):
        set_grads(model, scale)
        opt.update()
        g = GRAD_A.astype(np.float64) * scale
        m = m + (1 - b1) * (g - m)
        v = v + (1 - b2) * (g * g - v)
        vhat = np.maximum(vhat, v)
        alpha_t = alpha * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        lower = final_lr * (1 - 1 / (gamma * t + 1))
        upper = final_lr * (1 + 1 / (gamma * t))
        step = np.clip(alpha_t / (np.sqrt(vhat if amsgrad else v) + eps), lower, upper)
        p = p - step * m
    np.testing.assert_allclose(model.a.array, p, rtol=1e-5)


def test_static_loss_scaling_gives_the_unscaled_step():
    scaled, plain = Pair(), Pair()
    x = np.array([1.0, 2.0, -1.0], np.float32)
    runs = []
    for model, scale in ((scaled, 1024.0), (plain, None)):
        opt = optimizers.SGD(lr=0.1).setup(model)
        if scale is not None:
            opt.loss_scaling(scale=scale)
        opt.update(lambda model=model: F.sum(model.a * x) + F.sum(model.b * model.b))
        runs.append(model)
    np.testing.assert_allclose(scaled.a.array, plain.a.array, rtol=1e-6)
    np.testing.assert_allclose(scaled.b.array, plain.b.array, rtol=1e-6)


def test_dynamic_loss_scaling_skips_a_step_with_non_finite_gradients_and_halves_the_scale():
    model = Pair()
    opt = optimizers.SGD(lr=0.1).setup(model)
    opt.loss_scaling(interval=2)
    set_grads(model)
    opt.update()
    assert opt._loss_scale == 2.0  # doubles until the first overflow
    before = model.a.array.copy()
    model.a.grad = np.array([np.inf, 0.0, 0.0], np.float32)
    model.b.grad = GRAD_B.copy()
    with pytest.warns(UserWarning, match="non-finite gradient"):
        opt.update()
    np.testing.assert_array_equal(model.a.array, before)  # the step was skipped
    assert opt._loss_scale == 1.0
    with pytest.raises(ValueError, match="interval"):
        opt.loss_scaling(interval=0)
    with pytest.raises(ValueError, match="scale"):
        opt.loss_scaling(scale=-1)


def test_fp32_update_keeps_small_steps_that_float16_would_lose():
    half = graphcore.Chain()
    with half.init_scope():
        half.w = graphcore.Parameter(np.full(4, 1.0, np.float16))
    opt = optimizers.SGD(lr=1e-4).setup(half)
    opt.use_fp32_update()
    for _ in range(10):
        half.w.grad = np.ones(4, np.float16)
        opt.update()
    # each step (1e-4) is below float16's spacing at 1.0 (~1e-3): only a float32 master copy
    # accumulates them
    assert half.w.array.dtype == np.float16
    np.testing.assert_allclose(half.w.array, np.float16(1.0 - 1e-3), rtol=1e-3)
    assert half.w.array[0] != np.float16(1.0)
