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

import math
from collections.abc import Callable
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
from graphcore.variable import Parameter, Variable

__all__ = [
    "SGD", "AdaDelta", "AdaDeltaRule", "AdaGrad", "AdaGradRule", "Adam", "AdamRule",
    "GradientClipping", "GradientHardClipping", "Hyperparameter", "Lasso", "MomentumSGD",
    "MomentumSGDRule", "NesterovAG", "NesterovAGRule", "Optimizer", "RMSprop", "RMSpropRule",
    "SGDRule", "UpdateRule", "WeightDecay",
]


class Hyperparameter:
    """A bag of named hyperparameters; a name it lacks is looked up in ``parent``."""

    def __init__(self, parent: Hyperparameter | None = None) -> None:
        self.__dict__["_parent"] = parent

    def __getattr__(self, name: str) -> Any:
        parent = self.__dict__.get("_parent")
        if parent is None or name.startswith("__"):
            raise AttributeError(f"no hyperparameter named {name!r}")
        return getattr(parent, name)

    def get_dict(self) -> dict[str, Any]:
        """Every hyperparameter visible here (own values override the parent's)."""
        parent = self.__dict__["_parent"]
        values = parent.get_dict() if parent is not None else {}
        values.update({k: v for k, v in self.__dict__.items() if k != "_parent"})
        return values

    def __repr__(self) -> str:
        return f"Hyperparameter({self.get_dict()})"


class _HyperparameterProxy:
    """Makes ``optimizer.lr`` read and write ``optimizer.hyperparam.lr``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(obj.hyperparam, self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(obj.hyperparam, self.name, value)


# --- hooks ------------------------------------------------------------------------------------
# A hook with ``call_for_each_param = True`` is called as ``hook(rule, param)`` just before (or
# after) each parameter's update; any other hook is called once per step as ``hook(optimizer)``.


def _hook_timing(hook: Any, timing: str) -> str:
    if timing == "auto":
        timing = getattr(hook, "timing", "pre")
    if timing not in ("pre", "post"):
        raise ValueError(f"hook timing must be 'pre', 'post' or 'auto', got {timing!r}")
    return timing


def _hook_name(hook: Any) -> str:
    return getattr(hook, "name", None) or type(hook).__name__


def _add_hook(hooks: dict[str, dict[str, Callable]], hook: Callable, name: str | None,
              timing: str) -> None:
    if not callable(hook):
        raise TypeError(f"a hook must be callable, got {type(hook).__name__}")
    name = name or _hook_name(hook)
    timing = _hook_timing(hook, timing)
    if name in hooks["pre"] or name in hooks["post"]:
        raise KeyError(f"a hook named {name!r} is already registered")
    hooks[timing][name] = hook


# --- per-parameter rules ----------------------------------------------------------------------


class UpdateRule:
    """How one parameter is updated; holds its state (``state``) and step count (``t``).

    Subclasses define ``init_state`` (allocate state arrays like the parameter) and
    ``update_core`` (change ``param.array`` in place from ``param.grad``).
    """

    def __init__(self, parent_hyperparam: Hyperparameter | None = None) -> None:
        self.hyperparam = Hyperparameter(parent_hyperparam)
        self.state: dict[str, np.ndarray] | None = None
        self.enabled = True
        self.t = 0
        self._hooks: dict[str, dict[str, Callable]] = {"pre": {}, "post": {}}

    def add_hook(self, hook: Callable, name: str | None = None, timing: str = "auto") -> None:
        """Call ``hook(rule, param)`` before (``'pre'``) or after (``'post'``) each update."""
        _add_hook(self._hooks, hook, name, timing)

    def remove_hook(self, name: str) -> None:
        for hooks in self._hooks.values():
            hooks.pop(name, None)

    def update(self, param: Parameter) -> None:
        """One step for ``param``; skipped when disabled, frozen, uninitialized or gradless."""
        if not self.enabled or not param.requires_grad:
            return
        if param.array is None or param.grad is None:
            return
        self.t += 1
        if self.state is None:
            self.state = {}
            self.init_state(param)
        for hook in self._hooks["pre"].values():
            hook(self, param)
        self.update_core(param)
        for hook in self._hooks["post"].values():
            hook(self, param)

    def init_state(self, param: Parameter) -> None:
        """Allocate ``self.state`` entries for ``param`` (none by default)."""

    def update_core(self, param: Parameter) -> None:
        raise NotImplementedError


class SGDRule(UpdateRule):
    """``param -= lr * grad``."""

    def update_core(self, param: Parameter) -> None:
        param.array -= self.hyperparam.lr * param.grad


class MomentumSGDRule(UpdateRule):
    """``v = momentum * v - lr * grad; param += v``."""

    def init_state(self, param: Parameter) -> None:
        self.state["v"] = np.zeros_like(param.array)

    def update_core(self, param: Parameter) -> None:
        hp = self.hyperparam
        v = self.state["v"]
        v *= hp.momentum
        v -= hp.lr * param.grad
        param.array += v


class NesterovAGRule(UpdateRule):
    """Nesterov's accelerated gradient in Chainer's form::

        v = momentum * v - lr * grad
        param += momentum**2 * v - (1 + momentum) * lr * grad
    """

    def init_state(self, param: Parameter) -> None:
        self.state["v"] = np.zeros_like(param.array)

    def update_core(self, param: Parameter) -> None:
        hp = self.hyperparam
        v, g = self.state["v"], param.grad
        v *= hp.momentum
        v -= hp.lr * g
        param.array += hp.momentum * hp.momentum * v
        param.array -= (1 + hp.momentum) * hp.lr * g


class AdaGradRule(UpdateRule):
    """``h += grad**2; param -= lr * grad / (sqrt(h) + eps)``."""

    def init_state(self, param: Parameter) -> None:
        self.state["h"] = np.zeros_like(param.array)

    def update_core(self, param: Parameter) -> None:
        hp = self.hyperparam
        h, g = self.state["h"], param.grad
        h += g * g
        param.array -= hp.lr * g / (np.sqrt(h) + hp.eps)


class RMSpropRule(UpdateRule):
    """``ms = alpha * ms + (1 - alpha) * grad**2; param -= lr * grad / (sqrt(ms) + eps)``
    (``sqrt(ms + eps)`` with ``eps_inside_sqrt``)."""

    def init_state(self, param: Parameter) -> None:
        self.state["ms"] = np.zeros_like(param.array)

    def update_core(self, param: Parameter) -> None:
        hp = self.hyperparam
        ms, g = self.state["ms"], param.grad
        eps = g.dtype.type(hp.eps)
        if hp.eps != 0 and eps == 0:
            raise ValueError(f"RMSprop: eps={hp.eps} is zero in {g.dtype.name}")
        ms *= hp.alpha
        ms += (1 - hp.alpha) * g * g
        denom = np.sqrt(ms + eps) if hp.eps_inside_sqrt else np.sqrt(ms) + eps
        param.array -= hp.lr * g / denom


class AdaDeltaRule(UpdateRule):
    """Zeiler's ADADELTA::

        msg = rho * msg + (1 - rho) * grad**2
        dx = sqrt((msdx + eps) / (msg + eps)) * grad
        msdx = rho * msdx + (1 - rho) * dx**2
        param -= dx
    """

    def init_state(self, param: Parameter) -> None:
        self.state["msg"] = np.zeros_like(param.array)
        self.state["msdx"] = np.zeros_like(param.array)

    def update_core(self, param: Parameter) -> None:
        hp = self.hyperparam
        msg, msdx, g = self.state["msg"], self.state["msdx"], param.grad
        msg *= hp.rho
        msg += (1 - hp.rho) * g * g
        dx = np.sqrt((msdx + hp.eps) / (msg + hp.eps)) * g
        msdx *= hp.rho
        msdx += (1 - hp.rho) * dx * dx
        param.array -= dx


class AdamRule(UpdateRule):
    """Adam with bias correction folded into ``lr`` (Chainer's formulation)::

        m += (1 - beta1) * (grad - m)
        v += (1 - beta2) * (grad**2 - v)
        param -= eta * (lr * m / (sqrt(v) + eps) + weight_decay_rate * param)
        lr = alpha * sqrt(1 - beta2**t) / (1 - beta1**t)

    With ``amsgrad=True`` ``sqrt(vhat)`` replaces ``sqrt(v)``, ``vhat`` the running max of v.
    All of it runs in place through one scratch array, so a step allocates nothing.
    """

    def __init__(self, parent_hyperparam: Hyperparameter | None = None) -> None:
        super().__init__(parent_hyperparam)
        self._scratch: np.ndarray | None = None

    def init_state(self, param: Parameter) -> None:
        self.state["m"] = np.zeros_like(param.array)
        self.state["v"] = np.zeros_like(param.array)
        if self.hyperparam.amsgrad:
            self.state["vhat"] = np.zeros_like(param.array)

    @property
    def lr(self) -> float:
        return _adam_lr(self.hyperparam, self.t)

    def update_core(self, param: Parameter) -> None:
        hp = self.hyperparam
        p, g = param.array, param.grad
        m, v = self.state["m"], self.state["v"]
        buf = self._scratch
        if buf is None or buf.shape != p.shape or buf.dtype != p.dtype:
            buf = self._scratch = np.empty_like(p)
        np.subtract(g, m, out=buf)
        buf *= 1 - hp.beta1
        m += buf
        np.multiply(g, g, out=buf)
        buf -= v
        buf *= 1 - hp.beta2
        v += buf
        if hp.amsgrad:
            vhat = self.state["vhat"]
            np.maximum(vhat, v, out=vhat)
        else:
            vhat = v
        np.sqrt(vhat, out=buf)
        buf += hp.eps
        np.divide(m, buf, out=buf)
        buf *= hp.eta * self.lr
        if hp.weight_decay_rate != 0:
            p *= 1 - hp.eta * hp.weight_decay_rate
        p -= buf


def _adam_lr(hp: Hyperparameter, t: int) -> float:
    if t == 0:
        raise RuntimeError("Adam's learning rate is undefined before the first update (t == 0)")
    fix1 = 1.0 - hp.beta1 ** t
    fix2 = 1.0 - hp.beta2 ** t
    return hp.alpha * math.sqrt(fix2) / fix1


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
        name = name or _hook_name(hook)
        if name in self._hook_names():
            raise KeyError(f"a hook named {name!r} is already registered")
        if getattr(hook, "call_for_each_param", False):
            timing = _hook_timing(hook, timing)
            self._param_hooks.append((hook, name, timing))
            for param in self.target.params():
                self.update_rule_of(param).add_hook(hook, name, timing)
        else:
            _add_hook(self._hooks, hook, name, timing)

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

    lr = _HyperparameterProxy()

    def __init__(self, lr: float = 0.01) -> None:
        super().__init__()
        check_arguments(type(self).__name__, _HYPER, lr=lr)
        self.hyperparam.lr = lr

    def create_update_rule(self) -> UpdateRule:
        return SGDRule(self.hyperparam)


class MomentumSGD(Optimizer):
    """SGD with (heavy-ball) momentum."""

    lr = _HyperparameterProxy()
    momentum = _HyperparameterProxy()

    def __init__(self, lr: float = 0.01, momentum: float = 0.9) -> None:
        super().__init__()
        check_arguments(type(self).__name__, _HYPER, lr=lr, momentum=momentum)
        self.hyperparam.lr = lr
        self.hyperparam.momentum = momentum

    def create_update_rule(self) -> UpdateRule:
        return MomentumSGDRule(self.hyperparam)


class NesterovAG(Optimizer):
    """Nesterov's accelerated gradient (Sutskever et al., 2013; Chainer's formulation)."""

    lr = _HyperparameterProxy()
    momentum = _HyperparameterProxy()

    def __init__(self, lr: float = 0.01, momentum: float = 0.9) -> None:
        super().__init__()
        self.hyperparam.lr = lr
        self.hyperparam.momentum = momentum

    def create_update_rule(self) -> UpdateRule:
        return NesterovAGRule(self.hyperparam)


class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al., 2011)."""

    lr = _HyperparameterProxy()
    eps = _HyperparameterProxy()

    def __init__(self, lr: float = 0.001, eps: float = 1e-8) -> None:
        super().__init__()
        self.hyperparam.lr = lr
        self.hyperparam.eps = eps

    def create_update_rule(self) -> UpdateRule:
        return AdaGradRule(self.hyperparam)


class RMSprop(Optimizer):
    """RMSprop (Tieleman & Hinton, 2012)."""

    lr = _HyperparameterProxy()
    alpha = _HyperparameterProxy()
    eps = _HyperparameterProxy()
    eps_inside_sqrt = _HyperparameterProxy()

    def __init__(self, lr: float = 0.01, alpha: float = 0.99, eps: float = 1e-8,
                 eps_inside_sqrt: bool = False) -> None:
        super().__init__()
        hp = self.hyperparam
        hp.lr, hp.alpha, hp.eps, hp.eps_inside_sqrt = lr, alpha, eps, eps_inside_sqrt

    def create_update_rule(self) -> UpdateRule:
        return RMSpropRule(self.hyperparam)


class AdaDelta(Optimizer):
    """ADADELTA (Zeiler, 2012): no learning rate."""

    rho = _HyperparameterProxy()
    eps = _HyperparameterProxy()

    def __init__(self, rho: float = 0.95, eps: float = 1e-6) -> None:
        super().__init__()
        self.hyperparam.rho = rho
        self.hyperparam.eps = eps

    def create_update_rule(self) -> UpdateRule:
        return AdaDeltaRule(self.hyperparam)


class Adam(Optimizer):
    """Adam (Kingma & Ba), optionally AMSGrad and decoupled weight decay (AdamW's ``eta``)."""

    alpha = _HyperparameterProxy()
    beta1 = _HyperparameterProxy()
    beta2 = _HyperparameterProxy()
    eps = _HyperparameterProxy()
    eta = _HyperparameterProxy()
    weight_decay_rate = _HyperparameterProxy()
    amsgrad = _HyperparameterProxy()

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
        return _adam_lr(self.hyperparam, self.t)
