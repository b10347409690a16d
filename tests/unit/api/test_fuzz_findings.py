"""What the fuzzer (tests/functional/test_fuzz.py) found answering 500,
each now a 4xx or a success, through the falcon app and a real database."""

import pytest

from common.db.api import volumes as volumes_db

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures


@pytest.mark.parametrize("path", [
    "/volumes?name=%00", "/volumes/detail?size=x%00",
    "/volumes/%00", "/os-services?host=%00"])
def test_a_nul_in_path_or_query_is_400(api, path):
    resp = api.call("GET", path)
    assert resp.status_code == 400
    assert "NUL character" in apitest.message(resp)


def test_a_nul_in_a_body_is_400(api):
    resp = api.call("POST", "/volumes", {"volume": {"size": 1,
                                                    "name": "a\x00b"}})
    assert resp.status_code == 400
    assert "NUL character" in apitest.message(resp)


@pytest.mark.parametrize("query", ["size=abc", "size=-4.2e%2B16",
                                   "size=1&size=x"])
def test_a_size_filter_that_is_no_integer_is_400(api, query):
    api.volume()
    resp = api.call("GET", "/volumes/detail?" + query)
    assert resp.status_code == 400
    assert "is not an integer" in apitest.message(resp)


def test_repeated_size_filter_counts_with_its_last_value(api):
    vid = api.volume(size=2)
    listed = api.call("GET", "/volumes?size=7&size=2").json["volumes"]
    assert [v["id"] for v in listed] == [vid]


def test_repeated_is_public_counts_with_its_last_value(api):
    made = api.call("POST", "/types", {"volume_type": {
        "name": "private", "os-volume-type-access:is_public": False}})
    assert made.status_code == 200, made.json
    resp = api.call("GET", "/types?is_public=true&is_public=None")
    assert resp.status_code == 200, resp.json
    assert "private" in [t["name"] for t in resp.json["volume_types"]]


def test_metadata_with_keys_the_volume_has_replaces_them(api):
    vid = api.volume()
    for value in ("1", "2"):
        resp = api.call("PUT", "/volumes/" + vid, {"volume": {
            "metadata": {"k": value, "other": value}}})
        assert resp.status_code == 200, resp.json
    row = volumes_db.volume_get(fixtures.admin(), vid)
    assert volumes_db.metadata_of(row) == {"k": "2", "other": "2"}


@pytest.mark.parametrize("value, public", [("No", False), ("YES", True),
                                           ("on", True), (False, False)])
def test_type_is_public_as_strings(api, value, public):
    made = api.call("POST", "/types", {"volume_type": {
        "name": "t-%s" % value, "os-volume-type-access:is_public": value}})
    assert made.status_code == 200, made.json
    assert made.json["volume_type"]["is_public"] is public
    tid = made.json["volume_type"]["id"]
    updated = api.call("PUT", "/types/" + tid, {"volume_type": {
        "is_public": "NO"}})
    assert updated.status_code == 200, updated.json
    assert updated.json["volume_type"]["is_public"] is False


def _raw(api, method, path, raw, token="m:p1"):
    return api.client.simulate_request(
        method, "/v3" + path, body=raw, headers={
            "OpenStack-API-Version": apitest.MV, "X-Auth-Token": token,
            "X-Roles": "member", "Content-Type": "application/json"})


LONE = "\\ud800"


@pytest.mark.parametrize("method, path, raw", [
    ("POST", "/volumes", '{"volume": {"size": 1, "name": "%s"}}' % LONE),
    ("POST", "/volumes", '{"volume": {"size": 1, "metadata": {"%s": "v"}}}'
     % LONE),
    ("PUT", "/volumes/{vid}", '{"volume": {"description": "a%sb"}}'
     % "\\uD800"),
    ("POST", "/volumes/{vid}/metadata",
     '{"metadata": {"k": "\\udfff"}}'),
    ("POST", "/snapshots", '{"snapshot": {"volume_id": "{vid}", '
     '"name": ["%s"]}}' % LONE),
    ("POST", "/attachments", '{"attachment": {"volume_uuid": "{vid}", '
     '"connector": {"host": "h", "initiator": "%s"}}}' % LONE),
])
def test_a_lone_surrogate_in_a_body_is_400_and_changes_nothing(
        api, method, path, raw):
    """A lone UTF-16 surrogate (escaped in the JSON) cannot be stored:
    refused where the body is read, for every endpoint at once."""
    vid = api.volume()
    before = volumes_db.volume_get(fixtures.admin(), vid)
    resp = _raw(api, method, path.format(vid=vid),
                raw.replace("{vid}", vid))
    assert resp.status_code == 400, resp.text
    assert "lone UTF-16 surrogate" in apitest.message(resp)
    after = volumes_db.volume_get(fixtures.admin(), vid)
    assert (after.display_description, after.status) == (
        before.display_description, before.status)
    assert [v.id for v in volumes_db.volume_list(fixtures.admin())] == [vid]


def test_a_surrogate_pair_is_a_character_and_is_kept(api):
    resp = _raw(api, "POST", "/volumes",
                '{"volume": {"size": 1, "name": "disk \\ud83d\\ude00"}}')
    assert resp.status_code == 202, resp.text
    assert resp.json["volume"]["name"] == "disk \U0001F600"


def test_a_body_that_is_not_utf8_is_malformed(api):
    """Surrogates encoded as UTF-8 bytes are not UTF-8: a 400, as for
    any body that does not decode."""
    resp = _raw(api, "POST", "/volumes",
                b'{"volume": {"size": 1, "name": "\xed\xa0\x80"}}')
    assert resp.status_code == 400, resp.text
