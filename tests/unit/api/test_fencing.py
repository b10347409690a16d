"""The fencing extension (fence, takeover, unfence, host fences), through
the falcon app, the RPC door, a real (SQLite) database and the fake
driver."""

import datetime
import functools
import json
import uuid

import oslo_messaging as messaging
import pytest
import sqlalchemy as sa

from common import exception
from common.db import models
from common.db.api import attachments as attachments_db
from common.db.api import engine as db_engine
from common.db.api import timestamps
from common.db.api import volumes as volumes_db
from drivers import base as driver_base
from services.api.views import attachments as views

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures

connector = apitest.connector
_door = apitest.door
_agent = apitest.agent
FENCED_AT = views.FENCED_AT
MEMBER = {"token": "u:p1", "roles": "member"}
OTHER_PROJECT = {"token": "u:p2", "roles": "member"}


def _act(api, att_id, name, value=None, **kwargs):
    return api.call("POST", "/attachments/%s/action" % att_id,
                    {name: {} if value is None else value}, **kwargs)


def _attached(api, vid, host="h1", mode=None):
    """A row of ``host`` created with its connector, then completed."""
    att = api.create(vid, connector=connector(host), mode=mode).json[
        "attachment"]
    assert _act(api, att["id"], "os-complete").status_code == 204
    return att


def _single_writer(api):
    vtype = fixtures.make_type(specs={
        "multiattach": "<is> True",
        "ashlar:multiattach_single_writer": "<is> True"})
    return api.volume(multiattach=True, vtype=vtype)


def _row(att_id):
    return attachments_db.attachment_get(fixtures.admin(), att_id)


def _writers(vid):
    return volumes_db.volume_get(fixtures.admin(), vid).writer_count


def _shown(api, att_id):
    return api.call("GET", "/attachments/" + att_id).json["attachment"]


def _host_fence(api, action, host, **kwargs):
    return api.call("PUT", "/ashlar-fencing/" + action, {"host": host},
                    **kwargs)


def _cannot_fence(api, monkeypatch):
    monkeypatch.setattr(api.driver, "fence", functools.partial(
        driver_base.VolumeDriver.fence, api.driver))


def _age(att_id, seconds=3600):
    old = timestamps.utcnow() - datetime.timedelta(seconds=seconds)
    with db_engine.get_engine().begin() as conn:
        conn.execute(sa.update(models.VolumeAttachment).where(
            models.VolumeAttachment.id == att_id).values(updated_at=old))


# -- fence ------------------------------------------------------------------

def test_fence_revokes_the_host_and_leaves_it_only_delete(api):
    vid = api.volume(multiattach=True)
    att = _attached(api, vid, "h1")
    other = _attached(api, vid, "h2")
    assert _writers(vid) == 2
    resp = _act(api, att["id"], "ashlar-fence")
    assert resp.status_code == 200
    fenced = resp.json["attachment"]
    assert fenced["id"] == att["id"] and fenced["status"] == "attached"
    assert fenced[FENCED_AT]
    assert api.driver.fenced == {vid: {"host:h1"}}
    assert _writers(vid) == 1
    assert api.show_volume(vid)["status"] == "in-use"
    assert _shown(api, att["id"])[FENCED_AT] == fenced[FENCED_AT]
    assert FENCED_AT not in _shown(api, other["id"])
    resp = api.call("PUT", "/attachments/" + att["id"],
                    {"attachment": {"connector": connector("h1")}})
    assert resp.status_code == 409 and "is fenced" in apitest.message(resp)
    resp = _act(api, att["id"], "os-complete")
    assert resp.status_code == 409 and "is fenced" in apitest.message(resp)
    assert api.call("DELETE", "/attachments/" + att["id"]).status_code == 200
    assert _writers(vid) == 1
    assert api.show_volume(vid)["status"] == "in-use"
    assert [c["host"] for c in api.driver.connections[vid]] == ["h2"]


def test_fence_twice_is_idempotent(api):
    vid = api.volume(multiattach=True)
    att = _attached(api, vid)
    first = _act(api, att["id"], "ashlar-fence")
    again = _act(api, att["id"], "ashlar-fence")
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.json["attachment"][FENCED_AT] == \
        first.json["attachment"][FENCED_AT]
    assert _writers(vid) == 0


def test_fence_of_a_row_in_flight_is_refused(api):
    vid = api.volume(multiattach=True)
    att = api.create(vid, connector=connector()).json["attachment"]
    assert attachments_db.attachment_record(
        fixtures.admin(), vid, att["id"], {"transition": None},
        {"transition": "connecting"})
    resp = _act(api, att["id"], "ashlar-fence")
    assert resp.status_code == 409 and "cannot fence" in apitest.message(resp)
    row = _row(att["id"])
    assert (row.transition, row.fenced_at) == ("connecting", None)
    assert vid not in api.driver.fenced


def test_fence_action_takes_no_parameters(api):
    vid = api.volume(multiattach=True)
    att = _attached(api, vid)
    resp = _act(api, att["id"], "ashlar-fence", {"host": "h1"})
    assert resp.status_code == 400
    assert _row(att["id"]).fenced_at is None


# -- takeover ----------------------------------------------------------------

def test_takeover_fences_the_writer_and_makes_the_taker_rw(api):
    vid = _single_writer(api)
    writer = _attached(api, vid, "h1")
    taker = _attached(api, vid, "h2", mode="ro")
    assert taker["attach_mode"] == "ro" and _writers(vid) == 1
    resp = _act(api, taker["id"], "ashlar-takeover")
    assert resp.status_code == 200
    took = resp.json["attachment"]
    assert took["id"] == taker["id"] and took["attach_mode"] == "rw"
    assert took["connection_info"]["access_mode"] == "rw"
    assert FENCED_AT not in took
    assert [f["id"] for f in resp.json["fenced"]] == [writer["id"]]
    assert resp.json["fenced"][0][FENCED_AT]
    assert api.driver.fenced == {vid: {"host:h1"}}
    assert _writers(vid) == 1
    shown = _shown(api, taker["id"])
    assert shown["attach_mode"] == "rw"
    assert shown["connection_info"]["access_mode"] == "rw"
    assert attachments_db.connector(fixtures.admin(),
                                    taker["id"])["mode"] == "rw"
    resp = api.create(vid, connector=connector("h3"))
    assert resp.status_code == 400 and "only one read/write" in \
        apitest.message(resp)
    assert api.create(vid, connector=connector("h3"),
                      mode="ro").status_code == 200


def test_takeover_by_a_fenced_attachment_is_refused(api):
    vid = _single_writer(api)
    writer = _attached(api, vid, "h1")
    taker = _attached(api, vid, "h2", mode="ro")
    _act(api, taker["id"], "ashlar-takeover")
    resp = _act(api, writer["id"], "ashlar-takeover")
    assert resp.status_code == 409 and "is fenced" in apitest.message(resp)
    assert _row(taker["id"]).fenced_at is None
    assert _writers(vid) == 1


def test_takeover_of_a_writer_fences_the_others_only(api):
    vid = api.volume(multiattach=True)
    taker = _attached(api, vid, "h1")
    others = [_attached(api, vid, "h2"), _attached(api, vid, "h3")]
    reader = _attached(api, vid, "h4", mode="ro")
    resp = _act(api, taker["id"], "ashlar-takeover", **MEMBER)
    assert resp.status_code == 200
    assert sorted(f["id"] for f in resp.json["fenced"]) == sorted(
        o["id"] for o in others)
    assert api.driver.fenced == {vid: {"host:h2", "host:h3"}}
    assert _row(reader["id"]).fenced_at is None
    assert _writers(vid) == 1


# -- a fenced host ------------------------------------------------------------

def test_a_fenced_host_attaches_anew_only_after_deleting(api):
    vid = api.volume(multiattach=True)
    att = _attached(api, vid, "h1")
    _act(api, att["id"], "ashlar-fence")
    resp = api.create(vid, connector=connector("h1"))
    assert resp.status_code == 409 and "is fenced" in apitest.message(resp)
    assert len(attachments_db.attachments_of_volume(fixtures.admin(),
                                                    vid)) == 1
    assert api.create(vid, connector=connector("h2")).status_code == 200
    assert api.call("DELETE", "/attachments/" + att["id"]).status_code == 200
    resp = api.create(vid, connector=connector("h1"))
    assert resp.status_code == 200
    assert FENCED_AT not in resp.json["attachment"]


def test_a_fenced_host_gets_no_reservation_connected_either(api):
    vid = api.volume(multiattach=True)
    att = _attached(api, vid, "h1")
    _act(api, att["id"], "ashlar-fence")
    reserved = api.create(vid).json["attachment"]
    resp = api.call("PUT", "/attachments/" + reserved["id"],
                    {"attachment": {"connector": connector("h1")}})
    assert resp.status_code == 409 and "is fenced" in apitest.message(resp)
    assert _row(reserved["id"]).attach_status == "reserved"
    resp = api.call("PUT", "/attachments/" + reserved["id"],
                    {"attachment": {"connector": connector("h2")}})
    assert resp.status_code == 200


# -- unfence ----------------------------------------------------------------

def test_unfence_is_admin_only_and_clears_the_fence(api):
    vid = api.volume(multiattach=True)
    att = _attached(api, vid)
    _act(api, att["id"], "ashlar-fence")
    resp = _act(api, att["id"], "ashlar-unfence", **MEMBER)
    assert resp.status_code == 403
    assert _row(att["id"]).fenced_at is not None
    resp = _act(api, att["id"], "ashlar-unfence")
    assert resp.status_code == 200
    assert FENCED_AT not in resp.json["attachment"]
    assert FENCED_AT not in _shown(api, att["id"])
    row = _row(att["id"])
    assert (row.fenced_at, row.fenced_clients) == (None, None)
    assert _writers(vid) == 1
    assert _act(api, att["id"], "os-complete").status_code == 204


def test_unfence_lifts_the_backends_revocation(api):
    vid = api.volume(multiattach=True)
    att = _attached(api, vid)
    _act(api, att["id"], "ashlar-fence")
    assert api.driver.fenced[vid] == {"host:h1"}
    assert _act(api, att["id"], "ashlar-unfence").status_code == 200
    assert api.driver.fenced[vid] == set()


def test_unfence_refused_while_the_volume_has_its_writer(api):
    vid = _single_writer(api)
    writer = _attached(api, vid, "h1")
    taker = _attached(api, vid, "h2", mode="ro")
    _act(api, taker["id"], "ashlar-takeover")
    resp = _act(api, writer["id"], "ashlar-unfence")
    assert resp.status_code == 409
    assert "allows one read/write attachment" in apitest.message(resp)
    assert _row(writer["id"]).fenced_at is not None
    assert FENCED_AT in _shown(api, writer["id"])
    assert api.driver.fenced == {vid: {"host:h1"}}
    assert _writers(vid) == 1


def test_unfence_of_an_attachment_not_fenced_is_409(api):
    vid = api.volume(multiattach=True)
    att = _attached(api, vid)
    resp = _act(api, att["id"], "ashlar-unfence")
    assert resp.status_code == 409 and "is not fenced" in apitest.message(resp)


# -- a backend that cannot fence ------------------------------------------------

def test_backend_that_cannot_fence_leaves_the_row_at_rest(api, monkeypatch):
    _cannot_fence(api, monkeypatch)
    vid = api.volume(multiattach=True)
    att = api.create(vid, connector=connector()).json["attachment"]
    resp = _act(api, att["id"], "ashlar-fence")
    assert resp.status_code == 400 and "cannot fence" in apitest.message(resp)
    row = _row(att["id"])
    assert (row.transition, row.fenced_at) == (None, None)
    assert _writers(vid) == 1
    assert _act(api, att["id"], "os-complete").status_code == 204
    assert api.show_volume(vid)["status"] == "in-use"


def test_takeover_on_a_backend_that_cannot_fence_grants_nothing(
        api, monkeypatch):
    vid = _single_writer(api)
    writer = _attached(api, vid, "h1")
    taker = _attached(api, vid, "h2", mode="ro")
    _cannot_fence(api, monkeypatch)
    resp = _act(api, taker["id"], "ashlar-takeover")
    assert resp.status_code == 400
    assert _row(writer["id"]).fenced_at is None
    assert _row(writer["id"]).transition is None
    assert _row(taker["id"]).attach_mode == "ro"
    assert _writers(vid) == 1


# -- policy and discovery ---------------------------------------------------------

def test_another_projects_user_sees_no_attachment_to_fence(api):
    vid = api.volume(multiattach=True)
    att = _attached(api, vid)
    for name in ("ashlar-fence", "ashlar-takeover", "ashlar-unfence"):
        resp = _act(api, att["id"], name, **OTHER_PROJECT)
        assert resp.status_code == 404, name
    assert _row(att["id"]).fenced_at is None


def test_a_member_fences_but_fences_no_host(api):
    vid = api.volume(multiattach=True)
    att = _attached(api, vid)
    for action in ("fence", "unfence"):
        resp = _host_fence(api, action, "h1", **MEMBER)
        assert resp.status_code == 403, action
    assert _row(att["id"]).fenced_at is None
    assert _act(api, att["id"], "ashlar-fence", **MEMBER).status_code == 200


def test_extensions_list_fencing(api):
    resp = api.call("GET", "/extensions")
    assert resp.status_code == 200
    assert "ashlar-fencing" in [e["alias"] for e in resp.json["extensions"]]


# -- a host ------------------------------------------------------------------

def test_host_fence_fences_every_attachment_of_the_host(api):
    v1 = api.volume(multiattach=True)
    v2 = api.volume(multiattach=True, project="p2")
    mine = sorted([_attached(api, v1, "h1")["id"],
                   _attached(api, v2, "h1")["id"]])
    kept = _attached(api, v1, "h2")
    resp = _host_fence(api, "fence", "h1")
    assert resp.status_code == 200 and resp.json["host"] == "h1"
    rows = resp.json["attachments"]
    assert sorted(r["id"] for r in rows) == mine
    assert all(r[FENCED_AT] for r in rows)
    assert api.driver.fenced == {v1: {"host:h1"}, v2: {"host:h1"}}
    assert _row(kept["id"]).fenced_at is None
    assert (_writers(v1), _writers(v2)) == (1, 0)
    resp = _host_fence(api, "unfence", "h1")
    assert resp.status_code == 200
    rows = resp.json["attachments"]
    assert sorted(r["id"] for r in rows) == mine
    assert not any(FENCED_AT in r for r in rows)
    assert all(_row(att_id).fenced_at is None for att_id in mine)
    assert (_writers(v1), _writers(v2)) == (2, 1)


def test_host_fence_of_an_idle_host_and_unknown_actions(api):
    resp = _host_fence(api, "fence", "h9")
    assert resp.status_code == 200
    assert resp.json == {"host": "h9", "attachments": []}
    assert _host_fence(api, "smash", "h9").status_code == 404
    assert api.call("PUT", "/ashlar-fencing/fence", {}).status_code == 400


# -- the volume node --------------------------------------------------------------

def test_resolve_stuck_finishes_a_fence(api):
    vid = api.volume(multiattach=True)
    att = _attached(api, vid)
    assert attachments_db.attachment_record(
        fixtures.admin(), vid, att["id"], {"transition": None},
        {"transition": "fencing"})
    attacher = api.rpc.attacher
    assert attacher.resolve_stuck(fixtures.admin()) == 0  # young yet
    _age(att["id"])
    assert attacher.resolve_stuck(fixtures.admin()) == 1
    row = _row(att["id"])
    assert row.transition is None and row.fenced_at is not None
    assert json.loads(row.fenced_clients) == ["host:h1"]
    assert api.driver.fenced == {vid: {"host:h1"}}
    assert _writers(vid) == 0
    assert row.attach_status == "attached"
    assert api.driver.connections[vid]


# -- the RPC door -------------------------------------------------------------------

#: Client instances of host h1 (connector ip 10.0.0.1), as librados names
#: them.
A, B, C = "10.0.0.1:0/1001", "10.0.0.1:0/1002", "10.0.0.1:0/1003"


def test_door_complete_registers_clients_the_fence_revokes(api):
    vid = api.volume(multiattach=True)
    att = api.create(vid, connector=connector("h1")).json["attachment"]
    door = _door(api)
    done = door.attachment_complete(_agent("h1"), att["id"],
                                    clients=[B, A])
    assert done["request_id"] == "r"
    door.attachment_complete(_agent("h1"), att["id"], clients=[C, A])
    assert json.loads(_row(att["id"]).clients) == [B, A, C]
    assert api.show_volume(vid)["status"] == "in-use"
    fenced = _act(api, att["id"], "ashlar-fence")
    assert fenced.status_code == 200
    assert api.driver.fenced == {vid: {A, B, C}}
    assert json.loads(_row(att["id"]).fenced_clients) == [A, B, C]


def test_door_keeps_the_latest_clients_and_bounds_them(api):
    vid = api.volume(multiattach=True)
    att = api.create(vid, connector=connector("h1")).json["attachment"]
    door = _door(api)
    many = ["10.0.0.1:0/%d" % (100 + i) for i in range(40)]
    door.attachment_complete(_agent("h1"), att["id"], clients=many)
    assert json.loads(_row(att["id"]).clients) == many[-32:]
    with pytest.raises(messaging.ExpectedException) as caught:
        door.attachment_complete(_agent("h1"), att["id"],
                                 clients=["c%d" % i for i in range(65)])
    assert caught.value.exc_info[0] is exception.ValidationError
    assert json.loads(_row(att["id"]).clients) == many[-32:]


@pytest.mark.parametrize("client", [
    "10.0.0.1:0/0",         # every instance at the address
    "10.0.0.2:0/1001",      # another host's address
    "client.a",             # no address at all
    "10.0.0.1:0",           # no instance
    "10.0.0.999:0/1",       # no IP
    "[::1]:0/5"])           # not the host's address either
def test_door_refuses_clients_that_are_not_one_instance_of_the_host(
        api, client):
    """A fence blocklists exactly what was registered: ``IP:0/0`` would
    cut every client at that address, another IP another host."""
    vid = api.volume(multiattach=True)
    att = api.create(vid, connector=connector("h1")).json["attachment"]
    with pytest.raises(messaging.ExpectedException) as caught:
        _door(api).attachment_complete(_agent("h1"), att["id"],
                                       clients=[A, client])
    assert caught.value.exc_info[0] is exception.InvalidInput
    row = _row(att["id"])
    assert (row.clients, row.attach_status) == (None, "attaching")


def test_door_takes_ipv6_clients_of_an_ipv6_host(api):
    vid = api.volume(multiattach=True)
    att = api.create(vid, connector=dict(connector("h1"), ip="fd00::1")
                     ).json["attachment"]
    _door(api).attachment_complete(_agent("h1"), att["id"],
                                   clients=["[fd00::1]:0/77"])
    assert json.loads(_row(att["id"]).clients) == ["[fd00::1]:0/77"]


def test_door_complete_of_a_fenced_row_is_refused(api):
    vid = api.volume(multiattach=True)
    att = _attached(api, vid, "h1")
    _act(api, att["id"], "ashlar-fence")
    with pytest.raises(messaging.ExpectedException) as caught:
        _door(api).attachment_complete(_agent("h1"), att["id"],
                                       clients=[A])
    assert caught.value.exc_info[0] is exception.Fenced
    assert _row(att["id"]).clients is None


def test_door_takeover_by_the_taking_hosts_agent(api):
    vid = _single_writer(api)
    writer = _attached(api, vid, "h1")
    taker = _attached(api, vid, "h2", mode="ro")
    door = _door(api)
    for intruder in ("h1", "h3"):
        with pytest.raises(messaging.ExpectedException) as caught:
            door.attachment_takeover(_agent(intruder), taker["id"])
        assert caught.value.exc_info[0] is exception.AttachmentNotFound
    assert _row(writer["id"]).fenced_at is None
    answer = door.attachment_takeover(_agent("h2"), taker["id"])
    assert answer["request_id"] == "r"
    assert answer["attachment"]["attach_mode"] == "rw"
    assert [f["id"] for f in answer["fenced"]] == [writer["id"]]
    assert api.driver.fenced == {vid: {"host:h1"}}
    assert _writers(vid) == 1


def test_door_takeover_of_an_unknown_attachment(api):
    with pytest.raises(messaging.ExpectedException) as caught:
        _door(api).attachment_takeover(_agent("h1"), str(uuid.uuid4()))
    assert caught.value.exc_info[0] is exception.AttachmentNotFound


# -- takeover needs the project's consent -------------------------------------

def _agent_attached(api, vid, host, mode="ro"):
    """A row ``host``'s agent made for itself through the door, completed."""
    door = _door(api)
    att = door.attachment_create(_agent(host), vid, connector=connector(host),
                                 mode=mode)["attachment"]
    door.attachment_complete(_agent(host), att["id"])
    return att


def test_an_agent_cannot_fence_another_hosts_writer_by_attaching_itself(api):
    """A compute agent may attach any volume for its own host; a takeover
    through that row would fence the project's writer on another host: it
    is refused, and nothing is fenced or granted."""
    vid = _single_writer(api)
    writer = _attached(api, vid, "h1")
    mine = _agent_attached(api, vid, "h2")
    assert _row(mine["id"]).agent_made is True
    assert _row(writer["id"]).agent_made is None
    with pytest.raises(messaging.ExpectedException) as caught:
        _door(api).attachment_takeover(_agent("h2"), mine["id"])
    refused = caught.value.exc_info[1]
    assert isinstance(refused, exception.TakeoverNeedsConsent)
    assert refused.code == 403 and "project made" in str(refused)
    assert (_row(writer["id"]).fenced_at, _row(mine["id"]).attach_mode) == (
        None, "ro")
    assert not api.driver.fenced
    assert _writers(vid) == 1


def test_an_agents_credential_over_rest_makes_no_consent(api):
    """The rule follows the caller, not the way in: a row an agent's
    credential makes over REST is the agent's too."""
    vid = _single_writer(api)
    writer = _attached(api, vid, "h1")
    mine = api.ops.attachments.create(_agent("h2"), vid,
                                      connector=connector("h2"), mode="ro")
    assert _row(mine.id).agent_made is True
    with pytest.raises(exception.TakeoverNeedsConsent):
        api.ops.fencing.takeover(_agent("h2"), mine.id)
    assert _row(writer["id"]).fenced_at is None and not api.driver.fenced


def test_door_takeover_through_the_projects_reservation(api):
    """The project reserves for the host over REST (no connector); the
    host's agent connects it, completes it and takes over."""
    vid = _single_writer(api)
    writer = _attached(api, vid, "h1")
    reserved = api.create(vid, mode="ro", **MEMBER).json["attachment"]
    door = _door(api)
    connected = door.attachment_update(_agent("h2"), reserved["id"],
                                       connector("h2"))["attachment"]
    assert (connected["status"], connected["attach_mode"]) == ("attaching",
                                                               "ro")
    door.attachment_complete(_agent("h2"), reserved["id"])
    answer = door.attachment_takeover(_agent("h2"), reserved["id"])
    assert answer["attachment"]["attach_mode"] == "rw"
    assert [f["id"] for f in answer["fenced"]] == [writer["id"]]
    assert api.driver.fenced == {vid: {"host:h1"}}
    assert _row(reserved["id"]).agent_made is None
    assert _writers(vid) == 1


def test_rest_takeover_through_an_agents_row_by_a_member(api):
    """A member of the project (or an admin) is the project's consent: over
    REST it takes over through any row of the project, as before."""
    vid = _single_writer(api)
    writer = _attached(api, vid, "h1")
    mine = _agent_attached(api, vid, "h2")
    resp = _act(api, mine["id"], "ashlar-takeover", **MEMBER)
    assert resp.status_code == 200, resp.text
    assert [f["id"] for f in resp.json["fenced"]] == [writer["id"]]
    assert resp.json["attachment"]["attach_mode"] == "rw"
    assert api.driver.fenced == {vid: {"host:h1"}}


def test_rest_takeover_of_another_project_through_an_agents_row(api):
    """Another project's member still learns nothing of the row."""
    vid = _single_writer(api)
    mine = _agent_attached(api, vid, "h2")
    resp = _act(api, mine["id"], "ashlar-takeover", **OTHER_PROJECT)
    assert resp.status_code == 404
    assert _row(mine["id"]).attach_mode == "ro"


def test_takeover_by_a_reservation_counts_it_once(api):
    """A reservation without a mode already counts as a writer: a takeover
    fences the others and adds nothing."""
    vid = api.volume(multiattach=True)
    writer = _attached(api, vid, "h1")
    reserved = api.create(vid).json["attachment"]
    assert _writers(vid) == 2
    resp = _act(api, reserved["id"], "ashlar-takeover")
    assert resp.status_code == 200, resp.text
    assert [f["id"] for f in resp.json["fenced"]] == [writer["id"]]
    assert _writers(vid) == 1


def test_a_fence_the_volume_node_cannot_take_is_refused_before_anything(api):
    """Pinned below the fence's RPC version (a rolling upgrade), the api
    refuses at once and leaves the row at rest (an older node would take a
    row left "fencing" for a stuck connect)."""
    vid = api.volume(multiattach=True)
    att = _attached(api, vid)
    api.rpc.cap = "1.3"
    resp = _act(api, att["id"], "ashlar-fence")
    assert resp.status_code == 503
    row = _row(att["id"])
    assert (row.transition, row.fenced_at) == (None, None)
    assert not api.driver.fenced


# -- races --------------------------------------------------------------------

def test_takeovers_racing_writer_attaches_leave_one_writer(api):
    """Takeovers by read-only rows race read/write attaches of other hosts:
    however they interleave, the single-writer volume ends with at most one
    writer that is not fenced, and its counter says so (a takeover that met
    a row in flight is refused, to be retried; once the race is over, one
    succeeds)."""
    vid = _single_writer(api)
    _attached(api, vid, "h0")
    readers = [_attached(api, vid, "r%d" % i, mode="ro") for i in range(4)]
    ctxt = fixtures.admin()

    def act(i):
        if i < len(readers):
            return api.ops.fencing.takeover(ctxt, readers[i]["id"])
        return api.ops.attachments.create(
            ctxt, vid, connector=connector("w%d" % i), mode="rw")
    results = fixtures.race(12, act)
    errors = [r for r in results if isinstance(r, Exception)]
    assert all(isinstance(e, (exception.Conflict, exception.InvalidVolume))
               for e in errors), errors
    # NOTE: the rows in each message, should a rare interleaving fail.
    rows = _rows_of(ctxt, vid)
    assert len(_unfenced_writers(ctxt, vid)) <= 1, (results, rows)
    assert _writers(vid) == len(_unfenced_writers(ctxt, vid)), (results,
                                                                rows)
    late = _attached(api, vid, "late", mode="ro")
    api.ops.fencing.takeover(ctxt, late["id"])
    assert _unfenced_writers(ctxt, vid) == [late["id"]], _rows_of(ctxt, vid)
    assert _writers(vid) == 1, _rows_of(ctxt, vid)


def _rows_of(ctxt, vid):
    return [(r.attached_host, r.attach_mode, r.attach_status, r.transition,
             r.fenced_at is not None)
            for r in attachments_db.attachments_of_volume(ctxt, vid)]


def _unfenced_writers(ctxt, vid):
    return [r.id for r in attachments_db.attachments_of_volume(ctxt, vid)
            if r.attach_mode != "ro" and r.fenced_at is None]
