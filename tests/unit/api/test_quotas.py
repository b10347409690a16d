"""Quotas through the api: os-quota-sets and os-quota-class-sets, the 413s
of creates, extends and retypes over a limit, usage that is what exists,
and concurrent creates that never exceed a limit.

The functional run repeats this module on PostgreSQL and MariaDB
(tests/functional/test_unit_db_on_servers.py), where the project lock row
is what keeps the concurrent creates apart.
"""

import concurrent.futures
import threading

import pytest

from common.db.api import types as types_db
from common.db.api import volumes as volumes_db

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures

MEMBER = {"token": "m:p1", "roles": "member"}


def _create(api, size=1, **kwargs):
    body = {"volume": dict(size=size, **kwargs.pop("fields", {}))}
    return api.call("POST", "/volumes", body, **kwargs)


def _set(api, project="p1", **limits):
    resp = api.call("PUT", "/os-quota-sets/" + project, {"quota_set": limits})
    assert resp.status_code == 200, resp.json
    return resp.json["quota_set"]


def _count(project="p1"):
    return len(volumes_db.volume_list(fixtures.admin(), project_id=project))


def test_defaults_are_cinders(api):
    quota_set = api.call("GET", "/os-quota-sets/p1", **MEMBER).json[
        "quota_set"]
    assert quota_set["id"] == "p1"
    assert (quota_set["volumes"], quota_set["gigabytes"],
            quota_set["per_volume_gigabytes"], quota_set["snapshots"]) == (
        10, 1000, -1, 10)
    assert quota_set["volumes___DEFAULT__"] == -1
    assert api.call("GET", "/os-quota-sets/p1/defaults").json[
        "quota_set"]["volumes"] == 10


def test_only_admins_change_quotas_and_readers_see_their_own(api):
    resp = api.call("PUT", "/os-quota-sets/p1", {"quota_set": {"volumes": 1}},
                    **MEMBER)
    assert resp.status_code == 403
    assert api.call("GET", "/os-quota-sets/p2", **MEMBER).status_code == 403
    assert api.call("DELETE", "/os-quota-sets/p1",
                    **MEMBER).status_code == 403
    assert api.call("GET", "/os-quota-sets/p1").json["quota_set"][
        "volumes"] == 10


@pytest.mark.parametrize(("body", "message"), [
    ({"volumes": 1, "bogus": 2}, "Bad key(s) in quota set: bogus"),
    ({"volumes": -2}, "Quota limit must be -1 or greater."),
    ({"volumes": "ten"}, "Quota limit must be specified as an integer"),
    ({"volumes": 1.5}, "Invalid input for field"),
    ({"volumes": True}, "Invalid input for field"),
    ({"gigabytes": 2 ** 40}, "Quota limit must be 2147483647 or less."),
])
def test_bad_quota_updates_change_nothing(api, body, message):
    resp = api.call("PUT", "/os-quota-sets/p1", {"quota_set": body})
    assert resp.status_code == 400
    assert message in apitest.message(resp)
    assert api.call("GET", "/os-quota-sets/p1").json["quota_set"][
        "volumes"] == 10


def test_update_show_usage_and_reset(api):
    assert _set(api, volumes=3, tenant_id="p1")["volumes"] == 3
    assert _create(api, 2, **MEMBER).status_code == 202
    shown = api.call("GET", "/os-quota-sets/p1?usage=True").json["quota_set"]
    assert shown["volumes"] == {"limit": 3, "in_use": 1, "reserved": 0}
    assert shown["gigabytes"]["in_use"] == 2
    assert shown["volumes___DEFAULT__"]["in_use"] == 1
    resp = api.call("PUT", "/os-quota-sets/p1", {"quota_set": {"volumes": 0}})
    assert resp.status_code == 400 and "already used" in apitest.message(resp)
    resp = api.call("DELETE", "/os-quota-sets/p1")
    assert resp.status_code == 200 and resp.text == ""
    assert api.call("GET", "/os-quota-sets/p1").json["quota_set"][
        "volumes"] == 10


def test_class_default_changes_every_projects_default(api):
    resp = api.call("PUT", "/os-quota-class-sets/default",
                    {"quota_class_set": {"volumes": 4}})
    assert resp.status_code == 200
    assert resp.json["quota_class_set"]["volumes"] == 4
    assert api.call("GET", "/os-quota-class-sets/default").json[
        "quota_class_set"]["id"] == "default"
    assert api.call("GET", "/os-quota-sets/p7").json["quota_set"][
        "volumes"] == 4
    assert api.call("GET", "/os-quota-class-sets/default",
                    **MEMBER).status_code == 403


def test_create_over_the_volume_quota_is_413(api):
    _set(api, volumes=2)
    for _ in range(2):
        assert _create(api, **MEMBER).status_code == 202
    resp = _create(api, **MEMBER)
    assert resp.status_code == 413
    assert resp.headers["Retry-After"] == "0"
    assert resp.json == {"overLimit": {
        "code": 413, "retryAfter": "0",
        "message": "VolumeLimitExceeded: Maximum number of volumes allowed "
                   "(2) exceeded for quota 'volumes'."}}
    assert _count() == 2


def test_gigabytes_per_volume_and_per_type_quotas(api):
    types_db.type_create(fixtures.admin(), "gold")
    _set(api, gigabytes=5, per_volume_gigabytes=4, volumes_gold=1)
    resp = _create(api, 5, **MEMBER)
    assert resp.status_code == 413
    assert apitest.message(resp) == (
        "VolumeSizeExceedsLimit: Requested volume size 5G is larger than "
        "maximum allowed limit 4G.")
    assert _create(api, 4, **MEMBER).status_code == 202
    resp = _create(api, 2, **MEMBER)
    assert apitest.message(resp) == (
        "VolumeSizeExceedsAvailableQuota: Requested volume or snapshot "
        "exceeds allowed gigabytes quota. Requested 2G, quota is 5G and 4G "
        "has been consumed.")
    assert _create(api, 1, fields={"volume_type": "gold"},
                   **MEMBER).status_code == 202
    _set(api, gigabytes=-1)
    resp = _create(api, 1, fields={"volume_type": "gold"}, **MEMBER)
    assert "quota 'volumes_gold'" in apitest.message(resp)
    assert _count() == 2


def test_extend_counts_what_is_in_flight(api):
    _set(api, gigabytes=6)
    first, second = api.volume(size=2), api.volume(size=2)
    assert api.action(first, {"os-extend": {"new_size": 3}}).status_code == 202
    assert volumes_db.volume_get(fixtures.admin(), first).pending_size == 3
    resp = api.action(second, {"os-extend": {"new_size": 4}})
    assert resp.status_code == 413
    assert "Requested 2G, quota is 6G and 5G has been consumed" in \
        apitest.message(resp)
    assert api.show_volume(second)["status"] == "available"
    assert api.action(second, {"os-extend": {"new_size": 3}}).status_code \
        == 202


def test_retype_checks_the_new_types_quota(api):
    types_db.type_create(fixtures.admin(), "gold")
    _set(api, volumes_gold=0)
    vid = api.volume()
    resp = api.action(vid, {"os-retype": {"new_type": "gold"}})
    assert resp.status_code == 413
    assert "quota 'volumes_gold'" in apitest.message(resp)
    assert api.show_volume(vid)["status"] == "available"


def test_limits_show_the_quotas(api):
    _set(api, volumes=7, gigabytes=70)
    absolute = api.call("GET", "/limits", **MEMBER).json["limits"]["absolute"]
    assert (absolute["maxTotalVolumes"], absolute["maxTotalVolumeGigabytes"]) \
        == (7, 70)


def test_concurrent_creates_never_exceed_the_limit(api):
    """32 creates at once against a quota of 5: exactly 5 volumes."""
    _set(api, volumes=5)
    start = threading.Barrier(8)

    def create(_i):
        if _i < 8:
            start.wait()
        return _create(api, **MEMBER).status_code
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(create, range(32)))
    assert sorted(set(codes)) == [202, 413]
    assert codes.count(202) == 5
    assert _count() == 5
    shown = api.call("GET", "/os-quota-sets/p1?usage=true").json["quota_set"]
    assert shown["volumes"]["in_use"] == 5


def test_usage_drops_as_volumes_go(api):
    _set(api, volumes=1)
    created = _create(api, **MEMBER).json["volume"]["id"]
    assert _create(api, **MEMBER).status_code == 413
    # A create that failed still counts until it is deleted.
    volumes_db.volume_update(fixtures.admin(), created, {"status": "error"})
    assert _create(api, **MEMBER).status_code == 413
    assert api.call("DELETE", "/volumes/" + created,
                    **MEMBER).status_code == 202
    assert _create(api, **MEMBER).status_code == 202
