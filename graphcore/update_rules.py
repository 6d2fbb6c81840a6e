"""Update rules (Chainer's ``chainer.optimizer`` pieces): ``Hyperparameter`` (a bag of values
looked up in a parent), ``UpdateRule`` (one parameter's state and in-place update, with its
hooks) and the rules of the optimizers in ``graphcore.optimizers`` (``SGDRule`` ... ``AdamRule``).
Defaults and update equations are Chainer's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from graphcore.variable import Parameter


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


class HyperparameterProxy:
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


def hook_timing(hook: Any, timing: str) -> str:
    """``pre`` or ``post``: ``timing``, or for ``auto`` the hook's own ``timing`` (default
    ``pre``)."""
    if timing == "auto":
        timing = getattr(hook, "timing", "pre")
    if timing not in ("pre", "post"):
        raise ValueError(f"hook timing must be 'pre', 'post' or 'auto', got {timing!r}")
    return timing


def hook_name(hook: Any) -> str:
    """The name a hook is registered under when none is given: its ``name``, else its class's."""
    return getattr(hook, "name", None) or type(hook).__name__


def add_hook(hooks: dict[str, dict[str, Callable]], hook: Callable, name: str | None,
             timing: str) -> None:
    """Register ``hook`` in ``hooks`` (``{"pre": {...}, "post": {...}}``, an optimizer's or an
    update rule's) under its name and timing; a name taken already is a ``KeyError``."""
    if not callable(hook):
        raise TypeError(f"a hook must be callable, got {type(hook).__name__}")
    name = name or hook_name(hook)
    timing = hook_timing(hook, timing)
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
        add_hook(self._hooks, hook, name, timing)

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
        return adam_lr(self.hyperparam, self.t)

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


def adam_lr(hp: Hyperparameter, t: int) -> float:
    """Adam's bias-corrected step size after ``t`` updates (Chainer's ``alpha_t``)."""
    if t == 0:
        raise RuntimeError("Adam's learning rate is undefined before the first update (t == 0)")
    fix1 = 1.0 - hp.beta1 ** t
    fix2 = 1.0 - hp.beta2 ** t
    return hp.alpha * math.sqrt(fix2) / fix1
