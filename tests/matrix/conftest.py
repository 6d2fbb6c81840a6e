"""The matrix test's session: one ``Matrix`` (``matrix_helpers``) for every cell."""

import pytest
from matrix_helpers import Matrix


@pytest.fixture(scope="session")
def matrix(tmp_path_factory):
    session = Matrix(tmp_path_factory.mktemp("matrix"))
    yield session
    session.close()
