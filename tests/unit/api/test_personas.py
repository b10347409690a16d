"""Cinder's personas through the api: what a reader, a member of another
project, a token without a project, an administrator and a compute agent
may do and see; private volume types."""

import uuid

import pytest

from common import context
from common import exception
from common import messages
from common.db.api import attachments as attachments_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures

READER = {"token": "r:p1", "roles": "reader"}
MEMBER = {"token": "m:p1", "roles": "member"}
OTHER = {"token": "o:p2", "roles": "member"}
NO_PROJECT = {"token": "u:", "roles": "admin"}
SYSTEM_READER = {"token": "s:", "roles": "reader"}


def _count(project="p1"):
    return len(volumes_db.volume_list(fixtures.admin(), project_id=project))


def test_reader_reads_but_changes_nothing(api):
    vid = api.volume()
    assert api.call("GET", "/volumes/" + vid, **READER).status_code == 200
    listed = api.call("GET", "/volumes", **READER).json["volumes"]
    assert [v["id"] for v in listed] == [vid]
    for method, path, body in (
            ("POST", "/volumes", {"volume": {"size": 1}}),
            ("DELETE", "/volumes/" + vid, None),
            ("PUT", "/volumes/" + vid, {"volume": {"name": "x"}}),
            ("POST", "/attachments", {"attachment": {"volume_uuid": vid}})):
        resp = api.call(method, path, body, **READER)
        assert resp.status_code == 403, (method, path, resp.json)
        assert "Policy doesn't allow" in apitest.message(resp)
    assert _count() == 1
    assert api.show_volume(vid)["status"] == "available"
    assert not attachments_db.attachments_of_volume(fixtures.admin(), vid)


def test_another_project_sees_nothing_of_p1(api):
    vid = api.volume()
    att = api.create(vid).json["attachment"]
    for method, path in (("GET", "/volumes/" + vid),
                         ("DELETE", "/volumes/" + vid),
                         ("GET", "/attachments/" + att["id"]),
                         ("DELETE", "/attachments/" + att["id"])):
        assert api.call(method, path, **OTHER).status_code == 404
    assert api.call("GET", "/volumes/detail", **OTHER).json == {
        "volumes": []}
    assert api.create(vid, **OTHER).status_code == 404
    marker = api.call("GET", "/volumes?marker=%s" % vid, **OTHER)
    assert marker.status_code == 404
    assert len(attachments_db.attachments_of_volume(fixtures.admin(),
                                                    vid)) == 1
    assert api.show_volume(vid)["status"] == "reserved"


@pytest.mark.parametrize("who", [NO_PROJECT, SYSTEM_READER],
                         ids=["admin-without-project", "system-reader"])
def test_a_token_without_project_gets_no_project_data(api, who):
    vid = api.volume()
    api.create(vid)
    for method, path, body in (
            ("GET", "/volumes", None), ("GET", "/volumes/detail", None),
            ("GET", "/attachments", None), ("GET", "/limits", None),
            ("GET", "/volumes/summary", None),
            ("POST", "/volumes", {"volume": {"size": 1}})):
        resp = api.call(method, path, body, **who)
        assert resp.status_code == 403, (path, resp.json)
        assert "project-scoped token" in apitest.message(resp)
    assert _count() == 1


def test_system_reader_is_not_a_reader_of_the_project_less_target():
    """A target without a project never matches a caller without one."""
    fixtures.setup()
    ctxt = context.RequestContext(user_id="s", project_id=None,
                                  roles=["reader"])
    assert not ctxt.can("volume:get_all", {"project_id": None}, fatal=False)
    assert not ctxt.can("volume:get", fatal=False)


def test_admin_sees_host_members_do_not_nobody_sees_backend_error(api):
    """The backend's error text stays in the database and the logs; the
    project reads why the volume failed as a user message of Cinder's
    catalog."""
    vid = api.volume(status="creating")
    assert messages.fail_volume(
        fixtures.user(), 60, api.ops.volumes.get(fixtures.admin(), vid),
        {"status": "creating"},
        {"status": "error", "error_reason": "disk /srv/x failed"},
        messages.CREATE_FAILED)
    admin = api.show_volume(vid)
    assert admin["os-vol-host-attr:host"] == apitest.HOST + "#b1"
    assert admin["os-vol-tenant-attr:tenant_id"] == "p1"
    member = api.show_volume(vid, **MEMBER)
    assert member["os-vol-tenant-attr:tenant_id"] == "p1"
    for hidden in ("os-vol-host-attr:host", "os-vol-mig-status-attr:migstat"):
        assert hidden not in member
    assert "error_reason" not in admin and "error_reason" not in member
    [told] = api.call("GET", "/messages?resource_uuid=" + vid,
                      **MEMBER).json["messages"]
    assert told["event_id"] == "VOLUME_VOLUME_008_012"
    assert "/srv/x" not in told["user_message"]


def test_attachment_host_is_shown_to_admins_only(api):
    vid = api.volume()
    att = api.create(vid, connector=apitest.connector("h9")).json[
        "attachment"]
    api.call("POST", "/attachments/%s/action" % att["id"],
             {"os-complete": None})
    assert api.show_volume(vid)["attachments"][0]["host_name"] == "h9"
    assert api.show_volume(vid, **MEMBER)["attachments"][0][
        "host_name"] is None


# -- private types ---------------------------------------------------------------

def _private_type(api):
    resp = api.call("POST", "/types", {"volume_type": {
        "name": "gold", "os-volume-type-access:is_public": False}})
    assert resp.status_code == 200, resp.json
    return resp.json["volume_type"]["id"]


def _type_names(api, **who):
    return {t["name"] for t in api.call("GET", "/types?is_public=None",
                                        **who).json["volume_types"]}


def test_private_type_is_invisible_and_unusable_without_access(api):
    tid = _private_type(api)
    assert "gold" not in _type_names(api, **MEMBER)
    assert api.call("GET", "/types/" + tid, **MEMBER).status_code == 404
    resp = api.call("POST", "/volumes", {"volume": {
        "size": 1, "volume_type": "gold"}}, **MEMBER)
    assert resp.status_code == 404
    assert "gold could not be found" in apitest.message(resp)
    assert _count() == 0


#: Cinder's schema wants a project id like Keystone's (hex).
KS_PROJECT = uuid.uuid4().hex
KS_MEMBER = {"token": "m:" + KS_PROJECT, "roles": "member"}


def test_project_access_to_a_private_type(api):
    tid = _private_type(api)
    add = {"addProjectAccess": {"project": KS_PROJECT}}
    assert api.call("POST", "/types/%s/action" % tid, add,
                    **KS_MEMBER).status_code == 403
    assert api.call("POST", "/types/%s/action" % tid,
                    add).status_code == 202
    assert api.call("POST", "/types/%s/action" % tid,
                    add).status_code == 409
    listed = api.call("GET", "/types/%s/os-volume-type-access" % tid).json
    assert listed == {"volume_type_access": [
        {"volume_type_id": tid, "project_id": KS_PROJECT}]}
    assert "gold" in _type_names(api, **KS_MEMBER)
    assert "gold" not in _type_names(api, **OTHER)
    assert api.call("POST", "/volumes", {"volume": {
        "size": 1, "volume_type": "gold"}}, **KS_MEMBER).status_code == 202
    assert api.call("POST", "/volumes", {"volume": {
        "size": 1, "volume_type": tid}}, **OTHER).status_code == 404
    remove = {"removeProjectAccess": {"project": KS_PROJECT}}
    assert api.call("POST", "/types/%s/action" % tid,
                    remove).status_code == 202
    assert api.call("POST", "/types/%s/action" % tid,
                    remove).status_code == 404
    assert "gold" not in _type_names(api, **KS_MEMBER)
    assert _count(KS_PROJECT) == 1 and _count("p2") == 0


def test_access_actions_refuse_public_types(api):
    public = types_db.type_create(fixtures.admin(), "silver").id
    resp = api.call("POST", "/types/%s/action" % public,
                    {"addProjectAccess": {"project": KS_PROJECT}})
    assert resp.status_code == 400
    assert "not applicable to public volume type" in apitest.message(resp)
    assert api.call("GET", "/types/%s/os-volume-type-access"
                    % public).status_code == 404


def test_members_see_only_user_visible_extra_specs(api):
    types_db.type_create(fixtures.admin(), "mixed", extra_specs={
        "multiattach": "<is> True", "volume_backend_name": "b1"})
    by_name = {t["name"]: t for t in api.call(
        "GET", "/types", **MEMBER).json["volume_types"]}
    assert by_name["mixed"]["extra_specs"] == {"multiattach": "<is> True"}
    assert "qos_specs_id" not in by_name["mixed"]
    admin = {t["name"]: t for t in api.call(
        "GET", "/types").json["volume_types"]}
    assert admin["mixed"]["extra_specs"]["volume_backend_name"] == "b1"


def test_create_and_update_answer_cinders_older_type_view(api):
    """No ``qos_specs_id`` (Tempest's schemas refuse it there); the create
    keeps ``os-volume-type-access:is_public``, the update does not; shows
    and lists give admins ``qos_specs_id``."""
    created = api.call("POST", "/types", {"volume_type": {
        "name": "fresh"}}).json["volume_type"]
    assert set(created) == {"id", "name", "is_public", "description",
                            "extra_specs", "os-volume-type-access:is_public"}
    updated = api.call("PUT", "/types/" + created["id"], {"volume_type": {
        "description": "d"}}).json["volume_type"]
    assert set(updated) == {"id", "name", "is_public", "description",
                            "extra_specs"}
    shown = api.call("GET", "/types/" + created["id"]).json["volume_type"]
    assert shown["qos_specs_id"] is None


# -- the compute agent persona ----------------------------------------------------

def _agent(host):
    return context.RequestContext(user_id="ashlar-agent-" + host,
                                  project_id="service", roles=["service"],
                                  agent_host=host)


def test_agent_attaches_only_with_its_own_hosts_connector(api):
    ops = api.ops.attachments
    vid = api.volume(multiattach=True)
    with pytest.raises(exception.VolumeNotFound):
        ops.create(_agent("h1"), vid, connector=apitest.connector("h2"))
    with pytest.raises(exception.VolumeNotFound):
        ops.create(_agent("h1"), vid)  # no connector: no host to act for
    row = ops.create(_agent("h1"), vid, connector=apitest.connector("h1"))
    assert row.attached_host == "h1"
    assert len(attachments_db.attachments_of_volume(fixtures.admin(),
                                                    vid)) == 1


def test_agent_acts_only_on_its_hosts_attachments(api):
    ops = api.ops.attachments
    vid = api.volume(multiattach=True)
    att = api.create(vid, connector=apitest.connector("h2")).json[
        "attachment"]
    intruder = _agent("h1")
    for call in (lambda: ops.get(intruder, att["id"]),
                 lambda: ops.complete(intruder, att["id"]),
                 lambda: ops.update(intruder, att["id"],
                                    apitest.connector("h1")),
                 lambda: ops.delete(intruder, att["id"])):
        with pytest.raises(exception.AttachmentNotFound):
            call()
    assert ops.get(_agent("h2"), att["id"])[0].id == att["id"]
    ops.delete(_agent("h2"), att["id"])
    assert not attachments_db.attachments_of_volume(fixtures.admin(), vid)


def test_a_service_user_without_host_binding_is_no_agent(api):
    vid = api.volume(multiattach=True)
    unbound = context.RequestContext(user_id="nova", project_id="service",
                                     roles=["service"])
    for host in ("h1", "None", "<no host>"):
        with pytest.raises(exception.VolumeNotFound):
            api.ops.attachments.create(unbound, vid,
                                       connector=apitest.connector(host))
    assert not attachments_db.attachments_of_volume(fixtures.admin(), vid)


def test_agent_unknown_ids_stay_404(api):
    with pytest.raises(exception.AttachmentNotFound):
        api.ops.attachments.get(_agent("h1"), str(uuid.uuid4()))


def test_all_tenants_with_project_id_lists_that_project_only(api):
    """As Cinder: an administrator's ``all_tenants`` narrowed by
    ``project_id``; a member's ``project_id`` changes nothing."""
    mine, theirs = api.volume(project="p1"), api.volume(project="p2")

    def listed(query, **kwargs):
        return {v["id"] for v in api.call(
            "GET", "/volumes" + query, **kwargs).json["volumes"]}
    assert listed("?all_tenants=1") == {mine, theirs}
    assert listed("?all_tenants=1&project_id=p2") == {theirs}
    assert listed("?all_tenants=1&project_id=p2", **MEMBER) == {mine}
