"""RBD snapshots and clones, the driver alone on a real Ceph cluster.

Data goes in and comes out through librbd on a connection of the test's
own, as the client that the driver uses.
"""

import uuid

import pytest

from common import exception
from drivers import base
from tests.functional import test_rbd

GIB = 1 << 30

# NOTE(ashlar): the RBD driver built on the session's cluster, as
# test_rbd.py builds it.
driver = test_rbd.driver


@pytest.fixture
def ioctx(ceph):
    import rados

    client = rados.Rados(rados_id=ceph.client, conffile=str(ceph.conf),
                         conf={"keyring": str(ceph.keyring(ceph.client))})
    client.connect(timeout=10)
    pool = client.open_ioctx(ceph.pool)
    yield pool
    pool.close()
    client.shutdown()


def _volume(size=1, multiattach=False):
    return base.DriverVolume(str(uuid.uuid4()), size, multiattach=multiattach)


def _snapshot(volume):
    return base.DriverSnapshot(str(uuid.uuid4()), volume, volume.size)


def _image(ioctx, volume, **kwargs):
    import rbd

    return rbd.Image(ioctx, "volume-%s" % volume.id, **kwargs)


def _write(ioctx, volume, data, offset=0):
    with _image(ioctx, volume) as image:
        image.write(data, offset)


def _read(ioctx, volume, length, offset=0):
    with _image(ioctx, volume, read_only=True) as image:
        return image.read(offset, length)


def _parent(ioctx, volume):
    import rbd

    with _image(ioctx, volume, read_only=True) as image:
        try:
            return image.parent_info()
        except rbd.ImageNotFound:
            return None


def _snaps(ioctx, volume):
    with _image(ioctx, volume, read_only=True) as image:
        return {snap["name"] for snap in image.list_snaps()}


def _exists(ioctx, volume):
    import rbd

    return "volume-%s" % volume.id in rbd.RBD().list(ioctx)


def test_reports_snapshot_capabilities(driver):
    pool = driver.get_volume_stats(refresh=True)["pools"][0]
    assert pool["snapshot_support"] is True
    assert pool["revert_to_snapshot_support"] is True


def test_volume_from_snapshot_has_the_data_of_then(driver, ioctx):
    source = _volume()
    driver.create_volume(source)
    _write(ioctx, source, b"before", 0)
    _write(ioctx, source, b"far away", 512 << 20)
    snapshot = _snapshot(source)
    assert driver.create_snapshot(snapshot) == {}
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.create_snapshot(snapshot)
    _write(ioctx, source, b"after!", 0)
    copy = _volume(size=2)
    assert driver.create_volume_from_snapshot(copy, snapshot) == {
        "provider_location": "volumes/volume-%s" % copy.id}
    assert _read(ioctx, copy, 6) == b"before"
    assert _read(ioctx, copy, 8, 512 << 20) == b"far away"
    assert _read(ioctx, source, 6) == b"after!"
    with _image(ioctx, copy, read_only=True) as image:
        assert image.size() == 2 * GIB
    pool, parent, snap = _parent(ioctx, copy)
    assert (parent, snap) == ("volume-%s" % source.id,
                              "snapshot-%s" % snapshot.id)
    # a resumed create adopts the image, never overwrites it
    assert driver.create_volume_from_snapshot(copy, snapshot) == {
        "provider_location": "volumes/volume-%s" % copy.id}
    assert _read(ioctx, copy, 6) == b"before"
    with pytest.raises(exception.InvalidInput):
        driver.create_volume_from_snapshot(
            _volume(size=1), base.DriverSnapshot(snapshot.id, source, 2))
    with pytest.raises(exception.SnapshotNotFound):
        driver.create_volume_from_snapshot(_volume(), _snapshot(source))
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.delete_volume(source)  # a user snapshot is still there
    driver.delete_snapshot(snapshot)
    driver.delete_volume(copy)
    driver.delete_volume(source)


def test_deleting_a_snapshot_flattens_its_clone(driver, ioctx):
    source = _volume()
    driver.create_volume(source)
    _write(ioctx, source, b"snapshotted")
    snapshot = _snapshot(source)
    driver.create_snapshot(snapshot)
    copy = _volume(multiattach=True)
    driver.create_volume_from_snapshot(copy, snapshot)
    assert _parent(ioctx, copy) is not None
    driver.delete_snapshot(snapshot)
    driver.delete_snapshot(snapshot)  # idempotent
    assert _parent(ioctx, copy) is None
    assert _snaps(ioctx, source) == set()
    assert _read(ioctx, copy, 11) == b"snapshotted"
    driver.delete_volume(source)
    assert _read(ioctx, copy, 11) == b"snapshotted"
    driver.delete_volume(copy)
    driver.delete_snapshot(snapshot)  # volume gone too: still no error


def test_a_clone_in_the_trash_keeps_its_snapshot_with_a_clear_error(
        driver, ioctx):
    import rbd

    source = _volume()
    driver.create_volume(source)
    snapshot = _snapshot(source)
    driver.create_snapshot(snapshot)
    copy = _volume()
    driver.create_volume_from_snapshot(copy, snapshot)
    with _image(ioctx, copy) as image:
        image_id = image.id()
    rbd.RBD().trash_move(ioctx, "volume-%s" % copy.id, 0)
    with pytest.raises(exception.VolumeBackendAPIException, match="trash"):
        driver.delete_snapshot(snapshot)
    assert snapshot.id in {s.split("-", 1)[1] for s in _snaps(ioctx, source)}
    rbd.RBD().trash_restore(ioctx, image_id, "volume-%s" % copy.id)
    driver.delete_snapshot(snapshot)
    assert _parent(ioctx, copy) is None
    for volume in (copy, source):
        driver.delete_volume(volume)


def test_multiattach_clone_has_only_layering_and_deep_flatten(driver, ceph):
    source = _volume()
    driver.create_volume(source)
    shared, plain = _volume(multiattach=True), _volume()
    driver.create_cloned_volume(shared, source)
    driver.create_cloned_volume(plain, source)
    snapshot = _snapshot(source)
    driver.create_snapshot(snapshot)
    from_snapshot = _volume(multiattach=True)
    driver.create_volume_from_snapshot(from_snapshot, snapshot)
    for volume in (shared, from_snapshot):
        assert test_rbd._features(ceph, volume.id) == {"layering",
                                                       "deep-flatten"}
    assert "exclusive-lock" in test_rbd._features(ceph, plain.id)
    driver.delete_snapshot(snapshot)
    for volume in (source, shared, plain, from_snapshot):
        driver.delete_volume(volume)


def test_clone_of_a_live_volume_survives_its_source(driver, ioctx):
    source = _volume()
    driver.create_volume(source)
    _write(ioctx, source, b"original")
    clone = _volume(size=3)
    assert driver.create_cloned_volume(clone, source) == {
        "provider_location": "volumes/volume-%s" % clone.id}
    hidden = "volume-%s.clone_snap" % clone.id
    assert _snaps(ioctx, source) == {hidden}
    assert _parent(ioctx, clone)[1:] == ("volume-%s" % source.id, hidden)
    _write(ioctx, source, b"changed!")
    assert _read(ioctx, clone, 8) == b"original"
    with pytest.raises(exception.InvalidInput):
        driver.create_cloned_volume(_volume(size=1), _volume(size=2))
    with pytest.raises(exception.VolumeNotFound):
        driver.create_cloned_volume(_volume(), _volume())
    driver.delete_volume(source)
    assert not _exists(ioctx, source)
    assert _parent(ioctx, clone) is None
    assert _read(ioctx, clone, 8) == b"original"
    with _image(ioctx, clone, read_only=True) as image:
        assert image.size() == 3 * GIB
    driver.delete_volume(clone)
    driver.delete_volume(source)  # idempotent


def test_a_clone_resumed_after_its_node_died_is_adopted(driver, ioctx):
    """A node killed after the hidden snapshot (or the clone) was made
    and before its row said so: the resumed create adopts what is there,
    data and all, and protects a hidden snapshot left unprotected."""
    source = _volume()
    driver.create_volume(source)
    _write(ioctx, source, b"original")
    half, whole = _volume(), _volume(size=2)
    hidden = "volume-%s.clone_snap" % half.id
    with _image(ioctx, source) as image:
        image.create_snap(hidden)
    assert driver.create_cloned_volume(half, source) == {
        "provider_location": "volumes/volume-%s" % half.id}
    with _image(ioctx, source, read_only=True) as image:
        assert image.is_protected_snap(hidden)
    made = driver.create_cloned_volume(whole, source)
    _write(ioctx, whole, b"written!", 8)
    assert driver.create_cloned_volume(whole, source) == made
    assert _read(ioctx, whole, 16) == b"originalwritten!"
    assert _read(ioctx, half, 8) == b"original"
    for volume in (half, whole, source):
        driver.delete_volume(volume)
    assert not _exists(ioctx, source)


def test_deleting_a_clone_drops_its_hidden_snapshot(driver, ioctx):
    source = _volume()
    driver.create_volume(source)
    clone = _volume()
    driver.create_cloned_volume(clone, source)
    assert _snaps(ioctx, source) == {"volume-%s.clone_snap" % clone.id}
    driver.delete_volume(clone)
    assert _snaps(ioctx, source) == set()
    driver.delete_volume(source)


def test_clone_depth_is_capped_by_flattening(driver, ioctx):
    limit = driver.conf.rbd_max_clone_depth
    chain = [_volume()]
    driver.create_volume(chain[0])
    _write(ioctx, chain[0], b"root data")
    for _ in range(limit + 1):
        chain.append(_volume())
        driver.create_cloned_volume(chain[-1], chain[-2])
    # clones 1..limit hang from their source; the next one would be deeper
    for depth in range(1, limit + 1):
        assert _parent(ioctx, chain[depth]) is not None, depth
    assert _parent(ioctx, chain[-1]) is None
    assert _snaps(ioctx, chain[-2]) == set()
    assert _read(ioctx, chain[-1], 9) == b"root data"
    for volume in chain:  # sources first: each flattens its clone
        driver.delete_volume(volume)
        assert not _exists(ioctx, volume)


def test_revert_restores_the_data_and_keeps_the_size(driver, ioctx):
    volume = _volume()
    driver.create_volume(volume)
    _write(ioctx, volume, b"good state")
    snapshot = _snapshot(volume)
    driver.create_snapshot(snapshot)
    _write(ioctx, volume, b"BAD STATE!")
    driver.extend_volume(volume, 2)
    grown = base.DriverVolume(volume.id, 2)
    driver.revert_to_snapshot(grown, snapshot)
    assert _read(ioctx, volume, 10) == b"good state"
    with _image(ioctx, volume, read_only=True) as image:
        assert image.size() == 2 * GIB
    pool = driver.get_volume_stats(refresh=True)["pools"][0]
    assert pool["provisioned_capacity_gb"] >= 2
    with pytest.raises(exception.SnapshotNotFound):
        driver.revert_to_snapshot(grown, _snapshot(volume))
    with pytest.raises(exception.VolumeBackendAPIException):
        driver.delete_volume(grown)  # a user snapshot is still there
    assert _exists(ioctx, volume)
    driver.delete_snapshot(snapshot)
    driver.delete_volume(grown)
    assert not _exists(ioctx, volume)
