"""Leases: an attachment a compute agent made through the RPC door, or a
REST create whose connect went unanswered, and never completed is removed
by the volume service once its lease lapsed; nothing else made over REST,
completed, or renewed in time is."""

import datetime
import json

import oslo_messaging as messaging
import pytest
import sqlalchemy as sa

from common import context
from common import exception
from common.db import models
from common.db.api import attachments as attachments_db
from common.db.api import engine as db_engine
from common.db.api import timestamps

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures

connector = apitest.connector
VA = models.VolumeAttachment


def _lapse(att_id, seconds=1):
    """Move the row's lease ``seconds`` into the past."""
    past = timestamps.utcnow() - datetime.timedelta(seconds=seconds)
    with db_engine.get_engine().begin() as conn:
        conn.execute(sa.update(VA).where(VA.id == att_id).values(
            lease_expires_at=past))


def _lease(att_id):
    return attachments_db.attachment_get(fixtures.admin(), att_id) \
        .lease_expires_at


def _gone(att_id):
    with pytest.raises(Exception) as caught:
        attachments_db.attachment_get(fixtures.admin(), att_id)
    return type(caught.value).__name__ == "AttachmentNotFound"


def _reap(api):
    return api.rpc.attacher.reap_lapsed_leases(fixtures.admin())


def _door_create(api, vid, host="h1"):
    """A row the agent of ``host`` creates with its connector."""
    return apitest.door(api).attachment_create(
        apitest.agent(host), vid, connector=connector(host))["attachment"]


def _door_reserve(api, vid):
    """A reservation through the door (noauth: the caller is an admin;
    an authenticated agent creates rows with its connector only)."""
    noauth = context.RequestContext(user_id="admin", project_id="admin",
                                    roles=["admin"], global_request_id="r")
    return apitest.door(api).attachment_create(noauth, vid)["attachment"]


def test_a_connected_row_the_agent_never_completed_is_removed(api):
    vid = api.volume(multiattach=True)
    att = _door_create(api, vid)
    lease = _lease(att["id"])
    now = timestamps.utcnow()
    assert now < lease <= now + datetime.timedelta(seconds=600)
    assert _reap(api) == 0
    assert api.driver.connections[vid]
    _lapse(att["id"])
    assert _reap(api) == 1
    assert _gone(att["id"])
    assert vid not in api.driver.connections
    assert api.show_volume(vid)["status"] == "available"
    assert _reap(api) == 0


def test_a_reservation_of_a_vanished_agent_is_removed(api):
    vid = api.volume()
    att = _door_reserve(api, vid)
    assert api.show_volume(vid)["status"] == "reserved"
    _lapse(att["id"])
    assert _reap(api) == 1
    assert _gone(att["id"])
    assert api.show_volume(vid)["status"] == "available"
    assert api.create(vid).status_code == 200


def test_a_completed_row_has_no_lease_and_stays(api):
    vid = api.volume()
    att = _door_create(api, vid)
    apitest.door(api).attachment_complete(apitest.agent("h1"), att["id"])
    assert _lease(att["id"]) is None
    assert _reap(api) == 0
    assert api.show_volume(vid)["status"] == "in-use"


def test_rows_made_over_rest_are_never_reaped(api):
    vid = api.volume(multiattach=True)
    reserved = api.create(vid).json["attachment"]
    connected = api.create(vid, connector=connector("h2")).json["attachment"]
    for att in (reserved, connected):
        assert _lease(att["id"]) is None
    assert _reap(api) == 0
    assert len(api.call("GET", "/attachments").json["attachments"]) == 2


def test_a_door_update_renews_the_lease(api):
    vid = api.volume()
    att = _door_reserve(api, vid)
    _lapse(att["id"], seconds=3600)
    apitest.door(api).attachment_update(apitest.agent("h1"), att["id"],
                                        connector("h1"))
    assert _lease(att["id"]) > timestamps.utcnow()
    assert _reap(api) == 0
    assert api.driver.connections[vid]


def test_a_row_completed_after_the_lapse_was_read_is_kept(api, monkeypatch):
    vid = api.volume()
    att = _door_create(api, vid)
    _lapse(att["id"])
    stale = attachments_db.attachments_with_lapsed_lease(
        fixtures.admin(), apitest.HOST, timestamps.utcnow())
    assert [row.id for row in stale] == [att["id"]]
    apitest.door(api).attachment_complete(apitest.agent("h1"), att["id"])
    monkeypatch.setattr(attachments_db, "attachments_with_lapsed_lease",
                        lambda *args: stale)
    assert _reap(api) == 0
    assert api.show_volume(vid)["status"] == "in-use"
    assert api.driver.connections[vid]


def test_a_lapsed_row_keeps_the_connection_its_host_shares(api):
    vid = api.volume(multiattach=True)
    kept = api.create(vid, connector=connector("h1")).json["attachment"]
    assert api.call("POST", "/attachments/%s/action" % kept["id"],
                    {"os-complete": {}}).status_code == 204
    lapsed = _door_create(api, vid, host="h1")
    connections = list(api.driver.connections[vid])
    _lapse(lapsed["id"])
    assert _reap(api) == 1
    assert _gone(lapsed["id"])
    assert api.driver.connections[vid] == connections
    assert api.show_volume(vid)["status"] == "in-use"


def test_a_lease_of_zero_seconds_means_never(api, monkeypatch):
    monkeypatch.setattr(api.ops.attachments.conf, "agent_attachment_lease",
                        0, raising=False)
    vid = api.volume()
    att = _door_create(api, vid)
    assert _lease(att["id"]) is None


def _unanswered(api, monkeypatch, connect_first):
    """Connects time out; the volume service connects the row first
    (its answer was lost) or not at all (it is slow, or died); the
    snapshots it was sent are kept."""
    sent = []

    def timeout(ctxt, host, attachment_id, snap):
        sent.append(snap)
        if connect_first:
            api.rpc.attacher.connect(ctxt, json.loads(json.dumps(snap)))
        raise messaging.MessagingTimeout("no answer")

    monkeypatch.setattr(api.rpc, "attachment_connect", timeout)
    return sent


def test_a_rest_create_whose_lost_answer_connected_gets_the_row(
        api, monkeypatch):
    _unanswered(api, monkeypatch, connect_first=True)
    vid = api.volume()
    resp = api.create(vid, connector=connector("h2"))
    assert resp.status_code == 200, resp.json
    att = resp.json["attachment"]
    assert att["connection_info"]["driver_volume_type"]
    assert _lease(att["id"]) is None


def test_a_rest_create_left_connecting_is_leased_and_reaped_if_connected(
        api, monkeypatch):
    sent = _unanswered(api, monkeypatch, connect_first=False)
    vid = api.volume()
    resp = api.create(vid, connector=connector("h2"))
    assert resp.status_code == 503
    [row] = attachments_db.attachment_list(fixtures.admin())
    assert row.id in apitest.message(resp)
    assert "removed unless completed" in apitest.message(resp)
    assert _lease(row.id) > timestamps.utcnow()
    api.rpc.attacher.connect(fixtures.admin(),
                             json.loads(json.dumps(sent[0])))
    assert api.driver.connections[vid]
    _lapse(row.id)
    assert _reap(api) == 1
    assert _gone(row.id)
    assert vid not in api.driver.connections
    assert api.show_volume(vid)["status"] == "available"


def test_an_update_that_times_out_leases_nothing(api, monkeypatch):
    vid = api.volume()
    att = api.create(vid).json["attachment"]
    _unanswered(api, monkeypatch, connect_first=False)
    resp = api.call("PUT", "/attachments/" + att["id"],
                    {"attachment": {"connector": connector("h2")}})
    assert resp.status_code == 503
    assert "removed" not in apitest.message(resp)
    assert _lease(att["id"]) is None


def test_a_connect_refused_by_the_lock_service_is_a_503_and_leased(
        api, monkeypatch):
    """The volume service could not take its cluster lock (its etcd
    failing over): the api answers 503, as for a connect not answered,
    never a 500, and the row it cannot return gets a lease."""
    def refused(ctxt, host, attachment_id, snap):
        raise exception.LockServiceUnavailable()

    monkeypatch.setattr(api.rpc, "attachment_connect", refused)
    vid = api.volume()
    resp = api.create(vid, connector=connector("h2"))
    assert resp.status_code == 503
    [row] = attachments_db.attachment_list(fixtures.admin())
    assert row.id in apitest.message(resp)
    assert _lease(row.id) > timestamps.utcnow()


def test_a_connect_whose_volume_service_lost_the_database_is_a_503(
        api, monkeypatch):
    """The volume service's database failed over while it recorded the
    connect (oslo.db's error reaches the api as a ``RemoteError``): a
    503 with a lease, as for a connect not answered, never a 500."""
    def lost(ctxt, host, attachment_id, snap):
        raise messaging.RemoteError("DBConnectionError", "(2013, 'Lost')")

    monkeypatch.setattr(api.rpc, "attachment_connect", lost)
    vid = api.volume()
    resp = api.create(vid, connector=connector("h2"))
    assert resp.status_code == 503
    [row] = attachments_db.attachment_list(fixtures.admin())
    assert _lease(row.id) > timestamps.utcnow()


def test_another_remote_error_of_a_connect_is_still_a_500(api, monkeypatch):
    def broken(ctxt, host, attachment_id, snap):
        raise messaging.RemoteError("KeyError", "'x'")

    monkeypatch.setattr(api.rpc, "attachment_connect", broken)
    resp = api.create(api.volume(), connector=connector("h2"))
    assert resp.status_code == 500


def test_a_disconnect_whose_volume_service_lost_the_database_is_a_503(
        api, monkeypatch):
    vid = api.volume()
    att = api.create(vid, connector=connector("h2")).json["attachment"]

    def lost(ctxt, host, attachment_id, snap):
        raise messaging.RemoteError("DBConnectionError", "(2013, 'Lost')")

    monkeypatch.setattr(api.rpc, "attachment_disconnect", lost)
    resp = api.call("DELETE", "/attachments/" + att["id"])
    assert resp.status_code == 503, resp.json
    assert resp.headers["Retry-After"] == "1"
