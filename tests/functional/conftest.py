"""Fixtures that start real Ashlar processes on the real broker and DBs."""

import pytest

from deploy.testbed import harness
from deploy.testbed.components import ceph as ceph_component
from deploy.testbed.components import ganesha as ganesha_component
from deploy.testbed.components import keystone as keystone_component
from deploy.testbed.components import tgt as tgt_component


#: Files of minutes each, run first, so that both workers end together.
#: NOTE(ashlar): xdist hands out files by their count of tests, most
#: first, which put the one-test rolling upgrades last, run by one worker
#: while the other stood idle; tox.ini passes ``--no-loadscope-reorder``
#: so that xdist keeps this order (the other files stay in theirs).
SLOW_FIRST = (
    "test_rolling_upgrade.py", "test_rolling_upgrade_mysql.py",
    "test_unit_db_on_servers.py", "test_fault_campaign.py", "test_fuzz.py",
    "test_backups.py", "test_rbd.py", "test_snapshots.py", "test_ha.py",
    "test_ha_components.py", "test_moves.py", "test_iscsi.py",
    "test_iscsi_rbd.py", "test_nfs.py", "test_security.py",
    "test_compose_topology.py", "test_capabilities.py", "test_quotas.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: index for index, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="module")
def vhost():
    url, remove = harness.broker_vhost()
    yield url
    remove()


def _deployment(tmp_path, transport_url, kind, **options):
    db_url, drop = harness.database(kind)
    dep = harness.Deployment(tmp_path, transport_url, db_url, **options)
    dep.db_sync()
    return dep, drop


@pytest.fixture(params=["postgresql", "mysql"])
def cluster(request, tmp_path, vhost):
    """api (gunicorn, 2 workers) + scheduler + two volume nodes."""
    dep, drop = _deployment(tmp_path, vhost, request.param)
    try:
        yield dep, dep.start_cluster(["node1", "node2"])
    finally:
        dep.stop_all()
        drop()


@pytest.fixture(scope="session")
def keystone(tmp_path_factory):
    """One real Keystone for the session (components/keystone.py)."""
    keystone_component.available()
    with keystone_component.Keystone(tmp_path_factory.mktemp("keystone")) as ks:
        yield ks


@pytest.fixture(scope="session")
def personas(keystone):
    """Cinder's personas in projects alpha and beta, and more."""
    return keystone.personas()


@pytest.fixture(scope="session")
def ceph(tmp_path_factory):
    """One real single-node Ceph cluster for the session
    (components/ceph.py)."""
    ceph_component.available()
    with ceph_component.Ceph(tmp_path_factory.mktemp("ceph")) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def tgt(tmp_path_factory):
    """A tgtd of the module's own (components/tgt.py)."""
    tgt_component.available()
    with tgt_component.Tgt(tmp_path_factory.mktemp("tgt")) as target:
        yield target


@pytest.fixture(scope="module")
def ganesha(tmp_path_factory):
    """An nfs-ganesha of the module's own (components/ganesha.py)."""
    ganesha_component.available()
    with ganesha_component.Ganesha(tmp_path_factory.mktemp("ganesha")
                                   ) as server:
        yield server
