"""/qos-specs: create (consumer), show, list, set and unset keys, delete
(refused while associated unless forced), associate with volume types and
disassociate; admin only; Cinder's bodies and errors; front-end specs in
an attachment's connection_info."""

import uuid

import pytest

from common.db.api import types as types_db

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures

MEMBER = {"token": "m:p1", "roles": "member"}


def _create(api, name="gold", **specs):
    return api.call("POST", "/qos-specs",
                    {"qos_specs": dict(name=name, **specs)})


def _type(api, name):
    return api.call("POST", "/types", {"volume_type": {"name": name}}
                    ).json["volume_type"]["id"]


def test_create_show_list_with_cinders_bodies(api):
    resp = _create(api, consumer="front-end", read_iops_sec="2000")
    assert resp.status_code == 200, resp.json
    made = resp.json["qos_specs"]
    assert {k: v for k, v in made.items() if k != "id"} == {
        "name": "gold", "consumer": "front-end",
        "specs": {"read_iops_sec": "2000"}}
    assert [link["rel"] for link in resp.json["links"]] == ["self",
                                                            "bookmark"]
    shown = api.call("GET", "/qos-specs/" + made["id"])
    assert shown.json["qos_specs"] == made
    assert api.call("GET", "/qos-specs").json == {"qos_specs": [made]}
    assert _create(api).status_code == 409
    default = _create(api, "silver").json["qos_specs"]
    assert default["consumer"] == "back-end"
    bad = _create(api, "bronze", consumer="middle")
    assert bad.status_code == 400
    assert "Valid consumer of QoS specs are" in apitest.message(bad)
    assert _create(api, "x", **{"bad key!": "1"}).status_code == 400
    assert api.call("GET", "/qos-specs/%s" % uuid.uuid4()).status_code == 404


def test_set_and_unset_keys(api):
    qos = _create(api, read_iops_sec="1").json["qos_specs"]["id"]
    path = "/qos-specs/" + qos
    resp = api.call("PUT", path, {"qos_specs": {"iops_bytes": "500"}})
    assert (resp.status_code, resp.json) == (
        200, {"qos_specs": {"iops_bytes": "500"}})
    api.call("PUT", path, {"qos_specs": {"consumer": "both"}})
    shown = api.call("GET", path).json["qos_specs"]
    assert (shown["consumer"], shown["specs"]) == (
        "both", {"read_iops_sec": "1", "iops_bytes": "500"})
    missing = api.call("PUT", path + "/delete_keys",
                       {"keys": ["iops_bytes", "nope"]})
    assert missing.status_code == 404
    assert api.call("GET", path).json["qos_specs"]["specs"] == {
        "read_iops_sec": "1", "iops_bytes": "500"}
    gone = api.call("PUT", path + "/delete_keys", {"keys": ["iops_bytes"]})
    assert (gone.status_code, gone.text) == (202, "")
    assert api.call("GET", path).json["qos_specs"]["specs"] == {
        "read_iops_sec": "1"}


def test_associate_disassociate_and_delete(api):
    qos = _create(api).json["qos_specs"]["id"]
    other = _create(api, "other").json["qos_specs"]["id"]
    types = [_type(api, "t%d" % n) for n in range(3)]
    path = "/qos-specs/" + qos
    for type_id in types:
        resp = api.call("GET", path + "/associate?vol_type_id=" + type_id)
        assert resp.status_code == 202, resp.json
    listed = api.call("GET", path + "/associations").json["qos_associations"]
    assert sorted(a["id"] for a in listed) == sorted(types)
    assert {a["association_type"] for a in listed} == {"volume_type"}
    assert api.call("GET", "/types/" + types[0]).json["volume_type"][
        "qos_specs_id"] == qos
    taken = api.call("GET", "/qos-specs/%s/associate?vol_type_id=%s"
                     % (other, types[0]))
    assert taken.status_code == 400
    assert api.call("GET", path + "/associate").status_code == 400
    assert api.call("GET", path + "/associate?vol_type_id=%s"
                    % uuid.uuid4()).status_code == 404
    assert api.call("GET", path + "/disassociate?vol_type_id=" + types[0]
                    ).status_code == 202
    assert len(api.call("GET", path + "/associations").json[
        "qos_associations"]) == 2
    in_use = api.call("DELETE", path)
    assert in_use.status_code == 400
    assert "still associated" in apitest.message(in_use)
    assert api.call("GET", path + "/disassociate_all").status_code == 202
    assert api.call("GET", path + "/associations").json == {
        "qos_associations": []}
    api.call("GET", path + "/associate?vol_type_id=" + types[1])
    assert api.call("DELETE", path + "?force=True").status_code == 202
    assert api.call("GET", path).status_code == 404
    assert api.call("GET", "/types/" + types[1]).json["volume_type"][
        "qos_specs_id"] is None


def test_members_may_not_touch_qos_specs(api):
    qos = _create(api).json["qos_specs"]["id"]
    assert api.call("GET", "/qos-specs", **MEMBER).status_code == 403
    assert api.call("GET", "/qos-specs/" + qos, **MEMBER).status_code == 403
    assert api.call("POST", "/qos-specs", {"qos_specs": {"name": "m"}},
                    **MEMBER).status_code == 403
    assert api.call("DELETE", "/qos-specs/" + qos, **MEMBER
                    ).status_code == 403


@pytest.mark.parametrize("consumer, given", [
    ("front-end", {"read_iops_sec": "2000"}), ("both", {"read_iops_sec":
                                                        "2000"}),
    ("back-end", None)])
def test_a_compute_host_gets_the_front_end_specs_in_connection_info(
        api, consumer, given):
    qos = _create(api, consumer=consumer, read_iops_sec="2000").json[
        "qos_specs"]["id"]
    type_id = _type(api, "limited")
    api.call("GET", "/qos-specs/%s/associate?vol_type_id=%s" % (qos, type_id))
    vid = api.volume(vtype=types_db.type_get(fixtures.admin(), type_id))
    made = api.create(vid, connector=apitest.connector("h1"))
    assert made.status_code == 200, made.json
    assert made.json["attachment"]["connection_info"]["qos_specs"] == given
    plain = api.create(api.volume(multiattach=True),
                       connector=apitest.connector("h1"))
    assert plain.json["attachment"]["connection_info"]["qos_specs"] is None
