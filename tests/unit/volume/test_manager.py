"""Volume manager extend/retype and the volume RPC client (1.1)."""

import datetime
import json
from unittest import mock

import pytest
import sqlalchemy as sa

from common import attach_rules
from common import exception
from common import states
from common.db import models
from common.db.api import attachments as db
from common.db.api import engine as db_engine
from common.db.api import messages as messages_db
from common.db.api import timestamps
from common.db.api import volumes as volumes_db
from services.volume import backend as volume_backend
from services.volume import manager
from services.volume import resume
from services.volume import rpcapi

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures


database = fixtures.database


def _get(vol):
    return volumes_db.volume_get(fixtures.admin(), vol.id)


@pytest.mark.parametrize("attached, after", [(False, "available"),
                                             (True, "in-use")])
def test_extend_returns_to_what_attachments_say(mgr, attached, after):
    vol = fixtures.make_volume_on(mgr.driver)
    if attached:
        assert fixtures.reserve(
            vol.id, attach_rules.ReserveGuard(multiattach=False, limit=1),
            {"id": "a1", "attach_status": "attached", "attach_mode": "rw"})
    volumes_db.volume_cas(fixtures.admin(), vol.id, {},
                          {"status": "extending", "pending_size": 5})
    mgr.extend_volume(fixtures.admin(), vol.id, 5)
    row = _get(vol)
    assert (row.status, row.size, row.pending_size) == (after, 5, None)
    assert mgr.driver.volumes[vol.id] == 5


def _told(volume_id):
    """The event ids of the user messages about ``volume_id``."""
    return [m.event_id for m in messages_db.message_list(
        fixtures.admin(), filters={"resource_uuid": volume_id})]


def test_extend_failure_is_error_extending(mgr):
    vol = fixtures.make_volume_on(mgr.driver, status="extending", pending_size=3)
    mgr.extend_volume(fixtures.admin(), vol.id, 0)
    row = _get(vol)
    assert row.status == "error_extending" and row.error_reason
    assert (row.size, row.pending_size) == (1, None)
    assert _told(vol.id) == ["VOLUME_VOLUME_007_010"]


def test_an_extend_in_hand_elsewhere_is_left_to_it(mgr):
    """A sweep, a cleanup or another member of the cluster does not
    extend a volume a late cast is extending now (or the reverse)."""
    vol = fixtures.make_volume_on(mgr.driver, status="extending",
                                  pending_size=5)
    with mgr.here.in_hand(vol.id) as mine:
        assert mine
        mgr.extend_volume(fixtures.admin(), vol.id, 5)
        resume.finish_interrupted_work(mgr)
    row = _get(vol)
    assert (row.status, row.size, mgr.driver.volumes[vol.id]) == (
        "extending", 1, 1)
    resume.finish_interrupted_work(mgr)
    assert (_get(vol).size, mgr.driver.volumes[vol.id]) == (5, 5)


def test_extend_ignores_other_statuses(mgr):
    vol = fixtures.make_volume_on(mgr.driver, status="available")
    mgr.extend_volume(fixtures.admin(), vol.id, 5)
    assert _get(vol).size == 1


def test_retype_takes_type_the_pool_satisfies(mgr):
    vtype = fixtures.make_type(specs={"multiattach": "<is> True"})
    vol = fixtures.make_volume_on(mgr.driver, status="retyping",
                                  previous_status="available",
                                  pending_type_id=vtype.id)
    mgr.retype_volume(fixtures.admin(), vol.id, vtype.id, "never")
    row = _get(vol)
    assert (row.status, row.volume_type_id, row.multiattach,
            row.pending_type_id) == ("available", vtype.id, True, None)


def test_retype_refused_when_pool_does_not_satisfy(mgr):
    vtype = fixtures.make_type(specs={"volume_backend_name": "other"})
    vol = fixtures.make_volume_on(mgr.driver, status="retyping",
                                  previous_status="available",
                                  pending_type_id=vtype.id)
    old_type = vol.volume_type_id
    mgr.retype_volume(fixtures.admin(), vol.id, vtype.id, "never")
    row = _get(vol)
    assert (row.status, row.volume_type_id, row.pending_type_id) == (
        "available", old_type, None)


def test_retype_to_multiattach_asks_the_driver_first(mgr):
    vtype = fixtures.make_type(specs={"multiattach": "<is> True"})
    vol = fixtures.make_volume_on(mgr.driver, status="retyping",
                                  previous_status="available",
                                  pending_type_id=vtype.id)
    with mock.patch.object(mgr.driver, "retype") as retype:
        mgr.retype_volume(fixtures.admin(), vol.id, vtype.id, "never")
    (volume, multiattach), _kw = retype.call_args
    assert (volume.id, volume.multiattach, multiattach) == (vol.id, False,
                                                            True)
    assert _get(vol).multiattach is True


def test_retype_keeps_the_type_when_the_driver_cannot_follow(mgr):
    vtype = fixtures.make_type(specs={"multiattach": "<is> True"})
    vol = fixtures.make_volume_on(mgr.driver, status="retyping",
                                  previous_status="available",
                                  pending_type_id=vtype.id)
    old_type = vol.volume_type_id
    with mock.patch.object(mgr.driver, "retype", side_effect=(
            exception.VolumeBackendAPIException(data="busy"))):
        mgr.retype_volume(fixtures.admin(), vol.id, vtype.id, "never")
    row = _get(vol)
    assert (row.status, row.volume_type_id, row.multiattach,
            row.pending_type_id) == ("available", old_type, False, None)


def test_periodic_tasks_include_the_stuck_check(mgr):
    tasks = [task for _interval, task in mgr.periodic_tasks()]
    assert mgr.check_stuck_attachments in tasks


@pytest.fixture
def client():
    with mock.patch.object(rpcapi.rpc, "get_client") as get_client:
        api = rpcapi.VolumeAPI(fixtures.make_conf())
    return api, get_client.return_value


@pytest.fixture(autouse=True)
def _conf_for_client():
    with mock.patch.object(rpcapi.rpc, "_version_cap", return_value=None):
        yield


def test_rpc_version_is_one_nine():
    assert rpcapi.VolumeAPI.RPC_API_VERSION == "1.10"
    assert manager.VolumeManager.target.version == "1.10"


@pytest.mark.parametrize("method, kind, args, kwargs, version", [
    ("attachment_connect", "call", ("h@b#p", "a1", {"s": 1}),
     {"attachment_id": "a1", "snapshot": {"s": 1}}, "1.2"),
    ("attachment_disconnect", "call", ("h@b#p", "a1", {"s": 1}),
     {"attachment_id": "a1", "snapshot": {"s": 1}}, "1.2"),
    ("extend_volume", "cast", ("v1", "h@b#p", 5),
     {"volume_id": "v1", "new_size": 5}, "1.1"),
    ("retype_volume", "cast", ("v1", "h@b#p", "t1", "never"),
     {"volume_id": "v1", "new_type_id": "t1",
      "migration_policy": "never"}, "1.1"),
    ("create_snapshot", "cast", ("s1", "h@b#p"), {"snapshot_id": "s1"},
     "1.3"),
    ("delete_snapshot", "cast", ("s1", "h@b#p"), {"snapshot_id": "s1"},
     "1.3"),
    ("revert_to_snapshot", "cast", ("v1", "h@b#p", "s1"),
     {"volume_id": "v1", "snapshot_id": "s1"}, "1.3"),
    ("attachment_fence", "call", ("h@b#p", "a1", {"s": 1}),
     {"attachment_id": "a1", "snapshot": {"s": 1}}, "1.4"),
    ("attachment_unfence", "call", ("h@b#p", "v1", ["c1"]),
     {"volume_id": "v1", "clients": ["c1"]}, "1.4"),
    ("migrate_volume", "cast", ("v1", "h@b#p", "d@b#p"),
     {"volume_id": "v1", "host": "d@b#p"}, "1.6"),
    ("migrate_volume_in", "cast", ("v1", "h@b#p", "s@b#p", {"p": 1}, "t1"),
     {"volume_id": "v1", "host": "h@b#p", "source_host": "s@b#p",
      "source": {"p": 1}, "new_type_id": "t1"}, "1.6"),
    ("delete_migrated", "cast", ("v1", "h@b#p", 1, "x"),
     {"volume_id": "v1", "size": 1, "provider_location": "x"}, "1.6"),
    ("get_manageable_volumes", "call", ("h@b",), {}, "1.9"),
    ("get_manageable_snapshots", "call", ("h@b#p",), {}, "1.9"),
    ("manage_existing_get_size", "call", ("h@b", {"source-name": "x"}),
     {"ref": {"source-name": "x"}, "snapshot": False}, "1.9"),
    ("manage_existing", "cast", ("v1", "h@b", {"source-name": "x"}),
     {"volume_id": "v1", "ref": {"source-name": "x"}}, "1.9"),
    ("manage_existing_snapshot", "cast", ("s1", "h@b#p", {"r": 1}),
     {"snapshot_id": "s1", "ref": {"r": 1}}, "1.9"),
    ("unmanage_volume", "cast", ("v1", "h@b#p"), {"volume_id": "v1"},
     "1.9"),
    ("unmanage_snapshot", "cast", ("s1", "h@b#p"), {"snapshot_id": "s1"},
     "1.9"),
    ("backup_connect_snapshot", "call", ("h@b#p", "s1", {"host": "b"}),
     {"snapshot_id": "s1", "connector": {"host": "b"}}, "1.10"),
    ("backup_disconnect_snapshot", "call", ("h@b#p", "s1", {"host": "b"}),
     {"snapshot_id": "s1", "connector": {"host": "b"}}, "1.10"),
])
def test_rpc_methods(client, method, kind, args, kwargs, version):
    api, raw = client
    getattr(api, method)("ctxt", *args)
    raw.prepare.assert_called_with(server="h@b", version=version)
    getattr(raw.prepare.return_value, kind).assert_called_once_with(
        "ctxt", method, **kwargs)


@pytest.mark.parametrize("cascade, version", [(False, "1.0"), (True, "1.5")])
def test_a_cascading_delete_is_delete_volume_at_1_5(client, cascade,
                                                    version):
    api, raw = client
    api.delete_volume("ctxt", "v1", "h@b#p", cascade=cascade)
    raw.prepare.assert_called_with(server="h@b", version=version)
    raw.prepare.return_value.cast.assert_called_once_with(
        "ctxt", "delete_volume", volume_id="v1")


def test_a_create_from_a_source_is_create_volume_at_1_3(client):
    api, raw = client
    api.create_volume_from_source("ctxt", "v1", "h@b#p")
    raw.prepare.assert_called_with(server="h@b", version="1.3")
    raw.prepare.return_value.cast.assert_called_once_with(
        "ctxt", "create_volume", volume_id="v1")
    raw.can_send_version.return_value = False
    with pytest.raises(rpcapi.rpc.ServiceTooOld):
        api.create_volume_from_source("ctxt", "v1", "h@b#p")


def test_do_cleanup_is_cast_to_a_node_or_a_cluster_at_1_7(client):
    api, raw = client
    api.do_cleanup("ctxt", "c1@fake")
    raw.prepare.assert_called_with(server="c1@fake", version="1.7")
    raw.prepare.return_value.cast.assert_called_once_with(
        "ctxt", "do_cleanup")
    raw.can_send_version.return_value = False
    with pytest.raises(rpcapi.rpc.ServiceTooOld):
        api.do_cleanup("ctxt", "c1@fake")


def test_do_cleanup_runs_the_periodic_sweeps_now(mgr):
    with mock.patch.object(manager.resume,
                           "finish_interrupted_work") as sweep, \
            mock.patch.object(mgr, "check_stuck_attachments") as stuck:
        mgr.do_cleanup("ctxt")
    sweep.assert_called_once_with(mgr, min_age=mgr.conf.rpc_call_timeout)
    stuck.assert_called_once_with()


def test_manage_is_refused_before_1_9(client):
    api, raw = client
    raw.can_send_version.side_effect = lambda version: version <= "1.8"
    with pytest.raises(rpcapi.rpc.ServiceTooOld):
        api.manage_existing_get_size("ctxt", "h@b", {"source-name": "x"})
    with pytest.raises(rpcapi.rpc.ServiceTooOld):
        api.unmanage_volume("ctxt", "v1", "h@b")
    raw.prepare.assert_not_called()


def test_rpc_refuses_old_servers(client):
    api, raw = client
    raw.can_send_version.return_value = False
    with pytest.raises(rpcapi.rpc.ServiceTooOld) as caught:
        api.attachment_connect("ctxt", "h@b", "a1", {})
    assert caught.value.code == 503


def test_create_makes_the_volume_available(mgr):
    vol = fixtures.make_volume(status="creating", provider_location=None)
    with mock.patch.object(mgr.reporter, "capacity_changed") as changed:
        mgr.create_volume(fixtures.admin(), vol.id)
    assert _get(vol).status == "available"
    assert vol.id in mgr.driver.volumes
    changed.assert_called_once_with()


def test_a_failed_create_is_an_error_with_a_reason(mgr):
    vol = fixtures.make_volume(status="creating", provider_location=None)
    with mock.patch.object(mgr.driver, "create_volume",
                           side_effect=RuntimeError("disk on fire")):
        mgr.create_volume(fixtures.admin(), vol.id)
    row = _get(vol)
    assert row.status == "error"
    assert "failed to create the volume: disk on fire" in row.error_reason
    assert _told(vol.id) == ["VOLUME_VOLUME_008_012"]


def test_a_failed_delete_tells_no_user_message(mgr):
    """As in Cinder: error_deleting is the whole answer."""
    vol = fixtures.make_volume_on(mgr.driver, status="deleting")
    with mock.patch.object(mgr.driver, "delete_volume",
                           side_effect=RuntimeError("busy")):
        mgr.delete_volume(fixtures.admin(), vol.id)
    assert _get(vol).status == "error_deleting"
    assert _told(vol.id) == []


def test_create_leaves_a_volume_that_is_no_longer_creating(mgr):
    vol = fixtures.make_volume(status="error", provider_location=None)
    mgr.create_volume(fixtures.admin(), vol.id)
    assert _get(vol).status == "error"
    assert vol.id not in mgr.driver.volumes


def test_delete_removes_the_row_or_marks_error_deleting(mgr):
    gone = fixtures.make_volume_on(mgr.driver, status="deleting")
    mgr.delete_volume(fixtures.admin(), gone.id)
    with pytest.raises(exception.VolumeNotFound):
        _get(gone)
    stuck = fixtures.make_volume_on(mgr.driver, status="deleting")
    with mock.patch.object(mgr.driver, "delete_volume",
                           side_effect=RuntimeError("busy")):
        mgr.delete_volume(fixtures.admin(), stuck.id)
    assert _get(stuck).status == "error_deleting"


def test_lost_creates_and_deletes_are_finished_once_old_enough(mgr):
    old = datetime.timedelta(seconds=mgr.conf.rpc_call_timeout + 5)
    lost = fixtures.make_volume(status="creating", provider_location=None)
    recent = fixtures.make_volume(status="creating", provider_location=None)
    doomed = fixtures.make_volume_on(mgr.driver, status="deleting")
    with db_engine.writer.using(fixtures.admin()) as session:
        session.execute(sa.update(models.Volume).where(
            models.Volume.id.in_([lost.id, doomed.id])).values(
            updated_at=timestamps.utcnow() - old))
    with mock.patch.object(mgr.reporter, "capacity_changed"):
        mgr._finish_lost_work()
    assert _get(lost).status == "available"
    assert _get(recent).status == "creating"
    with pytest.raises(exception.VolumeNotFound):
        _get(doomed)


def test_a_volume_in_hand_is_not_worked_on_twice(mgr):
    vol = fixtures.make_volume(status="creating", provider_location=None)
    with mgr.here.in_hand(vol.id):
        mgr.create_volume(fixtures.admin(), vol.id)
    assert _get(vol).status == "creating"
    assert vol.id not in mgr.driver.volumes


def test_a_1_1_caller_connects_and_disconnects_without_a_snapshot(mgr):
    """RPC 1.1 sent only the attachment id: the node reads the row."""
    vol = fixtures.make_volume_on(mgr.driver, multiattach=True)
    row = fixtures.reserve(
        vol.id, attach_rules.ReserveGuard(multiattach=True, limit=9),
        {"id": "a-1-1", "attach_status": "attaching",
         "transition": states.Transition.CREATING, "attach_mode": "ro",
         "attached_host": "h1"}, {"host": "h1"})
    done = mgr.attachment_connect(fixtures.admin(), row.id)
    assert json.loads(done["connection_info"])["access_mode"] == "ro"
    assert mgr.driver.connections[vol.id] == [{"host": "h1", "mode": "ro"}]
    db.attachment_record(
        fixtures.admin(), vol.id, row.id, {"transition": None},
        {"transition": states.Transition.DISCONNECTING})
    mgr.attachment_disconnect(fixtures.admin(), row.id)
    assert not mgr.driver.connections.get(vol.id)


def test_interrupted_extends_and_retypes_are_finished_at_start(mgr):
    """A node that died mid-extend or mid-retype finishes them from the
    size and type the api recorded as pending."""
    grown = fixtures.make_volume_on(mgr.driver, status="extending",
                                    pending_size=4)
    unknown = fixtures.make_volume_on(mgr.driver, status="extending")
    shared = fixtures.make_type(name="shared", specs={
        "multiattach": "<is> True"})
    retyped = fixtures.make_volume_on(mgr.driver, status="retyping",
                                      pending_type_id=shared.id)
    with mock.patch.object(mgr.reporter, "capacity_changed"):
        resume.finish_interrupted_work(mgr)
    row = _get(grown)
    assert (row.status, row.size, row.pending_size) == ("available", 4, None)
    assert mgr.driver.volumes[grown.id] == 4
    assert _get(unknown).status == "error_extending"
    row = _get(retyped)
    assert (row.status, row.volume_type_id, row.multiattach) == (
        "available", shared.id, True)


def test_a_create_resumed_after_the_backend_made_it_completes(mgr):
    """A node killed between the driver's create and the swap to
    available resumes into a volume that exists: it adopts it."""
    vol = fixtures.make_volume(status="creating", provider_location=None)
    made = mgr.driver.create_volume(volume_backend.driver_volume(vol))
    with mock.patch.object(mgr.reporter, "capacity_changed"):
        resume.finish_interrupted_work(mgr)
    row = _get(vol)
    assert (row.status, row.provider_location, row.error_reason) == (
        "available", made["provider_location"], None)
