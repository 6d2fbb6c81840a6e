"""Run Chainer scripts unchanged: ``install()`` makes ``import chainer`` import graphcore.

>>> from graphcore import chainer_compat
>>> chainer_compat.install()          # before the script's first ``import chainer``
>>> import chainer, chainer.functions as F, chainer.links as L
>>> from chainer import training
>>> from chainer.training import extensions

What it does: it registers modules under Chainer's names in ``sys.modules``. ``chainer`` itself
is graphcore's namespace (``Variable``, ``Chain``, ``static_graph``, ``static_code``, ``report``,
``using_config``, ...); each submodule maps to graphcore's module of the same role:

    chainer.functions, .links, .initializers, .serializers -> packages over the graphcore
    modules of those names (every name of graphcore's module, looked up when asked) with
    Chainer's modules laid out as Chainer files them (``chainer.functions.math.basic_math``,
    ``chainer.links.connection.linear``, ``chainer.initializers.constant``,
    ``chainer.serializers.npz``; ``layout.py`` lists Chainer 7.8.1's modules and their public
    names): each name is graphcore's function, link, initializer or ``FunctionNode`` class of
    that name (Chainer's class names: ``basic_math.Add``), found when asked, so what graphcore
    gains later is found too; ``chainer.basic_math`` and ``chainer.array`` as in Chainer;
    chainer.optimizers, .optimizer_hooks, .reporter, .dataset (and .dataset.convert),
    .configuration, .computational_graph, .gradient_check, .link, .function_node -> the
    graphcore modules of those roles;
    chainer.training (Trainer, StandardUpdater, Updater, Extension, make_extension, the
    PRIORITY_* constants, get_trigger, IntervalTrigger) and its submodules .extensions
    (Evaluator, LogReport, PrintReport, PlotReport, ProgressBar, snapshot, snapshot_object,
    DumpGraph/dump_graph, observe_lr, observe_value, ExponentialShift, LinearShift,
    StepShift, MultistepShift, WarmupShift, PolynomialShift, InverseShift; and CosineShift,
    ReduceLROnPlateau, which Chainer does not have),
    .triggers (IntervalTrigger, EarlyStoppingTrigger, ManualScheduleTrigger, BestValueTrigger,
    MaxValueTrigger, MinValueTrigger), .updaters (StandardUpdater), .extension, .trainer,
    .updater, .trigger, .util -> graphcore.training's classes;
    chainer.iterators (SerialIterator, ShuffleOrderSampler) -> graphcore.iterators;
    chainer.distributions (Normal, Bernoulli, Independent; with ``chainer.kl_divergence``,
    ``cross_entropy``, ``register_kl``, ``Distribution``) -> graphcore.distributions;
    chainer.datasets (TupleDataset, DictDataset, SubDataset, split_dataset,
    split_dataset_random) -> graphcore.datasets;
    chainer.optimizer -> graphcore.optimizers (Chainer's old home of GradientClipping & co.);
    chainer.graph_optimizations.static_graph -> ``static_graph``;
    chainer.backends.cuda and chainer.cuda -> CPU stand-ins: ``to_cpu`` returns a numpy array,
    ``get_array_module`` returns numpy, and ``to_gpu`` / ``get_device_from_id`` raise;
    chainer.backends.intel64 -> iDeep not available (``is_ideep_available()`` False,
    ``mdarray`` a type nothing is); chainer.backends._cpu -> ``CpuDevice``;
    chainer.memory_layouts -> cuDNN's layout names (graphcore has channel-first only);
    chainer.backend (and ``chainer.get_device``, ``chainer.using_device``) -> graphcore.backend:
    ``'@numpy'`` is the one device, any other raises ``DeviceUnavailable`` naming it;
    ``chainerx`` -> present, ``is_available()`` False, anything else it is asked raises;
    chainer.utils (and .argument, .conv, .conv_nd, .type_check) -> graphcore.utils (Chainer's
    ``type_check.InvalidType`` is the base of graphcore's ``ShapeError`` and ``DTypeError``);
    chainer.variable -> graphcore.variable; ``chainer.is_debug``, ``set_debug``,
    ``get_dtype``, ``mixed16`` -> graphcore.config's;
    chainer.types -> names for annotations; chainer.function -> the backprop modes and the
    old-style ``Function`` (forward and backward on tuples of arrays, run by a
    ``FunctionAdapter`` node; graphcore.function_node).

Not covered, and never a silent stand-in: a module graphcore has no counterpart of fails at
import with ModuleNotFoundError (``chainer.links.model.vision``, ``chainer.links.caffe``,
Theano interop);
a name graphcore lacks raises an ``AttributeError`` naming it (in the training
modules, ``chainer.iterators``, ``chainer.datasets`` and ``chainer.dataset`` also what the
module has, and why for some: ``chainer.iterators.MultiprocessIterator``,
``chainer.training.updaters.ParallelUpdater``). Chainer's dataset loaders (``get_mnist``,
``get_fashion_mnist``, ``get_kuzushiji_mnist``, ``get_cifar10``, ``get_cifar100``,
``get_ptb_words``) read Chainer's dataset cache (``$CHAINER_DATASET_ROOT``, else
``~/.chainer/dataset``) as Chainer does and download nothing: a file missing there is a
``DatasetNotCached`` naming it; ``get_svhn`` raises ``NotImplementedError``. There are no
GPUs: ``Link.to_device`` and ``Variable.to_device`` take the CPU's specifiers (``'@numpy'``,
``-1``) and raise ``DeviceUnavailable`` for any other, so a Chainer example runs with
``--device @numpy`` (or Chainer 5 and 6's ``--gpu -1``).

How much of Chainer this covers is measured on Chainer's own tests: ``pytest chainer_suite``.
"""

from __future__ import annotations

import sys
import types

import numpy as np

import graphcore
from graphcore import (
    backend,
    computational_graph,
    config,
    dataset,
    distributions,
    function_node,
    functions,
    gradient_check,
    initializers,
    links,
    optimizer_hooks,
    optimizers,
    reporter,
    serializers,
    utils,
    variable,
)
from graphcore import datasets as training_datasets
from graphcore import iterators as training_iterators
from graphcore.chainer_compat import layout as chainer_layout
from graphcore.config import (
    force_backprop_mode,
    get_dtype,
    is_debug,
    mixed16,
    no_backprop_mode,
    set_debug,
    using_config,
)
from graphcore.function_node import FunctionNode
from graphcore.links import link as link_module
from graphcore.static.compile import static_graph
from graphcore.training import extension as training_extension
from graphcore.training import extensions as training_extensions
from graphcore.training import trainer as training_trainer
from graphcore.training import triggers as training_triggers
from graphcore.training import updaters as training_updaters

__all__ = ["install", "uninstall"]

_installed: dict[str, types.ModuleType | None] = {}


def _module(name: str, doc: str, **attrs: object) -> types.ModuleType:
    module = types.ModuleType(name, doc)
    module.__dict__.update(attrs)
    return module


def _chainer_names(name: str, doc: str, names: dict[str, object],
                   missing: dict[str, str] | None = None) -> types.ModuleType:
    """A module under Chainer's ``name`` holding ``names``; any other public name fails with an
    ``AttributeError`` that says what graphcore lacks (``missing`` gives the reason for some)
    and what the module has."""
    module = _module(name, doc, **names)
    reasons = dict(missing or {})

    def __getattr__(attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        why = reasons.get(attr, "graphcore has no counterpart")
        have = ", ".join(sorted(k for k in names if not k.startswith("_")))
        raise AttributeError(f"{name}.{attr} is not covered by graphcore.chainer_compat: {why} "
                             f"({name} has: {have})")

    module.__getattr__ = __getattr__
    return module


# Chainer's dataset loaders read Chainer's dataset cache (graphcore.datasets); these others
# have no cached form graphcore reads (SVHN's cache is a .mat file, a scipy format).
CACHED = ("get_mnist", "get_fashion_mnist", "get_fashion_mnist_labels", "get_kuzushiji_mnist",
          "get_cifar10", "get_cifar100", "get_ptb_words", "get_ptb_words_vocabulary")
DOWNLOADS = ("get_kuzushiji_mnist_labels", "get_svhn")


def _download(name: str) -> object:
    def download(*_args: object, **_kwargs: object) -> None:
        raise NotImplementedError(
            f"chainer.datasets.{name} downloads its data, and graphcore downloads nothing: "
            "load the arrays yourself (numpy.load, ...) and wrap them as Chainer's loaders "
            "return them, e.g. chainer.datasets.TupleDataset(images, labels)")

    download.__name__ = download.__qualname__ = name
    return download


_GPUS = "it trains on several GPUs, and graphcore runs on the CPU"
_PROCESSES = "graphcore loads batches in the calling process; use SerialIterator"


def _training_modules() -> dict[str, types.ModuleType]:
    """``chainer.training`` and its submodules, ``chainer.iterators`` and ``chainer.datasets``
    (Chainer 7.8.1's layout) over ``graphcore.training``."""
    extensions = _chainer_names(
        "chainer.training.extensions", "Training extensions (graphcore.training.extensions).",
        {k: getattr(training_extensions, k) for k in training_extensions.__all__})
    triggers = _chainer_names(
        "chainer.training.triggers", "Triggers (graphcore.training.triggers).",
        {k: getattr(training_triggers, k) for k in (
            "IntervalTrigger", "EarlyStoppingTrigger", "ManualScheduleTrigger",
            "BestValueTrigger", "MaxValueTrigger", "MinValueTrigger")})
    standard = {"StandardUpdater": training_updaters.StandardUpdater}
    gpu_updaters = {"ParallelUpdater": _GPUS, "MultiprocessParallelUpdater": _GPUS}
    updaters = _chainer_names("chainer.training.updaters", "Updaters.", dict(standard),
                              gpu_updaters)
    get_trigger = training_triggers.get_trigger
    priorities = {k: getattr(training_extension, k)
                  for k in ("PRIORITY_WRITER", "PRIORITY_EDITOR", "PRIORITY_READER")}
    extension = _chainer_names("chainer.training.extension", "Extension and its priorities.",
                               {"Extension": training_extension.Extension,
                                "make_extension": training_extension.make_extension,
                                **priorities})
    trainer = _chainer_names("chainer.training.trainer", "The Trainer.",
                             {"Trainer": training_trainer.Trainer})
    updater = _chainer_names("chainer.training.updater", "Updaters.",
                             {"Updater": training_updaters.Updater, **standard}, gpu_updaters)
    trigger = _chainer_names("chainer.training.trigger", "Triggers by spec.",
                             {"IntervalTrigger": training_triggers.IntervalTrigger,
                              "get_trigger": get_trigger})
    util = _chainer_names("chainer.training.util", "get_trigger.", {"get_trigger": get_trigger})
    training = _chainer_names(
        "chainer.training", "Chainer's training loop (graphcore.training).",
        {"Trainer": training_trainer.Trainer, "Updater": training_updaters.Updater,
         **standard, "Extension": training_extension.Extension,
         "make_extension": training_extension.make_extension, **priorities,
         "get_trigger": get_trigger, "IntervalTrigger": training_triggers.IntervalTrigger,
         "extensions": extensions, "triggers": triggers, "updaters": updaters,
         "extension": extension, "trainer": trainer, "updater": updater, "trigger": trigger,
         "util": util, "__path__": []},
        {"ParallelUpdater": _GPUS})
    iterators = _chainer_names(
        "chainer.iterators", "Iterators (graphcore.iterators).",
        {"SerialIterator": training_iterators.SerialIterator,
         "ShuffleOrderSampler": training_iterators.ShuffleOrderSampler},
        {"MultiprocessIterator": _PROCESSES, "MultithreadIterator": _PROCESSES,
         "DaliIterator": "it reads data through NVIDIA DALI on GPUs"})
    datasets = _chainer_names(
        "chainer.datasets", "Datasets (graphcore.datasets); the loaders read Chainer's dataset "
        "cache and download nothing.",
        {k: getattr(training_datasets, k) for k in (
            "TupleDataset", "DictDataset", "SubDataset", "split_dataset",
            "split_dataset_random", *CACHED)} | {name: _download(name) for name in DOWNLOADS})
    modules = {"chainer.training": training, "chainer.iterators": iterators,
               "chainer.datasets": datasets}
    for child in ("extensions", "triggers", "updaters", "extension", "trainer", "updater",
                  "trigger", "util"):
        modules[f"chainer.training.{child}"] = getattr(training, child)
    return modules


def _array_to_cpu(array: object) -> object:
    """Chainer's ``_cpu._array_to_cpu``: ``array`` as a numpy array (``None`` stays)."""
    if array is None or isinstance(array, np.ndarray):
        return array
    if isinstance(array, graphcore.Variable):
        return array.array
    return backend.CpuDevice().send_array(array)


class _NoIdeepArray:
    """``intel64.mdarray`` without iDeep: a type nothing is an instance of."""

    def __new__(cls, *_args: object, **_kwargs: object) -> _NoIdeepArray:
        raise backend.DeviceUnavailable("iDeep (@intel64) is not available: graphcore computes "
                                        "with numpy on the CPU (use '@numpy')")


def _no_ideep(*_args: object, **_kwargs: object) -> None:
    _NoIdeepArray()


def _intel64_module() -> types.ModuleType:
    """``chainer.backends.intel64`` as Chainer has it without iDeep installed."""
    return _module("chainer.backends.intel64", "iDeep, not available (graphcore runs on numpy).",
                   ideep=None, mdarray=_NoIdeepArray, Intel64Device=backend.Intel64Device,
                   is_ideep_available=lambda: False, check_ideep_available=_no_ideep,
                   should_use_ideep=lambda level: False,
                   inputs_all_ready=lambda inputs, supported_ndim=(2, 4): False)


def _memory_layouts_module() -> types.ModuleType:
    """``chainer.memory_layouts``: the names of cuDNN's layouts (graphcore's arrays are in
    Chainer's default, channel-first, layout; asking for another fails where it is asked)."""
    return _chainer_names("chainer.memory_layouts", "cuDNN memory layouts (names only).",
                          {"CUDNN_CHANNEL_FIRST_X": None,
                           "CUDNN_CHANNEL_LAST_X": "CUDNN_CHANNEL_LAST_X",
                           "CUDNN_CHANNEL_FIRST_W": None,
                           "CUDNN_CHANNEL_LAST_W": "CUDNN_CHANNEL_LAST_W"},
                          {"get_raw_shape": "graphcore has no memory layouts",
                           "get_semantic_shape": "graphcore has no memory layouts"})


def _no_gpu(*_args: object, **_kwargs: object) -> None:
    raise backend.DeviceUnavailable("graphcore runs on the CPU with numpy; there is no GPU "
                                    "support")


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
                   check_cuda_available=_no_gpu, available=False, cupy=None,
                   ndarray=_NoCupyArray, GpuDevice=backend.GpuDevice)


class _NoCupyArray:
    """``cuda.ndarray`` without CuPy (as in Chainer): a type nothing is an instance of."""

    def __new__(cls, *_args: object, **_kwargs: object) -> _NoCupyArray:
        _no_gpu()


_CHAINERX = "graphcore computes with numpy on the CPU (use the device '@numpy')"


def _chainerx_module() -> types.ModuleType:
    """``chainerx``: present, so that code can ask; ``is_available()`` is False, and anything
    else it is asked for says that ChainerX is not available."""

    class ndarray:  # noqa: N801 - ChainerX's name; nothing is one, so isinstance is False
        def __new__(cls, *_args: object, **_kwargs: object) -> ndarray:
            raise RuntimeError(f"ChainerX is not available: {_CHAINERX}")

    module = _module("chainerx", "ChainerX, not available here (graphcore runs on numpy).",
                     is_available=lambda: False, ndarray=ndarray)

    def __getattr__(attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise RuntimeError(f"chainerx.{attr}: ChainerX is not available: {_CHAINERX}")

    module.__getattr__ = __getattr__
    return module


def _types_module() -> types.ModuleType:
    """``chainer.types``: the names Chainer's annotations use (all ``typing.Any`` here)."""
    names = ("Shape", "ShapeSpec", "DTypeSpec", "NdArray", "Xp", "InitializerSpec",
             "DeviceSpec", "CudaDeviceSpec", "ScalarValue")
    return _module("chainer.types", "Type aliases for annotations.", TYPE_CHECKING=False,
                   **dict.fromkeys(names, object))


def _chainer_module() -> types.ModuleType:
    chainer = _module("chainer", "graphcore under Chainer's name (graphcore.chainer_compat).")
    chainer.__dict__.update({k: v for k, v in vars(graphcore).items()
                             if not k.startswith("__")})
    cuda = _cuda_module("chainer.backends.cuda")
    chainer.__dict__.update(
        report=reporter.report, Reporter=reporter.Reporter, reporter=reporter,
        configuration=config_module(), cuda=cuda,
        backends=_module("chainer.backends", "numpy only: cuda and intel64 say they are not "
                         "available.", cuda=cuda, intel64=_intel64_module(),
                         _cpu=_module("chainer.backends._cpu", "The CPU device.",
                                      CpuDevice=backend.CpuDevice, _to_cpu=_array_to_cpu,
                                      _array_to_cpu=_array_to_cpu),
                         __path__=[]),
        memory_layouts=_memory_layouts_module(),
        link=link_module, function_node=function_node,
        is_debug=is_debug, set_debug=set_debug, get_dtype=get_dtype, mixed16=mixed16,
        disable_experimental_feature_warning=False,  # a flag only: graphcore warns of none
        optimizer=optimizers,
        backend=backend, get_device=backend.get_device, using_device=backend.using_device,
        get_array_types=lambda: (np.ndarray,), utils=utils, variable=variable,
        types=_types_module(),
        Function=function_node.Function, FunctionAdapter=function_node.FunctionAdapter,
        function=_chainer_names(
            "chainer.function", "Chainer's old-style Function and the backprop modes.",
            {"no_backprop_mode": no_backprop_mode, "force_backprop_mode": force_backprop_mode,
             "Function": function_node.Function,
             "FunctionAdapter": function_node.FunctionAdapter}),
        graph_optimizations=_module(
            "chainer.graph_optimizations", "static_graph only.",
            static_graph=_module("chainer.graph_optimizations.static_graph", "",
                                 static_graph=static_graph)),
        __path__=[],  # a package, so ``import chainer.x`` consults sys.modules
    )
    return chainer


def config_module() -> types.ModuleType:
    return _module("chainer.configuration", "Chainer's configuration module.", config=config,
                   using_config=using_config)


# Chainer's packages laid out as Chainer files them (``chainer.functions.math.basic_math``,
# ``chainer.links.connection.linear``, ``chainer.initializers.constant``, ...), each over the
# graphcore module of the same role.
_COUNTERPARTS: dict[str, types.ModuleType] = {
    "chainer.functions": functions, "chainer.links": links,
    "chainer.initializers": initializers, "chainer.serializers": serializers,
}
# Subtrees of Chainer graphcore has nothing of: pre-trained models that download their
# weights, Caffe model import, Theano interop. Importing them fails (ModuleNotFoundError).
_UNCOVERED = ("chainer.links.model.vision", "chainer.links.caffe", "chainer.links.theano",
              "chainer.functions.theano")


def _function_node_classes() -> dict[str, type]:
    """graphcore's FunctionNode subclasses by class name (Chainer's names for its function
    nodes: ``Add``, ``ReLU``, ``Convolution2DFunction``), the ones defined so far."""
    found: dict[str, type] = {}
    pending = [FunctionNode]
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            pending.append(sub)
            if sub.__module__.startswith("graphcore.") and not sub.__name__.startswith("_"):
                found.setdefault(sub.__name__, sub)
    return found


_NOT_FOUND = object()


def _counterpart(package: str, attr: str) -> object:
    """graphcore's object for the name ``attr`` of a module of Chainer's ``package``."""
    value = getattr(_COUNTERPARTS[package], attr, _NOT_FOUND)
    if value is _NOT_FOUND and package == "chainer.functions":
        value = _function_node_classes().get(attr, _NOT_FOUND)
    return value


def _layout_module(name: str, names: tuple[str, ...], package: str) -> types.ModuleType:
    """Chainer's module ``name``: each of its ``names`` is graphcore's object of that name,
    looked up when asked (so a function added to graphcore later is found); a name graphcore
    lacks raises an ``AttributeError`` naming it."""
    module = _module(name, f"Chainer's {name}: its names as graphcore has them.")
    chainer_names = frozenset(names)

    def __getattr__(attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = _counterpart(package, attr) if attr in chainer_names else _NOT_FOUND
        if value is _NOT_FOUND:
            why = "graphcore has no counterpart" + (
                "" if attr in chainer_names else " (a name private to Chainer's module)")
            raise AttributeError(f"{name}.{attr} is not covered by graphcore.chainer_compat: "
                                 f"{why}")
        return value

    module.__getattr__ = __getattr__
    module.__dir__ = lambda: sorted(set(module.__dict__) | chainer_names)
    return module


def _package_module(name: str) -> types.ModuleType:
    """Chainer's package ``name`` (``chainer.functions``): the graphcore module of its role
    (every name it has, looked up when asked), plus Chainer's subpackages and modules."""
    counterpart = _COUNTERPARTS[name]
    module = _module(name, f"{counterpart.__name__} under Chainer's name, with Chainer's "
                           "submodules (graphcore.chainer_compat).", __path__=[])

    def __getattr__(attr: str) -> object:
        value = getattr(counterpart, attr, _NOT_FOUND)
        if value is _NOT_FOUND:
            raise AttributeError(f"module {counterpart.__name__!r} has no attribute {attr!r} "
                                 f"({name}.{attr} is not covered by graphcore.chainer_compat)")
        return value

    module.__getattr__ = __getattr__
    module.__dir__ = lambda: sorted(set(module.__dict__) | set(dir(counterpart)))
    return module


def _layout_modules() -> dict[str, types.ModuleType]:
    """Every module of Chainer's ``chainer.functions``, ``.links``, ``.initializers`` and
    ``.serializers``, each an attribute of its parent, as Chainer's packages are."""
    modules = {name: _package_module(name) for name in _COUNTERPARTS}
    for name, names in chainer_layout.MODULES.items():
        if name.startswith(_UNCOVERED):
            continue
        package = next(p for p in _COUNTERPARTS if name.startswith(p + "."))
        modules[name] = _layout_module(name, names, package)
        if not names:  # a package: ``import chainer.functions.math.nonexistent`` fails
            modules[name].__path__ = []
    for name, module in modules.items():
        parent, _, child = name.rpartition(".")
        if parent in modules:
            setattr(modules[parent], child, module)
    return modules


def _modules() -> dict[str, types.ModuleType]:
    chainer = _chainer_module()
    layout_modules = _layout_modules()
    for package in _COUNTERPARTS:
        setattr(chainer, package.rpartition(".")[2], layout_modules[package])
    chainer.basic_math = layout_modules["chainer.functions.math.basic_math"]
    chainer.array = layout_modules["chainer.functions.array"]
    gops = chainer.graph_optimizations
    data = _chainer_names("chainer.dataset", "Batch assembly.",
                          {"convert": dataset, "concat_examples": dataset.concat_examples,
                           "to_device": _to_cpu_device, "DatasetMixin": dataset.DatasetMixin,
                           "Iterator": dataset.Iterator, "download": dataset.download,
                           "Converter": dataset.Converter, "converter": dataset.converter,
                           "get_dataset_root": dataset.download.get_dataset_root,
                           "set_dataset_root": dataset.download.set_dataset_root,
                           "get_dataset_directory": dataset.download.get_dataset_directory,
                           "cached_download": dataset.download.cached_download,
                           "cache_or_load_file": dataset.download.cache_or_load_file})
    chainer.dataset = data
    chainer.distributions = _chainer_names(
        "chainer.distributions", "Probability distributions (graphcore.distributions).",
        {name: getattr(distributions, name) for name in distributions.__all__})
    for name in ("Distribution", "kl_divergence", "cross_entropy", "register_kl"):
        setattr(chainer, name, getattr(distributions, name))
    training = _training_modules()
    chainer.training = training["chainer.training"]
    chainer.iterators = training["chainer.iterators"]
    chainer.datasets = training["chainer.datasets"]
    return {
        **training,
        "chainer": chainer,
        **layout_modules,
        "chainer.optimizers": optimizers, "chainer.optimizer": optimizers,
        "chainer.optimizer_hooks": optimizer_hooks, "chainer.reporter": reporter,
        "chainer.dataset": data, "chainer.dataset.convert": dataset,
        "chainer.dataset.download": dataset.download,
        "chainer.distributions": chainer.distributions,
        "chainer.configuration": chainer.configuration,
        "chainer.computational_graph": computational_graph,
        "chainer.gradient_check": gradient_check,
        "chainer.graph_optimizations": gops,
        "chainer.graph_optimizations.static_graph": gops.static_graph,
        "chainer.backends": chainer.backends, "chainer.backends.cuda": chainer.cuda,
        "chainer.backends.intel64": chainer.backends.intel64,
        "chainer.backends._cpu": chainer.backends._cpu,
        "chainer.memory_layouts": chainer.memory_layouts, "chainer.link": link_module,
        "chainer.function_node": function_node,
        "chainer.utils.type_check": utils.type_check,
        "chainer.cuda": chainer.cuda,
        "chainer.backend": backend, "chainer.utils": utils,
        "chainer.utils.argument": utils.argument, "chainer.utils.conv": utils.conv,
        "chainer.utils.conv_nd": utils.conv_nd, "chainer.variable": variable,
        "chainer.function": chainer.function, "chainer.types": chainer.types,
        "chainerx": _chainerx_module(),
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
