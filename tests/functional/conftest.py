"""Fixtures that start real Ashlar processes on the real broker and DBs."""

import pytest

from deploy.testbed import harness
from deploy.testbed.components import ceph as ceph_component
from deploy.testbed.components import ganesha as ganesha_component
from deploy.testbed.components import keystone as keystone_component
from deploy.testbed.components import tgt as tgt_component


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
