"""Optimizers (Chainer's API): ``SGD``, ``MomentumSGD``, ``CorrectedMomentumSGD``,
``NesterovAG``, ``AdaGrad``, ``RMSprop``, ``RMSpropGraves``, ``AdaDelta``, ``SMORMS3``,
``MSVAG``, ``Adam`` (with AMSGrad, AdaBound and AdamW's decoupled weight decay; ``AdamW``,
``AMSGrad``, ``AdaBound``, ``AMSBound`` are its presets), and gradient hooks. Defaults and
update equations are Chainer's, as are loss scaling (``loss_scaling()``: dynamic, or static
with ``scale=``) and ``use_fp32_update()`` (float16 parameters updated through float32
copies).

An optimizer gives every parameter of its target link an ``UpdateRule`` (``param.update_rule``)
that owns the parameter's state (momentum, Adam's moments) and updates ``param.array`` in place,
so anything holding that array sees the new values.  Hyperparameters live in the optimizer's
``hyperparam``; a rule looks up what it does not override there, so ``opt.lr = 0.001`` reaches
every parameter while ``param.update_rule.hyperparam.lr = 0`` changes just one.

>>> opt = Adam(alpha=0.01).setup(model)
>>> opt.add_hook(WeightDecay(1e-4))
>>> opt.update(lossfun, x, t)      # cleargrads, loss = lossfun(x, t), backward, update
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from graphcore.attributes import Attr, check_arguments
from graphcore.errors import ArgumentTypeError
from graphcore.links.link import Link
from graphcore.optimizer_hooks import (
    GradientClipping,
    GradientHardClipping,
    Lasso,
    WeightDecay,
)
from graphcore.update_rules import (  # noqa: F401  (re-exported: Chainer's names)
    AdaDeltaRule,
    AdaGradRule,
    AdamRule,
    CorrectedMomentumSGDRule,
    Hyperparameter,
    HyperparameterProxy,
    MomentumSGDRule,
    MSVAGRule,
    NesterovAGRule,
    RMSpropGravesRule,
    RMSpropRule,
    SGDRule,
    SMORMS3Rule,
    UpdateRule,
    adam_lr,
    add_hook,
    hook_name,
    hook_timing,
)
from graphcore.variable import Parameter, Variable

__all__ = [
    "MSVAG", "SGD", "SMORMS3", "AMSBound", "AMSGrad", "AdaBound", "AdaDelta", "AdaDeltaRule",
    "AdaGrad", "AdaGradRule", "Adam", "AdamRule", "AdamW", "CorrectedMomentumSGD",
    "CorrectedMomentumSGDRule", "GradientClipping", "GradientHardClipping", "GradientMethod",
    "Hyperparameter", "Lasso", "MSVAGRule", "MomentumSGD", "MomentumSGDRule", "NesterovAG",
    "NesterovAGRule", "Optimizer", "RMSprop", "RMSpropGraves", "RMSpropGravesRule",
    "RMSpropRule", "SGDRule", "SMORMS3Rule", "UpdateRule", "WeightDecay",
]

# --- optimizers -------------------------------------------------------------------------------


class Optimizer:
    """Updates every parameter of ``target`` (set by ``setup``) through its ``UpdateRule``."""

    target: Link | None = None
    use_auto_new_epoch = False  # an updater that calls new_epoch(auto=True) sets it
    # Chainer's rule: a parameter with no gradient at update time (not in this step's graph)
    # is updated with a zero gradient, so momentum and weight decay still move it. graphcore's
    # spec training sets it False: a branch a step did not take leaves its parameters alone,
    # as PyTorch's optimizers do.
    zero_missing_grads = True
    _LOSS_SCALE_MAX = 65504.0  # the largest float16

    def __init__(self) -> None:
        self.hyperparam = Hyperparameter()
        self.target = None
        self.t = 0
        self.epoch = 0
        self._hooks: dict[str, dict[str, Callable]] = {"pre": {}, "post": {}}
        self._param_hooks: list[tuple[Callable, str, str]] = []  # (hook, name, timing)
        self._loss_scale: float | None = None
        self._loss_scaling_is_dynamic = False
        self._use_fp32_update = False

    def create_update_rule(self) -> UpdateRule:
        raise NotImplementedError

    def setup(self, link: Link) -> Optimizer:
        """Make ``link`` the target and give each of its parameters a fresh update rule."""
        if not isinstance(link, Link):
            raise ArgumentTypeError(f"{type(self).__name__}.setup: optimization target must be a "
                                    f"link (a Link: the model), got {type(link).__name__}")
        self.target = link
        self.t = 0
        self.epoch = 0
        for param in link.params():
            self._new_rule(param)
        return self

    def _new_rule(self, param: Parameter) -> UpdateRule:
        rule = self.create_update_rule()
        if self._use_fp32_update:
            rule.use_fp32_update()
        for hook, name, timing in self._param_hooks:
            rule.add_hook(hook, name, timing)
        param.update_rule = rule
        return rule

    def add_hook(self, hook: Callable, name: str | None = None, timing: str = "auto") -> None:
        """Register a hook: ``WeightDecay(rate)``, ``GradientClipping(threshold)``, ..."""
        if not callable(hook):
            raise ArgumentTypeError(f"{type(self).__name__}.add_hook: hook must be callable "
                                    f"(e.g. WeightDecay(1e-4)), got {type(hook).__name__}")
        if self.target is None:
            raise RuntimeError("call setup(link) before add_hook")
        name = name or hook_name(hook)
        if name in self._hook_names():
            raise KeyError(f"a hook named {name!r} is already registered")
        if getattr(hook, "call_for_each_param", False):
            timing = hook_timing(hook, timing)
            self._param_hooks.append((hook, name, timing))
            for param in self.target.params():
                self.update_rule_of(param).add_hook(hook, name, timing)
        else:
            add_hook(self._hooks, hook, name, timing)

    def _hook_names(self) -> list[str]:
        return [*self._hooks["pre"], *self._hooks["post"], *(n for _, n, _ in self._param_hooks)]

    def remove_hook(self, name: str) -> None:
        for hooks in self._hooks.values():
            hooks.pop(name, None)
        self._param_hooks = [h for h in self._param_hooks if h[1] != name]
        if self.target is not None:
            for param in self.target.params():
                self.update_rule_of(param).remove_hook(name)

    def call_hooks(self, timing: str = "pre") -> None:
        for hook in self._hooks[timing].values():
            hook(self)

    def update_rule_of(self, param: Parameter) -> UpdateRule:
        """``param.update_rule``, made now if ``param`` was registered after ``setup()``."""
        rule = param.update_rule
        if rule is None:
            rule = self._new_rule(param)
        return rule

    def update(self, lossfun: Callable | None = None, *args: Any, **kwargs: Any) -> None:
        """One optimization step.

        With ``lossfun``: clear the gradients, ``loss = lossfun(*args, **kwargs)``,
        ``loss.backward()``, then update.  Without it, update from the gradients already in
        the parameters.  Parameters with ``requires_grad=False`` or not initialized are left
        alone; one without a gradient gets a zero one (Chainer's rule; ``zero_missing_grads``
        = False leaves it alone instead). With loss scaling the backward pass is of
        ``loss * scale`` and each gradient is divided by ``scale`` before its update; with
        dynamic scaling a step whose gradients are not all finite is skipped (and the scale
        halved).
        """
        if self.target is None:
            raise RuntimeError("call setup(link) before update")
        if lossfun is not None:
            if not callable(lossfun):
                raise ArgumentTypeError(f"{type(self).__name__}.update: lossfun must be callable "
                                        f"(or omitted), got {type(lossfun).__name__}")
            self.target.cleargrads()
            loss = lossfun(*args, **kwargs)
            if not isinstance(loss, Variable):
                raise ArgumentTypeError(f"{type(self).__name__}.update: lossfun must return a "
                                        f"Variable (the loss), got {type(loss).__name__}")
            (loss if self._loss_scale is None else loss * self._loss_scale).backward()
            del loss
        if self.zero_missing_grads:
            for param in self.target.params():
                if param.requires_grad and param.array is not None and param.grad is None:
                    param.grad = np.zeros_like(param.array)
        self.check_nan_in_grads()
        self.call_hooks("pre")
        self.t += 1
        if self.is_safe_to_update():
            for param in self.target.params():
                self.update_rule_of(param).update(param, self._loss_scale)
        self.call_hooks("post")
        self.update_loss_scale()

    def serialize(self, serializer: Any) -> None:
        """Chainer's protocol: ``t``, ``epoch``, then each parameter's update rule under its
        path (``l1/W/t``, ``l1/W/m``, ...): the layout ``save_npz`` writes."""
        self.t = int(serializer("t", self.t))
        self.epoch = int(serializer("epoch", self.epoch))
        if self.target is None:
            return
        for name, param in self.target.namedparams():
            self.update_rule_of(param).serialize(serializer[name[1:]])

    def new_epoch(self, auto: bool = False) -> None:
        """Count an epoch. ``auto``: called by an updater that owns the count (it sets
        ``use_auto_new_epoch``); counting from both places is an error, as in Chainer."""
        if auto and not self.use_auto_new_epoch:
            raise RuntimeError("new_epoch(auto=True) from an updater, but the optimizer's "
                               "use_auto_new_epoch is False")
        if not auto and self.use_auto_new_epoch:
            raise RuntimeError("new_epoch() called while the updater counts epochs "
                               "(use_auto_new_epoch is True)")
        self.epoch += 1

    def use_fp32_update(self, flag: bool = True) -> None:
        """Update float16 parameters through float32 copies (mixed-precision training)."""
        self._use_fp32_update = flag
        if self.target is not None:
            for param in self.target.params():
                self.update_rule_of(param).use_fp32_update(flag)

    # --- loss scaling (for float16 training: keeps small gradients from underflowing) -----

    def loss_scaling(self, interval: int = 1000, scale: float | None = None) -> None:
        """Scale the loss before backward: by ``scale`` (static), or dynamically when
        ``scale`` is None (start at 1; double after a step with finite gradients until the
        first overflow, then grow by ``2 ** (1 / interval)`` a step; halve on an overflow)."""
        if scale is None:
            if interval < 1:
                raise ValueError(f"loss_scaling: interval must be at least 1, got {interval}")
            self._loss_scaling_is_dynamic = True
            self._loss_scale = 1.0
            self._loss_scaling_multiplier = math.pow(2.0, 1.0 / interval)
            self._loss_scaling_isnan_ever = False
        else:
            if not scale > 0:
                raise ValueError(f"loss_scaling: scale must be positive, got {scale}")
            self._loss_scaling_is_dynamic = False
            self._loss_scale = scale

    def set_loss_scale(self, loss_scale: float) -> None:
        self.loss_scaling(scale=loss_scale)

    def check_nan_in_grads(self) -> None:
        """With dynamic loss scaling, note whether some gradient is not finite."""
        self._loss_scaling_isnan = False
        if not self._loss_scaling_is_dynamic:
            return
        for name, param in self.target.namedparams():
            if param.grad is not None and not np.all(np.isfinite(param.grad)):
                self._loss_scaling_isnan = True
                self._loss_scaling_isnan_ever = True
                warnings.warn(f"non-finite gradient in {name} (step {self.t}, loss scale "
                              f"{self._loss_scale}): the step is skipped", stacklevel=3)

    def is_safe_to_update(self) -> bool:
        return not getattr(self, "_loss_scaling_isnan", False)

    def update_loss_scale(self) -> None:
        if not self._loss_scaling_is_dynamic:
            return
        if self._loss_scaling_isnan:
            multiplier = 0.5
        elif self._loss_scaling_isnan_ever:
            multiplier = self._loss_scaling_multiplier
        else:
            multiplier = 2.0
        self._loss_scale = max(1.0, min(self._LOSS_SCALE_MAX, self._loss_scale * multiplier))


GradientMethod = Optimizer  # Chainer's base of gradient-based optimizers: every one here is


_RATE = Attr(float, low=0.0)
_DECAY = Attr(float, low=0.0, high=1.0)
# The optimizers' constructor arguments (checked there; the Chainer-style attribute proxies
# such as ``opt.lr = ...`` stay plain assignments).
_HYPER = {"lr": _RATE, "momentum": _DECAY, "alpha": _RATE, "beta1": _DECAY, "beta2": _DECAY,
          "eps": _RATE, "eta": _RATE, "weight_decay_rate": _RATE, "amsgrad": Attr(bool),
          "adabound": Attr(bool), "final_lr": _RATE, "gamma": _RATE, "beta": _DECAY}


class SGD(Optimizer):
    """Plain stochastic gradient descent."""

    lr = HyperparameterProxy()

    def __init__(self, lr: float = 0.01) -> None:
        super().__init__()
        check_arguments(type(self).__name__, _HYPER, lr=lr)
        self.hyperparam.lr = lr

    def create_update_rule(self) -> UpdateRule:
        return SGDRule(self.hyperparam)


class MomentumSGD(Optimizer):
    """SGD with (heavy-ball) momentum."""

    lr = HyperparameterProxy()
    momentum = HyperparameterProxy()

    def __init__(self, lr: float = 0.01, momentum: float = 0.9) -> None:
        super().__init__()
        check_arguments(type(self).__name__, _HYPER, lr=lr, momentum=momentum)
        self.hyperparam.lr = lr
        self.hyperparam.momentum = momentum

    def create_update_rule(self) -> UpdateRule:
        return MomentumSGDRule(self.hyperparam)


class NesterovAG(Optimizer):
    """Nesterov's accelerated gradient (Sutskever et al., 2013; Chainer's formulation)."""

    lr = HyperparameterProxy()
    momentum = HyperparameterProxy()

    def __init__(self, lr: float = 0.01, momentum: float = 0.9) -> None:
        super().__init__()
        self.hyperparam.lr = lr
        self.hyperparam.momentum = momentum

    def create_update_rule(self) -> UpdateRule:
        return NesterovAGRule(self.hyperparam)


class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al., 2011)."""

    lr = HyperparameterProxy()
    eps = HyperparameterProxy()

    def __init__(self, lr: float = 0.001, eps: float = 1e-8) -> None:
        super().__init__()
        self.hyperparam.lr = lr
        self.hyperparam.eps = eps

    def create_update_rule(self) -> UpdateRule:
        return AdaGradRule(self.hyperparam)


class RMSprop(Optimizer):
    """RMSprop (Tieleman & Hinton, 2012)."""

    lr = HyperparameterProxy()
    alpha = HyperparameterProxy()
    eps = HyperparameterProxy()
    eps_inside_sqrt = HyperparameterProxy()

    def __init__(self, lr: float = 0.01, alpha: float = 0.99, eps: float = 1e-8,
                 eps_inside_sqrt: bool = False) -> None:
        super().__init__()
        hp = self.hyperparam
        hp.lr, hp.alpha, hp.eps, hp.eps_inside_sqrt = lr, alpha, eps, eps_inside_sqrt

    def create_update_rule(self) -> UpdateRule:
        return RMSpropRule(self.hyperparam)


class AdaDelta(Optimizer):
    """ADADELTA (Zeiler, 2012): no learning rate."""

    rho = HyperparameterProxy()
    eps = HyperparameterProxy()

    def __init__(self, rho: float = 0.95, eps: float = 1e-6) -> None:
        super().__init__()
        self.hyperparam.rho = rho
        self.hyperparam.eps = eps

    def create_update_rule(self) -> UpdateRule:
        return AdaDeltaRule(self.hyperparam)


class Adam(Optimizer):
    """Adam (Kingma & Ba), optionally AMSGrad, AdaBound (``adabound``, ``final_lr``,
    ``gamma``) and decoupled weight decay (AdamW's ``eta`` and ``weight_decay_rate``)."""

    alpha = HyperparameterProxy()
    beta1 = HyperparameterProxy()
    beta2 = HyperparameterProxy()
    eps = HyperparameterProxy()
    eta = HyperparameterProxy()
    weight_decay_rate = HyperparameterProxy()
    amsgrad = HyperparameterProxy()
    adabound = HyperparameterProxy()
    final_lr = HyperparameterProxy()
    gamma = HyperparameterProxy()

    def __init__(self, alpha: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8, eta: float = 1.0, weight_decay_rate: float = 0,
                 amsgrad: bool = False, adabound: bool = False, final_lr: float = 0.1,
                 gamma: float = 1e-3) -> None:
        super().__init__()
        check_arguments(type(self).__name__, _HYPER, alpha=alpha, beta1=beta1, beta2=beta2,
                        eps=eps, eta=eta, weight_decay_rate=weight_decay_rate, amsgrad=amsgrad,
                        adabound=adabound, final_lr=final_lr, gamma=gamma)
        hp = self.hyperparam
        hp.alpha, hp.beta1, hp.beta2, hp.eps = alpha, beta1, beta2, eps
        hp.eta, hp.weight_decay_rate, hp.amsgrad = eta, weight_decay_rate, amsgrad
        hp.adabound, hp.final_lr, hp.gamma = adabound, final_lr, gamma

    def create_update_rule(self) -> UpdateRule:
        return AdamRule(self.hyperparam)

    @property
    def alpha_t(self) -> float:
        """The bias-corrected step size of the latest update: ``alpha * sqrt(1-b2^t)/(1-b1^t)``."""
        return adam_lr(self.hyperparam, self.t)

    lr = alpha_t  # Chainer 5's name (Chainer 6 renamed it alpha_t); observe_lr reads it


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): ``weight_decay_rate``."""

    def __init__(self, alpha: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8, eta: float = 1.0, weight_decay_rate: float = 0) -> None:
        super().__init__(alpha=alpha, beta1=beta1, beta2=beta2, eps=eps, eta=eta,
                         weight_decay_rate=weight_decay_rate)


class AMSGrad(Adam):
    """Adam with the running maximum of the second moment (Reddi et al.)."""

    def __init__(self, alpha: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8, eta: float = 1.0) -> None:
        super().__init__(alpha=alpha, beta1=beta1, beta2=beta2, eps=eps, eta=eta,
                         amsgrad=True)


class AdaBound(Adam):
    """Adam whose per-element step is clipped to bounds closing in on ``final_lr`` (Luo et
    al.)."""

    def __init__(self, alpha: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 final_lr: float = 0.1, gamma: float = 1e-3, eps: float = 1e-8,
                 eta: float = 1.0) -> None:
        super().__init__(alpha=alpha, beta1=beta1, beta2=beta2, eps=eps, eta=eta,
                         adabound=True, final_lr=final_lr, gamma=gamma)


class AMSBound(Adam):
    """AdaBound on AMSGrad's second moment."""

    def __init__(self, alpha: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 final_lr: float = 0.1, gamma: float = 1e-3, eps: float = 1e-8,
                 eta: float = 1.0) -> None:
        super().__init__(alpha=alpha, beta1=beta1, beta2=beta2, eps=eps, eta=eta,
                         amsgrad=True, adabound=True, final_lr=final_lr, gamma=gamma)


class CorrectedMomentumSGD(Optimizer):
    """Momentum SGD with the learning rate applied outside the velocity (Goyal et al.)."""

    lr = HyperparameterProxy()
    momentum = HyperparameterProxy()

    def __init__(self, lr: float = 0.01, momentum: float = 0.9) -> None:
        super().__init__()
        check_arguments(type(self).__name__, _HYPER, lr=lr, momentum=momentum)
        self.hyperparam.lr = lr
        self.hyperparam.momentum = momentum

    def create_update_rule(self) -> UpdateRule:
        return CorrectedMomentumSGDRule(self.hyperparam)


class RMSpropGraves(Optimizer):
    """Graves' centred RMSprop with momentum."""

    lr = HyperparameterProxy()
    alpha = HyperparameterProxy()
    momentum = HyperparameterProxy()
    eps = HyperparameterProxy()

    def __init__(self, lr: float = 1e-4, alpha: float = 0.95, momentum: float = 0.9,
                 eps: float = 1e-4) -> None:
        super().__init__()
        check_arguments(type(self).__name__, _HYPER, lr=lr, momentum=momentum, eps=eps)
        hp = self.hyperparam
        hp.lr, hp.alpha, hp.momentum, hp.eps = lr, alpha, momentum, eps

    def create_update_rule(self) -> UpdateRule:
        return RMSpropGravesRule(self.hyperparam)


class SMORMS3(Optimizer):
    """Simon Funk's SMORMS3."""

    lr = HyperparameterProxy()
    eps = HyperparameterProxy()

    def __init__(self, lr: float = 0.001, eps: float = 1e-16) -> None:
        super().__init__()
        check_arguments(type(self).__name__, _HYPER, lr=lr, eps=eps)
        self.hyperparam.lr = lr
        self.hyperparam.eps = eps

    def create_update_rule(self) -> UpdateRule:
        return SMORMS3Rule(self.hyperparam)


class MSVAG(Optimizer):
    """M-SVAG (Balles & Hennig): momentum SGD with a variance-adapted step."""

    lr = HyperparameterProxy()
    beta = HyperparameterProxy()
    eta = HyperparameterProxy()
    weight_decay_rate = HyperparameterProxy()

    def __init__(self, lr: float = 0.1, beta: float = 0.9, eta: float = 1.0,
                 weight_decay_rate: float = 0) -> None:
        super().__init__()
        check_arguments(type(self).__name__, _HYPER, lr=lr, beta=beta, eta=eta,
                        weight_decay_rate=weight_decay_rate)
        hp = self.hyperparam
        hp.lr, hp.beta, hp.eta, hp.weight_decay_rate = lr, beta, eta, weight_decay_rate

    def create_update_rule(self) -> UpdateRule:
        return MSVAGRule(self.hyperparam)


# --- by name: a spec's `train: {optimizer:}`, `--optimizer`, a sweep's train.optimizer ----------

BY_NAME: Mapping[str, type[Optimizer]] = MappingProxyType({
    "sgd": SGD, "momentum": MomentumSGD, "momentum_sgd": MomentumSGD, "nesterov": NesterovAG,
    "adagrad": AdaGrad, "rmsprop": RMSprop, "adadelta": AdaDelta, "adam": Adam})


def _parameters(name: str) -> Mapping[str, inspect.Parameter]:
    return inspect.signature(BY_NAME[name].__init__).parameters


def hyperparameters(name: str) -> tuple[str, ...]:
    """The keyword arguments optimizer ``name`` takes (``lr`` also names Adam's ``alpha``)."""
    names = tuple(p for p in _parameters(name) if p != "self")
    return names + ("lr",) if "alpha" in names and "lr" not in names else names


def learning_rate_keyword(name: str) -> str | None:
    """The hyperparameter that is optimizer ``name``'s learning rate: ``lr``, ``alpha`` for
    Adam (Chainer's name), None for AdaDelta (it has none). ``train: {lr: X}``, ``--lr X`` and
    a sweep's ``train.lr=X`` all set this one."""
    params = _parameters(name)
    if "lr" in params:
        return "lr"
    return "alpha" if "alpha" in params else None


def default_learning_rate(name: str) -> float | None:
    """Optimizer ``name``'s learning rate when none is given (its class's default: Chainer's);
    None for an optimizer without one."""
    keyword = learning_rate_keyword(name)
    return None if keyword is None else float(_parameters(name)[keyword].default)
