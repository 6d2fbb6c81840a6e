"""The import rules (ARCHITECTURE.md): the contracts in pyproject.toml hold (so plain ``pytest``
fails on a broken rule, as ``lint-imports`` in CI does); no import circle at all but the
engine's, a package's ``__init__`` and its own modules included (import-linter's
acyclic_siblings cannot see those); no private name crosses a module.

The import graph is read in a process of its own, from the files only: inside the test
process, after other test files (a pytest-xdist worker's share of the suite), import-linter
was seen to report ``ignore_imports`` lines as matching nothing while the same check passed
alone."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Chainer's own circle: a Variable's backward() and unchain_backward() reach the engine.
ENGINE_CIRCLE = {"graphcore.variable", "graphcore.function_node", "graphcore.backprop"}


GRAPH = """
import json, grimp
graph = grimp.build_graph("graphcore", "cli", exclude_type_checking_imports=True, cache_dir=None)
print(json.dumps({m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}))
"""


def test_the_import_contracts_hold():
    done = subprocess.run([str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def circles(graph: dict[str, list[str]]) -> list[set[str]]:
    """Every set of two or more modules that import each other round (Tarjan's strongly
    connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = set()
            while True:
                other = stack.pop()
                on_stack.discard(other)
                group.add(other)
                if other == module:
                    break
            if len(group) > 1:
                found.append(group)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for module in sorted(graph):
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_no_import_circle_but_the_engines():
    done = subprocess.run([sys.executable, "-c", GRAPH], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=True)
    graph = json.loads(done.stdout)
    assert "graphcore.commands.train.session" in graph  # the whole library was read
    assert [sorted(c) for c in circles(graph) if c != ENGINE_CIRCLE] == []


def test_the_circle_finder_finds_a_package_and_its_module():
    graph = {"pkg": ["pkg.family"], "pkg.family": ["pkg"], "pkg.other": ["pkg"]}
    assert circles(graph) == [{"pkg", "pkg.family"}]


def _modules() -> dict[str, Path]:
    found = {}
    for top in ("graphcore", "cli"):
        for path in sorted((ROOT / top).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_crossings(modules: dict[str, Path]) -> list[str]:
    """``from graphcore.x import _y`` and ``x._y`` read through a module alias, anywhere in
    graphcore/ and cli/ outside the module that defines the name."""
    crossings = []
    for path in modules.values():
        tree = ast.parse(path.read_text())
        aliases = {}  # local name -> the graphcore/cli module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in modules:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    if sub in modules:
                        aliases[alias.asname or alias.name] = sub
                    elif _private(alias.name):
                        crossings.append(f"{path}:{node.lineno}: {node.module}.{alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules and alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr) \
                    and isinstance(node.value, ast.Name) and node.value.id in aliases:
                crossings.append(f"{path}:{node.lineno}: {aliases[node.value.id]}.{node.attr}")
    return crossings


def test_no_private_name_crosses_a_module():
    assert private_crossings(_modules()) == []


def test_the_private_name_walk_sees_both_spellings(tmp_path):
    (tmp_path / "a.py").write_text("_hidden = 1\n")
    (tmp_path / "b.py").write_text("from graphcore.a import _hidden\n"
                                   "from graphcore import a as mod\nprint(mod._hidden)\n")
    modules = {"graphcore": tmp_path / "none.py", "graphcore.a": tmp_path / "a.py",
               "graphcore.b": tmp_path / "b.py"}
    (tmp_path / "none.py").write_text("")
    assert len(private_crossings(modules)) == 2
