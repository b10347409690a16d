"""The attachments API and the attachment rules of volume actions, through
the falcon app, a real (SQLite) database and the fake driver."""

import types
import uuid

import oslo_messaging as messaging
import pytest

from oslo_policy import policy as oslo_policy

from common import context
from common import exception
from common import policy
from common.db.api import attachments as attachments_db
from common.db.api import volumes as volumes_db
from common.db.api.attachments import reads as attachment_reads
from services.api import rpc_door

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures

connector = apitest.connector
HOST = apitest.HOST

# -- versions and shapes ------------------------------------------------------

def test_attachments_need_3_27_and_complete_3_44(api):
    vid = api.volume()
    assert api.create(vid, version="volume 3.26").status_code == 404
    assert api.call("GET", "/attachments",
                    version="volume 3.26").status_code == 404
    att = api.create(vid, version="volume 3.27").json["attachment"]
    resp = api.call("POST", "/attachments/%s/action" % att["id"],
                    {"os-complete": None}, version="volume 3.43")
    assert resp.status_code == 404
    resp = api.create(vid, mode="ro", version="volume 3.53")
    assert resp.status_code == 400 and "'mode' was unexpected" in \
        apitest.message(resp)


def test_reserve_shape_and_volume_status(api):
    vid = api.volume()
    resp = api.create(vid, connector={})
    assert resp.status_code == 200
    att = resp.json["attachment"]
    assert att["status"] == "reserved" and att["volume_id"] == vid
    assert att["attach_mode"] == "null" and att["connection_info"] == {}
    assert att["attached_at"] == "" and att["detached_at"] == ""
    volume = api.show_volume(vid)
    assert volume["status"] == "reserved" and volume["attachments"] == []


def test_create_with_connector_connects(api):
    vid = api.volume()
    att = api.create(vid, connector=connector(), mode="ro").json[
        "attachment"]
    assert att["status"] == "attaching" and att["attach_mode"] == "ro"
    info = att["connection_info"]
    assert info["driver_volume_type"] == "fake"
    assert info["access_mode"] == "ro" and info["attachment_id"] == att["id"]
    assert api.driver.connections[vid][0]["host"] == "h1"
    assert api.show_volume(vid)["status"] == "attaching"


def test_full_cycle_and_volume_view(api):
    vid = api.volume(multiattach=True)
    att = api.create(vid, connector=connector()).json["attachment"]
    resp = api.call("POST", "/attachments/%s/action" % att["id"],
                    {"os-complete": att["id"]})
    assert resp.status_code == 204
    volume = api.show_volume(vid)
    assert volume["status"] == "in-use" and volume["multiattach"] is True
    assert [a["attachment_id"] for a in volume["attachments"]] == [att["id"]]
    assert volume["attachments"][0]["server_id"] == att["instance"]
    resp = api.call("DELETE", "/attachments/" + att["id"])
    assert resp.status_code == 200
    assert resp.json == {"attachments": [],
                         "shared_connections_by_attachment": []}
    assert api.show_volume(vid)["status"] == "available"
    assert vid not in api.driver.connections


# -- the race rules -------------------------------------------------------------

def test_second_attachment_of_plain_volume_refused(api):
    vid = api.volume()
    assert api.create(vid).status_code == 200
    resp = api.create(vid)
    assert resp.status_code == 400
    assert "is not multiattach and already has an attachment" in \
        apitest.message(resp)
    assert len(attachments_db.attachments_of_volume(
        fixtures.admin(), vid)) == 1


def test_same_instance_may_reserve_again_once(api):
    vid = api.volume()
    instance = str(uuid.uuid4())
    assert api.create(vid, instance=instance).status_code == 200
    assert api.create(vid, instance=instance).status_code == 200
    assert api.create(vid, instance=instance).status_code == 400


def test_multiattach_takes_attachments_while_others_are_in_flight(api):
    vid = api.volume(multiattach=True)
    first = api.create(vid).json["attachment"]
    second = api.create(vid, connector=connector("h2")).json["attachment"]
    assert api.show_volume(vid)["status"] == "attaching"
    api.call("POST", "/attachments/%s/action" % second["id"],
             {"os-complete": None})
    third = api.create(vid, connector=connector("h3"))
    assert third.status_code == 200
    assert api.show_volume(vid)["status"] == "in-use"
    api.call("DELETE", "/attachments/" + second["id"])
    assert api.show_volume(vid)["status"] == "attaching"
    api.call("DELETE", "/attachments/" + third.json["attachment"]["id"])
    assert api.show_volume(vid)["status"] == "reserved"
    api.call("DELETE", "/attachments/" + first["id"])
    assert api.show_volume(vid)["status"] == "available"


def test_limit_from_type(api):
    vtype = fixtures.make_type(specs={"multiattach": "<is> True",
                                      "ashlar:max_attachments": "2"})
    vid = api.volume(multiattach=True, vtype=vtype)
    assert api.create(vid).status_code == 200
    assert api.create(vid).status_code == 200
    resp = api.create(vid)
    assert resp.status_code == 400 and "maximum of 2" in apitest.message(resp)


def test_single_writer(api):
    vtype = fixtures.make_type(specs={
        "multiattach": "<is> True",
        "ashlar:multiattach_single_writer": "<is> True"})
    vid = api.volume(multiattach=True, vtype=vtype)
    assert api.create(vid, mode="rw").status_code == 200
    resp = api.create(vid)
    assert resp.status_code == 400 and "only one read/write" in \
        apitest.message(resp)
    assert api.create(vid, mode="ro").status_code == 200
    ro = api.create(vid, connector=connector(mode="ro")).json["attachment"]
    assert ro["connection_info"]["access_mode"] == "ro"


def test_readonly_volume_makes_ro_attachments(api):
    vid = api.volume()
    assert api.action(vid, {"os-update_readonly_flag": {"readonly": True}}
                      ).status_code == 202
    att = api.create(vid, connector=connector()).json["attachment"]
    assert att["attach_mode"] == "ro"
    assert att["connection_info"]["access_mode"] == "ro"
    resp = api.action(vid, {"os-update_readonly_flag": {"readonly": False}})
    assert resp.status_code == 400


def test_error_volume_refused(api):
    vid = api.volume(status="error")
    resp = api.create(vid)
    assert resp.status_code == 400 and "error state" in apitest.message(resp)


# -- update, complete ---------------------------------------------------------

def test_update_connects_and_shares(api):
    vid = api.volume(multiattach=True)
    a = api.create(vid, connector=connector("h1")).json["attachment"]
    b = api.create(vid).json["attachment"]
    resp = api.call("PUT", "/attachments/" + b["id"],
                    {"attachment": {"connector": connector("h1")}})
    assert resp.status_code == 200
    got = resp.json["attachment"]
    assert got["status"] == "attaching" and got["attach_mode"] == "rw"
    assert got["connection_info"]["attachment_id"] == b["id"]
    shown = api.call("GET", "/attachments/" + a["id"]).json["attachment"]
    assert shown["shared_connections_by_attachment"] == [b["id"]]
    resp = api.call("PUT", "/attachments/" + b["id"],
                    {"attachment": {"connector": connector("h9")}})
    assert resp.status_code == 409 and "connected to host h1" in \
        apitest.message(resp)
    resp = api.call("DELETE", "/attachments/" + a["id"])
    assert resp.json["shared_connections_by_attachment"] == [b["id"]]
    assert api.driver.connections[vid][0]["host"] == "h1"


def test_delete_in_progress_keeps_statuses_and_drops_the_sharer(api):
    """While the volume service disconnects a row, the row and its volume
    keep their statuses (as Cinder's delete), and the other row on the
    host no longer counts it as sharing the connection."""
    vid = api.volume(multiattach=True)
    a = api.create(vid, connector=connector("h1")).json["attachment"]
    b = api.create(vid, connector=connector("h1")).json["attachment"]
    for att in (a, b):
        api.call("POST", "/attachments/%s/action" % att["id"],
                 {"os-complete": None})
    seen = []
    disconnect = api.rpc.attachment_disconnect

    def observe(ctxt, host, attachment_id, snap):
        rows = api.call("GET", "/attachments/detail").json["attachments"]
        shown = {row["id"]: api.call("GET", "/attachments/" + row["id"]).json[
            "attachment"] for row in rows}
        seen.append((shown, api.show_volume(vid)["status"]))
        disconnect(ctxt, host, attachment_id, snap)
    api.rpc.attachment_disconnect = observe
    resp = api.call("DELETE", "/attachments/" + a["id"])
    assert resp.json["shared_connections_by_attachment"] == [b["id"]]
    assert api.call("DELETE", "/attachments/" + b["id"]).status_code == 200
    (first, first_volume), (second, second_volume) = seen
    assert first[a["id"]]["status"] == "attached"
    assert first[b["id"]]["shared_connections_by_attachment"] == []
    assert second[b["id"]]["status"] == "attached"
    assert (first_volume, second_volume) == ("in-use", "in-use")
    assert api.show_volume(vid)["status"] == "available"
    assert vid not in api.driver.connections


def test_update_needs_a_connector_and_a_sane_volume(api):
    vid = api.volume()
    att = api.create(vid).json["attachment"]
    resp = api.call("PUT", "/attachments/" + att["id"],
                    {"attachment": {"connector": {}}})
    assert resp.status_code == 400
    volumes_db.volume_cas(fixtures.admin(), vid, {}, {"status": "error"})
    resp = api.call("PUT", "/attachments/" + att["id"],
                    {"attachment": {"connector": connector()}})
    assert resp.status_code == 409 and "error state" in apitest.message(resp)


def test_complete_from_reserved_and_idempotent(api):
    vid = api.volume()
    att = api.create(vid).json["attachment"]
    path = "/attachments/%s/action" % att["id"]
    assert api.call("POST", path, {"os-complete": None}).status_code == 204
    assert api.call("POST", path, {"os-complete": None}).status_code == 204
    assert api.show_volume(vid)["status"] == "in-use"
    resp = api.call("POST", path, {"os-foo": None})
    assert resp.status_code == 400


def test_complete_refused_while_disconnecting(api):
    vid = api.volume()
    att = api.create(vid, connector=connector()).json["attachment"]
    attachments_db.attachment_cas(fixtures.admin(), vid, att["id"], {},
                                  {"transition": "disconnecting"})
    resp = api.call("POST", "/attachments/%s/action" % att["id"],
                    {"os-complete": None})
    assert resp.status_code == 409 and "cannot complete" in apitest.message(resp)


# -- delete rules --------------------------------------------------------------

def test_user_cannot_delete_what_a_host_holds(api):
    vid = api.volume()
    att = api.create(vid, connector=connector()).json["attachment"]
    user = {"token": "u:p1", "roles": "member"}
    resp = api.call("DELETE", "/attachments/" + att["id"], **user)
    assert resp.status_code == 409
    assert apitest.message(resp) == ("Detach volume from instance %s using the "
                              "Compute API" % att["instance"])
    resp = api.call("DELETE", "/attachments/" + att["id"], service="service",
                    **user)
    assert resp.status_code == 200


def test_user_may_delete_a_reservation(api):
    vid = api.volume()
    att = api.create(vid, token="u:p1", roles="member").json["attachment"]
    resp = api.call("DELETE", "/attachments/" + att["id"], token="u:p1",
                    roles="member")
    assert resp.status_code == 200


def test_delete_of_unknown_attachment_is_404(api):
    resp = api.call("DELETE", "/attachments/" + str(uuid.uuid4()))
    assert resp.status_code == 404
    assert "Volume attachment could not be found" in apitest.message(resp)


def test_project_isolation(api):
    vid = api.volume(project="p1")
    att = api.create(vid).json["attachment"]
    other = {"token": "u:p2", "roles": "member"}
    assert api.call("GET", "/attachments/" + att["id"],
                    **other).status_code == 404
    assert api.call("GET", "/attachments", **other).json == {
        "attachments": []}
    assert api.create(vid, **other).status_code == 404
    assert api.call("DELETE", "/attachments/" + att["id"],
                    **other).status_code == 404
    own = {"token": "u:p1", "roles": "member"}
    assert len(api.call("GET", "/attachments", **own).json[
        "attachments"]) == 1
    admin_other = api.call("GET", "/attachments", token="admin:p2")
    assert admin_other.json == {"attachments": []}
    everyone = api.call("GET", "/attachments/detail?all_tenants=False",
                        token="admin:p2")
    assert [a["id"] for a in everyone.json["attachments"]] == [att["id"]]


def test_list_filters(api):
    vid = api.volume(multiattach=True)
    instance = str(uuid.uuid4())
    a = api.create(vid, instance=instance).json["attachment"]
    b = api.create(vid, connector=connector()).json["attachment"]
    other = api.create(api.volume()).json["attachment"]

    def ids(query):
        return sorted(x["id"] for x in api.call(
            "GET", "/attachments" + query).json["attachments"])
    assert ids("?volume_id=" + vid) == sorted([a["id"], b["id"]])
    assert ids("?status=attaching") == [b["id"]]
    assert ids("?instance_id=" + instance) == [a["id"]]
    assert other["id"] in ids("")


def _deny(rule):
    enforcer = policy.get_enforcer()
    enforcer.load_rules()
    enforcer.set_rules(oslo_policy.Rules.from_dict({rule: "!"}),
                       overwrite=False, use_conf=False)


def test_bootable_multiattach_policy(api):
    vid = api.volume(multiattach=True, bootable=True)
    assert api.create(vid).status_code == 200
    _deny("volume:multiattach_bootable_volume")
    resp = api.create(vid)
    assert resp.status_code == 403
    assert "volume:multiattach_bootable_volume" in apitest.message(resp)


def test_bootable_multiattach_race_admits_a_denied_caller_only_first(
        api, monkeypatch):
    """A caller without ``volume:multiattach_bootable_volume`` who read the
    volume without attachments loses to a reservation that landed
    meanwhile: 403, nothing written."""
    vid = api.volume(multiattach=True, bootable=True)
    assert api.create(vid).status_code == 200
    _deny("volume:multiattach_bootable_volume")
    real = attachment_reads._brief
    reads = []

    def stale_first_read(conn, volume_id):
        row = real(conn, volume_id)
        reads.append(row)
        if len(reads) > 1:
            return row
        return types.SimpleNamespace(**dict(row._mapping, attachment_count=0))
    monkeypatch.setattr(attachment_reads, "_brief", stale_first_read)
    resp = api.create(vid)
    assert resp.status_code == 403, resp.json
    assert "volume:multiattach_bootable_volume" in apitest.message(resp)
    assert len(attachments_db.attachments_of_volume(fixtures.admin(),
                                                    vid)) == 1


def test_attachment_policies(api):
    vid = api.volume()
    _deny("volume:attachment_create")
    assert api.create(vid).status_code == 403


# -- volume-level rules ----------------------------------------------------------

def test_volume_with_attachments_cannot_be_deleted(api):
    vid = api.volume()
    api.create(vid)
    resp = api.call("DELETE", "/volumes/" + vid)
    assert resp.status_code == 400 and "cannot be deleted" in apitest.message(resp)
    resp = api.action(vid, {"os-force_delete": None})
    assert resp.status_code == 400


def test_legacy_detach_needs_an_id_with_several(api):
    vid = api.volume(multiattach=True)
    a = api.create(vid, connector=connector("h1")).json["attachment"]
    api.create(vid, connector=connector("h2"))
    resp = api.action(vid, {"os-detach": {}}, token="u:p1", roles="member")
    assert resp.status_code == 409
    resp = api.action(vid, {"os-detach": {}}, service="service")
    assert resp.status_code == 400
    assert "no attachment_id provided" in apitest.message(resp)
    resp = api.action(vid, {"os-detach": {"attachment_id": a["id"]}})
    assert resp.status_code == 202
    assert len(attachments_db.attachments_of_volume(
        fixtures.admin(), vid)) == 1


def test_force_detach_terminates_only_its_connection(api):
    vid = api.volume(multiattach=True)
    a = api.create(vid, connector=connector("h1")).json["attachment"]
    api.create(vid, connector=connector("h2"))
    attachments_db.attachment_cas(fixtures.admin(), vid, a["id"], {},
                                  {"transition": "connecting"})
    resp = api.action(vid, {"os-force_detach": {"attachment_id": a["id"]}})
    assert resp.status_code == 202
    assert [c["host"] for c in api.driver.connections[vid]] == ["h2"]


def test_reset_status_detached_terminates_connections(api):
    vid = api.volume(multiattach=True)
    for host in ("h1", "h2"):
        api.create(vid, connector=connector(host))
    resp = api.action(vid, {"os-reset_status": {"attach_status":
                                                "detached"}})
    assert resp.status_code == 202
    assert vid not in api.driver.connections
    volume = volumes_db.volume_get(fixtures.admin(), vid)
    assert (volume.status, volume.attachment_count) == ("available", 0)
    resp = api.action(vid, {"os-reset_status": {"status": "in-use"}})
    assert resp.status_code == 400


def test_retype_multiattach_rules(api):
    ma = fixtures.make_type(specs={"multiattach": "<is> True"})
    ma_enc = fixtures.make_type(specs={"multiattach": "<is> True",
                                       "encryption:provider": "luks"})
    plain = fixtures.make_type()
    vid = api.volume()
    att = api.create(vid).json["attachment"]
    api.call("POST", "/attachments/%s/action" % att["id"],
             {"os-complete": None})
    resp = api.action(vid, {"os-retype": {"new_type": ma.id}})
    assert resp.status_code == 400
    assert "retypes affecting multiattach" in apitest.message(resp)
    ma_vid = api.volume(multiattach=True, vtype=ma)
    resp = api.action(ma_vid, {"os-retype": {"new_type": ma_enc.id}})
    assert resp.status_code == 400
    assert "both encryption and multi-attach" in apitest.message(resp)
    free = api.volume()
    resp = api.action(free, {"os-retype": {"new_type": ma.name}})
    assert resp.status_code == 202
    assert api.show_volume(free)["status"] == "retyping"
    assert api.rpc.casts[-1][0] == "retype_volume"
    other_ma = fixtures.make_type(specs={"multiattach": "<is> True",
                                         "volume_backend_name": "elsewhere"})
    two = api.volume(multiattach=True, vtype=ma)
    for _ in range(2):
        att = api.create(two).json["attachment"]
        api.call("POST", "/attachments/%s/action" % att["id"],
                 {"os-complete": None})
    resp = api.action(two, {"os-retype": {"new_type": plain.id}})
    assert resp.status_code == 400
    assert "retypes affecting multiattach" in apitest.message(resp)
    resp = api.action(two, {"os-retype": {"new_type": other_ma.id,
                                          "migration_policy": "on-demand"}})
    assert resp.status_code == 400 and "more than one attachment" in \
        apitest.message(resp)
    resp = api.action(two, {"os-migrate_volume": {"host": "x@y#z"}})
    assert resp.status_code == 400 and "more than one attachment" in \
        apitest.message(resp)


def test_extend_and_bootable(api):
    vid = api.volume()
    assert api.action(vid, {"os-set_bootable": {"bootable": True}}
                      ).status_code == 200
    assert api.show_volume(vid)["bootable"] == "true"
    resp = api.action(vid, {"os-extend": {"new_size": 1}})
    assert resp.status_code == 400
    assert api.action(vid, {"os-extend": {"new_size": 3}}).status_code == 202
    assert api.show_volume(vid)["status"] == "extending"
    assert api.create(vid).status_code == 400
    in_use = api.volume()
    api.create(in_use)
    api.call("POST", "/attachments/%s/action" % api.call(
        "GET", "/attachments?volume_id=" + in_use).json["attachments"][0][
            "id"], {"os-complete": None})
    assert api.action(in_use, {"os-extend": {"new_size": 3}},
                      version="volume 3.41").status_code == 400
    assert api.action(in_use, {"os-extend": {"new_size": 3}}
                      ).status_code == 202


def test_multiattach_encrypted_type_refused_at_create(api):
    vtype = fixtures.make_type(specs={"multiattach": "<is> True",
                                      "encryption:provider": "luks"})
    resp = api.call("POST", "/volumes", {"volume": {
        "size": 1, "volume_type": vtype.id}})
    assert resp.status_code == 400
    assert "Multiattach cannot be used with encrypted" in apitest.message(resp)


# -- connector bounds -------------------------------------------------------------

@pytest.mark.parametrize(("connector", "message"), [
    (apitest.connector("h" * 256), "is too long"),
    (apitest.connector("bad host"), "does not match"),
    (apitest.connector(mountpoint="m" * 256), "is too long"),
    (dict(apitest.connector(), **{"k%d" % i: i for i in range(64)}),
     "has too many properties"),
    (dict(apitest.connector(), **{"x" * 256: 1}), "x" * 256),
    (dict(apitest.connector(), host=7), "is not of type 'string'"),
    # what drivers read is of os-brick's types (an initiator list would
    # break an iSCSI driver)
    (apitest.connector(initiator=["iqn.a", "iqn.b"]),
     "is not of type 'string'"),
    (apitest.connector(ip={"v": "10.0.0.1"}), "is not of type 'string'"),
    (apitest.connector(multipath="yes"), "is not of type 'boolean'"),
    (apitest.connector(wwpns="50014380186b5f36"), "is not of type 'array'"),
])
def test_connector_fields_are_bounded(api, connector, message):
    vid = api.volume(multiattach=True)
    resp = api.create(vid, connector=connector)
    assert resp.status_code == 400, resp.json
    assert message in apitest.message(resp)
    att = api.create(vid).json["attachment"]
    resp = api.call("PUT", "/attachments/" + att["id"],
                    {"attachment": {"connector": connector}})
    assert resp.status_code == 400
    rows = attachments_db.attachments_of_volume(fixtures.admin(), vid)
    assert [row.attach_status for row in rows] == ["reserved"]


def test_rpc_door_validates_what_rest_validates(api):
    endpoint = rpc_door.ApiEndpoint(api.ops.attachments, api.ops.fencing)
    ctxt = context.RequestContext(user_id="a", project_id="p1",
                                  roles=["admin"], global_request_id="r")
    vid = api.volume(multiattach=True)
    for volume_id, connector in ((vid, apitest.connector("h" * 300)),
                                 ("not-a-uuid", None)):
        with pytest.raises(messaging.ExpectedException) as caught:
            endpoint.attachment_create(ctxt, volume_id, connector=connector)
        assert caught.value.exc_info[0] is exception.ValidationError
    assert not attachments_db.attachments_of_volume(fixtures.admin(), vid)
    made = endpoint.attachment_create(ctxt, vid,
                                      connector=apitest.connector("h1"))
    assert made["request_id"] == "r"
    assert made["attachment"]["volume_id"] == vid
