"""The iscsi driver with ``iscsi_backing = rbd``: RBD images as tgt LUNs.

Real parts: the functional tests' Ceph (deploy/testbed/components/ceph.py,
a pool and a cephx client of this backend's own), a tgtd of this module
(components/tgt.py, with tgt-rbd's ``rbd`` backing store), hosts as
``common/libiscsi.py`` sessions, and one deployment (api, scheduler, an
rbd-backed iscsi volume node, PostgreSQL, RabbitMQ) whose hosts are
``ashlar-agent`` processes (test_iscsi.py tells the snapshot story
through agents on the file-backed driver; the target layer is the
same).  What a host writes through tgt is read back with librbd from the
image; the driver's fence latency is printed (``pytest -s``).  Skipped
with the install command when tgt, libiscsi or Ceph is missing (failed
under ``CI=true``).
"""

import os
import uuid

import pytest
from oslo_config import cfg
from oslo_utils import units

from common import libiscsi
from deploy.testbed import harness
from deploy.testbed.components import tgt as tgt_component
from drivers import base
from drivers import iscsi
from drivers import rbd as rbd_driver
from tests.functional import iscsi_hosts
from tests.functional import storage_story

BACKEND = "iscsirbd"
NODE = "node1@iscsirbd"
POOL = CLIENT = "iscsi"
HOST_A, HOST_B = iscsi_hosts.HOST_A, iscsi_hosts.HOST_B


def report(what, **figures):
    iscsi_hosts.report("iscsi-rbd", what, **figures)


@pytest.fixture(scope="module")
def tgt(tmp_path_factory):
    tgt_component.available()
    with tgt_component.Tgt(tmp_path_factory.mktemp("tgt")) as target:
        if "rbd" not in target.backing_stores():
            harness.unavailable("tgt-rbd", FileNotFoundError(
                "tgtd has no rbd backing store; install it with `%s`"
                % tgt_component.INSTALL_COMMAND))
        yield target


@pytest.fixture(scope="module")
def cluster(ceph):
    """The session's Ceph with this backend's pool and cephx client (which
    may read the rbd tests' pool, to copy a volume from there)."""
    ceph.add_pool(POOL)
    ceph.add_client(CLIENT, pool=POOL, reads=ceph.pool)
    yield ceph


def options(cluster, tgt):
    return {"iscsi_backing": "rbd", "rbd_pool": POOL, "rbd_user": CLIENT,
            "rbd_ceph_conf": str(cluster.conf), "target_port": tgt.port,
            "tgtadm_control_port": tgt.control_port}


@pytest.fixture
def driver(tmp_path, cluster, tgt):
    conf = cfg.ConfigOpts()
    conf.register_opt(cfg.StrOpt("state_path", default=str(tmp_path)))
    iscsi.IscsiDriver.register_opts(conf, BACKEND)
    conf(args=[], default_config_files=[])
    for name, value in options(cluster, tgt).items():
        conf.set_override(name, value, group=BACKEND)
    made = iscsi.IscsiDriver(conf[BACKEND], BACKEND, NODE)
    made.do_setup()
    made.check_for_setup_error()
    yield made
    for volume_id in made.volume_locations():
        made.delete_volume(base.DriverVolume(id=volume_id, size=1))
    made.close()


@pytest.fixture(scope="module")
def ioctx(cluster):
    import rados
    with rados.Rados(rados_id=CLIENT, conffile=str(cluster.conf)) as client, \
            client.open_ioctx(POOL) as opened:
        yield opened


def image_bytes(ioctx, volume_id, offset, length):
    """What librbd reads of the volume's image."""
    import rbd
    with rbd.Image(ioctx, "volume-%s" % volume_id, read_only=True) as image:
        return image.read(offset, length)


def images(ioctx):
    import rbd
    return set(rbd.RBD().list(ioctx))


def attach(driver, volume, connector):
    """initialize_connection's data, and a logged-in, registered session."""
    info, session = iscsi_hosts.attach(driver, volume, connector)
    return info["data"], session


def test_an_image_served_extended_cloned_fenced_deleted(driver, ioctx, tgt):
    volume = base.DriverVolume(id=str(uuid.uuid4()), size=1,
                               multiattach=True)
    update = driver.create_volume(volume)
    assert update == {"provider_location": "%s/volume-%s" % (POOL,
                                                             volume.id)}
    assert "Backing store type: rbd" in tgt.admin("--mode", "target",
                                                  "--op", "show")
    data, host_a = attach(driver, volume, HOST_A)
    block = os.urandom(units.Mi)
    with host_a:
        assert host_a.capacity() == (units.Gi // 512, 512)
        host_a.write(units.Mi, block)
        assert image_bytes(ioctx, volume.id, units.Mi, units.Mi) == block
        driver.extend_volume(volume, 2)
        assert host_a.capacity() == (2 * units.Gi // 512, 512)
        host_a.write(2 * units.Gi - 512, b"e" * 512)
        assert image_bytes(ioctx, volume.id, 2 * units.Gi - 512,
                           512) == b"e" * 512
        snapshot = base.DriverSnapshot(id=str(uuid.uuid4()), volume=volume,
                                       size=2)
        driver.create_snapshot(snapshot)
        host_a.write(0, b"t" * 512)
    volume = base.DriverVolume(id=volume.id, size=2, multiattach=True)
    from_snap = base.DriverVolume(id=str(uuid.uuid4()), size=2)
    clone = base.DriverVolume(id=str(uuid.uuid4()), size=2)
    driver.create_volume_from_snapshot(from_snap, snapshot)
    driver.create_cloned_volume(clone, volume)
    for made, expected in ((from_snap, bytes(512)), (clone, b"t" * 512)):
        _data, host = attach(driver, made, HOST_A)
        with host:
            assert host.read(0, 512) == expected
            assert host.read(units.Mi, units.Mi) == block
    driver.terminate_connection(volume, HOST_A)
    driver.revert_to_snapshot(volume, snapshot)
    _data, host_a = attach(driver, volume, HOST_A)
    with host_a:
        assert host_a.read(0, 512) == bytes(512)
        assert host_a.read(units.Mi, units.Mi) == block
    _fence_refuses_the_old_writer(driver, volume, ioctx)
    for made in (from_snap, clone):
        driver.delete_volume(made)
    driver.delete_snapshot(snapshot)
    driver.delete_volume(volume)
    assert not {"volume-%s" % v.id for v in (volume, from_snap, clone)
                } & images(ioctx)
    assert data["target_iqn"] not in tgt.admin("--mode", "target", "--op",
                                               "show")


def _fence_refuses_the_old_writer(driver, volume, ioctx):
    """A holds the reservation and writes; fenced, its next write is
    refused at the target while B writes on."""
    _data_a, host_a = attach(driver, volume, HOST_A)
    _data_b, host_b = attach(driver, volume, HOST_B)
    with host_a, host_b:
        host_a.reserve(libiscsi.registration_key(HOST_A["host"]))
        host_a.write(0, b"A" * 512)
        cut = driver.fence(volume, base.FenceTarget(host=HOST_A["host"]))
        assert cut == [HOST_A["initiator"]]
        with pytest.raises(libiscsi.Error):
            host_a.write(0, b"late" * 128)
        assert host_b.read(0, 512) == b"A" * 512
        assert image_bytes(ioctx, volume.id, 0, 512) == b"A" * 512
        host_b.write(0, b"B" * 512)
        assert host_b.read(0, 512) == b"B" * 512
    driver.unfence(volume, cut)


def test_a_volume_moves_here_from_an_rbd_backend(driver, cluster, ioctx):
    """The copy chain of a retype or migrate: the rbd backend's
    copy_source, this one's create_volume_from_copy (``rbd cp``), then
    the copy is a LUN."""
    conf = cfg.ConfigOpts()
    rbd_driver.RBDDriver.register_opts(conf, "ceph")
    conf(args=[], default_config_files=[])
    for name, value in {"rbd_pool": cluster.pool, "rbd_user": cluster.client,
                        "rbd_ceph_conf": str(cluster.conf)}.items():
        conf.set_override(name, value, group="ceph")
    source = rbd_driver.RBDDriver(conf.ceph, "ceph", "node@ceph")
    source.do_setup()
    volume = base.DriverVolume(id=str(uuid.uuid4()), size=1)
    source.create_volume(volume)
    data = os.urandom(4096)
    try:
        with source._image("volume-%s" % volume.id) as image:
            image.write(data, 0)
        driver.create_volume_from_copy(volume, source.copy_source(volume))
    finally:
        source.delete_volume(volume)
        source.close()
    assert image_bytes(ioctx, volume.id, 0, 4096) == data
    _data, host = attach(driver, volume, HOST_A)
    with host:
        assert host.read(0, 4096) == data
    driver.delete_volume(volume)


def test_each_fence_refuses_the_old_writer(driver):
    volume = base.DriverVolume(id=str(uuid.uuid4()), size=1,
                               multiattach=True)
    driver.create_volume(volume)
    assert iscsi_hosts.fence_latency(driver, volume, "iscsi-rbd") \
        == iscsi_hosts.FENCE_RUNS


# -- a deployment ----------------------------------------------------------
@pytest.fixture(scope="module")
def deployment(tmp_path_factory, vhost, cluster, tgt):
    section = "".join("%s = %s\n" % item
                      for item in options(cluster, tgt).items())
    with iscsi_hosts.deployment(
            tmp_path_factory.mktemp("iscsirbd"), vhost, section,
            ("iscsi-rbd", "iscsi-rbd-failover")) as deployed:
        yield deployed


def test_the_pool_reports_iscsi_and_fencing(deployment):
    _dep, client = deployment
    pool = next(iter(client.pools().values()))
    assert (pool["storage_protocol"], pool["fencing"],
            pool["multiattach"]) == ("iSCSI", True, True)


def test_agent_writes_land_in_the_image(deployment, ioctx):
    """Bytes an agent writes through tgt are in the RBD image; deleting
    the volume removes the image."""
    dep, client = deployment
    run = storage_story.agent(dep, "compute-a")
    vid = client.create_volume(volume_type="iscsi-rbd")["id"]
    client.wait_status(vid, "available")
    data = b"through tgt into RBD " * 50
    storage_story.write_through(run, vid, data)
    assert image_bytes(ioctx, vid, 0, len(data)) == data
    assert client.delete("/volumes/%s" % vid).status_code == 202
    client.wait_status(vid, None, timeout=60)
    assert "volume-%s" % vid not in images(ioctx)


def test_takeover_fences_the_old_writer(deployment):
    dep, client = deployment
    with iscsi_hosts.taken_over(dep, client, "iscsi-rbd-failover",
                                "iscsi-rbd"):
        pass
