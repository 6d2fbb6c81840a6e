"""Loading user op modules named explicitly (``graphtool run spec.yaml --plugin my_ops.py``).

A plugin is an ordinary Python file that defines ``FunctionNode`` subclasses and registers
them with ``graphcore.register_op``; afterwards specs can use those ops by name. Nothing is
ever imported because a spec mentions it: only the files the user names are run.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

from graphcore import errors, registry
from graphcore.function_node import FunctionNode


class PluginError(errors.GraphcoreError, RuntimeError):
    """A plugin file could not be loaded (its own exception is the cause)."""


def load_plugin(path: str | os.PathLike[str]) -> ModuleType:
    """Run the Python file at ``path`` as a module (once per resolved path) and return it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(2, "plugin not found", str(path))
    resolved = path.resolve()
    name = "graphtool_plugin_" + hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise PluginError(f"{path}: not a Python file that can be loaded")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    before = registry.all_ops()
    try:
        spec.loader.exec_module(module)
    except SystemExit as e:  # sys.exit() in a plugin ends the plugin, not the program
        del sys.modules[name]
        raise PluginError(f"{path}: the plugin called exit ({e.code!r}) while loading") from None
    except Exception as e:
        del sys.modules[name]
        raise PluginError(f"{path}: the plugin failed while loading: {type(e).__name__}: "
                          f"{e}") from e
    for op, cls in registry.all_ops().items():
        if before.get(op) is not cls:
            _check_results(cls, op, path)
    return module


def _check_results(cls: type[FunctionNode], op: str, path: Path) -> None:
    """Make a plugin op's mistakes errors that name it: ``forward`` must return a tuple (or
    list) of arrays (a bare array would be taken for its rows: a silently wrong result), and
    ``exit()`` inside ``forward`` or ``backward`` fails the op instead of ending the program."""
    forward, backward = cls.forward, cls.backward
    where = f"plugin {path}"

    @functools.wraps(forward)
    def checked_forward(self, inputs):
        try:
            ys = forward(self, inputs)
        except SystemExit as e:
            raise PluginError(f"{where}: forward called exit ({e.code!r})") from None
        if not isinstance(ys, tuple | list) or not all(
                isinstance(y, np.ndarray | np.generic) for y in ys):
            raise PluginError(f"{where}: forward must return a tuple of numpy arrays, got "
                              f"{_describe(ys)}")
        return tuple(np.asarray(y) if isinstance(y, np.generic) else y for y in ys)

    @functools.wraps(backward)
    def checked_backward(self, indexes, grad_outputs):
        try:
            return backward(self, indexes, grad_outputs)
        except SystemExit as e:
            raise PluginError(f"{where}: backward called exit ({e.code!r})") from None

    cls.forward = checked_forward
    cls.backward = checked_backward


def _describe(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"one array of shape {value.shape} (return it as a 1-tuple: `return y,`)"
    if isinstance(value, tuple | list):
        kinds = sorted({type(v).__name__ for v in value})
        return f"a {type(value).__name__} of {', '.join(kinds) or 'nothing'}"
    return f"a {type(value).__name__}"
