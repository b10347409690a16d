"""The RBD driver's manage and unmanage on a real Ceph cluster
(components/ceph.py): an image made with the ``rbd`` command is listed,
sized, adopted under its volume's name with its data, and left as it is
by an unmanage."""

import uuid

import pytest

from common import exception
from drivers import base
from tests.functional import test_rbd

DATA = b"made outside Ashlar"


def _images(ceph) -> list[str]:
    return ceph.ceph_rbd("ls", ceph.pool).split()


def _head(ceph, name: str, tmp_path) -> bytes:
    out = tmp_path / ("%s.raw" % name)
    ceph.ceph_rbd("export", "%s/%s" % (ceph.pool, name), str(out))
    return out.read_bytes()[:len(DATA)]


# NOTE(ashlar): the RBD driver built on the session's cluster, closed after
# the test, as test_rbd.py builds it.
driver = test_rbd.driver


def test_an_image_is_managed_and_unmanaged(driver, ceph, tmp_path):
    legacy = "legacy-%s" % uuid.uuid4().hex[:8]
    source = tmp_path / "data.raw"
    source.write_bytes(DATA + b"\0" * (10 * 2**20 - len(DATA)))
    ceph.ceph_rbd("import", str(source), "%s/%s" % (ceph.pool, legacy))
    listed = {e["reference"]["source-name"]: e
              for e in driver.manageable_volumes()}
    assert (listed[legacy]["size"], listed[legacy]["cinder_id"]) == (1, None)
    ref = {"source-name": legacy}
    assert driver.manage_existing_get_size(ref) == 1
    volume = base.DriverVolume(id=str(uuid.uuid4()), size=1)
    update = driver.manage_existing(volume, ref)
    name = "volume-%s" % volume.id
    assert update == {"provider_location": "%s/%s" % (ceph.pool, name)}
    images = _images(ceph)
    assert name in images and legacy not in images
    assert _head(ceph, name, tmp_path) == DATA
    assert driver.manage_existing(volume, ref) == update  # resumed
    driver.unmanage(volume)
    assert name in _images(ceph)
    listed = {e["reference"]["source-name"]: e
              for e in driver.manageable_volumes()}
    assert listed[name]["cinder_id"] == volume.id
    with pytest.raises(exception.ManageExistingInvalidReference):
        driver.manage_existing_get_size({"source-name": "no-such-image"})
    driver.delete_volume(volume)
