"""Shared pytest set-up: every test gets a fresh policy enforcer."""

import pytest

from common import policy


@pytest.fixture(autouse=True)
def _fresh_policy():
    policy.reset()
    yield
    policy.reset()
