"""Backups through the api: create (force for in-use, incremental),
list, show, delete, restore; placement on a live backup service; the
rules, quotas and messages Cinder has."""

import uuid

import pytest

from common.db.api import backups as backups_db
from common.db.api import quotas as quotas_db
from common.db.api import services as services_db
from common.db.api import volumes as volumes_db

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures

MEMBER = {"token": "m:p1", "roles": "member"}
READER = {"token": "r:p1", "roles": "reader"}


@pytest.fixture
def api(api):
    for host in ("bk-b", "bk-a"):
        services_db.service_register(fixtures.admin(), host, "ashlar-backup",
                                     "ashlar-backup", "nova")
    return api


def _backup(api, volume_id, **body):
    kwargs = {k: body.pop(k) for k in ("token", "roles") if k in body}
    return api.call("POST", "/backups",
                    {"backup": {"volume_id": volume_id, **body}}, **kwargs)


def _casts(api, name):
    return [c for c in api.ops.backups.backup.method_calls if c[0] == name]


def _status(volume_id):
    return volumes_db.volume_get(fixtures.admin(), volume_id).status


def _available(api, backup_id, volume_id):
    backups_db.backup_cas(fixtures.admin(), backup_id, {},
                          {"status": "available"},
                          (volume_id, {"status": "backing-up"}, "available"))


def test_create_goes_to_the_first_live_backup_service(api):
    vid = api.volume()
    resp = _backup(api, vid, name="b1", **MEMBER)
    assert resp.status_code == 202, resp.json
    body = resp.json["backup"]
    assert set(body) == {"id", "name", "links"} and body["name"] == "b1"
    assert _status(vid) == "backing-up"
    (call,) = _casts(api, "create_backup")
    assert call[1][1:] == ("bk-a", body["id"])
    shown = api.call("GET", "/backups/" + body["id"], **MEMBER).json["backup"]
    assert (shown["status"], shown["size"], shown["container"],
            shown["is_incremental"], shown["volume_id"]) == (
        "creating", 1, "backups", False, vid)


def test_in_use_needs_force_and_other_statuses_are_refused(api):
    vid = api.volume(status="in-use")
    resp = _backup(api, vid)
    assert resp.status_code == 400
    assert apitest.message(resp) == (
        'Invalid volume: Volume to be backed up must be available, but the '
        'current status is "in-use".')
    assert _backup(api, vid, force=True).status_code == 202
    assert _backup(api, api.volume(status="error"), force=True
                   ).status_code == 400
    assert _backup(api, str(uuid.uuid4())).status_code == 404
    assert _backup(api, api.volume(project="p2"), **MEMBER).status_code == 404
    assert _backup(api, api.volume(), **READER).status_code == 403


@pytest.mark.parametrize("body", [
    {"volume_id": "not-a-uuid"}, {"volume_id": None},
    {"volume_id": str(uuid.uuid4()), "bogus": 1},
    {"volume_id": str(uuid.uuid4()), "incremental": "maybe"}])
def test_bad_bodies_are_400(api, body):
    resp = api.call("POST", "/backups", {"backup": body})
    assert resp.status_code == 400, resp.json
    assert "badRequest" in resp.json


def test_a_backup_is_the_requesters_projects_as_in_cinder(api):
    """An administrator of another project backs up p1's volume: the
    backup (and its quota) is the administrator's project's."""
    vid = api.volume()
    made = _backup(api, vid, token="admin:ops", roles="admin")
    assert made.status_code == 202, made.json
    row = backups_db.backup_get(fixtures.admin(), made.json["backup"]["id"])
    assert row.project_id == "ops"
    mine = _backup(api, api.volume(), **MEMBER)
    assert backups_db.backup_get(fixtures.admin(), mine.json["backup"][
        "id"]).project_id == "p1"


def test_a_null_snapshot_id_is_taken_a_snapshot_refused(api):
    """cinderclient sends ``snapshot_id: null``; a backup of a snapshot
    is refused, and changes nothing."""
    vid = api.volume()
    refused = api.call("POST", "/backups", {"backup": {
        "volume_id": vid, "snapshot_id": str(uuid.uuid4())}})
    assert refused.status_code == 400
    assert apitest.message(refused) == (
        "Invalid input received: Backups of a snapshot are not supported "
        "yet.")
    assert _status(vid) == "available"
    assert api.call("POST", "/backups", {"backup": {
        "volume_id": vid, "snapshot_id": None}}).status_code == 202


def test_no_live_backup_service_is_503_and_changes_nothing(api):
    services_db.service_set_disabled(fixtures.admin(), "bk-a",
                                     "ashlar-backup", True, None)
    services_db.service_set_disabled(fixtures.admin(), "bk-b",
                                     "ashlar-backup", True, None)
    vid = api.volume()
    assert _backup(api, vid).status_code == 503
    assert _status(vid) == "available"


def test_incremental_takes_the_latest_available_backup(api):
    vid = api.volume()
    resp = _backup(api, vid, incremental=True)
    assert resp.status_code == 400
    assert "No backups available" in apitest.message(resp)
    full = _backup(api, vid, container="c1").json["backup"]["id"]
    _available(api, full, vid)
    incr = _backup(api, vid, incremental=True).json["backup"]["id"]
    shown = api.call("GET", "/backups/" + incr).json["backup"]
    assert shown["is_incremental"] and shown["container"] == "c1"
    parent = api.call("GET", "/backups/" + full).json["backup"]
    assert parent["has_dependent_backups"]


def test_quota_is_413(api):
    quotas_db.project_set(fixtures.admin(), "p1", {"backups": 1})
    _backup(api, api.volume())
    resp = _backup(api, api.volume())
    assert resp.status_code == 413
    assert "Maximum number of backups allowed (1) exceeded" in \
        apitest.message(resp)
    shown = api.call("GET", "/os-quota-sets/p1?usage=true").json["quota_set"]
    assert shown["backups"] == {"limit": 1, "in_use": 1, "reserved": 0}
    assert shown["backup_gigabytes"]["in_use"] == 1


def test_list_detail_and_versions(api):
    vid = api.volume()
    bid = _backup(api, vid, name="x").json["backup"]["id"]
    listed = api.call("GET", "/backups", **MEMBER).json["backups"]
    assert [b["id"] for b in listed] == [bid]
    detail = api.call("GET", "/backups/detail", **MEMBER).json["backups"]
    assert "user_id" in detail[0]
    assert "os-backup-project-attr:project_id" not in detail[0]
    admin = api.call("GET", "/backups/detail").json["backups"][0]
    assert admin["os-backup-project-attr:project_id"] == "p1"
    old = api.call("GET", "/backups/" + bid, version="volume 3.17").json
    assert "user_id" not in old["backup"]
    assert api.call("GET", "/backups?name=nope").json["backups"] == []
    assert api.call("GET", "/backups/%s" % uuid.uuid4()).status_code == 404


def test_delete(api):
    vid = api.volume()
    full = _backup(api, vid).json["backup"]["id"]
    resp = api.call("DELETE", "/backups/" + full)
    assert resp.status_code == 400  # still creating
    assert apitest.message(resp) == (
        "Invalid backup: Backup status must be available or error")
    _available(api, full, vid)
    incr = _backup(api, vid, incremental=True).json["backup"]["id"]
    resp = api.call("DELETE", "/backups/" + full)
    assert resp.status_code == 400
    assert "Incremental backups exist" in apitest.message(resp)
    assert api.call("DELETE", "/backups/" + incr, **READER).status_code == 403
    backups_db.backup_cas(fixtures.admin(), incr, {}, {"status": "error"})
    assert api.call("DELETE", "/backups/" + incr).status_code == 202
    assert backups_db.backup_get(fixtures.admin(), incr).status == "deleting"
    assert _casts(api, "delete_backup")[0][1][1:] == ("bk-a", incr)


def test_restore_into_an_existing_volume(api):
    vid = api.volume(size=2)
    bid = _backup(api, vid).json["backup"]["id"]
    restore = {"restore": {"volume_id": api.volume(size=1)}}
    assert api.call("POST", "/backups/%s/restore" % bid, restore
                    ).status_code == 400  # not available yet
    _available(api, bid, vid)
    resp = api.call("POST", "/backups/%s/restore" % bid, restore)
    assert resp.status_code == 400
    assert "too small to restore backup of size 2" in apitest.message(resp)
    target = api.volume(size=3)
    resp = api.call("POST", "/backups/%s/restore" % bid,
                    {"restore": {"volume_id": target}})
    assert resp.status_code == 202, resp.json
    assert resp.json["restore"]["volume_id"] == target
    assert _status(target) == "restoring-backup"
    assert backups_db.backup_get(fixtures.admin(), bid).status == "restoring"
    assert _casts(api, "restore_backup")[0][1][1:] == (
        "bk-a", bid, target)


def test_restore_into_a_busy_volume_changes_nothing(api):
    vid = api.volume()
    bid = _backup(api, vid).json["backup"]["id"]
    _available(api, bid, vid)
    busy = api.volume(status="in-use")
    resp = api.call("POST", "/backups/%s/restore" % bid,
                    {"restore": {"volume_id": busy}})
    assert resp.status_code == 400
    assert backups_db.backup_get(fixtures.admin(), bid).status == "available"


def test_restore_into_a_new_volume(api):
    vid = api.volume(size=2)
    bid = _backup(api, vid).json["backup"]["id"]
    _available(api, bid, vid)
    resp = api.call("POST", "/backups/%s/restore" % bid,
                    {"restore": {"name": "back"}}, **MEMBER)
    assert resp.status_code == 202, resp.json
    new = resp.json["restore"]
    assert new["volume_name"] == "back"
    row = volumes_db.volume_get(fixtures.admin(), new["volume_id"])
    assert (row.size, row.status) == (2, "creating")
    assert backups_db.backup_get(fixtures.admin(), bid).restore_volume_id \
        == new["volume_id"]
    call = _casts(api, "restore_backup")[0]
    assert call[1][1:4] == ("bk-a", bid, new["volume_id"])
    assert call[2] == {"new_volume": True}
    resp = api.call("POST", "/backups/%s/restore" % bid, {"restore": {}})
    assert resp.status_code == 400  # restoring already
