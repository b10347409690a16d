"""common/db/api/messages.py and common/messages.py: writing, reading,
listing, deleting and reaping user messages; Cinder's event ids and texts;
a message only from the failure that changed the volume."""

import datetime
import uuid
from unittest import mock

import pytest

from common import context
from common import exception
from common import messages
from common.db.api import messages as messages_db
from common.db.api import volumes as volumes_db
from common.db.api.timestamps import utcnow

try:
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from db import fixtures


database = fixtures.database
TTL = 3600


def _record(project="p1", resource=None, event=messages.NO_BACKEND,
            ttl=TTL, ctxt=None):
    resource = resource or str(uuid.uuid4())
    messages.record(ctxt or fixtures.user(project), ttl, event, resource,
                    project)
    [row] = messages_db.message_list(fixtures.admin(),
                                     filters={"resource_uuid": resource})
    return row


def test_cinder_event_ids_and_texts():
    assert messages.NO_BACKEND.event_id == "VOLUME_VOLUME_001_003"
    assert messages.user_message("001", "003") == (
        "schedule allocate volume:Could not find any available weighted "
        "backend.")
    assert messages.CREATE_FAILED.event_id == "VOLUME_VOLUME_008_012"
    assert messages.user_message("008", "012") == (
        "create volume from backend storage:Driver failed to create the "
        "volume.")
    assert messages.EXTEND_FAILED.event_id == "VOLUME_VOLUME_007_010"
    assert messages.user_message("007", "010") == (
        "extend volume:Volume Driver failed to extend volume.")
    assert messages.SERVICE_DOWN.event_id == "VOLUME_VOLUME_008_002"
    assert messages.SNAPSHOT_CREATE_FAILED.event_id == \
        "VOLUME_VOLUME_SNAPSHOT_009_013"
    assert messages.user_message("999", "999") == (
        "unknown action:An unknown error occurred.")


def test_record_keeps_the_request_project_and_expiry():
    ctxt = context.RequestContext(user_id="u", project_id="p1",
                                  request_id="req-abc", overwrite=False)
    row = _record(ctxt=ctxt)
    assert (row.project_id, row.request_id, row.message_level,
            row.resource_type, row.event_id) == (
        "p1", "req-abc", "ERROR", "VOLUME", "VOLUME_VOLUME_001_003")
    assert row.expires_at - row.created_at == datetime.timedelta(seconds=TTL)
    assert messages_db.message_get(fixtures.admin(), row.id).id == row.id


def test_record_failure_is_logged_not_raised():
    with mock.patch.object(messages_db, "message_create",
                           side_effect=RuntimeError("db gone")), \
            mock.patch.object(messages.LOG, "exception") as logged:
        messages.record(fixtures.admin(), TTL, messages.NO_BACKEND, "v", "p")
    logged.assert_called_once()


def test_list_is_per_project_newest_first_and_filtered():
    first = _record(resource="v1")
    second = _record(resource="v2", event=messages.EXTEND_FAILED)
    _record(project="p2")
    ctxt = fixtures.admin()
    listed = messages_db.message_list(ctxt, project_id="p1")
    assert {r.id for r in listed} == {first.id, second.id}
    assert [(r.created_at, r.id) for r in listed] == sorted(
        ((r.created_at, r.id) for r in listed), reverse=True)
    assert len(messages_db.message_list(ctxt)) == 3
    assert [r.id for r in messages_db.message_list(
        ctxt, project_id="p1",
        filters={"event_id": "VOLUME_VOLUME_007_010"})] == [second.id]
    assert [r.id for r in messages_db.message_list(
        ctxt, project_id="p1", marker=listed[0].id)] == [listed[1].id]


def test_a_marker_of_another_project_is_not_found():
    other = _record(project="p2")
    with pytest.raises(exception.MessageNotFound):
        messages_db.message_list(fixtures.admin(), project_id="p1",
                                 marker=other.id)


def test_destroy_and_not_found():
    row = _record()
    messages_db.message_destroy(fixtures.admin(), row.id)
    for call in (messages_db.message_get, messages_db.message_destroy):
        with pytest.raises(exception.MessageNotFound):
            call(fixtures.admin(), row.id)


def test_destroy_expired_deletes_the_expired_ones_once():
    kept = _record(ttl=TTL)
    _record(ttl=1)
    with mock.patch.object(messages_db, "utcnow",
                           return_value=utcnow() + datetime.timedelta(
                               seconds=60)):
        assert messages_db.message_destroy_expired(fixtures.admin()) == 1
        assert messages_db.message_destroy_expired(fixtures.admin()) == 0
    assert [r.id for r in messages_db.message_list(fixtures.admin())] == [
        kept.id]


def test_fail_volume_tells_only_when_it_changed_the_volume():
    vol = fixtures.make_volume(status="creating", host=None)
    ctxt = fixtures.admin()
    for _ in range(2):
        messages.fail_volume(ctxt, TTL, vol, {"status": "creating"},
                             {"status": "error", "error_reason": "why"},
                             messages.NO_BACKEND)
    row = volumes_db.volume_get(ctxt, vol.id)
    assert (row.status, row.error_reason) == ("error", "why")
    [msg] = messages_db.message_list(ctxt)
    assert (msg.resource_uuid, msg.project_id) == (vol.id, vol.project_id)
