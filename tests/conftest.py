"""Shared test set-up.

- The shared test helpers in this folder (``continuous_inputs``) are importable from every test
  folder: pytest puts the folder of a rootdir-less conftest.py on ``sys.path``.
- Every test leaves the op registry as it found it: a plugin a test loads in-process (``--plugin``
  through ``CliRunner``, an example's ``register_op``) must not leak into later tests.
"""

import pytest

from graphcore import registry


@pytest.fixture(autouse=True)
def _restore_the_op_registry():
    before = dict(registry._ops)
    yield
    if registry._ops != before:
        registry._ops.clear()
        registry._ops.update(before)
