"""Run Chainer scripts unchanged: ``install()`` makes ``import chainer`` import graphcore.

>>> from graphcore import chainer_compat
>>> chainer_compat.install()          # before the script's first ``import chainer``
>>> import chainer, chainer.functions as F, chainer.links as L

What it does: it registers modules under Chainer's names in ``sys.modules``. ``chainer`` itself
is graphcore's namespace (``Variable``, ``Chain``, ``static_graph``, ``static_code``, ``report``,
``using_config``, ...); each submodule maps to graphcore's module of the same role:

    chainer.functions, .links, .optimizers, .optimizer_hooks, .initializers, .serializers,
    .reporter, .dataset (and .dataset.convert), .configuration, .computational_graph,
    .gradient_check -> the graphcore modules of those names;
    chainer.optimizer -> graphcore.optimizers (Chainer's old home of GradientClipping & co.);
    chainer.graph_optimizations.static_graph -> ``static_graph``;
    chainer.functions.loss.softmax_cross_entropy / .vae -> modules holding those functions;
    chainer.backends.cuda and chainer.cuda -> CPU stand-ins: ``to_cpu`` returns a numpy array,
    ``get_array_module`` returns numpy, and ``to_gpu`` / ``get_device_from_id`` raise.

Not covered (an ``import`` of them fails with ModuleNotFoundError, never a silent stand-in):
``chainer.training`` (Trainer, updaters, extensions), ``chainer.iterators``, ``chainer.datasets``
(downloads), ChainerX, CuPy and GPUs, and any function or link graphcore lacks (``AttributeError``
names it). The model code of Chainer's examples is what this targets; their training
scaffolding is not.
"""

from __future__ import annotations

import sys
import types

import numpy as np

import graphcore
from graphcore import (
    computational_graph,
    config,
    dataset,
    functions,
    gradient_check,
    initializers,
    links,
    optimizer_hooks,
    optimizers,
    reporter,
    serializers,
)
from graphcore.static.compile import static_graph

__all__ = ["install", "uninstall"]

_installed: dict[str, types.ModuleType | None] = {}


def _module(name: str, doc: str, **attrs: object) -> types.ModuleType:
    module = types.ModuleType(name, doc)
    module.__dict__.update(attrs)
    return module


def _no_gpu(*_args: object, **_kwargs: object) -> None:
    raise RuntimeError("graphcore runs on the CPU with numpy; there is no GPU support")


def _to_cpu_device(device: object, x: object) -> object:
    if device is not None and not (isinstance(device, int) and device < 0):
        _no_gpu()
    return x


def _cuda_module(name: str) -> types.ModuleType:
    return _module(name, "CPU stand-in for chainer.backends.cuda (graphcore has no GPU).",
                   to_cpu=lambda x: np.asarray(x.array if isinstance(x, graphcore.Variable)
                                               else x),
                   get_array_module=lambda *args: np,
                   to_gpu=_no_gpu, get_device_from_id=_no_gpu, get_device=_no_gpu,
                   check_cuda_available=_no_gpu, available=False, cupy=None)


def _chainer_module() -> types.ModuleType:
    chainer = _module("chainer", "graphcore under Chainer's name (graphcore.chainer_compat).")
    chainer.__dict__.update({k: v for k, v in vars(graphcore).items()
                             if not k.startswith("__")})
    cuda = _cuda_module("chainer.backends.cuda")
    chainer.__dict__.update(
        report=reporter.report, Reporter=reporter.Reporter, reporter=reporter,
        configuration=config_module(), cuda=cuda,
        backends=_module("chainer.backends", "CPU only.", cuda=cuda),
        optimizer=optimizers,
        graph_optimizations=_module(
            "chainer.graph_optimizations", "static_graph only.",
            static_graph=_module("chainer.graph_optimizations.static_graph", "",
                                 static_graph=static_graph)),
        __path__=[],  # a package, so ``import chainer.x`` consults sys.modules
    )
    return chainer


def config_module() -> types.ModuleType:
    from graphcore.config import using_config

    return _module("chainer.configuration", "Chainer's configuration module.", config=config,
                   using_config=using_config)


def _modules() -> dict[str, types.ModuleType]:
    chainer = _chainer_module()
    loss = _module("chainer.functions.loss", "Loss functions by module, as Chainer files them.")
    loss.softmax_cross_entropy = _module("chainer.functions.loss.softmax_cross_entropy", "",
                                         softmax_cross_entropy=functions.softmax_cross_entropy)
    loss.vae = _module("chainer.functions.loss.vae", "",
                       gaussian_kl_divergence=functions.gaussian_kl_divergence,
                       bernoulli_nll=functions.bernoulli_nll)
    gops = chainer.graph_optimizations
    data = _module("chainer.dataset", "Batch assembly.", convert=dataset,
                   concat_examples=dataset.concat_examples, to_device=_to_cpu_device)
    chainer.dataset = data
    return {
        "chainer": chainer,
        "chainer.functions": functions, "chainer.links": links,
        "chainer.optimizers": optimizers, "chainer.optimizer": optimizers,
        "chainer.optimizer_hooks": optimizer_hooks, "chainer.initializers": initializers,
        "chainer.serializers": serializers, "chainer.reporter": reporter,
        "chainer.dataset": data, "chainer.dataset.convert": dataset,
        "chainer.configuration": chainer.configuration,
        "chainer.computational_graph": computational_graph,
        "chainer.gradient_check": gradient_check,
        "chainer.functions.loss": loss,
        "chainer.functions.loss.softmax_cross_entropy": loss.softmax_cross_entropy,
        "chainer.functions.loss.vae": loss.vae,
        "chainer.graph_optimizations": gops,
        "chainer.graph_optimizations.static_graph": gops.static_graph,
        "chainer.backends": chainer.backends, "chainer.backends.cuda": chainer.cuda,
        "chainer.cuda": chainer.cuda,
    }


def install() -> None:
    """Register the ``chainer`` modules (idempotent). ``uninstall()`` restores what was there."""
    if _installed:
        return
    for name, module in _modules().items():
        _installed[name] = sys.modules.get(name)
        sys.modules[name] = module


def uninstall() -> None:
    for name, previous in _installed.items():
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous
    _installed.clear()
