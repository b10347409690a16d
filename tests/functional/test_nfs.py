"""The nfs driver on a real nfs-ganesha, its volumes used as hosts use them.

The driver object is the real one (drivers/nfs.py, the real libnfs);
ganesha is the testbed's (deploy/testbed/components/ganesha.py, NFSv3 on
private ports, which the shares file gives as a libnfs URL); the hosts
are the agent's data path (services/agent/volume_io.py, nfs_io.py) on the
connection_info the volume service would flatten.  Last, a deployment
(api, scheduler, a volume node with the ``nfs`` backend, PostgreSQL,
RabbitMQ) and an ``ashlar-agent`` tell the snapshot story.  Skipped with
the install command when ganesha or libnfs is missing (failed under
``CI=true``).
"""

import contextlib
import dataclasses
import json
import os
import uuid

import pytest
from oslo_config import cfg
from oslo_utils import units

from common import exception
from common import libnfs
from deploy.testbed import harness
from drivers import base
from drivers import nfs
from drivers import nfs_chain
from drivers import qcow2
from services.agent import volume_io
from services.volume import attach as volume_attach
from tests import qcow2_craft
from tests.functional import storage_story

BACKEND = "nfs1"
NODE = "node1@nfs1"


def make_driver(tmp_path, ganesha, **overrides):
    """A driver as the volume service builds it (do_setup included)."""
    shares = tmp_path / "nfs_shares"
    shares.write_text("# the testbed's ganesha, on private ports\n%s\n"
                      % ganesha.url)
    conf = cfg.ConfigOpts()
    nfs.NfsDriver.register_opts(conf, BACKEND)
    conf(args=[], default_config_files=[])
    conf.set_override("nfs_shares_config", str(shares), group=BACKEND)
    for name, value in overrides.items():
        conf.set_override(name, value, group=BACKEND)
    driver = nfs.NfsDriver(conf[BACKEND], BACKEND, NODE)
    driver.do_setup()
    driver.check_for_setup_error()
    return driver


@pytest.fixture
def driver(tmp_path, ganesha):
    made = make_driver(tmp_path, ganesha, nfs_snapshot_support=True)
    yield made
    for volume_id in made.volume_locations():
        made.delete_volume(base.DriverVolume(id=volume_id, size=1))
    for name in os.listdir(ganesha.export):
        if name.startswith("snapshot-"):
            os.unlink(ganesha.export / name)


def new_volume(driver, size=1, multiattach=True):
    volume = base.DriverVolume(id=str(uuid.uuid4()), size=size,
                               multiattach=multiattach)
    update = driver.create_volume(volume)
    return base.DriverVolume(id=volume.id, size=size, multiattach=multiattach,
                             provider_location=update["provider_location"])


class _Row:
    """What connection_info() reads of an attachment and its volume."""

    readonly = encrypted = False
    front_end_qos = None
    size = 1

    def __init__(self, host):
        self.id = "att-%s" % host


def attachment(driver, volume, host, mode="rw"):
    """The attachment view a host's agent gets: the driver's answer to
    its connector, flattened by the volume service."""
    connector = {"host": host}
    info = driver.initialize_connection(volume, connector)
    row = _Row(host)
    return {"id": row.id, "connection_info": volume_attach.connection_info(
        info, row, row, connector, mode)}


@contextlib.contextmanager
def opened(driver, volume, host="compute-a", mode="rw"):
    with volume_io.open_volume(None, attachment(driver, volume, host,
                                                mode)) as handle:
        yield handle


def read_all(driver, volume, length):
    with opened(driver, volume, "reader", "ro") as handle:
        return handle.read(0, length)


def test_create_and_delete_on_the_share(driver, ganesha):
    volume = new_volume(driver, size=2)
    path = ganesha.export / ("volume-%s.raw" % volume.id)
    assert volume.provider_location == "127.0.0.1:%s" % ganesha.export
    assert path.stat().st_size == 2 * units.Gi
    assert path.stat().st_blocks == 0
    assert driver.create_volume(volume) == {
        "provider_location": volume.provider_location}
    assert driver.volume_locations() == {
        volume.id: volume.provider_location}
    assert not [name for name in os.listdir(ganesha.export)
                if name.startswith(".ashlar-")]
    driver.delete_volume(volume)
    assert not path.exists()
    driver.delete_volume(volume)


def test_capacity_is_the_shares(driver, ganesha):
    new_volume(driver, size=3)
    pool = driver.get_volume_stats(refresh=True)["pools"][0]
    fs = os.statvfs(ganesha.export)
    assert pool["total_capacity_gb"] == base.gib(fs.f_blocks * fs.f_frsize)
    assert abs(pool["free_capacity_gb"]
               - base.gib(fs.f_bavail * fs.f_frsize)) < 1
    assert (pool["total_volumes"], pool["provisioned_capacity_gb"],
            pool["backend_state"], pool["multiattach"],
            pool["snapshot_support"]) == (1, 3.0, "up", True, True)
    assert driver.get_volume_stats()["storage_protocol"] == "nfs"


def test_connection_info(driver, ganesha):
    volume = new_volume(driver)
    info = driver.initialize_connection(volume, {"host": "compute-a"})
    assert info["driver_volume_type"] == "nfs"
    assert info["data"] == {
        "export": "127.0.0.1:%s" % ganesha.export,
        "name": "volume-%s.raw" % volume.id, "options": None,
        "format": "raw", "share_url": ganesha.url, "volume_id": volume.id}


def test_snapshot_volume_from_it_and_clone_byte_for_byte(driver):
    volume = new_volume(driver)
    before = os.urandom(3 * units.Mi)
    after = os.urandom(units.Mi)
    with opened(driver, volume) as host:
        host.write(units.Mi, before)
        snapshot = base.DriverSnapshot(id=str(uuid.uuid4()), volume=volume,
                                       size=1)
        driver.create_snapshot(snapshot)
        host.write(units.Mi, after)
    from_snap = base.DriverVolume(id=str(uuid.uuid4()), size=2)
    driver.create_volume_from_snapshot(from_snap, snapshot)
    clone = base.DriverVolume(id=str(uuid.uuid4()), size=1)
    driver.create_cloned_volume(clone, volume)
    with opened(driver, from_snap) as host:
        assert host.read(0, 5 * units.Mi) == (
            bytes(units.Mi) + before + bytes(units.Mi))
        assert host.read(2 * units.Gi - 10, 100) == bytes(10)
    assert read_all(driver, clone, 5 * units.Mi) == (
        bytes(units.Mi) + after + before[units.Mi:] + bytes(units.Mi))
    driver.revert_to_snapshot(volume, snapshot)
    assert read_all(driver, volume, 5 * units.Mi) == (
        bytes(units.Mi) + before + bytes(units.Mi))
    driver.delete_snapshot(snapshot)
    driver.delete_volume(volume)
    assert read_all(driver, from_snap, units.Mi + 10)[units.Mi:] == (
        before[:10])


def test_extend_is_seen_through_the_data_path(driver):
    volume = new_volume(driver)
    with opened(driver, volume) as host:
        host.write(0, b"kept")
        with pytest.raises(OSError, match="past the end"):
            host.write(2 * units.Gi - 4, b"tail")
    driver.extend_volume(volume, 2)
    with opened(driver, volume) as host:
        assert host.write(2 * units.Gi - 4, b"tail") == 4
        assert host.read(0, 4) == b"kept"
    assert read_all(driver, volume, 4) == b"kept"


def test_multiattach_to_two_hosts(driver):
    volume = new_volume(driver)
    with opened(driver, volume, "compute-a") as host_a, \
            opened(driver, volume, "compute-b") as host_b:
        host_a.write(0, b"from A")
        host_b.write(4096, b"from B")
        assert host_b.read(0, 6) == b"from A"
        assert host_a.read(4096, 6) == b"from B"


def test_a_read_only_attachment_cannot_write(driver):
    volume = new_volume(driver)
    with opened(driver, volume, "compute-a") as writer, \
            opened(driver, volume, "compute-b", "ro") as reader:
        writer.write(0, b"only A writes")
        with pytest.raises(volume_io.ReadOnlyAttachment):
            reader.write(0, b"B may not")
        assert reader.read(0, 13) == b"only A writes"


def test_snapshots_are_refused_without_snapshot_support(tmp_path, ganesha):
    driver = make_driver(tmp_path, ganesha)
    volume = new_volume(driver)
    try:
        snapshot = base.DriverSnapshot(id=str(uuid.uuid4()), volume=volume,
                                       size=1)
        with pytest.raises(exception.NotSupported,
                           match="nfs_snapshot_support"):
            driver.create_snapshot(snapshot)
        assert not [name for name in os.listdir(ganesha.export)
                    if name.startswith("snapshot-")]
        pool = driver.get_volume_stats(refresh=True)["pools"][0]
        assert pool["snapshot_support"] is False
    finally:
        driver.delete_volume(volume)


def test_a_qcow2_volume_is_refused_by_the_hosts_data_path(tmp_path,
                                                          ganesha):
    driver = make_driver(tmp_path, ganesha, nfs_qcow2_volumes=True)
    volume = new_volume(driver, multiattach=False)
    try:
        assert (ganesha.export / ("volume-%s.qcow2" % volume.id)
                ).read_bytes()[:4] == b"QFI\xfb"
        with pytest.raises(exception.InvalidInput, match="qcow2"):
            with opened(driver, volume):
                pass
    finally:
        driver.delete_volume(volume)


# -- qcow2 volumes: snapshots as overlays -----------------------------------
@pytest.fixture
def qcow2_driver(tmp_path, ganesha):
    made = make_driver(tmp_path, ganesha, nfs_qcow2_volumes=True,
                       nfs_snapshot_support=True)
    yield made
    for volume_id in made.volume_locations():
        made.delete_volume(base.DriverVolume(id=volume_id, size=1))
    assert not [name for name in os.listdir(ganesha.export)
                if name.startswith("volume-")]


def share_files(ganesha, volume_id):
    """The volume's files on the share (a set) and its .info's content,
    through libnfs."""
    with libnfs.Share(ganesha.url) as share:
        names = {name for name in share.listdir("/")
                 if name.startswith("volume-%s." % volume_id)}
        infos = {}
        for name in names:
            if name.endswith(".info"):
                with share.open("/" + name, read_only=True) as info:
                    infos[name] = json.loads(info.pread(0, info.size()))
    return names, infos


def backing_of(ganesha, name):
    with libnfs.Share(ganesha.url) as share, \
            share.open("/" + name, read_only=True) as image:
        layer = qcow2.Layer(image.pread, name)
        return layer.backing, layer.is_empty()


def test_qcow2_snapshots_are_overlays_on_the_share(qcow2_driver, ganesha):
    driver = qcow2_driver
    volume = new_volume(driver, multiattach=False)
    base_file = "volume-%s.qcow2" % volume.id
    info_file = "volume-%s.info" % volume.id
    old, new = os.urandom(100), os.urandom(100)
    qcow2_craft.put_clusters(ganesha.export / base_file,
                             {0: old, 3 * units.Mi: old})
    first = base.DriverSnapshot(id=str(uuid.uuid4()), volume=volume, size=1)
    driver.create_snapshot(first)
    one = "volume-%s.%s" % (volume.id, first.id)
    assert share_files(ganesha, volume.id) == (
        {base_file, one, info_file},
        {info_file: {"active": one, first.id: one}})
    assert backing_of(ganesha, one) == (qcow2.Backing(base_file, "qcow2"),
                                        True)
    assert driver.initialize_connection(volume, {"host": "h"})["data"][
        "name"] == one
    # the hypervisor writes on: into the overlay
    qcow2_craft.put_clusters(ganesha.export / one, {0: new})
    second = base.DriverSnapshot(id=str(uuid.uuid4()), volume=volume,
                                 size=1)
    driver.create_snapshot(second)
    two = "volume-%s.%s" % (volume.id, second.id)
    assert share_files(ganesha, volume.id)[1] == {info_file: {
        "active": two, first.id: one, second.id: two}}
    assert backing_of(ganesha, two) == (qcow2.Backing(one, "qcow2"), True)

    from_first = base.DriverVolume(id=str(uuid.uuid4()), size=2)
    driver.create_volume_from_snapshot(from_first, first)
    from_second = base.DriverVolume(id=str(uuid.uuid4()), size=1)
    driver.create_volume_from_snapshot(from_second, second)
    clone = base.DriverVolume(id=str(uuid.uuid4()), size=1)
    driver.create_cloned_volume(clone, volume)
    # qcow2 images of the chain merged, no backing file (hypervisors')
    for copy, first_bytes in ((from_first, old), (from_second, new),
                              (clone, new)):
        name = "volume-%s.qcow2" % copy.id
        assert share_files(ganesha, copy.id) == ({name}, {})
        with libnfs.Share(ganesha.url) as share, \
                nfs_chain.open_chain(share, name) as disk:
            assert (len(disk.layers), disk.size) == (1, copy.size * units.Gi)
            assert disk.read(0, 100) == first_bytes
            assert disk.read(3 * units.Mi, 100) == old
            assert disk.read(copy.size * units.Gi - 100, 100) == bytes(100)
    # a multiattach one is raw: hosts read it through libnfs
    shared = base.DriverVolume(id=str(uuid.uuid4()), size=1,
                               multiattach=True)
    driver.create_volume_from_snapshot(shared, second)
    with opened(driver, shared, "reader", "ro") as host:
        assert (host.read(0, 100), host.read(3 * units.Mi, 100)) == (
            new, old)


def test_qcow2_snapshot_deletes_reverts_and_refusals(qcow2_driver, ganesha):
    driver = qcow2_driver
    volume = new_volume(driver, multiattach=False)
    base_file = "volume-%s.qcow2" % volume.id
    info_file = "volume-%s.info" % volume.id
    first, second = (base.DriverSnapshot(id=str(uuid.uuid4()),
                                         volume=volume, size=1)
                     for _ in range(2))
    driver.create_snapshot(first)
    driver.create_snapshot(second)
    one, two = ("volume-%s.%s" % (volume.id, s.id) for s in (first, second))
    qcow2_craft.put_clusters(ganesha.export / one, {0: b"after first"})
    # the newest overlay, empty, goes: the first's overlay is active again
    driver.delete_snapshot(second)
    assert share_files(ganesha, volume.id) == (
        {base_file, one, info_file},
        {info_file: {"active": one, first.id: one}})
    # a revert empties it
    driver.revert_to_snapshot(volume, first)
    assert backing_of(ganesha, one) == (qcow2.Backing(base_file, "qcow2"),
                                        True)
    # written again, it is merged into the base file when deleted
    qcow2_craft.put_clusters(ganesha.export / one, {0: b"after revert"})
    driver.delete_snapshot(first)
    assert share_files(ganesha, volume.id) == ({base_file}, {})
    with libnfs.Share(ganesha.url) as share, \
            nfs_chain.open_chain(share, base_file) as disk:
        assert (len(disk.layers), disk.read(0, 13)) == (
            1, b"after revert\0")
    assert not [name for name in os.listdir(ganesha.export)
                if name.startswith(".ashlar-")]
    # an attached qcow2 volume is not snapshotted (no assisted snapshots)
    attached = dataclasses.replace(volume, attached=True)
    with pytest.raises(exception.InvalidVolume, match="attached"):
        driver.create_snapshot(base.DriverSnapshot(
            id=str(uuid.uuid4()), volume=attached, size=1))
    assert share_files(ganesha, volume.id) == ({base_file}, {})
    # nor are its overlays deleted while it is attached
    driver.create_snapshot(first)
    with pytest.raises(exception.InvalidVolume, match="attached"):
        driver.delete_snapshot(dataclasses.replace(first, volume=attached))
    assert share_files(ganesha, volume.id)[0] == {
        base_file, one, info_file}
    # a volume with snapshots is deleted with its chain
    driver.delete_volume(volume)
    assert share_files(ganesha, volume.id) == (set(), {})


def test_qcow2_snapshots_through_the_api(tmp_path_factory, vhost, ganesha):
    """A deployment whose NFS backend makes qcow2 volumes: snapshots of a
    detached volume are overlays; of an attached one they are refused
    (the snapshot ends ``error`` with a user message), and so is a
    delete while attached (``error_deleting``), which, once detached and
    reset, deletes.  Before the module's deployment (below), so that the
    share is this one's alone."""
    work = tmp_path_factory.mktemp("nfsq")
    (work / "nfs_shares").write_text(ganesha.url + "\n")
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(work, vhost, db_url)
    dep.db_sync()
    try:
        client = harness.Client(dep.endpoint)
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("volume1", "services.volume", "nfsqnode", backends="nfsq",
                  extra=("[nfsq]\nvolume_driver = nfs\nnfs_shares_config = "
                         "%s\nnfs_snapshot_support = true\n"
                         "nfs_qcow2_volumes = true\n" % (work / "nfs_shares")))
        dep.start("api", "services.api", "api")
        harness.wait_for(lambda: client.pools(), timeout=60,
                         what="the NFS pool's report")
        _qcow2_story(client, ganesha)
    finally:
        dep.stop_all()
        drop()


def _snapshot_of(client, volume_id, status, force=False):
    resp = client.post("/snapshots", {"snapshot": {
        "volume_id": volume_id, "force": force}})
    assert resp.status_code == 202, resp.text
    sid = resp.json()["snapshot"]["id"]
    _wait_snapshot(client, sid, status)
    return sid


def _wait_snapshot(client, snapshot_id, status):
    def now():
        resp = client.get("/snapshots/%s" % snapshot_id)
        if resp.status_code == 404:
            return status is None
        return resp.json()["snapshot"]["status"] == status
    harness.wait_for(now, timeout=60, what="snapshot %s" % status)


def _qcow2_story(client, ganesha):
    vid = client.create_volume(size=1)["id"]
    client.wait_status(vid, "available", timeout=60)
    sid = _snapshot_of(client, vid, "available")
    base_file, info_file = ("volume-%s.%s" % (vid, ext)
                            for ext in ("qcow2", "info"))
    overlay = "volume-%s.%s" % (vid, sid)
    assert share_files(ganesha, vid) == ({base_file, overlay, info_file}, {
        info_file: {"active": overlay, sid: overlay}})
    attachment = client.attach(vid, "compute-a")
    client.wait_status(vid, "in-use")
    refused = _snapshot_of(client, vid, "error", force=True)
    # the node records the user message after the status
    harness.wait_for(lambda: client.messages_of(refused), timeout=30,
                     what="the refused snapshot's user message")
    assert share_files(ganesha, vid)[0] == {base_file, overlay, info_file}
    assert client.delete("/snapshots/%s" % sid).status_code == 202
    _wait_snapshot(client, sid, "error_deleting")
    assert share_files(ganesha, vid)[0] == {base_file, overlay, info_file}
    assert client.delete("/attachments/%s" % attachment).status_code == 200
    client.wait_status(vid, "available")
    for snapshot in (sid, refused):
        assert client.post("/snapshots/%s/action" % snapshot, {
            "os-reset_status": {"status": "available"}}).status_code == 202
        assert client.delete("/snapshots/%s" % snapshot).status_code == 202
        _wait_snapshot(client, snapshot, None)
    assert share_files(ganesha, vid) == ({base_file}, {})
    assert client.delete("/volumes/%s" % vid).status_code == 202
    client.wait_status(vid, None, timeout=60)
    assert share_files(ganesha, vid) == (set(), {})


# -- a deployment ----------------------------------------------------------
@pytest.fixture(scope="module")
def deployment(tmp_path_factory, vhost, ganesha):
    work = tmp_path_factory.mktemp("nfs")
    (work / "nfs_shares").write_text(ganesha.url + "\n")
    db_url, drop = harness.database("postgresql")
    dep = harness.Deployment(work, vhost, db_url)
    dep.db_sync()
    try:
        client = harness.Client(dep.endpoint)
        dep.start("scheduler", "services.scheduler", "sched")
        dep.start("volume1", "services.volume", "nfsnode", backends="nfs",
                  extra=("[nfs]\nvolume_driver = nfs\nnfs_shares_config = %s\n"
                         "nfs_snapshot_support = true\n"
                         % (work / "nfs_shares")))
        dep.start("api", "services.api", "api")
        harness.wait_for(lambda: client.pools(), timeout=60,
                         what="the NFS pool's report")
        assert client.post("/types", {"volume_type": {
            "name": "nfs-shared", "extra_specs": {
                "multiattach": "<is> True", "volume_backend_name": "nfs"}}}
        ).status_code == 200
        yield dep, client
    finally:
        dep.stop_all()
        drop()


def test_the_pool_reports_nfs(deployment):
    _dep, client = deployment
    pool = next(iter(client.pools().values()))
    assert (pool["storage_protocol"], pool["multiattach"],
            pool["snapshot_support"]) == ("nfs", True, True)


def test_snapshot_story_on_nfs(deployment):
    dep, client = deployment
    storage_story.tell(client, storage_story.agent(dep, "compute-a"),
                       "nfs-shared")


def test_backup_and_restore_read_and_write_through_nfs(deployment):
    """The backup service reads and writes the volume as a host does,
    through libnfs."""
    dep, client = deployment
    storage_story.backup_and_restore(dep, client, "nfs-shared",
                                     b"backed up through NFS" * 100)
