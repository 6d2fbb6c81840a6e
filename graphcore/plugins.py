"""Loading user op modules named explicitly (``graphtool run spec.yaml --plugin my_ops.py``).

A plugin is an ordinary Python file that defines ``FunctionNode`` subclasses and registers
them with ``graphcore.register_op``; afterwards specs can use those ops by name. Nothing is
ever imported because a spec mentions it: only the files the user names are run.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from graphcore import errors


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
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise PluginError(f"{path}: the plugin failed while loading: {type(e).__name__}: "
                          f"{e}") from e
    return module
