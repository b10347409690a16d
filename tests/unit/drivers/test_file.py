"""Tests of the file backend beyond the contract: files, qcow2, os-brick."""

import contextlib
import errno
import os
import stat
import struct
import uuid

import pytest
from os_brick.initiator.connectors import local
from oslo_config import cfg
from oslo_utils import units

from common import exception
from drivers import base
from drivers import file as file_driver
from drivers import qcow2
from drivers import sparse_copy

BACKEND = "file1"
HOST = "node1@file1"
CONNECTOR = {"host": "compute1"}
CLUSTER = 64 * units.Ki


def make_conf(**overrides):
    conf = cfg.ConfigOpts()
    file_driver.register_opts(conf, BACKEND)
    conf(args=[], default_config_files=[])
    for name, value in overrides.items():
        conf.set_override(name, value, group=BACKEND)
    return conf


def make_driver(tmp_path, fmt="raw", **overrides):
    conf = make_conf(file_volume_dir=str(tmp_path / "volumes"),
                     file_volume_format=fmt, **overrides)
    driver = file_driver.FileDriver(conf[BACKEND], BACKEND, HOST)
    driver.do_setup()
    driver.check_for_setup_error()
    return driver


def new_volume(size=1, volume_id=None):
    if volume_id is None:
        volume_id = str(uuid.uuid4())
    return base.DriverVolume(id=volume_id, size=size)


def create(driver, size=1):
    volume = new_volume(size)
    update = driver.create_volume(volume)
    return volume, update["provider_location"]


def pool(driver):
    return driver.get_volume_stats(refresh=True)["pools"][0]


def parse_qcow2(path):
    """Parse a qcow2 image by the spec's offsets, not with the driver."""
    with open(path, "rb") as image:
        data = image.read()
    header = {
        "magic": data[0:4],
        "version": struct.unpack(">I", data[4:8])[0],
        "backing_file_offset": struct.unpack(">Q", data[8:16])[0],
        "cluster_bits": struct.unpack(">I", data[20:24])[0],
        "size": struct.unpack(">Q", data[24:32])[0],
        "crypt_method": struct.unpack(">I", data[32:36])[0],
        "l1_size": struct.unpack(">I", data[36:40])[0],
        "l1_table_offset": struct.unpack(">Q", data[40:48])[0],
        "refcount_table_offset": struct.unpack(">Q", data[48:56])[0],
        "refcount_table_clusters": struct.unpack(">I", data[56:60])[0],
        "nb_snapshots": struct.unpack(">I", data[60:64])[0],
        "incompatible_features": struct.unpack(">Q", data[72:80])[0],
        "refcount_order": struct.unpack(">I", data[96:100])[0],
        "header_length": struct.unpack(">I", data[100:104])[0],
        "extension_end": data[104:112],
    }
    return header, data


# Files on disk.

def test_raw_volume_is_sparse(tmp_path):
    driver = make_driver(tmp_path)
    _, path = create(driver, size=2)
    info = os.stat(path)
    assert info.st_size == 2 * units.Gi
    assert info.st_blocks * 512 < units.Mi
    assert stat.S_IMODE(info.st_mode) == 0o660
    assert os.path.basename(path).endswith(".raw")


def test_raw_extend_keeps_data_and_stays_sparse(tmp_path):
    driver = make_driver(tmp_path)
    volume, path = create(driver)
    with open(path, "r+b") as handle:
        handle.write(b"payload")
    driver.extend_volume(volume, 3)
    info = os.stat(path)
    assert info.st_size == 3 * units.Gi
    assert info.st_blocks * 512 < units.Mi
    with open(path, "rb") as handle:
        assert handle.read(7) == b"payload"


def test_raw_extend_refuses_to_shrink_a_larger_file(tmp_path):
    driver = make_driver(tmp_path)
    volume, path = create(driver, size=1)
    os.truncate(path, 5 * units.Gi)
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.extend_volume(volume, 2)
    assert os.stat(path).st_size == 5 * units.Gi


def test_create_twice_adopts_the_file_and_keeps_data(tmp_path):
    driver = make_driver(tmp_path)
    volume, path = create(driver)
    with open(path, "r+b") as handle:
        handle.write(b"precious")
    assert driver.create_volume(volume) == {"provider_location": path}
    with open(path, "rb") as handle:
        assert handle.read(8) == b"precious"


def test_create_adopts_the_file_in_its_own_format(tmp_path):
    volume, path = create(make_driver(tmp_path, "raw"))
    qcow2_driver = make_driver(tmp_path, "qcow2")
    assert qcow2_driver.create_volume(volume) == {"provider_location": path}
    assert sorted(os.listdir(qcow2_driver.volume_dir)) == [
        os.path.basename(path)]


def test_failed_create_leaves_nothing(tmp_path, monkeypatch):
    driver = make_driver(tmp_path)

    def crash(fd, size_bytes):
        os.ftruncate(fd, size_bytes // 2)
        raise OSError(28, "No space left on device")

    monkeypatch.setitem(file_driver._WRITERS, "raw", crash)
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_volume(new_volume())
    assert os.listdir(driver.volume_dir) == []


def test_setup_removes_partial_files(tmp_path):
    driver = make_driver(tmp_path)
    partial = os.path.join(driver.volume_dir, ".volume-abc123.tmp")
    with open(partial, "wb") as handle:
        handle.truncate(units.Gi)
    assert pool(driver)["total_volumes"] == 0
    driver.do_setup()
    assert not os.path.exists(partial)


def test_foreign_files_are_not_volumes(tmp_path):
    driver = make_driver(tmp_path)
    with open(os.path.join(driver.volume_dir, "notes.txt"), "w") as handle:
        handle.write("x")
    create(driver)
    assert pool(driver)["total_volumes"] == 1


@pytest.mark.parametrize("volume_id", ["../escape", "a/b", "", ".hidden",
                                       "x" * 129])
def test_unsafe_ids_are_refused(tmp_path, volume_id):
    driver = make_driver(tmp_path)
    volume = new_volume(volume_id=volume_id)
    with pytest.raises(exception.InvalidInput):
        driver.create_volume(volume)
    with pytest.raises(exception.InvalidInput):
        driver.delete_volume(volume)
    assert os.listdir(tmp_path) == ["volumes"]


# qcow2.

def test_qcow2_header_parses_back(tmp_path):
    driver = make_driver(tmp_path, "qcow2")
    _, path = create(driver, size=1)
    header, data = parse_qcow2(path)
    assert header["magic"] == b"QFI\xfb"
    assert header["version"] == 3
    assert header["size"] == units.Gi
    assert header["cluster_bits"] == 16
    assert header["header_length"] == 104
    assert header["refcount_order"] == 4
    assert header["extension_end"] == bytes(8)
    for key in ("backing_file_offset", "crypt_method", "nb_snapshots",
                "incompatible_features"):
        assert header[key] == 0, key
    # 1 GiB of guest data needs two L1 entries (512 MiB each), both unset.
    assert header["l1_size"] == 2
    l1 = header["l1_table_offset"]
    assert l1 % CLUSTER == 0
    assert data[l1:l1 + 16] == bytes(16)
    assert len(data) % CLUSTER == 0


def test_qcow2_refcounts_cover_every_cluster(tmp_path):
    driver = make_driver(tmp_path, "qcow2")
    _, path = create(driver, size=1)
    header, data = parse_qcow2(path)
    table = header["refcount_table_offset"]
    assert table % CLUSTER == 0 and header["refcount_table_clusters"] == 1
    block = struct.unpack(">Q", data[table:table + 8])[0]
    assert block % CLUSTER == 0
    assert data[table + 8:table + CLUSTER] == bytes(CLUSTER - 8)
    clusters = len(data) // CLUSTER
    counts = struct.unpack(f">{clusters + 1}H",
                           data[block:block + 2 * (clusters + 1)])
    assert counts == (1,) * clusters + (0,)


def test_qcow2_header_reader_agrees(tmp_path):
    driver = make_driver(tmp_path, "qcow2")
    _, path = create(driver, size=3)
    expected, _ = parse_qcow2(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        header = qcow2.read_header(fd)
    finally:
        os.close(fd)
    assert header.size == expected["size"] == 3 * units.Gi
    assert header.l1_size == expected["l1_size"] == 6


def test_qcow2_is_small_and_sparse(tmp_path):
    driver = make_driver(tmp_path, "qcow2")
    _, path = create(driver, size=100)
    info = os.stat(path)
    assert info.st_size == 4 * CLUSTER
    assert info.st_blocks * 512 <= 4 * CLUSTER


def test_qcow2_extend_updates_header(tmp_path):
    driver = make_driver(tmp_path, "qcow2")
    volume, path = create(driver, size=1)
    length = os.stat(path).st_size
    driver.extend_volume(volume, 4096)
    header, data = parse_qcow2(path)
    assert header["size"] == 4096 * units.Gi
    assert header["l1_size"] == 8192
    assert len(data) == length
    assert pool(driver)["provisioned_capacity_gb"] == 4096.0


def test_qcow2_extend_beyond_l1_clusters_fails(tmp_path):
    driver = make_driver(tmp_path, "qcow2")
    volume, path = create(driver, size=1)
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.extend_volume(volume, 4097)
    assert parse_qcow2(path)[0]["size"] == units.Gi


def test_qcow2_extend_refuses_dirty_image(tmp_path):
    driver = make_driver(tmp_path, "qcow2")
    volume, path = create(driver, size=1)
    with open(path, "r+b") as handle:
        handle.seek(72)
        handle.write(struct.pack(">Q", 1))
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.extend_volume(volume, 2)


def test_qcow2_too_large_is_refused(tmp_path):
    driver = make_driver(tmp_path, "qcow2")
    with pytest.raises(exception.InvalidInput):
        driver.create_volume(new_volume(size=2 * units.Mi + 1))
    assert os.listdir(driver.volume_dir) == []


def test_format_follows_the_volume_not_the_option(tmp_path):
    volume, path = create(make_driver(tmp_path, "qcow2"), size=2)
    raw_driver = make_driver(tmp_path, "raw")
    info = raw_driver.initialize_connection(volume, CONNECTOR)
    assert info["data"]["format"] == "qcow2"
    assert info["data"]["device_path"] == path
    assert pool(raw_driver)["provisioned_capacity_gb"] == 2.0
    raw_driver.delete_volume(volume)
    assert not os.path.exists(path)


# Capabilities.

def test_capacity_matches_statvfs(tmp_path):
    driver = make_driver(tmp_path)
    create(driver, size=5)
    stats = pool(driver)
    fs = os.statvfs(driver.volume_dir)
    assert stats["total_capacity_gb"] == round(
        fs.f_blocks * fs.f_frsize / units.Gi, 2)
    assert stats["free_capacity_gb"] == pytest.approx(
        fs.f_bavail * fs.f_frsize / units.Gi, abs=0.02)
    assert stats["allocated_capacity_gb"] == 5.0
    assert stats["thin_provisioning_support"] is True
    assert stats["thick_provisioning_support"] is False


def test_stats_are_cached_until_refresh(tmp_path):
    driver = make_driver(tmp_path)
    first = driver.get_volume_stats()
    create(driver)
    assert driver.get_volume_stats() == first
    assert driver.get_volume_stats(refresh=True) != first


@pytest.mark.parametrize("fmt, option, expected", [
    ("raw", True, True),
    ("raw", False, False),
    ("qcow2", True, False),
    ("qcow2", False, False),
])
def test_multiattach_reflects_format(tmp_path, fmt, option, expected):
    driver = make_driver(tmp_path, fmt, file_multiattach=option)
    stats = pool(driver)
    assert stats["multiattach"] is expected
    assert stats["online_extend_support"] is (fmt == "raw")


def test_over_subscription_ratio_option(tmp_path):
    driver = make_driver(tmp_path, max_over_subscription_ratio=3.0)
    assert pool(driver)["max_over_subscription_ratio"] == 3.0


def test_missing_directory_reports_down(tmp_path):
    driver = make_driver(tmp_path)
    os.rmdir(driver.volume_dir)
    stats = pool(driver)
    assert stats["backend_state"] == "down"
    assert stats["free_capacity_gb"] == 0.0
    with pytest.raises(exception.DriverNotInitialized):
        driver.check_for_setup_error()


def test_setup_fails_when_directory_is_a_file(tmp_path):
    blocker = tmp_path / "volumes"
    blocker.write_text("not a directory")
    conf = make_conf(file_volume_dir=str(blocker))
    driver = file_driver.FileDriver(conf[BACKEND], BACKEND, HOST)
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.do_setup()


def test_default_directory_is_under_state_path(tmp_path):
    conf = make_conf()
    conf.register_opt(cfg.StrOpt("state_path", default=str(tmp_path)))
    driver = file_driver.FileDriver(conf[BACKEND], BACKEND, HOST)
    driver.do_setup()
    assert driver.volume_dir == str(tmp_path / "volumes")
    assert os.path.isdir(driver.volume_dir)


def test_list_opts():
    (group, opts), = file_driver.list_opts()
    names = {opt.name for opt in opts}
    assert {"file_volume_dir", "file_volume_format", "file_multiattach",
            "volume_backend_name", "reserved_percentage",
            "max_over_subscription_ratio"} <= names
    assert group == base.SAMPLE_GROUP


# os-brick.

@pytest.mark.parametrize("fmt", ["raw", "qcow2"])
def test_local_connector_accepts_connection_info(tmp_path, fmt):
    driver = make_driver(tmp_path, fmt)
    volume, path = create(driver)
    info = driver.initialize_connection(volume, CONNECTOR)
    assert info["driver_volume_type"] == "local"
    connector = local.LocalConnector(None)
    device = connector.connect_volume(info["data"])
    assert device == {"type": "local", "path": path}
    assert os.path.exists(device["path"])
    assert connector.get_volume_paths(info["data"]) == [path]
    connector.disconnect_volume(info["data"], device)
    driver.terminate_connection(volume, CONNECTOR)


def test_local_connector_needs_device_path():
    # NOTE(ashlar): this is the only key LocalConnector reads; the test
    # above passes because the driver provides it.
    with pytest.raises(ValueError):
        local.LocalConnector(None).connect_volume({"volume_id": "v"})


# Snapshots and clones.

WRITES = {0: b"first block", 300 * units.Mi: b"middle", units.Gi - 5: b"tail!"}


def write_blocks(path, writes=WRITES):
    with open(path, "r+b") as handle:
        for offset, data in writes.items():
            handle.seek(offset)
            handle.write(data)


def read_blocks(path, writes=WRITES):
    with open(path, "rb") as handle:
        found = {}
        for offset, data in writes.items():
            handle.seek(offset)
            found[offset] = handle.read(len(data))
    return found


def snapshot_of(volume, snapshot_id=None):
    return base.DriverSnapshot(snapshot_id or str(uuid.uuid4()), volume,
                               volume.size)


def no_reflink(monkeypatch):
    def refuse(fd, request, arg=0):
        assert request == sparse_copy._FICLONE
        raise OSError(errno.EOPNOTSUPP, "Operation not supported")

    monkeypatch.setattr(sparse_copy.fcntl, "ioctl", refuse)


@pytest.mark.parametrize("copy_file_range", [True, False])
def test_sparse_copy_keeps_holes(tmp_path, monkeypatch, copy_file_range):
    no_reflink(monkeypatch)
    if not copy_file_range:
        def unsupported(*args):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        monkeypatch.setattr(sparse_copy.os, "copy_file_range", unsupported)
    driver = make_driver(tmp_path)
    volume, path = create(driver, size=1)
    write_blocks(path)
    update = driver.create_snapshot(snapshot_of(volume))
    copy = os.stat(update["provider_location"])
    assert copy.st_size == units.Gi
    assert copy.st_blocks * 512 < units.Mi
    assert read_blocks(update["provider_location"]) == WRITES
    with open(update["provider_location"], "rb") as handle:
        handle.seek(units.Mi)
        assert handle.read(units.Mi) == bytes(units.Mi)


def test_copy_stays_sparse_with_or_without_reflink(tmp_path):
    # NOTE(ashlar): whichever the file system of tmp_path offers.
    driver = make_driver(tmp_path)
    volume, path = create(driver, size=1)
    write_blocks(path)
    clone = new_volume(size=1)
    clone_path = driver.create_cloned_volume(clone, volume)[
        "provider_location"]
    assert os.stat(clone_path).st_blocks * 512 < units.Mi
    assert read_blocks(clone_path) == WRITES


def test_another_file_backend_copies_a_moving_volume(tmp_path):
    """A volume moving between file backends: the destination copies the
    file the source names, keeping its id, data and format."""
    source_driver = make_driver(tmp_path / "a", "qcow2")
    volume, path = create(source_driver)
    source = source_driver.copy_source(volume)
    assert source == {"protocol": "local", "path": path, "format": "qcow2",
                      "connection": {"driver_volume_type": "local",
                                     "device_path": path, "format": "qcow2",
                                     "volume_id": volume.id,
                                     "access_mode": "ro"}}
    dest_driver = make_driver(tmp_path / "b")
    dest_path = dest_driver.create_volume_from_copy(volume, source)[
        "provider_location"]
    assert dest_path == os.path.join(str(tmp_path / "b" / "volumes"),
                                     "volume-%s.qcow2" % volume.id)
    with open(path, "rb") as one, open(dest_path, "rb") as other:
        assert one.read() == other.read()


class _Source:
    """A moving volume another backend holds, as the data path reads it."""

    def __init__(self, blocks, length):
        self.blocks, self.length, self.opened = blocks, length, []

    def read(self, offset, length):
        data = bytearray(min(length, self.length - offset))
        for start, block in self.blocks.items():
            for at, byte in enumerate(block, start - offset):
                if 0 <= at < len(data):
                    data[at] = byte
        return bytes(data)

    def reader(self, connection):
        self.opened.append(connection)
        return contextlib.nullcontext(self)


def test_the_generic_copy_reads_the_sources_connection(tmp_path):
    """A volume of another kind of backend (or a file this host does not
    see) is read through its connection: raw here, data where it was,
    holes kept, whatever file_volume_format says."""
    driver = make_driver(tmp_path, "qcow2")
    volume = new_volume()
    source = _Source(WRITES, units.Gi)
    driver.copy_reader = source.reader
    connection = {"driver_volume_type": "rbd", "name": "volumes/x"}
    path = driver.create_volume_from_copy(volume, {
        "protocol": "ceph", "connection": connection})["provider_location"]
    assert source.opened == [connection]
    assert path.endswith("volume-%s.raw" % volume.id)
    assert os.stat(path).st_size == units.Gi
    assert os.stat(path).st_blocks * 512 < 4 * sparse_copy.STREAM_CHUNK
    assert read_blocks(path) == WRITES


def test_the_generic_copy_refuses_a_volume_here_and_leaves_nothing(tmp_path):
    driver = make_driver(tmp_path)
    volume, _ = create(driver)
    driver.copy_reader = _Source(WRITES, units.Gi).reader
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_volume_from_copy(volume, {
            "protocol": "ceph", "connection": {"driver_volume_type": "rbd"}})
    other = new_volume()

    def broken(connection):
        raise OSError("the source's node is gone")
    driver.copy_reader = broken
    before = sorted(os.listdir(driver.volume_dir))
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_volume_from_copy(other, {
            "protocol": "ceph", "connection": {"driver_volume_type": "rbd"}})
    assert sorted(os.listdir(driver.volume_dir)) == before


def test_stream_writes_data_not_zeros_and_stops_at_a_short_read():
    source = (b"a" * 10 + bytes(sparse_copy.STREAM_CHUNK)
              + b"b" * 5)
    writes = []
    written = sparse_copy.stream(
        lambda offset, length: source[offset:offset + length],
        lambda offset, data: writes.append((offset, data)), 4 * units.Gi)
    chunk = sparse_copy.STREAM_CHUNK
    assert writes == [(0, source[:chunk]), (chunk, source[chunk:])]
    assert written == len(source)


@pytest.mark.parametrize("source", [
    {"protocol": "rbd", "name": "pool/volume"},
    {"protocol": "local", "path": "/nowhere/volume-x.raw", "format": "raw"},
    {"protocol": "local", "path": "/etc/passwd", "format": "vmdk"},
    {"protocol": "local", "path": "/etc/passwd", "format": "raw"}])
def test_a_copy_this_host_cannot_read_is_refused(tmp_path, source):
    driver = make_driver(tmp_path)
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_volume_from_copy(new_volume(), source)
    assert not os.listdir(driver.volume_dir)


def test_reflink_is_tried_first(tmp_path, monkeypatch):
    calls = []

    def reflink(fd, request, arg=0):
        calls.append(request)
        os.ftruncate(fd, os.fstat(arg).st_size)
        os.pwrite(fd, os.pread(arg, 11, 0), 0)

    monkeypatch.setattr(sparse_copy.fcntl, "ioctl", reflink)
    monkeypatch.setattr(sparse_copy, "_sparse_copy", None)  # never called
    driver = make_driver(tmp_path)
    volume, path = create(driver)
    write_blocks(path, {0: b"first block"})
    snap = driver.create_snapshot(snapshot_of(volume))["provider_location"]
    assert calls == [sparse_copy._FICLONE]
    assert read_blocks(snap, {0: b"first block"}) == {0: b"first block"}


def test_volume_from_snapshot_has_the_data_of_then(tmp_path):
    driver = make_driver(tmp_path)
    volume, path = create(driver, size=1)
    write_blocks(path, {0: b"before"})
    snapshot = snapshot_of(volume)
    snap_path = driver.create_snapshot(snapshot)["provider_location"]
    assert os.path.basename(snap_path) == f"snapshot-{snapshot.id}.raw"
    assert stat.S_IMODE(os.stat(snap_path).st_mode) == 0o660
    write_blocks(path, {0: b"after!"})
    copy = new_volume(size=2)
    copy_path = driver.create_volume_from_snapshot(copy, snapshot)[
        "provider_location"]
    assert copy_path.endswith(f"volume-{copy.id}.raw")
    assert read_blocks(copy_path, {0: b"before"}) == {0: b"before"}
    info = os.stat(copy_path)
    assert info.st_size == 2 * units.Gi
    assert info.st_blocks * 512 < units.Mi
    assert stat.S_IMODE(info.st_mode) == 0o660
    # the copy is a file of its own: the snapshot and source may go
    driver.delete_snapshot(snapshot)
    driver.delete_volume(volume)
    assert read_blocks(copy_path, {0: b"before"}) == {0: b"before"}


def test_clone_of_raw_is_raw_and_may_be_shared(tmp_path):
    driver = make_driver(tmp_path, file_multiattach=True)
    volume, path = create(driver)
    write_blocks(path, {4096: b"shared data"})
    clone = base.DriverVolume(str(uuid.uuid4()), 1, multiattach=True)
    clone_path = driver.create_cloned_volume(clone, volume)[
        "provider_location"]
    assert clone_path.endswith(".raw")
    assert read_blocks(clone_path, {4096: b"shared data"}) == {
        4096: b"shared data"}
    info = driver.initialize_connection(clone, CONNECTOR)
    assert info["data"]["format"] == "raw"


def test_clone_keeps_the_source_format(tmp_path):
    raw_volume, _ = create(make_driver(tmp_path, "raw"))
    qcow2_driver = make_driver(tmp_path, "qcow2")
    clone = new_volume(size=2)
    clone_path = qcow2_driver.create_cloned_volume(clone, raw_volume)[
        "provider_location"]
    assert clone_path.endswith(".raw")
    assert os.stat(clone_path).st_size == 2 * units.Gi


def test_qcow2_clone_is_a_grown_copy(tmp_path):
    driver = make_driver(tmp_path, "qcow2")
    volume, path = create(driver, size=1)
    clone = new_volume(size=3)
    clone_path = driver.create_cloned_volume(clone, volume)[
        "provider_location"]
    assert clone_path.endswith(".qcow2")
    header, data = parse_qcow2(clone_path)
    assert header["size"] == 3 * units.Gi
    assert parse_qcow2(path)[0]["size"] == units.Gi
    assert len(data) == os.stat(path).st_size
    shared = base.DriverVolume(str(uuid.uuid4()), 1, multiattach=True)
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_cloned_volume(shared, volume)
    assert driver._find(shared.id) is None


def test_copy_never_overwrites(tmp_path):
    driver = make_driver(tmp_path)
    volume, _ = create(driver)
    other, other_path = create(driver)
    write_blocks(other_path, {0: b"precious"})
    snapshot = snapshot_of(volume)
    driver.create_snapshot(snapshot)
    # NOTE(ashlar): a copy onto an existing volume adopts it (a resumed
    # create), which keeps its data.
    driver.create_cloned_volume(other, volume)
    driver.create_volume_from_snapshot(other, snapshot)
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_volume_from_copy(other, driver.copy_source(other))
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_snapshot(snapshot_of(other, snapshot.id))
    assert read_blocks(other_path, {0: b"precious"}) == {0: b"precious"}


def test_failed_copy_leaves_nothing(tmp_path, monkeypatch):
    driver = make_driver(tmp_path)
    volume, _ = create(driver)
    before = sorted(os.listdir(driver.volume_dir))

    def crash(source, target):
        os.ftruncate(target, units.Mi)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sparse_copy, "copy", crash)
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_snapshot(snapshot_of(volume))
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_cloned_volume(new_volume(), volume)
    assert sorted(os.listdir(driver.volume_dir)) == before


@pytest.mark.parametrize("fmt", ["raw", "qcow2"])
def test_revert_restores_the_data_and_keeps_the_size(tmp_path, fmt):
    driver = make_driver(tmp_path, fmt)
    volume, path = create(driver, size=1)
    write_blocks(path, {2 * units.Mi: b"good state"})
    snapshot = snapshot_of(volume)
    driver.create_snapshot(snapshot)
    write_blocks(path, {2 * units.Mi: b"BAD STATE!"})
    driver.extend_volume(volume, 2)
    grown = base.DriverVolume(volume.id, 2)
    driver.revert_to_snapshot(grown, snapshot)
    assert read_blocks(path, {2 * units.Mi: b"good state"}) == {
        2 * units.Mi: b"good state"}
    assert pool(driver)["provisioned_capacity_gb"] == 2.0
    if fmt == "raw":
        assert os.stat(path).st_size == 2 * units.Gi
        assert os.stat(path).st_blocks * 512 < units.Mi
    else:
        assert parse_qcow2(path)[0]["size"] == 2 * units.Gi
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o660
    with pytest.raises(exception.SnapshotNotFound):
        driver.revert_to_snapshot(grown, snapshot_of(volume))
    with pytest.raises(exception.VolumeNotFound):
        driver.revert_to_snapshot(new_volume(), snapshot)


def test_snapshot_files_are_not_volumes(tmp_path):
    driver = make_driver(tmp_path)
    volume, _ = create(driver, size=3)
    snapshot = snapshot_of(volume)
    snap_path = driver.create_snapshot(snapshot)["provider_location"]
    stats = pool(driver)
    assert stats["total_volumes"] == 1
    assert stats["provisioned_capacity_gb"] == 3.0
    driver.do_setup()  # drops partial files only
    assert os.path.exists(snap_path)
    driver.delete_volume(volume)
    assert pool(driver)["total_volumes"] == 0
    assert os.path.exists(snap_path)
    driver.delete_snapshot(snapshot)
    driver.delete_snapshot(snapshot)
    assert os.listdir(driver.volume_dir) == []


def test_unsafe_snapshot_ids_are_refused(tmp_path):
    driver = make_driver(tmp_path)
    volume, _ = create(driver)
    bad = base.DriverSnapshot("../escape", volume, 1)
    with pytest.raises(exception.InvalidInput):
        driver.create_snapshot(bad)
    with pytest.raises(exception.InvalidInput):
        driver.delete_snapshot(bad)
