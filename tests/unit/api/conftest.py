"""The ``api`` fixture: an in-process api on a clean database."""

import pytest

try:
    from tests.unit.api import apitest
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest


@pytest.fixture
def api():
    yield from apitest.make_api()
