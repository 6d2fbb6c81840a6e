"""ARCHITECTURE.md stays true: one page, naming every top-level module and package of
graphcore and every layer of the import contract that enforces the order it describes."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "ARCHITECTURE.md").read_text()


def test_it_is_one_page():
    assert len(PAGE.splitlines()) <= 110


def test_every_top_level_module_and_package_is_named():
    named = set(re.findall(r"`([a-z_]+)(?:/|\.py)?`", PAGE)) | set(
        re.findall(r"\b([a-z_]+)(?:/|\.py)?\b", PAGE.split("## The packages", 1)[1]))
    modules = {p.stem for p in (ROOT / "graphcore").glob("*.py") if p.stem != "__init__"}
    packages = {p.parent.name for p in (ROOT / "graphcore").glob("*/__init__.py")}
    assert sorted((modules | packages) - named) == []


def test_the_layers_are_the_contracts():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["id"] == "layers")["layers"]
    block = PAGE.split("## Layers", 1)[1].split("## ", 1)[0]
    names = {name.strip() for layer in layers for name in re.split(r"[|:]", layer)}
    assert sorted(name for name in names if not re.search(rf"\b{name}\b", block)) == []
