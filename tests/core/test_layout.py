"""The import rules (ARCHITECTURE.md): the contracts in pyproject.toml hold, so plain
``pytest`` fails on a broken rule as ``lint-imports`` in CI does.

``lint-imports`` runs as its own process, which reads only the files: called inside the test
process after other test files (a pytest-xdist worker's share of the suite), it was seen to
report ``ignore_imports`` lines as matching nothing while the same check passed alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contracts_hold():
    done = subprocess.run([str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
                          cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
