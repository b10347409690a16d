"""The volume actions of microversions 3.68-3.71 that Ashlar refuses, and
how (Cinder's fault format, the volume left as it was); a retype that
must move the volume."""

import uuid
from unittest import mock

try:
    from tests.unit.api import apitest
    from tests.unit.db import fixtures
except ImportError:  # pytest put tests/unit on sys.path instead
    from api import apitest
    from db import fixtures


def test_reimage_needs_3_68_and_is_refused_without_images(api):
    vid = api.volume()
    body = {"os-reimage": {"image_id": str(uuid.uuid4())}}
    assert api.action(vid, body).status_code == 404  # not at 3.60
    resp = api.action(vid, body, version="volume 3.68")
    assert resp.status_code == 400
    assert "Re-imaging a volume (os-reimage) is not supported" in \
        apitest.message(resp)
    assert api.show_volume(vid)["status"] == "available"


def test_extend_completion_needs_3_71_and_no_extend_waits_for_it(api):
    vid = api.volume()
    body = {"os-extend_volume_completion": {"error": False}}
    assert api.action(vid, body, version="volume 3.70").status_code == 404
    resp = api.action(vid, body, version="volume 3.71")
    assert resp.status_code == 400
    assert "not waiting for a compute host" in apitest.message(resp)
    resp = api.action(str(uuid.uuid4()), body, version="volume 3.71")
    assert resp.status_code == 404


def _pools(api, *backends):
    """Give the volume operations a warm capability cache in which each
    of ``backends`` (volume_backend_name) reports one pool, node1's b1
    first."""
    apitest.warm_cache(api, {"node%d@%s" % (i, name): {
        "volume_backend_name": name, "pools": [{
            "pool_name": name, "free_capacity_gb": 10,
            "total_capacity_gb": 10, "backend_state": "up"}]}
        for i, name in enumerate(backends, 1)})


def test_a_retype_that_must_move_the_volume(api):
    """Cinder's migration_policy: ``never`` refuses a type the volume's
    pool does not satisfy; ``on-demand`` moves it, but only a volume a
    copy can carry, and only to a pool that exists (400 at once)."""
    _pools(api, "b1", "b2")
    elsewhere = fixtures.make_type(specs={"volume_backend_name": "b2"})
    nowhere = fixtures.make_type(specs={"volume_backend_name": "b9"})
    vid = api.volume()
    for policy in (None, "never"):
        resp = api.action(vid, {"os-retype": {
            "new_type": elsewhere.id, "migration_policy": policy}})
        assert resp.status_code == 400
        assert "migration_policy is never" in apitest.message(resp)
    resp = api.action(vid, {"os-retype": {"new_type": nowhere.id,
                                          "migration_policy": "on-demand"}})
    assert resp.status_code == 400
    assert "volume_backend_name=b9" in apitest.message(resp)
    snapped = api.volume(snapshot_count=1)
    resp = api.action(snapped, {"os-retype": {
        "new_type": elsewhere.id, "migration_policy": "on-demand"}})
    assert resp.status_code == 400
    assert "without attachments, snapshots or a group" in \
        apitest.message(resp)
    assert api.rpc.casts == []
    resp = api.action(vid, {"os-retype": {"new_type": elsewhere.id,
                                          "migration_policy": "on-demand"}})
    assert resp.status_code == 202
    shown = api.show_volume(vid)
    assert (shown["status"], shown["migration_status"]) == (
        "retyping", "starting")
    resp = api.call("DELETE", "/types/%s" % elsewhere.id)
    assert resp.status_code == 400   # a volume is being retyped to it
    assert api.rpc.casts[-1][0] == "retype_volume"


def test_a_volume_that_moved_or_failed_to_is_like_any_other(api):
    """Cinder's settled migration statuses (None, success, error) let a
    retype, a snapshot and a delete through; a moving volume is refused."""
    plain = fixtures.make_type()
    for status in ("success", "error"):
        vid = api.volume(migration_status=status)
        resp = api.action(vid, {"os-retype": {"new_type": plain.id}})
        assert resp.status_code == 202, resp.json
        api.ops.volumes.reset_status(fixtures.admin(), vid, None,
                                     status="available")
        resp = api.call("POST", "/snapshots", {"snapshot": {
            "volume_id": vid}})
        assert resp.status_code == 202, resp.json
    moving = api.volume(migration_status="migrating")
    resp = api.call("DELETE", "/volumes/%s" % moving)
    assert resp.status_code == 400
    resp = api.call("DELETE", "/volumes/%s" % vid)
    assert resp.status_code == 400   # it has a snapshot
    vid = api.volume(migration_status="success")
    assert api.call("DELETE", "/volumes/%s" % vid).status_code == 202


def test_an_admin_migrates_an_available_volume_to_a_named_pool(api):
    """``os-migrate_volume``: Cinder's refusals of the destination, those
    of a volume a copy cannot carry, then ``maintenance`` with migration
    ``starting`` and a cast to the volume's node; attaches and deletes
    wait for it."""
    _pools(api, "b1", "b2")
    vid = api.volume()

    def migrate(volume_id, **body):
        return api.action(volume_id, {"os-migrate_volume": body})
    for body, words in (({}, "Must specify host or cluster"),
                        ({"cluster": "c1"}, "Migrating to a cluster is not served"),
                        ({"host": "node1@b1#b1"}, "must be different"),
                        ({"host": "node9@b9#b9"},
                         "No available service named node9@b9#b9")):
        resp = migrate(vid, **body)
        assert resp.status_code == 400, body
        assert words in apitest.message(resp)
    snapped = api.volume(snapshot_count=1)
    resp = migrate(snapped, host="node2@b2#b2")
    assert resp.status_code == 400
    assert "without attachments, snapshots or a group" in \
        apitest.message(resp)
    assert api.rpc.casts == []
    resp = migrate(vid, host="node2@b2#b2", force_host_copy=False,
                   lock_volume=True)
    assert resp.status_code == 202, resp.json
    shown = api.show_volume(vid)
    assert (shown["status"], shown["migration_status"]) == (
        "maintenance", "starting")
    assert api.rpc.casts[-1] == ("migrate_volume", (
        mock.ANY, vid, "node1@b1#b1", "node2@b2#b2"))
    assert api.create(vid).status_code == 400
    assert api.call("DELETE", "/volumes/%s" % vid).status_code == 400
    assert migrate(vid, host="node2@b2#b2").status_code == 400


def test_a_retype_to_a_type_of_other_zones_must_move(api):
    """A type's ``RESKEY:availability_zones`` that leave out the volume's
    pool make a retype a move, as Cinder's retype is placed among them:
    refused with ``never``; with ``on-demand`` judged on the pools of
    those zones (400 when none offers the type there)."""
    def report(name, zone):
        return {"volume_backend_name": name, "availability_zone": zone,
                "pools": [{"pool_name": name, "free_capacity_gb": 10,
                           "total_capacity_gb": 10}]}
    apitest.warm_cache(api, {"node1@b1": report("b1", "nova"),
                             "node2@b2": report("b2", "east")})
    east = fixtures.make_type(specs={"RESKEY:availability_zones": "east"})
    vid = api.volume(availability_zone="nova")
    resp = api.action(vid, {"os-retype": {"new_type": east.id,
                                          "migration_policy": "never"}})
    assert resp.status_code == 400
    assert "migration_policy is never" in apitest.message(resp)
    nowhere = fixtures.make_type(specs={
        "RESKEY:availability_zones": "east", "volume_backend_name": "b1"})
    resp = api.action(vid, {"os-retype": {
        "new_type": nowhere.id, "migration_policy": "on-demand"}})
    assert resp.status_code == 400
    assert "in availability zone east offers volume_backend_name=b1" in \
        apitest.message(resp)
    resp = api.action(vid, {"os-retype": {"new_type": east.id,
                                          "migration_policy": "on-demand"}})
    assert resp.status_code == 202, resp.json
    assert api.show_volume(vid)["migration_status"] == "starting"


def _delete_casts(api):
    return [args[1:3] for cast, args in api.rpc.casts
            if cast == "delete_volume"]


def test_a_volume_ever_placed_is_deleted_by_its_node(api):
    """An ``error`` volume without a location may still be on its
    backend (its node made it after the scheduler's sweep failed its
    slow create): its node deletes it.  One never placed goes at once."""
    placed = api.volume(status="error", provider_location=None)
    never = fixtures.make_volume(status="error", host=None,
                                 provider_location=None).id
    for vid in (placed, never):
        assert api.call("DELETE", "/volumes/%s" % vid).status_code == 202
    assert _delete_casts(api) == [(placed, apitest.HOST + "#b1")]
    assert api.show_volume(placed)["status"] == "deleting"
    assert api.call("GET", "/volumes/%s" % never).status_code == 404


def test_legacy_reserve_and_unreserve(api):
    """Cinder's os-reserve: available -> attaching (202); again, or from
    any other status, a 400 that leaves it; os-unreserve back to
    available.  Tempest's VolumesNegativeTest reserve/unreserve tests."""
    vid = api.volume()
    member = {"token": "u:p1", "roles": "member"}
    assert api.action(vid, {"os-reserve": None}, **member).status_code == 202
    assert api.show_volume(vid)["status"] == "attaching"
    resp = api.action(vid, {"os-reserve": {}}, **member)
    assert resp.status_code == 400
    assert apitest.message(resp) == (
        "Invalid volume: Volume status must be available to reserve, but "
        "the status is attaching.")
    assert api.action(vid, {"os-unreserve": {}}, **member).status_code == 202
    assert api.show_volume(vid)["status"] == "available"
    # Not reserved: nothing to undo, as in Cinder.
    assert api.action(vid, {"os-unreserve": {}}, **member).status_code == 202
    assert api.show_volume(vid)["status"] == "available"


def test_legacy_reserve_of_a_multiattach_volume_in_use(api):
    vid = api.volume(multiattach=True, status="in-use", attachment_count=1)
    assert api.action(vid, {"os-reserve": {}}).status_code == 202
    assert api.show_volume(vid)["status"] == "attaching"
    assert api.action(vid, {"os-unreserve": {}}).status_code == 202
    assert api.show_volume(vid)["status"] == "in-use"
    single = api.volume(status="in-use", attachment_count=1)
    resp = api.action(single, {"os-reserve": {}})
    assert resp.status_code == 400
    assert "must be available to reserve" in apitest.message(resp)


def test_legacy_reserve_needs_the_volume_and_a_member(api):
    for name in ("os-reserve", "os-unreserve"):
        resp = api.action(str(uuid.uuid4()), {name: {}})
        assert resp.status_code == 404, name
        vid = api.volume()
        resp = api.action(vid, {name: {}}, token="u:p1", roles="reader")
        assert resp.status_code == 403, name
        assert api.show_volume(vid)["status"] == "available"
