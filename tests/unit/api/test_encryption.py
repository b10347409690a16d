"""/types/{id}/encryption: create, show (and one key), update, delete in
Cinder's bodies; an encrypted type makes encrypted volumes and never
multiattach ones; nothing changes while volumes use the type."""

from oslo_policy import policy as oslo_policy

from common import policy

try:
    from tests.unit.api import apitest
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest

MEMBER = {"token": "m:p1", "roles": "member"}
LUKS = {"provider": "luks", "key_size": 256, "cipher": "aes-xts-plain64",
        "control_location": "front-end"}


def _type(api, name="secret", **specs):
    return api.call("POST", "/types", {"volume_type": {
        "name": name, "extra_specs": specs}}).json["volume_type"]["id"]


def test_create_show_update_delete_as_tempest_does(api):
    type_id = _type(api)
    base = "/types/%s/encryption" % type_id
    assert api.call("GET", base).json == {}
    made = api.call("POST", base, {"encryption": LUKS})
    assert made.status_code == 200, made.json
    created = made.json["encryption"]
    assert {k: created[k] for k in LUKS} == LUKS
    assert created["volume_type_id"] == type_id
    shown = api.call("GET", base).json
    assert {k: shown[k] for k in LUKS} == LUKS
    assert shown["encryption_id"] == created["encryption_id"]
    assert api.call("POST", base, {"encryption": LUKS}).status_code == 400
    item = base + "/" + created["encryption_id"]
    update = {"key_size": 128, "provider": "other",
              "control_location": "back-end"}
    changed = api.call("PUT", item, {"encryption": update})
    assert (changed.status_code, changed.json) == (200,
                                                   {"encryption": update})
    assert api.call("GET", base + "/cipher").json == {
        "cipher": "aes-xts-plain64"}
    assert api.call("GET", base).json["key_size"] == 128
    assert api.call("GET", base + "/nothing").status_code == 404
    assert api.call("PUT", base + "/" + type_id, {"encryption": update}
                    ).status_code == 404
    assert api.call("DELETE", item).status_code == 202
    assert api.call("GET", base).json == {}


def test_an_encrypted_type_makes_encrypted_volumes_never_multiattach(api):
    type_id = _type(api)
    api.call("POST", "/types/%s/encryption" % type_id, {"encryption": LUKS})
    resp = api.call("POST", "/volumes", {"volume": {"size": 1,
                                                    "volume_type": type_id}})
    assert resp.status_code == 202, resp.json
    assert resp.json["volume"]["encrypted"] is True
    multi = _type(api, "shared", multiattach="<is> True")
    refused = api.call("POST", "/types/%s/encryption" % multi,
                       {"encryption": LUKS})
    assert refused.status_code == 400
    assert "Multiattach cannot be used with encrypted" in \
        apitest.message(refused)


def test_nothing_changes_while_volumes_use_the_type(api):
    type_id = _type(api)
    base = "/types/%s/encryption" % type_id
    api.call("POST", "/volumes", {"volume": {"size": 1,
                                             "volume_type": type_id}})
    assert api.call("POST", base, {"encryption": LUKS}).status_code == 400
    assert api.call("GET", base).json == {}


def test_bad_bodies_and_members_are_refused(api):
    base = "/types/%s/encryption" % _type(api)
    for body in ({"encryption": {"provider": "luks"}},
                 {"encryption": dict(LUKS, control_location="middle")},
                 {"encryption": dict(LUKS, key_size="big")}):
        assert api.call("POST", base, body).status_code == 400, body
    assert api.call("POST", base, {"encryption": LUKS}, **MEMBER
                    ).status_code == 403
    assert api.call("GET", base, **MEMBER).status_code == 403



def test_changes_need_only_their_own_rule(api):
    """An operator may let a role change encryption without reading it:
    each change checks its own rule, not ``get`` too."""
    enforcer = policy.get_enforcer()
    enforcer.load_rules()
    enforcer.set_rules(oslo_policy.Rules.from_dict({
        "volume_extension:volume_type_encryption:get": "!"}),
        overwrite=False, use_conf=False)
    type_id = api.call("POST", "/types", {"volume_type": {
        "name": "enc-own-rule"}}).json["volume_type"]["id"]
    path = "/types/%s/encryption" % type_id
    assert api.call("GET", path).status_code == 403
    resp = api.call("POST", path, {"encryption": {
        "provider": "luks", "control_location": "front-end"}})
    assert resp.status_code == 200, resp.json
    assert api.call("DELETE", "%s/%s" % (path, resp.json["encryption"][
        "encryption_id"])).status_code == 202
