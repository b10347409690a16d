"""The ``mgr`` fixture: a volume manager on the fake driver, on a clean
database (``database``), its RPC clients mocked."""

from unittest import mock

import pytest

from drivers import fake as fake_driver
from services.volume import manager

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures


def make_manager(host: str = "node1",
                 backend: str = "b1") -> manager.VolumeManager:
    """A volume manager of ``host@backend`` on the fake driver."""
    conf = fixtures.make_conf()
    fake_driver.register_opts(conf, backend)
    driver = fake_driver.FakeDriver(conf[backend], backend, host)
    with mock.patch.object(manager.scheduler_rpcapi, "CapabilitiesAPI"), \
            mock.patch.object(manager.scheduler_rpcapi, "SchedulerAPI"), \
            mock.patch.object(manager.volume_rpcapi, "VolumeAPI"):
        mgr = manager.VolumeManager(conf, host, backend, driver)
    mgr.here.service_uuid = "svc-" + host
    return mgr


@pytest.fixture
def mgr():
    return make_manager()
