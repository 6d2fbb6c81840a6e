"""The import rules (ARCHITECTURE.md): the contracts in pyproject.toml hold, so plain
``pytest`` fails on a broken rule as ``lint-imports`` in CI does."""

from __future__ import annotations

from pathlib import Path

from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contracts_hold(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0
