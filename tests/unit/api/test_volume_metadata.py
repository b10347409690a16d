"""/volumes/{id}/metadata[/{key}]: Cinder's bodies, merge and replace,
one key, its 404s, the policies, and the refusal in maintenance."""

import uuid

from common.db.api import volumes as volumes_db

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures

MEMBER = {"token": "m:p1", "roles": "member"}
READER = {"token": "r:p1", "roles": "reader"}
OTHER = {"token": "m:p2", "roles": "member"}


def _shown(api, vid):
    return api.call("GET", "/volumes/" + vid).json["volume"]["metadata"]


def test_post_merges_put_replaces_as_tempest_checks(api):
    vid = api.volume()
    base = "/volumes/%s/metadata" % vid
    made = api.call("POST", base, {"metadata": {
        "key1": "value1", "key2": "value2", "key4": "<value&special>"}},
        **MEMBER)
    assert made.status_code == 200, made.json
    assert made.json == {"metadata": {"key1": "value1", "key2": "value2",
                                      "key4": "<value&special>"}}
    merged = api.call("POST", base, {"metadata": {"key1": "new"}}, **MEMBER)
    assert merged.json["metadata"] == {"key1": "new", "key2": "value2",
                                       "key4": "<value&special>"}
    update = {"key4": "value4", "key1": "value1_update"}
    assert api.call("PUT", base, {"metadata": update}, **MEMBER
                    ).json == {"metadata": update}
    assert api.call("GET", base, **READER).json == {"metadata": update}
    assert _shown(api, vid) == update


def test_one_key_get_put_delete(api):
    vid = api.volume()
    base = "/volumes/%s/metadata" % vid
    api.call("POST", base, {"metadata": {"key3": "value3", "k": "v"}})
    put = api.call("PUT", base + "/key3", {"meta": {"key3": "new"}},
                   **MEMBER)
    assert (put.status_code, put.json) == (200, {"meta": {"key3": "new"}})
    assert api.call("GET", base + "/key3", **READER).json == {
        "meta": {"key3": "new"}}
    mismatch = api.call("PUT", base + "/key3", {"meta": {"other": "x"}})
    assert mismatch.status_code == 400
    assert "Request body and URI mismatch" in apitest.message(mismatch)
    deleted = api.call("DELETE", base + "/key3", **MEMBER)
    assert (deleted.status_code, deleted.text) == (200, "")
    missing = api.call("GET", base + "/key3")
    assert missing.status_code == 404
    assert apitest.message(missing) == (
        "Volume %s has no metadata with key key3." % vid)
    assert api.call("DELETE", base + "/key3").status_code == 404
    assert _shown(api, vid) == {"k": "v"}


def test_unknown_or_foreign_volumes_are_404_and_readers_cannot_write(api):
    unknown = "/volumes/%s/metadata" % uuid.uuid4()
    assert api.call("GET", unknown).status_code == 404
    assert api.call("POST", unknown, {"metadata": {"a": "1"}}
                    ).status_code == 404
    vid = api.volume()
    base = "/volumes/%s/metadata" % vid
    assert api.call("GET", base, **OTHER).status_code == 404
    assert api.call("POST", base, {"metadata": {"a": "1"}}, **OTHER
                    ).status_code == 404
    assert api.call("POST", base, {"metadata": {"a": "1"}}, **READER
                    ).status_code == 403
    assert api.call("PUT", base + "/a", {"meta": {"a": "1"}}, **READER
                    ).status_code == 403
    assert api.call("DELETE", base + "/a", **READER).status_code == 403
    assert _shown(api, vid) == {}


def test_bad_bodies_are_400_and_change_nothing(api):
    vid = api.volume()
    base = "/volumes/%s/metadata" % vid
    for body in ({"metadata": {"a": 1}}, {"metadata": "x"}, {"meta": {}},
                 {"metadata": {"k" * 256: "v"}}):
        assert api.call("POST", base, body).status_code == 400, body
    assert api.call("PUT", base + "/a", {"meta": {"a": "1", "b": "2"}}
                    ).status_code == 400
    assert _shown(api, vid) == {}


def test_a_volume_in_maintenance_keeps_its_metadata(api):
    vid = api.volume()
    base = "/volumes/%s/metadata" % vid
    api.call("POST", base, {"metadata": {"a": "1"}})
    assert volumes_db.volume_cas(fixtures.admin(), vid, {},
                                 {"status": "maintenance"})
    refused = api.call("POST", base, {"metadata": {"b": "2"}})
    assert refused.status_code == 400
    assert "Updating volume metadata is not allowed for volumes in " \
        "maintenance status." in apitest.message(refused)
    assert api.call("DELETE", base + "/a").status_code == 400
    assert api.call("GET", base).json == {"metadata": {"a": "1"}}
