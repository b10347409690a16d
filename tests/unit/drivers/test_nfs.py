"""drivers/nfs_shares.py and what drivers/nfs.py does beyond the contract
(tests/unit/drivers/test_contract.py runs that on it), on local folders
standing in for shares (fake_libnfs.py)."""

import dataclasses
import json
import os
import uuid

import pytest
from oslo_config import cfg
from oslo_utils import units

from common import exception
from drivers import base
from drivers import nfs
from drivers import nfs_chain
from drivers import nfs_shares
from drivers import qcow2
from tests import qcow2_craft
from tests.unit.drivers import fake_libnfs

BACKEND = "nfs1"


# -- nfs_shares_config ------------------------------------------------------
def test_a_plain_share_has_no_url_options():
    share = nfs_shares.parse_line("192.0.2.5:/srv/nfs/volumes")
    assert share == nfs_shares.Share(
        export="192.0.2.5:/srv/nfs/volumes", options="",
        url="nfs://192.0.2.5/srv/nfs/volumes")


def test_mount_options_give_libnfs_its_ports():
    share = nfs_shares.parse_line(
        "nas:/export  -o port=20490,mountport=20048,vers=3,soft,timeo=30")
    assert share.export == "nas:/export"
    assert share.options == "-o port=20490,mountport=20048,vers=3,soft,timeo=30"
    assert share.url == ("nfs://nas/export?nfsport=20490&mountport=20048"
                         "&version=3")


def test_a_libnfs_url_is_taken_as_it_is():
    url = "nfs://127.0.0.1/tmp/x/export?nfsport=41000&mountport=41001"
    share = nfs_shares.parse_line(url)
    assert (share.export, share.url) == ("127.0.0.1:/tmp/x/export", url)


def test_an_ipv6_share():
    share = nfs_shares.parse_line("[2001:db8::5]:/export")
    assert share.url == "nfs://[2001:db8::5]/export"


@pytest.mark.parametrize("line", ["", "   ", "# nas:/old", "\t#x"])
def test_blank_lines_and_comments_name_no_share(line):
    assert nfs_shares.parse_line(line) is None


@pytest.mark.parametrize("line", [
    "nas", "nas:export", "/export", "nfs://", "nfs://nas", "a:b:/c",
    "nas:/export -o", "nas:/export -o port="])
def test_what_names_no_share_is_refused(line):
    with pytest.raises(exception.InvalidInput):
        nfs_shares.parse_line(line)


def test_a_file_gives_each_share_once_and_names_a_bad_line():
    text = "# shares\nnas:/a\n\nnas:/b -o port=1\nnas:/a\n"
    assert [s.export for s in nfs_shares.parse(text)] == ["nas:/a", "nas:/b"]
    with pytest.raises(exception.InvalidInput, match="line 2"):
        nfs_shares.parse("nas:/a\nnonsense\n", "shares")


# -- the driver ---------------------------------------------------------------
class SizedShare(fake_libnfs.FakeShare):
    """A folder share whose free space the test sets."""

    free: dict[str, int] = {}

    def capacity(self):
        return 100 * units.Gi, self.free.get(self.root, 50 * units.Gi)


def make_driver(tmp_path, shares=("share1",), **overrides):
    exports = []
    for name in shares:
        (tmp_path / name).mkdir(exist_ok=True)
        exports.append("127.0.0.1:%s" % (tmp_path / name))
    (tmp_path / "shares").write_text("\n".join(exports) + "\n")
    conf = cfg.ConfigOpts()
    nfs.NfsDriver.register_opts(conf, BACKEND)
    conf(args=[], default_config_files=[])
    conf.set_override("nfs_shares_config", str(tmp_path / "shares"),
                      group=BACKEND)
    for name, value in overrides.items():
        conf.set_override(name, value, group=BACKEND)
    driver = nfs.NfsDriver(conf[BACKEND], BACKEND, "node1@nfs1",
                           mounter=SizedShare)
    driver.do_setup()
    driver.check_for_setup_error()
    return driver


def volume(size=1, multiattach=False):
    return base.DriverVolume(id=str(uuid.uuid4()), size=size,
                             multiattach=multiattach)


def test_a_new_volume_goes_to_the_emptiest_share(tmp_path):
    driver = make_driver(tmp_path, ("share1", "share2"))
    SizedShare.free = {str(tmp_path / "share1"): 10 * units.Gi,
                       str(tmp_path / "share2"): 20 * units.Gi}
    first = volume()
    assert driver.create_volume(first) == {
        "provider_location": "127.0.0.1:%s" % (tmp_path / "share2")}
    assert (tmp_path / "share2" / ("volume-%s.raw" % first.id)).stat(
    ).st_size == units.Gi
    SizedShare.free = {str(tmp_path / "share1"): 30 * units.Gi,
                       str(tmp_path / "share2"): 5 * units.Gi}
    second = volume()
    assert driver.create_volume(second)["provider_location"].endswith(
        "share1")
    pool = driver.get_volume_stats(refresh=True)["pools"][0]
    assert pool["total_capacity_gb"] == 200.0
    assert pool["free_capacity_gb"] == 35.0
    assert (pool["total_volumes"], pool["provisioned_capacity_gb"]) == (2, 2.0)
    SizedShare.free = {}


def test_connection_info_is_cinders_nfs_type(tmp_path):
    driver = make_driver(tmp_path)
    made = volume()
    driver.create_volume(made)
    info = driver.initialize_connection(made, {"host": "compute-a"})
    export = "127.0.0.1:%s" % (tmp_path / "share1")
    assert info == {"driver_volume_type": "nfs", "data": {
        "export": export, "name": "volume-%s.raw" % made.id,
        "options": None, "format": "raw",
        "share_url": "nfs://127.0.0.1%s" % (tmp_path / "share1"),
        "volume_id": made.id}}


def test_snapshots_and_clones_are_refused_without_snapshot_support(tmp_path):
    driver = make_driver(tmp_path)
    made = volume()
    driver.create_volume(made)
    snapshot = base.DriverSnapshot(id=str(uuid.uuid4()), volume=made, size=1)
    with pytest.raises(exception.NotSupported, match="nfs_snapshot_support"):
        driver.create_snapshot(snapshot)
    with pytest.raises(exception.NotSupported, match="nfs_snapshot_support"):
        driver.create_cloned_volume(volume(), made)
    pool = driver.get_volume_stats(refresh=True)["pools"][0]
    assert (pool["snapshot_support"], pool["multiattach"]) == (False, True)
    assert list((tmp_path / "share1").iterdir()) == [
        tmp_path / "share1" / ("volume-%s.raw" % made.id)]


def test_qcow2_volumes_are_never_multiattach(tmp_path):
    driver = make_driver(tmp_path, nfs_qcow2_volumes=True)
    made = volume(size=2)
    driver.create_volume(made)
    image = (tmp_path / "share1" / ("volume-%s.qcow2" % made.id)).read_bytes()
    assert image[:4] == b"QFI\xfb"
    assert int.from_bytes(image[24:32], "big") == 2 * units.Gi
    driver.extend_volume(made, 3)
    image = (tmp_path / "share1" / ("volume-%s.qcow2" % made.id)).read_bytes()
    assert int.from_bytes(image[24:32], "big") == 3 * units.Gi
    pool = driver.get_volume_stats(refresh=True)["pools"][0]
    assert (pool["multiattach"], pool["online_extend_support"],
            pool["provisioned_capacity_gb"]) == (False, False, 3.0)


def test_a_copy_keeps_the_bytes_and_the_holes(tmp_path):
    driver = make_driver(tmp_path, nfs_snapshot_support=True)
    source = volume()
    driver.create_volume(source)
    path = tmp_path / "share1" / ("volume-%s.raw" % source.id)
    with open(path, "r+b") as out:
        out.seek(5 * units.Mi + 3)
        out.write(b"data in the middle")
    clone = volume(size=2)
    driver.create_cloned_volume(clone, source)
    copied = tmp_path / "share1" / ("volume-%s.raw" % clone.id)
    assert copied.stat().st_size == 2 * units.Gi
    with open(copied, "rb") as image:
        image.seek(5 * units.Mi + 3)
        assert image.read(18) == b"data in the middle"
    # one MiB written, not two GiB
    assert copied.stat().st_blocks * 512 <= 2 * units.Mi


def test_a_missing_shares_file_stops_the_setup(tmp_path):
    conf = cfg.ConfigOpts()
    nfs.NfsDriver.register_opts(conf, BACKEND)
    conf(args=[], default_config_files=[])
    conf.set_override("nfs_shares_config", str(tmp_path / "none"),
                      group=BACKEND)
    driver = nfs.NfsDriver(conf[BACKEND], BACKEND, "node1@nfs1",
                           mounter=SizedShare)
    with pytest.raises(exception.VolumeBackendAPIException, match="none"):
        driver.do_setup()


def test_no_share_that_mounts_fails_the_check(tmp_path):
    driver = make_driver(tmp_path)
    (tmp_path / "share1").rmdir()
    with pytest.raises(exception.DriverNotInitialized):
        driver.check_for_setup_error()
    assert driver.get_volume_stats(refresh=True)["pools"][0][
        "backend_state"] == "down"


def test_interrupted_creates_are_removed_at_setup(tmp_path):
    (tmp_path / "share1").mkdir()
    left = tmp_path / "share1" / ".ashlar-0123.tmp"
    left.write_bytes(b"half")
    make_driver(tmp_path)
    assert not left.exists()


def test_a_snapshot_is_connected_for_a_backup(tmp_path):
    driver = make_driver(tmp_path, nfs_snapshot_support=True)
    made = volume()
    driver.create_volume(made)
    snapshot = base.DriverSnapshot(id=str(uuid.uuid4()), volume=made, size=1)
    driver.create_snapshot(snapshot)
    info = driver.initialize_connection_snapshot(snapshot, {"host": "b"})
    assert (info["driver_volume_type"], info["data"]["name"]) == (
        "nfs", "snapshot-%s.raw" % snapshot.id)
    driver.delete_snapshot(snapshot)
    with pytest.raises(exception.SnapshotNotFound):
        driver.initialize_connection_snapshot(snapshot, {"host": "b"})


# -- qcow2 snapshots: overlays (drivers/nfs_chain.py) -----------------------
def qcow2_driver(tmp_path):
    return make_driver(tmp_path, nfs_qcow2_volumes=True,
                       nfs_snapshot_support=True)


def snap(of):
    return base.DriverSnapshot(id=str(uuid.uuid4()), volume=of, size=of.size)


def info_of(share, made):
    path = share / ("volume-%s.info" % made.id)
    return json.loads(path.read_text()) if path.exists() else None


def test_a_qcow2_snapshot_is_an_overlay_named_in_the_info(tmp_path):
    driver = qcow2_driver(tmp_path)
    share = tmp_path / "share1"
    made = volume()
    driver.create_volume(made)
    first, second = snap(made), snap(made)
    driver.create_snapshot(first)
    driver.create_snapshot(second)
    base_name = "volume-%s.qcow2" % made.id
    one, two = ("volume-%s.%s" % (made.id, s.id) for s in (first, second))
    assert info_of(share, made) == {"active": two, first.id: one,
                                    second.id: two}
    assert qcow2_layer(share / one).backing == qcow2.Backing(
        base_name, "qcow2")
    assert qcow2_layer(share / two).backing == qcow2.Backing(one, "qcow2")
    assert not [n for n in os.listdir(share) if n.startswith("snapshot-")]
    assert driver.initialize_connection(made, {"host": "h"})["data"][
        "name"] == two
    assert driver.initialize_connection_snapshot(first, {"host": "h"})[
        "data"]["name"] == base_name
    with pytest.raises(exception.VolumeBackendAPIException, match="exists"):
        driver.create_snapshot(first)


def qcow2_layer(path):
    fd = os.open(path, os.O_RDONLY)
    return qcow2.Layer(lambda offset, length: os.pread(fd, length, offset),
                       str(path))


def test_an_attached_qcow2_volume_is_not_snapshotted(tmp_path):
    driver = qcow2_driver(tmp_path)
    made = volume()
    driver.create_volume(made)
    attached = dataclasses.replace(made, attached=True)
    with pytest.raises(exception.InvalidVolume, match="assisted"):
        driver.create_snapshot(snap(attached))
    assert sorted(os.listdir(tmp_path / "share1")) == [
        "volume-%s.qcow2" % made.id]
    taken = snap(made)
    driver.create_snapshot(taken)
    before = sorted(os.listdir(tmp_path / "share1"))
    with pytest.raises(exception.InvalidVolume, match="assisted"):
        driver.delete_snapshot(dataclasses.replace(taken, volume=attached))
    assert sorted(os.listdir(tmp_path / "share1")) == before


def flat_volume(share, made):
    """The volume's qcow2 image, which must have no backing file, read."""
    image = qcow2_layer(share / ("volume-%s.qcow2" % made.id))
    assert (image.backing, image.size) == (None, made.size * units.Gi)
    return qcow2.Chain([image])


def test_volumes_from_qcow2_snapshots_read_the_chain(tmp_path):
    driver = qcow2_driver(tmp_path)
    share = tmp_path / "share1"
    made = volume()
    driver.create_volume(made)
    qcow2_craft.put_clusters(share / ("volume-%s.qcow2" % made.id), {
        0: b"before", 5 * units.Mi: b"kept"})
    taken = snap(made)
    driver.create_snapshot(taken)
    qcow2_craft.put_clusters(share / ("volume-%s.%s" % (made.id, taken.id)),
                             {0: b"after!", 5 * units.Mi: qcow2_craft.ZERO})
    from_snap, clone = volume(size=2), volume()
    shared = volume(multiattach=True)
    driver.create_volume_from_snapshot(from_snap, taken)
    driver.create_cloned_volume(clone, made)
    driver.create_volume_from_snapshot(shared, taken)
    for copy, first, middle in ((from_snap, b"before", b"kept"),
                                (clone, b"after!", bytes(4))):
        disk = flat_volume(share, copy)
        assert (disk.read(0, 6), disk.read(5 * units.Mi, 4)) == (
            first, middle)
        # two data clusters, and the metadata
        assert (share / ("volume-%s.qcow2" % copy.id)).stat().st_size <= (
            10 * 64 * units.Ki)
    # a multiattach volume is raw, so that hosts may share it
    path = share / ("volume-%s.raw" % shared.id)
    assert path.stat().st_size == units.Gi
    with open(path, "rb") as image:
        assert image.read(6) == b"before"
        image.seek(5 * units.Mi)
        assert image.read(4) == b"kept"
    # two 4 MiB chunks of the copy hold data
    assert path.stat().st_blocks * 512 <= 8 * units.Mi


def test_deleting_the_newest_empty_overlay_makes_its_backing_active(
        tmp_path):
    driver = qcow2_driver(tmp_path)
    share = tmp_path / "share1"
    made = volume()
    driver.create_volume(made)
    first, second = snap(made), snap(made)
    driver.create_snapshot(first)
    driver.create_snapshot(second)
    driver.extend_volume(made, 3)
    driver.delete_snapshot(second)
    one = "volume-%s.%s" % (made.id, first.id)
    assert info_of(share, made) == {"active": one, first.id: one}
    assert qcow2_layer(share / one).size == 3 * units.Gi
    assert pool_of(driver)["provisioned_capacity_gb"] == 3.0
    driver.delete_snapshot(second)  # again: nothing left to do
    driver.delete_snapshot(first)
    assert info_of(share, made) is None
    assert sorted(os.listdir(share)) == ["volume-%s.qcow2" % made.id]


def pool_of(driver):
    return driver.get_volume_stats(refresh=True)["pools"][0]


def test_deleting_an_older_empty_overlay_rebases_its_child(tmp_path):
    driver = qcow2_driver(tmp_path)
    share = tmp_path / "share1"
    made = volume()
    driver.create_volume(made)
    qcow2_craft.put_clusters(share / ("volume-%s.qcow2" % made.id),
                             {0: b"base data"})
    first, second = snap(made), snap(made)
    driver.create_snapshot(first)
    driver.create_snapshot(second)
    driver.delete_snapshot(first)
    two = "volume-%s.%s" % (made.id, second.id)
    assert info_of(share, made) == {"active": two, second.id: two}
    assert qcow2_layer(share / two).backing.name == (
        "volume-%s.qcow2" % made.id)
    assert not (share / ("volume-%s.%s" % (made.id, first.id))).exists()
    from_snap = volume()
    driver.create_volume_from_snapshot(from_snap, second)
    assert flat_volume(share, from_snap).read(0, 9) == b"base data"


def test_an_overlay_with_data_is_merged_into_its_backing_file(tmp_path):
    driver = qcow2_driver(tmp_path)
    share = tmp_path / "share1"
    made = volume()
    driver.create_volume(made)
    base_file = share / ("volume-%s.qcow2" % made.id)
    qcow2_craft.put_clusters(base_file, {0: b"base", units.Mi: b"kept"})
    first, second = snap(made), snap(made)
    driver.create_snapshot(first)
    one = share / ("volume-%s.%s" % (made.id, first.id))
    qcow2_craft.put_clusters(one, {0: b"one"})
    driver.create_snapshot(second)
    two = share / ("volume-%s.%s" % (made.id, second.id))
    qcow2_craft.put_clusters(two, {units.Mi: qcow2_craft.ZERO})
    # the older snapshot: its overlay (data: "one") into the base file
    driver.delete_snapshot(first)
    assert info_of(share, made) == {"active": two.name, second.id: two.name}
    assert not one.exists()
    assert qcow2_layer(two).backing.name == base_file.name
    assert qcow2_layer(base_file).backing is None
    from_second = volume()
    driver.create_volume_from_snapshot(from_second, second)
    disk = flat_volume(share, from_second)
    assert (disk.read(0, 4), disk.read(units.Mi, 4)) == (b"one\0", b"kept")
    # the newest, active: its overlay into the base file, active again
    driver.extend_volume(made, 2)
    driver.delete_snapshot(second)
    assert info_of(share, made) is None
    assert sorted(os.listdir(share)) == sorted(
        [base_file.name, "volume-%s.qcow2" % from_second.id])
    disk = qcow2.Chain([qcow2_layer(base_file)])
    assert (disk.size, disk.read(0, 4), disk.read(units.Mi, 4)) == (
        2 * units.Gi, b"one\0", bytes(4))
    assert driver.initialize_connection(made, {"host": "h"})["data"][
        "name"] == base_file.name


def test_revert_empties_the_latest_overlay(tmp_path):
    driver = qcow2_driver(tmp_path)
    share = tmp_path / "share1"
    made = volume()
    driver.create_volume(made)
    first, second = snap(made), snap(made)
    driver.create_snapshot(first)
    driver.create_snapshot(second)
    two = share / ("volume-%s.%s" % (made.id, second.id))
    qcow2_craft.put_clusters(two, {0: b"undone"})
    grown = dataclasses.replace(made, size=2)
    driver.extend_volume(made, 2)
    driver.revert_to_snapshot(grown, second)
    reverted = qcow2_layer(two)
    assert (reverted.is_empty(), reverted.size, reverted.backing.name) == (
        True, 2 * units.Gi, "volume-%s.%s" % (made.id, first.id))
    with pytest.raises(exception.InvalidSnapshot, match="latest"):
        driver.revert_to_snapshot(grown, first)


def test_an_orphan_overlay_of_a_crashed_create_is_replaced(tmp_path):
    driver = qcow2_driver(tmp_path)
    share = tmp_path / "share1"
    made = volume()
    driver.create_volume(made)
    taken = snap(made)
    orphan = share / ("volume-%s.%s" % (made.id, taken.id))
    orphan.write_bytes(b"half an overlay")
    driver.delete_snapshot(taken)
    assert not orphan.exists()
    orphan.write_bytes(b"half an overlay")
    driver.create_snapshot(taken)
    assert qcow2_layer(orphan).is_empty()
    assert info_of(share, made)["active"] == orphan.name


def test_a_delete_that_crashed_after_the_rebase_is_completed(tmp_path):
    driver = qcow2_driver(tmp_path)
    share = tmp_path / "share1"
    made = volume()
    driver.create_volume(made)
    first, second = snap(made), snap(made)
    driver.create_snapshot(first)
    driver.create_snapshot(second)
    one = share / ("volume-%s.%s" % (made.id, first.id))
    two = share / ("volume-%s.%s" % (made.id, second.id))
    qcow2_craft.put_clusters(one, {0: b"one"})
    # the first delete merged and rebased, then died before the .info
    with fake_libnfs.FakeShare("nfs://h%s" % share) as nfs:
        nfs_chain.merge(nfs, one.name, "volume-%s.qcow2" % made.id)
        nfs_chain.rebase(nfs, two.name, "volume-%s.qcow2" % made.id)
    driver.delete_snapshot(first)
    assert info_of(share, made) == {"active": two.name, second.id: two.name}
    assert not one.exists()
    disk = qcow2.Chain([qcow2_layer(two), qcow2_layer(
        share / ("volume-%s.qcow2" % made.id))])
    assert disk.read(0, 4) == b"one\0"
