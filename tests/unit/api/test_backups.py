"""Backups through the api: create (force for in-use, incremental),
list, show, delete, restore; placement on a live backup service; the
rules, quotas and messages Cinder has."""

import base64
import json
import uuid

import pytest

from common.db.api import backups as backups_db
from common.db.api import quotas as quotas_db
from common.db.api import services as services_db
from common.db.api import snapshots as snapshots_db
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
    # NOTE: 0, not null, while creating: Cinder's Backup object reads a
    # null integer as 0, and Tempest's schema wants an integer.
    assert (shown["status"], shown["size"], shown["container"],
            shown["is_incremental"], shown["volume_id"],
            shown["object_count"]) == (
        "creating", 1, "backups", False, vid, 0)


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


def test_an_incremental_backups_parent_is_of_the_requesters_project(api):
    """cinder-tempest-plugin's cross-project cases: a full backup made by
    another project's administrator is no parent of the owner's
    incremental backup (400), nor the owner's of the administrator's."""
    vid = api.volume()
    theirs = _backup(api, vid, token="admin:ops", roles="admin")
    assert theirs.status_code == 202, theirs.json
    backups_db.backup_cas(fixtures.admin(), theirs.json["backup"]["id"],
                          {"status": "creating"}, {"status": "available"},
                          (vid, {"status": "backing-up"}, "available"))
    refused = _backup(api, vid, incremental=True, **MEMBER)
    assert refused.status_code == 400, refused.json
    assert apitest.message(refused) == (
        "Invalid backup: No backups available to do an incremental backup.")
    again = _backup(api, vid, incremental=True, token="admin:ops",
                    roles="admin")
    assert again.status_code == 202, again.json


def _snapshot(volume_id, status="available"):
    volume = volumes_db.volume_get(fixtures.admin(), volume_id)
    return fixtures.make_snapshot(volume, status=status)


def test_a_backup_of_a_snapshot_holds_the_snapshot_not_the_volume(api):
    """cinderclient sends ``snapshot_id: null`` (a volume backup); a
    snapshot named is read instead: it is ``backing-up``, the volume's
    status does not matter."""
    vid = api.volume(status="in-use")
    snap = _snapshot(vid)
    resp = _backup(api, vid, snapshot_id=snap.id, **MEMBER)
    assert resp.status_code == 202, resp.json
    row = backups_db.backup_get(fixtures.admin(), resp.json["backup"]["id"])
    stored = snapshots_db.snapshot_get(fixtures.admin(), snap.id)
    assert (row.snapshot_id, row.size, row.data_timestamp) == (
        snap.id, snap.volume_size, stored.created_at)
    assert _status(vid) == "in-use"
    assert snapshots_db.snapshot_get(fixtures.admin(), snap.id).status == \
        "backing-up"
    shown = api.call("GET", "/backups/" + row.id).json["backup"]
    assert shown["snapshot_id"] == snap.id
    again = _backup(api, vid, snapshot_id=snap.id)
    assert again.status_code == 400
    assert apitest.message(again) == (
        'Invalid snapshot: Snapshot to be backed up must be available, but '
        'the current status is "backing-up".')
    assert api.call("POST", "/backups", {"backup": {
        "volume_id": vid, "snapshot_id": None}}).status_code == 400  # in-use


def test_a_snapshot_of_another_volume_or_unknown_is_refused(api):
    snap = _snapshot(api.volume())
    other = api.volume()
    resp = _backup(api, other, snapshot_id=snap.id)
    assert resp.status_code == 400
    assert "does not match with snapshot.volume_id" in apitest.message(resp)
    assert _backup(api, other, snapshot_id=str(uuid.uuid4())
                   ).status_code == 404
    assert backups_db.backup_list(fixtures.admin()) == []


def test_an_incremental_backup_of_a_snapshot_takes_older_data(api):
    """The parent is the latest backup of data older than the snapshot,
    as Cinder chooses it."""
    vid = api.volume()
    before = _backup(api, vid).json["backup"]["id"]
    _available(api, before, vid)
    snap = _snapshot(vid)
    after = _backup(api, vid).json["backup"]["id"]
    _available(api, after, vid)
    incr = _backup(api, vid, snapshot_id=snap.id, incremental=True)
    assert incr.status_code == 202, incr.json
    row = backups_db.backup_get(fixtures.admin(), incr.json["backup"]["id"])
    assert row.parent_id == before


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


def _action(api, backup_id, body, **kwargs):
    return api.call("POST", "/backups/%s/action" % backup_id, body, **kwargs)


def test_reset_status_is_an_admins_and_takes_cinders_statuses(api):
    vid = api.volume()
    bid = _backup(api, vid).json["backup"]["id"]
    assert _action(api, bid, {"os-reset_status": {"status": "available"}},
                   **MEMBER).status_code == 403
    resp = _action(api, bid, {"os-reset_status": {"status": "deleting"}})
    assert resp.status_code == 400
    assert apitest.message(resp) == (
        "Invalid input received: Backup status: deleting is invalid, valid "
        "statuses are: ['available', 'error'].")
    resp = _action(api, bid, {"os-reset_status": {"status": "ERROR"}})
    assert resp.status_code == 202 and resp.text == ""
    assert backups_db.backup_get(fixtures.admin(), bid).status == "error"
    assert _action(api, bid, {"os-bogus": {}}).status_code == 400
    assert _action(api, str(uuid.uuid4()), {"os-reset_status": {
        "status": "error"}}).status_code == 404


def test_force_delete_any_status_but_restoring(api):
    """A ``creating`` backup is force-deleted (its service cancels it), a
    ``restoring`` one is refused, a parent still refused."""
    vid = api.volume()
    bid = _backup(api, vid).json["backup"]["id"]
    assert _action(api, bid, {"os-force_delete": None},
                   **MEMBER).status_code == 403
    resp = _action(api, bid, {"os-force_delete": {}})
    assert resp.status_code == 202, resp.json
    assert backups_db.backup_get(fixtures.admin(), bid).status == "deleting"
    assert _casts(api, "delete_backup")[-1][1][1:] == ("bk-a", bid)
    assert _action(api, bid, {"os-force_delete": {}}).status_code == 202
    backups_db.backup_cas(fixtures.admin(), bid, {}, {"status": "restoring"})
    resp = _action(api, bid, {"os-force_delete": {}})
    assert resp.status_code == 400
    assert apitest.message(resp) == (
        "Invalid backup: Backup status must be other than restoring")
    vid2 = api.volume()
    parent = _backup(api, vid2).json["backup"]["id"]
    _available(api, parent, vid2)
    _backup(api, vid2, incremental=True)
    resp = _action(api, parent, {"os-force_delete": {}})
    assert resp.status_code == 400
    assert "Incremental backups exist" in apitest.message(resp)


def test_update_name_description_from_3_9_metadata_from_3_43(api):
    vid = api.volume()
    bid = _backup(api, vid, name="old").json["backup"]["id"]
    path = "/backups/" + bid
    assert api.call("PUT", path, {"backup": {"name": "x"}},
                    version="volume 3.8").status_code == 404
    resp = api.call("PUT", path, {"backup": {"name": "new",
                                             "description": "d"}},
                    version="volume 3.9", **MEMBER)
    assert resp.status_code == 200, resp.json
    assert resp.json["backup"]["name"] == "new"
    assert api.call("PUT", path, {"backup": {"metadata": {"k": "v"}}},
                    version="volume 3.42").status_code == 400
    assert api.call("PUT", path, {"backup": {"metadata": {"k": "v"}}},
                    version="volume 3.43").status_code == 200
    assert api.call("PUT", path, {"backup": {"metadata": {"k2": "w"}}},
                    version="volume 3.43").status_code == 200
    shown = api.call("GET", path, version="volume 3.43").json["backup"]
    assert (shown["name"], shown["description"], shown["metadata"]) == (
        "new", "d", {"k2": "w"})
    assert "metadata" not in api.call("GET", path, version="volume 3.42"
                                      ).json["backup"]
    assert api.call("PUT", path, {"backup": {"name": "r"}}, version=apitest.MV,
                    **READER).status_code == 403


def test_create_with_metadata_from_3_43(api):
    vid = api.volume()
    refused = api.call("POST", "/backups", {"backup": {
        "volume_id": vid, "metadata": {"a": "b"}}}, version="volume 3.42")
    assert refused.status_code == 400
    made = api.call("POST", "/backups", {"backup": {
        "volume_id": vid, "metadata": {"a": "b"}}}, version="volume 3.43")
    assert made.status_code == 202, made.json
    shown = api.call("GET", "/backups/" + made.json["backup"]["id"],
                     version="volume 3.43").json["backup"]
    assert shown["metadata"] == {"a": "b"}


def test_export_then_import_a_record(api):
    """Export an available backup; the record comes back as a new
    ``creating`` row once the row is gone, cast to a backup service."""
    vid = api.volume()
    bid = _backup(api, vid, name="kept").json["backup"]["id"]
    path = "/backups/%s/export_record" % bid
    resp = api.call("GET", path)
    assert resp.status_code == 400
    assert apitest.message(resp) == (
        "Invalid backup: Backup status must be available and not creating.")
    backups_db.backup_cas(fixtures.admin(), bid, {},
                          {"status": "available", "service":
                           "drivers.backup.posix", "object_count": 3},
                          (vid, {"status": "backing-up"}, "available"))
    assert api.call("GET", path, **MEMBER).status_code == 403
    record = api.call("GET", path).json["backup-record"]
    assert record["backup_service"] == "drivers.backup.posix"
    fields = json.loads(base64.b64decode(record["backup_url"]))
    assert (fields["id"], fields["display_name"], fields["size"],
            fields["object_count"], fields["driver_info"]) == (
        bid, "kept", 1, 3, {})
    body = {"backup-record": record}
    resp = api.call("POST", "/backups/import_record", body)
    assert resp.status_code == 400
    assert apitest.message(resp) == (
        "Invalid backup: Backup already exists in database.")
    backups_db.backup_cas(fixtures.admin(), bid, {}, {"status": "deleting"})
    backups_db.backup_destroy(fixtures.admin(), bid)
    assert api.call("POST", "/backups/import_record", body,
                    **MEMBER).status_code == 403
    resp = api.call("POST", "/backups/import_record", body)
    assert resp.status_code == 201, resp.json
    assert resp.json["backup"]["id"] == bid
    row = backups_db.backup_get(fixtures.admin(), bid)
    assert (row.status, row.volume_id, row.host, row.project_id) == (
        "creating", "00000000-0000-0000-0000-000000000000", "bk-a", "p1")
    call = _casts(api, "import_record")[0]
    assert call[1][1:] == ("bk-a", bid, "drivers.backup.posix",
                           record["backup_url"])


@pytest.mark.parametrize("url, reason", [
    ("not base64!", "Can't parse backup record."),
    (base64.b64encode(b"[1]").decode(), "Can't parse backup record."),
    (base64.b64encode(b'{"size": 1}').decode(),
     "Provided backup record is missing an id"),
    (base64.b64encode(b'{"id": "x"}').decode(),
     "Provided backup record is missing size attribute")])
def test_an_unreadable_record_is_400(api, url, reason):
    resp = api.call("POST", "/backups/import_record", {"backup-record": {
        "backup_service": "drivers.backup.posix", "backup_url": url}})
    assert resp.status_code == 400
    assert apitest.message(resp) == "Invalid input received: " + reason
