"""Names of Chainer's tests that are the same in every run, on Chainer and on graphcore.

A pytest node id of Chainer's suite holds each parameterized case's values
(``TestLinear_use_chainerx_false__..._param_3_{W_dtype=float16, x_shape=...}::test_backward``),
some of them object reprs with memory addresses. A key keeps the file, the class with its
parameter index and the method (``functions_tests/connection_tests/test_linear.py::
TestLinear_param_3::test_backward``): stable, and short enough for the lists beside this file.

A manifest entry names a file, a test class (all its parameterized cases), one case or one test;
``entries_for`` gives the entries that would hold a key.
"""

from __future__ import annotations

import re

_BACKEND = re.compile(r"_use_chainerx_(?:true|false)__.*?__use_ideep_(?:never|always|auto)")
_PARAM = re.compile(r"_param_(\d+)_\{")
_ROOT = "chainer_tests/"


def _without_values(segment: str) -> str:
    """``segment`` with each ``_param_N_{...}`` cut to ``_param_N`` (braces nest in values)."""
    out, i = [], 0
    while (match := _PARAM.search(segment, i)) is not None:
        out.append(segment[i:match.start()] + f"_param_{match.group(1)}")
        depth, j = 1, match.end()
        while j < len(segment) and depth:
            depth += {"{": 1, "}": -1}.get(segment[j], 0)
            j += 1
        i = j
    out.append(segment[i:])
    return "".join(out)


def key(nodeid: str) -> str:
    """The key of a node id of Chainer's suite (in Chainer's tree or in this one)."""
    path, *names = nodeid.split("::")
    path = path[path.index(_ROOT) + len(_ROOT):] if _ROOT in path else path
    return "::".join([path, *(_without_values(_BACKEND.sub("", n)) for n in names)])


def group(test_key: str) -> str:
    """The part of the suite a key is counted in: functions, links or the rest."""
    top = test_key.split("/", 1)[0]
    return {"functions_tests": "functions", "links_tests": "links"}.get(top, "the rest")


def entries_for(test_key: str) -> list[str]:
    """Every manifest entry that would hold ``test_key``: its file, its class (all cases),
    its parameterized case, and itself."""
    path, *names = test_key.split("::")
    found = [path]
    if len(names) > 1:
        case = names[0]
        base = case.split("_param_", 1)[0]
        found += [f"{path}::{base}"] if base != case else []
        found.append(f"{path}::{case}")
    found.append(test_key)
    return list(dict.fromkeys(found))


def read_list(path) -> list[str]:
    """The entries of a list file: one a line; blank lines and ``#`` comments skipped."""
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]
