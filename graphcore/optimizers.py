"""Optimizers (Chainer's API): ``SGD``, ``MomentumSGD``, ``NesterovAG``, ``AdaGrad``,
``RMSprop``, ``AdaDelta``, ``Adam`` (with AMSGrad and AdamW's decoupled weight decay), and
gradient hooks. Defaults and update equations are Chainer's.

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
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

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
    Hyperparameter,
    HyperparameterProxy,
    MomentumSGDRule,
    NesterovAGRule,
    RMSpropRule,
    SGDRule,
    UpdateRule,
    adam_lr,
    add_hook,
    hook_name,
    hook_timing,
)
from graphcore.variable import Parameter, Variable

__all__ = [
    "SGD", "AdaDelta", "AdaDeltaRule", "AdaGrad", "AdaGradRule", "Adam", "AdamRule",
    "GradientClipping", "GradientHardClipping", "Hyperparameter", "Lasso", "MomentumSGD",
    "MomentumSGDRule", "NesterovAG", "NesterovAGRule", "Optimizer", "RMSprop", "RMSpropRule",
    "SGDRule", "UpdateRule", "WeightDecay",
]

# --- optimizers -------------------------------------------------------------------------------


class Optimizer:
    """Updates every parameter of ``target`` (set by ``setup``) through its ``UpdateRule``."""

    target: Link | None = None

    def __init__(self) -> None:
        self.hyperparam = Hyperparameter()
        self.target = None
        self.t = 0
        self.epoch = 0
        self._hooks: dict[str, dict[str, Callable]] = {"pre": {}, "post": {}}
        self._param_hooks: list[tuple[Callable, str, str]] = []  # (hook, name, timing)

    def create_update_rule(self) -> UpdateRule:
        raise NotImplementedError

    def setup(self, link: Link) -> Optimizer:
        """Make ``link`` the target and give each of its parameters a fresh update rule."""
        if not isinstance(link, Link):
            raise ArgumentTypeError(f"{type(self).__name__}.setup: expected a Link (the model), "
                                    f"got {type(link).__name__}")
        self.target = link
        self.t = 0
        self.epoch = 0
        for param in link.params():
            self._new_rule(param)
        return self

    def _new_rule(self, param: Parameter) -> UpdateRule:
        rule = self.create_update_rule()
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
        the parameters.  Parameters without a gradient or with ``requires_grad=False`` are
        left alone.
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
            loss.backward()
            del loss
        self.call_hooks("pre")
        self.t += 1
        for param in self.target.params():
            self.update_rule_of(param).update(param)
        self.call_hooks("post")

    def new_epoch(self) -> None:
        self.epoch += 1


_RATE = Attr(float, low=0.0)
_DECAY = Attr(float, low=0.0, high=1.0)
# The optimizers' constructor arguments (checked there; the Chainer-style attribute proxies
# such as ``opt.lr = ...`` stay plain assignments).
_HYPER = {"lr": _RATE, "momentum": _DECAY, "alpha": _RATE, "beta1": _DECAY, "beta2": _DECAY,
          "eps": _RATE, "eta": _RATE, "weight_decay_rate": _RATE, "amsgrad": Attr(bool)}


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
    """Adam (Kingma & Ba), optionally AMSGrad and decoupled weight decay (AdamW's ``eta``)."""

    alpha = HyperparameterProxy()
    beta1 = HyperparameterProxy()
    beta2 = HyperparameterProxy()
    eps = HyperparameterProxy()
    eta = HyperparameterProxy()
    weight_decay_rate = HyperparameterProxy()
    amsgrad = HyperparameterProxy()

    def __init__(self, alpha: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8, eta: float = 1.0, weight_decay_rate: float = 0,
                 amsgrad: bool = False) -> None:
        super().__init__()
        check_arguments(type(self).__name__, _HYPER, alpha=alpha, beta1=beta1, beta2=beta2,
                        eps=eps, eta=eta, weight_decay_rate=weight_decay_rate, amsgrad=amsgrad)
        hp = self.hyperparam
        hp.alpha, hp.beta1, hp.beta2, hp.eps = alpha, beta1, beta2, eps
        hp.eta, hp.weight_decay_rate, hp.amsgrad = eta, weight_decay_rate, amsgrad

    def create_update_rule(self) -> UpdateRule:
        return AdamRule(self.hyperparam)

    @property
    def lr(self) -> float:
        """The bias-corrected step size of the latest update: ``alpha * sqrt(1-b2^t)/(1-b1^t)``."""
        return adam_lr(self.hyperparam, self.t)


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
