"""Update rules (Chainer's ``chainer.optimizer`` pieces): ``Hyperparameter`` (a bag of values
looked up in a parent), ``UpdateRule`` (one parameter's state and in-place update, with its
hooks) and the rules of the optimizers in ``graphcore.optimizers`` (``SGDRule`` ... ``AdamRule``).
Defaults and update equations are Chainer's.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from graphcore.serialization import Deserializer
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
        self._use_fp32_update = False
        self._fp32_param: Parameter | None = None

    def add_hook(self, hook: Callable, name: str | None = None, timing: str = "auto") -> None:
        """Call ``hook(rule, param)`` before (``'pre'``) or after (``'post'``) each update."""
        add_hook(self._hooks, hook, name, timing)

    def remove_hook(self, name: str) -> None:
        for hooks in self._hooks.values():
            hooks.pop(name, None)

    def update(self, param: Parameter, loss_scale: float | None = None) -> None:
        """One step for ``param``; skipped when disabled, frozen, uninitialized or gradless.

        ``loss_scale``: the gradient is of the loss times this (the optimizer's loss scaling);
        it is divided out before the hooks and the update see it. With ``use_fp32_update()``
        a float16 parameter is updated through a float32 copy (Chainer's mixed precision)."""
        if not self.enabled or not param.requires_grad:
            return
        if param.array is None or param.grad is None:
            return
        self.t += 1
        target = param
        if self._use_fp32_update and param.array.dtype == np.float16:
            if self._fp32_param is None:
                self._fp32_param = Parameter(param.array.astype(np.float32), name=param.name)
            target = self._fp32_param
            target.grad = param.grad.astype(np.float32)
        if loss_scale is not None:
            target.grad = target.grad / loss_scale
        if self.state is None:
            self.state = {}
            self.init_state(target)
        for hook in self._hooks["pre"].values():
            hook(self, target)
        self.update_core(target)
        for hook in self._hooks["post"].values():
            hook(self, target)
        if target is not param:
            param.array[...] = target.array
            target.grad = None

    def use_fp32_update(self, flag: bool = True) -> None:
        """Update a float16 parameter through a float32 master copy."""
        self._use_fp32_update = flag

    def init_state(self, param: Parameter) -> None:
        """Allocate ``self.state`` entries for ``param`` (none by default)."""

    def serialize(self, serializer: Any) -> None:
        """Chainer's protocol: ``t`` and the state arrays. A loader given a rule with no state
        yet (not updated since it was made) reads the state ``init_state`` would make, by
        name; a rule the file has no state for stays without."""
        self.t = int(serializer("t", self.t))
        if self.state is not None:
            for key in self.state:
                self.state[key] = serializer(key, self.state[key])
            return
        if not isinstance(serializer, Deserializer):
            return
        probe = copy.copy(self)
        probe.state = {}
        probe.init_state(Parameter(np.zeros(1, np.float32)))
        loaded = {}
        for key in probe.state:
            value = serializer(key, None)
            if value is None:
                return
            loaded[key] = value
        self.state = loaded

    def update_core(self, param: Parameter) -> None:
        """Change ``param.array`` in place from ``param.grad``: Chainer's rules define
        ``update_core_cpu`` (the CPU is graphcore's one device), a graphcore rule this."""
        update_core_cpu = getattr(self, "update_core_cpu", None)
        if update_core_cpu is None:
            raise NotImplementedError(f"{type(self).__name__} defines neither update_core nor "
                                      f"update_core_cpu")
        update_core_cpu(param)


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
    """Adam with bias correction folded into ``alpha_t`` (Chainer's formulation)::

        m += (1 - beta1) * (grad - m)
        v += (1 - beta2) * (grad**2 - v)
        step = alpha_t / (sqrt(v) + eps)       clipped to AdaBound's bounds with adabound
        param -= eta * (step * m + weight_decay_rate * param)
        alpha_t = alpha * sqrt(1 - beta2**t) / (1 - beta1**t)

    With ``amsgrad=True`` ``sqrt(vhat)`` replaces ``sqrt(v)``, ``vhat`` the running max of v
    (AMSGrad; with adabound too, AMSBound). AdaBound's bounds close in on ``final_lr`` (scaled
    as ``alpha`` is from its initial value) at rate ``gamma``. Float32 and float64 run in
    place through one scratch array, so a step allocates nothing; a float16 parameter's step
    is computed in float32, as Chainer does.
    """

    def __init__(self, parent_hyperparam: Hyperparameter | None = None) -> None:
        super().__init__(parent_hyperparam)
        self._scratch: np.ndarray | None = None
        self.initial_alpha = self.hyperparam.alpha if getattr(
            self.hyperparam, "adabound", False) else None

    def init_state(self, param: Parameter) -> None:
        self.state["m"] = np.zeros_like(param.array)
        self.state["v"] = np.zeros_like(param.array)
        if self.hyperparam.amsgrad:
            self.state["vhat"] = np.zeros_like(param.array)

    @property
    def alpha_t(self) -> float:
        return adam_lr(self.hyperparam, self.t)

    lr = alpha_t  # graphcore's earlier name (Chainer 5's), kept for scripts that read it

    @property
    def bounds(self) -> tuple[float, float]:
        """AdaBound's (lower, upper) limits of the step size at this step."""
        if self.t == 0:
            raise RuntimeError("AdaBound's bounds are undefined before the first update")
        hp = self.hyperparam
        initial = self.initial_alpha if self.initial_alpha is not None else hp.alpha
        final_lr = hp.final_lr * hp.alpha / initial
        return (final_lr * (1.0 - 1.0 / (hp.gamma * self.t + 1)),
                final_lr * (1.0 + 1.0 / (hp.gamma * self.t)))

    def _check_eps(self, dtype: np.dtype) -> None:
        eps = self.hyperparam.eps
        if eps != 0 and dtype.type(eps) == 0:
            raise ValueError(f"Adam: eps={eps} is zero in {dtype.name}")

    def update_core(self, param: Parameter) -> None:
        hp = self.hyperparam
        p = param.array
        if p.dtype == np.float16 or getattr(hp, "adabound", False):
            self._update_allocating(param)
            return
        self._check_eps(p.dtype)
        g = param.grad
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
        buf *= hp.eta * self.alpha_t
        if hp.weight_decay_rate != 0:
            p *= 1 - hp.eta * hp.weight_decay_rate
        p -= buf

    def _update_allocating(self, param: Parameter) -> None:
        """float16 (computed in float32) and AdaBound (a clipped step)."""
        hp = self.hyperparam
        work = np.float32 if param.array.dtype == np.float16 else param.array.dtype
        self._check_eps(np.dtype(work))
        g = param.grad.astype(work, copy=False)
        m, v = self.state["m"], self.state["v"]
        m += (1 - hp.beta1) * (g - m)
        v += (1 - hp.beta2) * (g * g - v)
        if hp.amsgrad:
            vhat = self.state["vhat"]
            np.maximum(vhat, v, out=vhat)
        else:
            vhat = v
        step = self.alpha_t / (np.sqrt(vhat.astype(work, copy=False)) + hp.eps)
        if getattr(hp, "adabound", False):
            step = np.clip(step, *self.bounds)
        p = param.array
        p[...] = (1 - hp.eta * hp.weight_decay_rate) * p - hp.eta * step * m


class CorrectedMomentumSGDRule(UpdateRule):
    """Momentum SGD with the learning rate outside the velocity (Goyal et al., so that a
    changed ``lr`` applies to the accumulated velocity too)::

        v = momentum * v - grad; param += lr * v
    """

    def init_state(self, param: Parameter) -> None:
        self.state["v"] = np.zeros_like(param.array)

    def update_core(self, param: Parameter) -> None:
        hp = self.hyperparam
        v = self.state["v"]
        v *= hp.momentum
        v -= param.grad
        param.array += hp.lr * v


class RMSpropGravesRule(UpdateRule):
    """Graves' RMSprop (2013), centred and with momentum::

        n = alpha * n + (1 - alpha) * grad**2
        g = alpha * g + (1 - alpha) * grad
        delta = momentum * delta - lr * grad / sqrt(n - g**2 + eps)
        param += delta
    """

    def init_state(self, param: Parameter) -> None:
        for key in ("n", "g", "delta"):
            self.state[key] = np.zeros_like(param.array)

    def update_core(self, param: Parameter) -> None:
        hp = self.hyperparam
        n, g, delta, grad = self.state["n"], self.state["g"], self.state["delta"], param.grad
        n *= hp.alpha
        n += (1 - hp.alpha) * grad * grad
        g *= hp.alpha
        g += (1 - hp.alpha) * grad
        delta *= hp.momentum
        delta -= hp.lr * grad / np.sqrt(n - g * g + hp.eps)
        param.array += delta


class SMORMS3Rule(UpdateRule):
    """Simon Funk's SMORMS3: RMSprop with a per-element memory length ``mem``::

        r = 1 / (mem + 1)
        g = (1 - r) * g + r * grad;  g2 = (1 - r) * g2 + r * grad**2
        x = g**2 / (g2 + eps)
        param -= grad * min(x, lr) / (sqrt(g2) + eps);  mem = 1 + mem * (1 - x)
    """

    def init_state(self, param: Parameter) -> None:
        self.state["mem"] = np.ones_like(param.array)
        self.state["g"] = np.zeros_like(param.array)
        self.state["g2"] = np.zeros_like(param.array)

    def update_core(self, param: Parameter) -> None:
        hp = self.hyperparam
        mem, g, g2, grad = self.state["mem"], self.state["g"], self.state["g2"], param.grad
        r = 1 / (mem + 1)
        g[...] = (1 - r) * g + r * grad
        g2[...] = (1 - r) * g2 + r * grad * grad
        x = g * g / (g2 + hp.eps)
        param.array -= grad * np.minimum(x, hp.lr) / (np.sqrt(g2) + hp.eps)
        mem[...] = 1 + mem * (1 - x)


class MSVAGRule(UpdateRule):
    """M-SVAG (Balles & Hennig, 2018): momentum SGD whose step is damped per element by the
    estimated signal-to-noise ratio of the gradient::

        m += (1 - beta) * (grad - m);  v += (1 - beta) * (grad**2 - v)
        mt, vt = m / (1 - beta**t), v / (1 - beta**t)
        s = (vt - mt**2) / (1 - rho);  factor = clip(mt**2 / (mt**2 + rho * s), 0, 1)
        param -= eta * (lr * mt * factor + weight_decay_rate * param)

    ``rho`` is the variance-reduction factor of the moving average after ``t`` steps (capped at
    0.9999); an element with no gradient yet (0/0) gets factor 0. ``beta**t`` comes from the
    rule's step count, so a resumed run (``t`` is saved) continues exactly.
    """

    def init_state(self, param: Parameter) -> None:
        self.state["m"] = np.zeros_like(param.array)
        self.state["v"] = np.zeros_like(param.array)

    def update_core(self, param: Parameter) -> None:
        hp = self.hyperparam
        m, v, grad = self.state["m"], self.state["v"], param.grad
        power = hp.beta ** self.t
        rho = min(((1.0 - hp.beta) ** 2) * (1.0 - power ** 2)
                  / (((1.0 - power) ** 2) * (1.0 - hp.beta ** 2)), 0.9999)
        m += (1 - hp.beta) * (grad - m)
        v += (1 - hp.beta) * (grad * grad - v)
        mt = m / (1 - power)
        vt = v / (1 - power)
        mt2 = mt * mt
        s = (vt - mt2) / (1 - rho)
        with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 where m = v = 0
            factor = np.clip(mt2 / (mt2 + rho * s), 0, 1)
        factor = np.where(np.isnan(factor), 0, factor)
        param.array -= hp.eta * (hp.lr * mt * factor + hp.weight_decay_rate * param.array)


def adam_lr(hp: Hyperparameter, t: int) -> float:
    """Adam's bias-corrected step size after ``t`` updates (Chainer's ``alpha_t``)."""
    if t == 0:
        raise RuntimeError("Adam's learning rate is undefined before the first update (t == 0)")
    fix1 = 1.0 - hp.beta1 ** t
    fix2 = 1.0 - hp.beta2 ** t
    return hp.alpha * math.sqrt(fix2) / fix1
