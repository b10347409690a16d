"""Shared pytest set-up: every test gets a fresh policy enforcer, and a
service a deployment cannot reach skips the test (fails it under CI)."""

import os

import pytest

from common import policy
from deploy.testbed import harness


@pytest.fixture(autouse=True)
def _fresh_policy():
    policy.reset()
    yield
    policy.reset()


def _skip_missing_services():
    """A service a deployment cannot reach (``harness.Unavailable``) skips
    the test, and fails it under CI: a missing service is never silent."""
    try:
        return (yield)
    except harness.Unavailable as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(str(exc), pytrace=False)
        pytest.skip(str(exc))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup():
    return (yield from _skip_missing_services())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call():
    return (yield from _skip_missing_services())
