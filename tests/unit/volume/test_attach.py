"""The volume node's attachment work: connect, disconnect, stuck rows."""

import datetime
import json
import types
import uuid
from unittest import mock

import pytest
import sqlalchemy as sa
from oslo_config import cfg

from common import attach_rules
from common import exception
from common import states
from common.db import models
from common.db.api import attachments as db
from common.db.api import engine as db_engine
from common.db.api import timestamps
from common.db.api import volumes as volumes_db
from drivers import fake as fake_driver
from services.volume import attach
from services.volume import backend as volume_backend
from services.volume import rpcapi as volume_rpcapi

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures

T = states.Transition
HOST = "node1@b1"


database = fixtures.database


@pytest.fixture
def driver():
    conf = cfg.ConfigOpts()
    fake_driver.register_opts(conf, "b1")
    conf([], default_config_files=[])
    return fake_driver.FakeDriver(conf["b1"], "b1", "node1")


@pytest.fixture
def attacher(driver):
    return attach.Attacher(fixtures.make_conf(), driver, HOST)


def _volume(driver, **kwargs):
    vol = fixtures.make_volume(host=HOST + "#b1", **kwargs)
    driver.create_volume(volume_backend.driver_volume(vol))
    return vol


def _row(vol, host="h1", status="attaching", transition=T.CREATING,
         mode="rw", instance=None):
    values = {"id": str(uuid.uuid4()), "attach_status": status,
              "transition": transition, "attach_mode": mode,
              "attached_host": host, "instance_uuid": instance}
    guard = attach_rules.ReserveGuard(multiattach=vol.multiattach, limit=99)
    return fixtures.reserve(vol.id, guard, values,
                            {"host": host} if host else None)


def _snap(row):
    """The row as the API would send it (from the database)."""
    got, vol, _shared = db.attachment_with_volume(fixtures.admin(), row.id)
    return volume_rpcapi.snapshot(got, vol,
                                  db.connector(fixtures.admin(), row.id))


def _get(row):
    return db.attachment_get(fixtures.admin(), row.id)


def _ended(row, vol, after):
    """Assert the row is gone (``after`` None: the volume free again) or
    settled in ``after``; the row, or None when gone."""
    if after is None:
        with pytest.raises(exception.AttachmentNotFound):
            _get(row)
        assert _status(vol) == ("available", 0)
        return None
    got = _get(row)
    assert (got.attach_status, got.transition) == (after, None)
    return got


def _status(vol):
    row = volumes_db.volume_get(fixtures.admin(), vol.id)
    return row.status, row.attachment_count


def test_connect_creating_row(attacher, driver):
    vol = _volume(driver)
    row = _row(vol, mode="ro")
    done = attacher.connect(fixtures.admin(), _snap(row))
    info = json.loads(done["connection_info"])
    assert info["driver_volume_type"] == "fake"
    assert info["attachment_id"] == row.id
    assert info["access_mode"] == "ro"
    assert info["volume_id"] == vol.id
    got = _get(row)
    assert (got.attach_status, got.transition) == ("attaching", None)
    assert db.connection_info_of(got) == info
    assert got.attach_time.isoformat() == done["attach_time"]
    assert done["attach_status"] == got.attach_status
    assert driver.connections[vol.id] == [{"host": "h1"}]


def test_readonly_volume_gives_ro_access(attacher, driver):
    vol = _volume(driver, readonly=True)
    done = attacher.connect(fixtures.admin(), _snap(_row(vol, mode="rw")))
    assert json.loads(done["connection_info"])["access_mode"] == "ro"


def test_reconnect_keeps_attached(attacher, driver):
    vol = _volume(driver)
    row = _row(vol, status="attached", transition=T.RECONNECTING)
    attacher.connect(fixtures.admin(), _snap(row))
    assert _get(row).attach_status == "attached"


def test_connect_refuses_row_at_rest(attacher, driver):
    vol = _volume(driver)
    row = _row(vol, status="reserved", transition=None, host=None)
    with pytest.raises(exception.Conflict) as err:
        attacher.connect(fixtures.admin(), _snap(row))
    assert "cannot connect" in err.value.msg


@pytest.mark.parametrize("transition, after", [
    (T.CREATING, None), (T.CONNECTING, "reserved"),
    (T.RECONNECTING, "error_attaching")])
def test_connect_failure_rolls_back(attacher, driver, transition, after):
    vol = _volume(driver)
    row = _row(vol, transition=transition)
    with mock.patch.object(driver, "initialize_connection",
                           side_effect=exception.VolumeBackendAPIException(
                               data="boom")), \
            mock.patch.object(driver, "terminate_connection") as term:
        with pytest.raises(exception.VolumeBackendAPIException):
            attacher.connect(fixtures.admin(), _snap(row))
    term.assert_called_once()
    got = _ended(row, vol, after)
    if got is not None:
        assert got.connection_info is None
        if after == "reserved":
            assert db.connector(fixtures.admin(), got.id) == {}
            assert got.attached_host is None


def test_connect_that_loses_to_a_forced_delete_terminates(attacher, driver):
    vol = _volume(driver)
    row = _row(vol)
    real = driver.initialize_connection

    def racing(volume, connector):
        db.attachment_cas(fixtures.admin(), vol.id, row.id, {},
                          {"transition": T.DISCONNECTING})
        return real(volume, connector)
    with mock.patch.object(driver, "initialize_connection", racing):
        with pytest.raises(exception.Conflict):
            attacher.connect(fixtures.admin(), _snap(row))
    assert vol.id not in driver.connections


def test_disconnect_keeps_a_shared_host_connection(attacher, driver):
    vol = _volume(driver, multiattach=True)
    first, second = _row(vol), _row(vol)
    other_host = _row(vol, host="h2")
    for row in (first, second, other_host):
        attacher.connect(fixtures.admin(), _snap(row))
    begin = {"transition": T.DISCONNECTING}
    db.attachment_cas(fixtures.admin(), vol.id, first.id, {}, begin)
    attacher.disconnect(fixtures.admin(), _snap(first))
    assert {"host": "h1"} in driver.connections[vol.id]
    db.attachment_destroy(fixtures.admin(), vol.id, first.id, {})
    db.attachment_cas(fixtures.admin(), vol.id, second.id, {}, begin)
    attacher.disconnect(fixtures.admin(), _snap(second))
    assert driver.connections[vol.id] == [{"host": "h2"}]


def test_disconnect_requires_the_transition(attacher, driver):
    vol = _volume(driver)
    row = _row(vol)
    with pytest.raises(exception.Conflict):
        attacher.disconnect(fixtures.admin(), _snap(row))


def _age(row, seconds=3600):
    old = timestamps.utcnow() - datetime.timedelta(seconds=seconds)
    with db_engine.get_engine().begin() as conn:
        conn.execute(sa.update(models.VolumeAttachment).where(
            models.VolumeAttachment.id == row.id).values(updated_at=old))


@pytest.mark.parametrize("status, transition, after", [
    ("attaching", T.CREATING, None),
    ("attaching", T.CONNECTING, "reserved"),
    ("attached", T.RECONNECTING, "error_attaching"),
    ("attached", T.DISCONNECTING, None),
    ("detaching", T.DISCONNECTING, None)])
def test_resolve_stuck(attacher, driver, status, transition, after):
    vol = _volume(driver)
    row = _row(vol, status=status, transition=transition)
    driver.initialize_connection(volume_backend.driver_volume(vol), {"host": "h1"})
    _age(row)
    assert attacher.resolve_stuck(fixtures.admin()) == 1
    assert vol.id not in driver.connections
    _ended(row, vol, after)


def test_resolve_stuck_leaves_young_reserved_and_own_rows(attacher, driver):
    vol = _volume(driver, multiattach=True)
    reserved = _row(vol, status="reserved", transition=None, host=None)
    _age(reserved)
    young = _row(vol)
    mine = _row(vol, host="h2")
    _age(mine)
    with attacher._hold(mine):
        assert attacher.resolve_stuck(fixtures.admin()) == 0
    assert _get(reserved).attach_status == "reserved"
    assert _get(young).transition == T.CREATING


def test_resolve_stuck_only_on_own_backend(driver):
    other = attach.Attacher(fixtures.make_conf(), driver, "node2@b1")
    vol = _volume(driver)
    _age(_row(vol))
    assert other.resolve_stuck(fixtures.admin()) == 0


def test_resolve_keeps_connection_other_rows_use(attacher, driver):
    vol = _volume(driver, multiattach=True)
    live = _row(vol)
    attacher.connect(fixtures.admin(), _snap(live))
    stuck = _row(vol, transition=T.CONNECTING)
    _age(stuck)
    assert attacher.resolve_stuck(fixtures.admin()) == 1
    assert driver.connections[vol.id] == [{"host": "h1"}]


def test_front_end_qos_turns_per_gb_keys_into_fixed_values():
    volume = types.SimpleNamespace(size=10, front_end_qos=json.dumps({
        "read_iops_sec_per_gb": "100", "write_iops_sec_per_gb": "1",
        "write_iops_sec_per_gb_min": "50", "total_bytes_sec": "1000"}))
    assert attach.front_end_qos(volume) == {
        "read_iops_sec": 1000, "write_iops_sec": 50,
        "total_bytes_sec": "1000"}
    assert attach.front_end_qos(types.SimpleNamespace(
        size=1, front_end_qos=None)) is None


def test_a_rest_row_connected_and_never_completed_is_completed(attacher,
                                                               driver):
    """A REST attachment left attaching (connected, at rest, no lease)
    past ``agent_attachment_lease`` is completed, its connection kept;
    a recent one, a reservation and an agent's leased row stay."""
    vol = _volume(driver, multiattach=True)
    forgotten = _row(vol, host="h1", transition=None)
    recent = _row(vol, host="h2", transition=None)
    reserved = _row(vol, host=None, status="reserved", transition=None)
    leased = _row(vol, host="h3", transition=None)
    db.attachment_record(fixtures.admin(), vol.id, leased.id, {}, {
        "lease_expires_at": timestamps.utcnow() + datetime.timedelta(
            hours=1)})
    for row in (forgotten, reserved, leased):
        _age(row, attacher.conf.agent_attachment_lease + 5)
    assert attacher.complete_unconfirmed(fixtures.admin()) == 1
    assert [_get(row).attach_status for row in (
        forgotten, recent, reserved, leased)] == [
        "attached", "attaching", "reserved", "attaching"]
    shown = volumes_db.volume_get(fixtures.admin(), vol.id)
    assert (shown.status, shown.attach_status) == ("in-use", "attached")
    assert attacher.complete_unconfirmed(fixtures.admin()) == 0
