"""The ``mgr`` fixture: a volume manager on the fake driver, on a clean
database (``database``), its capability client mocked."""

from unittest import mock

import pytest

from drivers import fake as fake_driver
from services.volume import manager

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures


@pytest.fixture
def mgr():
    conf = fixtures.make_conf()
    fake_driver.register_opts(conf, "b1")
    driver = fake_driver.FakeDriver(conf["b1"], "b1", "node1")
    with mock.patch.object(manager.scheduler_rpcapi, "CapabilitiesAPI"):
        mgr = manager.VolumeManager(conf, "node1", "b1", driver)
    mgr.service_uuid = "svc"
    return mgr
