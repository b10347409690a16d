"""Snapshots through the api: create (force for in-use), list, show,
update, delete, metadata; volumes made from a snapshot or a volume; revert
to the latest snapshot (3.40); the rules and messages Cinder has."""

import uuid

import pytest

from common import exception
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


def _snap(api, volume_id, force=None, **kwargs):
    body = {"volume_id": volume_id, "name": "s1", "metadata": {"k": "v"}}
    if force is not None:
        body["force"] = force
    return api.call("POST", "/snapshots", {"snapshot": body}, **kwargs)


def _available(snapshot_id):
    assert snapshots_db.snapshot_cas(fixtures.admin(), snapshot_id, {},
                                     {"status": "available"})


def _casts(api, name):
    return [args for cast, args in api.rpc.casts if cast == name]


def test_create_on_an_available_volume_is_cast_to_its_node(api):
    vid = api.volume()
    resp = _snap(api, vid, **MEMBER)
    assert resp.status_code == 202, resp.json
    snap = resp.json["snapshot"]
    assert (snap["status"], snap["size"], snap["volume_id"], snap["name"],
            snap["metadata"]) == ("creating", 1, vid, "s1", {"k": "v"})
    assert [args[1:] for args in _casts(api, "create_snapshot")] == [
        (snap["id"], apitest.HOST + "#b1")]
    assert volumes_db.volume_get(fixtures.admin(), vid).snapshot_count == 1


def test_in_use_needs_force_and_others_are_refused(api):
    vid = api.volume(status="in-use")
    resp = _snap(api, vid)
    assert resp.status_code == 400
    assert "status must be available, but current status is: in-use" in \
        apitest.message(resp)
    assert _snap(api, vid, force=True).status_code == 202
    assert _snap(api, api.volume(status="creating"), force=True
                 ).status_code == 400
    assert _snap(api, str(uuid.uuid4())).status_code == 404
    other = api.volume(project="p2")
    assert _snap(api, other, **MEMBER).status_code == 404
    assert _snap(api, api.volume(), **READER).status_code == 403


def test_show_list_update_delete(api):
    vid = api.volume()
    sid = _snap(api, vid).json["snapshot"]["id"]
    shown = api.call("GET", "/snapshots/" + sid, **MEMBER).json["snapshot"]
    assert shown["os-extended-snapshot-attributes:project_id"] == "p1"
    listed = api.call("GET", "/snapshots?volume_id=" + vid).json["snapshots"]
    assert [s["id"] for s in listed] == [sid]
    assert api.call("GET", "/snapshots?status=available").json[
        "snapshots"] == []
    detail = api.call("GET", "/snapshots/detail").json["snapshots"]
    assert detail[0]["os-extended-snapshot-attributes:progress"] == "0%"
    updated = api.call("PUT", "/snapshots/" + sid,
                       {"snapshot": {"name": "renamed"}}).json["snapshot"]
    assert updated["name"] == "renamed"
    # creating: not deletable yet
    assert api.call("DELETE", "/snapshots/" + sid).status_code == 400
    _available(sid)
    assert api.call("DELETE", "/snapshots/" + sid).status_code == 202
    assert snapshots_db.snapshot_get(fixtures.admin(), sid).status == \
        "deleting"
    assert [a[1] for a in _casts(api, "delete_snapshot")] == [sid]


def test_a_volume_with_snapshots_is_not_deleted(api):
    vid = api.volume()
    sid = _snap(api, vid).json["snapshot"]["id"]
    _available(sid)
    assert api.call("DELETE", "/volumes/" + vid).status_code == 400
    snapshots_db.snapshot_destroy(fixtures.admin(), sid)
    assert api.call("DELETE", "/volumes/" + vid).status_code == 202


def test_metadata(api):
    sid = _snap(api, api.volume()).json["snapshot"]["id"]
    base = "/snapshots/%s/metadata" % sid
    assert api.call("POST", base, {"metadata": {"a": "1"}}).json[
        "metadata"] == {"k": "v", "a": "1"}
    assert api.call("GET", base + "/a").json == {"meta": {"a": "1"}}
    assert api.call("PUT", base + "/a", {"meta": {"b": "2"}}
                    ).status_code == 400
    assert api.call("PUT", base, {"metadata": {"z": "9"}}).json[
        "metadata"] == {"z": "9"}
    assert api.call("DELETE", base + "/z").status_code == 200
    assert api.call("GET", base + "/z").status_code == 404
    assert api.call("GET", base).json == {"metadata": {}}


def _create(api, **fields):
    return api.call("POST", "/volumes", {"volume": fields})


def test_volume_from_a_snapshot_is_made_on_the_source_pool(api):
    vid = api.volume(size=2)
    sid = _snap(api, vid).json["snapshot"]["id"]
    assert _create(api, snapshot_id=sid).status_code == 400  # creating
    _available(sid)
    resp = _create(api, snapshot_id=sid)
    assert resp.status_code == 202, resp.json
    new = resp.json["volume"]
    assert (new["size"], new["snapshot_id"]) == (2, sid)
    row = volumes_db.volume_get(fixtures.admin(), new["id"])
    assert row.host == apitest.HOST + "#b1"
    assert [a[1:] for a in _casts(api, "create_volume_from_source")] == [
        (new["id"], apitest.HOST + "#b1")]
    small = _create(api, snapshot_id=sid, size=1)
    assert small.status_code == 400
    assert "cannot be smaller than the snapshot size 2GB" in \
        apitest.message(small)
    assert _create(api, snapshot_id=str(uuid.uuid4())).status_code == 404


def test_volume_from_a_volume(api):
    vid = api.volume(size=3)
    resp = _create(api, source_volid=vid, size=4)
    assert resp.status_code == 202, resp.json
    assert resp.json["volume"]["source_volid"] == vid
    assert _create(api, source_volid=vid, size=2).status_code == 400
    assert _create(api, source_volid=str(uuid.uuid4())).status_code == 404
    other = api.call("POST", "/volumes", {"volume": {
        "source_volid": api.volume(project="p2")}}, **MEMBER)
    assert other.status_code == 404
    both = _create(api, source_volid=vid, snapshot_id=str(uuid.uuid4()))
    assert both.status_code == 400


def test_a_create_names_a_size_unless_it_copies_a_source(api):
    """One refusal, whether the request or the operation meets it first."""
    text = ("Invalid input for field/attribute size: it is required unless "
            "snapshot_id or source_volid is given.")
    resp = _create(api, name="no-size")
    assert resp.status_code == 400
    assert apitest.message(resp).endswith(" " + text)
    with pytest.raises(exception.Invalid) as caught:
        api.ops.volumes.create(fixtures.user(), None, name="no-size")
    assert str(caught.value) == apitest.message(resp)
    assert volumes_db.volume_list(fixtures.admin()) == []


@pytest.mark.parametrize("key", ["imageRef", "backup_id"])
def test_sources_ashlar_cannot_copy_are_refused(api, key):
    resp = _create(api, size=1, **{key: str(uuid.uuid4())})
    assert resp.status_code == 400
    assert "not supported" in apitest.message(resp)
    assert volumes_db.volume_list(fixtures.admin()) == []


def test_revert_to_the_latest_snapshot(api):
    vid = api.volume()
    first = _snap(api, vid).json["snapshot"]["id"]
    second = _snap(api, vid).json["snapshot"]["id"]
    for sid in (first, second):
        _available(sid)
    body = {"revert": {"snapshot_id": first}}
    assert api.action(vid, body, version="volume 3.39").status_code == 404
    old = api.action(vid, body, version="volume 3.40")
    assert old.status_code == 400 and "latest" in apitest.message(old)
    resp = api.action(vid, {"revert": {"snapshot_id": second}},
                      version="volume 3.40")
    assert resp.status_code == 202, resp.json
    assert volumes_db.volume_get(fixtures.admin(), vid).status == "reverting"
    assert snapshots_db.snapshot_get(fixtures.admin(), second).status == \
        "restoring"
    assert [a[1:] for a in _casts(api, "revert_to_snapshot")] == [
        (vid, apitest.HOST + "#b1", second)]


def test_revert_after_an_extend_is_refused_and_changes_nothing(api):
    vid = api.volume()
    sid = _snap(api, vid).json["snapshot"]["id"]
    _available(sid)
    assert volumes_db.volume_cas(fixtures.admin(), vid, {}, {"size": 2})
    resp = api.action(vid, {"revert": {"snapshot_id": sid}},
                      version="volume 3.40")
    assert resp.status_code == 400
    assert apitest.message(resp) == (
        "Can't revert volume %s to its latest snapshot %s. The volume size "
        "must be equal to the snapshot size." % (vid, sid))
    assert volumes_db.volume_get(fixtures.admin(), vid).status == "available"
    assert snapshots_db.snapshot_get(fixtures.admin(), sid).status == \
        "available"
    assert _casts(api, "revert_to_snapshot") == []


def test_snapshot_quota(api):
    api.call("PUT", "/os-quota-sets/p1", {"quota_set": {"snapshots": 1}})
    vid = api.volume()
    assert _snap(api, vid, **MEMBER).status_code == 202
    over = _snap(api, vid, **MEMBER)
    assert over.status_code == 413
    assert volumes_db.volume_get(fixtures.admin(), vid).snapshot_count == 1


def test_from_3_66_an_in_use_volume_needs_no_force(api):
    vid = api.volume(status="in-use")
    assert _snap(api, vid, version="volume 3.66").status_code == 202
    refused = _snap(api, vid, force=False, version="volume 3.66")
    assert refused.status_code == 400
    assert "Invalid value 'False' for force" in apitest.message(refused)


def test_a_source_is_not_deleted_under_a_copy_in_progress(api):
    vid = api.volume()
    sid = _snap(api, vid).json["snapshot"]["id"]
    _available(sid)
    from_snap = _create(api, snapshot_id=sid).json["volume"]["id"]
    clone = _create(api, source_volid=vid).json["volume"]["id"]
    refused = api.call("DELETE", "/snapshots/" + sid)
    assert refused.status_code == 400
    assert "being made from it (%s)" % from_snap in apitest.message(refused)
    assert snapshots_db.snapshot_get(fixtures.admin(), sid).status == \
        "available"
    for made in (from_snap, clone):
        volumes_db.volume_cas(fixtures.admin(), made, {},
                              {"status": "available"})
    assert api.call("DELETE", "/snapshots/" + sid).status_code == 202
    snapshots_db.snapshot_destroy(fixtures.admin(), sid)
    assert api.call("DELETE", "/volumes/" + vid).status_code == 202


def test_copies_and_source_deletes_racing_never_both_win(api):
    """Whatever the order, a snapshot never ends ``deleting`` while a volume
    is being made from it (the source row's lock decides)."""
    sid = _snap(api, api.volume()).json["snapshot"]["id"]
    _available(sid)

    def one(i):
        if i % 2:
            return api.call("DELETE", "/snapshots/" + sid).status_code
        return _create(api, snapshot_id=sid).status_code
    codes = fixtures.race(12, one, errors=False)
    copies = [v for v in volumes_db.volume_list(fixtures.admin())
              if v.snapshot_id == sid and v.status == "creating"]
    status = snapshots_db.snapshot_get(fixtures.admin(), sid).status
    assert not (copies and status == "deleting"), (codes, status)
    assert 202 in codes


def test_a_copy_stays_in_its_sources_zone(api):
    vid = api.volume(availability_zone="zone-a")
    refused = _create(api, source_volid=vid, availability_zone="zone-b")
    assert refused.status_code == 400
    assert "same availability zone as the source volume" in \
        apitest.message(refused)
    made = _create(api, source_volid=vid).json["volume"]
    assert made["availability_zone"] == "zone-a"


def test_revert_refused_when_a_newer_snapshot_came_meanwhile(api,
                                                             monkeypatch):
    vid = api.volume()
    first = _snap(api, vid).json["snapshot"]["id"]
    _available(first)
    _snap(api, vid)  # made after the revert read the list
    monkeypatch.setattr(
        snapshots_db, "snapshots_of_volume",
        lambda ctxt, volume_id: [snapshots_db.snapshot_get(ctxt, first)])
    resp = api.action(vid, {"revert": {"snapshot_id": first}},
                      version="volume 3.40")
    assert resp.status_code == 400
    assert volumes_db.volume_get(fixtures.admin(), vid).status == "available"
    assert snapshots_db.snapshot_get(fixtures.admin(), first).status == \
        "available"


def test_revert_refused_when_an_extend_finished_meanwhile(api,
                                                          monkeypatch):
    vid = api.volume()
    sid = _snap(api, vid).json["snapshot"]["id"]
    _available(sid)
    listed = snapshots_db.snapshots_of_volume

    def extended_after_the_read(ctxt, volume_id):
        assert volumes_db.volume_cas(fixtures.admin(), vid, {}, {"size": 2})
        return listed(ctxt, volume_id)
    monkeypatch.setattr(snapshots_db, "snapshots_of_volume",
                        extended_after_the_read)
    resp = api.action(vid, {"revert": {"snapshot_id": sid}},
                      version="volume 3.40")
    assert resp.status_code == 400
    assert volumes_db.volume_get(fixtures.admin(), vid).status == "available"
    assert snapshots_db.snapshot_get(fixtures.admin(), sid).status == \
        "available"


def test_a_restoring_snapshot_is_not_force_deleted(api):
    vid = api.volume()
    sid = _snap(api, vid).json["snapshot"]["id"]
    snapshots_db.snapshot_cas(fixtures.admin(), sid, {},
                              {"status": "restoring"})
    resp = api.call("POST", "/snapshots/%s/action" % sid,
                    {"os-force_delete": {}})
    assert resp.status_code == 400


def test_a_deleting_snapshot_is_only_force_deleted_and_cast_again(api):
    sid = _snap(api, api.volume()).json["snapshot"]["id"]
    _available(sid)
    assert api.call("DELETE", "/snapshots/" + sid).status_code == 202
    again = api.call("DELETE", "/snapshots/" + sid)
    assert again.status_code == 400
    assert "must be available or error, not deleting" in \
        apitest.message(again)
    forced = api.call("POST", "/snapshots/%s/action" % sid,
                      {"os-force_delete": {}})
    assert forced.status_code == 202
    assert [a[1] for a in _casts(api, "delete_snapshot")] == [sid, sid]
    assert snapshots_db.snapshot_get(fixtures.admin(), sid).status == \
        "deleting"


def test_a_retype_counts_the_snapshots_in_the_new_types_quota(api):
    assert api.call("POST", "/types", {"volume_type": {
        "name": "gold"}}).status_code == 200
    api.call("PUT", "/os-quota-sets/p1", {"quota_set": {
        "snapshots_gold": 0}})
    vid = api.volume()
    body = {"os-retype": {"new_type": "gold", "migration_policy": "never"}}
    _available(_snap(api, vid).json["snapshot"]["id"])
    refused = api.action(vid, body)
    assert refused.status_code == 413, refused.json
    api.call("PUT", "/os-quota-sets/p1", {"quota_set": {
        "snapshots_gold": 1}})
    assert api.action(vid, body).status_code == 202


def test_snapshots_sort_by_display_name_as_cinder_does(api):
    """Cinder takes ``display_name`` (the column) as well as ``name``."""
    resp = api.call("GET", "/snapshots?sort_key=display_name&sort_dir=asc")
    assert resp.status_code == 200, resp.json
    resp = api.call("GET", "/volumes?sort=display_name:desc")
    assert resp.status_code == 200, resp.json


def test_a_null_volume_id_is_a_missing_volume_as_in_cinder(api):
    resp = api.call("POST", "/snapshots", {"snapshot": {"volume_id": None}})
    assert resp.status_code == 404, resp.json
    assert apitest.message(resp) == "Volume None could not be found."
    assert api.call("POST", "/snapshots", {"snapshot": {"name": "x"}}
                    ).status_code == 400


def test_update_snapshot_status_moves_creating_and_deleting_on(api):
    sid = _snap(api, api.volume(), **MEMBER).json["snapshot"]["id"]
    path = "/snapshots/%s/action" % sid

    def update(status, who=MEMBER, **more):
        return api.call("POST", path, {"os-update_snapshot_status": dict(
            status=status, **more)}, **who)
    assert update("error", progress="80%").status_code == 202
    shown = api.call("GET", "/snapshots/" + sid, **MEMBER).json["snapshot"]
    assert (shown["status"],
            shown["os-extended-snapshot-attributes:progress"]) == (
        "error", "80%")
    refused = update("available")
    assert refused.status_code == 400
    assert apitest.message(refused) == (
        "Snapshot status error not allowed for update_snapshot_status")
    snapshots_db.snapshot_cas(fixtures.admin(), sid, {},
                              {"status": "creating"})
    wrong = update("deleting")
    assert apitest.message(wrong) == (
        "Provided snapshot status deleting not allowed for snapshot with "
        "status creating.")
    for bad in ("80", "101%", "x%", "-1%"):
        assert update("available", progress=bad).status_code == 400, bad
    assert update("available", READER).status_code == 403
    assert snapshots_db.snapshot_get(fixtures.admin(), sid).status == \
        "creating"
    assert update("available", progress="100%").status_code == 202
    assert snapshots_db.snapshot_get(fixtures.admin(), sid).status == \
        "available"


def test_cascade_delete_takes_the_snapshots_along(api):
    vid = api.volume()
    sids = [_snap(api, vid).json["snapshot"]["id"] for _ in range(2)]
    for sid in sids:
        _available(sid)
    plain = api.call("DELETE", "/volumes/" + vid)
    assert plain.status_code == 400
    resp = api.call("DELETE", "/volumes/%s?cascade=true" % vid, **MEMBER)
    assert resp.status_code == 202, resp.json
    assert volumes_db.volume_get(fixtures.admin(), vid).status == "deleting"
    assert [snapshots_db.snapshot_get(fixtures.admin(), sid).status
            for sid in sids] == ["deleting", "deleting"]
    assert [a[1:] for a in _casts(api, "delete_volume")] == [
        (vid, apitest.HOST + "#b1", {"cascade": True})]


def test_cascade_refused_for_a_busy_snapshot_changes_nothing(api):
    vid = api.volume()
    ready = _snap(api, vid).json["snapshot"]["id"]
    _available(ready)
    _snap(api, vid)  # still creating
    resp = api.call("DELETE", "/volumes/%s?cascade=true" % vid)
    assert resp.status_code == 400
    assert "cascade deletes available or error snapshots" in \
        apitest.message(resp)
    assert volumes_db.volume_get(fixtures.admin(), vid).status == "available"
    assert snapshots_db.snapshot_get(fixtures.admin(), ready).status == \
        "available"
    assert _casts(api, "delete_volume") == []


def test_cascade_needs_volume_services_of_this_release(api):
    vid = api.volume()
    _available(_snap(api, vid).json["snapshot"]["id"])
    api.rpc.cap = "1.4"
    resp = api.call("DELETE", "/volumes/%s?cascade=true" % vid)
    assert resp.status_code == 503
    assert volumes_db.volume_get(fixtures.admin(), vid).status == "available"
