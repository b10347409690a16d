"""/messages through the api: Cinder's view and schema, microversions
(3.3, paging 3.5), who sees and deletes what, and a failed volume told by
a message instead of a field of its body."""

import jsonschema
import pytest

from common import context
from common import messages

MV33 = "volume 3.3"
MV35 = "volume 3.5"
READER = {"token": "r:p1", "roles": "reader"}
MEMBER = {"token": "m:p1", "roles": "member"}
OTHER = {"token": "o:p2", "roles": "member"}
OTHER_ADMIN = {"token": "a:p2", "roles": "admin"}

#: The message body as Tempest's response schema describes Cinder's.
_DATE = {"type": "string",
         "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$"}
_LINKS = {"type": "array", "items": {
    "type": "object", "required": ["href", "rel"],
    "properties": {"href": {"type": "string"}, "rel": {"type": "string"}}}}
MESSAGE = {
    "type": "object", "additionalProperties": False,
    "required": ["request_id", "message_level", "event_id", "created_at",
                 "id", "user_message"],
    "properties": {
        "request_id": {"type": "string"}, "message_level": {"type": "string"},
        "links": _LINKS, "event_id": {"type": "string"},
        "created_at": _DATE, "guaranteed_until": _DATE,
        "resource_uuid": {"type": "string"}, "id": {"type": "string"},
        "resource_type": {"type": "string"},
        "user_message": {"type": "string"}}}
SHOW = {"type": "object", "additionalProperties": False,
        "required": ["message"], "properties": {"message": MESSAGE}}
LIST = {"type": "object", "additionalProperties": False,
        "required": ["messages"],
        "properties": {"messages": {"type": "array", "items": MESSAGE}}}


def _fail(api, event=messages.NO_BACKEND, project="p1", request_id=None):
    """A volume of ``project`` failed by ``event``; its id."""
    vid = api.volume(project=project, status="creating")
    ctxt = context.RequestContext(user_id="u", project_id=project,
                                  request_id=request_id, overwrite=False)
    vol = api.ops.volumes.get(context.get_admin_context(), vid)
    assert messages.fail_volume(ctxt, 3600, vol, {"status": "creating"},
                                {"status": "error",
                                 "error_reason": "pool /srv/x is full"},
                                event)
    return vid


def _list(api, query="", version=MV35, **who):
    resp = api.call("GET", "/messages" + query, version=version, **who)
    assert resp.status_code == 200, resp.json
    return resp.json


def _only(api, **who):
    [message] = _list(api, **who)["messages"]
    return message


def test_messages_start_at_3_3(api):
    _fail(api)
    message_id = _only(api)["id"]
    for method, path in (("GET", "/messages"),
                         ("GET", "/messages/" + message_id),
                         ("DELETE", "/messages/" + message_id)):
        assert api.call(method, path, version="volume 3.2").status_code \
            == 404
    assert api.call("GET", "/messages", version=MV33).status_code == 200


def test_show_and_list_are_cinders_view(api):
    vid = _fail(api, request_id="req-0f0f0f0f-1111-2222-3333-444444444444")
    listed = _list(api, version=MV33)
    jsonschema.validate(listed, LIST)
    message = listed["messages"][0]
    shown = api.call("GET", "/messages/" + message["id"], version=MV33).json
    jsonschema.validate(shown, SHOW)
    assert shown["message"] == message
    assert set(message) == {"id", "event_id", "user_message",
                            "message_level", "resource_type",
                            "resource_uuid", "created_at",
                            "guaranteed_until", "request_id", "links"}
    assert {key: message[key] for key in (
        "event_id", "user_message", "message_level", "resource_type",
        "resource_uuid", "request_id")} == {
        "event_id": "VOLUME_VOLUME_001_003",
        "user_message": "schedule allocate volume:Could not find any "
                        "available weighted backend.",
        "message_level": "ERROR", "resource_type": "VOLUME",
        "resource_uuid": vid,
        "request_id": "req-0f0f0f0f-1111-2222-3333-444444444444"}
    assert message["guaranteed_until"] > message["created_at"]
    assert [link["rel"] for link in message["links"]] == ["self",
                                                          "bookmark"]
    assert message["links"][0]["href"].endswith("/v3/messages/"
                                                + message["id"])


def test_links_keep_the_project_of_the_url(api):
    _fail(api)
    message = api.call("GET", "/p1/messages", version=MV33).json[
        "messages"][0]
    assert message["links"][0]["href"].endswith(
        "/v3/p1/messages/" + message["id"])


def test_a_failed_volume_has_no_error_reason_but_a_message(api):
    vid = _fail(api, messages.CREATE_FAILED)
    for who in ({}, MEMBER):
        volume = api.show_volume(vid, version="volume latest", **who)
        assert volume["status"] == "error"
        assert "error_reason" not in volume
    message = _only(api, **MEMBER)
    assert message["resource_uuid"] == vid
    assert message["user_message"] == (
        "create volume from backend storage:Driver failed to create the "
        "volume.")
    assert "pool /srv/x" not in str(message)


def test_delete_answers_204_then_404(api):
    _fail(api)
    message_id = _only(api)["id"]
    resp = api.call("DELETE", "/messages/" + message_id, version=MV33)
    assert resp.status_code == 204 and not resp.content
    assert api.call("GET", "/messages/" + message_id,
                    version=MV33).status_code == 404
    assert api.call("DELETE", "/messages/" + message_id,
                    version=MV33).status_code == 404


def test_readers_read_members_delete_other_projects_see_nothing(api):
    _fail(api)
    message_id = _only(api, **READER)["id"]
    path = "/messages/" + message_id
    assert api.call("GET", path, version=MV33, **READER).status_code == 200
    assert api.call("DELETE", path, version=MV33,
                    **READER).status_code == 403
    assert _list(api, **OTHER)["messages"] == []
    for method in ("GET", "DELETE"):
        assert api.call(method, path, version=MV33,
                        **OTHER).status_code == 404
    assert api.call("DELETE", path, version=MV33, **MEMBER).status_code == 204


def test_admins_see_other_projects_with_all_tenants(api):
    vid = _fail(api)
    assert _list(api, **OTHER_ADMIN)["messages"] == []
    listed = _list(api, "?all_tenants=1", **OTHER_ADMIN)["messages"]
    assert [m["resource_uuid"] for m in listed] == [vid]
    assert _list(api, "?all_tenants=1", **OTHER)["messages"] == []


def test_a_token_without_project_gets_403(api):
    resp = api.call("GET", "/messages", version=MV33, token="u:",
                    roles="admin")
    assert resp.status_code == 403


def test_paging_sorting_and_filters_from_3_5(api):
    vids = [_fail(api) for _ in range(3)]
    old = _list(api, "?limit=1&resource_uuid=%s" % vids[0], version=MV33)
    assert len(old["messages"]) == 3 and "messages_links" not in old
    page = _list(api, "?limit=2")
    assert len(page["messages"]) == 2
    href = page["messages_links"][0]["href"]
    assert "marker=%s" % page["messages"][1]["id"] in href
    rest = _list(api, "?limit=2&marker=%s" % page["messages"][1]["id"])
    assert len(rest["messages"]) == 1 and "messages_links" not in rest
    assert {m["id"] for m in page["messages"] + rest["messages"]} == {
        m["id"] for m in _list(api)["messages"]}
    [one] = _list(api, "?resource_uuid=%s" % vids[1])["messages"]
    assert one["resource_uuid"] == vids[1]
    ordered = _list(api, "?sort=resource_uuid:asc")["messages"]
    assert [m["resource_uuid"] for m in ordered] == sorted(vids)


@pytest.mark.parametrize("query", ["?sort=user_message", "?limit=x",
                                   "?sort=id:sideways"])
def test_bad_list_parameters_are_400(api, query):
    assert api.call("GET", "/messages" + query,
                    version=MV35).status_code == 400
