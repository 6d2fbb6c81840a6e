"""Chainer 7.8.1's own unit tests, run against graphcore through Chainer's module names.

``chainer_tests/`` is Chainer's ``tests/chainer_tests`` at v7.8.1 (functions, links,
optimizers, serializers, variable, function_node, gradient_check, link), unchanged;
``chainer_testing/`` is Chainer's ``chainer.testing`` (the test helpers), unchanged; both under
Chainer's MIT licence (``LICENSE``). ``graphcore.chainer_compat.install()`` makes
``import chainer`` import graphcore, and ``chainer.testing`` is the vendored helpers.

What counts: the tests Chainer 7.8.1 itself passes on the CPU (``reference_passes.txt``:
numpy 1.26.4, Python 3.11, no GPU, cuDNN, iDeep or ChainerX; Chainer's ``slow`` tests and tests
whose names hold a memory address left out). Every other test is deselected. Of those,
``known_failures.txt`` lists the ones graphcore fails today (a file, a class, a case or a test
a line). The run fails (exit 1) when a test fails that the manifest does not list, and when a
test the manifest lists passes (so the manifest only shrinks: regenerate it with
``python scripts/chainer_suite_lists.py manifest`` after a run). It ends with the pass figure,
overall and for functions, links and the rest.

A test that cannot even be collected (its file fails to import under graphcore) counts as
failed; a run of part of the suite (a folder or a file of it) counts that part. Each test
starts from the global random generators seeded by its name and from the configuration the
run started with (graphcore's is process-wide), so that it sees the same in every run.
Chainer's tests print thousands of failures: tracebacks are off (``--tb=no``) unless asked
for, and the figure says what matters.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from suite_keys import entries_for, group, key, read_list

from graphcore import chainer_compat
from graphcore.config import config

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference_passes.txt"
MANIFEST = HERE / "known_failures.txt"
OUTCOMES = HERE / "outcomes.json"  # the last run's passes, for the manifest script
ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
collect_ignore = ["suite_keys.py", "chainer_examples", "chainer_docs"]  # the examples and guides: tests/chainer/

# Chainer 7.8.1's tests were written for numpy 1.x (the reference ran on numpy 1.26): the
# names of it they call that numpy 2 removed, under numpy 2's names for the same functions.
for _old, _new in (("product", "prod"),):
    if not hasattr(np, _old):
        setattr(np, _old, getattr(np, _new))


def _install_chainer() -> str | None:
    """``import chainer`` -> graphcore, ``chainer.testing`` -> the vendored helpers; the
    error that stopped the helpers from importing, if one did."""
    chainer_compat.install()
    location = HERE / "chainer_testing"
    spec = importlib.util.spec_from_file_location(
        "chainer.testing", location / "__init__.py", submodule_search_locations=[str(location)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["chainer.testing"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # every test then fails at import, and the summary says why
        del sys.modules["chainer.testing"]
        return f"{type(e).__name__}: {e}"
    sys.modules["chainer"].testing = module
    return None


def _config_state() -> tuple[dict[str, object], dict[str, object]]:
    slots = [n for n in type(config).__slots__ if n != "__dict__" and hasattr(config, n)]
    return {n: getattr(config, n) for n in slots}, dict(config.__dict__)


def _asked_for(test_key: str, args: list[str]) -> bool:
    """Whether the run's paths (``pytest chainer_suite/chainer_tests/links_tests``) hold the
    test: a run of part of the suite counts and checks that part."""
    for arg in args:
        path = Path(arg.split("::", 1)[0]).resolve()
        if path == HERE or HERE not in path.parents:
            return True
        part = str(path.relative_to(HERE / "chainer_tests")) if (HERE / "chainer_tests") in \
            path.parents else ""
        if not part or test_key == part or test_key.startswith((part + "/", part + "::")):
            return True
    return False


class ChainerSuite:
    """The counts and the manifest check (in the controller when pytest-xdist runs)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.reference = {k for k in read_list(REFERENCE) if _asked_for(k, config.args)}
        self.manifest = set(read_list(MANIFEST))
        self.passed: set[str] = set()
        self.failed: set[str] = set()
        self.helpers_error = _install_chainer()

    def expected_to_fail(self, test_key: str) -> bool:
        return any(entry in self.manifest for entry in entries_for(test_key))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        kept, dropped = [], []
        for item in items:
            counted = (not ADDRESS.search(item.nodeid) and key(item.nodeid) in self.reference
                       and not any(item.get_closest_marker(m) for m in LEFT_OUT))
            (kept if counted else dropped).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        # Many of Chainer's tests draw their inputs from the global generators unseeded: seeded
        # by the test's key, a test sees the same inputs whatever ran before it, on any worker.
        seed = zlib.crc32(key(item.nodeid).encode())
        np.random.seed(seed)
        random.seed(seed)
        self.config_before = _config_state()

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item):
        # graphcore's config is process-wide (Chainer's is per thread): a test that sets a key
        # and does not put it back must not change the tests after it.
        before = getattr(self, "config_before", None)
        if before is not None:
            slots, extra = before
            for name, value in slots.items():
                setattr(config, name, value)
            config.__dict__.clear()
            config.__dict__.update(extra)

    def pytest_runtest_logreport(self, report):
        test_key = key(report.nodeid)
        if report.passed and report.when == "call":
            self.passed.add(test_key)
        elif report.failed or report.skipped:
            self.failed.add(test_key)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        if hasattr(self.config, "workerinput"):
            return
        self.passes = self.passed - self.failed
        self.new_failures = sorted(k for k in self.reference - self.passes
                                   if not self.expected_to_fail(k))
        self.unexpected_passes = sorted(k for k in self.passes if self.expected_to_fail(k))
        if self.config.option.collectonly:
            return  # nothing ran: the last run's outcomes stay what the manifest script reads
        # "counted": the tests this run covered, so that the manifest script rewrites only
        # their entries after a run of part of the suite
        OUTCOMES.write_text(json.dumps({"passed": sorted(self.passes),
                                        "counted": sorted(self.reference)}, indent=0) + "\n")
        session.exitstatus = 1 if self.new_failures or self.unexpected_passes else 0

    def pytest_terminal_summary(self, terminalreporter):
        if hasattr(self.config, "workerinput") or not hasattr(self, "passes"):
            return
        write = terminalreporter.write_line
        terminalreporter.section("Chainer 7.8.1's tests on graphcore")
        if self.helpers_error:
            write(f"chainer.testing (the vendored helpers) does not import: "
                  f"{self.helpers_error}")
        for part in ("functions", "links", "the rest"):
            total = [k for k in self.reference if group(k) == part]
            done = [k for k in total if k in self.passes]
            write(f"{part:>9}: {len(done):6,} of {len(total):6,} pass "
                  f"({100 * len(done) / max(len(total), 1):.1f}%)")
        write(f"      all: {len(self.passes):6,} of {len(self.reference):6,} pass "
              f"({100 * len(self.passes) / max(len(self.reference), 1):.1f}%) "
              "of the tests Chainer 7.8.1 passes on the CPU")
        for title, keys in (("fail, and are not in known_failures.txt", self.new_failures),
                            ("pass, and are in known_failures.txt (regenerate it: python "
                             "scripts/chainer_suite_lists.py manifest)",
                             self.unexpected_passes)):
            if keys:
                write(f"{len(keys):,} tests {title}:")
                for test_key in keys[:20]:
                    write(f"  {test_key}")
                if len(keys) > 20:
                    write(f"  ... and {len(keys) - 20:,} more")


# Chainer's markers (its setup.cfg). A test marked with one of LEFT_OUT needs hardware or a
# library graphcore does not use, or is slow: left out, as in the reference run (a case of
# another backend has the same key as its CPU case).
MARKERS = {
    "chainerx": "Tests to use ChainerX", "cudnn": "Tests to use cuDNN",
    "gpu": "Tests to run on GPU", "ideep": "Tests to use IDeep",
    "theano": "Tests to use Theano", "multi_gpu": "Tests to uses multi GPUs",
    "slow": "Tests thats takes time", "parametrize_device": "Parametrize ChainerX devices",
    "parametrize_device_name": "Parametrize ChainerX device names",
}


LEFT_OUT = ("chainerx", "cudnn", "gpu", "ideep", "theano", "multi_gpu", "slow")


def pytest_configure(config):
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    # The project turns every warning into an error; the reference run did not. Chainer's
    # optimizer tests return SkipTest instead of raising it, which Python 3.11 warns about.
    config.addinivalue_line("filterwarnings", "ignore:It is deprecated to return a value that "
                            "is not None from a test case:DeprecationWarning")
    config.option.continue_on_collection_errors = True  # a file that fails to import: counted
    if config.option.tbstyle == "auto":
        config.option.tbstyle = "no"
    config.option.reportchars = ""
    config.pluginmanager.register(ChainerSuite(config), "chainer_suite")


def pytest_collectstart(collector):
    # Some of Chainer's test files draw parameter values (arrays shown in the test ids) from the
    # global generators at import: seeded by the file's name, every pytest-xdist worker
    # collects the same ids (it refuses to run when two workers' collections differ).
    if isinstance(collector, pytest.Module):
        seed = zlib.crc32(str(Path(str(collector.path)).relative_to(HERE)).encode())
        np.random.seed(seed)
        random.seed(seed)
