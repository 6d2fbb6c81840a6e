"""The matrix test's state: one ``Matrix`` (``matrix_helpers``) for every cell of the module.

Module-scoped, not session-scoped: the local Dask cluster the sweep cells start runs its
scheduler in threads of this process, and must be closed before other modules run (their
tracemalloc measurements of a replay count every thread's allocations)."""

import pytest
from matrix_helpers import Matrix


@pytest.fixture(scope="module")
def matrix(tmp_path_factory, shipped):
    session = Matrix(tmp_path_factory.mktemp("matrix"))
    session.shipped = shipped  # check and run: the session's, shared with tests/cli
    yield session
    session.close()
