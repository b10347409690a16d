"""Volume transfers through the api: offer (the volume awaiting-transfer),
show, list, cancel, accept into another project with the auth key (the
volume and its snapshots move, within the taker's quota), both URL
spellings and the bodies of each microversion."""

import pytest

from common.db.api import snapshots as snapshots_db
from common.db.api import volumes as volumes_db

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures

GIVER = {"token": "g:p1", "roles": "member"}
READER = {"token": "r:p1", "roles": "reader"}
TAKER = {"token": "t:p2", "roles": "member"}
OLD, NEW = "/os-volume-transfer", "/volume-transfers"


def _offer(api, vid, path=OLD, version="volume 3.71", **more):
    return api.call("POST", path, {"transfer": dict(volume_id=vid, name="t1",
                                                    **more)},
                    version=version, **GIVER)


def _volume(vid):
    return volumes_db.volume_get(fixtures.admin(), vid)


@pytest.mark.parametrize("path", [OLD, NEW])
def test_offer_show_list_and_accept_into_another_project(api, path):
    vid = api.volume(size=2)
    sid = fixtures.make_snapshot(_volume(vid)).id
    resp = _offer(api, vid, path)
    assert resp.status_code == 202, resp.json
    made = resp.json["transfer"]
    assert sorted(made) == sorted([
        "id", "volume_id", "name", "links", "created_at", "auth_key",
        "no_snapshots", "source_project_id", "destination_project_id",
        "accepted"])
    assert (made["volume_id"], made["name"], made["source_project_id"],
            made["accepted"], made["no_snapshots"]) == (
        vid, "t1", "p1", False, False)
    assert len(made["auth_key"]) == 16
    assert _volume(vid).status == "awaiting-transfer"
    shown = api.call("GET", "%s/%s" % (path, made["id"]), **READER)
    assert shown.json["transfer"] == {k: v for k, v in made.items()
                                      if k != "auth_key"}
    listed = api.call("GET", path, **READER).json["transfers"]
    assert listed == [{"id": made["id"], "volume_id": vid, "name": "t1",
                       "links": made["links"]}]
    detail = api.call("GET", path + "/detail", **READER).json["transfers"]
    assert [t["created_at"] for t in detail] == [made["created_at"]]
    assert api.call("GET", path, **TAKER).json["transfers"] == []
    assert api.call("GET", "%s/%s" % (path, made["id"]), **TAKER
                    ).status_code == 404

    accept = "%s/%s/accept" % (path, made["id"])
    wrong = api.call("POST", accept, {"accept": {"auth_key": "0" * 16}},
                     **TAKER)
    assert wrong.status_code == 400
    assert apitest.message(wrong) == (
        "Invalid auth key: Attempt to transfer %s with invalid auth key."
        % made["id"])
    taken = api.call("POST", accept, {"accept": {
        "auth_key": made["auth_key"]}}, **TAKER)
    assert taken.status_code == 202, taken.json
    assert taken.json == {"transfer": {"id": made["id"], "volume_id": vid,
                                       "name": "t1", "links": made["links"]}}
    volume = _volume(vid)
    assert (volume.project_id, volume.user_id, volume.status) == (
        "p2", "t", "available")
    assert snapshots_db.snapshot_get(fixtures.admin(), sid).project_id == "p2"
    assert api.call("GET", "/volumes/" + vid, **TAKER).status_code == 200
    assert api.call("GET", "/volumes/" + vid, **GIVER).status_code == 404
    assert api.call("POST", accept, {"accept": {
        "auth_key": made["auth_key"]}}, **TAKER).status_code == 404


def test_bodies_follow_the_microversion_and_new_urls_need_3_55(api):
    vid = api.volume()
    old = _offer(api, vid, version="volume 3.54").json["transfer"]
    assert "no_snapshots" not in old and "accepted" not in old
    mid = api.call("GET", "%s/%s" % (OLD, old["id"]),
                   version="volume 3.56").json["transfer"]
    assert mid["no_snapshots"] is False and "accepted" not in mid
    assert api.call("GET", NEW, version="volume 3.54").status_code == 404
    refused = _offer(api, api.volume(), OLD, no_snapshots=True)
    assert refused.status_code == 400


def test_cancel_makes_the_volume_available_again(api):
    vid = api.volume()
    made = _offer(api, vid).json["transfer"]
    assert api.call("DELETE", "%s/%s" % (OLD, made["id"]), **TAKER
                    ).status_code == 404
    resp = api.call("DELETE", "%s/%s" % (OLD, made["id"]), **GIVER)
    assert (resp.status_code, resp.text) == (202, "")
    assert _volume(vid).status == "available"
    assert api.call("POST", "%s/%s/accept" % (OLD, made["id"]), {
        "accept": {"auth_key": made["auth_key"]}}, **TAKER).status_code == 404
    assert _volume(vid).project_id == "p1"


def test_only_an_available_volume_with_available_snapshots_is_offered(api):
    busy = api.volume(status="in-use")
    resp = _offer(api, busy)
    assert resp.status_code == 400
    assert "status must be available" in apitest.message(resp)
    vid = api.volume()
    fixtures.make_snapshot(_volume(vid), status="creating")
    assert _offer(api, vid).status_code == 400
    kept = _offer(api, vid, NEW, no_snapshots=True)
    assert kept.status_code == 202, kept.json
    assert _offer(api, api.volume(project="p2")).status_code == 404
    assert api.call("POST", OLD, {"transfer": {"volume_id": vid}},
                    **READER).status_code == 403
    assert _offer(api, vid).status_code == 400  # awaiting-transfer already


def test_snapshots_stay_behind_with_no_snapshots(api):
    vid = api.volume()
    sid = fixtures.make_snapshot(_volume(vid)).id
    made = _offer(api, vid, NEW, no_snapshots=True).json["transfer"]
    assert made["no_snapshots"] is True
    assert api.call("POST", "%s/%s/accept" % (NEW, made["id"]), {
        "accept": {"auth_key": made["auth_key"]}}, **TAKER).status_code == 202
    assert _volume(vid).project_id == "p2"
    assert snapshots_db.snapshot_get(fixtures.admin(), sid).project_id == "p1"


def test_the_takers_quota_bounds_an_accept(api):
    api.call("PUT", "/os-quota-sets/p2", {"quota_set": {"gigabytes": 1}})
    vid = api.volume(size=2)
    made = _offer(api, vid).json["transfer"]
    resp = api.call("POST", "%s/%s/accept" % (OLD, made["id"]), {
        "accept": {"auth_key": made["auth_key"]}}, **TAKER)
    assert resp.status_code == 413, resp.json
    volume = _volume(vid)
    assert (volume.project_id, volume.status) == ("p1", "awaiting-transfer")


def test_a_volume_awaiting_transfer_refuses_attachments_and_deletes(api):
    vid = api.volume()
    _offer(api, vid)
    assert api.create(vid).status_code == 400
    assert api.call("DELETE", "/volumes/" + vid).status_code == 400


def test_force_deleting_the_volume_removes_its_transfer(api):
    vid = api.volume()
    made = _offer(api, vid).json["transfer"]
    volumes_db.volume_destroy(fixtures.admin(), vid)
    assert api.call("GET", "%s/%s" % (OLD, made["id"]), **GIVER
                    ).status_code == 404


def test_the_taker_cannot_cascade_the_givers_snapshots(api):
    vid = api.volume()
    sid = fixtures.make_snapshot(_volume(vid)).id
    made = _offer(api, vid, NEW, no_snapshots=True).json["transfer"]
    assert api.call("POST", "%s/%s/accept" % (NEW, made["id"]), {
        "accept": {"auth_key": made["auth_key"]}}, **TAKER).status_code == 202
    resp = api.call("DELETE", "/volumes/%s?cascade=true" % vid, **TAKER)
    assert resp.status_code == 400
    assert "disassociated from snapshots after volume transfer" in \
        apitest.message(resp)
    assert _volume(vid).status == "available"
    assert snapshots_db.snapshot_get(fixtures.admin(), sid).status == \
        "available"


def test_an_accept_of_a_volume_reset_meanwhile_changes_nothing(api):
    vid = api.volume()
    made = _offer(api, vid).json["transfer"]
    assert volumes_db.volume_cas(fixtures.admin(), vid, {},
                                 {"status": "available"})
    resp = api.call("POST", "%s/%s/accept" % (OLD, made["id"]), {
        "accept": {"auth_key": made["auth_key"]}}, **TAKER)
    assert resp.status_code == 400
    assert "no longer awaiting transfer" in apitest.message(resp)
    assert _volume(vid).project_id == "p1"
    assert api.call("GET", "%s/%s" % (OLD, made["id"]), **GIVER
                    ).status_code == 200
