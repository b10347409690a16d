"""The attachment DB layer: reservations under races, CAS, recompute."""

import types
import uuid

import pytest
import sqlalchemy as sa

from common import attach_rules
from common import states
from common.db import models
from common.db.api import attachments as db
from common.db.api import engine as db_engine
from common.db.api import timestamps
from common.db.api import volumes as volumes_db
from common.db.api.attachments import reads as attachment_reads
from common.db.api.attachments import reserve as reserve_db

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures


database = fixtures.database


def _values(instance=None, mode="null", with_connector=False, host=None,
            connector=None):
    status, transition = states.on_reserve(with_connector)
    return {"id": str(uuid.uuid4()), "instance_uuid": instance,
            "attach_status": status, "transition": transition,
            "attach_mode": mode, "attached_host": host}


def _reserve(volume, guard=None, **kwargs):
    guard = guard or attach_rules.ReserveGuard(multiattach=volume.multiattach,
                                         limit=128)
    return fixtures.reserve(volume.id, guard, _values(**kwargs),
                            connector=kwargs.get("connector"))


def _vol(volume_id):
    return volumes_db.volume_get(fixtures.admin(), volume_id)


def _race(n, fn):
    return fixtures.race(n, fn, errors=False)


def test_reserve_sets_reserved_and_counts():
    vol = fixtures.make_volume()
    row = _reserve(vol, instance="i1")
    assert row.attach_status == "reserved" and row.transition is None
    vol = _vol(vol.id)
    assert (vol.status, vol.attach_status) == ("reserved", "reserved")
    assert (vol.attachment_count, vol.writer_count) == (1, 1)


def test_reserve_with_connector_stores_rows_per_key():
    vol = fixtures.make_volume()
    connector = {"host": "h1", "multipath": False, "wwpns": ["a", "b"]}
    row = _reserve(vol, with_connector=True, connector=connector, host="h1")
    assert row.attach_status == "attaching"
    assert row.transition == states.Transition.CREATING
    assert db.connector(fixtures.admin(), row.id) == connector
    assert _vol(vol.id).status == "attaching"


def test_non_multiattach_second_reservation_refused_and_no_row():
    vol = fixtures.make_volume()
    assert _reserve(vol, instance="i1") is not None
    assert _reserve(vol, instance="i2") is None
    assert len(db.attachments_of_volume(fixtures.admin(), vol.id)) == 1
    assert _vol(vol.id).attachment_count == 1


def test_same_instance_may_hold_a_second_row_never_a_third():
    vol = fixtures.make_volume()
    guard = attach_rules.ReserveGuard(multiattach=False, limit=1,
                                instance_uuid="i1")
    assert _reserve(vol, guard, instance="i1") is not None
    assert _reserve(vol, guard, instance="i1") is not None
    assert _reserve(vol, guard, instance="i1") is None


def test_another_instance_is_refused_by_the_same_instance_guard():
    """The guard's "same instance" test must not count the row being
    reserved (on PostgreSQL it is inserted before the guard runs)."""
    vol = fixtures.make_volume()
    assert _reserve(vol, instance="i1") is not None
    guard = attach_rules.ReserveGuard(multiattach=False, limit=1,
                                instance_uuid="i2")
    assert _reserve(vol, guard, instance="i2") is None
    assert [row.instance_uuid for row in db.attachments_of_volume(
        fixtures.admin(), vol.id)] == ["i1"]


def test_guard_checks_multiattach_flag_as_read():
    vol = fixtures.make_volume(multiattach=True)
    guard = attach_rules.ReserveGuard(multiattach=False, limit=1)
    assert _reserve(vol, guard) is None


@pytest.mark.parametrize("flag", ["bootable", "readonly"])
def test_guard_checks_bootable_and_readonly_as_read(flag, monkeypatch):
    """Policy and the attach mode were decided on these flags: a flip
    between the read and the reservation refuses it, writing nothing."""
    vol = fixtures.make_volume(multiattach=True, **{flag: True})
    real = reserve_db._brief_and_specs

    def read_before_the_flip(conn, volume_id):
        row, specs = real(conn, volume_id)
        return types.SimpleNamespace(**dict(vars(row), **{flag: False})), specs
    monkeypatch.setattr(reserve_db, "_brief_and_specs", read_before_the_flip)
    assert _reserve(vol) is None
    assert _vol(vol.id).attachment_count == 0
    monkeypatch.setattr(reserve_db, "_brief_and_specs", real)
    assert _reserve(vol) is not None


@pytest.mark.parametrize("status", ["creating", "error", "extending",
                                    "deleting", "retyping", "maintenance"])
def test_reserve_refused_outside_reservable_statuses(status):
    vol = fixtures.make_volume(status=status, multiattach=True)
    assert _reserve(vol) is None


def test_race_on_non_multiattach_exactly_one_wins():
    vol = fixtures.make_volume()
    results = _race(16, lambda i: _reserve(vol, instance="i%d" % i))
    assert len([r for r in results if r is not None]) == 1
    assert len(db.attachments_of_volume(fixtures.admin(), vol.id)) == 1
    assert _vol(vol.id).attachment_count == 1


def test_race_on_multiattach_all_win_and_volume_status_right():
    vol = fixtures.make_volume(multiattach=True)
    results = _race(16, lambda i: _reserve(vol, instance="i%d" % i))
    assert all(r is not None for r in results)
    vol = _vol(vol.id)
    assert vol.attachment_count == 16 and vol.status == "reserved"


def test_race_against_the_limit():
    vol = fixtures.make_volume(multiattach=True)
    guard = attach_rules.ReserveGuard(multiattach=True, limit=5)
    results = _race(12, lambda i: _reserve(vol, guard, instance="i%d" % i))
    assert len([r for r in results if r is not None]) == 5
    assert _vol(vol.id).attachment_count == 5


def test_race_single_writer():
    vol = fixtures.make_volume(multiattach=True)

    def attach(i):
        writer = i % 2 == 0
        guard = attach_rules.ReserveGuard(multiattach=True, limit=100,
                                    single_writer=True, writer=writer)
        return _reserve(vol, guard, mode="rw" if writer else "ro")
    results = _race(12, attach)
    won = [r for r in results if r is not None]
    assert len([r for r in won if r.attach_mode == "rw"]) == 1
    assert len([r for r in won if r.attach_mode == "ro"]) == 6
    assert _vol(vol.id).writer_count == 1


def test_cas_mismatch_writes_nothing():
    vol = fixtures.make_volume()
    row = _reserve(vol)
    assert db.attachment_cas(fixtures.admin(), vol.id, row.id,
                             {"attach_status": "attaching"},
                             {"attach_status": "attached"},
                             writer_delta=-1) is False
    vol = _vol(vol.id)
    assert vol.writer_count == 1 and vol.status == "reserved"


def test_cas_recomputes_volume_and_replaces_connector():
    vol = fixtures.make_volume()
    row = _reserve(vol)
    assert db.attachment_cas(
        fixtures.admin(), vol.id, row.id,
        {"attach_status": "reserved", "transition": None},
        {"attach_status": "attaching", "transition": "connecting",
         "attached_host": "h1", "attach_mode": "ro"},
        connector={"host": "h1"}, replace_connector=True, writer_delta=-1)
    assert db.connector(fixtures.admin(), row.id) == {"host": "h1"}
    vol = _vol(vol.id)
    assert (vol.status, vol.attach_status, vol.writer_count) == (
        "attaching", "attaching", 0)


def test_destroy_recomputes_and_reports_shared():
    vol = fixtures.make_volume(multiattach=True)
    rows = [_reserve(vol, host="h1", with_connector=True,
                     connector={"host": "h1"}) for _ in range(3)]
    other = _reserve(vol, host="h2", with_connector=True,
                     connector={"host": "h2"})
    for row in rows[:2] + [other]:
        db.attachment_cas(fixtures.admin(), vol.id, row.id,
                          {"transition": "creating"},
                          {"transition": None, "attach_status": "attached"})
    assert _vol(vol.id).status == "in-use"
    _r, brief, shared = db.attachment_with_volume(fixtures.admin(),
                                                  rows[0].id, shared=True)
    assert brief.multiattach and brief.attachment_count == 4
    assert set(shared) == {rows[1].id, rows[2].id}
    result = db.attachment_destroy(fixtures.admin(), vol.id, rows[0].id, {})
    assert set(result["shared"]) == {rows[1].id, rows[2].id}
    assert len(result["remaining"]) == 3
    vol = _vol(vol.id)
    assert (vol.status, vol.attachment_count) == ("in-use", 3)
    for row in rows[1:] + [other]:
        assert db.attachment_destroy(fixtures.admin(), vol.id, row.id, {})
    vol = _vol(vol.id)
    assert (vol.status, vol.attach_status) == ("available", "detached")
    assert (vol.attachment_count, vol.writer_count) == (0, 0)
    with db_engine.get_engine().connect() as conn:
        assert not conn.execute(sa.select(sa.func.count()).select_from(
            models.AttachmentSpec)).scalar()


def test_racing_removals_on_one_host_each_see_the_others_left():
    """Removals read the rows they answer with under the volume's lock: of
    n racing removals of one host's rows, one reports n-1 others sharing
    the host's connection, the next n-2, ..., the last none, so the
    compute host disconnects its device exactly once.  (Run it on
    PostgreSQL and MariaDB with ``ASHLAR_UNIT_DB_URL``: SQLite serialises
    the removals whole.)"""
    vol = fixtures.make_volume(multiattach=True)
    rows = [_reserve(vol, host="h", with_connector=True,
                     connector={"host": "h"}) for _ in range(8)]
    for row in rows:
        assert db.attachment_cas(fixtures.admin(), vol.id, row.id,
                                 {"transition": "creating"},
                                 {"transition": None,
                                  "attach_status": "attached"})
    results = _race(8, lambda i: db.attachment_destroy(
        fixtures.admin(), vol.id, rows[i].id, {"transition": None}))
    assert sorted(len(result["shared"]) for result in results) == list(
        range(8))
    vol = _vol(vol.id)
    assert (vol.status, vol.attachment_count) == ("available", 0)


def test_destroy_with_expected_mismatch_keeps_row_and_specs():
    vol = fixtures.make_volume()
    row = _reserve(vol, with_connector=True, connector={"host": "h"})
    assert db.attachment_destroy(fixtures.admin(), vol.id, row.id,
                                 {"transition": None}) is None
    assert db.connector(fixtures.admin(), row.id) == {"host": "h"}
    assert _vol(vol.id).attachment_count == 1


def test_volume_leave_status_derives_from_rows():
    vol = fixtures.make_volume(multiattach=True)
    row = _reserve(vol)
    db.attachment_cas(fixtures.admin(), vol.id, row.id, {}, {"attach_status":
                                                     "attached"})
    volumes_db.volume_cas(fixtures.admin(), vol.id, {"status": "in-use"},
                          {"status": "extending"})
    assert db.volume_leave_status(fixtures.admin(), vol.id, "extending",
                                  {"size": 2})
    vol = _vol(vol.id)
    assert (vol.status, vol.size) == ("in-use", 2)
    assert not db.volume_leave_status(fixtures.admin(), vol.id, "extending")


def test_in_transition_query_finds_old_rows_of_backend():
    vol = fixtures.make_volume(host="n@b#p")
    row = _reserve(vol, with_connector=True, connector={"host": "h"})
    future = timestamps.utcnow().replace(year=2100)
    found = db.attachments_in_transition(fixtures.admin(), "n@b", future)
    assert [r.id for r in found] == [row.id]
    assert not db.attachments_in_transition(fixtures.admin(), "n@c", future)
    assert not db.attachments_in_transition(
        fixtures.admin(), "n@b", timestamps.utcnow().replace(year=2000))


def test_concurrent_cas_on_one_volume_never_locked_out():
    """Read-then-write transactions must queue, not fail, on SQLite."""
    vol = fixtures.make_volume(multiattach=True)
    rows = [_reserve(vol, with_connector=True, host="h%d" % i,
                     connector={"host": "h%d" % i}) for i in range(16)]

    def finish(i):
        db.attachment_get(fixtures.admin(), rows[i].id)
        return db.attachment_cas(fixtures.admin(), vol.id, rows[i].id,
                                 {"transition": "creating"},
                                 {"transition": None,
                                  "attach_status": "attached"})
    assert all(_race(16, finish))
    assert _vol(vol.id).status == "in-use"


def _volume_statements(fn):
    """Run ``fn``; return the statements it sent that name the volumes
    table."""
    seen = []

    def record(_conn, _cursor, statement, *_args):
        if "volumes" in statement:
            seen.append(statement)
    engine = db_engine.get_engine()
    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        fn()
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    return seen


def test_a_change_that_keeps_the_status_leaves_the_volume_alone():
    """The volume service recording a connection (attaching stays
    attaching) neither locks nor writes the volume row."""
    vol = fixtures.make_volume(multiattach=True)
    row = _reserve(vol, with_connector=True, host="h",
                   connector={"host": "h"})
    before = _vol(vol.id)
    assert not _volume_statements(lambda: db.attachment_cas(
        fixtures.admin(), vol.id, row.id,
        {"transition": "creating", "attach_status": "attaching"},
        {"transition": None, "connection_info": "{}"}))
    after = _vol(vol.id)
    assert (after.status, after.updated_at) == ("attaching",
                                                before.updated_at)
    assert db.attachment_get(fixtures.admin(), row.id).transition is None
    assert _volume_statements(lambda: db.attachment_cas(
        fixtures.admin(), vol.id, row.id, {"attach_status": "attaching"},
        {"attach_status": "attached"}))
    assert _vol(vol.id).status == "in-use"


def test_racing_changes_leave_the_status_the_rows_say():
    """Rows change before the volume is locked; whoever locks it last
    derives the status from every committed row, not from what it read
    before taking the lock."""
    vol = fixtures.make_volume(multiattach=True)
    rows = [_reserve(vol, with_connector=True, host="h%d" % i,
                     connector={"host": "h%d" % i}) for i in range(16)]
    for row in rows[8:]:
        assert db.attachment_cas(fixtures.admin(), vol.id, row.id,
                                 {"transition": "creating"},
                                 {"transition": None,
                                  "attach_status": "attached"})

    def change(rows, change):
        # Read, decide, apply: each transaction reads before it locks.
        return _race(len(rows), lambda i: db.attachment_change(
            fixtures.admin(), rows[i].id, lambda _row, _volume: change))

    def state():
        vol_now = _vol(vol.id)
        return (vol_now.status, vol_now.attach_status,
                vol_now.attachment_count)
    change(rows[8:], db.Change({"attach_status": "attached"}, destroy=True))
    assert state() == ("attaching", "attaching", 8)
    change(rows[:8], db.Change({"attach_status": "attaching"},
                               {"transition": None,
                                "attach_status": "attached"}))
    assert state() == ("in-use", "attached", 8)
    change(rows[:8], db.Change({"attach_status": "attached"}, destroy=True))
    assert state() == ("available", "detached", 0)
    assert _vol(vol.id).writer_count == 0


def test_disconnect_read_returns_long_connector_values_whole():
    """The read is a UNION whose first part has the statuses' short
    columns; a connector value longer than them comes back whole."""
    vol = fixtures.make_volume(multiattach=True)
    initiator = "iqn.2004-10.com.example:" + "x" * 600
    row = _reserve(vol, with_connector=True, host="h1", connector={
        "host": "h1", "initiator": initiator, "multipath": False})
    holder = _reserve(vol, with_connector=True, host="h1",
                      connector={"host": "h1"})
    now, connector, holders = db.disconnect_state(fixtures.admin(), vol.id,
                                                  row.id, "h1")
    assert connector == {"host": "h1", "initiator": initiator,
                         "multipath": False}
    assert (now.attach_status, now.transition) == ("attaching", "creating")
    assert holders == [holder.id]


def test_a_volumes_page_is_one_select_in_the_lists_order():
    vol = fixtures.make_volume(multiattach=True)
    fixtures.make_volume(multiattach=True, project="p2")
    for n in range(3):
        _reserve(vol, instance="i%d" % n)
    _reserve(fixtures.make_volume(multiattach=True), instance="other")
    ordered = attachment_reads._listed(
        fixtures.admin(), None, {"volume_id": vol.id}, None, None, None,
        None, None)
    with fixtures.selects() as seen:
        # the default order as the api passes it (validation.parse_sort)
        page = db.attachment_list(fixtures.admin(),
                                  filters={"volume_id": vol.id}, limit=2,
                                  sort_keys=["created_at", "id"],
                                  sort_dirs=["desc", "desc"])
    assert len(seen) == 1, seen
    assert isinstance(page[0], types.SimpleNamespace)  # not through the ORM
    assert [row.id for row in page] == [row.id for row in ordered][:2]
    assert {row.instance_uuid for row in ordered} == {"i0", "i1", "i2"}
    assert page[0].attach_status == ordered[0].attach_status == "reserved"
    assert db.attachment_list(fixtures.admin(), filters={"volume_id": vol.id},
                              limit=2)[1].id == page[1].id
    ascending = db.attachment_list(fixtures.admin(),
                                   filters={"volume_id": vol.id}, limit=3,
                                   sort_keys=["created_at", "id"],
                                   sort_dirs=["asc", "asc"])
    assert not isinstance(ascending[0], types.SimpleNamespace)
    assert [row.id for row in ascending] == [row.id for row in ordered][::-1]


def test_a_volumes_page_shows_only_the_projects_own():
    vol = fixtures.make_volume(multiattach=True, project="p1")
    _reserve(vol, instance="i1")
    mine = db.attachment_list(fixtures.admin(), project_id="p1",
                              filters={"volume_id": vol.id}, limit=10)
    theirs = db.attachment_list(fixtures.admin(), project_id="p2",
                                filters={"volume_id": vol.id}, limit=10)
    assert [row.instance_uuid for row in mine] == ["i1"]
    assert theirs == []
