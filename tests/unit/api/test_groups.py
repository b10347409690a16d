"""Generic volume groups through the api: group types and their specs
(3.11), groups and their volumes (3.13), group snapshots and groups made
from a source (3.14), the status resets (3.19, 3.20); Cinder's rules."""

import uuid
from unittest import mock

from common.db.api import group_snapshots as gsnaps_db
from common.db.api import groups as groups_db
from common.db.api import snapshots as snapshots_db
from common.db.api import types as types_db
from common.db.api import volumes as volumes_db
from services.volume import backend as volume_backend
from services.volume import snapshots as volume_snapshots

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures

MEMBER = {"token": "m:p1", "roles": "member"}


def _gtype(api, name="gt", **extra):
    resp = api.call("POST", "/group_types",
                    {"group_type": {"name": name, **extra}})
    assert resp.status_code == 202, resp.json
    return resp.json["group_type"]


def _default_type():
    return types_db.type_get_by_name(fixtures.admin(), "__DEFAULT__")


def _group(api, **kwargs):
    resp = api.call("POST", "/groups", {"group": {
        "name": "g1", "group_type": _gtype(api, str(uuid.uuid4()))["id"],
        "volume_types": [_default_type().id]}}, **kwargs)
    assert resp.status_code == 202, resp.json
    return resp.json["group"]["id"]


def _in_group(api, group_id, **kwargs):
    """A volume made in the group (the row; no cast runs)."""
    resp = api.call("POST", "/volumes", {"volume": {
        "size": 1, "group_id": group_id}}, **kwargs)
    assert resp.status_code == 202, resp.json
    assert resp.json["volume"]["group_id"] == group_id
    volume_id = resp.json["volume"]["id"]
    assert volumes_db.volume_cas(fixtures.admin(), volume_id, {}, {
        "status": "available", "host": apitest.HOST + "#b1",
        "provider_location": "fake://x"})
    api.driver.create_volume(volume_backend.driver_volume(
        volumes_db.volume_get(fixtures.admin(), volume_id)))
    return volume_id


def _casts(api, name):
    return [args for cast, args in api.rpc.casts if cast == name]


def test_group_types_create_show_list_update_delete(api):
    made = _gtype(api, "a-type", description="d", is_public=True,
                  group_specs={"consistent_group_snapshot_enabled":
                               "<is> False"})
    assert made == {"id": made["id"], "name": "a-type", "description": "d",
                    "is_public": True, "group_specs": {
                        "consistent_group_snapshot_enabled": "<is> False"}}
    private = _gtype(api, "b-type", is_public=False)
    assert api.call("POST", "/group_types", {"group_type": {
        "name": "a-type"}}).status_code == 409
    names = [t["name"] for t in api.call(
        "GET", "/group_types?is_public=None&sort=name:desc").json[
            "group_types"]]
    assert names == ["b-type", "a-type"]
    assert [t["id"] for t in api.call("GET", "/group_types?is_public=false")
            .json["group_types"]] == [private["id"]]
    # a member sees public types only, without their specs
    seen = api.call("GET", "/group_types?is_public=None", **MEMBER).json
    assert seen["group_types"] == [{"id": made["id"], "name": "a-type",
                                    "description": "d", "is_public": True}]
    assert api.call("GET", "/group_types/" + private["id"],
                    **MEMBER).status_code == 404
    assert api.call("POST", "/group_types", {"group_type": {"name": "x"}},
                    **MEMBER).status_code == 403
    updated = api.call("PUT", "/group_types/" + made["id"], {
        "group_type": {"name": "renamed", "description": "new"}})
    assert updated.status_code == 200
    assert updated.json["group_type"]["name"] == "renamed"
    assert api.call("PUT", "/group_types/" + made["id"], {
        "group_type": {}}).status_code == 400
    assert api.call("DELETE", "/group_types/" + made["id"]).status_code == 202
    assert api.call("GET", "/group_types/" + made["id"]).status_code == 404
    assert api.call("GET", "/group_types/default").status_code == 404
    assert api.call("GET", "/group_types",
                    version="volume 3.10").status_code == 404


def test_group_specs(api):
    type_id = _gtype(api)["id"]
    path = "/group_types/%s/group_specs" % type_id
    resp = api.call("POST", path, {"group_specs": {"k1": "v1", "k2": "v2"}})
    assert (resp.status_code, resp.json) == (
        202, {"group_specs": {"k1": "v1", "k2": "v2"}})
    assert api.call("PUT", path + "/k2", {"k2": "v2b"}).json == {"k2": "v2b"}
    assert api.call("PUT", path + "/k2", {"k3": "x"}).status_code == 400
    assert api.call("GET", path + "/k2").json == {"k2": "v2b"}
    assert api.call("GET", path).json == {"group_specs": {"k1": "v1",
                                                          "k2": "v2b"}}
    assert api.call("DELETE", path + "/k1").status_code == 202
    assert api.call("GET", path + "/k1").status_code == 404
    assert api.call("DELETE", path + "/k1").status_code == 404


def test_group_create_show_list_and_its_volumes(api):
    group_id = _group(api, **MEMBER)
    shown = api.call("GET", "/groups/" + group_id, **MEMBER).json["group"]
    assert (shown["status"], shown["volume_types"], shown["name"],
            shown["group_snapshot_id"], shown["source_group_id"]) == (
        "available", [_default_type().id], "g1", None, None)
    volume_id = _in_group(api, group_id, **MEMBER)
    shown = api.call("GET", "/groups/%s?list_volume=true" % group_id).json
    assert shown["group"]["volumes"] == [volume_id]
    assert [g["id"] for g in api.call("GET", "/groups", **MEMBER).json[
        "groups"]] == [group_id]
    assert api.call("GET", "/groups/detail", token="o:p2",
                    roles="member").json["groups"] == []
    assert api.call("GET", "/groups/" + group_id, token="o:p2",
                    roles="member").status_code == 404
    assert [v["id"] for v in api.call(
        "GET", "/volumes?group_id=" + group_id).json["volumes"]] == [
        volume_id]
    # a grouped volume goes with its group only
    resp = api.call("DELETE", "/volumes/" + volume_id)
    assert resp.status_code == 400
    assert "belong to a group" in apitest.message(resp)


def test_a_volume_of_a_type_the_group_lacks_is_refused(api):
    group_id = _group(api)
    other = types_db.type_create(fixtures.admin(), "other")
    resp = api.call("POST", "/volumes", {"volume": {
        "size": 1, "group_id": group_id, "volume_type": other.id}})
    assert resp.status_code == 400
    assert "does not support this volume type" in apitest.message(resp)
    assert api.call("POST", "/volumes", {"volume": {
        "size": 1, "group_id": str(uuid.uuid4())}}).status_code == 404
    assert groups_db.group_cas(fixtures.admin(), group_id, {},
                               {"status": "error"})
    resp = api.call("POST", "/volumes", {"volume": {
        "size": 1, "group_id": group_id}})
    assert resp.status_code == 400
    assert volumes_db.volume_list(fixtures.admin()) == []


def test_a_consistent_group_type_is_refused_at_once(api):
    type_id = _gtype(api, group_specs={
        "consistent_group_snapshot_enabled": "<is> True"})["id"]
    resp = api.call("POST", "/groups", {"group": {
        "group_type": type_id, "volume_types": [_default_type().id]}})
    assert resp.status_code == 400
    assert "consistent group snapshots" in apitest.message(resp)


def test_a_group_type_with_a_null_spec_is_usable(api):
    type_id = _gtype(api, group_specs={
        "consistent_group_snapshot_enabled": None})["id"]
    resp = api.call("POST", "/groups", {"group": {
        "group_type": type_id, "volume_types": [_default_type().id]}})
    assert resp.status_code == 202, resp.json


def test_update_moves_volumes_in_and_out(api):
    group_id = _group(api)
    inside = _in_group(api, group_id)
    outside = api.volume()
    resp = api.call("PUT", "/groups/" + group_id, {"group": {
        "name": "new", "add_volumes": outside, "remove_volumes": inside}})
    assert resp.status_code == 202, resp.json
    assert [v.id for v in groups_db.volumes_of(fixtures.admin(),
                                               group_id)] == [outside]
    assert groups_db.group_get(fixtures.admin(), group_id).name == "new"
    both = api.call("PUT", "/groups/" + group_id, {"group": {
        "add_volumes": inside, "remove_volumes": inside}})
    assert both.status_code == 400
    nothing = api.call("PUT", "/groups/" + group_id, {"group": {
        "name": "new"}})
    assert nothing.status_code == 400
    foreign = api.volume(project="p2")
    assert api.call("PUT", "/groups/" + group_id, {"group": {
        "add_volumes": "%s,%s" % (inside, foreign)}}).status_code == 400
    # nothing of a refused update stays
    assert [v.id for v in groups_db.volumes_of(fixtures.admin(),
                                               group_id)] == [outside]


def test_delete_takes_the_volumes_and_the_last_one_takes_the_group(api):
    group_id = _group(api)
    volume_id = _in_group(api, group_id)
    path = "/groups/%s/action" % group_id
    resp = api.call("POST", path, {"delete": {"delete-volumes": False}})
    assert resp.status_code == 400
    assert "delete-volumes flag is required" in apitest.message(resp)
    assert groups_db.group_get(fixtures.admin(), group_id).status == \
        "available"
    assert api.call("POST", path, {"delete": {"delete-volumes": True}}
                    ).status_code == 202
    assert volumes_db.volume_get(fixtures.admin(), volume_id).status == \
        "deleting"
    assert [args[1:] for args in _casts(api, "delete_volume")] == [
        (volume_id, apitest.HOST + "#b1")]
    volumes_db.volume_destroy(fixtures.admin(), volume_id)
    assert api.call("GET", "/groups/" + group_id).status_code == 404
    empty = _group(api)
    assert api.call("POST", "/groups/%s/action" % empty,
                    {"delete": {}}).status_code == 202
    assert api.call("GET", "/groups/" + empty).status_code == 404


def test_reset_status_is_an_administrators_from_3_20(api):
    group_id = _group(api)
    path = "/groups/%s/action" % group_id
    body = {"reset_status": {"status": "error"}}
    assert api.call("POST", path, body, version="volume 3.19"
                    ).status_code == 404
    assert api.call("POST", path, body, **MEMBER).status_code == 403
    assert api.call("POST", path, body).status_code == 202
    assert groups_db.group_get(fixtures.admin(), group_id).status == "error"
    assert api.call("POST", path, {"reset_status": {"status": "bogus"}}
                    ).status_code == 400


def _settle_all(api, gsnap_id):
    worker = volume_snapshots.SnapshotWorker(api.driver, apitest.HOST, 60)
    for snap in gsnaps_db.members(fixtures.admin(), gsnap_id):
        assert worker.create(fixtures.admin(), snap.id)


def test_group_snapshot_follows_its_members(api):
    group_id = _group(api)
    volumes = [_in_group(api, group_id), _in_group(api, group_id)]
    resp = api.call("POST", "/group_snapshots", {"group_snapshot": {
        "group_id": group_id, "name": "gs"}}, **MEMBER)
    assert resp.status_code == 202, resp.json
    gsnap_id = resp.json["group_snapshot"]["id"]
    members = gsnaps_db.members(fixtures.admin(), gsnap_id)
    assert sorted(s.volume_id for s in members) == sorted(volumes)
    assert {s.status for s in members} == {"creating"}
    assert len(_casts(api, "create_snapshot")) == 2
    shown = api.call("GET", "/group_snapshots/" + gsnap_id).json[
        "group_snapshot"]
    assert (shown["status"], shown["group_id"]) == ("creating", group_id)
    listed = api.call("GET", "/snapshots/detail").json["snapshots"]
    assert {s["group_snapshot_id"] for s in listed} == {gsnap_id}
    # a member goes with its group snapshot only
    assert api.call("DELETE", "/snapshots/" + members[0].id
                    ).status_code == 400
    _settle_all(api, gsnap_id)
    assert gsnaps_db.gsnap_get(fixtures.admin(), gsnap_id).status == \
        "available"
    # the group cannot go while it has group snapshots
    resp = api.call("POST", "/groups/%s/action" % group_id,
                    {"delete": {"delete-volumes": True}})
    assert resp.status_code == 400
    assert api.call("DELETE", "/group_snapshots/" + gsnap_id
                    ).status_code == 202
    assert {s.status for s in gsnaps_db.members(
        fixtures.admin(), gsnap_id)} == {"deleting"}
    worker = volume_snapshots.SnapshotWorker(api.driver, apitest.HOST, 60)
    first, second = members
    assert worker.delete(fixtures.admin(), first.id)
    assert gsnaps_db.gsnap_get(fixtures.admin(), gsnap_id).status == \
        "deleting"
    assert worker.delete(fixtures.admin(), second.id)
    assert api.call("GET", "/group_snapshots/" + gsnap_id).status_code == 404
    assert volumes_db.volume_get(fixtures.admin(),
                                 volumes[0]).snapshot_count == 0


def test_a_failed_member_fails_the_group_snapshot(api):
    group_id = _group(api)
    _in_group(api, group_id)
    gsnap_id = api.call("POST", "/group_snapshots", {"group_snapshot": {
        "group_id": group_id}}).json["group_snapshot"]["id"]
    member = gsnaps_db.members(fixtures.admin(), gsnap_id)[0]
    worker = volume_snapshots.SnapshotWorker(api.driver, apitest.HOST, 60)
    with mock.patch.object(api.driver, "create_snapshot",
                           side_effect=RuntimeError("pool full")):
        assert not worker.create(fixtures.admin(), member.id)
    assert gsnaps_db.gsnap_get(fixtures.admin(), gsnap_id).status == "error"
    path = "/group_snapshots/%s/action" % gsnap_id
    assert api.call("POST", path, {"reset_status": {"status": "available"}},
                    version="volume 3.18").status_code == 404
    assert api.call("POST", path, {"reset_status": {"status": "available"}}
                    ).status_code == 202
    assert gsnaps_db.gsnap_get(fixtures.admin(), gsnap_id).status == \
        "available"


def test_group_from_a_group_snapshot_and_from_a_group(api):
    group_id = _group(api)
    volume_id = _in_group(api, group_id)
    gsnap_id = api.call("POST", "/group_snapshots", {"group_snapshot": {
        "group_id": group_id}}).json["group_snapshot"]["id"]
    _settle_all(api, gsnap_id)
    resp = api.call("POST", "/groups/action", {"create-from-src": {
        "name": "copy", "group_snapshot_id": gsnap_id}}, **MEMBER)
    assert resp.status_code == 202, resp.json
    copy = groups_db.group_get(fixtures.admin(), resp.json["group"]["id"])
    assert (copy.status, copy.group_snapshot_id) == ("available", gsnap_id)
    made = groups_db.volumes_of(fixtures.admin(), copy.id)
    snap_id = gsnaps_db.members(fixtures.admin(), gsnap_id)[0].id
    assert [v.snapshot_id for v in made] == [snap_id]
    resp = api.call("POST", "/groups/action", {"create-from-src": {
        "source_group_id": group_id}})
    assert resp.status_code == 202, resp.json
    clone = groups_db.volumes_of(fixtures.admin(), resp.json["group"]["id"])
    assert [v.source_volid for v in clone] == [volume_id]
    assert len(_casts(api, "create_volume_from_source")) == 2
    assert api.call("POST", "/groups/action", {"create-from-src": {
        "name": "none"}}).status_code == 400
    # a group snapshot a group is made from cannot go meanwhile
    assert snapshots_db.snapshot_get(fixtures.admin(), snap_id).status == \
        "available"


def test_a_grouped_volume_is_not_transferred(api):
    volume_id = _in_group(api, _group(api))
    resp = api.call("POST", "/os-volume-transfer", {"transfer": {
        "volume_id": volume_id}})
    assert resp.status_code == 400
    assert "remove it from the group" in apitest.message(resp)
    assert volumes_db.volume_get(fixtures.admin(), volume_id).status == \
        "available"


def test_the_groups_quota_bounds_creates_and_shows_their_use(api):
    assert api.call("PUT", "/os-quota-sets/p1", {"quota_set": {
        "groups": 1}}).status_code == 200
    _group(api)
    resp = api.call("POST", "/groups", {"group": {
        "group_type": _gtype(api, "another")["id"],
        "volume_types": [_default_type().id]}})
    assert resp.status_code == 413
    assert "Maximum number of groups allowed (1) exceeded" in \
        apitest.message(resp)
    usage = api.call("GET", "/os-quota-sets/p1?usage=true").json[
        "quota_set"]["groups"]
    assert (usage["limit"], usage["in_use"]) == (1, 1)


def test_an_empty_source_makes_no_group(api):
    empty = _group(api)
    resp = api.call("POST", "/groups/action", {"create-from-src": {
        "source_group_id": empty}})
    assert resp.status_code == 400
    assert "Source Group is empty" in apitest.message(resp)
    assert len(groups_db.group_list(fixtures.admin())) == 1


# -- a group snapshot's members and volume transfers (issue 40, item 1) ------

TAKER = {"token": "t:p2", "roles": "member"}


def _grouped_snapshot_of_a_lone_volume(api):
    """A volume with a snapshot of a group snapshot, then taken out of its
    group: the attacker's set-up."""
    group_id = _group(api)
    volume_id = _in_group(api, group_id)
    resp = api.call("POST", "/group_snapshots", {"group_snapshot": {
        "group_id": group_id, "name": "gs"}}, **MEMBER)
    gsnap_id = resp.json["group_snapshot"]["id"]
    _settle_all(api, gsnap_id)
    resp = api.call("PUT", "/groups/" + group_id, {"group": {
        "remove_volumes": volume_id}}, **MEMBER)
    assert resp.status_code == 202, resp.json
    (member,) = gsnaps_db.members(fixtures.admin(), gsnap_id)
    return volume_id, gsnap_id, member.id


def test_a_volume_whose_snapshot_is_in_a_group_snapshot_is_not_given(api):
    """Its snapshot would move to the taker while the giver's group
    snapshot still holds it (and its delete would delete the taker's
    snapshot): the offer is refused and nothing changes; with
    ``no_snapshots`` the snapshot stays the giver's."""
    volume_id, gsnap_id, snap_id = _grouped_snapshot_of_a_lone_volume(api)
    resp = api.call("POST", "/volume-transfers", {"transfer": {
        "volume_id": volume_id}}, version="volume 3.55", **MEMBER)
    assert resp.status_code == 400, resp.json
    assert "group snapshot %s" % gsnap_id in apitest.message(resp)
    assert volumes_db.volume_get(fixtures.admin(), volume_id).status == \
        "available"
    made = api.call("POST", "/volume-transfers", {"transfer": {
        "volume_id": volume_id, "no_snapshots": True}},
        version="volume 3.55", **MEMBER).json["transfer"]
    assert api.call("POST", "/volume-transfers/%s/accept" % made["id"], {
        "accept": {"auth_key": made["auth_key"]}}, **TAKER).status_code == 202
    snap = snapshots_db.snapshot_get(fixtures.admin(), snap_id)
    assert (snap.project_id, snap.group_snapshot_id) == ("p1", gsnap_id)


def test_a_group_snapshot_delete_leaves_another_projects_snapshots(api):
    """A member that belongs to another project (moved there before
    transfers refused it) is not the group snapshot's project's to
    delete: the delete lets it go from the group snapshot, untouched, and
    its owner may then delete it."""
    volume_id, gsnap_id, snap_id = _grouped_snapshot_of_a_lone_volume(api)
    volumes_db.volume_cas(fixtures.admin(), volume_id, {},
                          {"project_id": "p2"})
    snapshots_db.snapshot_update(fixtures.admin(), snap_id,
                                 {"project_id": "p2"})
    resp = api.call("DELETE", "/group_snapshots/" + gsnap_id, **MEMBER)
    assert resp.status_code == 202, resp.json
    snap = snapshots_db.snapshot_get(fixtures.admin(), snap_id)
    assert (snap.status, snap.group_snapshot_id) == ("available", None)
    assert api.call("GET", "/group_snapshots/" + gsnap_id).status_code == 404
    assert _casts(api, "delete_snapshot") == []
    resp = api.call("DELETE", "/snapshots/" + snap_id, **TAKER)
    assert resp.status_code == 202, resp.json


def test_a_cascade_delete_leaves_a_group_snapshots_member(api):
    volume_id, gsnap_id, snap_id = _grouped_snapshot_of_a_lone_volume(api)
    resp = api.call("DELETE", "/volumes/%s?cascade=true" % volume_id,
                    **MEMBER)
    assert resp.status_code == 400, resp.json
    assert volumes_db.volume_get(fixtures.admin(), volume_id).status == \
        "available"
    snap = snapshots_db.snapshot_get(fixtures.admin(), snap_id)
    assert (snap.status, snap.group_snapshot_id) == ("available", gsnap_id)


def test_an_accept_refuses_a_snapshot_that_joined_a_group_snapshot(api):
    """An offer made before its snapshot belonged to a group snapshot (as
    offers of an earlier release may be): the accept is refused and
    nothing moves."""
    volume_id, gsnap_id, snap_id = _grouped_snapshot_of_a_lone_volume(api)
    snapshots_db.snapshot_update(fixtures.admin(), snap_id,
                                 {"group_snapshot_id": None})
    made = api.call("POST", "/volume-transfers", {"transfer": {
        "volume_id": volume_id}}, version="volume 3.55",
        **MEMBER).json["transfer"]
    snapshots_db.snapshot_update(fixtures.admin(), snap_id,
                                 {"group_snapshot_id": gsnap_id})
    resp = api.call("POST", "/volume-transfers/%s/accept" % made["id"], {
        "accept": {"auth_key": made["auth_key"]}}, **TAKER)
    assert resp.status_code == 400, resp.json
    volume = volumes_db.volume_get(fixtures.admin(), volume_id)
    assert (volume.project_id, volume.status) == ("p1", "awaiting-transfer")
    assert snapshots_db.snapshot_get(fixtures.admin(), snap_id
                                     ).project_id == "p1"


def test_delete_sends_a_failed_volume_ever_placed_to_its_node(api):
    """An ``error`` volume without a location may be on its backend: the
    group's delete sends it to its node rather than dropping the row."""
    group_id = _group(api)
    volume_id = _in_group(api, group_id)
    assert volumes_db.volume_cas(fixtures.admin(), volume_id, {}, {
        "status": "error", "provider_location": None})
    assert api.call("POST", "/groups/%s/action" % group_id, {
        "delete": {"delete-volumes": True}}).status_code == 202
    assert volumes_db.volume_get(fixtures.admin(), volume_id).status == \
        "deleting"
    assert [args[1:] for args in _casts(api, "delete_volume")] == [
        (volume_id, apitest.HOST + "#b1")]
