"""The volume node's snapshot work (services/volume/snapshots.py through
the manager): create, delete, revert, volumes made from sources, failures
that become error statuses, and work resumed after a crash."""

import uuid
from unittest import mock


from common import exception
from common.db.api import messages as messages_db
from common.db.api import snapshots as snapshots_db
from common.db.api import volumes as volumes_db
from services.volume import resume
from services.volume import snapshots as volume_snapshots

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures


database = fixtures.database


def _snap(vol, status="creating"):
    return fixtures.make_snapshot(vol, status=status, expected={},
                                  progress="0%")


def _snap_status(snapshot_id):
    try:
        return snapshots_db.snapshot_get(fixtures.admin(), snapshot_id).status
    except exception.SnapshotNotFound:
        return None


def test_create_and_delete(mgr):
    vol = fixtures.make_volume_on(mgr.driver)
    snap = _snap(vol)
    mgr.create_snapshot(fixtures.admin(), snap.id)
    row = snapshots_db.snapshot_get(fixtures.admin(), snap.id)
    assert (row.status, row.progress) == ("available", "100%")
    assert row.provider_location == "fake://snapshot/%s" % snap.id
    snapshots_db.snapshot_cas(fixtures.admin(), snap.id, {},
                              {"status": "deleting"})
    mgr.delete_snapshot(fixtures.admin(), snap.id)
    assert _snap_status(snap.id) is None and snap.id not in \
        mgr.driver.snapshots
    assert volumes_db.volume_get(fixtures.admin(), vol.id).snapshot_count == 0


def test_driver_failures_become_error_statuses(mgr):
    vol = fixtures.make_volume_on(mgr.driver)
    snap = _snap(vol)
    with mock.patch.object(mgr.driver, "create_snapshot",
                           side_effect=RuntimeError("pool full")):
        mgr.create_snapshot(fixtures.admin(), snap.id)
    row = snapshots_db.snapshot_get(fixtures.admin(), snap.id)
    assert row.status == "error" and "pool full" in row.error_reason
    snapshots_db.snapshot_cas(fixtures.admin(), snap.id, {},
                              {"status": "deleting"})
    with mock.patch.object(mgr.driver, "delete_snapshot",
                           side_effect=RuntimeError("busy")):
        mgr.delete_snapshot(fixtures.admin(), snap.id)
    assert _snap_status(snap.id) == "error_deleting"
    told = messages_db.message_list(fixtures.admin(),
                                    filters={"resource_uuid": snap.id})
    assert sorted((m.event_id, m.resource_type, m.project_id)
                  for m in told) == [
        ("VOLUME_VOLUME_SNAPSHOT_009_013", "VOLUME_SNAPSHOT", "p1"),
        ("VOLUME_VOLUME_SNAPSHOT_010_016", "VOLUME_SNAPSHOT", "p1")]


def test_volumes_from_a_snapshot_and_from_a_volume(mgr):
    source = fixtures.make_volume_on(mgr.driver, size=2)
    snap = _snap(source)
    mgr.create_snapshot(fixtures.admin(), snap.id)
    from_snap = fixtures.make_volume(host="node1@b1#b1", status="creating",
                                     size=3, snapshot_id=snap.id)
    clone = fixtures.make_volume(host="node1@b1#b1", status="creating",
                                 size=2, source_volid=source.id)
    for vol in (from_snap, clone):
        mgr.create_volume(fixtures.admin(), vol.id)
        assert volumes_db.volume_get(fixtures.admin(), vol.id).status == \
            "available"
    assert mgr.driver.origins == {from_snap.id: ("snapshot", snap.id),
                                  clone.id: ("volume", source.id)}
    assert mgr.driver.volumes[from_snap.id] == 3


def test_a_source_gone_meanwhile_makes_an_error_not_a_blank_volume(mgr):
    vol = fixtures.make_volume(host="node1@b1#b1", status="creating",
                               snapshot_id=str(uuid.uuid4()))
    mgr.create_volume(fixtures.admin(), vol.id)
    row = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert row.status == "error" and "could not be found" in row.error_reason
    assert vol.id not in mgr.driver.volumes


def test_revert(mgr):
    vol = fixtures.make_volume_on(mgr.driver, status="reverting")
    snap = _snap(vol, status="restoring")
    mgr.driver.create_snapshot(volume_snapshots.driver_snapshot(snap))
    mgr.revert_to_snapshot(fixtures.admin(), vol.id, snap.id)
    assert volumes_db.volume_get(fixtures.admin(), vol.id).status == \
        "available"
    assert _snap_status(snap.id) == "available"
    assert mgr.driver.reverts == [(vol.id, snap.id)]


def test_failed_revert_leaves_the_volume_in_error(mgr):
    vol = fixtures.make_volume_on(mgr.driver, status="reverting")
    snap = _snap(vol, status="restoring")
    with mock.patch.object(mgr.driver, "revert_to_snapshot",
                           side_effect=RuntimeError("io")):
        mgr.revert_to_snapshot(fixtures.admin(), vol.id, snap.id)
    row = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert row.status == "error" and "io" in row.error_reason
    assert _snap_status(snap.id) == "available"


def test_snapshot_work_is_resumed_at_start(mgr):
    vol = fixtures.make_volume_on(mgr.driver)
    creating, deleting = _snap(vol), _snap(vol, status="deleting")
    mgr.driver.create_snapshot(volume_snapshots.driver_snapshot(deleting))
    resume.finish_interrupted_work(mgr)
    assert _snap_status(creating.id) == "available"
    assert _snap_status(deleting.id) is None


def test_a_revert_whose_snapshot_is_gone_ends_in_error(mgr):
    vol = fixtures.make_volume_on(mgr.driver, status="reverting")
    mgr.revert_to_snapshot(fixtures.admin(), vol.id, str(uuid.uuid4()))
    row = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert row.status == "error" and "gone" in row.error_reason


def test_a_revert_is_resumed_at_start(mgr):
    vol = fixtures.make_volume_on(mgr.driver, status="reverting")
    snap = _snap(vol, status="restoring")
    mgr.driver.create_snapshot(volume_snapshots.driver_snapshot(snap))
    resume.finish_interrupted_work(mgr)
    assert volumes_db.volume_get(fixtures.admin(), vol.id).status == \
        "available"
    assert mgr.driver.reverts == [(vol.id, snap.id)]


def test_a_copy_whose_type_this_pool_does_not_offer_ends_in_error(mgr):
    source = fixtures.make_volume_on(mgr.driver)
    vtype = fixtures.make_type(specs={"volume_backend_name": "elsewhere"})
    copy = fixtures.make_volume(host="node1@b1#b1", status="creating",
                                source_volid=source.id, vtype=vtype)
    mgr.create_volume(fixtures.admin(), copy.id)
    row = volumes_db.volume_get(fixtures.admin(), copy.id)
    assert row.status == "error"
    assert "volume_backend_name" in row.error_reason
    assert copy.id not in mgr.driver.volumes


def _cascade(mgr, count=2):
    """A volume and ``count`` snapshots, all ``deleting`` (as the api
    leaves a cascade)."""
    vol = fixtures.make_volume_on(mgr.driver)
    snaps = [_snap(vol) for _ in range(count)]
    for snap in snaps:
        mgr.create_snapshot(fixtures.admin(), snap.id)
        snapshots_db.snapshot_cas(fixtures.admin(), snap.id, {},
                                  {"status": "deleting"})
    volumes_db.volume_cas(fixtures.admin(), vol.id, {},
                          {"status": "deleting"})
    return vol, snaps


def test_a_cascade_deletes_the_snapshots_then_the_volume(mgr):
    vol, snaps = _cascade(mgr)
    mgr.delete_volume(fixtures.admin(), vol.id)
    assert [_snap_status(s.id) for s in snaps] == [None, None]
    assert not any(s.id in mgr.driver.snapshots for s in snaps)
    assert not volumes_db.volume_list(fixtures.admin(),
                                      filters={"id": vol.id})


def test_a_snapshot_that_fails_leaves_the_volume_error_deleting(mgr):
    vol, snaps = _cascade(mgr)
    with mock.patch.object(mgr.driver, "delete_snapshot",
                           side_effect=[None, RuntimeError("busy")]):
        mgr.delete_volume(fixtures.admin(), vol.id)
    assert [_snap_status(s.id) for s in snaps] == [None, "error_deleting"]
    row = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert row.status == "error_deleting"
    assert snaps[1].id in row.error_reason
    assert vol.id in mgr.driver.volumes


def test_a_snapshot_in_hand_elsewhere_keeps_the_volume_deleting(mgr):
    vol, snaps = _cascade(mgr, count=1)
    with mgr.here.in_hand(snaps[0].id):
        mgr.delete_volume(fixtures.admin(), vol.id)
    assert _snap_status(snaps[0].id) == "deleting"
    assert volumes_db.volume_get(fixtures.admin(), vol.id).status == \
        "deleting"
    mgr.delete_volume(fixtures.admin(), vol.id)
    assert _snap_status(snaps[0].id) is None


def test_the_driver_is_told_whether_the_volume_is_attached(mgr):
    """(The nfs driver refuses qcow2 overlays of attached volumes.)"""
    told = {}
    for attach_status in ("attached", "detached"):
        vol = fixtures.make_volume_on(
            mgr.driver, status="in-use" if attach_status == "attached"
            else "available", attach_status=attach_status)
        snap = _snap(vol)
        with mock.patch.object(mgr.driver, "create_snapshot",
                               wraps=mgr.driver.create_snapshot) as made:
            mgr.create_snapshot(fixtures.admin(), snap.id)
        told[attach_status] = made.call_args.args[0].volume.attached
    assert told == {"attached": True, "detached": False}
