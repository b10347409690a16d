"""The file backend's manage and unmanage (drivers/file_manage.py)."""

import hashlib
import os
import uuid

import pytest
from oslo_utils import units

from common import exception
from drivers import base
from drivers import qcow2

try:
    from tests.unit.drivers import test_file
except ImportError:  # pytest put tests/unit on sys.path instead
    from drivers import test_file  # type: ignore[no-redef]


@pytest.fixture
def driver(tmp_path):
    return test_file.make_driver(tmp_path)


def _write(driver, name, data=b"", size=None):
    path = os.path.join(driver.volume_dir, name)
    with open(path, "wb") as stream:
        stream.write(data)
        if size is not None:
            stream.truncate(size)
    return path


def _digest(path):
    with open(path, "rb") as stream:
        return hashlib.sha256(stream.read()).hexdigest()


def test_listing_describes_plain_files_and_rounds_sizes_up(driver):
    _write(driver, "disk.img", b"x", size=units.Gi + 1)
    _write(driver, ".hidden", b"x")
    with open(os.path.join(os.fsencode(driver.volume_dir), b"bad\xff"),
              "wb"):
        pass
    os.symlink("/etc/passwd", os.path.join(driver.volume_dir, "link"))
    vol, _path = test_file.create(driver)
    snap = driver.create_snapshot(base.DriverSnapshot(
        id=str(uuid.uuid4()), volume=vol, size=1))
    found = {e["reference"]["source-name"]: e
             for e in driver.manageable_volumes()}
    assert set(found) == {"disk.img", "volume-%s.raw" % vol.id}
    assert found["disk.img"]["size"] == 2
    assert found["disk.img"]["cinder_id"] is None
    assert found["volume-%s.raw" % vol.id]["cinder_id"] == vol.id
    (snapshot,) = driver.manageable_snapshots()
    assert snapshot["reference"] == {
        "source-name": os.path.basename(snap["provider_location"])}


def test_manage_renames_the_file_and_keeps_its_bytes(driver):
    path = _write(driver, "disk.img", os.urandom(4096), size=3 * units.Mi)
    digest = _digest(path)
    ref = {"source-name": "disk.img"}
    assert driver.manage_existing_get_size(ref) == 1
    vol = base.DriverVolume(id=str(uuid.uuid4()), size=1)
    update = driver.manage_existing(vol, ref)
    target = os.path.join(driver.volume_dir, "volume-%s.raw" % vol.id)
    assert update == {"provider_location": target}
    assert not os.path.exists(path) and _digest(target) == digest
    # Resumed after the rename: the file is its volume's already.
    assert driver.manage_existing(vol, ref) == update
    driver.unmanage(base.DriverVolume(id=vol.id, size=1))
    assert _digest(target) == digest
    conn = driver.initialize_connection(vol, test_file.CONNECTOR)
    assert conn["data"]["device_path"] == target


def test_manage_keeps_a_qcow2_image_in_its_format(tmp_path):
    driver = test_file.make_driver(tmp_path, fmt="qcow2")
    vol, _path = test_file.create(driver, size=2)
    source = os.path.join(driver.volume_dir, "volume-%s.qcow2" % vol.id)
    os.rename(source, os.path.join(driver.volume_dir, "img.qcow2"))
    ref = {"source-name": "img.qcow2"}
    assert driver.manage_existing_get_size(ref) == 2
    other = base.DriverVolume(id=str(uuid.uuid4()), size=2)
    driver.manage_existing(other, ref)
    with open(os.path.join(driver.volume_dir, "volume-%s.qcow2" % other.id),
              "rb") as image:
        assert qcow2.read_header(image.fileno()).size == 2 * units.Gi


@pytest.mark.parametrize("field,value", [
    ("backing_file_offset", 512), ("crypt_method", 2),
    ("incompatible_features", 4)])
def test_a_qcow2_image_that_reaches_elsewhere_is_refused(tmp_path, field,
                                                         value):
    """A backing file (say /etc/shadow), encryption or an external data
    file (incompatible feature bit 2) is refused, and the file kept."""
    driver = test_file.make_driver(tmp_path, fmt="qcow2")
    vol, _path = test_file.create(driver, size=1)
    path = os.path.join(driver.volume_dir, "img.qcow2")
    os.rename(os.path.join(driver.volume_dir, "volume-%s.qcow2" % vol.id),
              path)
    with open(path, "r+b") as image:
        header = qcow2.read_header(image.fileno())
        os.pwrite(image.fileno(), qcow2._HEADER.pack(
            *header._replace(**{field: value})), 0)
    before = _digest(path)
    ref = {"source-name": "img.qcow2"}
    with pytest.raises(exception.ManageExistingInvalidReference):
        driver.manage_existing_get_size(ref)
    with pytest.raises(exception.ManageExistingInvalidReference):
        driver.manage_existing(base.DriverVolume(id=str(uuid.uuid4()),
                                                 size=1), ref)
    assert _digest(path) == before


@pytest.mark.parametrize("ref", [
    {"source-name": "missing"}, {"source-name": "../etc/passwd"},
    {"source-name": ".volume-x.tmp"}, {"source-name": "link"},
    {"source-name": "fake.qcow2"}, {"source-id": "x"}, "disk.img"])
def test_invalid_references(driver, ref):
    _write(driver, "disk.img", b"x")
    _write(driver, "fake.qcow2", b"not an image" * 10)
    os.symlink(os.path.join(driver.volume_dir, "disk.img"),
               os.path.join(driver.volume_dir, "link"))
    with pytest.raises(exception.ManageExistingInvalidReference):
        driver.manage_existing_get_size(ref)
    with pytest.raises(exception.ManageExistingInvalidReference):
        driver.manage_existing(base.DriverVolume(id=str(uuid.uuid4()),
                                                 size=1), ref)


def test_manage_never_replaces_a_volume(driver):
    vol, _path = test_file.create(driver)
    _write(driver, "disk.img", b"x")
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.manage_existing(vol, {"source-name": "disk.img"})
    assert os.path.exists(os.path.join(driver.volume_dir, "disk.img"))


def test_snapshot_manage_renames_to_a_snapshot(driver):
    vol, _path = test_file.create(driver)
    _write(driver, "snap.img", b"y", size=units.Mi)
    ref = {"source-name": "snap.img"}
    assert driver.manage_existing_snapshot_get_size(ref) == 1
    snap = base.DriverSnapshot(id=str(uuid.uuid4()), volume=vol, size=1)
    update = driver.manage_existing_snapshot(snap, ref)
    assert os.path.basename(update["provider_location"]) == \
        "snapshot-%s.raw" % snap.id
    driver.unmanage_snapshot(snap)
    assert os.path.exists(update["provider_location"])


def test_a_volume_name_without_its_format_names_its_file(driver):
    """Tempest's default ``manage_volume_ref``: ``volume-%s``."""
    vol, path = test_file.create(driver)
    driver.unmanage(vol)
    ref = {"source-name": "volume-" + vol.id}
    assert driver.manage_existing_get_size(ref) == 1
    other = base.DriverVolume(id=str(uuid.uuid4()), size=1)
    update = driver.manage_existing(other, ref)
    assert not os.path.exists(path)
    assert update["provider_location"].endswith(
        "volume-%s.raw" % other.id)
