"""A retype that moves a volume to another pool, on the volume nodes'
side: the source starts the move, the destination copies and takes the
volume, the source removes what it left (``common.migration``)."""

import datetime
from unittest import mock

import pytest
import sqlalchemy as sa

from common import exception
from common import migration
from common.db import models
from common.db.api import engine as db_engine
from common.db.api import timestamps
from common.db.api import volumes as volumes_db
from services.volume import backend as volume_backend
from services.volume import resume

try:
    from tests.unit.db import fixtures
    from tests.unit.volume import conftest
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures
    from volume import conftest


database = fixtures.database
SOURCE, DEST = "node1@b1#b1", "node2@b2#b2"


@pytest.fixture
def dest():
    """A second volume node, ``node2@b2``, on the fake driver."""
    return conftest.make_manager("node2", "b2")


def _get(vol):
    return volumes_db.volume_get(fixtures.admin(), vol.id)


def _elsewhere():
    return fixtures.make_type(specs={"volume_backend_name": "b2"})


def _retyping(mgr, vtype, **values):
    return fixtures.make_volume_on(mgr.driver, status="retyping",
                                   previous_status="available",
                                   pending_type_id=vtype.id, **values)


def _moving(mgr, vtype, **values):
    return _retyping(mgr, vtype, migration_status="migrating", **values)


@pytest.mark.parametrize("before", [None, "success", "error"])
def test_on_demand_retype_the_pool_fails_starts_a_move(mgr, before):
    vtype = _elsewhere()
    vol = _retyping(mgr, vtype, migration_status=before)
    mgr.retype_volume(fixtures.admin(), vol.id, vtype.id, "on-demand")
    row = _get(vol)
    assert (row.status, row.migration_status, row.host) == (
        "retyping", "migrating", SOURCE)
    (_ctxt, volume_id, type_id, source, host), _kw = (
        mgr.here.scheduler_rpcapi.migrate_volume.call_args)
    assert (volume_id, type_id, source, host) == (
        vol.id, vtype.id, {"protocol": "fake", "volume_id": vol.id}, None)


@pytest.mark.parametrize("values", [{"snapshot_count": 1},
                                    {"attachment_count": 1}])
def test_a_volume_a_copy_cannot_carry_keeps_its_type(mgr, values):
    vtype = _elsewhere()
    vol = _retyping(mgr, vtype, **values)
    old_type = vol.volume_type_id
    mgr.retype_volume(fixtures.admin(), vol.id, vtype.id, "on-demand")
    row = _get(vol)
    assert (row.volume_type_id, row.migration_status) == (old_type, None)
    assert row.status != "retyping"
    mgr.here.scheduler_rpcapi.migrate_volume.assert_not_called()


def test_a_backend_that_cannot_be_copied_from_ends_the_move(mgr):
    vtype = _elsewhere()
    vol = _retyping(mgr, vtype)
    with mock.patch.object(mgr.driver, "copy_source", side_effect=(
            exception.VolumeBackendAPIException(data="no export"))):
        mgr.retype_volume(fixtures.admin(), vol.id, vtype.id, "on-demand")
    row = _get(vol)
    assert (row.status, row.volume_type_id, row.migration_status) == (
        "available", vol.volume_type_id, "error")
    assert "no export" in row.error_reason
    mgr.here.scheduler_rpcapi.migrate_volume.assert_not_called()


def test_the_destination_copies_and_takes_the_volume(mgr, dest):
    vtype = fixtures.make_type(specs={"volume_backend_name": "b2",
                                      "multiattach": "<is> True"})
    vol = _moving(mgr, vtype)
    source = mgr.driver.copy_source(volume_backend.driver_volume(vol))
    dest.migrate_volume_in(fixtures.admin(), vol.id, DEST, SOURCE, source,
                           vtype.id)
    row = _get(vol)
    assert (row.status, row.host, row.volume_type_id, row.multiattach,
            row.migration_status, row.pending_type_id,
            row.provider_location) == (
        "available", DEST, vtype.id, True, "success", None,
        "fake://b2/%s" % vol.id)
    assert dest.driver.origins[vol.id] == ("copy", vol.id)
    (_ctxt, volume_id, host, size, location), _kw = (
        dest.here.volume_rpcapi.delete_migrated.call_args)
    assert (volume_id, host, size, location) == (vol.id, SOURCE, 1,
                                                 "fake://x")
    mgr.delete_migrated(fixtures.admin(), vol.id, size, location)
    assert vol.id not in mgr.driver.volumes


def test_a_failed_copy_leaves_the_volume_where_it_was(mgr, dest):
    vtype = _elsewhere()
    vol = _moving(mgr, vtype)
    old_type = vol.volume_type_id
    dest.migrate_volume_in(fixtures.admin(), vol.id, DEST, SOURCE,
                           {"protocol": "local", "path": "/nowhere"},
                           vtype.id)
    row = _get(vol)
    assert (row.status, row.host, row.volume_type_id, row.migration_status,
            row.pending_type_id) == ("available", SOURCE, old_type, "error",
                                     None)
    assert "cannot copy a volume from local" in row.error_reason
    assert vol.id not in dest.driver.volumes
    dest.here.volume_rpcapi.delete_migrated.assert_not_called()


def test_a_volume_reset_during_the_copy_keeps_no_copy(mgr, dest):
    """An admin reset while the data was copied wins: the destination
    removes its copy instead of taking the volume."""
    vtype = _elsewhere()
    vol = _moving(mgr, vtype)
    copy = dest.driver.create_volume_from_copy

    def reset_then_copy(volume, source):
        volumes_db.volume_cas(fixtures.admin(), vol.id, {},
                              {"status": "available",
                               "migration_status": None})
        return copy(volume, source)

    with mock.patch.object(dest.driver, "create_volume_from_copy",
                           side_effect=reset_then_copy):
        dest.migrate_volume_in(fixtures.admin(), vol.id, DEST, SOURCE,
                               {"protocol": "fake", "volume_id": vol.id},
                               vtype.id)
    row = _get(vol)
    assert (row.host, row.volume_type_id) == (SOURCE, vol.volume_type_id)
    assert vol.id not in dest.driver.volumes
    dest.here.volume_rpcapi.delete_migrated.assert_not_called()


def test_the_source_keeps_a_copy_its_row_points_to(mgr):
    vol = fixtures.make_volume_on(mgr.driver)
    mgr.delete_migrated(fixtures.admin(), vol.id, 1, "fake://x")
    assert vol.id in mgr.driver.volumes


def test_a_restart_leaves_a_moving_volume_to_its_move(mgr):
    vtype = _elsewhere()
    vol = _moving(mgr, vtype)
    with mock.patch.object(mgr.reporter, "capacity_changed"):
        resume.finish_interrupted_work(mgr)
    row = _get(vol)
    assert (row.status, row.migration_status) == ("retyping", "migrating")


def _migrating(mgr, migration_status="starting"):
    return fixtures.make_volume_on(mgr.driver, status="maintenance",
                                   previous_status="available",
                                   migration_status=migration_status)


def test_an_admin_migrate_moves_the_volume_with_its_type(mgr, dest):
    vol = _migrating(mgr)
    mgr.migrate_volume(fixtures.admin(), vol.id, DEST)
    assert _get(vol).migration_status == "migrating"
    (_ctxt, volume_id, type_id, source, host), _kw = (
        mgr.here.scheduler_rpcapi.migrate_volume.call_args)
    assert (volume_id, type_id, host) == (vol.id, vol.volume_type_id, DEST)
    dest.migrate_volume_in(fixtures.admin(), vol.id, DEST, SOURCE, source,
                           type_id)
    row = _get(vol)
    assert (row.status, row.host, row.volume_type_id, row.migration_status,
            row.previous_status) == ("available", DEST, vol.volume_type_id,
                                     "success", None)


def test_an_admin_migrate_of_what_a_copy_cannot_carry_ends_at_once(mgr):
    vol = _migrating(mgr)
    volumes_db.volume_cas(fixtures.admin(), vol.id, {},
                          {"snapshot_count": 1})
    mgr.migrate_volume(fixtures.admin(), vol.id, DEST)
    row = _get(vol)
    assert (row.status, row.migration_status, row.host) == (
        "available", "error", SOURCE)
    assert "snapshots" in row.error_reason
    mgr.here.scheduler_rpcapi.migrate_volume.assert_not_called()


def test_a_migrate_whose_message_was_lost_ends_at_restart(mgr):
    lost = _migrating(mgr)
    moving = _migrating(mgr, "migrating")
    with mock.patch.object(mgr.reporter, "capacity_changed"):
        resume.finish_interrupted_work(mgr)
    row = _get(lost)
    assert (row.status, row.migration_status) == ("available", "error")
    assert "message was lost" in row.error_reason
    assert _get(moving).status == "maintenance"


def test_a_retype_the_api_let_move_moves_when_resumed(mgr):
    """The api's ``starting`` says the user allowed a move: a resume
    (which knows no policy) moves the volume."""
    vtype = _elsewhere()
    vol = _retyping(mgr, vtype, migration_status="starting")
    with mock.patch.object(mgr.reporter, "capacity_changed"):
        resume.finish_interrupted_work(mgr)
    assert _get(vol).migration_status == "migrating"
    mgr.here.scheduler_rpcapi.migrate_volume.assert_called_once()


def test_a_late_retype_message_leaves_a_moving_volume_alone(mgr):
    """A resume's retype, or a duplicate cast, neither moves the volume
    twice nor ends the move it is in."""
    vtype = _elsewhere()
    vol = _moving(mgr, vtype)
    for policy in ("never", "on-demand"):
        mgr.retype_volume(fixtures.admin(), vol.id, vtype.id, policy)
    row = _get(vol)
    assert (row.status, row.migration_status) == ("retyping", "migrating")
    mgr.here.scheduler_rpcapi.migrate_volume.assert_not_called()


def test_a_retype_older_services_cannot_move_keeps_the_type(mgr):
    vtype = _elsewhere()
    vol = _retyping(mgr, vtype, migration_status="starting")
    mgr.here.scheduler_rpcapi.client.can_send_version.return_value = False
    mgr.retype_volume(fixtures.admin(), vol.id, vtype.id, "on-demand")
    row = _get(vol)
    assert (row.status, row.volume_type_id, row.migration_status) == (
        "available", vol.volume_type_id, None)
    mgr.here.scheduler_rpcapi.migrate_volume.assert_not_called()


def test_a_copy_for_another_move_is_not_made(mgr, dest):
    """A message of a move an admin reset (to type T1) reaches the
    destination while the volume moves for another retype (T2)."""
    first, second = _elsewhere(), _elsewhere()
    vol = _moving(mgr, second)
    dest.migrate_volume_in(fixtures.admin(), vol.id, DEST, SOURCE,
                           {"protocol": "fake", "volume_id": vol.id},
                           first.id)
    row = _get(vol)
    assert (row.host, row.status, row.pending_type_id) == (
        SOURCE, "retyping", second.id)
    assert vol.id not in dest.driver.volumes


def test_a_type_whose_zones_leave_out_the_pool_s_moves_the_volume(mgr):
    """``RESKEY:availability_zones`` counts as a spec the pool must
    satisfy: a retype to a type of other zones moves the volume (Cinder's
    retype is placed among the type's zones)."""
    vtype = fixtures.make_type(specs={"RESKEY:availability_zones": "east"})
    vol = _retyping(mgr, vtype, availability_zone="nova")
    mgr.retype_volume(fixtures.admin(), vol.id, vtype.id, "on-demand")
    assert _get(vol).migration_status == "migrating"
    mgr.here.scheduler_rpcapi.migrate_volume.assert_called_once()
    here = fixtures.make_type(specs={
        "RESKEY:availability_zones": "east, nova"})
    vol = _retyping(mgr, here, availability_zone="nova")
    mgr.retype_volume(fixtures.admin(), vol.id, here.id, "on-demand")
    assert (_get(vol).volume_type_id, _get(vol).migration_status) == (
        here.id, None)


def test_a_moved_volume_takes_the_zone_of_its_new_pool(mgr):
    east = conftest.make_manager("node2", "b2")
    east.conf.set_override("storage_availability_zone", "east")
    vtype = fixtures.make_type(specs={"RESKEY:availability_zones": "east"})
    vol = _moving(mgr, vtype, availability_zone="nova")
    source = mgr.driver.copy_source(volume_backend.driver_volume(vol))
    east.migrate_volume_in(fixtures.admin(), vol.id, DEST, SOURCE, source,
                           vtype.id)
    row = _get(vol)
    assert (row.host, row.availability_zone) == (DEST, "east")


def _age_volume(vol, seconds):
    with db_engine.writer.using(fixtures.admin()) as session:
        session.execute(sa.update(models.Volume).where(
            models.Volume.id == vol.id).values(
            updated_at=timestamps.utcnow()
            - datetime.timedelta(seconds=seconds)))


@pytest.mark.parametrize("status", ["retyping", "maintenance"])
def test_a_move_with_no_sign_of_progress_ends_where_it_was(mgr, status):
    """A move whose message was lost, or whose destination died while it
    copied, ends on its source's sweep; one that signed lately goes on."""
    vtype = _elsewhere()
    values = dict(status=status, previous_status="available",
                  migration_status="migrating")
    if status == "retyping":
        values["pending_type_id"] = vtype.id
    stalled = fixtures.make_volume_on(mgr.driver, **values)
    signed = fixtures.make_volume_on(mgr.driver, **values)
    bound = mgr.conf.migration_stall_timeout
    for vol in (stalled, signed):
        _age_volume(vol, bound + 5)
    assert migration.touch(fixtures.admin(), signed.id, SOURCE)
    with mock.patch.object(mgr.reporter, "capacity_changed"):
        mgr._finish_lost_work()
    row = _get(stalled)
    assert (row.status, row.host, row.volume_type_id, row.migration_status,
            row.pending_type_id) == ("available", SOURCE,
                                     stalled.volume_type_id, "error", None)
    assert "no progress" in row.error_reason
    assert stalled.id in mgr.driver.volumes
    row = _get(signed)
    assert (row.status, row.migration_status) == (status, "migrating")


def test_a_touch_signs_only_a_moving_volume(mgr):
    vol = fixtures.make_volume_on(mgr.driver)
    assert not migration.touch(fixtures.admin(), vol.id, SOURCE)


def test_copies_a_lost_delete_migrated_left_are_removed(mgr, dest):
    """The source's copy of a volume that moved away, whose
    ``delete_migrated`` was lost, goes on the source's sweep; a live
    volume here, and a copy the moved row names (shared storage), stay."""
    vtype = _elsewhere()
    moved = _moving(mgr, vtype)
    dest.migrate_volume_in(fixtures.admin(), moved.id, DEST, SOURCE,
                           mgr.driver.copy_source(
                               volume_backend.driver_volume(moved)),
                           vtype.id)
    assert _get(moved).host == DEST and moved.id in mgr.driver.volumes
    live = fixtures.make_volume_on(mgr.driver, migration_status="success")
    shared = fixtures.make_volume_on(
        mgr.driver, host=DEST, migration_status="success",
        provider_location="fake://b1/placeholder")
    volumes_db.volume_cas(fixtures.admin(), shared.id, {}, {
        "provider_location": mgr.driver.volume_locations()[shared.id]})
    for vol in (moved, live, shared):
        _age_volume(vol, mgr.conf.rpc_call_timeout + 5)
    with mock.patch.object(mgr.reporter, "capacity_changed") as changed:
        mgr.remove_leftovers()
    assert moved.id not in mgr.driver.volumes
    assert moved.id in dest.driver.volumes
    assert live.id in mgr.driver.volumes and shared.id in mgr.driver.volumes
    changed.assert_called_once_with()


def test_a_recent_move_keeps_its_source_copy_for_delete_migrated(mgr, dest):
    vtype = _elsewhere()
    moved = _moving(mgr, vtype)
    dest.migrate_volume_in(fixtures.admin(), moved.id, DEST, SOURCE,
                           {"protocol": "fake", "volume_id": moved.id},
                           vtype.id)
    mgr.remove_leftovers()
    assert moved.id in mgr.driver.volumes
