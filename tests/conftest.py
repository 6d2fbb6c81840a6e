"""Shared test set-up.

- The shared test helpers in this folder (``continuous_inputs``, ``cli_helpers``,
  ``shipped_specs``) are importable from every test folder: pytest puts the folder of a
  rootdir-less conftest.py on ``sys.path``.
- Every test leaves the op registry as it found it: a plugin a test loads in-process (``--plugin``
  through ``CliRunner``, an example's ``register_op``) must not leak into later tests. The
  plugin's module goes too (``load_plugin`` runs a file once per process), so a later test
  naming the same file loads and registers it again, as a new process would.
- Where the environment sets ``PYTHONDONTWRITEBYTECODE``, every process a test starts
  (``graphtool``, ``python -m cli``; a few hundred in a full run) would compile graphcore and
  cli from source, a third of its start-up, and each pytest worker would rewrite the asserts
  of every test module again (5 s a run): the session compiles graphcore and cli once and
  keeps pytest's cache of rewritten test modules (``__pycache__``, ignored by git).
"""

import compileall
import os
import re
import sys
from pathlib import Path

import pytest

from graphcore import registry

ROOT = Path(__file__).resolve().parents[1]
sys.dont_write_bytecode = False  # before pytest imports the test modules


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # once, not per worker
        for package in ("graphcore", "cli"):
            compileall.compile_dir(ROOT / package, quiet=1)


@pytest.fixture(autouse=True)
def _restore_the_op_registry():
    before = dict(registry._ops)
    modules = set(sys.modules)
    yield
    if registry._ops != before:
        registry._ops.clear()
        registry._ops.update(before)
    for name in set(sys.modules) - modules:
        if name.startswith("graphtool_plugin_"):
            del sys.modules[name]


@pytest.fixture(scope="session")
def shipped(tmp_path_factory):
    """One ``graphtool check`` and ``run`` per shipped spec and mode (``shipped_specs``),
    shared and read-only."""
    from shipped_specs import Shipped

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # each worker's basetemp is in the session's
        base = base.parent
    return Shipped(base / "shipped")


WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if WORKER:
    @pytest.fixture
    def tmp_path(request, tmp_path_factory):
        """pytest's ``tmp_path`` with a name shorter by what pytest-xdist adds above it
        (``popen-gwN/``), so a test's folder is as long in a worker as in a plain run: the
        located error lines clip a file name past 80 characters (``graphcore.errors.clip``),
        and many tests compare the whole path of their spec in such a line."""
        name = re.sub(r"[\W]", "_", request.node.name)[:30 - len(f"popen-{WORKER}/")]
        return tmp_path_factory.mktemp(name, numbered=True)
