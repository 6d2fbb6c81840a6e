"""The code of Chainer's guides runs on graphcore: every block of the pages on variables,
functions, links, models, optimizers, serializers and type checks
(``chainer_suite/chainer_docs/``, Chainer 7.8.1's ``docs/source``, MIT), as Sphinx's doctest
builder runs them, after ``chainer_compat.install()``.

Sphinx's rules, followed here: a page is one namespace, blocks run in order; ``doctest``
blocks are ``>>>`` examples; a ``testcode`` block runs and, with a ``testoutput`` block after
it, what it prints (or the exception it raises, as a traceback) must match; ``:hide:`` only
hides a block from the rendered page; the flags are Sphinx's defaults (ELLIPSIS,
IGNORE_EXCEPTION_DETAIL, DONT_ACCEPT_TRUE_FOR_1) changed by a block's ``:options:``. The
namespace starts from Chainer's ``doctest_global_setup`` (docs/source/conf.py) less
``onnx_chainer`` and ``cupy``, which are not graphcore's. An exception is named by the module
path the page imported it under (``chainer.utils.type_check.InvalidType``): with
``install()``, that module is graphcore's. The serializers page shows its code as
``code-block`` ``>>>`` examples that Sphinx does not run, "assuming we have defined a model"
(an optimizer, a trainer): they run here too, with the objects it assumes defined first
(``ASSUMED``). Blocks run in a temporary directory (they write files).
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from graphcore import chainer_compat

DOCS = Path(__file__).resolve().parents[2] / "chainer_suite" / "chainer_docs"
PAGES = ["variables", "functions", "links", "models", "optimizers", "serializers",
         "type_checks"]
GLOBAL_SETUP = """
import os
import numpy as np
import chainer
from chainer.backends import cuda
from chainer import Function, gradient_check, training, utils, Variable
from chainer import datasets, iterators, optimizers, serializers
from chainer import Link, Chain, ChainList
import chainer.functions as F
import chainer.links as L
from chainer.training import extensions
import chainerx
np.random.seed(0)
"""
ASSUMED = {"serializers": """
model = L.Classifier(L.Linear(3, 2))
optimizer = optimizers.MomentumSGD()
optimizer.setup(model)
_data = datasets.TupleDataset(np.ones((4, 3), np.float32), np.zeros(4, np.int32))
trainer = training.Trainer(training.updaters.StandardUpdater(
    iterators.SerialIterator(_data, 2), optimizer), (1, "epoch"))
"""}
SPHINX_FLAGS = doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL | doctest.DONT_ACCEPT_TRUE_FOR_1


@dataclass
class Block:
    kind: str  # doctest, testcode, testoutput
    line: int
    code: str
    options: dict[str, str] = field(default_factory=dict)


def _blocks(path: Path) -> list[Block]:
    """The doctest directives of an rst page, ``.. include::`` followed, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        directive = re.match(
            r"\.\. (doctest|testcode|testoutput|testsetup|include|code-block)::\s*(.*)", lines[i])
        i += 1
        if not directive:
            continue
        kind, argument = directive.groups()
        if kind == "include":
            blocks += _blocks((path.parent / argument).resolve())
            continue
        start, options = i, {}
        while i < len(lines) and re.match(r"\s+:(\w+):(.*)", lines[i]):
            name, value = re.match(r"\s+:(\w+):(.*)", lines[i]).groups()
            options[name] = value.strip()
            i += 1
        body = []
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
            body.append(lines[i])
            i += 1
        indent = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=0)
        code = "\n".join(b[indent:] for b in body).strip("\n") + "\n"
        if kind == "code-block":
            if argument != "python" or not code.lstrip().startswith(">>>"):
                continue
            kind = "doctest"  # shown as a session: run as one
        blocks.append(Block("testcode" if kind == "testsetup" else kind, start, code, options))
    return blocks


def _flags(options: dict[str, str]) -> int:
    flags = SPHINX_FLAGS
    for option in options.get("options", "").split():
        flag = doctest.OPTIONFLAGS_BY_NAME[option[1:]]
        flags = flags | flag if option[0] == "+" else flags & ~flag
    return flags


def _exception_line(error: BaseException) -> str:
    """``module.Name: message`` with the module named as the page imported it."""
    cls = type(error)
    module = cls.__module__
    for name, loaded in list(sys.modules.items()):
        if name.startswith("chainer.") and vars(loaded).get(cls.__name__) is cls:
            module = name
            break
    name = cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"
    return f"{name}: {error}\n" if str(error) else f"{name}\n"


def _run_testcode(block: Block, namespace: dict, page: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(block.code, f"{page}.rst:{block.line}", "exec"), namespace)
        except Exception as error:  # a testoutput of a traceback expects it
            return out.getvalue() + "Traceback (most recent call last):\n" + \
                "".join(traceback.format_tb(error.__traceback__)[-1:]) + _exception_line(error)
    return out.getvalue()


def _check_output(expected: str, got: str, flags: int) -> bool:
    checker = doctest.OutputChecker()
    if expected.startswith("Traceback (most recent call last):"):
        if not got.startswith("Traceback (most recent call last):"):
            return False
        want_exc = expected.split("\n...\n", 1)[-1] if "\n...\n" in expected else expected
        got_exc = got.rsplit("\n", 2)[-2] + "\n" if got.count("\n") >= 2 else got
        want_exc = want_exc.strip() + "\n"
        if flags & doctest.IGNORE_EXCEPTION_DETAIL:
            return want_exc.split(":", 1)[0].rsplit(".", 1)[-1] == \
                got_exc.split(":", 1)[0].rsplit(".", 1)[-1]
        example = doctest.Example("raise", "", exc_msg=want_exc)
        return checker.check_output(example.exc_msg, _last_exception(got), flags)
    return checker.check_output(expected, got, flags)


def _last_exception(got: str) -> str:
    lines = got.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if not line.startswith((" ", "Traceback")):
            return "".join(lines[i:])
    return got


def _vendored_chainer_testing() -> None:
    """``chainer.testing``: the helpers vendored with Chainer's tests (the functions guide
    writes a test with them), as ``chainer_suite/conftest.py`` installs them."""
    import importlib.util

    location = DOCS.parent / "chainer_testing"
    spec = importlib.util.spec_from_file_location(
        "chainer.testing", location / "__init__.py", submodule_search_locations=[str(location)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["chainer.testing"] = module
    spec.loader.exec_module(module)
    sys.modules["chainer"].testing = module


@pytest.fixture
def chainer_namespace():
    chainer_compat.install()
    _vendored_chainer_testing()
    namespace: dict = {"__name__": "__main__"}
    exec(GLOBAL_SETUP, namespace)
    yield namespace
    for name in [n for n in sys.modules if n == "chainer.testing" or
                 n.startswith("chainer.testing.")]:
        del sys.modules[name]
    chainer_compat.uninstall()


# chainer.testing.attr's marks (gpu, slow, ...) are declared by chainer_suite's configuration only
@pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")
@pytest.mark.parametrize("page", PAGES)
def test_every_block_of_the_guide_runs(page, chainer_namespace, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(ASSUMED.get(page, ""), chainer_namespace)
    blocks = _blocks(DOCS / "guides" / f"{page}.rst")
    assert blocks, page
    failures = []
    runner = doctest.DocTestRunner(optionflags=SPHINX_FLAGS)
    parser = doctest.DocTestParser()
    for i, block in enumerate(blocks):
        if block.kind == "doctest":
            test = parser.get_doctest(block.code, chainer_namespace, f"{page}.rst:{block.line}",
                                      str(DOCS / f"{page}.rst"), block.line)
            for example in test.examples:
                example.options = {flag: True for flag in doctest.OPTIONFLAGS_BY_NAME.values()
                                   if _flags(block.options) & flag}
                example.options.update({flag: False for flag in
                                        doctest.OPTIONFLAGS_BY_NAME.values()
                                        if not _flags(block.options) & flag})
            report = io.StringIO()
            result = runner.run(test, out=report.write, clear_globs=False)
            chainer_namespace.update(test.globs)
            if result.failed:
                failures.append(report.getvalue())
        elif block.kind == "testcode":
            got = _run_testcode(block, chainer_namespace, page)
            following = blocks[i + 1] if i + 1 < len(blocks) else None
            if following is not None and following.kind == "testoutput":
                if not _check_output(following.code, got, _flags(following.options)):
                    failures.append(f"{page}.rst:{following.line}: expected\n{following.code}"
                                    f"got\n{got}")
            elif got.startswith("Traceback"):
                failures.append(f"{page}.rst:{block.line}: raised\n{got}")
    assert not failures, "\n".join(failures)
