"""The driver contract (drivers/base.py docstrings) against every driver."""

import contextlib
import uuid

import pytest
from oslo_config import cfg
from oslo_utils import units
from stevedore import extension

from common import exception
from drivers import base
from drivers import fake as fake_driver
from drivers import file as file_driver
from drivers import iscsi as iscsi_driver
from drivers import nfs as nfs_driver
from tests.unit.drivers import fake_libnfs
from tests.unit.drivers import fake_tgt

BACKEND = "backend1"
HOST = "node1@backend1"
CONNECTOR = {"host": "compute1", "initiator": "iqn.1993-08.org.debian:01:1"}

POOL_KEYS = {
    "pool_name": str,
    "total_capacity_gb": float,
    "free_capacity_gb": float,
    "allocated_capacity_gb": float,
    "provisioned_capacity_gb": float,
    "reserved_percentage": int,
    "max_over_subscription_ratio": float,
    "thin_provisioning_support": bool,
    "thick_provisioning_support": bool,
    "multiattach": bool,
    "backend_state": str,
    "total_volumes": int,
}


def _file(tmp_path, fmt):
    return file_driver.FileDriver, {
        "file_volume_dir": str(tmp_path / "volumes"),
        "file_volume_format": fmt,
    }


class _IscsiOnFakeTgt(iscsi_driver.IscsiDriver):
    """The iscsi driver on an in-memory tgtd (no fences here)."""

    def __init__(self, conf, backend_name, host):
        super().__init__(conf, backend_name, host, runner=fake_tgt.FakeTgt(),
                         session=fake_tgt.FakeSessions())


class _NfsOnFolders(nfs_driver.NfsDriver):
    """The nfs driver on local folders standing in for mounted shares."""

    def __init__(self, conf, backend_name, host):
        super().__init__(conf, backend_name, host,
                         mounter=fake_libnfs.FakeShare)


def _nfs(tmp_path, qcow2):
    shares = []
    for name in ("share1", "share2"):
        (tmp_path / name).mkdir(exist_ok=True)
        shares.append("127.0.0.1:%s" % (tmp_path / name))
    (tmp_path / "nfs_shares").write_text("\n".join(shares) + "\n")
    return _NfsOnFolders, {"nfs_shares_config": str(tmp_path / "nfs_shares"),
                           "nfs_qcow2_volumes": qcow2,
                           "nfs_snapshot_support": True}


DRIVERS = {
    "nfs-raw": lambda tmp_path: _nfs(tmp_path, False),
    "nfs-qcow2": lambda tmp_path: _nfs(tmp_path, True),
    "file-raw": lambda tmp_path: _file(tmp_path, "raw"),
    "file-qcow2": lambda tmp_path: _file(tmp_path, "qcow2"),
    "fake": lambda tmp_path: (fake_driver.FakeDriver, {}),
    "iscsi": lambda tmp_path: (_IscsiOnFakeTgt, {
        "file_volume_dir": str(tmp_path / "volumes"),
        "iscsi_target_dir": str(tmp_path / "targets")}),
}


def make_driver(driver_cls, overrides):
    conf = cfg.ConfigOpts()
    driver_cls.register_opts(conf, BACKEND)
    conf(args=[], default_config_files=[])
    for name, value in overrides.items():
        conf.set_override(name, value, group=BACKEND)
    driver = driver_cls(conf[BACKEND], BACKEND, HOST)
    driver.do_setup()
    driver.check_for_setup_error()
    return driver


@pytest.fixture(params=sorted(DRIVERS))
def driver(request, tmp_path):
    return make_driver(*DRIVERS[request.param](tmp_path))


def new_volume(size=1):
    return base.DriverVolume(id=str(uuid.uuid4()), size=size, name="vol")


def only_pool(driver, refresh=True):
    stats = driver.get_volume_stats(refresh=refresh)
    assert len(stats["pools"]) == 1
    return stats["pools"][0]


def test_stats_shape(driver):
    stats = driver.get_volume_stats(refresh=True)
    assert stats["volume_backend_name"] == BACKEND
    for key in ("vendor_name", "driver_version", "storage_protocol"):
        assert isinstance(stats[key], str) and stats[key]
    pool = stats["pools"][0]
    for key, kind in POOL_KEYS.items():
        assert type(pool[key]) is kind, key
    assert pool["backend_state"] == "up"
    assert pool["total_volumes"] == 0
    assert 0 <= pool["free_capacity_gb"] <= pool["total_capacity_gb"]


def test_stats_follow_options(tmp_path):
    driver_cls, overrides = DRIVERS["fake"](tmp_path)
    driver = make_driver(driver_cls, {
        **overrides, "volume_backend_name": "gold",
        "reserved_percentage": 5, "max_over_subscription_ratio": 2.5})
    stats = driver.get_volume_stats(refresh=True)
    assert stats["volume_backend_name"] == "gold"
    assert stats["pools"][0]["pool_name"] == "gold"
    assert stats["pools"][0]["reserved_percentage"] == 5
    assert stats["pools"][0]["max_over_subscription_ratio"] == 2.5


def test_refresh_measures_again(driver):
    assert only_pool(driver)["total_volumes"] == 0
    driver.create_volume(new_volume())
    assert only_pool(driver, refresh=True)["total_volumes"] == 1


def test_create_counts_in_stats(driver):
    update = driver.create_volume(new_volume(size=3))
    assert isinstance(update, dict)
    pool = only_pool(driver)
    assert pool["total_volumes"] == 1
    assert pool["provisioned_capacity_gb"] == 3.0
    assert pool["allocated_capacity_gb"] == 3.0


def test_create_again_adopts_the_volume(driver):
    """A create resumed after the node died between the backend's work
    and the row's swap to available finds the volume and adopts it."""
    volume = new_volume()
    made = driver.create_volume(volume)
    assert driver.create_volume(volume) == made
    assert only_pool(driver)["total_volumes"] == 1


@pytest.mark.parametrize("size", [0, -1, 1.5, True, "1"])
def test_create_rejects_bad_size(driver, size):
    with pytest.raises(exception.InvalidInput):
        driver.create_volume(base.DriverVolume(id="v1", size=size))
    assert only_pool(driver)["total_volumes"] == 0


def test_extend_grows(driver):
    volume = new_volume(size=1)
    driver.create_volume(volume)
    driver.extend_volume(volume, 4)
    assert only_pool(driver)["provisioned_capacity_gb"] == 4.0


def test_extend_repeated_is_harmless(driver):
    volume = new_volume(size=1)
    driver.create_volume(volume)
    driver.extend_volume(volume, 2)
    driver.extend_volume(volume, 2)
    assert only_pool(driver)["provisioned_capacity_gb"] == 2.0


@pytest.mark.parametrize("new_size", [1, 0])
def test_extend_rejects_not_larger(driver, new_size):
    volume = new_volume(size=1)
    driver.create_volume(volume)
    with pytest.raises(exception.InvalidInput):
        driver.extend_volume(volume, new_size)


def test_extend_missing_volume(driver):
    with pytest.raises(exception.VolumeNotFound):
        driver.extend_volume(new_volume(), 2)


def test_delete(driver):
    volume = new_volume()
    driver.create_volume(volume)
    driver.delete_volume(volume)
    assert only_pool(driver)["total_volumes"] == 0


def test_delete_is_idempotent(driver):
    volume = new_volume()
    driver.create_volume(volume)
    driver.delete_volume(volume)
    driver.delete_volume(volume)
    driver.delete_volume(new_volume())


def test_create_after_delete(driver):
    volume = new_volume()
    driver.create_volume(volume)
    driver.delete_volume(volume)
    driver.create_volume(volume)
    assert only_pool(driver)["total_volumes"] == 1


def test_initialize_connection_shape(driver):
    volume = new_volume()
    driver.create_volume(volume)
    info = driver.initialize_connection(volume, CONNECTOR)
    assert isinstance(info["driver_volume_type"], str)
    assert info["data"]["volume_id"] == volume.id


def test_initialize_connection_missing_volume(driver):
    with pytest.raises(exception.VolumeNotFound):
        driver.initialize_connection(new_volume(), CONNECTOR)


def test_multiattach_connections_are_independent(driver):
    volume = new_volume()
    driver.create_volume(volume)
    first = driver.initialize_connection(volume, CONNECTOR)
    second = driver.initialize_connection(
        volume, {"host": "compute2", "initiator": "iqn.1993-08.org.debian:01:2"})
    assert first == second
    driver.terminate_connection(volume, CONNECTOR)
    driver.terminate_connection(volume, CONNECTOR)
    driver.terminate_connection(volume, None)


def test_terminate_connection_unknown_volume(driver):
    driver.terminate_connection(new_volume(), CONNECTOR)
    driver.terminate_connection(new_volume(), None)


# Snapshots and clones.

def new_snapshot(volume):
    return base.DriverSnapshot(id=str(uuid.uuid4()), volume=volume,
                               size=volume.size)


def test_stats_report_snapshots(driver):
    pool = only_pool(driver)
    assert pool["snapshot_support"] is True
    assert pool["revert_to_snapshot_support"] is True


def test_snapshot_is_not_a_volume(driver):
    volume = new_volume(size=2)
    driver.create_volume(volume)
    update = driver.create_snapshot(new_snapshot(volume))
    assert isinstance(update, dict)
    pool = only_pool(driver)
    assert pool["total_volumes"] == 1
    assert pool["provisioned_capacity_gb"] == 2.0


def test_create_snapshot_twice_refuses(driver):
    volume = new_volume()
    driver.create_volume(volume)
    snapshot = new_snapshot(volume)
    driver.create_snapshot(snapshot)
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_snapshot(snapshot)


def test_create_snapshot_of_missing_volume(driver):
    with pytest.raises(exception.VolumeNotFound):
        driver.create_snapshot(new_snapshot(new_volume()))


def test_delete_snapshot_is_idempotent(driver):
    volume = new_volume()
    driver.create_volume(volume)
    snapshot = new_snapshot(volume)
    driver.create_snapshot(snapshot)
    driver.delete_snapshot(snapshot)
    driver.delete_snapshot(snapshot)
    driver.delete_snapshot(new_snapshot(new_volume()))
    driver.create_snapshot(snapshot)  # the id is free again


def test_volume_from_snapshot(driver):
    volume = new_volume(size=1)
    driver.create_volume(volume)
    snapshot = new_snapshot(volume)
    driver.create_snapshot(snapshot)
    driver.extend_volume(volume, 2)
    copy = new_volume(size=3)
    made = driver.create_volume_from_snapshot(copy, snapshot)
    assert isinstance(made, dict)
    pool = only_pool(driver)
    assert pool["total_volumes"] == 2
    assert pool["provisioned_capacity_gb"] == 5.0
    assert driver.create_volume_from_snapshot(copy, snapshot) == made
    assert only_pool(driver)["total_volumes"] == 2
    driver.extend_volume(copy, 4)
    # the copy outlives its snapshot and the snapshot's volume
    driver.delete_snapshot(snapshot)
    driver.delete_volume(volume)
    assert only_pool(driver)["provisioned_capacity_gb"] == 4.0
    driver.initialize_connection(copy, CONNECTOR)


def test_volume_from_snapshot_refuses_smaller_size(driver):
    volume = new_volume(size=2)
    driver.create_volume(volume)
    snapshot = new_snapshot(volume)
    driver.create_snapshot(snapshot)
    with pytest.raises(exception.InvalidInput):
        driver.create_volume_from_snapshot(new_volume(size=1), snapshot)
    assert only_pool(driver)["total_volumes"] == 1


def test_volume_from_missing_snapshot(driver):
    volume = new_volume()
    driver.create_volume(volume)
    with pytest.raises(exception.SnapshotNotFound):
        driver.create_volume_from_snapshot(new_volume(), new_snapshot(volume))
    assert only_pool(driver)["total_volumes"] == 1


def test_cloned_volume(driver):
    source = new_volume(size=2)
    driver.create_volume(source)
    clone = new_volume(size=2)
    made = driver.create_cloned_volume(clone, source)
    assert isinstance(made, dict)
    pool = only_pool(driver)
    assert pool["total_volumes"] == 2
    assert pool["provisioned_capacity_gb"] == 4.0
    assert driver.create_cloned_volume(clone, source) == made
    assert only_pool(driver)["total_volumes"] == 2
    with pytest.raises(exception.InvalidInput):
        driver.create_cloned_volume(new_volume(size=1), source)
    driver.delete_volume(source)
    driver.extend_volume(clone, 3)
    assert only_pool(driver)["provisioned_capacity_gb"] == 3.0


def test_volume_locations_name_what_the_backend_holds(driver):
    kept, gone = new_volume(), new_volume()
    made = driver.create_volume(kept)
    driver.create_volume(gone)
    driver.delete_volume(gone)
    assert driver.volume_locations() == {
        kept.id: made["provider_location"]}


def test_cloned_volume_of_missing_source(driver):
    with pytest.raises(exception.VolumeNotFound):
        driver.create_cloned_volume(new_volume(), new_volume())
    assert only_pool(driver)["total_volumes"] == 0


def test_revert_keeps_the_volume_size(driver):
    volume = new_volume(size=1)
    driver.create_volume(volume)
    snapshot = new_snapshot(volume)
    driver.create_snapshot(snapshot)
    driver.extend_volume(volume, 3)
    driver.revert_to_snapshot(base.DriverVolume(volume.id, 3), snapshot)
    assert only_pool(driver)["provisioned_capacity_gb"] == 3.0
    with pytest.raises(exception.SnapshotNotFound):
        driver.revert_to_snapshot(volume, new_snapshot(volume))
    with pytest.raises(exception.VolumeNotFound):
        driver.revert_to_snapshot(new_volume(), snapshot)


@pytest.fixture
def fresh_entry_points(monkeypatch):
    # NOTE(ashlar): stevedore remembers each namespace's entry points for the
    # life of the process; start these tests from an empty memory.
    monkeypatch.setattr(extension.ExtensionManager, "ENTRY_POINT_CACHE", {})


@pytest.mark.usefixtures("fresh_entry_points")
def test_load_driver_unknown_name():
    with pytest.raises(exception.InvalidInput):
        base.load_driver("no-such-driver")


def register_entry_point(tmp_path, monkeypatch, name, target):
    dist_info = tmp_path / "ashlar_entry_points-0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ashlar-entry-points\nVersion: 0\n")
    (dist_info / "entry_points.txt").write_text(
        f"[{base.DRIVER_NAMESPACE}]\n{name} = {target}\n")
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.mark.usefixtures("fresh_entry_points")
@pytest.mark.parametrize("name, driver_cls", [
    ("file", file_driver.FileDriver),
    ("fake", fake_driver.FakeDriver),
    ("iscsi", iscsi_driver.IscsiDriver),
    ("nfs", nfs_driver.NfsDriver),
])
def test_load_driver_by_entry_point(tmp_path, monkeypatch, name, driver_cls):
    register_entry_point(tmp_path, monkeypatch, name,
                         f"{driver_cls.__module__}:{driver_cls.__name__}")
    assert base.load_driver(name) is driver_cls


@pytest.mark.usefixtures("fresh_entry_points")
def test_load_driver_refuses_other_classes(tmp_path, monkeypatch):
    register_entry_point(tmp_path, monkeypatch, "odd",
                         "drivers.base:DriverVolume")
    with pytest.raises(exception.InvalidInput):
        base.load_driver("odd")


# The fake's own knobs, which volume-manager tests rely on.

def test_fake_records_snapshots_and_origins():
    driver = make_driver(fake_driver.FakeDriver, {})
    volume = new_volume(size=2)
    driver.create_volume(volume)
    snapshot = new_snapshot(volume)
    driver.create_snapshot(snapshot)
    assert driver.snapshots == {snapshot.id: (volume.id, 2)}
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.delete_volume(volume)  # the service deletes snapshots first
    copy, clone = new_volume(size=2), new_volume(size=2)
    driver.create_volume_from_snapshot(copy, snapshot)
    driver.create_cloned_volume(clone, volume)
    assert driver.origins == {copy.id: ("snapshot", snapshot.id),
                              clone.id: ("volume", volume.id)}
    driver.revert_to_snapshot(volume, snapshot)
    assert driver.reverts == [(volume.id, snapshot.id)]
    driver.delete_snapshot(snapshot)
    driver.delete_volume(volume)
    assert volume.id not in driver.volumes

def test_fake_constructor_overrides_options():
    conf = cfg.ConfigOpts()
    fake_driver.register_opts(conf, BACKEND)
    conf(args=[], default_config_files=[])
    driver = fake_driver.FakeDriver(conf[BACKEND], BACKEND, HOST,
                             total_capacity_gb=10.0, multiattach=False)
    driver.create_volume(new_volume(size=4))
    pool = only_pool(driver)
    assert pool["total_capacity_gb"] == 10.0
    assert pool["free_capacity_gb"] == 6.0
    assert pool["multiattach"] is False


def test_fake_records_connections():
    driver = make_driver(fake_driver.FakeDriver, {"fake_multiattach": False})
    assert only_pool(driver)["multiattach"] is False
    volume = new_volume()
    driver.create_volume(volume)
    driver.initialize_connection(volume, CONNECTOR)
    driver.initialize_connection(volume, {"host": "compute2"})
    driver.terminate_connection(volume, CONNECTOR)
    assert driver.connections[volume.id] == [{"host": "compute2"}]
    driver.terminate_connection(volume, None)
    assert volume.id not in driver.connections


class _Moving:
    """A volume of another backend, as the hosts' data path reads it."""

    def __init__(self, fail=False):
        self.fail, self.read_bytes = fail, 0

    def read(self, offset, length):
        if self.fail:
            raise OSError("the source went away")
        self.read_bytes += length
        return b"moved".ljust(length, b"\0") if offset == 0 else bytes(length)

    def reader(self, connection):
        assert connection == {"driver_volume_type": "elsewhere"}
        return contextlib.nullcontext(self)


MOVING = {"protocol": "elsewhere",
          "connection": {"driver_volume_type": "elsewhere"}}


def test_the_generic_copy_makes_the_volume_once(driver):
    """A volume of another kind of backend is read whole through its
    connection; a second copy of it is refused; without a reader (or a
    connection) nothing is copied."""
    volume = new_volume()
    if isinstance(driver, fake_driver.FakeDriver):
        driver.copy_reader = _Moving().reader
        with pytest.raises(exception.VolumeBackendAPIException):
            driver.create_volume_from_copy(volume, MOVING)
        return
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_volume_from_copy(volume, MOVING)
    source = _Moving()
    driver.copy_reader = source.reader
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_volume_from_copy(volume, {"protocol": "elsewhere"})
    made = driver.create_volume_from_copy(volume, MOVING)
    assert source.read_bytes == volume.size * units.Gi
    assert driver.volume_locations() == {volume.id: made["provider_location"]}
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_volume_from_copy(volume, MOVING)


def test_a_failed_generic_copy_leaves_nothing(driver):
    if isinstance(driver, fake_driver.FakeDriver):
        pytest.skip("the fake copies from fakes only")
    driver.copy_reader = _Moving(fail=True).reader
    with pytest.raises((OSError, exception.VolumeBackendAPIException)):
        driver.create_volume_from_copy(new_volume(), MOVING)
    assert driver.volume_locations() == {}
